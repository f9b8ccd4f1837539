"""Whole games between real peer processes on loopback: every seat ends with the same
result, and every record file verifies offline to that result."""

from __future__ import annotations

import pytest

from tests.p2p._games import GameTable, PeerOutcome, tables_side_by_side, verify_all_json

SHORT = {
    "slave": {"games": 1},
    "slajens": {"rounds": 3},
    "slaiga": {},
    "honest-slaiga": {},
    "aight-of-spaides": {},
}


def play(tmp_path, game: str, seats: int, options: dict) -> list[PeerOutcome]:
    with GameTable(tmp_path, game, seats, options) as table:
        return table.start().finish(timeout=600)


def check(outs: list[PeerOutcome], seats: int) -> list[dict]:
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


@pytest.fixture(scope="module")
def short_games(request, tmp_path_factory):
    """Every game of :data:`SHORT`, played two tables at a time in the background; each
    game's test checks its own table."""
    root = tmp_path_factory.mktemp("games")
    return tables_side_by_side(request, "game", lambda g: play(root / g, g, 4, SHORT[g]))


@pytest.mark.parametrize("game", sorted(SHORT))
def test_every_game_between_four_peer_processes(short_games, game):
    check(short_games[game].result(), 4)


@pytest.mark.parametrize(("game", "seats"), [("slaiga", 6), ("aight-of-spaides", 8)])
def test_larger_tables(tmp_path, game, seats):
    check(play(tmp_path, game, seats, {"max_turns": 8}), seats)
