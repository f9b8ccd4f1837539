"""Whole games between real peer processes on loopback: every seat ends with the same
result, and every record file verifies offline to that result."""

from __future__ import annotations

import pytest

from tests.p2p._games import GameTable, verify_all_json

SHORT = {
    "slave": {"games": 1},
    "slajens": {"rounds": 3},
    "slaiga": {},
    "honest-slaiga": {},
    "aight-of-spaides": {},
}


def play_and_check(tmp_path, game: str, seats: int, options: dict) -> list[dict]:
    with GameTable(tmp_path, game, seats, options) as table:
        outs = table.start().finish(timeout=600)
    for out in outs:
        assert out.returncode == 0, out.stderr[-3000:]
        assert out.result is not None
    results = [o.result for o in outs]
    for key in ("ranking", "state_hash", "record_head", "table_id"):
        assert len({repr(r[key]) for r in results}) == 1, (key, [r[key] for r in results])
    assert all(r["culprit"] is None and r["finished"] for r in results)
    assert sorted(r["seat"] for r in results) == list(range(seats))
    assert sorted(results[0]["ranking"]) == list(range(seats))
    for r, (code, report) in zip(
        results, verify_all_json([r["record"] for r in results]), strict=True
    ):
        assert code == 0, report
        assert report["ok"] and report["finished"]
        assert report["ranking"] == r["ranking"]
        assert report["state_hash"] == r["state_hash"]
        assert report["head"] == r["record_head"]
    return results


@pytest.mark.parametrize("game", sorted(SHORT))
def test_every_game_between_four_peer_processes(tmp_path, game):
    play_and_check(tmp_path, game, 4, SHORT[game])


@pytest.mark.slow
@pytest.mark.parametrize(("game", "seats"), [("slaiga", 6), ("aight-of-spaides", 8)])
def test_larger_tables(tmp_path, game, seats):
    play_and_check(tmp_path, game, seats, {"max_turns": 8})
