"""The effects of a table session: what the Trio shell does for it, in order.

:class:`p2p.table.session.TableSession` returns these from each event; the node
(:mod:`p2p.net.node`) carries them out.  See the session's docstring and
docs/design.md for the event/effect API.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from p2p import wire
from p2p.table.events import NodeEvent


@dataclass(frozen=True, slots=True)
class Send:
    """Queue ``msg`` for the peer with identity ``peer`` (dropped when not linked)."""

    peer: bytes
    msg: wire.Message


@dataclass(frozen=True, slots=True)
class SendEach:
    """Queue ``msg`` for every linked seat, one by one (a refetch: never a spectator)."""

    msg: wire.Message


@dataclass(frozen=True, slots=True)
class Broadcast:
    """Send ``msg`` to every linked peer (``skip is None``), or to every linked peer
    but those in ``skip`` (and to nobody when that leaves none)."""

    msg: wire.Message
    skip: frozenset[bytes] | None = None


@dataclass(frozen=True, slots=True)
class SendOwn:
    """Our own entry, persisted: send it to every linked peer (the shell's test hooks
    may send it otherwise)."""

    kind: str
    accepted: Any


@dataclass(frozen=True, slots=True)
class Persist:
    """Append a signed envelope to the record file (``sync``: fsync it now)."""

    signed: wire.Signed
    sync: bool = False


@dataclass(frozen=True, slots=True)
class Sync:
    """Make every append durable now."""


@dataclass(frozen=True, slots=True)
class PersistVote:
    """Append (and fsync) our own end vote before it leaves."""

    vote: wire.EndVote


@dataclass(frozen=True, slots=True)
class PersistNotice:
    """Append (and fsync) a seat notice: ours before it leaves, another's as it comes."""

    notice: wire.SeatNotice


@dataclass(frozen=True, slots=True)
class CloseWithVotes:
    """Close the record file with the votes that ended the table."""

    votes: wire.EndVotes


@dataclass(frozen=True, slots=True)
class Trace:
    """Benchmark hook: an entry was "sent" or "accepted" (``NodeConfig.trace``)."""

    what: str
    step: int
    seat: int


@dataclass(frozen=True, slots=True)
class Tell:
    """Say ``text`` to the person at our seat (if a player is there)."""

    text: str


@dataclass(frozen=True, slots=True)
class AskEnd:
    """The player owing the step vanished: ask ours whether to end the table (a bot, or a
    player that cannot be asked, votes yes at once: :meth:`TableSession.vote`)."""

    slot: int
    step: int
    silent_for: float


@dataclass(frozen=True, slots=True)
class ShowPlayer:
    """Hand our player what its seat saw happen (the record moved on)."""


@dataclass(frozen=True, slots=True)
class Serve:
    """Answer a seated peer's ``Fetch`` from our record."""

    peer: bytes
    msg: wire.Fetch


@dataclass(frozen=True, slots=True)
class Wake:
    """Look again now (a vote ended the table from another task)."""


Effect = (
    Send
    | SendEach
    | Broadcast
    | SendOwn
    | Persist
    | Sync
    | PersistVote
    | PersistNotice
    | CloseWithVotes
    | Trace
    | Tell
    | AskEnd
    | ShowPlayer
    | Serve
    | Wake
    | NodeEvent
)


@dataclass(frozen=True, slots=True)
class Tick:
    """What :meth:`TableSession.tick` found: the run is over, or when to look again."""

    done: bool = False
    deadline: float | None = None
