"""Cheats over the real mesh: each is rejected or detected by every honest peer, culprit named.

The cheater is a real peer at a real table over loopback TCP; after its
first honest ``count`` entry it also sends, over its authenticated
connections: a forged signature, an entry impersonating another seat, an
out-of-turn entry, an entry replayed from another table, a conflicting second
entry for the same step (equivocation) and a verbatim replay of its own
entry.  The table must still finish with identical records everywhere.
"""

from __future__ import annotations

import secrets
from pathlib import Path

import trio

from p2p import wire
from p2p.demo import Count, Echo
from p2p.record import Accepted, entry_signing_input
from tests.p2p._nethelpers import no_leaks
from tests.p2p._tables import run_table

TIMEOUT_S = 60
CHEATER = 1  # join order index of the cheater (node p1)


def _signed(node, entry: wire.Entry, key=None) -> wire.Signed:
    raw = wire.encode_body(entry)
    signer = key or node.identity
    return wire.Signed(raw, signer.sign(entry_signing_input(raw)))


class Cheater:
    def __init__(self) -> None:
        self.done = False

    def after_send(self, node, kind: str, own: Accepted) -> None:
        if self.done or kind != "count":
            return
        self.done = True
        rec, mesh, me = node.record, node.mesh, node.my_seat
        entry = own.entry
        other = (me + 1) % rec.manifest.n_seats
        step, prev = entry.step, entry.prev
        bad = [
            # forged: right fields, signature of junk
            wire.Signed(
                wire.encode_body(wire.Entry(rec.table_id, me, step + 1, rec.head, Count(1))),
                secrets.token_bytes(64),
            ),
            # impersonation: we sign an entry that claims to be another seat's
            _signed(node, wire.Entry(rec.table_id, other, rec.step, rec.head, Count(99))),
            # out of turn: an echo when nobody owes one
            _signed(node, wire.Entry(rec.table_id, me, rec.step, rec.head, Echo(0))),
            # replayed from another table
            _signed(node, wire.Entry(secrets.token_bytes(16), me, step, prev, entry.body)),
            # equivocation: a second, different entry for the step we just signed
            _signed(node, wire.Entry(rec.table_id, me, step, prev, Count(entry.body.value + 7))),
        ]
        for signed in bad:
            mesh.broadcast(signed)
        mesh.broadcast(own.signed)  # verbatim replay: must be ignored as a duplicate


async def test_cheats_are_caught_and_named(tmp_path: Path) -> None:
    cheater = Cheater()
    with trio.fail_after(TIMEOUT_S):
        async with no_leaks():
            results = await run_table(
                tmp_path,
                4,
                steps=60,
                per_node=lambda i: {"behaviour": cheater} if i == CHEATER else {},
            )
    assert cheater.done
    cheater_slot = results[CHEATER].my_seat
    expected = {"ForgedSignature", "Impersonation", "OutOfTurn", "WrongTable", "Equivocation"}
    for i, result in enumerate(results):
        if i == CHEATER:
            continue
        kinds = {c.kind for c in result.cheats}
        assert expected <= kinds, kinds
        assert {c.culprit for c in result.cheats} == {cheater_slot}
        assert any(e.seat == cheater_slot for e in result.record.evidence)
    heads = {r.record.head for r in results}
    assert len(heads) == 1 and all(r.record.finished for r in results)
