"""kill -9 a peer in the middle of a game (mid-shuffle, mid-dice, while its player is
deciding), then ``slaiga resume`` it: the game finishes with the same record everywhere."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from p2p.errors import CorruptRecordFile
from p2p.record.store import load
from tests.p2p._games import GameTable, PeerOutcome, tables_side_by_side, verify_all_json

VICTIM = 1
DEADLINE_S = 120


def entries_in(table: GameTable, i: int) -> int:
    files = list((table.state_dir(i) / "tables").glob("*.rec"))
    if not files:
        return 0
    try:
        return len(load(files[0]).entries)
    except (CorruptRecordFile, OSError, ValueError):
        return 0


CASES = {
    # (game, options, kill after this many entries, the victim's think time in ms)
    "mid-shuffle": ("slave", {"games": 1}, 12, 0),  # the first shuffles: keys done, deck in flight
    "mid-dice": ("slajens", {"rounds": 3}, 60, 0),  # dice commit and reveal rounds all along
    "deciding": ("slajens", {"rounds": 3}, 30, 300),  # the victim is deciding most of the time
}


def play(tmp_path: Path, case: str) -> tuple[list[PeerOutcome], int]:
    """Play the table of ``case``, killing the victim once its record holds enough entries
    and resuming it; every peer's outcome, and how many entries the victim held when killed."""
    game, options, kill_after, think_ms = CASES[case]
    extra = ["--linger", "15", "--stall-after-ms", "500"]
    if think_ms:
        extra += ["--bot-think-ms", str(think_ms)]
    with GameTable(tmp_path, game, 3 if game == "slajens" else 4, options, extra=extra) as table:
        table.start()
        deadline = time.monotonic() + DEADLINE_S
        while entries_in(table, VICTIM) < kill_after:
            assert time.monotonic() < deadline, "the game never got going"
            assert table.peers[VICTIM].proc.poll() is None, "the victim ended early"
            time.sleep(0.02)
        table.peers[VICTIM].kill()
        killed_at = entries_in(table, VICTIM)
        table_id = next((table.state_dir(VICTIM) / "tables").glob("*.rec")).stem
        time.sleep(0.5)
        table.start_peer(VICTIM, ["resume", table_id])
        return table.finish(timeout=300), killed_at


@pytest.fixture(scope="module")
def tables(request, tmp_path_factory):
    """Every case's table, two at a time in the background (a table waits on its killed
    peer and on its thinking bot much of the time); each case's test checks its own."""
    root = tmp_path_factory.mktemp("resume")
    return tables_side_by_side(request, "case", lambda case: play(root / case, case))


@pytest.mark.parametrize("case", list(CASES))
def test_kill_and_resume_mid_game(tables, case):
    outs, killed_at = tables[case].result()
    for out in outs:
        assert out.returncode == 0, out.stderr[-3000:]
    results = [o.result for o in outs]
    assert killed_at >= CASES[case][2]
    for key in ("ranking", "state_hash", "record_head"):
        assert len({repr(r[key]) for r in results}) == 1, (key, results)
    for r, (code, report) in zip(
        results, verify_all_json([r["record"] for r in results]), strict=True
    ):
        assert code == 0 and report["ranking"] == r["ranking"], report
