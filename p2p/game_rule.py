"""A whole game on the signed record: the turn rule every peer folds, and one seat's part.

After the seat order (record steps 1-2, :mod:`p2p.forming`) a table whose
manifest names the protocol ``game`` (:class:`GameProtocol`) plays its game
on the record.  :class:`GameRule` is a :class:`p2p.order.Rule`: a pure fold
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
not show the lowest given face to anyone.  The giver seals to the receiver:
its reveal tokens for the given cards and an inequality proof that none of
its other cards is a face at or above the lowest given one, all signed with
its identity key inside the box (bound to table, step and seat).  The
receiver answers ``verdict``: accept, or complain with the opened payload and
that inner signature.  Anyone can then judge the complaint: a payload whose
proof fails convicts the giver; one whose proof verifies convicts the
complainer.

Any entry that fails a check raises :class:`p2p.errors.InvalidMove` naming its
signer.  Any engine error met while folding completed steps is a seat's fault
too, whenever it comes: an action that the rules refuse only after a reveal (a
Slave play of cards that turn out not to beat the pile, a Slaiga discard
declared a king that shows a 6, a false shot, block, cancel or win claim) is
raised when the reveal completes (from :meth:`GameRule.advance`), naming the
actor, with the step of its signed action, which the record keeps as the
evidence.  So ``slaiga verify`` reaches the same verdict from the file alone.

Secrets that must survive a crash come from a per-table secret that the node
writes to disk (fsynced) before its first key share: the key share ``x`` and
the dice commitment values.  Everything else is fresh randomness, because the
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
from crypto.identity import IdentityKey, verify_signature
from crypto.inequality import InequalityProof, prove_none_of, verify_none_of
from crypto.keys import KeyShare, joint_key, make_key_share, verify_key_share
from crypto.reveal import make_tokens, reveal_index, unmask, verify_tokens
from crypto.seal import SealKey, open_sealed, seal
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
from p2p.errors import CheatDetected, Dispute, InvalidMove, LocalProtocolError
from p2p.faces import handle_indices, index_face
from p2p.forming import SEAT_ORDER_VALUE_BYTES, Commit
from p2p.order import Owed, StepView
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
COMMIT_KIND = "commit"
DICE_KIND = "dice"
ACTION_KIND = "action"
FINAL_KIND = "final"

MACHINE_KINDS = frozenset(
    {KEY_KIND, SHUFFLE_KIND, TOKENS_KIND, REMASK_KIND, PROOF_KIND, SEALED_KIND, COMMIT_KIND}
    | {DICE_KIND, FINAL_KIND}
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
_INNER_DOMAIN = b"slaiga/v1/game/sealed-proof-signature"
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
    """The verifier's answer to a sealed proof: accept, or complain with the opened
    payload and the prover's signature over it (both empty on accept)."""

    accept: Annotated[bool, Bool()]
    payload: Blob
    signature: Annotated[bytes, Bytes(max_len=64)]


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


def _decode_points(blob: bytes, count: int) -> list[Point]:
    """``count`` received tokens, 32 bytes each, every one fully validated."""
    if len(blob) != POINT_BYTES * count:
        raise InvalidEncoding(f"{count} tokens must be {POINT_BYTES * count} bytes")
    return [Point.decode(blob[i : i + POINT_BYTES]) for i in range(0, len(blob), POINT_BYTES)]


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
    ``make()`` builds our own entry (live peers only).
    """

    kind: str
    seats: tuple[int, ...]
    check: Callable[[int, Any], Any]
    what: str
    make: Callable[[], Body] | None = None
    parsed: dict[int, Any] = field(default_factory=dict)


_Flow = Generator[Need, dict[int, Any], Any]


class GameRule:
    """The record's turn rule for a game table; a :class:`p2p.order.Rule` (see module)."""

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
            out = yield Need(
                SHUFFLE_KIND,
                (s,),
                lambda seat, b, inputs=inputs: self._parse_shuffle(seat, inputs, b),
                "shuffling",
                self._for_me((s,), lambda inputs=inputs: self._make_shuffle(inputs)),
            )
            statement = out[s]
            if not self._trusted(s):
                statements.append(statement)
            for h, ct in zip(hs, statement.outputs, strict=True):
                self.cts[h] = ct
                self.ptok[h] = {}  # no token opens the new ciphertexts
                if self.mine is not None:
                    self.mine.known.pop(h, None)
        self._verify_shuffles(statements)

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
        out, witness = shuffle_deck(inputs, self.joint)
        proof = prove_shuffle_batchable(inputs, out, self.joint, witness, self._ctx(mine.seat))
        forged = self._cheat("shuffle", inputs, out, proof)
        if forged is not None:
            return forged
        return ShuffleBody(encode_pile(out), proof.encode())

    def _parse_shuffle(
        self, seat: int, inputs: tuple[Ciphertext, ...], b: ShuffleBody
    ) -> ShuffleStatement:
        """Decode (validating every point and scalar); the proof is checked in a batch."""
        assert self.joint is not None
        n = len(inputs)
        out = tuple(decode_pile(b.pile, n))
        proof = TWCommitmentProof.decode(b.proof, expected_size=n)
        return ShuffleStatement(inputs, out, self.joint, proof, self._ctx(seat))

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
        )
        for s in owing:
            for h, tok in zip(need[s], got[s], strict=True):
                self.ptok[h][s] = tok

    def _make_tokens(self, hs: Sequence[int]) -> Body:
        mine = self.mine
        assert mine is not None
        cts = [self.cts[h] for h in hs]
        pub = self.pubs[mine.seat]
        tokens, proof = make_tokens(mine.secret, pub, cts, self._ctx(mine.seat))
        forged = self._cheat("tokens", hs, tokens, proof)
        if forged is not None:
            return forged
        return TokensBody(b"".join(t.data for t in tokens), proof.encode())

    def _check_tokens(self, seat: int, hs: Sequence[int], b: TokensBody) -> list[Point]:
        tokens = _decode_points(b.tokens, len(hs))
        cts = [self.cts[h] for h in hs]
        proof = DleqProof.decode(b.proof)
        if not self._trusted(seat):
            verify_tokens(self.pubs[seat], cts, tokens, proof, self._ctx(seat))
            self.proofs_checked += 1
        return tokens

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
        p, v = st.seat, st.verifier
        given = self._check_handles(st.given)
        rest = self._check_handles(st.rest)
        if not given or not rest or p == v or not 0 <= v < self.n:
            return
        if st.order not in ORDERS:
            raise LocalProtocolError(f"unknown card order {st.order!r}")
        yield from self._ensure_held(p, given + rest)
        need_tok = tuple(h for h in given if p not in self.ptok[h])
        sealed_step = self.step_no

        def check_sealed(seat: int, b: SealedProofBody) -> bytes:
            mine = self.mine
            if mine is not None and mine.seat == v:
                mine.verdict = self._judge_sealed(st, need_tok, b.sealed, sealed_step)
            return b.sealed

        yield Need(
            SEALED_KIND,
            (p,),
            check_sealed,
            "giving cards",
            self._for_me((p,), lambda: self._make_sealed(st, need_tok)),
        )
        verdict = yield Need(
            VERDICT_KIND,
            (v,),
            lambda seat, b: self._check_verdict(st, need_tok, sealed_step, b),
            "checking the gift",
            self._for_me((v,), self._make_verdict),
        )
        said = verdict[v]
        if said is False:
            raise Dispute(
                self.order[p],
                f"seat {self.order[v]} says the sealed gift proof of step {sealed_step}"
                " does not open",
            )
        if isinstance(said, str):
            raise InvalidMove(self.order[p], said)

    def _seal_context(self, step: int, prover: int, verifier: int) -> bytes:
        return _SEAL_DOMAIN + self._ctx(prover, step).encode() + bytes([verifier])

    def _inner_message(self, step: int, prover: int, payload: bytes) -> bytes:
        return _INNER_DOMAIN + self._ctx(prover, step).encode() + payload

    def _make_sealed(self, st: HighestGiven, need_tok: tuple[int, ...]) -> Body:
        mine = self.mine
        assert mine is not None
        ctx = self._ctx(mine.seat)
        pub = self.pubs[mine.seat]
        if need_tok:
            tokens, dleq = make_tokens(mine.secret, pub, [self.cts[h] for h in need_tok], ctx)
        else:
            tokens, dleq = [], None
        key = ORDERS[st.order]
        low = min(key(self._face(k)) for k in self._my_indices(st.given))
        forbidden = self._indices(lambda f: key(f) >= low)
        forged = self._cheat("highest", st, forbidden)
        if forged is not None:
            forbidden = forged
        held = self._held(mine.seat, st.rest)
        try:
            proof = prove_none_of(
                mine.secret, pub, held, self._my_indices(st.rest), forbidden, self.deck, ctx
            )
        except (InvalidProof, InvalidEncoding) as exc:
            raise LocalProtocolError(f"we cannot prove our gift is our highest: {exc}") from exc
        payload = msgpack.packb(
            {
                "tokens": b"".join(t.data for t in tokens),
                "dleq": dleq.encode() if dleq is not None else b"",
                "proof": proof.encode(),
            },
            use_bin_type=True,
        )
        sig = mine.keys.identity.sign(self._inner_message(self.step_no, mine.seat, payload))
        inner = msgpack.packb({"payload": payload, "signature": sig}, use_bin_type=True)
        receiver = self.manifest.seats[self.order[st.verifier]].seal_key
        ctx_bytes = self._seal_context(self.step_no, mine.seat, st.verifier)
        return SealedProofBody(seal(receiver, inner, ctx_bytes))

    def _verify_gift(
        self, st: HighestGiven, need_tok: tuple[int, ...], step: int, payload: bytes
    ) -> dict[int, int]:
        """Check a highest-given payload publicly; return the given cards' indices."""
        p = st.seat
        data = msgpack.unpackb(payload, **_ACTION_UNPACK | {"max_bin_len": 1 << 20})
        if not isinstance(data, dict) or set(data) != {"tokens", "dleq", "proof"}:
            raise InvalidEncoding("sealed payload must map tokens, dleq and proof")
        toks, dleq, proof_b = data["tokens"], data["dleq"], data["proof"]
        if not all(isinstance(x, bytes) for x in (toks, dleq, proof_b)):
            raise InvalidEncoding("sealed payload fields must be bytes")
        ctx = self._ctx(p, step)
        own: dict[int, Point] = {}
        if need_tok:
            tokens = _decode_points(toks, len(need_tok))
            cts = [self.cts[h] for h in need_tok]
            verify_tokens(self.pubs[p], cts, tokens, DleqProof.decode(dleq), ctx)
            own = dict(zip(need_tok, tokens, strict=True))
        elif toks or dleq:
            raise InvalidEncoding("unexpected tokens in the sealed payload")
        given = {}
        for h in st.given:
            tok = own.get(h) or self.ptok[h][p]
            others = [self.ptok[h][s] for s in range(self.n) if s != p]
            given[h] = self._open(h, [*others, tok])
        key = ORDERS[st.order]
        low = min(key(self._face(k)) for k in given.values())
        forbidden = self._indices(lambda f: key(f) >= low)
        held = self._held(p, st.rest)
        proof = InequalityProof.decode(proof_b, len(st.rest) * len(forbidden))
        verify_none_of(self.pubs[p], held, forbidden, self.deck, proof, ctx)
        self.proofs_checked += 1
        return given

    def _judge_sealed(
        self, st: HighestGiven, need_tok: tuple[int, ...], sealed: bytes, step: int
    ) -> VerdictBody:
        """Our verdict on a gift sealed to us (we are the verifier)."""
        mine = self.mine
        assert mine is not None
        try:
            inner = open_sealed(
                mine.keys.seal, sealed, self._seal_context(step, st.seat, mine.seat)
            )
            data = msgpack.unpackb(inner, **_ACTION_UNPACK | {"max_bin_len": 1 << 20})
            payload, sig = data["payload"], data["signature"]
            prover_key = self.manifest.seats[self.order[st.seat]].identity
            verify_signature(prover_key, self._inner_message(step, st.seat, payload), sig)
        except Exception:  # noqa: BLE001 - any failure to open is a dispute without evidence
            return VerdictBody(False, b"", b"")
        try:
            given = self._verify_gift(st, need_tok, step, payload)
        except (CryptoError, ValueError, TypeError, KeyError):
            return VerdictBody(False, payload, sig)
        mine.known.update(given)
        forged = self._cheat("verdict", payload, sig)
        return forged if forged is not None else VerdictBody(True, b"", b"")

    def _make_verdict(self) -> Body:
        mine = self.mine
        if mine is None or mine.verdict is None:
            raise LocalProtocolError("we owe a verdict on a gift we never received")
        return mine.verdict

    def _check_verdict(
        self, st: HighestGiven, need_tok: tuple[int, ...], step: int, b: VerdictBody
    ) -> bool | str:
        """``True``: accepted; ``False``: a complaint without evidence; a text: a proven
        complaint (why the gift is false); a false complaint raises at once."""
        v_slot, p_slot = self.order[st.verifier], self.order[st.seat]
        if b.accept:
            if b.payload or b.signature:
                raise InvalidEncoding("an accepting verdict carries no evidence")
            return True
        if not b.payload:
            return False  # a complaint nobody can settle: see _prove_highest
        prover_key = self.manifest.seats[p_slot].identity
        try:
            verify_signature(prover_key, self._inner_message(step, st.seat, b.payload), b.signature)
        except CryptoError:
            raise InvalidMove(
                v_slot, "complaint evidence is not signed by the giver (a false complaint)"
            ) from None
        try:
            self._verify_gift(st, need_tok, step, b.payload)
        except (CryptoError, ValueError, TypeError, KeyError) as exc:
            # a true complaint: the entry stands, and convicts the giver once its step is in
            return f"its gift is not its highest (shown by the receiver's complaint): {exc}"
        raise InvalidMove(v_slot, "false complaint: the gift proof verifies")

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
