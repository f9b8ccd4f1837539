"""One seat's table session, sans-I/O: the policy of a running record.

:class:`TableSession` is what a peer decides while a table's record runs, with no
socket, clock or thread of its own (the manner of h11 and trio-websocket: a
sans-I/O core, and a thin shell, :mod:`p2p.net.node`, that moves bytes and
timers).  The shell feeds it *events* and carries out the *effects* it
returns, in order:

* events: :meth:`TableSession.peer_up` / :meth:`~TableSession.peer_down`
  (a link to a seat came or went), :meth:`~TableSession.message` (a message
  from a seated peer), :meth:`~TableSession.offer` (one signed entry, from
  a peer or our file), :meth:`~TableSession.own` (our own next body),
  :meth:`~TableSession.vote` (our player votes to end the table),
  :meth:`~TableSession.leave` / :meth:`~TableSession.back` (our player left, a bot
  plays on, or is back) and :meth:`~TableSession.take_notice` (another seat's),
  :meth:`~TableSession.beat` and :meth:`~TableSession.tick` (the time now);
* effects (:mod:`p2p.table.effects`): ``Send``, ``SendEach``, ``Broadcast``,
  ``SendOwn`` (bytes to peers), ``Persist``, ``Sync``, ``PersistVote``, ``PersistNotice``,
  ``CloseWithVotes`` (the record file), a :class:`p2p.table.events.NodeEvent`
  (report it), ``Trace``, ``Tell``, ``AskEnd``, ``ShowPlayer`` (our player),
  ``Serve`` (answer a fetch) and ``Wake`` (look again now).

Each event returns the effects it caused (:attr:`TableSession.out` is drained);
one that must stop the table raises (:class:`p2p.errors.TableAbandoned`, a
:class:`p2p.errors.FoldFailed`) after queueing what must still be done, so the
shell carries out :attr:`TableSession.out` in a ``finally``.  :meth:`tick`
returns whether the record run is over and when to look again.

The policy it holds: blame and forks (a chain break is investigated by fetching
whole records before anyone is named), evidence kept and relayed, conviction,
relay choice, silence with no false blame (away time, a re-fetch round first),
a vanished player and the signed end vote (:mod:`p2p.table.endvote`), the signed
notices of a player who left or is back (:mod:`p2p.table.notice`), head
claims compared entry by entry, and the linger after the end.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from crypto.identity import IdentityKey
from p2p import wire
from p2p.errors import (
    BadNotice,
    BadVote,
    BrokenChain,
    CheatDetected,
    Equivocation,
    ForgedSignature,
    LocalProtocolError,
    NodeError,
    RemoteProtocolError,
    TableAbandoned,
)
from p2p.record.chain import Offer, Record, Status
from p2p.record.order import ABSENT_KIND
from p2p.record.store import needs_sync
from p2p.table.effects import (
    AskEnd,
    Broadcast,
    CloseWithVotes,
    Effect,
    Persist,
    PersistNotice,
    PersistVote,
    Send,
    SendEach,
    SendOwn,
    Serve,
    ShowPlayer,
    Sync,
    Tell,
    Tick,
    Trace,
    Wake,
)
from p2p.table.endvote import check_vote, sign_vote, tally
from p2p.table.events import (
    Abandoned,
    Aborted,
    Away,
    CheatSeen,
    Convicted,
    Divergent,
    EndedByVote,
    EndedEarly,
    FalseHead,
    Forked,
    HeadClaimed,
    LeftAbandoned,
    LingerTimeout,
    NamedAbsent,
    NoticeRefused,
    RecordFinished,
    Refetching,
    Removed,
    SeatBack,
    SeatDown,
    SeatFinished,
    SeatLeft,
    SeatRecovered,
    SeatRemoved,
    SeatStalled,
    SeatUp,
    StepDone,
    Vanished,
    VoteCast,
    VoteRefused,
)
from p2p.table.forming import FormingRule, Manifest
from p2p.table.game_rule import GameProtocol, SeatList, decide_limits
from p2p.table.game_rule.survive import AbsentBody, PresentBody
from p2p.table.notice import MAX_NOTICES, Notices, sign_notice
from p2p.table.relay import Nudge, relay_to
from p2p.table.results import CheatReport, TableResult
from p2p.table.seat import game_of
from p2p.table.silence import Recovered, SilenceMonitor, Stalled
from p2p.wire import Hash, Step, TableId

HEARTBEAT_S = 0.25
AWAY_AFTER_S = 1.0
"""A heartbeat this much later than due means we were away (stopped, suspended, starved);
that time counts against no seat."""
ISOLATED_ROUNDS = 3
"""Re-fetch rounds waited out while we hold no link at all before a silent seat is named."""
LINGER_S = 10.0
"""How long a finished peer waits for the others to say they finished too."""
ENDED_LINGER_S = 2.0
"""At most this long a table ended early lingers, so that the evidence we relayed arrives."""


# ---------------------------------------------------------------------------
# Messages of the session: "my record is finished", "these are my links"
# ---------------------------------------------------------------------------


@wire.message("finished")
@dataclass(frozen=True, slots=True)
class Finished(wire.Message):
    """Sent when a peer's record is complete; peers linger until all have said it."""

    table_id: TableId
    step: Step
    head: Hash


@wire.message("links")
@dataclass(frozen=True, slots=True)
class Links(wire.Message):
    """The slots a peer holds a link to now, sent to every linked seat when that changes.

    Unsigned, so only a hint: it lets each peer tell a player whose machine is gone
    (no link to anyone) from one who is merely thinking, and say so by name."""

    table_id: TableId
    slots: SeatList


class AwayClock:
    """Time this peer itself was away (stopped, suspended, starved), from its heartbeat.

    The node beats it from the moment its mesh opens, so time away in the lobby is
    known too; a :class:`TableSession` takes what was gathered (:meth:`take`)."""

    def __init__(self) -> None:
        self.last: float | None = None
        self.away = 0.0

    def beat(self, now: float) -> list[Effect]:
        gap = now - (self.last if self.last is not None else now)
        self.last = now
        if gap > HEARTBEAT_S + AWAY_AFTER_S:
            self.away += gap - HEARTBEAT_S
            return [Away(seconds=round(gap, 3))]
        return []

    def take(self) -> float:
        away, self.away = self.away, 0.0
        return away


def seat_order(record: Record | None) -> tuple[int, ...]:
    """Slots in the drawn seat order (empty before it is drawn)."""
    if record is not None and isinstance(record.rule, FormingRule):
        return record.rule.seat_order or ()
    return ()


def who(manifest: Manifest | None, order: tuple[int, ...], slot: int | None) -> dict[str, Any]:
    """How events name the player in ``slot``: ``name``, ``seat`` (its place in the
    seat order, from 0, like the results; ``None`` before the draw) and ``slot``."""
    if slot is None or manifest is None or not 0 <= slot < manifest.n_seats:
        return {"name": "a peer not yet seated", "seat": None, "slot": slot}
    seat = order.index(slot) if slot in order else None
    return {"name": manifest.seats[slot].name, "seat": seat, "slot": slot}


def entry_step(signed: wire.Signed) -> int:
    """The step an envelope's entry claims (0 when it does not decode)."""
    try:
        entry = wire.decode_body(signed.entry, wire.Entry)
    except RemoteProtocolError:
        return 0
    return entry.step  # type: ignore[attr-defined]


# ---------------------------------------------------------------------------
# The session
# ---------------------------------------------------------------------------


class TableSession:
    """The policy of one seat at one running table (see the module docstring)."""

    def __init__(
        self,
        record: Record,
        identity: IdentityKey,
        my_seat: int,
        *,
        linger_s: float = LINGER_S,
        trace: bool = False,
        trace_steps: bool = False,
        clock: AwayClock | None = None,
    ) -> None:
        self.record = record
        self.manifest: Manifest = record.manifest
        self.identity = identity
        self.my_seat = my_seat
        self.linger_s = linger_s
        self.trace = trace
        self.trace_steps = trace_steps
        self.out: list[Effect] = []
        self.cheats: list[CheatReport] = []
        self.stalls: list[Stalled] = []
        self.recoveries: list[Recovered] = []
        self.finished_peers: dict[int, bytes] = {}
        self.divergent: list[int] = []
        self.aborted: int | None = None
        self.absent: int | None = None
        """The slot whose silence abandoned the table (``None``: it was not abandoned)."""
        self.convicted: CheatReport | None = None
        self.ended_by_vote: int | None = None
        """The vanished slot every other seat voted to end the table for."""
        self.my_vote: wire.EndVote | None = None
        """Our own end vote once signed: final, we sign no further entry at this table."""
        self.votes: dict[int, wire.EndVote] = {}
        """The first validly signed end vote of each other seat (p2p/table/endvote.py)."""
        self.notices = Notices(self.manifest)
        """Every seat's signed notices: a player left (a bot plays the seat) or is back
        (p2p/table/notice.py)."""
        self.unlinked_since: dict[int, float] = {}
        """Slots nobody we hear from holds a link to, and since when."""
        self.links: dict[int, frozenset[int]] = {}
        """The slots each seat last said it holds a link to (:class:`Links`)."""
        self.linked: frozenset[int] = frozenset()
        """The slots we hold a link to, as of the last link event or tick."""
        self.nudge = Nudge()
        """When to ask the linked seats for a late step's entries (p2p/table/relay.py)."""
        self.relayed = 0
        """Others' entries we passed on, counted once per seat sent to (tests count them)."""
        self.evidence: set[bytes] = set()
        """Signatures of refused entries already in our file."""
        self.equivocations: set[tuple[int, int]] = set()
        self._suspects: list[tuple[BrokenChain, int | None]] = []
        self._fork_fetches: set[tuple[int, int]] = set()
        self._head_checks: dict[int, int] = {}
        """Seats whose claimed head differs from ours, and the step their record is fetched
        from next to compare it with ours (a head claim is a hint, not evidence)."""
        self._head_checked: set[int] = set()
        self._head_forks: set[int] = set()
        self._false_heads: set[int] = set()
        self._vanished: set[tuple[int, int]] = set()
        self._asked_end: set[tuple[int, int]] = set()
        self.clock = clock or AwayClock()
        self._blame_round: tuple[int, float, int] | None = None  # (step, when, rounds)
        self.monitor = SilenceMonitor.from_manifest(self.manifest)
        self._machine_limits = (self.monitor.stall_after, self.monitor.max_wait)
        self._decide_limits = decide_limits(self.manifest) or self._machine_limits
        self.absent_after = float(dict(self.manifest.options).get("absent_after", 60))
        """The table's absence limit (seconds), from the signed manifest's options."""
        self._lane_signed: set[tuple[int, int]] = set()
        """(past step, lane round) for which we signed ``present`` (closed as usual here)."""
        self._told_left: set[int] = set()
        self._ended_at: float | None = None
        self._announced_finish = False
        self._linger_until: float | None = None

    # -- naming and state ------------------------------------------------

    def drain(self) -> list[Effect]:
        """The effects queued so far, in order (the queue is emptied in place)."""
        out = list(self.out)
        self.out.clear()
        return out

    def seat_order(self) -> tuple[int, ...]:
        return seat_order(self.record)

    def who(self, slot: int | None) -> dict[str, Any]:
        return who(self.manifest, self.seat_order(), slot)

    def _culprit(self, slot: int) -> dict[str, Any]:
        w = self.who(slot)
        return {"name": w["name"], "culprit": w["seat"], "culprit_slot": slot}

    def _slot_of(self, peer: bytes) -> int | None:
        return self.manifest.seat_of(peer)

    def _key(self, slot: int) -> bytes:
        return self.manifest.seats[slot].identity

    def ended(self) -> bool:
        return self.convicted is not None or self.ended_by_vote is not None

    def is_game(self) -> bool:
        return isinstance(self.manifest.protocol, GameProtocol)

    def result(self, record_file: Path | None) -> TableResult:
        game = game_of(self.record)
        return TableResult(
            convicted=self.convicted,
            game=game.result() if game is not None and game.done else None,
            # every signature of the record, as `slaiga replay` and `slaiga verify` count them
            entries=sum(1 for _ in self.record.signed_from(1)),
            proofs=game.proofs_checked if game is not None else 0,
            manifest=self.manifest,
            my_seat=self.my_seat,
            seat_order=self.seat_order(),
            record=self.record,
            record_file=record_file,
            cheats=list(self.cheats),
            stalls=list(self.stalls),
            recoveries=list(self.recoveries),
            peers_finished=set(self.finished_peers),
            divergent=list(self.divergent),
            aborted=self.aborted,
            absent=self.absent,
            ended_by_vote=self.ended_by_vote,
            left=sorted(self.record.removed),
            left_abandoned=bool(game is not None and game.abandoned),
        )

    # -- events: links ---------------------------------------------------

    def peer_up(self, peer: bytes, linked: frozenset[int]) -> list[Effect]:
        rec, table_id = self.record, self.manifest.table_id
        self.out.append(SeatUp(**self.who(self._slot_of(peer))))
        self.out.append(Send(peer, wire.Fetch(table_id, rec.step)))
        if rec.finished:
            self.out.append(Send(peer, Finished(table_id, rec.step, rec.head)))
        for vote in self.all_votes():  # a seat back on line hears every vote we hold
            self.out.append(Send(peer, vote))
        for notice in self.notices.all():  # and every notice (who left, who is back)
            self.out.append(Send(peer, notice))
        return self.tell_links(linked)

    def peer_down(self, peer: bytes, reason: str, linked: frozenset[int]) -> list[Effect]:
        self.out.append(SeatDown(**self.who(self._slot_of(peer)), reason=reason))
        # what that link lost on its way to us, the others have: ask them now
        self.out.append(SendEach(wire.Fetch(self.manifest.table_id, self.record.step)))
        return self.tell_links(linked)

    def tell_links(self, linked: frozenset[int]) -> list[Effect]:
        """Tell every linked seat whom we hold a link to (on every change of our links)."""
        self.linked = linked
        self.out.append(Broadcast(Links(self.manifest.table_id, tuple(sorted(linked)))))
        return self.drain()

    # -- events: messages ------------------------------------------------

    def message(self, peer: bytes, msg: wire.Message) -> list[Effect]:
        """A message from a seated peer's link (a ``Signed`` one already pre-checked)."""
        via = self._slot_of(peer)
        if via is None:
            return self.drain()
        table_id = self.manifest.table_id
        if isinstance(msg, wire.Signed):
            self.out.extend(self.offer(msg, via))
        elif isinstance(msg, wire.Fetched):
            if msg.table_id == table_id:
                self._take_fetched(msg, peer, via)
        elif isinstance(msg, wire.Fetch):
            if msg.table_id == table_id:
                self.out.append(Serve(peer, msg))
        elif isinstance(msg, Links) and msg.table_id == table_id:
            self.links[via] = frozenset(msg.slots)
        elif isinstance(msg, wire.EndVote):
            self.out.extend(self.take_vote(msg, via))
        elif isinstance(msg, wire.SeatNotice):
            self.out.extend(self.take_notice(msg, via))
        elif isinstance(msg, Finished) and msg.table_id == table_id:
            self.finished_peers[via] = msg.head
            self.out.append(SeatFinished(**self.who(via), step=msg.step))
        # lobby leftovers (Welcome, Genesis copies...) are ignored once the record runs
        return self.drain()

    # -- entries ---------------------------------------------------------

    def own(self, body: wire.Body) -> list[Effect]:
        """Sign our own body; it is persisted (fsynced, unless it is re-derived, never
        drawn: p2p/record/store.py) before it is sent."""
        if self.my_vote is not None:
            return self.drain()  # we voted to end the table: we sign no further entry
        rec = self.record
        offer = rec.sign(self.identity, self.my_seat, body)
        accepted = offer.accepted[0]
        self.out.append(Persist(accepted.signed, sync=needs_sync(body.TAG)))
        if self.trace:
            self.out.append(Trace("sent", accepted.step, self.my_seat))
            self.out.append(Trace("accepted", accepted.step, self.my_seat))
        self.out.append(SendOwn(body.TAG, accepted))
        self._after_offer(offer, via=None, skip_first=True)
        self._answer_closed()
        return self.drain()

    def offer(self, signed: wire.Signed, via: int | None, persist: bool = True) -> list[Effect]:
        """A signed entry from the link of slot ``via`` (``None``: from our own file,
        ``persist`` then ``False``)."""
        rec = self.record
        try:
            offer = rec.offer(signed)
        except ForgedSignature as exc:
            # the claimed seat did not sign it; the connection that carried it is to blame
            self._report_cheat(exc, via, blame_via=True)
            return self.drain()
        except CheatDetected as exc:
            self._keep_evidence(signed, exc)
            self._on_cheat(exc, via)
            return self.drain()
        except RemoteProtocolError as exc:
            # junk, or an entry of another table (ForeignEntry): nothing any seat signed is
            # evidence here; only the link that carried it is at fault, and only to us
            if via is not None:
                kind = type(exc).__name__
                self.cheats.append(CheatReport(via, kind, str(exc), via))
                self.out.append(CheatSeen(**self._culprit(via), kind=kind, reason=str(exc)))
            return self.drain()
        if offer.status is Status.ACCEPTED:
            if persist:
                self._after_offer(offer, via)
            else:
                for cheat in offer.cheats:
                    self._on_cheat(cheat, via)
                self._stop_if_fold_failed()
        elif offer.status is Status.MOOT and persist:
            self._moot_absent(signed)
        if persist:
            self._lane_answer()
        self._answer_closed()
        self._tell_left()
        return self.drain()

    # -- a seat that left for good (issue 21; p2p/RECORD_FORMAT.md §12) ---------

    def _survives(self) -> bool:
        game = game_of(self.record)
        return game is not None and game.survive and game.escrow_ready

    def _sign_lane(self, body: wire.Body) -> None:
        # if our record refuses it (our judgment was wrong), nothing was signed: a lane
        # entry is never worth stopping the table for
        with contextlib.suppress(LocalProtocolError):
            self.out.extend(self.own(body))

    def _lane_answer(self) -> None:
        """Sign ``present`` in the current lane round if some seat named gone seats whose
        entries we hold here (so that round can never complete, and the seats that signed
        ``absent`` in it stop waiting; the next round names only the seats still silent)."""
        rec = self.record
        if not self._survives() or rec.finished:
            return
        if self.my_seat in rec.removed or self.my_vote is not None:
            return
        r = rec.lane_round()
        if rec.signed_lane(self.my_seat, r):
            return
        held = rec.pending_seats() - {self.my_seat}  # we never name ourselves
        for _, named, kind in rec.lane_named(r):
            if kind == ABSENT_KIND and named & held:
                self._sign_lane(PresentBody(tuple(sorted(named & held)), r))
                return

    def _answer_closed(self) -> None:
        """``absent`` entries of steps we closed as usual (the named seat's entry reached
        us after them): answer each with ``present`` for that step and round, so the seats
        that signed them, who wait in their lock, close those steps as we did."""
        rec = self.record
        while rec.unanswered:
            step, absent = rec.unanswered.popitem()
            if self.my_seat in rec.removed or not self._survives():
                continue
            for signer, named, round_ in absent:
                if signer == self.my_seat or (step, round_) in self._lane_signed:
                    continue
                others = named - {self.my_seat}  # we never name ourselves
                if not others:
                    continue
                body = PresentBody(tuple(sorted(others)), round_)
                past = rec.sign_past_lane(self.identity, self.my_seat, step, body)
                if past is not None:
                    self._lane_signed.add((step, round_))
                    self.out.append(Persist(past, sync=True))
                    self.out.append(Broadcast(past, frozenset()))

    def _moot_absent(self, signed: wire.Signed) -> None:
        """An ``absent`` for a step that closed as usual here: say ``present`` for it,
        so the seat that signed it (and waits) closes that step as we did."""
        rec = self.record
        try:
            entry = wire.decode_body(signed.entry, wire.Entry)
        except RemoteProtocolError:
            return
        step = entry.step  # type: ignore[attr-defined]
        if entry.kind != ABSENT_KIND or step in rec.closed_by_absence:  # type: ignore[attr-defined]
            return
        round_ = entry.body.round  # type: ignore[attr-defined]
        if (step, round_) in self._lane_signed or self.my_seat in rec.removed:
            return
        if not self._survives():
            return
        seats = entry.body.seats  # type: ignore[attr-defined]
        named = tuple(s for s in sorted(seats) if s != self.my_seat)  # never ourselves
        if not named:
            return
        past = rec.sign_past_lane(self.identity, self.my_seat, step, PresentBody(named, round_))
        if past is not None:
            self._lane_signed.add((step, round_))
            self.out.append(Persist(past, sync=True))
            self.out.append(Broadcast(past, frozenset()))

    def _absence(self, now: float) -> float | None:
        """Sign ``absent`` once the seats owing the step have been silent past the
        table's absence limit; returns when to look again."""
        rec, monitor = self.record, self.monitor
        if not self._survives() or rec.finished:
            return None
        if self.my_seat in rec.removed or self.my_vote is not None:
            return None
        r = rec.lane_round()
        if rec.signed_lane(self.my_seat, r):
            return None
        silent, wake = [], None
        game = game_of(rec)
        deciding = game is not None and game.waits_for_decision()
        for slot in sorted(rec.waiting_on()):
            quiet = monitor.silent_for(slot, now) or 0.0
            if deciding:
                # a person may think longer than the limit: only a seat no one holds a link
                # to (its machine is gone) is named while it owes a decision
                since = self.unlinked_since.get(slot)
                quiet = min(quiet, now - since) if since is not None else 0.0
            if quiet >= self.absent_after:
                silent.append((slot, quiet))
            else:
                at = now + self.absent_after - quiet
                wake = at if wake is None else min(wake, at)
        if not silent:
            return wake
        # the seats owing this step that are silent past the limit, and any other seat no
        # one has held a link to for that long (two machines gone at once: the table then
        # ends, naming both).  Every remaining seat sees the same owing seats, so they name
        # the same set unless one holds an entry the others lack, or sees the links
        # otherwise: it then signs ``present`` or another set, that round is dead, and the
        # next names the seats still silent
        named = {slot for slot, _ in silent}
        for slot, since in self.unlinked_since.items():
            if slot == self.my_seat or slot in rec.removed:
                continue
            if now - since < self.absent_after:
                # a machine that went at the same time is named with it, or not at all:
                # wait until it is back or as long gone (one round, one set)
                return since + self.absent_after
            named.add(slot)
        slots = tuple(sorted(named))
        step = rec.step
        self._sign_lane(AbsentBody(slots, r))
        self.out.append(
            NamedAbsent(
                names=", ".join(self.who(s)["name"] for s in slots),
                slots=slots,
                step=step,
                silent_for=round(max(q for _, q in silent), 1),
            )
        )
        return None

    def _tell_left(self) -> None:
        rec = self.record
        new = [s for s in sorted(rec.removed) if s not in self._told_left]
        if not new:
            return
        self._told_left.update(new)
        game = game_of(rec)
        step = rec.removed[new[0]]
        if self.my_seat in new:
            self.out.append(Removed(step=step))
            self.out.append(Tell(Removed(step=step).describe()))
        if game is not None and game.abandoned:
            slots = tuple(sorted(rec.removed))
            ev = LeftAbandoned(
                names=" and ".join(self.who(s)["name"] for s in slots), slots=slots, step=step
            )
            self.out.append(ev)
            self.out.append(Tell(ev.describe()))
            return
        for s in new:
            if s == self.my_seat:
                continue
            ev = SeatRemoved(**self.who(s), step=step)
            self.out.append(ev)
            self.out.append(Tell(ev.describe()))

    def _after_offer(self, offer: Offer, via: int | None, skip_first: bool = False) -> None:
        for i, acc in enumerate(offer.accepted):
            if not (skip_first and i == 0):
                self.out.append(Persist(acc.signed))
                if self.trace:
                    self.out.append(Trace("accepted", acc.step, acc.seat))
        # Each append is flushed; the fsync that makes it durable is the one done
        # before our own next entry leaves (see ``own``), i.e. before we act on it.
        if self.trace_steps:
            for view in offer.completed:
                kind = view.entries[0].kind if view.entries else ""
                self.out.append(StepDone(step=view.number, kind=kind))
        # a held entry refused at its step is evidence like any refused entry: kept first
        for exc, signed in offer.refused:
            self._keep_evidence(signed, exc)
        for cheat in offer.cheats:
            self._on_cheat(cheat, via)
        self._stop_if_fold_failed()
        self._relay(offer, via)
        self.out.append(ShowPlayer())

    def _relay(self, offer: Offer, via: int | None) -> None:
        """Pass entries we accepted on only to the seats that told us they hold no link to
        their author (p2p/table/relay.py): a healthy table sends each entry once per link,
        and the two ends of a broken link get each other's entries through the others
        once it is known down (before that, the late step is asked for: :meth:`tick`).
        A copy that arrives twice is a duplicate, checked by its bytes alone
        (p2p/record/chain.py)."""
        seats = frozenset(m.identity for m in self.manifest.seats)
        for acc in offer.accepted:
            if acc.seat == self.my_seat:
                continue
            for slot in relay_to(acc.seat, via, self.my_seat, self.linked, self.links):
                self.relayed += 1
                self.out.append(Send(self._key(slot), acc.signed))
            # our spectators follow the table through us alone (p2p/net/watch_server.py):
            # every entry goes on to them, and to no seat
            self.out.append(Broadcast(acc.signed, seats))

    def _stop_if_fold_failed(self) -> None:
        """Our own code failed folding a step (never a peer's fault): every entry is on
        disk, and the table stops here with one clear line (``FoldFailed``)."""
        rec = self.record
        if rec.failure is not None:
            self.out.append(Sync())
            raise rec.failure

    # -- cheats ----------------------------------------------------------

    def _on_cheat(self, exc: CheatDetected, via: int | None) -> None:
        """Route a detected violation: forks are investigated, equivocation is spread.

        *Split view.*  A seat that signs two versions of one step and shows each
        to different peers forks the record: nobody holds both versions, and
        the symptom is an honest seat's next entry chaining to a hash we do not
        know (:class:`BrokenChain`).  Such a break is not blamed at once: we ask
        the peer that delivered it and the entry's author for their whole
        record (``Fetch`` from step 1, once per peer and step of ours).  Its
        copy of the forked step conflicts with ours, which :class:`Record`
        reports as :class:`Equivocation` with both signed envelopes, naming the
        seat that signed both.  Chain breaks still unexplained when the table
        stalls or ends are reported as what they look like.

        *Equivocation* is reported once per seat and step, and both signed
        envelopes are relayed to every peer, so each honest peer holds the
        proof even if it only ever saw one version.
        """
        if isinstance(exc, BrokenChain):
            if self.equivocations:
                return  # the proven fork explains it
            self._suspects.append((exc, via))
            self.out.append(Forked(**self.who(exc.seat), via=via))
            for slot in {via, exc.seat}:
                if slot is not None and slot != self.my_seat:
                    self._fetch_whole_record(slot)
            return
        if isinstance(exc, Equivocation):
            first, first_sig, second, second_sig = exc.evidence[:4]
            step = wire.decode_body(first, wire.Entry).step  # type: ignore[attr-defined]
            if (exc.seat, step) in self.equivocations:
                return
            self.equivocations.add((exc.seat, step))
            if not self.ended():
                # once a cheat ended the game, a convicted seat's new versions would only
                # flood every link (as in _keep_evidence)
                self.out.append(Broadcast(wire.Signed(first, first_sig)))
                self.out.append(Broadcast(wire.Signed(second, second_sig)))
            # the fork this equivocation causes explains the chain breaks seen so far
            self._suspects.clear()
        self._report_cheat(exc, via)
        self._convict(exc, via)

    def _keep_evidence(self, signed: wire.Signed, exc: CheatDetected) -> None:
        """Write a refused, validly signed entry to our record file: the signed evidence
        that ``slaiga verify`` re-checks (its own signer is the one it convicts)."""
        if isinstance(exc, ForgedSignature | BrokenChain):
            return
        if not self.is_game() or self.ended():
            # once a cheat has ended the game its evidence is kept; more from a convicted
            # seat would only let it grow every peer's file and flood every link
            return
        envelopes = [signed]
        if isinstance(exc, Equivocation):
            # both versions: the other one may be held for a future step (so not in the
            # file), and one envelope alone proves nothing
            first, first_sig = exc.evidence[0], exc.evidence[1]
            envelopes.insert(0, wire.Signed(first, first_sig))
        for env in envelopes:
            if env.signature in self.evidence or self.record.holds(env):
                continue  # already in the file (as evidence, or accepted)
            self.evidence.add(env.signature)
            self.out.append(Persist(env, sync=True))
            # every seat gets the evidence itself: one the deviator never showed it
            # (a held entry refused at its step) must not leave it waiting on us
            self.out.append(Broadcast(env))

    def _convict(self, exc: CheatDetected, via: int | None) -> None:
        """On a game table a proven cheat ends the game: name the seat, spread the evidence."""
        if not self.is_game() or self.ended():
            return
        self.convicted = CheatReport(exc.seat, type(exc).__name__, exc.reason, via)
        kind = type(exc).__name__
        self.out.append(Convicted(**self._culprit(exc.seat), kind=kind, reason=exc.reason))
        # relay what convicts it, so a seat it fed a different story convicts it too
        for signed in self.record.signed_from(max(1, self.record.step - 1)):
            self.out.append(Broadcast(signed))

    def _fetch_whole_record(self, slot: int) -> None:
        key = (slot, self.record.step)
        if key in self._fork_fetches:
            return
        self._fork_fetches.add(key)
        self.out.append(Send(self._key(slot), wire.Fetch(self.manifest.table_id, 1)))

    def _blame_suspects(self) -> None:
        """Chain breaks that no equivocation explained are reported as broken chains."""
        suspects, self._suspects = self._suspects, []
        for exc, via in suspects:
            if exc.evidence and self.record.took(exc.evidence[0]):
                continue  # the fork was ours: the record took that very entry since (a refold)
            self._report_cheat(exc, via)

    def _report_cheat(self, exc: CheatDetected, via: int | None, blame_via: bool = False) -> None:
        culprit = via if blame_via and via is not None else exc.seat
        report = CheatReport(culprit, type(exc).__name__, exc.reason, via)
        self.cheats.append(report)
        self.out.append(CheatSeen(**self._culprit(culprit), kind=report.kind, reason=exc.reason))

    # -- fetched records and head claims ---------------------------------

    def _take_fetched(self, msg: wire.Fetched, peer: bytes, via: int) -> None:
        """Offer a fetched piece; if the peer holds more and this piece moved us on, ask it
        for the next piece (replies come in bounded pieces, p2p/net/fetch.py).  While we
        compare a seat's record with ours (:meth:`_check_head`), its pieces are walked to
        the end whether or not they move us on."""
        rec = self.record
        before = rec.step, len(rec.signed_from(rec.step))
        forks = len(self.equivocations), len(self._suspects)
        for signed in msg.entries:
            self.out.extend(self.offer(signed, via))
        if (len(self.equivocations), len(self._suspects)) != forks and via in self._head_checks:
            self._head_forks.add(via)  # its signed entries fork from ours
        cursor = self._head_checks.get(via)
        if cursor is not None:
            last = max((entry_step(s) for s in msg.entries), default=cursor)
            if msg.more:
                self._head_checks[via] = max(last, cursor + 1)
                self.out.append(Send(peer, wire.Fetch(msg.table_id, self._head_checks[via])))
            else:
                del self._head_checks[via]
            return
        if msg.more and (rec.step, len(rec.signed_from(rec.step))) != before:
            self.out.append(Send(peer, wire.Fetch(msg.table_id, rec.step)))

    def _check_head(self, slot: int, head: bytes) -> None:
        """A finished seat claims another head than ours.  The claim is not signed, so it
        proves nothing: fetch that seat's whole record and compare.  Only signed entries
        that fork from ours (equivocation, a chain we do not know) make it divergent; a
        record that matches ours leaves the claim a false one, and the game stands."""
        if slot in self._head_checked:
            return
        self._head_checked.add(slot)
        self._head_checks[slot] = 1
        self.out.append(HeadClaimed(**self.who(slot), head=head.hex()))
        self.out.append(Send(self._key(slot), wire.Fetch(self.manifest.table_id, 1)))

    def settle_heads(self) -> bool:
        """Judge every head claim that differs from ours; ``True`` once none is still being
        compared (a seat whose record forks from ours is then in :attr:`divergent`)."""
        rec = self.record
        for slot, head in self.finished_peers.items():
            if head != rec.head:
                self._check_head(slot, head)
        for slot in sorted(self._head_checked - set(self._head_checks)):
            if slot in self.divergent or slot in self._false_heads:
                continue
            if slot in self._head_forks or self.equivocations:
                self.divergent.append(slot)
                self.out.append(Divergent(**self.who(slot)))
            else:
                self._false_heads.add(slot)
                self.out.append(FalseHead(**self.who(slot)))
        return not self._head_checks

    # -- time: away, silence, no false blame ------------------------------

    def beat(self, now: float) -> list[Effect]:
        """The heartbeat's tick: notice the time this peer itself was away."""
        self.out.extend(self.clock.beat(now))
        return self.drain()

    def _silence(self, now: float, connected: int) -> list[Stalled | Recovered]:
        """``monitor.update`` guarded against false blame.

        * Time we were away counts against no seat (the silence clocks move on
          by it), and on coming back we re-fetch from everyone.
        * Nobody is named abandoned before a re-fetch from every connected
          seat has had ``stall_after`` to be answered; and while we hold no
          link at all it may be us who are cut off, so that is waited out
          for a few such rounds before anyone is named.
        """
        rec, monitor = self.record, self.monitor
        self.out.extend(self.beat(now))
        away = self.clock.take()
        if away:
            monitor.pause(away)
            self.out.append(SendEach(wire.Fetch(self.manifest.table_id, rec.step)))
        try:
            return monitor.update(now, rec.step, rec.waiting_on())
        except TableAbandoned as exc:
            if not self._ready_to_blame(now, connected):
                return []
            self.out.append(Abandoned(**self.who(exc.seat), waited=exc.waited))
            self.absent = exc.seat
            raise TableAbandoned(exc.seat, exc.waited, self.who(exc.seat)["name"]) from None

    def _ready_to_blame(self, now: float, connected: int) -> bool:
        rec, monitor = self.record, self.monitor
        last = self._blame_round if self._blame_round and self._blame_round[0] == rec.step else None
        answered = last is not None and now - last[1] >= monitor.stall_after
        if answered and (connected or last[2] >= ISOLATED_ROUNDS):
            return True
        rounds = last[2] + 1 if last is not None else 1
        self._blame_round = (rec.step, now, rounds)
        self.out.append(SendEach(wire.Fetch(self.manifest.table_id, rec.step)))
        monitor.pause(monitor.stall_after)
        self.out.append(Refetching(step=rec.step, connected=connected))
        return False

    def tick(self, now: float, linked: frozenset[int], connected: int) -> Tick:
        """The record loop's look at the time ``now`` (after our own entries went out):
        linger after an early end, silence and stalls, a vanished player, the finish and
        its linger.  ``linked``: the slots we hold a link to; ``connected``: how many links.
        Raises :class:`TableAbandoned` when the table ends for an absent seat."""
        rec = self.record
        linger = min(self.linger_s, ENDED_LINGER_S)
        if self.ended():
            # linger a moment so the evidence we relayed reaches every seat
            if self._ended_at is None:
                self._ended_at = now
                if self.convicted is not None:
                    self.out.append(EndedEarly(**self._culprit(self.convicted.culprit)))
                elif self.ended_by_vote is None:
                    self.out.append(EndedEarly(name=None, culprit=None, culprit_slot=None))
            if now >= self._ended_at + linger:
                if self.ended_by_vote is not None:
                    gone = self.ended_by_vote
                    waited = now - self.unlinked_since.get(gone, now)
                    name = self.who(gone)["name"]
                    raise TableAbandoned(gone, waited, name, by_vote=True)
                return Tick(done=True)
        game = game_of(rec)
        waits = game is not None and game.waits_for_decision()
        monitor = self.monitor
        monitor.stall_after, monitor.max_wait = (
            self._decide_limits if waits else self._machine_limits
        )
        events = self._silence(now, connected)
        vanish_check = self._tell_vanished(now, linked)
        absence_check = self._absence(now)
        if absence_check is not None:
            vanish_check = min(vanish_check or absence_check, absence_check)
        for ev in events:
            if isinstance(ev, Stalled):
                self.stalls.append(ev)
                self.out.append(
                    SeatStalled(**self.who(ev.seat), step=ev.step, silent_for=ev.silent_for)
                )
                if self.equivocations:
                    # a proven equivocator and a record that cannot go on: end the table
                    culprit = min(seat for seat, _ in self.equivocations)
                    self.aborted = culprit
                    self.out.append(Aborted(**self.who(culprit), reason="equivocation"))
                    return Tick(done=True)
                self._blame_suspects()
                self.out.append(SendEach(wire.Fetch(self.manifest.table_id, rec.step)))
            else:
                self.recoveries.append(ev)
                self.out.append(SeatRecovered(**self.who(ev.seat)))
        if rec.finished:
            # a seat that left for good is waited for too: its machine may come back and
            # follow to the end (it fetches what it missed from us)
            others = self.manifest.n_seats - 1
            if not self._announced_finish:
                self._announced_finish = True
                self._linger_until = now + self.linger_s
                self.out.append(Broadcast(Finished(self.manifest.table_id, rec.step, rec.head)))
                self.out.append(RecordFinished(steps=rec.step - 1, head=rec.head.hex()))
            # a head unlike ours is compared entry by entry before anything is said
            settled = self.settle_heads()
            if len(self.finished_peers) >= others and settled:
                self._blame_suspects()
                return Tick(done=True)
            assert self._linger_until is not None
            if now >= self._linger_until:
                self.out.append(LingerTimeout(missing=others - len(self.finished_peers)))
                self._blame_suspects()
                return Tick(done=True)
        self.linked = linked
        waiting = not rec.finished and bool(rec.waiting_on() - {self.my_seat})
        if self.nudge.due(now, rec.step, waiting):
            # an entry is late (a link may be down unnoticed): ask the linked seats for it
            self.out.append(SendEach(wire.Fetch(self.manifest.table_id, rec.step)))
        deadline = monitor.next_deadline() if not rec.finished else self._linger_until
        if vanish_check is not None and not rec.finished:
            deadline = min(deadline or vanish_check, vanish_check)
        nudge_at = self.nudge.deadline()
        if nudge_at is not None and not rec.finished:
            deadline = min(deadline or nudge_at, nudge_at)
        if self._ended_at is not None:
            deadline = self._ended_at + linger
        return Tick(deadline=deadline)

    # -- a vanished player -------------------------------------------------

    def _track_links(self, now: float, linked: frozenset[int]) -> None:
        """Which seats no one we hear from holds a link to (we included), and since when.

        While we hold no link at all it may be us who are cut off, so nobody is
        judged then (the clocks start again when a link is back)."""
        if not linked:
            self.unlinked_since.clear()
            return
        heard = set(linked)
        for slot in linked:
            heard |= self.links.get(slot, frozenset())
        for slot in range(self.manifest.n_seats):
            if slot == self.my_seat or slot in heard:
                self.unlinked_since.pop(slot, None)
            else:
                self.unlinked_since.setdefault(slot, now)

    def _tell_vanished(self, now: float, linked: frozenset[int]) -> float | None:
        """Say by name which player owing a decision has had no link to anyone for the
        machine steps' limit (its machine is most likely gone, while the table would
        wait the whole decision limit); returns when to look again (``None``: no need).

        Ending the table early is the remaining players' call (a signed vote,
        docs/design.md); until then the table waits, as the manifest says."""
        rec, monitor = self.record, self.monitor
        self._track_links(now, linked)
        limit = self.manifest.max_wait_ms / 1000
        if monitor.max_wait <= limit:
            return None  # a machine step: the table gives up at this limit anyway
        wake: float | None = None
        for slot in sorted(rec.waiting_on()):
            since = self.unlinked_since.get(slot)
            if since is None or (slot, rec.step) in self._vanished:
                continue
            if now - since < limit:
                wake = min(wake or math.inf, since + limit)
                continue
            self._vanished.add((slot, rec.step))
            silent = monitor.silent_for(slot, now) or 0.0
            event = Vanished(
                **self.who(slot),
                step=rec.step,
                silent_for=round(now - since, 1),
                gives_up_in=round(max(0.0, monitor.max_wait - silent), 1),
            )
            self.out.append(event)
            self.out.append(Tell(event.describe()))  # the person at this seat hears it
            self.out.extend(self.ask_end(slot, now - since))
        return wake

    # -- ending the table by a signed vote (p2p/table/endvote.py) -----------

    def all_votes(self) -> list[wire.EndVote]:
        votes = list(self.votes.values())
        if self.my_vote is not None:
            votes.append(self.my_vote)
        return votes

    def ask_end(self, slot: int, silent_for: float) -> list[Effect]:
        """The player owing the step vanished: ask ours (once per slot and step) whether
        to end the table."""
        key = (slot, self.record.step)
        if key in self._asked_end or self.my_vote is not None or self.ended():
            return self.drain()
        self._asked_end.add(key)
        self.out.append(AskEnd(slot, self.record.step, silent_for))
        return self.drain()

    def vote_problem(self, slot: int, now: float) -> str | None:
        """Why we may not vote now to end the table for ``slot`` (``None``: we may)."""
        rec, manifest = self.record, self.manifest
        if self.ended() or rec.finished:
            return "the table has ended"
        if self.my_vote is not None:
            return "you already voted"
        if not 0 <= slot < manifest.n_seats or slot == self.my_seat:
            return "that is not another player of this table"
        name = self.who(slot)["name"]
        if slot not in rec.waiting_on():
            return f"{name} does not owe step {rec.step}"
        since = self.unlinked_since.get(slot)
        limit = manifest.max_wait_ms / 1000
        if since is None or now - since < limit:
            return f"{name} has not been without a link to anyone for {limit:g}s"
        return None

    def vote(self, slot: int, now: float) -> str | None:
        """Our player votes to end the table for ``slot``: signed, persisted (fsync) and
        sent (effects in :attr:`out`); returns why not (``None``: voted).  Final: we sign
        no further entry at this table."""
        problem = self.vote_problem(slot, now)
        if problem is not None:
            return problem
        rec, manifest = self.record, self.manifest
        vote = sign_vote(self.identity, manifest.table_id, self.my_seat, rec.step, rec.head, slot)
        self.out.append(PersistVote(vote))  # durable before it leaves: a restart still voted
        self.my_vote = vote
        self.out.append(Broadcast(vote))
        self._emit_vote(vote)
        self._tally()
        return None

    def take_vote(self, vote: wire.EndVote, via: int) -> list[Effect]:
        """A vote from the link of slot ``via``: checked, kept (one per seat), relayed
        and counted.  A bad one is refused with the reason; it convicts no one."""
        rec, manifest = self.record, self.manifest
        if self.ended_by_vote is not None or vote == self.my_vote:
            return self.drain()
        try:
            check_vote(manifest, vote)
            if vote.seat == self.my_seat:
                raise BadVote("a vote in our own name that we never sent")
            if vote.step <= rec.step:  # not ahead of us: it must be for exactly our record
                check_vote(manifest, vote, step=rec.step, head=rec.head, owing=rec.waiting_on())
            known = self.votes.get(vote.seat)
            if known is not None and known != vote:
                raise BadVote(f"{self.who(vote.seat)['name']} already voted; a second vote")
        except BadVote as exc:
            self.out.append(VoteRefused(**self.who(via), reason=str(exc)))
            return self.drain()
        if vote.seat in self.votes:
            return self.drain()  # a copy
        self.votes[vote.seat] = vote
        # relayed like entries: not back, not to its voter
        self.out.append(Broadcast(vote, frozenset({self._key(via), self._key(vote.seat)})))
        self._emit_vote(vote)
        self._tally()
        return self.drain()

    def _emit_vote(self, vote: wire.EndVote) -> None:
        same = [
            v
            for v in self.all_votes()
            if (v.step, v.head, v.absent) == (vote.step, vote.head, vote.absent)
        ]
        self.out.append(
            VoteCast(
                voter=self.who(vote.seat)["name"],
                voter_slot=vote.seat,
                **self.who(vote.absent),
                step=vote.step,
                votes=len(same),
                needed=self.manifest.n_seats - 1,
            )
        )

    def _tally(self) -> None:
        """With our vote and every other remaining seat's for our very step and head, write
        them as the record file's closing frame and end the table (nobody convicted)."""
        mine, rec, manifest = self.my_vote, self.record, self.manifest
        if mine is None or self.ended_by_vote is not None:
            return
        key = (mine.step, mine.head, mine.absent)
        votes = {v.seat: v for v in self.all_votes() if (v.step, v.head, v.absent) == key}
        count = tally(manifest, votes.values(), rec.step, rec.head, rec.waiting_on())
        if not count.ended:
            return
        self.out.append(CloseWithVotes(wire.EndVotes(tuple(votes[s] for s in count.voters))))
        self.ended_by_vote = self.absent = mine.absent
        self.out.append(EndedByVote(**self.who(mine.absent), step=mine.step))
        self.out.append(Wake())

    def reload_votes(self, votes: tuple[wire.EndVote, ...], closed: bool) -> None:
        """Votes in our file on resume: our own stays final (we sign nothing more)."""
        manifest = self.manifest
        if closed:
            raise NodeError(
                f"table {manifest.table_id.hex()} was ended by vote; there is nothing to"
                " resume (slaiga verify shows its record)"
            )
        for vote in votes:
            try:
                check_vote(manifest, vote)
            except BadVote:
                continue
            if vote.seat == self.my_seat:
                self.my_vote = vote
            else:
                self.votes.setdefault(vote.seat, vote)

    # -- a player leaves or comes back: signed notices (p2p/table/notice.py) ----

    def bot_slots(self) -> frozenset[int]:
        """The slots a bot plays now, as their players' latest notices say."""
        return self.notices.bots()

    def _notify(self, back: bool) -> list[Effect]:
        rec, manifest = self.record, self.manifest
        if self.ended() or self.ended_by_vote is not None:
            return self.drain()
        latest = self.notices.latest(self.my_seat)
        if latest is not None and latest.back == back and (not back or latest.step == rec.step):
            return self.drain()  # already said so (back again after a later break is news)
        number = self.notices.next_number(self.my_seat)
        if number >= MAX_NOTICES:
            return self.drain()  # we said it often enough; the table goes on
        notice = sign_notice(self.identity, manifest.table_id, self.my_seat, number, rec.step, back)
        self.notices.add(notice)
        self.out.append(PersistNotice(notice))  # durable before it leaves
        self.out.append(Broadcast(notice))
        return self.drain()

    def leave(self) -> list[Effect]:
        """Our player left, and a bot plays our seat from now on: sign that notice,
        persist it (fsync) and send it to every linked seat (each relays it on)."""
        return self._notify(back=False)

    def back(self) -> list[Effect]:
        """Our player is back at the seat (a person resumed it after a break, or after
        leaving): sign that notice, unless our latest one says so at this very step."""
        return self._notify(back=True)

    def take_notice(self, notice: wire.SeatNotice, via: int) -> list[Effect]:
        """A notice from the link of slot ``via``: checked, kept (one per seat and number),
        persisted, relayed and told.  A bad one is refused with the reason, blaming only
        the link (a notice proves nothing about cheating); a copy is ignored."""
        if self.ended_by_vote is not None:
            return self.drain()  # the record file is closed
        try:
            if notice.seat == self.my_seat and notice not in self.notices.all():
                raise BadNotice("a notice in our own name that is not in our record file")
            new = self.notices.add(notice)
        except BadNotice as exc:
            self.out.append(NoticeRefused(**self.who(via), reason=str(exc)))
            return self.drain()
        if not new:
            return self.drain()
        self.out.append(PersistNotice(notice))
        # relayed like votes: not back, not to its signer
        self.out.append(Broadcast(notice, frozenset({self._key(via), self._key(notice.seat)})))
        if self.notices.is_latest(notice):  # an older one arriving late is kept, not told
            kind = SeatBack if notice.back else SeatLeft
            self.out.append(kind(**self.who(notice.seat), step=notice.step))
        return self.drain()

    def reload_notices(self, notices: tuple[wire.SeatNotice, ...]) -> None:
        """Notices in our file on resume (each checked again; a bad one is dropped)."""
        for notice in notices:
            try:
                self.notices.add(notice)
            except BadNotice:
                continue


__all__ = [
    "AwayClock",
    "CheatReport",
    "Effect",
    "Finished",
    "Links",
    "TableResult",
    "TableSession",
    "Tick",
]
