"""Silent seats, with no false blame: time away, re-fetch rounds, stalls and recoveries.

The silence clocks themselves are :class:`p2p.table.silence.SilenceMonitor`; this
topic guards what they say before anyone is named:

* Time we were away (stopped, suspended, starved; :class:`AwayClock`, from the
  heartbeat) counts against no seat (the silence clocks move on by it), and on coming
  back we re-fetch from everyone.
* Nobody is named abandoned before a re-fetch from every connected seat has had
  ``stall_after`` to be answered; and while we hold no link at all it may be us who
  are cut off, so that is waited out for :data:`ISOLATED_ROUNDS` such rounds before
  anyone is named.
* While a person decides, the table's decision limits apply instead of the machine
  steps' (:func:`p2p.table.game_rule.decide_limits`).
"""

from __future__ import annotations

from p2p.errors import TableAbandoned
from p2p.table.effects import Effect
from p2p.table.events import Abandoned, Away, Refetching, SeatRecovered, SeatStalled
from p2p.table.game_rule import decide_limits
from p2p.table.session.context import Context
from p2p.table.silence import Recovered, SilenceMonitor, Stalled

HEARTBEAT_S = 0.25
AWAY_AFTER_S = 1.0
"""A heartbeat this much later than due means we were away (stopped, suspended, starved);
that time counts against no seat."""
ISOLATED_ROUNDS = 3
"""Re-fetch rounds waited out while we hold no link at all before a silent seat is named."""


class AwayClock:
    """Time this peer itself was away (stopped, suspended, starved), from its heartbeat.

    The node beats it from the moment its mesh opens, so time away in the lobby is
    known too; a :class:`~p2p.table.session.TableSession` takes what was gathered
    (:meth:`take`)."""

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


class SilenceGuard:
    """The silence monitor, guarded against false blame, and what it found."""

    def __init__(self, ctx: Context, clock: AwayClock | None = None) -> None:
        self.ctx = ctx
        self.clock = clock or AwayClock()
        self.monitor = SilenceMonitor.from_manifest(ctx.manifest)
        self.stalls: list[Stalled] = []
        self.recoveries: list[Recovered] = []
        self._machine_limits = (self.monitor.stall_after, self.monitor.max_wait)
        self._decide_limits = decide_limits(ctx.manifest) or self._machine_limits
        self._blame_round: tuple[int, float, int] | None = None  # (step, when, rounds)

    def beat(self, now: float) -> None:
        """The heartbeat's tick: notice the time this peer itself was away."""
        self.ctx.out.extend(self.clock.beat(now))

    def use_limits(self, deciding: bool) -> None:
        """The limits of a person's decision (``deciding``) or of a machine step."""
        monitor = self.monitor
        monitor.stall_after, monitor.max_wait = (
            self._decide_limits if deciding else self._machine_limits
        )

    def update(self, now: float, connected: int) -> list[Stalled | Recovered]:
        """``monitor.update`` guarded against false blame (see the module docstring)."""
        ctx, rec, monitor = self.ctx, self.ctx.record, self.monitor
        self.beat(now)
        away = self.clock.take()
        if away:
            monitor.pause(away)
            ctx.ask_everyone()
        try:
            return monitor.update(now, rec.step, rec.waiting_on())
        except TableAbandoned as exc:
            if not self._ready_to_blame(now, connected):
                return []
            ctx.out.append(Abandoned(**ctx.who(exc.seat), waited=exc.waited))
            ctx.absent = exc.seat
            raise TableAbandoned(exc.seat, exc.waited, ctx.who(exc.seat)["name"]) from None

    def _ready_to_blame(self, now: float, connected: int) -> bool:
        ctx, rec, monitor = self.ctx, self.ctx.record, self.monitor
        last = self._blame_round if self._blame_round and self._blame_round[0] == rec.step else None
        answered = last is not None and now - last[1] >= monitor.stall_after
        if answered and (connected or last[2] >= ISOLATED_ROUNDS):
            return True
        rounds = last[2] + 1 if last is not None else 1
        self._blame_round = (rec.step, now, rounds)
        ctx.ask_before_blame()
        monitor.pause(monitor.stall_after)
        ctx.out.append(Refetching(step=rec.step, connected=connected))
        return False

    def report(self, ev: Stalled | Recovered) -> bool:
        """Keep and report what the monitor found; ``True`` for a stall."""
        if isinstance(ev, Stalled):
            self.stalls.append(ev)
            self.ctx.out.append(
                SeatStalled(**self.ctx.who(ev.seat), step=ev.step, silent_for=ev.silent_for)
            )
            return True
        self.recoveries.append(ev)
        self.ctx.out.append(SeatRecovered(**self.ctx.who(ev.seat)))
        return False
