"""Verdicts a player can check: the evidence behind every conviction is in the record file,
and ``slaiga verify`` names the same seat the live peer named (issue 22).

In process: a real :class:`p2p.node.Node` at an in-memory table
(tests/p2p/_node_table.py), so each case takes well under a second.
"""

from __future__ import annotations

from pathlib import Path

import trio

from p2p import wire
from p2p.demo import Count
from p2p.record import entry_signing_input
from p2p.seat import game_of
from p2p.verify import verify_record_file
from tests.p2p._node_table import node_table

TIMEOUT_S = 30
CHEATER = 2


async def test_a_held_entry_refused_at_its_step_is_kept_and_verify_names_its_author(
    tmp_path: Path,
) -> None:
    """A cheater's entry for a future step is held; when its step comes the node convicts
    the cheater, and the signed envelope is in the record file, so ``verify`` names the
    same seat (before the fix it said "Unfinished" and named no one)."""
    with trio.fail_after(TIMEOUT_S):
        async with node_table(tmp_path, "high-card", 3) as t:
            t.run_until(lambda t: game_of(t.record) is not None and t.record.step >= 8)
            rec = t.record
            assert not rec.finished and t.node.convicted is None
            # signed for the next step, chained to the current head: held, checkable only
            # when its step comes (and then refused: nobody owes a 'count' in this game)
            cheater = t.drivers[CHEATER]
            raw = wire.encode_body(
                wire.Entry(rec.table_id, CHEATER, rec.step + 1, rec.head, Count(1))
            )
            bad = wire.Signed(raw, cheater.identity.sign(entry_signing_input(raw)))
            t.node._offer(bad, via=CHEATER)
            assert rec.held_count() == 1 and t.node.convicted is None
            t.run_until(lambda t: t.node.convicted is not None)
            convicted = t.node.convicted
            assert convicted is not None and convicted.culprit == CHEATER
            path = t.node.store.path
        report = verify_record_file(path)
    f = report.failure
    assert f is not None, report
    assert f.culprit == CHEATER and f.kind == convicted.kind, f
    assert [e.entry for e in f.evidence] == [raw]
