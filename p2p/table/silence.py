"""Stall detection, sans-I/O: time is an input.

A seat that owes an entry (per the record's ordering rule) and has not sent
it is *waiting*.  The clock for an obligation starts when we first see the
seat owing at that step.  After ``stall_after`` seconds it is marked
:class:`Stalled` (the others keep waiting; the node may warn and try to
reconnect), and if it stays silent until ``max_wait`` it is blamed:
:meth:`SilenceMonitor.update` raises :class:`TableAbandoned` naming it.  A
stalled seat that delivers produces :class:`Recovered`.

The Trio shell calls :meth:`SilenceMonitor.update` whenever the record
changes and when :meth:`SilenceMonitor.next_deadline` passes; tests drive it
with a fake clock.
"""

from __future__ import annotations

from dataclasses import dataclass

from p2p.errors import LocalProtocolError, TableAbandoned
from p2p.table.forming import Manifest

MS_PER_S = 1000.0


@dataclass(frozen=True, slots=True)
class Stalled:
    seat: int
    step: int
    silent_for: float


@dataclass(frozen=True, slots=True)
class Recovered:
    seat: int


class SilenceMonitor:
    """Tracks how long each owing seat has been silent."""

    __slots__ = ("stall_after", "max_wait", "_since", "_stalled")

    def __init__(self, stall_after: float, max_wait: float) -> None:
        if not 0 < stall_after <= max_wait:
            raise LocalProtocolError(
                f"need 0 < stall_after ({stall_after}) <= max_wait ({max_wait})"
            )
        self.stall_after = stall_after
        self.max_wait = max_wait
        self._since: dict[int, tuple[int, float]] = {}  # seat -> (step, owing since)
        self._stalled: set[int] = set()

    @classmethod
    def from_manifest(cls, manifest: Manifest) -> SilenceMonitor:
        """Use the table's own timeouts (manifest fields, in milliseconds)."""
        return cls(manifest.stall_after_ms / MS_PER_S, manifest.max_wait_ms / MS_PER_S)

    @property
    def stalled(self) -> frozenset[int]:
        return frozenset(self._stalled)

    def update(
        self, now: float, step: int, waiting_on: frozenset[int]
    ) -> list[Stalled | Recovered]:
        """Feed the current obligations; returns new events or raises :class:`TableAbandoned`.

        ``waiting_on`` is :meth:`p2p.record.chain.Record.waiting_on` (seats owing at
        ``step`` that have not delivered).
        """
        events: list[Stalled | Recovered] = []
        for seat in sorted(set(self._since) - waiting_on):
            del self._since[seat]
        for seat in sorted(waiting_on):
            prior = self._since.get(seat)
            if prior is None or prior[0] != step:
                if seat in self._stalled and prior is not None:
                    # it delivered the old step and now owes a new one
                    self._stalled.discard(seat)
                    events.append(Recovered(seat))
                self._since[seat] = (step, now)
        for seat in sorted(self._stalled - waiting_on):
            self._stalled.discard(seat)
            events.append(Recovered(seat))
        worst: tuple[float, int] | None = None
        for seat, (at, since) in sorted(self._since.items()):
            silent = now - since
            if silent >= self.max_wait and (worst is None or silent > worst[0]):
                worst = (silent, seat)
            if silent >= self.stall_after and seat not in self._stalled:
                self._stalled.add(seat)
                events.append(Stalled(seat, at, silent))
        if worst is not None:
            raise TableAbandoned(worst[1], worst[0])
        return events

    def silent_for(self, seat: int, now: float) -> float | None:
        """How long ``seat`` has owed its current entry (``None``: it owes nothing we
        know of)."""
        since = self._since.get(seat)
        return None if since is None else now - since[1]

    def pause(self, seconds: float) -> None:
        """Move every silence clock forward by ``seconds``: time this peer itself was away
        (stopped, suspended, too busy to read) or spent re-fetching counts against no one."""
        if seconds > 0:
            self._since = {s: (step, since + seconds) for s, (step, since) in self._since.items()}

    def next_deadline(self) -> float | None:
        """The earliest time at which :meth:`update` could report something new."""
        times = []
        for seat, (_, since) in self._since.items():
            times.append(since + (self.max_wait if seat in self._stalled else self.stall_after))
        return min(times, default=None)
