"""Which of our own entries must be fsynced before they leave (p2p/record/store.py).

An own entry of a kind in ``REDERIVED_KINDS`` is sent before it is durable.  That is
safe only if a peer that crashed and lost it from its file signs the very same
envelope for that step again.  Here every such entry of a whole in-process game is
made again by a fresh seat that has only what survives a crash (its keys and table
secret) and the entries before it, and must come out byte for byte the same.
"""

from __future__ import annotations

import pytest

from p2p.record.chain import Record
from p2p.record.store import REDERIVED_KINDS, needs_sync
from p2p.table import local_table
from p2p.table.seat import SeatDriver, rule_factory
from p2p.wire import Entry, decode_body


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
