"""What the mesh delivers to its user, as plain values (no I/O here).

The Trio shell (:mod:`p2p.net.mesh`) turns sockets into these; the sans-I/O
layers above it (the lobby's policy in :mod:`p2p.table.lobby`, the node) only
read them, so they live beside the messages they carry rather than in the shell.
"""

from __future__ import annotations

from dataclasses import dataclass

from p2p.wire.schema import Message

INBOUND_OVERHEAD = 256
"""Bytes counted per inbound message beyond twice its raw size (decoded copy, objects)."""


@dataclass(frozen=True, slots=True)
class Inbound:
    """A message from an authenticated peer, with its exact raw body."""

    peer: bytes
    message: Message
    raw: bytes

    @property
    def size(self) -> int:
        """Bytes this message holds while queued (the raw body, its decoded copy, objects)."""
        return 2 * len(self.raw) + INBOUND_OVERHEAD


@dataclass(frozen=True, slots=True)
class PeerUp:
    peer: bytes
    dialed: bool


@dataclass(frozen=True, slots=True)
class PeerDown:
    peer: bytes
    reason: str
    remote_error: bool


MeshEvent = Inbound | PeerUp | PeerDown
