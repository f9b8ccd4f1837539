"""The game folded on the record: :class:`GameRule`, its dispatch tables, and the rounds
that are no obligation (actions and the final signature).

:class:`GameRule` runs the game as one flow of needs (:mod:`p2p.table.game_rule.core`):
the ``key`` round, then action rounds until the game is over, then the ``final``
round.  After each action it settles every obligation the engine states, through
:data:`DISCHARGE` (and, for ``Prove``, :data:`PROOF_SHAPES`), which name the
sub-protocol module that turns it into record steps.  An engine error met while
settling is a seat's fault (:meth:`GameRule._late_conviction`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Annotated, Any

import msgpack

from crypto.deck import Deck, deck_points
from crypto.elgamal import Ciphertext
from crypto.errors import CryptoError, InvalidEncoding, InvalidProof
from crypto.group import Point
from crypto.reveal import reveal_index, unmask
from crypto.shuffle_proof_tw_batch import ShuffleStatement
from crypto.transcript import Context
from engine import registry
from engine.cards import Card
from engine.errors import EngineError, FalseClaim, IllegalAction
from engine.game import Action, Event, Game, Outcome
from engine.obligations import (
    AtLeastInSet,
    Deal,
    HighestGiven,
    JointRandom,
    NoneOfFace,
    Obligation,
    Prove,
    Reveal,
    Roll,
    Shuffle,
    Statement,
    Transfer,
)
from p2p.errors import CheatDetected, InvalidMove, LocalProtocolError
from p2p.record.order import ABSENT_KIND, PRESENT_KIND, Owed, StepView
from p2p.table.faces import handle_indices, index_face
from p2p.table.game_rule import dice, gift, held, reveal, shuffle, survive
from p2p.table.game_rule import open as opening
from p2p.table.game_rule.core import Flow, Job, Mine, Need, SeatKeys, SeatList, Waived
from p2p.table.game_rule.dice import COMMIT_KIND, DICE_KIND
from p2p.table.game_rule.gift import SEALED_KIND, UNSEAL_KIND, VERDICT_KIND, Caveat
from p2p.table.game_rule.held import PROOF_KIND
from p2p.table.game_rule.keys import KEY_KIND, key_round
from p2p.table.game_rule.reveal import REMASK_KIND, TOKENS_KIND
from p2p.table.game_rule.shuffle import SHUFFLE_KIND
from p2p.wire import U32, Body, Bytes, Hash, TableProtocol, body, table_protocol

if TYPE_CHECKING:
    from concurrent.futures import Executor  # in annotations only: `slaiga verify` needs no threads

GAME_PROTOCOL = "game"
GAME_NUMBER = 1
"""Proof contexts' game number (one game per table)."""
FIRST_STEP = 3
"""The first record step of the game: steps 1-2 draw the seat order."""

ACTION_KIND = "action"
FINAL_KIND = "final"

MACHINE_KINDS = frozenset(
    {KEY_KIND, SHUFFLE_KIND, TOKENS_KIND, REMASK_KIND, PROOF_KIND, SEALED_KIND, COMMIT_KIND}
    | {UNSEAL_KIND, DICE_KIND, FINAL_KIND, opening.OPEN_KIND, opening.OPEN_SHARE_KIND}
    | survive.SURVIVE_KINDS
)
"""Kinds a peer's software sends by itself (stall limits for machines apply)."""
DECISION_KINDS = frozenset({ACTION_KIND, VERDICT_KIND})
"""Kinds that wait for a decision (the verdict too, since it follows a person's gift)."""

WAIVABLE_KINDS = frozenset({PROOF_KIND, SEALED_KIND, VERDICT_KIND, UNSEAL_KIND, REMASK_KIND})
"""Steps owed only by a seat that is gone which nobody can make for it: the sub-protocol
is waived (:class:`~p2p.table.game_rule.core.Waived`)."""
_ABSENCE = object()
"""Sent into the flow when the step it waits on closed by absence."""
_WAIVE = object()

DEFAULT_DECIDE_STALL_MS = 60_000
DEFAULT_DECIDE_MAX_MS = 30 * 60_000
MAX_ACTION_BYTES = 64 * 1024

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
# Dispatch: each obligation, and each proof shape, to its sub-protocol
# ---------------------------------------------------------------------------


def _prove(rule: GameRule, ob: Prove) -> Flow:
    """``Prove``: the statement's shape names its sub-protocol (:data:`PROOF_SHAPES`)."""
    st = ob.statement.shape()
    if not 0 <= st.seat < rule.n:
        raise LocalProtocolError(f"statement by unknown seat: {st}")
    prove = _lookup(PROOF_SHAPES, st)
    if prove is None:
        raise LocalProtocolError(f"no proof shape for {type(st).__name__}: {st}")
    if st.seat in rule.gone:
        return None, None  # a seat that is gone proves nothing: its claim is waived
    with contextlib.suppress(Waived):  # its prover (or a gift's receiver) left: waived
        yield from prove(rule, st)
    return None, None


DISCHARGE: Mapping[type[Obligation], Callable[[GameRule, Any], Flow]] = {
    Shuffle: shuffle.discharge,
    Reveal: reveal.discharge,
    Deal: reveal.deal,
    Transfer: reveal.transfer,
    Prove: _prove,
    Roll: dice.roll,
    JointRandom: dice.joint_random,
}
"""Each obligation's sub-protocol: a flow of record steps that returns (the seatless
engine's answer, our seat engine's answer)."""

PROOF_SHAPES: Mapping[type[Statement], Callable[[GameRule, Any], Flow]] = {
    AtLeastInSet: held.at_least_in_set,
    NoneOfFace: held.none_of_face,
    HighestGiven: gift.highest_given,
}
"""Each proof shape's sub-protocol (``engine.obligations``: every statement has one)."""


def _lookup(table: Mapping[type, Callable[..., Flow]], obj: object) -> Callable[..., Flow] | None:
    """The entry for ``obj``'s class or its nearest base class in ``table``."""
    for cls in type(obj).__mro__:
        found = table.get(cls)
        if found is not None:
            return found
    return None


# ---------------------------------------------------------------------------
# The rule
# ---------------------------------------------------------------------------


class GameRule:
    """The record's turn rule for a game table; a :class:`p2p.record.order.Rule` (see the
    package docstring)."""

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
        self.mine: Mine | None = None
        if keys is not None:
            seat = self.engine_seat_of.get(keys.slot)
            if seat is None:
                raise LocalProtocolError(f"slot {keys.slot} is not seated at this table")
            self.mine = Mine(keys, seat, self.spec.factory(self.n, dict(manifest.options)))
        self.step_no = FIRST_STEP
        self.public_events: list[Event] = []
        self.proofs_checked = 0
        self.entries_checked = 0
        self.states_compared = 0
        """Comparisons of our seat engine with the table's (:meth:`_compare`)."""
        self.hashes_compared = 0
        """Of them, those that hashed both engines' states."""
        self.caveats: list[Caveat] = []
        """Checks made by one seat alone (accepted sealed gifts), for ``slaiga verify``."""
        self.open_hands = opening.enabled(manifest)
        self.deals: list[opening.Deal] = []
        """With ``open_hands``: each shuffled pile and its dealt hands, opened at the end."""
        self.opened: int | None = None
        """With ``open_hands``, once every seat opened its key: the joint secret."""
        self.gift_checks: list[opening.GiftCheck] = []
        """The gifts of :attr:`caveats`, checked publicly once the hands were opened."""
        self.outcome: Outcome | None = None
        self.final_hash: str | None = None
        self.done = False
        self._acted: dict[int, int] = {}
        """Engine seat -> the record step of its last action (the evidence of a lie that a
        later reveal shows)."""
        self._actor: int | None = None
        """The engine seat whose action the engine is carrying out (reveals included);
        ``None`` before the first action and once a round is settled."""
        self._chained: tuple[int, dict[int, bytes]] | None = None
        """The next joint draw's number and every seat's commitment to it, once a draw
        has carried them (:mod:`p2p.table.game_rule.dice`)."""
        self._ahead: dict[tuple[str, int, int], tuple[Any, ...]] = {}
        """(kind, engine seat, step) -> an entry checked ahead of the fold by a job of
        :meth:`prework`: the body, what its check depended on, and the parsed value."""
        self._made: dict[int, tuple[Any, ...]] = {}
        """step -> our own shuffle or gift made ahead by a job of :meth:`premake`."""
        self._own: tuple[int, Body, Any] | None = None
        """Our own entry as we just made it: (step, the body object, its parsed value), so
        signing it does not decode again what we computed ourselves (a shuffle is some
        265 point validations: :meth:`_own_parsed`)."""
        self._spare: tuple[int, Any] | None = None
        """(card count, future) of our next shuffle's pile-independent half, prepared in
        the background while a deal is played, before its step is known
        (:func:`p2p.table.game_rule.shuffle.prepare_spare`)."""
        self._actions_since_shuffle = 0
        """Action rounds folded since our latest shuffle round."""
        self._checked_ahead: list[ShuffleStatement] = []
        """Shuffle statements of this round already verified ahead (not batched again)."""
        self.shuffle_rounds = 0
        """Shuffle rounds begun so far: the next one's number (its proofs' contexts name it)."""
        self.shuffles_made = 0
        """Our shuffles made at their record step (a count for tests)."""
        self.proposals_signed = 0
        """Our shuffles signed as proposed ahead, off the record (a count for tests)."""
        self.proposals_sent = 0
        """Our proposals sent off the record (a count for tests)."""
        self.proposals_hit = 0
        """Shuffle entries of others found checked ahead as their proposals (for tests)."""
        self.proposals_dropped = 0
        """Proposals dropped as bad or unexpected (for tests; never anyone's fault)."""
        self._fresh: tuple[Ciphertext, ...] | None = None
        """The public masking of the whole deck under the joint key, in handle order: a
        whole-deck shuffle round's starting pile."""
        self._proposals: dict[int, Any] = {}
        """Round number -> the proposals of that shuffle round made ahead, off the record
        (:class:`p2p.table.game_rule.shuffle.Ahead`)."""
        self.offrecord: Any = None
        """How a live peer's rule sends and schedules off-record work (set by the node:
        :class:`p2p.table.game_rule.shuffle.OffRecord`); ``None``: no proposals."""
        self.background: Executor | None = None
        """Where a live peer's rule does work that no step waits for yet (our shuffle's
        pile-independent half, the checks of a round's earlier shuffles): set by
        :mod:`p2p.net.offload`; ``None``: all of it is done by the fold and its jobs."""
        self.survive = bool(dict(manifest.options).get("survive"))
        self.gone: tuple[int, ...] = ()
        """Engine seats removed by the absence lane, in the order they left."""
        self._left: set[int] = set()
        """Engine seats whose leaving rule the engines applied."""
        self.abandoned = False
        """Two seats are gone: nobody can act for both, the table ends here."""
        self.removed_me = False
        self.escrow_ready = False
        self.escrow_step = 0
        self.escrow_deals: dict[int, Any] = {}
        self.escrow_pub: dict[int, Any] = {}
        self._flow = self._gate(self._main())
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

    # ---- seats that leave for good (issue 21) ------------------------------------------------

    def check_absent(self, slot: int, named: frozenset[int], kind: str) -> None:
        """May ``slot`` sign a lane entry of ``kind`` naming ``named`` now?"""
        need = self._need
        if not self.survive or not self.escrow_ready or need is None:
            raise InvalidMove(slot, f"{kind} at step {self.step_no}: nobody can leave here now")
        me = self.engine_seat_of[slot]
        seats = set()
        for s in named:
            e = self.engine_seat_of.get(s)
            if e is None or e == me or e in self.gone:
                raise InvalidMove(slot, f"{kind} at step {self.step_no} names slot {s}")
            seats.add(e)
        left = self.n - len(self.gone) - len(seats)
        if kind == ABSENT_KIND and left < 2:
            # the round would complete with the signer's entry alone: one seat could end
            # the table for everyone (two machines gone of three: the silence limits do)
            raise InvalidMove(
                slot, f"absent at step {self.step_no} leaves {left} seat to sign it (at least 2)"
            )
        # owing, not unheard: a seat that signed may not have had the entry we hold
        owing = set(need.seats)
        if not seats or (kind == ABSENT_KIND and not seats & owing):
            raise InvalidMove(slot, f"absent at step {self.step_no}: names no seat that owes")
        if kind == PRESENT_KIND and not seats <= set(need.seats):
            raise InvalidMove(slot, f"present at step {self.step_no}: names a seat that owes not")

    def advance_absent(self, step: StepView, named: frozenset[int]) -> None:
        """The step closed by absence: the named slots are out from here on."""
        self.step_no = step.number + 1
        new = sorted(self.engine_seat_of[s] for s in named)
        self.gone = (*self.gone, *(s for s in new if s not in self.gone))
        if self.mine is not None and self.mine.seat in new:
            self.removed_me = True
            self.mine = None  # we follow as a spectator from here on
        if len(self.gone) >= 2 or self.n - len(self.gone) < 2:
            self.abandoned = True  # nobody can act for two seats (threshold n - 1)
            self._need = None
            self._owed = None
            return
        try:
            self._need = self._flow.send(_ABSENCE)  # type: ignore[arg-type]
        except StopIteration:
            self._need = None
        except BaseException:
            self._need = None
            self._owed = None
            raise
        self._owed = self._owed_of(self._need)

    def _gate(self, inner: Flow) -> Flow:
        """The flow as the record sees it: every step's need without the seats that are
        gone, their tokens made by the others, their proofs waived."""
        try:
            need = next(inner)
        except StopIteration as stop:
            return stop.value
        while True:
            got = yield from self._serve(need)
            try:
                need = inner.throw(Waived()) if got is _WAIVE else inner.send(got)
            except StopIteration as stop:
                return stop.value

    def _serve(self, need: Need) -> Flow:
        while True:
            gone = [s for s in need.seats if s in self.gone]
            if not gone:
                got = yield need
                if got is _ABSENCE:
                    continue
                return got
            if need.kind == ACTION_KIND:
                return {}  # the round is asked again once the leaving rule applied
            extra: dict[int, Any] = {}
            if need.kind == TOKENS_KIND and need.cards is not None:
                for j in gone:
                    extra[j] = yield from survive.stand_in_tokens(self, j, need.cards[j])
            present = tuple(s for s in need.seats if s not in self.gone)
            if not present:
                return _WAIVE if need.kind in WAIVABLE_KINDS else extra
            got = yield replace(need, seats=present, parsed={})
            if got is _ABSENCE:
                continue
            return {**got, **extra}

    def _apply_leaves(self) -> None:
        """The leaving rule of every seat that is gone, between obligations."""
        for s in self.gone:
            if s in self._left:
                continue
            if not self.engine.started or self.engine.is_over():
                return
            if self.engine.pending() is not None:
                return
            self._left.add(s)
            try:
                self._events(self.engine.leave(s), None)
            except EngineError as exc:
                raise LocalProtocolError(f"the leaving rule failed: {exc}") from exc
            mine = self.mine
            if mine is not None and not mine.lagging:
                self._events(None, mine.engine.leave(s))

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

    # ---- helpers for the sub-protocols -----------------------------------------------------

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

    def _keep_own(self, body_: Body, parsed: Any) -> Body:
        """Remember our entry ``body_`` for this step with its value (see :meth:`_own_parsed`)."""
        self._own = (self.step_no, body_, parsed)
        return body_

    def _own_parsed(self, seat: int, body_: Body) -> Any | None:
        """The value of our own entry if ``body_`` is the very object we made for this
        step (what :meth:`p2p.record.chain.Record.sign` passes on): its points are ours,
        made from validated inputs, so they are not decoded and validated again.  Any
        other body (read back from our file, a copy, one a test cheater forged) is
        decoded as a peer's would be.  ``None``: not ours."""
        if not self._trusted(seat):
            return None
        own, self._own = self._own, None
        if own is None or own[0] != self.step_no or own[1] is not body_:
            return None
        return own[2]

    def _trusted(self, seat: int) -> bool:
        """Our own entries: we made them, so their proofs are not checked again."""
        return self.mine is not None and seat == self.mine.seat

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

    def _main(self) -> Flow:
        yield from key_round(self)
        if self.survive:
            yield from survive.escrow_round(self)
        self._events(self.engine.start(), None)
        if self.mine is not None:
            self._events(None, self.mine.engine.start())
        yield from self._settle()
        self._compare()
        while not self.engine.is_over():
            movers = tuple(self.engine.to_move())
            if self.open_hands:
                opening.note_hands(self)
            if not movers:
                raise LocalProtocolError(f"{self.engine.NAME}: nobody to move")
            acts = yield Need(ACTION_KIND, movers, self._check_action, "deciding")
            acted_at = self.step_no - 1  # the record step that holds these actions
            shuffle.prepare_spare(self)  # the next deal's, while this one is played
            for s in movers:
                if s not in acts:
                    continue
                yield from self._settle()
                if s not in self.engine.to_move():
                    continue  # the round's earlier answers made this one moot
                self._apply(acts[s], acted_at)
            yield from self._settle()
            self._actor = None  # the round's actions are carried out: nobody's from here on
            self._compare()
        self.outcome = self.engine.outcome()
        self.final_hash = self.engine.state_hash()
        self._compare(hashes=True)
        everyone = tuple(range(self.n))
        yield Need(
            FINAL_KIND,
            everyone,
            self._check_final,
            "signing the result",
            self._for_me(everyone, self._make_final),
        )
        self.done = True
        if self.open_hands:  # a seat that left: the others rebuild its key (survive)
            yield from opening.open_round(self)

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
        reveal that exposed it came.  Only an error with no seat to name while no action
        is carried out (before the first, or once a round is settled) is our own bug.
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

    def _settle(self) -> Flow:
        """Discharge every pending obligation of the seatless (and our) engine (and apply
        the leaving rule of a seat that is gone, between them)."""
        while True:
            self._apply_leaves()
            ob = self.engine.pending()
            if ob is None:
                return
            mine = self.mine
            if mine is not None and not mine.lagging and mine.engine.pending() != ob:
                raise LocalProtocolError(
                    f"our engine asks for {mine.engine.pending()!r}, the table's for {ob!r}"
                )
            public, private = yield from self._discharge(ob)
            if self.open_hands and isinstance(ob, Shuffle):
                opening.note_deal(self)
            try:
                self._events(self.engine.resolve(public), None)
            except EngineError as exc:
                raise self._late_conviction(exc) from None
            if mine is not None and not mine.lagging:
                try:
                    self._events(None, mine.engine.resolve(private))
                except EngineError:
                    mine.lagging = True  # the table's engine is the judge; ours stops here

    def _discharge(self, ob: Obligation) -> Flow:
        """Record steps for one obligation, by :data:`DISCHARGE`; returns (public answer,
        our answer)."""
        discharge = _lookup(DISCHARGE, ob)
        if discharge is None:
            raise LocalProtocolError(f"no protocol for obligation {ob!r}")
        return (yield from discharge(self, ob))

    def _compare(self, hashes: bool = False) -> None:
        """Our seat engine must agree with the table's (public) engine; a difference is
        a bug on our side, never a peer's fault, so it is raised loudly as ours.

        Why after every action round: our seat engine learns faces the table's does
        not, and the rules must never let a hidden face change the public state (our
        bot would decide from a game the table is not playing, and we would sign
        entries the others refuse).  A difference may start at any action or answer,
        so each round is checked, but not by hashing both engines (``canonical`` walks
        every value in Python: the largest cost left per action on the event loop).
        Each round compares their :meth:`~engine.game.Game.hashed_state` (the very data
        the hash digests) with ``==``, mostly in C (about a ninth of the hashing's
        cost); only when that finds them unequal are the hashes compared, so the
        verdict is the hash's.  ``==`` may call equal what the hash tells apart only
        for values equal across types (``True == 1``), so with ``hashes`` (the game's
        end, before the result is signed) the two state hashes are compared too
        (:attr:`hashes_compared` counts them)."""
        mine = self.mine
        if mine is None or mine.lagging:
            return
        self.states_compared += 1
        if not hashes and mine.engine.hashed_state() == self.engine.hashed_state():
            return
        self.hashes_compared += 1
        table = self.final_hash if hashes and self.final_hash else self.engine.state_hash()
        if mine.engine.state_hash() != table:
            raise LocalProtocolError(
                f"our seat engine's state hash differs from the table's at step {self.step_no}"
            )

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
    if len(who) == 1:
        return f"{who[0]} is {need.what}"
    return f"{', '.join(who[:-1])} and {who[-1]} are {need.what}"
