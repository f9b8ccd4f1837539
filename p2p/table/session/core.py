"""The table session: one seat's policy of a running record, routing events to its topics.

:class:`TableSession` is the one object the shell (:mod:`p2p.net.node`) talks to (see
:mod:`p2p.table.session` for its events, its effects and the list of topics).  It owns
the path of a signed entry itself (our own body signed, a peer's entry offered, what
follows an accepted one) and the record loop's :meth:`~TableSession.tick`, and hands
every other concern to the topic object that owns its state and rules (``blame``,
``heads``, ``silence``, ``connectivity``, ``vanishing``, ``ballot``, ``seat_notices``,
``lane``, ``linger``).  Every topic appends its effects, in order, to the one queue of
the shared :class:`~p2p.table.session.context.Context`; the state its callers read
(``cheats``, ``my_vote``, ``unlinked_since``...) stays reachable on the session under
its old name.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from crypto.identity import IdentityKey
from p2p import wire
from p2p.errors import CheatDetected, ForgedSignature, RemoteProtocolError, TableAbandoned
from p2p.record.chain import Offer, Record, Status
from p2p.record.store import needs_sync
from p2p.table.effects import Effect, Persist, Send, SendOwn, Serve, ShowPlayer, Sync, Tick, Trace
from p2p.table.events import Aborted, SeatDown, SeatUp, StepDone
from p2p.table.forming import order_at_verdict
from p2p.table.results import TableResult
from p2p.table.seat import game_of
from p2p.table.session.blame import Blame
from p2p.table.session.context import Context
from p2p.table.session.heads import Heads
from p2p.table.session.lane import AbsenceLane
from p2p.table.session.linger import LINGER_S, Linger
from p2p.table.session.links import Connectivity
from p2p.table.session.messages import Finished, Links
from p2p.table.session.notices import SeatNotices
from p2p.table.session.stalls import AwayClock, SilenceGuard
from p2p.table.session.vanished import Vanishing
from p2p.table.session.votes import EndVotes


class _Of:
    """A piece of state one topic owns, read (or, ``settable``, written) on the session
    under its old name: ``cheats = _Of("blame")`` is ``session.blame.cheats``."""

    def __init__(self, topic: str, name: str | None = None, settable: bool = False) -> None:
        self.topic, self.name, self.settable = topic, name, settable

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = self.name or name

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self
        return getattr(getattr(obj, self.topic), self.name)  # type: ignore[arg-type]

    def __set__(self, obj: Any, value: Any) -> None:
        if not self.settable:
            raise AttributeError(f"{self.name} is {self.topic}'s; it is read-only here")
        setattr(getattr(obj, self.topic), self.name, value)  # type: ignore[arg-type]


class TableSession:
    """The policy of one seat at one running table (see :mod:`p2p.table.session`)."""

    # how the table ended (the shared context)
    convicted = _Of("ctx")
    ended_by_vote = _Of("ctx")
    absent = _Of("ctx")
    aborted = _Of("ctx")
    # the topics' state, under the names the shell, the bench and the tests use
    cheats = _Of("blame")
    evidence = _Of("blame")
    equivocations = _Of("blame")
    divergent = _Of("heads")
    stalls = _Of("silence")
    recoveries = _Of("silence")
    clock = _Of("silence")
    monitor = _Of("silence")
    linked = _Of("connectivity")
    links = _Of("connectivity")
    unlinked_since = _Of("connectivity")
    nudge = _Of("connectivity")
    relayed = _Of("connectivity")
    my_vote = _Of("ballot", "mine", settable=True)
    votes = _Of("ballot", "others")
    notices = _Of("seat_notices")
    absent_after = _Of("lane")
    finished_peers = _Of("linger")
    linger_s = _Of("linger")

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
        self.ctx = ctx = Context(record, identity, my_seat)
        self.record = record
        self.manifest = ctx.manifest
        self.identity = identity
        self.my_seat = my_seat
        self.out: list[Effect] = ctx.out
        self.trace = trace
        self.trace_steps = trace_steps
        self.blame = Blame(ctx)
        self.heads = Heads(ctx, self.blame, self.offer)
        self.silence = SilenceGuard(ctx, clock)
        self.connectivity = Connectivity(ctx)
        self.ballot = EndVotes(ctx, self.connectivity)
        self.vanishing = Vanishing(ctx, self.connectivity, self.silence.monitor, self.ballot)
        self.seat_notices = SeatNotices(ctx)
        self.lane = AbsenceLane(ctx, self.connectivity, self.silence.monitor, self.ballot, self.own)
        self.linger = Linger(ctx, self.connectivity, self.heads, self.blame, linger_s)
        self._held_via: dict[bytes, int | None] = {}
        """Signature of each entry the record holds for a future step -> the link it came
        from (:meth:`take_held`: it is relayed as if it had just come from there)."""
        self._abandoned: TableAbandoned | None = None
        """The table ended for an absent seat: raised by :meth:`tick` after the grace."""

    # -- naming and state ------------------------------------------------

    def drain(self) -> list[Effect]:
        """The effects queued so far, in order (the queue is emptied in place)."""
        return self.ctx.drain()

    def seat_order(self) -> tuple[int, ...]:
        return self.ctx.seat_order()

    def who(self, slot: int | None) -> dict[str, Any]:
        return self.ctx.who(slot)

    def ended(self) -> bool:
        return self.ctx.ended()

    def is_game(self) -> bool:
        return self.ctx.is_game()

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
            seat_order=order_at_verdict(
                self.seat_order(), self.convicted.step if self.convicted is not None else None
            ),
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
        ctx = self.ctx
        ctx.out.append(SeatUp(**ctx.who(ctx.slot_of(peer))))
        ctx.out.append(Send(peer, wire.Fetch(ctx.manifest.table_id, ctx.record.step)))
        if ctx.record.finished:
            ctx.out.append(Send(peer, self.linger.finished_msg()))
        for vote in self.ballot.all():  # a seat back on line hears every vote we hold
            ctx.out.append(Send(peer, vote))
        for notice in self.notices.all():  # and every notice (who left, who is back)
            ctx.out.append(Send(peer, notice))
        return self.tell_links(linked)

    def peer_down(self, peer: bytes, reason: str, linked: frozenset[int]) -> list[Effect]:
        ctx = self.ctx
        ctx.out.append(SeatDown(**ctx.who(ctx.slot_of(peer)), reason=reason))
        ctx.ask_everyone()  # what that link lost on its way to us, the others have
        return self.tell_links(linked)

    def tell_links(self, linked: frozenset[int]) -> list[Effect]:
        """Tell every linked seat whom we hold a link to (on every change of our links)."""
        self.connectivity.tell(linked)
        return self.drain()

    # -- events: messages ------------------------------------------------

    def message(self, peer: bytes, msg: wire.Message) -> list[Effect]:
        """A message from a seated peer's link (a ``Signed`` one already pre-checked)."""
        ctx = self.ctx
        via = ctx.slot_of(peer)
        if via is None:
            return self.drain()
        ours = getattr(msg, "table_id", None) == ctx.manifest.table_id
        if isinstance(msg, wire.Signed):
            ctx.out.extend(self.offer(msg, via))
        elif isinstance(msg, wire.Fetched):
            if ours:
                self.heads.take_fetched(msg, peer, via)
        elif isinstance(msg, wire.Fetch):
            if ours:
                ctx.out.append(Serve(peer, msg))
        elif isinstance(msg, Links) and ours:
            self.connectivity.heard(via, msg)
        elif isinstance(msg, wire.EndVote):
            self.ballot.take(msg, via)
        elif isinstance(msg, wire.SeatNotice):
            self.seat_notices.take(msg, via)
        elif isinstance(msg, Finished) and ours:
            self.linger.heard(via, msg)
        # lobby leftovers (Welcome, Genesis copies...) are ignored once the record runs
        return self.drain()

    # -- entries ---------------------------------------------------------

    def own(self, body: wire.Body) -> list[Effect]:
        """Sign our own body; it is persisted (fsynced, unless it is re-derived, never
        drawn: p2p/record/store.py) before it is sent."""
        if self.my_vote is not None:
            return self.drain()  # we voted to end the table: we sign no further entry
        offer = self.record.sign(self.identity, self.my_seat, body)
        accepted = offer.accepted[0]
        self.out.append(Persist(accepted.signed, sync=needs_sync(body.TAG)))
        if self.trace:
            self.out.append(Trace("sent", accepted.step, self.my_seat))
            self.out.append(Trace("accepted", accepted.step, self.my_seat))
        self.out.append(SendOwn(body.TAG, accepted))
        self._after_offer(offer, via=None, skip_first=True)
        self.lane.answer_closed()
        return self.drain()

    def offer(self, signed: wire.Signed, via: int | None, persist: bool = True) -> list[Effect]:
        """A signed entry from the link of slot ``via`` (``None``: from our own file,
        ``persist`` then ``False``).  Once a conviction, a vote or an absent seat ended
        the game, the record is final as the verdict (or the votes) found it, which is
        what ``slaiga verify`` reads back: later entries are not taken (after the votes
        the file is closed; a seat back from its absence must not write past them)."""
        if persist and (self.ctx.ended() or self._abandoned is not None):
            return []  # convicted, ended by vote (the file closes with the votes), abandoned
        try:
            offer = self.record.offer(signed)
        except ForgedSignature as exc:
            self.blame.forged(exc, via)
            return self.drain()
        except CheatDetected as exc:
            self.blame.refused(signed, exc, via)
            return self.drain()
        except RemoteProtocolError as exc:
            self.blame.junk(exc, via)
            return self.drain()
        if offer.status is Status.ACCEPTED:
            if persist:
                self._after_offer(offer, via)
            else:
                for cheat in offer.cheats:
                    self.blame.on_cheat(cheat, via)
                self._stop_if_fold_failed()
        elif offer.status is Status.MOOT and persist:
            self.lane.moot(signed)
        elif offer.status is Status.HELD:
            self._held_via.setdefault(signed.signature, via)
        if persist:
            self.lane.answer()
        self.lane.answer_closed()
        self.lane.tell_left()
        return self.drain()

    def take_held(self) -> list[tuple[wire.Signed, int | None]]:
        """The entries the record holds for the current step, each with the link it came
        from, when the record stopped before taking them (``Record.defer_held``: the node
        checks their proofs in worker threads first); offer each again with :meth:`offer`.
        """
        return [(s, self._held_via.pop(s.signature, None)) for s in self.record.take_held()]

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
            self.blame.keep_evidence(signed, exc)
        for cheat in offer.cheats:
            self.blame.on_cheat(cheat, via)
        self._stop_if_fold_failed()
        self.connectivity.relay(offer, via)
        self.out.append(ShowPlayer())

    def _stop_if_fold_failed(self) -> None:
        """Our own code failed folding a step (never a peer's fault): every entry is on
        disk, and the table stops here with one clear line (``FoldFailed``)."""
        if self.record.failure is not None:
            self.out.append(Sync())
            raise self.record.failure

    def settle_heads(self) -> bool:
        """Judge every head claim that differs from ours; ``True`` once none is still being
        compared (a seat whose record forks from ours is then in :attr:`divergent`)."""
        return self.heads.settle(self.finished_peers)

    # -- time ------------------------------------------------------------

    def beat(self, now: float) -> list[Effect]:
        """The heartbeat's tick: notice the time this peer itself was away."""
        self.silence.beat(now)
        return self.drain()

    def tick(self, now: float, linked: frozenset[int], connected: int, watching: int = 0) -> Tick:
        """The record loop's look at the time ``now`` (after our own entries went out):
        linger after an early end, silence and stalls, a vanished player, the absence
        lane, the finish and its linger, then a short grace for the ``watching``
        spectators still linked to us (:mod:`.linger`).  ``linked``: the slots we hold a
        link to; ``connected``: how many links.  Raises
        :class:`p2p.errors.TableAbandoned` when the table ends for an absent seat."""
        linger = self.linger
        if linger.done_at is None:
            try:
                tick = self._tick(now, linked, connected)
            except TableAbandoned as exc:  # raised once our spectators had their grace
                self._abandoned = exc
                tick = Tick(done=True)
            if not tick.done:
                return tick
            linger.done_at = now
        until = linger.spectators_until(now, watching)
        if until is not None:
            return Tick(deadline=until)
        if self._abandoned is not None:
            raise self._abandoned
        return Tick(done=True)

    def _tick(self, now: float, linked: frozenset[int], connected: int) -> Tick:
        rec, linger = self.record, self.linger
        if self.ended() and linger.after_end(now):
            return Tick(done=True)
        game = game_of(rec)
        self.silence.use_limits(deciding=game is not None and game.waits_for_decision())
        events = self.silence.update(now, connected)
        vanish_check = self.vanishing.tell(now, linked)
        absence_check = self.lane.absence(now)
        if absence_check is not None:
            vanish_check = min(vanish_check or absence_check, absence_check)
        for ev in events:
            if not self.silence.report(ev):
                continue
            if self.equivocations:
                # a proven equivocator and a record that cannot go on: end the table
                culprit = min(seat for seat, _ in self.equivocations)
                self.ctx.aborted = culprit
                self.out.append(Aborted(**self.who(culprit), reason="equivocation"))
                return Tick(done=True)
            self.blame.blame_suspects()
            self.ctx.ask_before_blame()
        if rec.finished and linger.finish(now):
            return Tick(done=True)
        nudge_at = self.connectivity.nudged(now, linked)
        deadline = self.monitor.next_deadline() if not rec.finished else linger.until
        if not rec.finished:
            for at in (vanish_check, nudge_at):
                if at is not None:
                    deadline = min(deadline or at, at)
        ended_until = linger.ended_until()
        if ended_until is not None:
            deadline = ended_until
        return Tick(deadline=deadline)

    # -- the end vote (:mod:`.votes`) and a vanished player ------------------

    def all_votes(self) -> list[wire.EndVote]:
        return self.ballot.all()

    def ask_end(self, slot: int, silent_for: float) -> list[Effect]:
        """The player owing the step vanished: ask ours whether to end the table."""
        self.ballot.ask(slot, silent_for)
        return self.drain()

    def vote_problem(self, slot: int, now: float) -> str | None:
        """Why we may not vote now to end the table for ``slot`` (``None``: we may)."""
        return self.ballot.problem(slot, now)

    def vote(self, slot: int, now: float) -> str | None:
        """Our player votes to end the table for ``slot``: signed, persisted (fsync) and
        sent (effects in :attr:`out`); returns why not (``None``: voted).  Final: we sign
        no further entry at this table."""
        return self.ballot.vote(slot, now)

    def take_vote(self, vote: wire.EndVote, via: int) -> list[Effect]:
        """A vote from the link of slot ``via``: checked, kept (one per seat), relayed
        and counted.  A bad one is refused with the reason; it convicts no one."""
        self.ballot.take(vote, via)
        return self.drain()

    def reload_votes(self, votes: tuple[wire.EndVote, ...], closed: bool) -> None:
        """Votes in our file on resume: our own stays final (we sign nothing more)."""
        self.ballot.reload(votes, closed)

    # -- a player leaves or comes back (:mod:`.notices`) ---------------------

    def bot_slots(self) -> frozenset[int]:
        """The slots a bot plays now, as their players' latest notices say."""
        return self.seat_notices.bot_slots()

    def leave(self) -> list[Effect]:
        """Our player left, and a bot plays our seat from now on: sign that notice,
        persist it (fsync) and send it to every linked seat (each relays it on)."""
        self.seat_notices.notify(back=False)
        return self.drain()

    def back(self) -> list[Effect]:
        """Our player is back at the seat (a person resumed it after a break, or after
        leaving): sign that notice, unless our latest one says so at this very step."""
        self.seat_notices.notify(back=True)
        return self.drain()

    def take_notice(self, notice: wire.SeatNotice, via: int) -> list[Effect]:
        """A notice from the link of slot ``via``: checked, kept, persisted, relayed and
        told; a bad one is refused with the reason, blaming only the link."""
        self.seat_notices.take(notice, via)
        return self.drain()

    def reload_notices(self, notices: tuple[wire.SeatNotice, ...]) -> None:
        """Notices in our file on resume (a bad one is dropped)."""
        self.seat_notices.reload(notices)
