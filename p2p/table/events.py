"""What a running node reports about its progress: one frozen dataclass per kind of event.

A :class:`p2p.net.node.Node` hands every event to ``NodeConfig.on_event``.  Each
event has a :attr:`~NodeEvent.KIND` (the ``"event"`` name of the JSON lines
``slaiga open/join/resume --events`` writes), its fields (the rest of that
line, see :meth:`~NodeEvent.data`) and a sentence for a person
(:meth:`~NodeEvent.describe`).  Kinds and field names are a stable interface:
tests and tools parse the JSON lines.

One numbering everywhere.  Every event about a player names it three ways,
always the same: ``name`` (what the person chose; the text shows only this),
``seat`` (the place in the drawn seat order, from 0: the number the game, its
results and the screen use; ``None`` before the order is drawn) and ``slot``
(the join order the manifest and the record use).  A culprit is named by
``name``, ``culprit`` (its seat) and ``culprit_slot``, as in the results of
``slaiga open/join --json`` and ``slaiga verify --json``.
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


@_event("peer_up", "{name} connected")
@dataclass(frozen=True, slots=True)
class SeatUp(NodeEvent):
    """The link to the player ``name`` came up."""

    name: str
    seat: int | None
    slot: int | None


@_event("peer_down", "{name} disconnected: {reason}")
@dataclass(frozen=True, slots=True)
class SeatDown(NodeEvent):
    """The link to the player ``name`` (``slot`` ``None`` if not yet known) went down."""

    name: str
    seat: int | None
    slot: int | None
    reason: str


@_event("peer_dropped", "dropped the link to {name}: {reason}")
@dataclass(frozen=True, slots=True)
class SeatDropped(NodeEvent):
    """We closed the link to the player ``name`` (e.g. for going over a budget)."""

    name: str
    seat: int | None
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


# ---- spectators (p2p/table/watchers.py) ----------------------------------------------------


@_event("spectator_joined", "{name} is watching the table ({watching} watching)")
@dataclass(frozen=True, slots=True)
class SpectatorJoined(NodeEvent):
    """A spectator ``name`` (the name it gave; it holds no seat) follows the table through
    us; ``watching`` counts the spectators linked to us now."""

    name: str
    fingerprint: str
    watching: int


@_event("spectator_left", "{name} stopped watching ({reason})")
@dataclass(frozen=True, slots=True)
class SpectatorLeft(NodeEvent):
    """A spectator's link to us ended: it left, or we cut it off (``reason``, e.g. over
    its budget).  It is never blamed for anything at the table."""

    name: str
    fingerprint: str
    watching: int
    reason: str


# ---- the record ----------------------------------------------------------------------------


@_event("step", "step {step} ({kind}) complete")
@dataclass(frozen=True, slots=True)
class StepDone(NodeEvent):
    """Record step ``step`` of kind ``kind`` completed (only with step tracing on)."""

    step: int
    kind: str


@_event("stalled", "{name} owes step {step} and has been silent {silent_for:.1f}s")
@dataclass(frozen=True, slots=True)
class SeatStalled(NodeEvent):
    """A player owes step ``step`` and has been silent for ``silent_for`` seconds."""

    name: str
    seat: int | None
    slot: int
    step: int
    silent_for: float


@_event("recovered", "{name} is back")
@dataclass(frozen=True, slots=True)
class SeatRecovered(NodeEvent):
    """A stalled player spoke again."""

    name: str
    seat: int | None
    slot: int


@_event(
    "vanished",
    "{name} has had no link to anyone for {silent_for:.0f}s and owes step {step};"
    " the table waits for {name} (it gives up after {gives_up_in:.0f}s more)",
)
@dataclass(frozen=True, slots=True)
class Vanished(NodeEvent):
    """The player who owes the current step has had no link to any other seat (as far
    as the seats we hear from report) for the machine steps' limit: most likely gone."""

    name: str
    seat: int | None
    slot: int
    step: int
    silent_for: float
    gives_up_in: float


@_event("named_absent", "we signed that {names} left the table for good (silent {silent_for:.0f}s)")
@dataclass(frozen=True, slots=True)
class NamedAbsent(NodeEvent):
    """We signed ``absent`` naming these slots: silent past the table's absence limit
    (option ``absent_after``).  Once every other remaining seat signed the same, they are out."""

    names: str
    slots: tuple[int, ...]
    step: int
    silent_for: float


@_event("seat_removed", "{name} has left the table; the game goes on without {name}")
@dataclass(frozen=True, slots=True)
class SeatRemoved(NodeEvent):
    """Every remaining seat signed that ``name`` is gone: its seat is out from ``step``
    on, the others act for it together (its reveal tokens) and its game's leaving rule
    applies.  Absent, never a cheat."""

    name: str
    seat: int | None
    slot: int
    step: int


@_event(
    "left_abandoned",
    "{names} have left the table; nobody can act for two players, so the table ends here",
)
@dataclass(frozen=True, slots=True)
class LeftAbandoned(NodeEvent):
    """Two seats are gone: the escrow (threshold n - 1) cannot act for both, so the
    table ends, unfinished, naming them (absent, not cheats)."""

    names: str
    slots: tuple[int, ...]
    step: int


@_event(
    "removed",
    "our seat was removed at step {step} (we were silent too long); we follow the rest of the game as a spectator",
)
@dataclass(frozen=True, slots=True)
class Removed(NodeEvent):
    """The other seats signed that we were gone: we sign nothing more and follow."""

    step: int


@_event("vote_cast", "{voter} voted to end the table without {name} (step {step})")
@dataclass(frozen=True, slots=True)
class VoteCast(NodeEvent):
    """A valid signed vote to end the table for the vanished player ``name``: ours
    (``voter_slot`` is our slot) or another remaining seat's.  A voter signs nothing more
    at this table; with every remaining seat's vote the table ends (``ended_by_vote``)."""

    voter: str
    voter_slot: int
    name: str
    seat: int | None
    slot: int
    step: int
    votes: int
    needed: int


@_event("vote_refused", "a vote to end the table, passed on by {name}, was refused: {reason}")
@dataclass(frozen=True, slots=True)
class VoteRefused(NodeEvent):
    """A received end vote that does not hold (``reason`` says which check failed);
    ``name``/``seat``/``slot`` are the link's player that delivered it.  A vote proves
    nothing, so nobody is convicted; the table goes on."""

    name: str
    seat: int | None
    slot: int | None
    reason: str


@_event(
    "ended_by_vote",
    "table ended by vote: {name} vanished and every other player voted to stop"
    " (nobody is blamed for cheating)",
)
@dataclass(frozen=True, slots=True)
class EndedByVote(NodeEvent):
    """Every seat but the vanished one signed an end vote at step ``step``: the votes are
    the record file's closing frame and the table ends as abandoned (exit 3)."""

    name: str
    seat: int | None
    slot: int
    step: int


@_event("abandoned", "table abandoned: {name} silent for {waited:.1f}s")
@dataclass(frozen=True, slots=True)
class Abandoned(NodeEvent):
    """A player stayed silent past the maximum wait; the table ends."""

    name: str
    seat: int | None
    slot: int
    waited: float


@_event("fork", "{name}'s entry chains to a step we do not know; fetching records to see why")
@dataclass(frozen=True, slots=True)
class Forked(NodeEvent):
    """A player's entry (relayed by the seat in slot ``via``) chains to a step we do not
    hold."""

    name: str
    seat: int | None
    slot: int
    via: int | None


@_event("cheat", "CHEAT by {name}: {kind}: {reason}")
@dataclass(frozen=True, slots=True)
class CheatSeen(NodeEvent):
    """A player (or the link it came over) sent something bad; ``kind`` names the error
    class."""

    name: str
    culprit: int | None
    culprit_slot: int
    kind: str
    reason: str


@_event("convicted", "CHEAT PROVEN: {name} ({kind}): {reason}")
@dataclass(frozen=True, slots=True)
class Convicted(NodeEvent):
    """A player is proven to have cheated, with signed evidence; the game ends.  ``step``:
    the record step of the evidence (``p2p.table.results.evidence_step``)."""

    name: str
    culprit: int | None
    culprit_slot: int
    kind: str
    reason: str
    step: int | None = None


@_event("aborted", "table ended: {name} is proven to have cheated ({reason})")
@dataclass(frozen=True, slots=True)
class Aborted(NodeEvent):
    """The table ended because the player ``name`` is proven to have cheated."""

    name: str
    seat: int | None
    slot: int
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
    """The game ended before its last step (``name``, ``culprit`` and ``culprit_slot``
    when a cheat ended it)."""

    name: str | None
    culprit: int | None
    culprit_slot: int | None

    def describe(self) -> str:
        if self.name is None:
            return self.TEXT
        return f"{self.TEXT}: {self.name} is proven to have cheated"


@_event("finished", "record complete: {steps} steps, head {head}")
@dataclass(frozen=True, slots=True)
class RecordFinished(NodeEvent):
    """Our record is complete: ``steps`` steps, chain head ``head`` (hex)."""

    steps: int
    head: str


@_event("peer_finished", "{name} has the whole record too")
@dataclass(frozen=True, slots=True)
class SeatFinished(NodeEvent):
    """The player ``name`` says its record is complete at ``step``."""

    name: str
    seat: int | None
    slot: int
    step: int


@_event("head_claimed", "{name} says its record ends at another head; comparing its entries")
@dataclass(frozen=True, slots=True)
class HeadClaimed(NodeEvent):
    """The player ``name`` says (unsigned) that its finished record has head ``head``,
    not ours; its record is fetched and compared entry by entry."""

    name: str
    seat: int | None
    slot: int
    head: str


@_event(
    "false_head",
    "{name} claimed another record head, but its signed entries match ours; the game stands",
)
@dataclass(frozen=True, slots=True)
class FalseHead(NodeEvent):
    """A head claim that the claimant's own signed entries do not bear out: no fork."""

    name: str
    seat: int | None
    slot: int


@_event("divergent", "{name}'s signed record forks from ours")
@dataclass(frozen=True, slots=True)
class Divergent(NodeEvent):
    """The player ``name`` finished on a record whose signed entries fork from ours."""

    name: str
    seat: int | None
    slot: int


@_event("linger_timeout", "{missing} seat(s) did not confirm the end in time")
@dataclass(frozen=True, slots=True)
class LingerTimeout(NodeEvent):
    """``missing`` seats did not say they finished before we stopped waiting."""

    missing: int


@_event("seat_left", "{name} left; a bot now plays their seat")
@dataclass(frozen=True, slots=True)
class SeatLeft(NodeEvent):
    """The player ``name`` left the table, and a bot plays the seat from now on (its signed
    notice, ``p2p.table.notice``; ours too when ``slot`` is our own)."""

    name: str
    seat: int | None
    slot: int
    step: int


@_event("seat_back", "{name} is back")
@dataclass(frozen=True, slots=True)
class SeatBack(NodeEvent):
    """The player ``name`` is back at the seat (its signed notice, ``p2p.table.notice``)."""

    name: str
    seat: int | None
    slot: int
    step: int


@_event("notice_refused", "a notice passed on by {name} was refused: {reason}")
@dataclass(frozen=True, slots=True)
class NoticeRefused(NodeEvent):
    """A received seat notice that does not hold (``reason`` says which check failed);
    ``name``/``seat``/``slot`` are the link's player that delivered it.  A notice proves
    nothing about cheating, so only that link is blamed; the table goes on."""

    name: str
    seat: int | None
    slot: int | None
    reason: str
