"""Shared table fixtures: an in-memory Table (record/store/silence tests, no network),
:func:`write_seat_record` (one seat's record file of an in-process game table), and
:func:`run_table`, which runs whole tables of real nodes in one Trio run (network tests)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import trio

from crypto.identity import IdentityKey
from crypto.seal import SealKey
from p2p.net.node import Node, NodeConfig, TableResult
from p2p.record.chain import Record, entry_signing_input
from p2p.record.store import RecordFile
from p2p.table.demo import DemoProtocol, next_body
from p2p.table.forming import (
    Manifest,
    Opening,
    make_genesis,
    manifest_bytes,
    new_table_id,
    seat_order_commit,
    sign_manifest,
    table_rule,
)
from p2p.table.local_table import LocalTable
from p2p.wire import PROTOCOL_VERSION, Body, Entry, Member, Signed, encode_body


def write_seat_record(table: LocalTable, slot: int, path: Path) -> Path:
    """Seat ``slot``'s record file of an in-process table, as its node writes it: the
    entries it accepted, then (as evidence) every signed entry of the table it refused."""
    accepted = table.records[slot].signed_from(1)
    kept = {s.signature for s in accepted}
    with RecordFile.create(path, table.genesis) as f:
        for signed in accepted + [s for s in table.log if s.signature not in kept]:
            f.append(signed)
    return path


class Table:
    """n seats with keys, a signed genesis, and one Record per seat."""

    def __init__(
        self,
        n: int,
        steps: int = 40,
        round_every: int = 5,
        table_id: bytes | None = None,
        keys: list[IdentityKey] | None = None,
    ) -> None:
        self.n = n
        self.keys = keys or [IdentityKey.generate() for _ in range(n)]
        self.manifest = Manifest(
            PROTOCOL_VERSION,
            table_id or new_table_id(),
            "demo",
            {"rounds": round_every},
            tuple(
                Member(f"p{i}", k.public, SealKey.generate().public, f"127.0.0.1:{5000 + i}")
                for i, k in enumerate(self.keys)
            ),
            5000,
            60000,
            DemoProtocol(steps, round_every),
        )
        raw = manifest_bytes(self.manifest)
        self.genesis = make_genesis(
            raw, {i: sign_manifest(k, raw) for i, k in enumerate(self.keys)}
        )
        self.rule = table_rule
        self.records = [Record(self.genesis, self.rule) for _ in range(n)]
        self.secret_reveals: dict[int, Opening] = {}

    def honest_body(self, seat: int, rec: Record | None = None) -> Body | None:
        rec = rec or self.records[seat]
        kinds = rec.owes(seat)
        if not kinds:
            return None
        (kind,) = kinds
        if kind == "commit":
            c, r = seat_order_commit(rec.table_id, seat)
            self.secret_reveals[seat] = r
            return c
        if kind == "reveal":
            return self.secret_reveals[seat]
        return next_body(rec.rule.next_rule, kind)

    def act(self, seat: int) -> Signed | None:
        body = self.honest_body(seat)
        if body is None:
            return None
        return self.records[seat].sign(self.keys[seat], seat, body).accepted[0].signed

    def craft(
        self,
        seat: int,
        step: int,
        body: Body,
        *,
        prev: bytes | None = None,
        key: IdentityKey | None = None,
        table_id: bytes | None = None,
    ) -> Signed:
        rec = self.records[seat]
        entry = Entry(
            table_id or rec.table_id,
            seat,
            step,
            rec.hashes[step - 1] if prev is None else prev,
            body,
        )
        raw = encode_body(entry)
        return Signed(raw, (key or self.keys[seat]).sign(entry_signing_input(raw)))

    def run(self, rng: random.Random, dup_rate: float = 0.2, max_rounds: int = 10_000) -> None:
        inbox: list[list[Signed]] = [[] for _ in range(self.n)]
        for _ in range(max_rounds):
            if all(r.finished for r in self.records) and not any(inbox):
                return
            for s in rng.sample(range(self.n), self.n):
                signed = self.act(s)
                if signed is not None:
                    for j in range(self.n):
                        if j != s:
                            inbox[j].append(signed)
                            if rng.random() < dup_rate:
                                inbox[j].append(signed)
            for j in range(self.n):
                rng.shuffle(inbox[j])
                # deliver only part of the inbox now: the rest arrives later, out of order
                k = rng.randint(0, len(inbox[j]))
                now, inbox[j] = inbox[j][:k], inbox[j][k:]
                for signed in now:
                    self.records[j].offer(signed)
        raise AssertionError("protocol did not finish")


def advance_to_demo(t: Table) -> None:
    """Run the commit and reveal rounds among everyone (in-order delivery)."""
    for _ in range(2):
        sent = [t.act(s) for s in range(t.n)]
        for j in range(t.n):
            for s, signed in enumerate(sent):
                if s != j:
                    t.records[j].offer(signed)


# -- whole tables of real nodes (one Trio run) --------------------------------


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
