"""A table that survives a lost player (issue 21), with real peer processes on loopback.

Four bot peers open a table with ``survive=on``; one is killed with ``kill -9`` at a
random point after the key round and never comes back.  Once it has been silent past the
table's absence limit (``absent_after``), each remaining peer signs ``absent`` naming it;
with every remaining seat's signature its seat is out, the others act for it together
(token shares from the escrow) and its game's leaving rule applies.  The three finish,
agree on ranking, state hash and record head, and every record verifies, naming the lost
seat absent, never a cheat.  One table per game; the slow tier has the five.
"""

from __future__ import annotations

import random
import time

import pytest

from p2p.errors import CorruptRecordFile
from p2p.record.store import load
from tests.p2p._games import GameTable, verify_all_json

DEADLINE_S = 120
ABSENT_AFTER_S = 2


def entries_in(table: GameTable, i: int) -> int:
    files = list((table.state_dir(i) / "tables").glob("*.rec"))
    if not files:
        return 0
    try:
        return len(load(files[0]).entries)
    except (CorruptRecordFile, OSError, ValueError):
        return 0


GAMES = [
    pytest.param("slajens", {"rounds": 2}, id="slajens"),
    pytest.param("slave", {"games": 1}, id="slave", marks=pytest.mark.slow),
    pytest.param("slaiga", {}, id="slaiga", marks=pytest.mark.slow),
    pytest.param("honest-slaiga", {}, id="honest-slaiga", marks=pytest.mark.slow),
    pytest.param("aight-of-spaides", {}, id="aight-of-spaides", marks=pytest.mark.slow),
]


def play_and_kill(tmp_path, game, options, victims, seed):
    """Play ``game`` at four peers, ``kill -9`` the ``victims`` together once the victim
    0 holds a random number of entries past the escrow; returns the survivors' outcomes."""
    rng = random.Random(seed)
    opts = {"survive": "on", "absent_after": ABSENT_AFTER_S, **options}
    extra = ["--linger", "5"]
    with GameTable(tmp_path, game, 4, opts, extra=extra) as table:
        table.start()
        kill_after = rng.randrange(20, 60)
        deadline = time.monotonic() + DEADLINE_S
        while entries_in(table, victims[0]) < kill_after:
            assert time.monotonic() < deadline, "the game never got going"
            assert table.peers[victims[0]].proc.poll() is None, "the game ended too soon"
            time.sleep(0.01)
        for v in victims:
            table.peers[v].kill()  # SIGKILL: gone for good, nothing said
        outs = table.finish(timeout=240)
    return [o for o in outs if o.seat_slot not in victims], kill_after


@pytest.mark.parametrize(("game", "options"), GAMES)
def test_a_table_survives_a_peer_killed_for_good(tmp_path, game, options):
    victim = 2
    outs, _ = play_and_kill(tmp_path, game, options, [victim], seed=hash(game) % 1000)
    for out in outs:
        assert out.returncode == 0, out.stderr[-3000:]
    results = [o.result for o in outs]
    for key in ("ranking", "state_hash", "record_head"):
        assert len({repr(r[key]) for r in results}) == 1, (key, results)
    for r in results:
        assert r["culprit"] is None and r["finished"], r
        assert [p["name"] for p in r["left"]] == [f"p{victim}"], r  # absent, never a cheat
    reports = verify_all_json([r["record"] for r in results])
    for r, (code, report) in zip(results, reports, strict=True):
        assert code == 0, report
        assert report["ranking"] == r["ranking"] and report["culprit"] is None, report
        assert [a["name"] for a in report["absent"]] == [f"p{victim}"], report
