"""A seat's side of its spectators: the Trio adapter around :class:`p2p.table.watchers.WatchGate`.

The node hands every mesh event of a peer that holds no seat to :meth:`WatchServer.handle`
once its record runs.  An admitted spectator gets the genesis at once, then every seat
notice held so far (who left, who is back: p2p/table/notice.py; later ones reach it as
the seats relay them), its ``Fetch``
requests go to the node's rate-limited fetch server (:mod:`p2p.net.fetch`, bounded pieces
off the main loop), and from then on the node's broadcasts and relays reach it like a seat
(:meth:`p2p.net.mesh.Mesh.broadcast_raw` skips only strangers), each through its own small
outbox: a spectator that does not keep up is cut off, never waited for.  Whatever it sends
besides is refused and cuts its link; nothing it sends reaches the record.
"""

from __future__ import annotations

from collections.abc import Callable

from p2p import wire
from p2p.net.fetch import FetchServer
from p2p.net.mesh import Mesh
from p2p.table.events import NodeEvent, SpectatorJoined, SpectatorLeft
from p2p.table.forming import Manifest
from p2p.table.watchers import Decision, WatchGate
from p2p.wire.events import Inbound, PeerDown, PeerUp


class WatchServer:
    """Admit, serve and cut off the spectators of one seat (see the module docstring)."""

    def __init__(
        self,
        mesh: Mesh,
        genesis: wire.Genesis,
        table_id: bytes,
        slots: int,
        fetches: FetchServer | None,
        emit: Callable[[NodeEvent], None],
        notices: Callable[[], list[wire.SeatNotice]] = list,
    ) -> None:
        self.mesh = mesh
        self.genesis = genesis
        self.gate = WatchGate(table_id, slots)
        self.fetches = fetches
        self.emit = emit
        self.notices = notices
        """Every seat notice this seat holds, for a spectator that comes in mid-game."""
        mesh.open_to_watchers(slots)

    @classmethod
    def open(
        cls,
        mesh: Mesh,
        genesis: wire.Genesis,
        manifest: Manifest,
        fetches: FetchServer | None,
        emit: Callable[[NodeEvent], None],
        notices: Callable[[], list[wire.SeatNotice]] = list,
    ) -> WatchServer:
        """The record runs: the seats may link to us, and spectators may watch as the
        manifest allows; anyone else is told the table is full."""
        keys = {m.identity for m in manifest.seats}
        mesh.admit = lambda peer: (
            None if peer in keys or manifest.spectators else ("full", "not seated at this table")
        )
        return cls(mesh, genesis, manifest.table_id, manifest.spectators, fetches, emit, notices)

    def handle(self, event: Inbound | PeerUp | PeerDown) -> None:
        """One mesh event of a peer that holds no seat."""
        if isinstance(event, PeerUp):
            return  # a stranger until it asks to watch (the mesh's stranger limits hold)
        if isinstance(event, PeerDown):
            if event.peer in self.gate.watching:
                who = self.gate.describe(event.peer)
                self.gate.gone(event.peer)
                if self.fetches is not None:
                    self.fetches.forget(event.peer)
                who["watching"] = len(self.gate.watching)
                self.emit(SpectatorLeft(**who, reason=event.reason))  # type: ignore[arg-type]
            return
        verdict = self.gate.judge(event.peer, event.message)
        if verdict.decision is Decision.WELCOME:
            if not self.mesh.admit_spectator(event.peer):
                self.gate.gone(event.peer)
                return
            self.mesh.send_nowait(event.peer, self.genesis)
            for notice in self.notices():
                self.mesh.send_nowait(event.peer, notice)
            self.emit(SpectatorJoined(**self.gate.describe(event.peer)))  # type: ignore[arg-type]
        elif verdict.decision is Decision.SERVE:
            if self.fetches is not None:
                assert isinstance(event.message, wire.Fetch)
                self.fetches.request(event.peer, event.message)
        elif verdict.decision in (Decision.REFUSE, Decision.CUT):
            self.mesh.refuse(event.peer, verdict.reason, verdict.detail)

    @property
    def watching(self) -> int:
        return len(self.gate.watching)
