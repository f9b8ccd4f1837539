"""What a table lets strangers do before they join, and what it keeps for later: sans-I/O.

In the lobby the opener admits any key that passes the handshake, so a
stranger costs us whatever we let it send.  The mesh bounds what a stranger
costs on the wire (:attr:`p2p.net.mesh.Mesh.members`: small frames, a byte
allowance, one inbox budget shared by all strangers, a cap on strangers in
all and per address with the oldest making room for a newcomer, a short
window to say anything, metered keepalives).  :class:`LobbyGate` holds the
lobby's own rules, and :class:`EarlyBuffer` bounds what is kept for the record:

* **Each stranger gets** :data:`JOIN_WITHIN_S` to send its ``Join``.
* **A stranger may send only** ``Join``.  Anything else is dropped, never
  buffered, and its bytes are counted; past :data:`STRANGER_BYTES` the
  stranger is disconnected.
* **Early messages** from seated peers (entries sent before our record runs)
  are kept in a buffer bounded in bytes (:data:`EARLY_BYTES`) and count.

The node feeds events in and carries out the verdicts; time is an input.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator
from dataclasses import dataclass, field

from p2p import wire
from p2p.wire.events import Inbound

JOIN_WITHIN_S = 10.0
"""How long a connected stranger may take to send its ``Join``."""
STRANGER_BYTES = 16 << 10
"""Bytes of non-``Join`` messages a stranger may send (all dropped) before it is cut off (the
mesh cuts it off anyway past :data:`p2p.net.mesh.STRANGER_BYTES` of any kind)."""
EARLY_BYTES = 8 << 20
"""Bytes of early messages from seated peers kept until the record runs."""
EARLY_MESSAGES = 4096
"""The same limit in messages."""


class Verdict(enum.Enum):
    JOIN = "join"  # a Join: hand it to the seating logic
    KEEP = "keep"  # from a member: buffer it for the record
    DROP = "drop"  # from a stranger, not a Join: ignore it
    CUT = "cut"  # a stranger over its byte budget: disconnect it


@dataclass(slots=True)
class _Stranger:
    since: float
    dropped_bytes: int = 0


@dataclass(slots=True)
class LobbyGate:
    """The opener's lobby rules for peers that have not joined (``members``: joined keys)."""

    members: set[bytes] = field(default_factory=set)
    strangers: dict[bytes, _Stranger] = field(default_factory=dict)
    dropped: int = 0
    """Messages dropped from strangers so far."""
    dropped_bytes: int = 0

    def admit(self, peer: bytes, now: float) -> tuple[str, str] | None:
        """At the handshake: count a stranger as waiting from ``now``.  Never refuses: a
        newcomer is never turned away for the strangers already waiting (the mesh closes
        the oldest of them instead, :meth:`p2p.net.mesh.Mesh.strangers`)."""
        if peer not in self.members:
            self.strangers.setdefault(peer, _Stranger(now))
        return None

    def connected(self, peer: bytes, now: float) -> None:
        if peer not in self.members:
            self.strangers.setdefault(peer, _Stranger(now))

    def gone(self, peer: bytes) -> None:
        self.strangers.pop(peer, None)

    def joined(self, peer: bytes) -> None:
        self.members.add(peer)
        self.strangers.pop(peer, None)

    def judge(self, event: Inbound) -> Verdict:
        """What to do with a message that arrived in the lobby."""
        if isinstance(event.message, wire.Join):
            return Verdict.JOIN
        if event.peer in self.members:
            return Verdict.KEEP
        self.dropped += 1
        self.dropped_bytes += len(event.raw)
        stranger = self.strangers.get(event.peer)
        if stranger is None:  # its PeerUp is still queued behind this message
            stranger = self.strangers[event.peer] = _Stranger(float("-inf"))
        stranger.dropped_bytes += len(event.raw)
        return Verdict.CUT if stranger.dropped_bytes > STRANGER_BYTES else Verdict.DROP

    def overdue(self, now: float) -> list[bytes]:
        """Strangers that did not join within :data:`JOIN_WITHIN_S` (cut them off)."""
        return [p for p, s in self.strangers.items() if now - s.since > JOIN_WITHIN_S]

    def next_deadline(self) -> float | None:
        if not self.strangers:
            return None
        return min(s.since for s in self.strangers.values()) + JOIN_WITHIN_S


class EarlyBuffer:
    """Messages from seated peers kept until the record runs, bounded in bytes and count.

    Iterating yields them in arrival order; what does not fit is dropped (a
    peer re-sends or is fetched from once the record runs).
    """

    __slots__ = ("_events", "bytes", "dropped")

    def __init__(self) -> None:
        self._events: list[Inbound] = []
        self.bytes = 0
        self.dropped = 0

    def add(self, event: Inbound) -> bool:
        if len(self._events) >= EARLY_MESSAGES or self.bytes + event.size > EARLY_BYTES:
            self.dropped += 1
            return False
        self._events.append(event)
        self.bytes += event.size
        return True

    def __iter__(self) -> Iterator[Inbound]:
        return iter(list(self._events))

    def __len__(self) -> int:
        return len(self._events)

    def clear(self) -> None:
        self._events.clear()
        self.bytes = 0
