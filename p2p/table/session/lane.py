"""The absence lane: a seat that left for good (issue 21; p2p/RECORD_FORMAT.md §12).

On a table that plays on without a lost seat (the game's ``survive`` option, once its
escrow is ready), the seats owing a step that stay silent past the table's absence
limit are named in a signed ``absent`` lane entry; while a person decides, only a seat
no one holds a link to is named.  A seat that holds the named seats' entries answers
``present`` instead, so that round can never complete and the next round names only
the seats still silent; and an ``absent`` for a step we closed as usual is answered
with ``present`` for that past step, so its signer closes the step as we did.  Once a
seat is removed, every player is told who left (or that the game was abandoned).
"""

from __future__ import annotations

from collections.abc import Callable

from p2p import wire
from p2p.errors import LocalProtocolError, RemoteProtocolError
from p2p.record.chain import MAX_LANE_ROUNDS
from p2p.record.order import ABSENT_KIND
from p2p.table.effects import Broadcast, Effect, Persist
from p2p.table.events import LeftAbandoned, NamedAbsent, Removed, SeatRemoved
from p2p.table.game_rule.survive import AbsentBody, PresentBody
from p2p.table.seat import game_of
from p2p.table.session.context import Context
from p2p.table.session.links import Connectivity
from p2p.table.session.votes import EndVotes
from p2p.table.silence import SilenceMonitor


class AbsenceLane:
    """Our ``absent`` and ``present`` lane entries, and who was told a seat left."""

    def __init__(
        self,
        ctx: Context,
        links: Connectivity,
        monitor: SilenceMonitor,
        votes: EndVotes,
        own: Callable[[wire.Body], list[Effect]],
    ) -> None:
        self.ctx = ctx
        self.links = links
        self.monitor = monitor
        self.votes = votes
        self.own = own
        """The session's signing of our own next body."""
        self.absent_after = float(dict(ctx.manifest.options).get("absent_after", 60))
        """The table's absence limit (seconds), from the signed manifest's options."""
        self._signed_past: set[tuple[int, int]] = set()
        """(past step, lane round) for which we signed ``present`` (closed as usual here)."""
        self._told_left: set[int] = set()

    def _survives(self) -> bool:
        game = game_of(self.ctx.record)
        return game is not None and game.survive and game.escrow_ready

    def _may_sign(self) -> bool:
        """Whether we take part in the current lane round at all."""
        ctx, rec = self.ctx, self.ctx.record
        if not self._survives() or rec.finished:
            return False
        if ctx.my_seat in rec.removed or self.votes.mine is not None:
            return False
        r = rec.lane_round()
        # past the last lane round a step may have (§12), the decision limit decides
        return r < MAX_LANE_ROUNDS and not rec.signed_lane(ctx.my_seat, r)

    def _sign(self, body: wire.Body) -> bool:
        """Sign ``body``; ``False`` if our record refuses it (our judgment was wrong, or
        the entry would leave fewer than two seats to sign it): nothing was signed, and a
        lane entry is never worth stopping the table for."""
        try:
            self.ctx.out.extend(self.own(body))
        except LocalProtocolError:
            return False
        return True

    def _sign_past(self, step: int, named: tuple[int, ...], round_: int) -> None:
        """Sign ``present`` naming ``named`` for a past step's lane round, once."""
        ctx = self.ctx
        past = ctx.record.sign_past_lane(
            ctx.identity, ctx.my_seat, step, PresentBody(named, round_)
        )
        if past is not None:
            self._signed_past.add((step, round_))
            ctx.out.append(Persist(past, sync=True))
            ctx.out.append(Broadcast(past, frozenset()))

    def answer(self) -> None:
        """Sign ``present`` in the current lane round if some seat named gone seats whose
        entries we hold here (so that round can never complete, and the seats that signed
        ``absent`` in it stop waiting; the next round names only the seats still silent)."""
        ctx, rec = self.ctx, self.ctx.record
        if not self._may_sign():
            return
        r = rec.lane_round()
        held = rec.pending_seats() - {ctx.my_seat}  # we never name ourselves
        for _, named, kind in rec.lane_named(r):
            if kind == ABSENT_KIND and named & held:
                self._sign(PresentBody(tuple(sorted(named & held)), r))
                return

    def answer_closed(self) -> None:
        """``absent`` entries of steps we closed as usual (the named seat's entry reached
        us after them): answer each with ``present`` for that step and round, so the seats
        that signed them, who wait in their lock, close those steps as we did."""
        ctx, rec = self.ctx, self.ctx.record
        while rec.unanswered:
            step, absent = rec.unanswered.popitem()
            if ctx.my_seat in rec.removed or not self._survives():
                continue
            for signer, named, round_ in absent:
                if signer == ctx.my_seat or (step, round_) in self._signed_past:
                    continue
                others = named - {ctx.my_seat}  # we never name ourselves
                if others:
                    self._sign_past(step, tuple(sorted(others)), round_)

    def moot(self, signed: wire.Signed) -> None:
        """An ``absent`` for a step that closed as usual here: say ``present`` for it,
        so the seat that signed it (and waits) closes that step as we did."""
        ctx, rec = self.ctx, self.ctx.record
        try:
            entry = wire.decode_body(signed.entry, wire.Entry)
        except RemoteProtocolError:
            return
        step = entry.step  # type: ignore[attr-defined]
        if entry.kind != ABSENT_KIND or step in rec.closed_by_absence:  # type: ignore[attr-defined]
            return
        round_ = entry.body.round  # type: ignore[attr-defined]
        if (step, round_) in self._signed_past or ctx.my_seat in rec.removed:
            return
        if not self._survives():
            return
        seats = entry.body.seats  # type: ignore[attr-defined]
        named = tuple(s for s in sorted(seats) if s != ctx.my_seat)  # never ourselves
        if named:
            self._sign_past(step, named, round_)

    def absence(self, now: float) -> float | None:
        """Sign ``absent`` once the seats owing the step have been silent past the
        table's absence limit; returns when to look again."""
        ctx, rec, monitor = self.ctx, self.ctx.record, self.monitor
        if not self._may_sign():
            return None
        r = rec.lane_round()
        unlinked_since = self.links.unlinked_since
        silent, wake = [], None
        game = game_of(rec)
        deciding = game is not None and game.waits_for_decision()
        for slot in sorted(rec.waiting_on()):
            quiet = monitor.silent_for(slot, now) or 0.0
            if deciding:
                # a person may think longer than the limit: only a seat no one holds a link
                # to (its machine is gone) is named while it owes a decision
                since = unlinked_since.get(slot)
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
        for slot, since in unlinked_since.items():
            if slot == ctx.my_seat or slot in rec.removed:
                continue
            if now - since < self.absent_after:
                # a machine that went at the same time is named with it, or not at all:
                # wait until it is back or as long gone (one round, one set)
                return since + self.absent_after
            named.add(slot)
        slots = tuple(sorted(named))
        step = rec.step
        if not self._sign(AbsentBody(slots, r)):
            return None  # nothing signed (two of three machines gone: the silence limits)
        ctx.out.append(
            NamedAbsent(
                names=", ".join(ctx.who(s)["name"] for s in slots),
                slots=slots,
                step=step,
                silent_for=round(max(q for _, q in silent), 1),
            )
        )
        return None

    def tell_left(self) -> None:
        """Tell every player who was removed from the record (or that the game, left
        without enough players, was abandoned)."""
        ctx, rec = self.ctx, self.ctx.record
        new = [s for s in sorted(rec.removed) if s not in self._told_left]
        if not new:
            return
        self._told_left.update(new)
        game = game_of(rec)
        step = rec.removed[new[0]]
        if ctx.my_seat in new:
            ctx.tell(Removed(step=step))
        if game is not None and game.abandoned:
            slots = tuple(sorted(rec.removed))
            names = " and ".join(ctx.who(s)["name"] for s in slots)
            ctx.tell(LeftAbandoned(names=names, slots=slots, step=step))
            return
        for s in new:
            if s != ctx.my_seat:
                ctx.tell(SeatRemoved(**ctx.who(s), step=step))
