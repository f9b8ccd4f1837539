"""A whole game on the signed record: the turn rule every peer folds, and one seat's part.

After the seat order (record steps 1-2, :mod:`p2p.table.forming`) a table whose
manifest names the protocol ``game`` (:class:`GameProtocol`) plays its game
on the record.  :class:`GameRule` is a :class:`p2p.record.order.Rule`: a pure fold
over the completed steps, so every peer and the offline verifier
(``slaiga verify``) agree, step by step, on who owes the next entry and of
which kind.  It holds

* a *seatless* engine instance of the game, which learns only public faces;
* the public half of the mental-poker dealer: every seat's key share, the
  current ciphertext of every card, and the reveal tokens published so far
  (each verified by this peer itself, so held-card points are always
  computed from values this peer checked, never from values a prover hands
  over);

and, on a live peer, the seat's own part (:class:`SeatKeys`): its secret key
share, the faces it learnt, and its own engine instance, which gets the
private answers.  After every obligation the seat engine's state hash must
equal the seatless engine's; a difference is a local bug and is raised loudly.

How each engine obligation (``engine.obligations``) becomes record steps.
Engine seat ``e`` is manifest slot ``seat_order[e]``; proof contexts are
``Context(table_id, 1, record step, engine seat)``.

=========================  ===================================================
obligation                 record steps
=========================  ===================================================
(start)                    ``key`` round: every seat publishes ``x_j G`` with a
                           Schnorr proof; card ``h`` starts as the public
                           masking of its encoding under the joint key
``Shuffle(handles)``       one ``shuffle`` step per seat in engine-seat order:
                           the pile permuted and re-masked, with a
                           Terelius-Wikstrom proof checked by every peer
``Reveal(hs, None)``       one ``tokens`` round of the seats whose tokens are
                           not yet public, each batch with a DLEQ proof
``Reveal(hs, {r})``        a ``remask`` by ``r`` of the cards whose ``r``-token
                           is already public (else everybody could open
                           them), then a ``tokens`` round of every seat but
                           ``r``; ``r`` opens with its own share
``Transfer(h, s, d)``      a ``remask`` of ``h`` by ``s`` (old tokens stop
                           opening it), then a private reveal to ``d``
``Prove(statement)``       by proof shape: ``proof`` (CDS threshold proof or
                           inequality proofs) checked by every peer;
                           ``HighestGiven``: ``sealed-proof`` to the verifier,
                           then the verifier's ``verdict`` (see below)
``Roll`` / ``JointRandom`` a ``dice`` round opening every seat's commitment
                           (made in the previous draw's ``dice`` round, or in
                           a ``commit`` round for the first draw); values by
                           rejection sampling from the joint seed
(an action is owed)        an ``action`` round of the seats to move; answers
                           of a multi-seat round are applied in the engine's
                           own order
(game over)                a ``final`` round: every seat signs the ranking and
                           the state hash, so a cut-short record is visibly
                           unfinished
=========================  ===================================================

A private reveal or transfer after which *every* seat may see the card (each
was shown it in turn) is carried out as a public reveal, so the seatless
engine learns the face like every seat engine does and their hashes agree.

*Highest given* (Slave's exchange) is checked by its receiver alone, who must
not show the lowest given face to anyone.  The giver seals to the receiver an
openable box (:func:`crypto.seal.seal_openable`) of fixed size: its reveal
tokens for the given cards and an inequality proof, padded to a fixed number of
leaves, that none of its other cards is a face at or above the lowest given
one.  The receiver answers ``verdict``: accept (a :class:`Caveat` that
``slaiga verify`` lists), or complain.  After a complaint the giver owes
``unseal``: the box's one-time key (derived from the table secret), with which
anyone opens the box and convicts the giver (a false gift, a wrong key) or the
complainer (a false complaint).  ``p2p/RECORD_FORMAT.md`` §9 has the details.

Any entry that fails a check raises :class:`p2p.errors.InvalidMove` naming its
signer.  Any engine error met while folding completed steps is a seat's fault
too, whenever it comes: an action that the rules refuse only after a reveal (a
Slave play of cards that turn out not to beat the pile, a Slaiga discard
declared a king that shows a 6, a false shot, block, cancel or win claim) is
raised when the reveal completes (from :meth:`GameRule.advance`), naming the
actor, with the step of its signed action, which the record keeps as the
evidence.  So ``slaiga verify`` reaches the same verdict from the file alone.

Secrets that must survive a crash come from a per-table secret that the node
writes to disk (fsynced) before its first key share: the key share ``x``, the
dice commitment values and the gift boxes' one-time keys.  Everything else is fresh randomness, because the
node persists each own entry before sending it and never re-creates one.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any

import msgpack

from crypto.commit import CommitmentMismatch, JointStream, check_commitment, commit
from crypto.deck import Deck, deck_points
from crypto.dleq import PROOF_BYTES, DleqProof
from crypto.elgamal import Ciphertext, decode_pile, encode_pile, public_mask
from crypto.errors import CryptoError, InvalidEncoding, InvalidProof
from crypto.group import POINT_BYTES, Point, mul, random_scalar
from crypto.hand_proofs import (
    HeldCard,
    decode_cards_in_set_proof,
    held_card,
    prove_cards_in_set,
    verify_cards_in_set,
)
from crypto.identity import IdentityKey
from crypto.inequality import InequalityProof, prove_none_of, verify_none_of
from crypto.inequality import proof_size as inequality_proof_size
from crypto.keys import KeyShare, joint_key, make_key_share, verify_key_share
from crypto.reveal import make_tokens, reveal_index, unmask, verify_tokens
from crypto.seal import (
    SealKey,
    check_seal_key,
    open_openable,
    open_with_shown_key,
    openable_ephemeral,
    openable_key,
    openable_size,
    seal_openable,
    shown_key_public,
)
from crypto.shuffle import shuffle_deck
from crypto.shuffle_proof_tw_batch import (
    ShuffleStatement,
    TWCommitmentProof,
    prove_shuffle_batchable,
    verify_shuffles_batch,
)
from crypto.transcript import Context
from crypto.transfer import start_transfer, verify_transfer
from engine import registry
from engine.cards import ORDERS, Card
from engine.errors import EngineError, FalseClaim, IllegalAction
from engine.game import Action, Event, Game, Outcome
from engine.obligations import (
    AtLeastInSet,
    HighestGiven,
    JointRandom,
    NoneOfFace,
    Obligation,
    Prove,
    Reveal,
    Roll,
    Shuffle,
    Transfer,
)
from p2p.errors import CheatDetected, InvalidMove, LocalProtocolError
from p2p.record.order import Owed, StepView
from p2p.table.faces import handle_indices, index_face
from p2p.table.forming import SEAT_ORDER_VALUE_BYTES, Commit
from p2p.wire import (
    MAX_SEATS,
    U32,
    Blob,
    Body,
    Bool,
    Bytes,
    Hash,
    Seq,
    TableProtocol,
    UInt,
    body,
    table_protocol,
)

GAME_PROTOCOL = "game"
GAME_NUMBER = 1
"""Proof contexts' game number (one game per table)."""
FIRST_STEP = 3
"""The first record step of the game: steps 1-2 draw the seat order."""

KEY_KIND = "key"
SHUFFLE_KIND = "shuffle"
TOKENS_KIND = "tokens"
REMASK_KIND = "remask"
PROOF_KIND = "proof"
SEALED_KIND = "sealed-proof"
VERDICT_KIND = "verdict"
UNSEAL_KIND = "unseal"
COMMIT_KIND = "commit"
DICE_KIND = "dice"
ACTION_KIND = "action"
FINAL_KIND = "final"

MACHINE_KINDS = frozenset(
    {KEY_KIND, SHUFFLE_KIND, TOKENS_KIND, REMASK_KIND, PROOF_KIND, SEALED_KIND, COMMIT_KIND}
    | {UNSEAL_KIND, DICE_KIND, FINAL_KIND}
)
"""Kinds a peer's software sends by itself (stall limits for machines apply)."""
DECISION_KINDS = frozenset({ACTION_KIND, VERDICT_KIND})
"""Kinds that wait for a decision (the verdict too, since it follows a person's gift)."""

DEFAULT_DECIDE_STALL_MS = 60_000
DEFAULT_DECIDE_MAX_MS = 30 * 60_000
MAX_ACTION_BYTES = 64 * 1024

_KEY_DOMAIN = b"slaiga/v1/game/key-share"
_DICE_DOMAIN = b"slaiga/v1/game/dice"
_DICE_CONTEXT = b"slaiga/v1/game/dice-commit"
_JOINT_DOMAIN = b"slaiga/v1/game/joint-random"
_SEAL_DOMAIN = b"slaiga/v1/game/sealed-proof"
_GIFT_KEY_DOMAIN = b"slaiga/v1/game/gift-box-key"
_ACTION_UNPACK = {
    "max_str_len": 4096,
    "max_bin_len": 0,
    "max_array_len": 1024,
    "max_map_len": 64,
    "max_ext_len": 0,
    "strict_map_key": True,
    "raw": False,
    "use_list": True,
}

Proof64 = Annotated[bytes, Bytes(size=PROOF_BYTES)]
Point32 = Annotated[bytes, Bytes(size=POINT_BYTES)]
SeatList = Annotated[tuple[int, ...], Seq(UInt(max=MAX_SEATS - 1), max_len=MAX_SEATS)]


# ---------------------------------------------------------------------------
# Record bodies of the game protocol
# ---------------------------------------------------------------------------


@body(KEY_KIND)
@dataclass(frozen=True, slots=True)
class KeyBody(Body):
    """A seat's public key share ``x G`` and its Schnorr proof ``(c, s)``."""

    public: Point32
    proof: Proof64


@body(SHUFFLE_KIND)
@dataclass(frozen=True, slots=True)
class ShuffleBody(Body):
    """The re-masked, permuted pile (64 bytes a card) and its shuffle proof."""

    pile: Blob
    proof: Blob


@body(TOKENS_KIND)
@dataclass(frozen=True, slots=True)
class TokensBody(Body):
    """Reveal tokens (32 bytes a card, in the order the rule names) with one batched
    DLEQ proof."""

    tokens: Blob
    proof: Proof64


@body(REMASK_KIND)
@dataclass(frozen=True, slots=True)
class RemaskBody(Body):
    """New ciphertexts for the cards the rule names, with one remask proof each."""

    pile: Blob
    proofs: Blob


@body(PROOF_KIND)
@dataclass(frozen=True, slots=True)
class ProofBody(Body):
    """A proof about the sender's own hidden cards (shape decided by the statement)."""

    proof: Blob


@body(SEALED_KIND)
@dataclass(frozen=True, slots=True)
class SealedProofBody(Body):
    """A highest-given proof sealed to its verifier (see the module docstring)."""

    sealed: Blob


@body(VERDICT_KIND)
@dataclass(frozen=True, slots=True)
class VerdictBody(Body):
    """The verifier's answer to a sealed proof: accept, or complain (then the giver
    owes an ``unseal`` entry that settles the complaint)."""

    accept: Annotated[bool, Bool()]


@body(UNSEAL_KIND)
@dataclass(frozen=True, slots=True)
class UnsealBody(Body):
    """The giver's answer to a complaint: its gift box's one-time X25519 private key,
    with which anyone opens the box exactly as its receiver did."""

    key: Annotated[bytes, Bytes(size=32)]


@body(DICE_KIND)
@dataclass(frozen=True, slots=True)
class DiceBody(Body):
    """A seat's opening of its commitment for this joint draw, and its commitment for the
    next draw (see ``GameRule._joint``)."""

    value: Annotated[bytes, Bytes(size=SEAT_ORDER_VALUE_BYTES)]
    nonce: Annotated[bytes, Bytes(size=32)]
    next: Hash


@body(ACTION_KIND)
@dataclass(frozen=True, slots=True)
class ActionBody(Body):
    """A game action: msgpack of ``Game.encode_action`` (a map with ``type`` and fields)."""

    action: Annotated[bytes, Bytes(min_len=1, max_len=MAX_ACTION_BYTES)]


@body(FINAL_KIND)
@dataclass(frozen=True, slots=True)
class FinalBody(Body):
    """Every seat's signature on the end: the ranking (engine seats) and the state hash."""

    state_hash: Hash
    ranking: SeatList


@table_protocol(GAME_PROTOCOL)
@dataclass(frozen=True, slots=True)
class GameProtocol(TableProtocol):
    """The manifest's game protocol: the game and options are the manifest's own;
    these are the stall limits for steps that wait for a decision (a person may
    think far longer than a machine step may take)."""

    decide_stall_ms: U32
    decide_max_ms: U32

    def start(self, manifest: Any, seat_order: tuple[int, ...]) -> GameRule:
        return GameRule(manifest, seat_order)


# ---------------------------------------------------------------------------
# One seat's secrets
# ---------------------------------------------------------------------------


@dataclass(slots=True)
class SeatKeys:
    """What a live peer brings to its seat: identity (to sign sealed payloads), seal key
    (to open them), the per-table secret, and who decides its actions."""

    slot: int
    identity: IdentityKey
    seal: SealKey
    table_secret: bytes
    cheat: Any = None
    """Test hook (tests/p2p/cheaters.py): an object whose methods may replace this
    seat's honest contributions; ``None`` is honest."""


@dataclass(frozen=True, slots=True)
class _Gift:
    """One sealed gift's public facts: the statement, the given cards whose giver token
    is in the box, the step that seals it, the padded statement and plaintext size."""

    st: HighestGiven
    need_tok: tuple[int, ...]
    step: int
    pad_to: int
    pad_with: int
    plain_bytes: int


@dataclass(frozen=True, slots=True)
class Caveat:
    """A check that only one seat could make: the gift sealed at record ``step`` by
    slot ``seat`` was checked by slot ``checked_by`` alone, who accepted it."""

    step: int
    seat: int
    checked_by: int
    kind: str = "gift"


def _decode_points(blob: bytes, count: int) -> list[Point]:
    """``count`` received tokens, 32 bytes each, every one fully validated."""
    if len(blob) != POINT_BYTES * count:
        raise InvalidEncoding(f"{count} tokens must be {POINT_BYTES * count} bytes")
    return [Point.decode(blob[i : i + POINT_BYTES]) for i in range(0, len(blob), POINT_BYTES)]


def _shuffle_and_prove(
    inputs: tuple[Ciphertext, ...], joint: Point, ctx: Context
) -> tuple[tuple[Ciphertext, ...], Any]:
    """Permute and re-mask ``inputs``, and prove it (pure: may run in a worker thread)."""
    out, witness = shuffle_deck(inputs, joint)
    return out, prove_shuffle_batchable(inputs, out, joint, witness, ctx)


def _decode_shuffle(
    inputs: tuple[Ciphertext, ...], joint: Point, ctx: Context, b: ShuffleBody
) -> ShuffleStatement:
    """A shuffle entry as a statement, every point and scalar validated (pure)."""
    n = len(inputs)
    out = tuple(decode_pile(b.pile, n))
    proof = TWCommitmentProof.decode(b.proof, expected_size=n)
    return ShuffleStatement(inputs, out, joint, proof, ctx)


def _derive(secret: bytes, domain: bytes, *parts: int) -> bytes:
    h = hashlib.sha512(domain + len(secret).to_bytes(2, "big") + secret)
    for p in parts:
        h.update(p.to_bytes(8, "big"))
    return h.digest()


class _Mine:
    """The seat's private half: secret share, learnt card indices, own engine."""

    def __init__(self, keys: SeatKeys, seat: int, engine: Game) -> None:
        self.keys = keys
        self.seat = seat
        self.engine = engine
        self.secret = random_scalar(_derive(keys.table_secret, _KEY_DOMAIN))
        self.known: dict[int, int] = {}  # handle -> crypto index
        self.events: list[Event] = []
        self.verdict: VerdictBody | None = None
        self.lagging = False  # its engine refused an action the seatless one took


# ---------------------------------------------------------------------------
# The rule
# ---------------------------------------------------------------------------


@dataclass(slots=True)
class Need:
    """What the current step needs: entries of ``kind`` from engine seats ``seats``.

    ``check(seat, body)`` validates one entry and returns its parsed value;
    ``make()`` builds our own entry (live peers only).  ``pre(seat, body)`` and
    ``premake()``, when set, return jobs (:data:`Job`) that do the expensive part of
    ``check`` or ``make`` ahead of the fold (see :meth:`GameRule.prework`).
    """

    kind: str
    seats: tuple[int, ...]
    check: Callable[[int, Any], Any]
    what: str
    make: Callable[[], Body] | None = None
    parsed: dict[int, Any] = field(default_factory=dict)
    pre: Callable[[int, Any], Job] | None = None
    premake: Callable[[], Job] | None = None


Job = Callable[[], Callable[[], None]]
"""Work ahead of the fold: calling it does the expensive, pure part (it touches only
values captured when the job was made, so it may run in a worker thread); what it
returns is called back on the event loop to keep the result for the fold."""


_Flow = Generator[Need, dict[int, Any], Any]


class GameRule:
    """The record's turn rule for a game table; a :class:`p2p.record.order.Rule` (see module)."""

    def __init__(
        self,
        manifest: Any,
        seat_order: tuple[int, ...],
        keys: SeatKeys | None = None,
    ) -> None:
        self.manifest = manifest
        self.order = tuple(seat_order)
        self.n = len(self.order)
        self.engine_seat_of = {slot: e for e, slot in enumerate(self.order)}
        self.table_id: bytes = manifest.table_id
        self.params: GameProtocol = manifest.protocol
        try:
            self.spec = registry.get(manifest.game)
            self.engine = self.spec.factory(self.n, dict(manifest.options))
        except EngineError as exc:
            raise LocalProtocolError(f"cannot play {manifest.game!r}: {exc}") from exc
        self.size = len(self.engine.deck)
        self.deck: Deck | None = deck_points(self.size) if self.size else None
        self.index_of_handle = handle_indices(self.engine.deck, self.size) if self.size else ()
        self.pubs: list[Point] = []
        self.joint: Point | None = None
        self.cts: list[Ciphertext] = []
        self.ptok: list[dict[int, Point]] = [{} for _ in range(self.size)]
        self.mine: _Mine | None = None
        if keys is not None:
            seat = self.engine_seat_of.get(keys.slot)
            if seat is None:
                raise LocalProtocolError(f"slot {keys.slot} is not seated at this table")
            self.mine = _Mine(keys, seat, self.spec.factory(self.n, dict(manifest.options)))
        self.step_no = FIRST_STEP
        self.public_events: list[Event] = []
        self.proofs_checked = 0
        self.entries_checked = 0
        self.caveats: list[Caveat] = []
        """Checks made by one seat alone (accepted sealed gifts), for ``slaiga verify``."""
        self.outcome: Outcome | None = None
        self.final_hash: str | None = None
        self.done = False
        self._acted: dict[int, int] = {}
        """Engine seat -> the record step of its last action (the evidence of a lie that a
        later reveal shows)."""
        self._actor: int | None = None
        """The engine seat whose action the engine is carrying out (reveals included)."""
        self._chained: tuple[int, dict[int, bytes]] | None = None
        """The next joint draw's number and every seat's commitment to it, once a draw
        has carried them."""
        self._ahead: dict[tuple[str, int, int], tuple[Any, ...]] = {}
        """(kind, engine seat, step) -> an entry checked ahead of the fold by a job of
        :meth:`prework`: the body, what its check depended on, and the parsed value."""
        self._made: dict[int, tuple[Any, ...]] = {}
        """step -> our own shuffle made ahead by a job of :meth:`premake`."""
        self._checked_ahead: list[ShuffleStatement] = []
        """Shuffle statements of this round already verified ahead (not batched again)."""
        self._flow = self._main()
        self._need: Need | None = next(self._flow)
        self._owed = self._owed_of(self._need)

    # ---- Rule -----------------------------------------------------------------------

    def owed(self) -> Owed | None:
        return self._owed

    def check(self, slot: int, body_: Body) -> None:
        need = self._need
        seat = self.engine_seat_of[slot]
        assert need is not None and seat in need.seats
        try:
            value = need.check(seat, body_)
        except CheatDetected:
            raise
        except (
            CryptoError,
            EngineError,
            ValueError,
            TypeError,
            KeyError,
            IndexError,
            OverflowError,
        ) as exc:
            raise InvalidMove(slot, f"{need.kind} at step {self.step_no}: {exc}") from None
        need.parsed[seat] = value
        self.entries_checked += 1

    def advance(self, step: StepView) -> None:
        need = self._need
        assert need is not None
        self.step_no = step.number + 1  # before the flow runs: it may capture the step
        try:
            self._need = self._flow.send(need.parsed)
        except StopIteration:
            self._need = None
        except BaseException:
            self._need = None
            self._owed = None
            raise
        self._owed = self._owed_of(self._need)

    # ---- work ahead of the fold (p2p/net/offload.py runs the jobs in worker threads) -------

    def prework(self, slot: int, step: int, body_: Body) -> Job | None:
        """A job checking the expensive part of ``body_`` (a shuffle proof, reveal tokens)
        that ``slot`` sent for ``step``, if that is what the current step waits for; the
        fold then uses the result instead of checking again, but only for the very same
        body and the very same statement (inputs, key, context).  A job that raises
        keeps nothing: the fold checks the entry itself and names the fault."""
        need, seat = self._need, self.engine_seat_of.get(slot)
        if need is None or need.pre is None or step != self.step_no or seat is None:
            return None
        if seat not in need.seats or seat in need.parsed or self._trusted(seat):
            return None
        if getattr(body_, "TAG", None) != need.kind:
            return None
        return need.pre(seat, body_)

    def premake(self) -> Job | None:
        """A job making our own entry for the current step ahead (a shuffle and its
        proof), unless it is made already; ``produce`` then uses it."""
        need = self._need
        if need is None or need.premake is None or self.step_no in self._made:
            return None
        if self.mine is None or self.mine.seat not in need.seats:
            return None
        return need.premake()

    def _keep_ahead(self, key: tuple[str, int, int], value: tuple[Any, ...]) -> None:
        for old in [k for k in self._ahead if k[2] < self.step_no]:
            del self._ahead[old]
        if key[2] == self.step_no:
            self._ahead[key] = value

    def _owed_of(self, need: Need | None) -> Owed | None:
        if need is None:
            return None
        return Owed({self.order[s]: frozenset((need.kind,)) for s in need.seats})

    # ---- queries for the node and the screen -------------------------------------------

    @property
    def need(self) -> Need | None:
        return self._need

    @property
    def my_seat(self) -> int | None:
        return self.mine.seat if self.mine is not None else None

    @property
    def my_engine(self) -> Game | None:
        return self.mine.engine if self.mine is not None else None

    def slot(self, seat: int) -> int:
        return self.order[seat]

    def waits_for_decision(self) -> bool:
        return self._need is not None and self._need.kind in DECISION_KINDS

    def take_events(self) -> list[Event]:
        """Events our seat may see (from our own engine), since the last call."""
        if self.mine is None:
            out, self.public_events = self.public_events, []
            return out
        out, self.mine.events = self.mine.events, []
        return out

    def produce(self) -> Body:
        """Our own entry for the current (machine) step."""
        need = self._need
        if need is None or need.make is None or self.mine is None:
            raise LocalProtocolError("nothing of ours to produce at this step")
        if self.mine.seat not in need.seats:
            raise LocalProtocolError(f"seat {self.mine.seat} owes nothing at step {self.step_no}")
        return need.make()

    def action_body(self, action: Action) -> ActionBody:
        """Our decision as a record body."""
        data = self.engine.encode_action(action)
        return ActionBody(msgpack.packb(data, use_bin_type=True))

    def result(self) -> dict[str, Any]:
        """The agreed result (engine seats), once the final round completed."""
        ranking = list(self.outcome.ranking) if self.outcome is not None else []
        return {
            "ranking": ranking,
            "state_hash": self.final_hash or self.engine.state_hash(),
            "draw": bool(self.outcome.draw) if self.outcome is not None else False,
            "scores": list(self.outcome.scores or ()) if self.outcome is not None else [],
            "reason": self.outcome.reason if self.outcome is not None else "",
        }

    # ---- helpers -------------------------------------------------------------------------

    def _ctx(self, seat: int, step: int | None = None) -> Context:
        return Context(self.table_id, GAME_NUMBER, self.step_no if step is None else step, seat)

    def _face(self, index: int) -> Card:
        return index_face(index, self.size)

    def _indices(self, pred: Callable[[Card], bool]) -> list[int]:
        return [k for k in range(self.size) if pred(self._face(k))]

    def _cheat(self, name: str, *args: Any) -> Any:
        """The test cheater's replacement for one contribution, or ``None`` (honest)."""
        cheat = self.mine.keys.cheat if self.mine is not None else None
        hook = getattr(cheat, name, None) if cheat is not None else None
        return hook(self, *args) if hook is not None else None

    def _for_me(self, seats: Sequence[int], make: Callable[[], Body]) -> Callable[[], Body] | None:
        return make if self.mine is not None and self.mine.seat in seats else None

    def _open(self, h: int, tokens: Sequence[Point]) -> int:
        try:
            return reveal_index(unmask(self.cts[h], tokens), self.deck)  # type: ignore[arg-type]
        except InvalidProof as exc:  # every token was verified: the ciphertext is no card
            raise LocalProtocolError(f"card #{h} does not open to a card: {exc}") from exc

    def _check_handles(self, handles: Sequence[int]) -> tuple[int, ...]:
        hs = tuple(handles)
        if len(set(hs)) != len(hs) or any(not 0 <= h < self.size for h in hs):
            raise LocalProtocolError(f"the game names bad cards {hs}")
        return hs

    # ---- the game, as a flow of needs -------------------------------------------------------

    def _main(self) -> _Flow:
        keys = yield Need(
            KEY_KIND,
            tuple(range(self.n)),
            self._check_key,
            "publishing a key share",
            self._for_me(range(self.n), self._make_key),
        )
        self.pubs = [keys[s] for s in range(self.n)]
        try:
            self.joint = joint_key(self.pubs)
        except CryptoError as exc:  # two seats with one key: impossible with valid proofs
            raise LocalProtocolError(f"joint key: {exc}") from exc
        if self.deck is not None:
            self.cts = [public_mask(self.deck.points[k], self.joint) for k in self.index_of_handle]
        self._events(self.engine.start(), None)
        if self.mine is not None:
            self._events(None, self.mine.engine.start())
        yield from self._settle()
        self._compare()
        while not self.engine.is_over():
            movers = tuple(self.engine.to_move())
            if not movers:
                raise LocalProtocolError(f"{self.engine.NAME}: nobody to move")
            acts = yield Need(ACTION_KIND, movers, self._check_action, "deciding")
            acted_at = self.step_no - 1  # the record step that holds these actions
            for s in movers:
                if s not in acts:
                    continue
                yield from self._settle()
                if s not in self.engine.to_move():
                    continue  # the round's earlier answers made this one moot
                self._apply(acts[s], acted_at)
            yield from self._settle()
            self._compare()
        self.outcome = self.engine.outcome()
        self.final_hash = self.engine.state_hash()
        yield Need(
            FINAL_KIND,
            tuple(range(self.n)),
            self._check_final,
            "signing the result",
            self._for_me(range(self.n), self._make_final),
        )
        self.done = True

    def _events(self, public: list[Event] | None, mine: list[Event] | None) -> None:
        if public is not None:
            self.public_events.extend(public)
        if mine is not None and self.mine is not None:
            self.mine.events.extend(ev for ev in mine if ev.visible_to(self.mine.seat))

    def _apply(self, action: Action, acted_at: int) -> None:
        slot = self.order[action.seat]
        self._acted[action.seat] = acted_at
        self._actor = action.seat
        try:
            public = self.engine.apply(action)
        except IllegalAction as exc:
            raise InvalidMove(
                slot, f"illegal action: {exc.reason} ({action!r})", step=acted_at
            ) from None
        except EngineError as exc:
            raise InvalidMove(
                slot, f"refused by the rules: {exc} ({action!r})", step=acted_at
            ) from None
        self._events(public, None)
        mine = self.mine
        if mine is not None and not mine.lagging:
            try:
                self._events(None, mine.engine.apply(action))
            except EngineError:
                # our seat knows faces that make the move illegal already; the table
                # finds out when the cards are revealed (and convicts the actor then)
                mine.lagging = True

    def _late_conviction(self, exc: EngineError) -> CheatDetected:
        """The conviction for an engine error raised while the table folds a reveal.

        Every ``EngineError`` met while folding signed entries is a seat's fault
        (docs/design.md, "Every deviation convicts its author"): the seat the error
        names (a false claim, a move the revealed faces make illegal), else the seat
        whose action the engine is still carrying out.  The deviation happened at that
        seat's action step, so that signed action is the evidence, whenever the
        reveal that exposed it came.  Only an error with no seat to name, before any
        action, is our own bug.
        """
        seat = getattr(exc, "seat", None)
        if not isinstance(seat, int) or not 0 <= seat < self.n:
            seat = self._actor
        if seat is None:
            raise LocalProtocolError(f"the engine refused a dealer answer: {exc}") from exc
        if isinstance(exc, FalseClaim):
            what = f"false claim, shown by the reveal: {exc.statement}"
        elif isinstance(exc, IllegalAction):
            what = f"illegal action, shown by the reveal: {exc.reason}"
        else:
            what = f"refused by the rules once the cards were shown: {exc}"
        return InvalidMove(self.order[seat], what, step=self._acted.get(seat))

    def _settle(self) -> _Flow:
        """Discharge every pending obligation of the seatless (and our) engine."""
        while (ob := self.engine.pending()) is not None:
            mine = self.mine
            if mine is not None and not mine.lagging and mine.engine.pending() != ob:
                raise LocalProtocolError(
                    f"our engine asks for {mine.engine.pending()!r}, the table's for {ob!r}"
                )
            public, private = yield from self._discharge(ob)
            try:
                self._events(self.engine.resolve(public), None)
            except EngineError as exc:
                raise self._late_conviction(exc) from None
            if mine is not None and not mine.lagging:
                try:
                    self._events(None, mine.engine.resolve(private))
                except EngineError:
                    mine.lagging = True  # the table's engine is the judge; ours stops here

    def _compare(self) -> None:
        """Our seat engine must agree with the table's (public) engine; a difference is
        a bug on our side, never a peer's fault, so it is raised loudly as ours."""
        mine = self.mine
        if mine is None or mine.lagging:
            return
        if mine.engine.state_hash() != self.engine.state_hash():
            raise LocalProtocolError(
                f"our seat engine's state hash differs from the table's at step {self.step_no}"
            )

    def _discharge(self, ob: Obligation) -> _Flow:
        """Record steps for one obligation; returns (public answer, our answer)."""
        if isinstance(ob, Shuffle):
            yield from self._shuffle(self._check_handles(ob.handles))
            return None, None
        if isinstance(ob, Reveal):
            hs = self._check_handles(ob.handles)
            if ob.to is None:
                faces = yield from self._reveal_public(hs)
                return faces, faces
            if len(ob.to) != 1:
                raise LocalProtocolError(f"private reveals go to one seat, not {set(ob.to)}")
            (r,) = tuple(ob.to)
            return (yield from self._reveal_to(hs, r))
        if isinstance(ob, Transfer):
            return (yield from self._transfer(ob))
        if isinstance(ob, Prove):
            yield from self._prove(ob)
            return None, None
        if isinstance(ob, Roll):
            stream = yield from self._joint()
            dice = tuple(stream.below(ob.sides) + 1 for _ in range(ob.count))
            return dice, dice
        if isinstance(ob, JointRandom):
            if ob.bound < 1:
                raise LocalProtocolError(f"joint random bound {ob.bound}")
            stream = yield from self._joint()
            value = stream.below(ob.bound)
            return value, value
        raise LocalProtocolError(f"no protocol for obligation {ob!r}")

    # ---- keys -------------------------------------------------------------------------------

    def _make_key(self) -> Body:
        mine = self.mine
        assert mine is not None
        share = make_key_share(self._ctx(mine.seat), mine.secret)
        return KeyBody(share.public.data, share.proof.encode())

    def _check_key(self, seat: int, b: KeyBody) -> Point:
        share = KeyShare(seat, Point.decode(b.public), DleqProof.decode(b.proof))
        if not self._trusted(seat):
            verify_key_share(share, self._ctx(seat))
            self.proofs_checked += 1
        return share.public

    # ---- shuffles ------------------------------------------------------------------------------

    def _shuffle(self, hs: tuple[int, ...]) -> _Flow:
        """Every seat in turn permutes and re-masks the pile.  Each seat shuffles the
        previous output at once; the proofs are checked together, in one batch
        (``crypto.shuffle_proof_tw_batch``), when the last shuffle is in: nothing
        about these cards is revealed before that, so a bad shuffle is caught in
        time, and the seats' turns are not held up by each other's checks."""
        if not hs:
            return
        statements: list[ShuffleStatement] = []
        for s in range(self.n):
            inputs = tuple(self.cts[h] for h in hs)
            # Only the round's last shuffle is checked ahead, in one batch with the
            # round's earlier ones (captured now: the statements are immutable): a
            # batch costs about 6 multiplications a card and shuffle where one proof
            # alone costs about 9, and the seats before the last shuffle at once.
            pending = tuple(statements) if s == self.n - 1 else None
            out = yield Need(
                SHUFFLE_KIND,
                (s,),
                lambda seat, b, inputs=inputs: self._parse_shuffle(seat, inputs, b),
                "shuffling",
                self._for_me((s,), lambda inputs=inputs: self._make_shuffle(inputs)),
                pre=None
                if pending is None
                else lambda seat, b, inputs=inputs, pending=pending: self._pre_shuffle(
                    seat, inputs, b, pending
                ),
                premake=lambda inputs=inputs, pending=pending: self._premake_shuffle(
                    inputs, pending or ()
                ),
            )
            statement = out[s]
            if not self._trusted(s) and not any(statement is v for v in self._checked_ahead):
                statements.append(statement)
            for h, ct in zip(hs, statement.outputs, strict=True):
                self.cts[h] = ct
                self.ptok[h] = {}  # no token opens the new ciphertexts
                if self.mine is not None:
                    self.mine.known.pop(h, None)
        left = [st for st in statements if not any(st is v for v in self._checked_ahead)]
        self.proofs_checked += len(statements) - len(left)  # checked ahead, in a batch
        self._checked_ahead.clear()
        self._verify_shuffles(left)

    def _verify_shuffles(self, statements: list[ShuffleStatement]) -> None:
        if not statements:
            return
        try:
            verify_shuffles_batch(statements)
        except CryptoError:
            for st in statements:  # name the culprit
                try:
                    verify_shuffles_batch([st])
                except CryptoError as exc:
                    slot = self.order[st.context.seat]
                    raise InvalidMove(
                        slot, f"bad shuffle at step {st.context.step}: {exc}"
                    ) from None
            raise LocalProtocolError("a shuffle batch failed but no single proof did") from None
        self.proofs_checked += len(statements)

    def _trusted(self, seat: int) -> bool:
        """Our own entries: we made them, so their proofs are not checked again."""
        return self.mine is not None and seat == self.mine.seat

    def _make_shuffle(self, inputs: tuple[Ciphertext, ...]) -> Body:
        mine = self.mine
        assert mine is not None and self.joint is not None
        made = self._made.pop(self.step_no, None)
        self._made.clear()
        if made is not None and made[0] is inputs and made[1] == self._ctx(mine.seat):
            out, proof = made[2], made[3]
            self._checked_ahead.extend(made[4])  # the round's earlier shuffles, checked
        else:
            out, proof = _shuffle_and_prove(inputs, self.joint, self._ctx(mine.seat))
        forged = self._cheat("shuffle", inputs, out, proof)
        if forged is not None:
            return forged
        return ShuffleBody(encode_pile(out), proof.encode())

    def _premake_shuffle(
        self, inputs: tuple[Ciphertext, ...], pending: tuple[ShuffleStatement, ...] = ()
    ) -> Job:
        """Our shuffle and its proof; when ours is the round's last, the same job also
        checks the round's earlier shuffles (``pending``) in one batch."""
        mine, joint, step = self.mine, self.joint, self.step_no
        assert mine is not None and joint is not None
        ctx = self._ctx(mine.seat)

        def job() -> Callable[[], None]:
            out, proof = _shuffle_and_prove(inputs, joint, ctx)
            checked: tuple[ShuffleStatement, ...] = ()
            if pending:
                try:
                    verify_shuffles_batch(pending)
                    checked = pending
                except CryptoError:
                    pass  # the fold checks them again and names the culprit

            def keep() -> None:
                if self.step_no == step:
                    self._made[step] = (inputs, ctx, out, proof, checked)

            return keep

        return job

    def _parse_shuffle(
        self, seat: int, inputs: tuple[Ciphertext, ...], b: ShuffleBody
    ) -> ShuffleStatement:
        """Decode (validating every point and scalar); the proof is checked in a batch,
        unless a job of :meth:`prework` checked this very statement already."""
        assert self.joint is not None
        ctx = self._ctx(seat)
        ahead = self._ahead.pop((SHUFFLE_KIND, seat, self.step_no), None)
        if ahead is not None:
            body, st, pending = ahead
            if (
                body == b
                and st.inputs == inputs
                and st.joint_key == self.joint
                and st.context == ctx
            ):
                self._checked_ahead.append(st)
                self._checked_ahead.extend(pending)  # counted when the round ends
                self.proofs_checked += 1
                return st
        return _decode_shuffle(inputs, self.joint, ctx, b)

    def _pre_shuffle(
        self,
        seat: int,
        inputs: tuple[Ciphertext, ...],
        b: ShuffleBody,
        pending: tuple[ShuffleStatement, ...] = (),
    ) -> Job:
        """Check the round's last shuffle with the round's earlier ones (``pending``, the
        very statements the fold holds) in one batch."""
        joint, step = self.joint, self.step_no
        assert joint is not None
        ctx = self._ctx(seat)

        def job() -> Callable[[], None]:
            st = _decode_shuffle(inputs, joint, ctx, b)
            verify_shuffles_batch([*pending, st])
            return lambda: self._keep_ahead((SHUFFLE_KIND, seat, step), (b, st, pending))

        return job

    # ---- tokens -----------------------------------------------------------------------------------

    def _token_round(self, hs: Sequence[int], seats: Sequence[int]) -> _Flow:
        """Every seat of ``seats`` publishes its tokens for those of ``hs`` it has not yet."""
        need = {s: [h for h in hs if s not in self.ptok[h]] for s in seats}
        owing = tuple(s for s in seats if need[s])
        if not owing:
            return
        got = yield Need(
            TOKENS_KIND,
            owing,
            lambda seat, b: self._check_tokens(seat, need[seat], b),
            "showing cards",
            self._for_me(owing, lambda: self._make_tokens(need[self.mine.seat])),  # type: ignore[union-attr]
            pre=lambda seat, b: self._pre_tokens(seat, need[seat], b),
            premake=lambda: self._premake_tokens(need[self.mine.seat]),  # type: ignore[union-attr]
        )
        for s in owing:
            for h, tok in zip(need[s], got[s], strict=True):
                self.ptok[h][s] = tok

    def _make_tokens(self, hs: Sequence[int]) -> Body:
        mine = self.mine
        assert mine is not None
        cts = [self.cts[h] for h in hs]
        pub = self.pubs[mine.seat]
        ctx = self._ctx(mine.seat)
        made = self._made.pop(self.step_no, None)
        self._made.clear()
        if made is not None and made[0] == TOKENS_KIND and made[1] == cts and made[2] == ctx:
            tokens, proof = made[3], made[4]
        else:
            tokens, proof = make_tokens(mine.secret, pub, cts, ctx)
        forged = self._cheat("tokens", hs, tokens, proof)
        if forged is not None:
            return forged
        return TokensBody(b"".join(t.data for t in tokens), proof.encode())

    def _premake_tokens(self, hs: Sequence[int]) -> Job:
        """Our reveal tokens and their proof for this step, made in a worker thread."""
        mine, step = self.mine, self.step_no
        assert mine is not None
        cts = [self.cts[h] for h in hs]
        pub, ctx, secret = self.pubs[mine.seat], self._ctx(mine.seat), mine.secret

        def job() -> Callable[[], None]:
            tokens, proof = make_tokens(secret, pub, cts, ctx)

            def keep() -> None:
                if self.step_no == step:
                    self._made[step] = (TOKENS_KIND, cts, ctx, tokens, proof)

            return keep

        return job

    def _check_tokens(self, seat: int, hs: Sequence[int], b: TokensBody) -> list[Point]:
        cts = [self.cts[h] for h in hs]
        ahead = self._ahead.pop((TOKENS_KIND, seat, self.step_no), None)
        if ahead is not None:
            body, checked_cts, ctx, tokens = ahead
            if body == b and checked_cts == cts and ctx == self._ctx(seat):
                self.proofs_checked += 1
                return tokens
        tokens = _decode_points(b.tokens, len(hs))
        proof = DleqProof.decode(b.proof)
        if not self._trusted(seat):
            verify_tokens(self.pubs[seat], cts, tokens, proof, self._ctx(seat))
            self.proofs_checked += 1
        return tokens

    def _pre_tokens(self, seat: int, hs: Sequence[int], b: TokensBody) -> Job:
        cts = [self.cts[h] for h in hs]
        pub, step, ctx = self.pubs[seat], self.step_no, self._ctx(seat)

        def job() -> Callable[[], None]:
            tokens = _decode_points(b.tokens, len(cts))
            verify_tokens(pub, cts, tokens, DleqProof.decode(b.proof), ctx)
            return lambda: self._keep_ahead((TOKENS_KIND, seat, step), (b, cts, ctx, tokens))

        return job

    # ---- reveals and transfers --------------------------------------------------------------

    def _everyone_sees(self, h: int, seat: int) -> bool:
        """After showing ``h`` to ``seat``, may every seat see it?"""
        return (self.engine.seen.get(h, 0) | (1 << seat)) == self.engine.all_seats

    def _reveal_public(self, hs: Sequence[int]) -> _Flow:
        yield from self._token_round(hs, range(self.n))
        faces = {}
        for h in hs:
            toks = self.ptok[h]
            k = self._open(h, [toks[s] for s in range(self.n)])
            faces[h] = self._face(k)
            if self.mine is not None:
                self.mine.known[h] = k
        return faces

    def _reveal_to(self, hs: tuple[int, ...], r: int) -> _Flow:
        """Show ``hs`` to seat ``r``: (public answer, our answer)."""
        everyone = tuple(h for h in hs if self._everyone_sees(h, r))
        private = tuple(h for h in hs if h not in everyone)
        public_faces = (yield from self._reveal_public(everyone)) if everyone else {}
        mine_faces = dict(public_faces)
        if private:
            got = yield from self._reveal_private(private, r)
            mine_faces.update(got)
        return public_faces, mine_faces

    def _reveal_private(self, hs: tuple[int, ...], r: int) -> _Flow:
        """Let seat ``r`` (alone) open ``hs``; returns the faces if we are ``r``."""
        rekey = tuple(h for h in hs if r in self.ptok[h] and len(self.ptok[h]) < self.n)
        if rekey:
            yield from self._remask(rekey, r)
        yield from self._token_round(hs, [s for s in range(self.n) if s != r])
        mine = self.mine
        if mine is None or mine.seat != r:
            return {}
        faces = {}
        for h in hs:
            toks = [self.ptok[h][s] for s in range(self.n) if s != r]
            own = self.ptok[h].get(r)
            if own is None:
                own = mul(mine.secret, self.cts[h].c1)
            k = self._open(h, [*toks, own])
            mine.known[h] = k
            faces[h] = self._face(k)
        return faces

    def _remask(self, hs: tuple[int, ...], by: int) -> _Flow:
        olds = tuple(self.cts[h] for h in hs)
        got = yield Need(
            REMASK_KIND,
            (by,),
            lambda seat, b: self._check_remask(seat, olds, b),
            "re-masking cards",
            self._for_me((by,), lambda: self._make_remask(olds)),
        )
        for h, ct in zip(hs, got[by], strict=True):
            self.cts[h] = ct
            self.ptok[h] = {}

    def _make_remask(self, olds: tuple[Ciphertext, ...]) -> Body:
        mine = self.mine
        assert mine is not None and self.joint is not None
        news, proofs = [], []
        for old in olds:
            new, proof = start_transfer(old, self.joint, self._ctx(mine.seat))
            news.append(new)
            proofs.append(proof)
        forged = self._cheat("remask", olds, news, proofs)
        if forged is not None:
            return forged
        return RemaskBody(encode_pile(news), b"".join(p.encode() for p in proofs))

    def _check_remask(
        self, seat: int, olds: tuple[Ciphertext, ...], b: RemaskBody
    ) -> list[Ciphertext]:
        assert self.joint is not None
        news = decode_pile(b.pile, len(olds))
        if len(b.proofs) != PROOF_BYTES * len(olds):
            raise InvalidEncoding(
                f"{len(olds)} remask proofs must be {PROOF_BYTES * len(olds)} bytes"
            )
        for i, (old, new) in enumerate(zip(olds, news, strict=True)):
            proof = DleqProof.decode(b.proofs[i * PROOF_BYTES : (i + 1) * PROOF_BYTES])
            if not self._trusted(seat):
                verify_transfer(old, new, self.joint, proof, self._ctx(seat))
                self.proofs_checked += 1
        return news

    def _transfer(self, ob: Transfer) -> _Flow:
        (h,) = self._check_handles((ob.handle,))
        if not (0 <= ob.src < self.n and 0 <= ob.dst < self.n):
            raise LocalProtocolError(f"transfer between unknown seats: {ob}")
        if self._everyone_sees(h, ob.dst):
            faces = yield from self._reveal_public((h,))
            return faces, faces
        yield from self._remask((h,), ob.src)
        got = yield from self._reveal_private((h,), ob.dst)
        return {}, got

    # ---- proofs about hidden cards ------------------------------------------------------------

    def _held(self, prover: int, hs: Sequence[int]) -> list[HeldCard]:
        return [
            held_card(self.cts[h], [self.ptok[h][s] for s in range(self.n) if s != prover])
            for h in hs
        ]

    def _ensure_held(self, prover: int, hs: Sequence[int]) -> _Flow:
        """Every other seat's token for the prover's cards must be public (a card that came
        back to its seat through a pile lacks some): show those to the prover again."""
        missing = tuple(
            h for h in hs if any(s not in self.ptok[h] for s in range(self.n) if s != prover)
        )
        if not missing:
            return
        blind = [h for h in missing if not self.engine.visible(prover, h)]
        if blind:
            raise LocalProtocolError(f"seat {prover} must prove about cards {blind} it never saw")
        yield from self._reveal_private(missing, prover)

    def _my_indices(self, hs: Sequence[int]) -> list[int]:
        mine = self.mine
        assert mine is not None
        missing = [h for h in hs if h not in mine.known]
        if missing:
            raise LocalProtocolError(f"we must prove about cards {missing} we never opened")
        return [mine.known[h] for h in hs]

    def _prove(self, ob: Prove) -> _Flow:
        st = ob.statement.shape()
        p = st.seat
        if not 0 <= p < self.n:
            raise LocalProtocolError(f"statement by unknown seat: {st}")
        if isinstance(st, HighestGiven):
            yield from self._prove_highest(st)
            return
        if isinstance(st, AtLeastInSet):
            hs = self._check_handles(st.handles)
            at_least = st.at_least
            if at_least <= 0:
                return  # holds for any faces
            allowed = self._indices(lambda f: f in st.faces)

            def prove(secret: int, pub: Point, held: list[HeldCard], idx: list[int], ctx: Context):
                return prove_cards_in_set(secret, pub, held, idx, allowed, at_least, self.deck, ctx)

            def verify(pub: Point, held: list[HeldCard], raw: bytes, ctx: Context) -> None:
                if at_least > len(hs) or not allowed:
                    raise InvalidProof(f"claim about {len(hs)} cards cannot hold for any faces")
                proof = decode_cards_in_set_proof(raw, pub, held, allowed, at_least, self.deck)
                verify_cards_in_set(pub, held, allowed, at_least, self.deck, proof, ctx)

        elif isinstance(st, NoneOfFace):
            hs = self._check_handles(st.handles)
            forbidden = self._indices(lambda f: f == st.face)
            if not hs or not forbidden:
                return

            def prove(secret: int, pub: Point, held: list[HeldCard], idx: list[int], ctx: Context):
                return prove_none_of(secret, pub, held, idx, forbidden, self.deck, ctx)

            def verify(pub: Point, held: list[HeldCard], raw: bytes, ctx: Context) -> None:
                proof = InequalityProof.decode(raw, len(hs) * len(forbidden))
                verify_none_of(pub, held, forbidden, self.deck, proof, ctx)

        else:
            raise LocalProtocolError(f"no proof shape for {type(st).__name__}: {st}")
        yield from self._ensure_held(p, hs)
        yield Need(
            PROOF_KIND,
            (p,),
            lambda seat, b: self._check_held_proof(seat, hs, verify, b),
            "proving a claim",
            self._for_me((p,), lambda: self._make_held_proof(hs, prove)),
        )

    def _make_held_proof(self, hs: Sequence[int], prove: Callable[..., Any]) -> Body:
        """Our proof about our held cards ``hs``: ``prove(secret, public share, held
        cards, their crypto indices, context)`` makes it in the statement's shape."""
        mine = self.mine
        assert mine is not None
        forged = self._cheat("proof", hs)
        if forged is not None:
            return forged
        held = self._held(mine.seat, hs)
        try:
            proof = prove(
                mine.secret, self.pubs[mine.seat], held, self._my_indices(hs), self._ctx(mine.seat)
            )
        except (InvalidProof, InvalidEncoding) as exc:
            raise LocalProtocolError(f"we cannot prove our own claim: {exc}") from exc
        return ProofBody(proof.encode())

    def _check_held_proof(
        self, seat: int, hs: Sequence[int], verify: Callable[..., None], b: ProofBody
    ) -> None:
        """Check ``seat``'s proof about its held cards ``hs``: ``verify(public share, held
        cards, proof bytes, context)`` decodes and verifies it in the statement's shape."""
        if self._trusted(seat):
            return
        verify(self.pubs[seat], self._held(seat, hs), b.proof, self._ctx(seat))
        self.proofs_checked += 1

    # ---- highest given: sealed to its verifier ------------------------------------------------

    def _prove_highest(self, st: HighestGiven) -> _Flow:
        """A gift sealed to its receiver, the receiver's verdict, and, on a complaint, the
        giver's one-time key that lets anyone open the box and decide who lied."""
        p, v = st.seat, st.verifier
        given = self._check_handles(st.given)
        rest = self._check_handles(st.rest)
        if not given or not rest or p == v or not 0 <= v < self.n:
            return
        if st.order not in ORDERS:
            raise LocalProtocolError(f"unknown card order {st.order!r}")
        yield from self._ensure_held(p, given + rest)
        need_tok = tuple(h for h in given if p not in self.ptok[h])
        pad_to, pad_with = self._gift_padding(st)
        leaves = len(st.rest) * pad_to
        plain = POINT_BYTES * len(st.given) + PROOF_BYTES + inequality_proof_size(leaves)
        gift = _Gift(st, need_tok, self.step_no, pad_to, pad_with, plain)

        def check_sealed(seat: int, b: SealedProofBody) -> bytes:
            if len(b.sealed) != openable_size(gift.plain_bytes):
                raise InvalidEncoding(
                    f"a gift box must be {openable_size(gift.plain_bytes)} bytes,"
                    f" not {len(b.sealed)}"
                )
            check_seal_key(openable_ephemeral(b.sealed))
            mine = self.mine
            if mine is not None and mine.seat == v:
                mine.verdict = self._judge_sealed(gift, b.sealed)
            return b.sealed

        sealed = yield Need(
            SEALED_KIND,
            (p,),
            check_sealed,
            "giving cards",
            self._for_me((p,), lambda: self._make_sealed(gift)),
            premake=lambda: self._premake_sealed(gift),
        )
        verdict_step = self.step_no
        verdict = yield Need(
            VERDICT_KIND,
            (v,),
            lambda seat, b: b.accept,
            "checking the gift",
            self._for_me((v,), self._make_verdict),
        )
        if verdict[v]:
            self.caveats.append(Caveat(gift.step, self.order[p], self.order[v]))
            return
        # a complaint: the giver shows the box's one-time key, and anyone opens the box
        box = sealed[p]
        shown = yield Need(
            UNSEAL_KIND,
            (p,),
            lambda seat, b: self._judge_unsealed(gift, box, verdict_step, b),
            "showing the gift",
            self._for_me((p,), lambda: self._make_unseal(gift)),
        )
        culprit, reason = shown[p]
        raise InvalidMove(self.order[culprit], reason)

    def _gift_padding(self, st: HighestGiven) -> tuple[int, int]:
        """The padded statement's size and filler, from public facts only.

        ``pad_to`` is the largest forbidden set any true gift of ``len(st.given)``
        cards over ``len(st.rest)`` others can have (every card of ``rest`` lies below
        the lowest given one); ``pad_with`` the highest face, which every forbidden set
        holds.  So the proof's size and the work to make and check it do not depend on
        the lowest given face."""
        key = ORDERS[st.order]
        keys = [key(self._face(k)) for k in range(self.size)]
        pad_to = 0
        for low in set(keys):
            below = sum(1 for x in keys if x < low)
            if below >= len(st.rest) and self.size - below >= len(st.given):
                pad_to = max(pad_to, self.size - below)
        if pad_to == 0:
            raise LocalProtocolError("no gift of this size can be proven highest")
        pad_with = max(range(self.size), key=lambda k: (keys[k], -k))
        return pad_to, pad_with

    def _seal_context(self, step: int, prover: int, verifier: int) -> bytes:
        return _SEAL_DOMAIN + self._ctx(prover, step).encode() + bytes([verifier])

    def _gift_secret(self, gift: _Gift) -> bytes:
        """What the gift box's one-time key is derived from: the table secret, so that it
        survives a crash (the giver may have to show the key after a restart)."""
        mine = self.mine
        assert mine is not None
        return _derive(mine.keys.table_secret, _GIFT_KEY_DOMAIN, gift.step)

    def _gift_key(self, gift: _Gift) -> bytes:
        """The gift box's one-time X25519 key (:func:`crypto.seal.openable_key`)."""
        mine = self.mine
        assert mine is not None
        ctx = self._seal_context(gift.step, mine.seat, gift.st.verifier)
        return openable_key(self._gift_secret(gift), ctx)

    def _make_sealed(self, gift: _Gift) -> Body:
        made = self._made.pop(self.step_no, None)
        self._made.clear()
        if made is not None and made[0] is gift:
            return made[1]
        return self._sealing(gift)()

    def _premake_sealed(self, gift: _Gift) -> Job:
        """The gift's padded proof and box made in a worker thread (the worst-case
        statement costs the same for every gift: docs/design.md, the Slave gift)."""
        step, seal = self.step_no, self._sealing(gift)

        def job() -> Callable[[], None]:
            body = seal()

            def keep() -> None:
                if self.step_no == step:
                    self._made[step] = (gift, body)

            return keep

        return job

    def _sealing(self, gift: _Gift) -> Callable[[], Body]:
        """Capture on the loop thread everything our gift needs, and return the pure,
        expensive rest (tokens, the padded inequality proof, the box)."""
        mine = self.mine
        assert mine is not None
        st, need_tok = gift.st, gift.need_tok
        ctx = self._ctx(mine.seat, gift.step)
        pub = self.pubs[mine.seat]
        to_open = [self.cts[h] for h in need_tok]
        key = ORDERS[st.order]
        low = min(key(self._face(k)) for k in self._my_indices(st.given))
        forbidden = self._indices(lambda f: key(f) >= low)
        forged = self._cheat("highest", st, forbidden)
        if forged is not None:
            forbidden = forged
        filler = gift.pad_with if gift.pad_with in forbidden else min(forbidden)
        held = self._held(mine.seat, st.rest)
        secret, mine_rest, deck = mine.secret, self._my_indices(st.rest), self.deck
        receiver = self.manifest.seats[self.order[st.verifier]].seal_key
        ctx_bytes = self._seal_context(gift.step, mine.seat, st.verifier)
        box_secret = self._gift_secret(gift)

        def seal() -> Body:
            tokens, dleq = make_tokens(secret, pub, to_open, ctx) if to_open else ([], None)
            try:
                proof = prove_none_of(
                    secret,
                    pub,
                    held,
                    mine_rest,
                    forbidden,
                    deck,
                    ctx,
                    pad_to=gift.pad_to,
                    pad_with=filler,
                )
            except (InvalidProof, InvalidEncoding) as exc:
                raise LocalProtocolError(f"we cannot prove our gift is our highest: {exc}") from exc
            parts = b"".join(t.data for t in tokens) + (dleq.encode() if dleq is not None else b"")
            plain = parts + proof.encode()
            plain += bytes(gift.plain_bytes - len(plain))
            forged_plain = self._cheat("seal", plain)
            if forged_plain is not None:
                plain = forged_plain
            return SealedProofBody(seal_openable(receiver, plain, ctx_bytes, box_secret))

        return seal

    def _verify_gift(self, gift: _Gift, plain: bytes) -> dict[int, int]:
        """Check a gift's opened plaintext; return the given cards' indices.

        Layout (every size fixed by public facts): the giver's reveal tokens for the
        given cards whose token is not yet public, their DLEQ proof (absent if there
        are none), the padded inequality proof, then zero bytes up to the fixed size."""
        st, need_tok = gift.st, gift.need_tok
        p = st.seat
        if len(plain) != gift.plain_bytes:
            raise InvalidEncoding(f"a gift must be {gift.plain_bytes} bytes, not {len(plain)}")
        n_tok = POINT_BYTES * len(need_tok)
        n_dleq = PROOF_BYTES if need_tok else 0
        n_proof = inequality_proof_size(len(st.rest) * gift.pad_to)
        toks = plain[:n_tok]
        dleq = plain[n_tok : n_tok + n_dleq]
        proof_b = plain[n_tok + n_dleq : n_tok + n_dleq + n_proof]
        if any(plain[n_tok + n_dleq + n_proof :]):
            raise InvalidEncoding("a gift's padding must be zero bytes")
        ctx = self._ctx(p, gift.step)
        own: dict[int, Point] = {}
        if need_tok:
            tokens = _decode_points(toks, len(need_tok))
            cts = [self.cts[h] for h in need_tok]
            verify_tokens(self.pubs[p], cts, tokens, DleqProof.decode(dleq), ctx)
            own = dict(zip(need_tok, tokens, strict=True))
        given = {}
        for h in st.given:
            tok = own.get(h) or self.ptok[h][p]
            others = [self.ptok[h][s] for s in range(self.n) if s != p]
            given[h] = self._open(h, [*others, tok])
        key = ORDERS[st.order]
        low = min(key(self._face(k)) for k in given.values())
        forbidden = self._indices(lambda f: key(f) >= low)
        held = self._held(p, st.rest)
        proof = InequalityProof.decode(proof_b, len(st.rest) * gift.pad_to)
        verify_none_of(
            self.pubs[p],
            held,
            forbidden,
            self.deck,
            proof,
            ctx,
            pad_to=gift.pad_to,
            pad_with=gift.pad_with,
        )
        self.proofs_checked += 1
        return given

    def _judge_sealed(self, gift: _Gift, sealed: bytes) -> VerdictBody:
        """Our verdict on a gift sealed to us (we are the verifier)."""
        mine = self.mine
        assert mine is not None
        st = gift.st
        try:
            plain = open_openable(
                mine.keys.seal, sealed, self._seal_context(gift.step, st.seat, mine.seat)
            )
            given = self._verify_gift(gift, plain)
        except (CryptoError, ValueError, TypeError, KeyError):
            verdict = VerdictBody(False)
        else:
            mine.known.update(given)
            verdict = VerdictBody(True)
        forged = self._cheat("verdict", verdict)
        return forged if forged is not None else verdict

    def _make_verdict(self) -> Body:
        mine = self.mine
        if mine is None or mine.verdict is None:
            raise LocalProtocolError("we owe a verdict on a gift we never received")
        return mine.verdict

    def _make_unseal(self, gift: _Gift) -> Body:
        key = self._gift_key(gift)
        forged = self._cheat("unseal", key)
        return UnsealBody(forged if forged is not None else key)

    def _judge_unsealed(
        self, gift: _Gift, box: bytes, verdict_step: int, b: UnsealBody
    ) -> tuple[int, str]:
        """Open a disputed gift box with the key its giver shows: ``(engine seat proven at
        fault, why)``.  A key that is not the box's own raises (the giver's entry is false)."""
        st = gift.st
        p, v = st.seat, st.verifier
        if shown_key_public(b.key) != openable_ephemeral(box):
            raise InvalidEncoding("the key shown is not the one-time key of its gift box")
        receiver = self.manifest.seats[self.order[v]].seal_key
        try:
            plain = open_with_shown_key(b.key, receiver, box, self._seal_context(gift.step, p, v))
            self._verify_gift(gift, plain)
        except (CryptoError, ValueError, TypeError, KeyError) as exc:
            return p, (
                f"its sealed gift of step {gift.step} is false (its box, opened with the key it"
                f" showed after the receiver's complaint): {exc}"
            )
        return v, (
            f"false complaint at step {verdict_step}: the gift sealed at step {gift.step}"
            " opens and proves that the cards given are the giver's highest"
        )

    # ---- dice and joint randomness -----------------------------------------------------------

    def _dice_context(self, step: int, seat: int) -> bytes:
        return _DICE_CONTEXT + self._ctx(seat, step).encode()

    def _dice_secret(self, step: int) -> tuple[bytes, bytes]:
        mine = self.mine
        assert mine is not None
        d = _derive(mine.keys.table_secret, _DICE_DOMAIN, step)
        return d[:32], d[32:64]

    def _joint(self) -> _Flow:
        """One joint random draw by commit and reveal.

        A draw's ``dice`` round opens every seat's commitment and carries its
        commitment for the *next* draw, so only the first draw of a game needs
        a ``commit`` round of its own: each later roll is one round, not two.
        A draw is named by the step that committed to it (a ``commit`` step,
        or the previous draw's ``dice`` step); its contexts and its joint
        label carry that number.
        """
        everyone = tuple(range(self.n))
        if self._chained is not None:
            draw, commits = self._chained
        else:
            draw = self.step_no

            def make_commit() -> Body:
                value, nonce = self._dice_secret(draw)
                c, _ = commit(value, self._dice_context(draw, self.mine.seat), nonce)  # type: ignore[union-attr]
                return Commit(c)

            commits = yield Need(
                COMMIT_KIND,
                everyone,
                lambda seat, b: b.commitment,
                "rolling",
                self._for_me(everyone, make_commit),
            )
        following = self.step_no  # this dice step commits to the next draw

        def make_open() -> Body:
            value, nonce = self._dice_secret(draw)
            next_value, next_nonce = self._dice_secret(following)
            seat = self.mine.seat  # type: ignore[union-attr]
            ahead, _ = commit(next_value, self._dice_context(following, seat), next_nonce)
            body = DiceBody(value, nonce, ahead)
            forged = self._cheat("opening", body)
            return forged if forged is not None else body

        def check_open(seat: int, b: DiceBody) -> DiceBody:
            try:
                check_commitment(
                    commits[seat], b.value, b.nonce, self._dice_context(draw, seat), seat
                )
            except CommitmentMismatch as exc:
                raise InvalidMove(self.order[seat], f"dice reveal: {exc}") from None
            return b

        opened = yield Need(
            DICE_KIND, everyone, check_open, "rolling", self._for_me(everyone, make_open)
        )
        self._chained = (following, {seat: b.next for seat, b in opened.items()})
        label = _JOINT_DOMAIN + self._ctx(0, draw).encode()
        return JointStream.from_reveals(label, {seat: b.value for seat, b in opened.items()})

    # ---- actions and the end ---------------------------------------------------------------------

    def _check_action(self, seat: int, b: ActionBody) -> Action:
        try:
            data = msgpack.unpackb(b.action, **_ACTION_UNPACK)
        except Exception as exc:  # noqa: BLE001 - msgpack raises many kinds on junk
            raise InvalidEncoding(f"action is not msgpack: {type(exc).__name__}") from None
        if not isinstance(data, dict):
            raise InvalidEncoding("action must be a map")
        action = self.engine.decode_action(data)
        if action.seat != seat:
            raise InvalidEncoding(f"action names seat {action.seat}, sent by seat {seat}")
        return action

    def _make_final(self) -> Body:
        assert self.outcome is not None and self.final_hash is not None
        return FinalBody(bytes.fromhex(self.final_hash), tuple(self.outcome.ranking))

    def _check_final(self, seat: int, b: FinalBody) -> None:
        assert self.outcome is not None and self.final_hash is not None
        if b.state_hash.hex() != self.final_hash or tuple(b.ranking) != tuple(self.outcome.ranking):
            raise InvalidEncoding("the signed result differs from the table's")


def decide_limits(manifest: Any) -> tuple[float, float] | None:
    """(stall, max) seconds for decision steps, if the manifest plays a game."""
    proto = manifest.protocol
    if isinstance(proto, GameProtocol):
        return proto.decide_stall_ms / 1000.0, proto.decide_max_ms / 1000.0
    return None


def describe(rule: GameRule, names: Mapping[int, str]) -> str | None:
    """What the table waits for, in plain words ("Bob is shuffling")."""
    need = rule.need
    if need is None:
        return None
    who = [names.get(rule.slot(s), f"seat {s}") for s in need.seats]
    text = ", ".join(who)
    verb = "are" if len(who) > 1 else "is"
    return f"{text} {verb} {need.what}"
