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
from p2p.record.chain import Accepted, entry_signing_input, step_hash
from p2p.table.demo import Count, Echo
from p2p.table.forming import seat_order_commit
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
    # an entry of another table is no evidence about this one: only its sender is named,
    # to us alone (ForeignEntry), and it is never kept
    expected = {"ForgedSignature", "Impersonation", "OutOfTurn", "ForeignEntry", "Equivocation"}
    for i, result in enumerate(results):
        if i == CHEATER:
            continue
        kinds = {c.kind for c in result.cheats}
        assert expected <= kinds, kinds
        assert {c.culprit for c in result.cheats} == {cheater_slot}
        assert any(e.seat == cheater_slot for e in result.record.evidence)
    heads = {r.record.head for r in results}
    assert len(heads) == 1 and all(r.record.finished for r in results)


SPLIT_DELAY_MS = 300
"""The split-view cheater commits this late, after the peers' connect-time fetches, so that
only the fork itself (an honest entry chained to an unknown hash) can give it away."""
SPLIT_STALL_MS = 1000


class SplitViewCheater:
    """Shows one commitment to one honest seat and another to the rest (split view).

    Both versions are valid on their own: each side gets the reveal that
    matches the commitment it saw, chained to that side's step-1 hash, so no
    peer ever receives both versions from the cheater itself.
    """

    def __init__(self) -> None:
        self.alt_commit: wire.Signed | None = None
        self.alt_reveal = None
        self.sides: tuple[list[bytes], list[bytes]] | None = None

    def _split(self, node) -> tuple[list[bytes], list[bytes]]:
        if self.sides is None:
            honest = [s for s in range(node.manifest.n_seats) if s != node.my_seat]
            keys = [node.manifest.seats[s].identity for s in honest]
            self.sides = (keys[:1], keys[1:])
        return self.sides

    def send_own(self, node, kind: str, own: Accepted) -> None:
        rec, mesh, me = node.record, node.mesh, node.my_seat
        side_a, side_b = self._split(node)
        if kind == "commit":
            alt_body, self.alt_reveal = seat_order_commit(rec.table_id, me)
            alt = wire.Entry(rec.table_id, me, own.step, own.entry.prev, alt_body)
            self.alt_commit = _signed(node, alt)
            mesh.broadcast(own.signed, side_a)
            mesh.broadcast(self.alt_commit, side_b)
        elif kind == "reveal":
            assert self.alt_commit is not None
            step1 = {s: slot.signed.entry for s, slot in rec.steps[1].items()}
            step1[me] = self.alt_commit.entry
            prev_b = step_hash(1, rec.hashes[0], step1)  # side B's view of step 1
            alt = wire.Entry(rec.table_id, me, own.step, prev_b, self.alt_reveal)
            mesh.broadcast(own.signed, side_a)
            mesh.broadcast(_signed(node, alt), side_b)
        else:
            mesh.broadcast(own.signed)


async def test_split_view_equivocation_is_named_by_every_honest_peer(tmp_path: Path) -> None:
    cheater = SplitViewCheater()
    with trio.fail_after(TIMEOUT_S):
        async with no_leaks():
            results = await run_table(
                tmp_path,
                4,
                steps=30,
                stall_after_ms=SPLIT_STALL_MS,
                per_node=lambda i: (
                    {"behaviour": cheater, "demo_pace_ms": SPLIT_DELAY_MS} if i == CHEATER else {}
                ),
            )
    assert cheater.alt_commit is not None and cheater.sides is not None
    cheater_slot = results[CHEATER].my_seat
    for i, result in enumerate(results):
        if i == CHEATER:
            continue
        kinds = {c.kind for c in result.cheats}
        assert "Equivocation" in kinds, (i, result.cheats)
        # only the cheater is named: the chain breaks it caused are not blamed on honest seats
        assert {c.culprit for c in result.cheats} == {cheater_slot}, result.cheats
        proofs = [e for e in result.record.evidence if e.seat == cheater_slot]
        assert proofs and all(len(e.evidence) == 4 for e in proofs)
        # the forked commitment itself (step 1) is proven, not just a later symptom
        steps = {wire.decode_body(e.evidence[0], wire.Entry).step for e in proofs}
        assert 1 in steps, steps
        assert result.aborted == cheater_slot


class Relayer:
    """Sends the victim's entries from an earlier table (same players, same keys), bare
    and inside a ``Fetched`` reply, to frame the victim at this table."""

    def __init__(self, old: list[wire.Signed]) -> None:
        self.old = old
        self.done = False

    def after_send(self, node, kind: str, own: Accepted) -> None:
        if self.done or kind != "count":
            return
        self.done = True
        mesh, table_id = node.mesh, node.record.table_id
        for signed in self.old:
            mesh.broadcast(signed)
        mesh.broadcast(wire.Fetched(table_id, tuple(self.old), False))


async def test_an_entry_from_an_earlier_table_frames_no_one(tmp_path: Path) -> None:
    """Issue 22, critical: friends play again with the same identity keys; one relays the
    victim's signed entries from their earlier table.  Nobody convicts the victim, no such
    entry is kept as evidence, only the relaying seat is named (to each receiver), and the
    game finishes with one record everywhere."""
    victim, relayer = 2, 1
    with trio.fail_after(TIMEOUT_S):
        first = await run_table(tmp_path, 3, steps=6)
    earlier = first[victim].record
    old = [
        s
        for s in earlier.signed_from(1)
        if wire.decode_body(s.entry, wire.Entry).seat == first[victim].my_seat
    ]
    assert old
    agent = Relayer(old)
    with trio.fail_after(TIMEOUT_S):
        async with no_leaks():
            results = await run_table(
                tmp_path,
                3,
                steps=30,
                per_node=lambda i: {"behaviour": agent} if i == relayer else {},
            )
    assert agent.done
    victim_slot, relayer_slot = results[victim].my_seat, results[relayer].my_seat
    assert results[victim].record.manifest.seats[victim_slot].identity == (
        first[victim].record.manifest.seats[first[victim].my_seat].identity
    )
    for i, result in enumerate(results):
        assert result.convicted is None
        assert all(c.culprit != victim_slot for c in result.cheats), result.cheats
        assert not result.record.evidence
        if i != relayer:
            assert {c.kind for c in result.cheats} == {"ForeignEntry"}
            assert {c.culprit for c in result.cheats} == {relayer_slot}
    heads = {r.record.head for r in results}
    assert len(heads) == 1 and all(r.record.finished for r in results)
