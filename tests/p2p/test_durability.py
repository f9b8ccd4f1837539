"""Which of our own entries must be fsynced before they leave (p2p/record/store.py).

An own entry of a kind in ``REDERIVED_KINDS`` is sent before it is durable.  That is
safe only if a peer that crashed and lost it from its file signs the very same
envelope for that step again.  Here every such entry of a whole in-process game is
made again by a fresh seat that has only what survives a crash (its keys and table
secret) and the entries before it, and must come out byte for byte the same.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
import trio

from p2p.net import durable as durable_module
from p2p.record.chain import Record
from p2p.record.store import REDERIVED_KINDS, load, needs_sync
from p2p.table import local_table
from p2p.table.seat import SeatDriver, rule_factory
from p2p.wire import Entry, decode_body
from tests.p2p._tables import run_table


def _keys(driver: SeatDriver):  # type: ignore[no-untyped-def]
    rule = driver.record.rule
    game = getattr(rule, "next_rule", None) or rule
    return game.mine.keys


@pytest.mark.parametrize(("game", "options"), [("slajens", {"rounds": 2})])
def test_every_entry_sent_without_fsync_is_made_again_byte_for_byte(game, options):
    table = local_table.new_table(game, 3, options)
    local_table.run(table)
    assert not table.cheats and all(r.finished for r in table.records)
    keys = [_keys(d) for d in table.drivers]
    remade = dict.fromkeys(REDERIVED_KINDS, 0)
    for slot, driver in enumerate(table.drivers):
        # a restarted seat: its keys and table secret, and a record rebuilt entry by entry
        fresh = SeatDriver(Record(table.genesis, rule_factory(keys[slot])), driver.identity, slot)
        for signed in table.log:
            entry = decode_body(signed.entry, Entry)
            kind = entry.body.TAG
            if entry.seat == slot and kind in REDERIVED_KINDS:
                assert fresh.owed_kind() == kind
                again = fresh.sign(fresh.machine_body()).accepted[0].signed
                assert again == signed, f"seat {slot} made another {kind} at step {entry.step}"
                remade[kind] += 1
            else:
                fresh.record.offer(signed)
    assert all(remade.values()), remade  # every kind sent without an fsync was tried


def test_drawn_and_chosen_entries_are_fsynced_before_they_leave():
    for kind in ("action", "key", "shuffle", "tokens", "remask", "proof", "sealed"):
        assert needs_sync(kind)
    for kind in REDERIVED_KINDS:
        assert not needs_sync(kind)


class _Durability:
    """``NodeConfig.behaviour``: at each own entry sent, is it in the fsynced part of the
    sender's file?  (``fsynced`` maps a record file to the bytes the last fsync covered.)"""

    def __init__(self, fsynced: dict[str, int]) -> None:
        self.fsynced = fsynced
        self.sent: list[tuple[str, bool]] = []

    def send_own(self, node, kind: str, accepted) -> None:  # type: ignore[no-untyped-def]
        path = str(node.store.path)
        data = Path(path).read_bytes()[: self.fsynced.get(path, 0)]
        self.sent.append((kind, accepted.signed.entry in data))
        node.mesh.broadcast(accepted.signed)


async def test_own_entries_are_fsynced_off_the_loop_before_they_leave(tmp_path, monkeypatch):
    """On a slow disk the record loop makes its fsync in a worker thread (the loop runs
    on meanwhile), and nothing it signed leaves before that fsync covered it."""
    monkeypatch.setattr(durable_module, "INLINE_FSYNC_S", 0.0)  # all disks slow
    fsynced: dict[str, int] = {}
    threads: list[bool] = []
    real_fsync = os.fsync  # the real sync either spy stands for

    def fsync(fd: int) -> None:
        path = os.readlink(f"/proc/self/fd/{fd}")
        size = os.fstat(fd).st_size  # written (flushed) before the fsync: covered by it
        real_fsync(fd)
        fsynced[path] = max(fsynced.get(path, 0), size)
        threads.append(threading.get_ident() != threading.main_thread().ident)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "fdatasync", fsync)  # what the record file uses where it exists
    hooks = [_Durability(fsynced) for _ in range(3)]
    with trio.fail_after(60):
        results = await run_table(tmp_path, 3, steps=30, per_node=lambda i: {"behaviour": hooks[i]})
    assert len({r.record.head for r in results}) == 1
    sent = [s for h in hooks for s in h.sent if needs_sync(s[0])]
    assert sent and all(durable for _, durable in sent), sent
    assert any(threads), "no fsync of an own entry was made off the event loop's thread"


class _Grab:
    """``NodeConfig.behaviour`` that only notes its node (entries leave as usual)."""

    node = None

    def after_send(self, node, kind, accepted) -> None:  # type: ignore[no-untyped-def]
        self.node = node


async def test_received_entries_are_written_once_per_batch(tmp_path):
    """Other seats' entries that arrive together are handed to the OS in one write, before
    the record loop waits again (counts, not times), and the record file holds every entry
    of the record once the table ends."""
    grabs = [_Grab() for _ in range(4)]
    with trio.fail_after(60):
        results = await run_table(
            tmp_path, 4, steps=30, round_every=1, per_node=lambda i: {"behaviour": grabs[i]}
        )
    assert len({r.record.head for r in results}) == 1
    for grab in grabs:
        node = grab.node
        assert node is not None and node.record is not None and node.store is not None
        mine = node.my_seat
        received = [
            s for s in node.record.signed_from(1) if decode_body(s.entry, Entry).seat != mine
        ]
        assert 0 < node.durable.flushes < len(received)
        on_disk = load(node.store.path)
        # in the order they arrived (a step's entries may come in any order)
        assert sorted(s.entry for s in on_disk.entries) == sorted(
            s.entry for s in node.record.signed_from(1)
        )
