"""What a running node reports about its progress: one frozen dataclass per kind of event.

A :class:`p2p.node.Node` hands every event to ``NodeConfig.on_event``.  Each
event has a :attr:`~NodeEvent.KIND` (the ``"event"`` name of the JSON lines
``slaiga open/join/resume --events`` writes), its fields (the rest of that
line, see :meth:`~NodeEvent.data`) and a sentence for a person
(:meth:`~NodeEvent.describe`).  Kinds and field names are a stable interface:
tests and tools parse the JSON lines.

Seats are named by ``slot`` (the join order, fixed by the manifest) where the
event is about a link, and by ``seat``/``culprit`` where it is about the
record; both are the numbers the record uses.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any, ClassVar, TypeVar

E = TypeVar("E", bound="type[NodeEvent]")

EVENT_KINDS: dict[str, type[NodeEvent]] = {}
"""Every event class by its kind."""


class NodeEvent:
    """Base of the node's progress events."""

    __slots__ = ()
    KIND: ClassVar[str] = ""
    TEXT: ClassVar[str] = ""

    def data(self) -> dict[str, Any]:
        """The event's fields by name (what follows ``"event"`` in a JSON line)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}  # type: ignore[arg-type]

    def describe(self) -> str:
        """One line for a person watching the table."""
        return self.TEXT.format(**self.data())


def _event(kind: str, text: str) -> Callable[[E], E]:
    def register(cls: E) -> E:
        if kind in EVENT_KINDS:
            raise TypeError(f"event kind {kind!r} registered twice")
        cls.KIND = kind
        cls.TEXT = text
        EVENT_KINDS[kind] = cls
        return cls

    return register


# ---- opening, joining and forming a table ---------------------------------------------------


@_event("listening", "listening on {address}, table {table_id}")
@dataclass(frozen=True, slots=True)
class Listening(NodeEvent):
    """The opener listens for joiners at ``address`` (host:port)."""

    address: str
    table_id: str


@_event("announced", "announced on the LAN as {service!r}")
@dataclass(frozen=True, slots=True)
class Announced(NodeEvent):
    """The opened table is announced over zeroconf under ``service``."""

    service: str


@_event("withdrawn", "all seats taken; announcement withdrawn")
@dataclass(frozen=True, slots=True)
class Withdrawn(NodeEvent):
    """Every seat is taken, so the zeroconf announcement is withdrawn."""


@_event("joined", "{name} ({fingerprint}) joined")
@dataclass(frozen=True, slots=True)
class Joined(NodeEvent):
    """A player took a seat at the table we opened."""

    name: str
    fingerprint: str


@_event("forming", "every seat signs the manifest ({seats} seats)")
@dataclass(frozen=True, slots=True)
class Forming(NodeEvent):
    """The table is full; every seat now signs the manifest."""

    seats: int


@_event("searching", "looking for tables on the LAN…")
@dataclass(frozen=True, slots=True)
class Searching(NodeEvent):
    """A joiner scans the lobby (for ``table_id``, or for any table when ``None``)."""

    table_id: str | None


@_event("connecting", "connecting to {address}")
@dataclass(frozen=True, slots=True)
class Connecting(NodeEvent):
    """A joiner dials the opener at ``address``."""

    address: str


@_event("welcome", "{taken} of {total} seats taken")
@dataclass(frozen=True, slots=True)
class Welcomed(NodeEvent):
    """The opener granted us a seat; ``taken`` of ``total`` seats are taken."""

    taken: int
    total: int


@_event("waiting", "seated at table {table_id}; waiting for the other players")
@dataclass(frozen=True, slots=True)
class Waiting(NodeEvent):
    """We hold a seat and wait for the table to fill."""

    table_id: str


@_event(
    "resuming", "resuming from the record file ({entries} entries, {torn_bytes} torn bytes dropped)"
)
@dataclass(frozen=True, slots=True)
class Resuming(NodeEvent):
    """A restarted peer loaded its record file (a torn last frame is dropped)."""

    entries: int
    torn_bytes: int


@_event("formed", "table {table_id} formed; we are slot {slot}; connecting to every seat")
@dataclass(frozen=True, slots=True)
class Formed(NodeEvent):
    """Every seat signed the manifest; we hold ``slot``."""

    table_id: str
    slot: int


@_event("meshed", "connected to {connected} of {of} seats; drawing the seat order")
@dataclass(frozen=True, slots=True)
class Meshed(NodeEvent):
    """The full mesh is up (``connected`` of the ``of`` other seats)."""

    connected: int
    of: int


# ---- links to the other seats ------------------------------------------------------------------


@_event("peer_up", "seat {slot} connected")
@dataclass(frozen=True, slots=True)
class SeatUp(NodeEvent):
    """The link to the seat in ``slot`` came up."""

    slot: int


@_event("peer_down", "seat {slot} disconnected: {reason}")
@dataclass(frozen=True, slots=True)
class SeatDown(NodeEvent):
    """The link to the seat in ``slot`` (``None`` if not yet known) went down."""

    slot: int | None
    reason: str


@_event("peer_dropped", "dropped seat {slot}: {reason}")
@dataclass(frozen=True, slots=True)
class SeatDropped(NodeEvent):
    """We closed the link to the seat in ``slot`` (e.g. for going over a budget)."""

    slot: int | None
    reason: str


@_event("away", "this machine was away for {seconds}s")
@dataclass(frozen=True, slots=True)
class Away(NodeEvent):
    """Our own process was paused or starved for ``seconds``; silence clocks restart."""

    seconds: float


@_event("refetching", "asking the {connected} connected seats for entries from step {step}")
@dataclass(frozen=True, slots=True)
class Refetching(NodeEvent):
    """We ask the connected seats for every entry from ``step`` on."""

    step: int
    connected: int


# ---- the record ----------------------------------------------------------------------------


@_event("step", "step {step} ({kind}) complete")
@dataclass(frozen=True, slots=True)
class StepDone(NodeEvent):
    """Record step ``step`` of kind ``kind`` completed (only with step tracing on)."""

    step: int
    kind: str


@_event("stalled", "seat {seat} owes step {step} and has been silent {silent_for:.1f}s")
@dataclass(frozen=True, slots=True)
class SeatStalled(NodeEvent):
    """A seat owes step ``step`` and has been silent for ``silent_for`` seconds."""

    seat: int
    step: int
    silent_for: float


@_event("recovered", "seat {seat} is back")
@dataclass(frozen=True, slots=True)
class SeatRecovered(NodeEvent):
    """A stalled seat spoke again."""

    seat: int


@_event("abandoned", "table abandoned: seat {seat} silent for {waited:.1f}s")
@dataclass(frozen=True, slots=True)
class Abandoned(NodeEvent):
    """A seat stayed silent past the maximum wait; the table ends."""

    seat: int
    waited: float


@_event("fork", "seat {seat}'s entry chains to a step we do not know; fetching records to see why")
@dataclass(frozen=True, slots=True)
class Forked(NodeEvent):
    """A seat's entry (relayed by ``via``) chains to a step we do not hold."""

    seat: int
    via: int | None


@_event("cheat", "CHEAT by seat {culprit}: {kind}: {reason}")
@dataclass(frozen=True, slots=True)
class CheatSeen(NodeEvent):
    """A seat (or the link it came over) sent something bad; ``kind`` names the error class."""

    culprit: int
    kind: str
    reason: str


@_event("convicted", "CHEAT PROVEN: seat {culprit} ({kind}): {reason}")
@dataclass(frozen=True, slots=True)
class Convicted(NodeEvent):
    """A seat is proven to have cheated, with signed evidence; the game ends."""

    culprit: int
    kind: str
    reason: str


@_event("dispute", "table ended by a dispute nobody can settle: {reason}")
@dataclass(frozen=True, slots=True)
class Disputed(NodeEvent):
    """The game ended on a dispute that the record cannot settle."""

    seat: int
    reason: str


@_event("aborted", "table ended: seat {seat} is proven to have cheated ({reason})")
@dataclass(frozen=True, slots=True)
class Aborted(NodeEvent):
    """The table ended because ``seat`` is proven to have cheated."""

    seat: int
    reason: str


@_event(
    "handed_over",
    "you left the table: a bot plays your seat to the end so that the others can finish"
    " (Ctrl-C leaves at once; the others would then wait for your seat)",
)
@dataclass(frozen=True, slots=True)
class HandedOver(NodeEvent):
    """Our player left mid-game; a bot plays our seat to the end (the record is unchanged)."""


@_event("ended", "the game is over early")
@dataclass(frozen=True, slots=True)
class EndedEarly(NodeEvent):
    """The game ended before its last step (``culprit`` when a cheat ended it)."""

    culprit: int | None


@_event("finished", "record complete: {steps} steps, head {head}")
@dataclass(frozen=True, slots=True)
class RecordFinished(NodeEvent):
    """Our record is complete: ``steps`` steps, chain head ``head`` (hex)."""

    steps: int
    head: str


@_event("peer_finished", "seat {slot} has the whole record too")
@dataclass(frozen=True, slots=True)
class SeatFinished(NodeEvent):
    """The seat in ``slot`` says its record is complete at ``step``."""

    slot: int
    step: int


@_event("divergent", "seat {slot} finished with a different record head")
@dataclass(frozen=True, slots=True)
class Divergent(NodeEvent):
    """The seat in ``slot`` finished with another record head than ours."""

    slot: int


@_event("linger_timeout", "{missing} seat(s) did not confirm the end in time")
@dataclass(frozen=True, slots=True)
class LingerTimeout(NodeEvent):
    """``missing`` seats did not say they finished before we stopped waiting."""

    missing: int
