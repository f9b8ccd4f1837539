"""Helpers to run whole tables in one Trio run (P2's network tests)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import trio

from p2p.node import Node, NodeConfig, TableResult


def config(tmp: Path, i: int, **kw: Any) -> NodeConfig:
    base: dict[str, Any] = {
        "name": f"p{i}",
        "state_dir": tmp / f"p{i}",
        "use_discovery": False,
        "interface": "127.0.0.1",
        "lobby_scan_s": 1.5,
        "linger_s": 5.0,
    }
    base.update(kw)
    return NodeConfig(**base)


async def run_table(
    tmp: Path, n: int, *, steps: int = 0, discovery: bool = False, per_node: Any = None, **kw: Any
) -> list[TableResult]:
    """Open a table with peer 0 and join n-1 peers (by --peer, or by zeroconf)."""
    results: dict[int, TableResult] = {}

    def cfg(i: int) -> NodeConfig:
        extra = dict(kw)
        if per_node is not None:
            extra.update(per_node(i))
        return config(tmp, i, demo_steps=steps, use_discovery=discovery, **extra)

    async with trio.open_nursery() as nursery:
        opener = Node(cfg(0))

        async def run_opener() -> None:
            results[0] = await opener.open("slave", n, {"variant": "classic"})

        nursery.start_soon(run_opener)
        while opener.mesh is None or opener.mesh.listen_port is None:
            await trio.sleep(0.01)
        if discovery:
            while opener._announcement is None:
                await trio.sleep(0.01)
        address = opener.mesh.address
        for i in range(1, n):

            async def run_joiner(i: int = i) -> None:
                node = Node(cfg(i))
                if discovery:
                    results[i] = await node.join(opener.mesh.table_id.hex())
                else:
                    results[i] = await node.join(peer=address)

            nursery.start_soon(run_joiner)
    return [results[i] for i in range(n)]
