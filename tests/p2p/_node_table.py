"""A real :class:`p2p.net.node.Node` at slot 0 of an in-process game table (no network).

The other seats are :class:`p2p.table.seat.SeatDriver` s with records of their own, as in
:mod:`p2p.table.local_table`; entries are routed in memory: the other seats' signed
envelopes go through the node's own receiving path (``Node._offer``: its table
session keeps evidence and convicts), and the node's own entries, signed, fsynced and written
by ``Node._act`` (through the node's table session), are taken from its ``send_own`` hook and offered to the others.
The node's mesh is a real loopback mesh that nobody dials (its broadcasts reach
no one).  So a test can put one bad envelope into one honest peer's path and then
check the record file that peer wrote, in well under a second.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import trio

from crypto.identity import IdentityKey
from crypto.seal import SealKey
from p2p import wire
from p2p.net.mesh import open_mesh
from p2p.net.node import Node
from p2p.net.state import _create_secret, record_path, secret_path
from p2p.record.chain import Accepted, Record
from p2p.record.store import RecordFile
from p2p.table.local_table import game_genesis
from p2p.table.seat import SeatDriver
from p2p.table.session import TableSession
from tests.p2p._nethelpers import LOOPBACK
from tests.p2p._session_table import PLAYERS, InMemoryTable, other_drivers
from tests.p2p._tables import config


class _Outbox:
    """``NodeConfig.behaviour``: the node's own entries go here instead of the mesh."""

    def __init__(self) -> None:
        self.sent: list[wire.Signed] = []

    def send_own(self, node: Node, kind: str, own: Accepted) -> None:
        self.sent.append(own.signed)


class NodeTable(InMemoryTable):
    """Slot 0 is ``node``; ``drivers[slot]`` plays every other slot."""

    def __init__(self, node: Node, drivers: dict[int, SeatDriver], outbox: _Outbox) -> None:
        super().__init__(drivers)
        self.node = node
        self.outbox = outbox

    @property
    def record(self) -> Record:
        assert self.node.record is not None
        return self.node.record

    def to_me(self, signed: wire.Signed, author: int) -> None:
        self.node._offer(signed, via=author)

    def act(self) -> list[wire.Signed]:
        self.node._act()
        sent, self.outbox.sent = self.outbox.sent, []
        return sent

    def ended(self) -> bool:
        return self.node._ended()

    @property
    def session(self) -> TableSession:
        assert self.node.session is not None
        return self.node.session

    def now(self) -> float:
        return trio.current_time()


@asynccontextmanager
async def node_table(
    tmp: Path,
    game: str,
    seats: int,
    limits: tuple[int, int, int, int] | None = None,
    **cfg: Any,
) -> AsyncIterator[NodeTable]:
    """The table, with ``limits`` as in :func:`p2p.table.local_table.game_genesis`; ``cfg``
    goes to the node's :class:`p2p.net.node.NodeConfig`."""
    outbox = _Outbox()
    node = Node(config(tmp, 0, behaviour=outbox, **cfg))
    ids = [node.identity] + [IdentityKey.generate() for _ in range(seats - 1)]
    seals = [node.table_seal] + [SealKey.generate() for _ in range(seats - 1)]
    names = PLAYERS[:seats]
    genesis, ids, seals = game_genesis(
        game, seats, identities=ids, seals=seals, limits=limits, names=names
    )
    node._set_genesis(genesis)
    assert node.manifest is not None
    table_id = node.manifest.table_id
    path = record_path(node.cfg.state_dir, table_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    node.table_secret, node.table_seal = _create_secret(
        secret_path(node.cfg.state_dir, table_id), node.table_seal
    )
    node.store = RecordFile.create(path, genesis)
    node._new_record()
    drivers = other_drivers(genesis, ids, seals)
    async with open_mesh(node.identity, table_id, host=LOOPBACK) as mesh:
        node.mesh = mesh
        try:
            yield NodeTable(node, drivers, outbox)
        finally:
            node.store.close()
