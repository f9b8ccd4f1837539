"""Whole games between real peer processes on loopback: every seat ends with the same
result, and every record file verifies offline to that result."""

from __future__ import annotations

from pathlib import Path

import pytest

import p2p.table.game_rule  # noqa: F401  (registers the manifest's 'game' protocol)
from crypto.seal import SealKey
from p2p.net.state import SEAL_FILE
from p2p.record.store import load
from p2p.table.forming import Manifest
from p2p.wire import decode_body
from tests.p2p._games import GameTable, PeerOutcome, tables_side_by_side, verify_all_json

SHORT = {
    "slave": {"games": 1},
    "slajens": {"rounds": 3},
    "slaiga": {},
    "honest-slaiga": {},
    "aight-of-spaides": {},
}


Played = tuple[list[PeerOutcome], list[Path]]
"""Each peer's outcome, and each peer's state folder."""


def play(tmp_path, game: str, seats: int, options: dict) -> Played:
    with GameTable(tmp_path, game, seats, options) as table:
        outs = table.start().finish(timeout=600)
        return outs, [table.state_dir(i) for i in range(seats)]


def check(played: Played, seats: int) -> list[dict]:
    outs, state_dirs = played
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
    check_forward_secrecy(state_dirs, results[0]["record"])
    return results


def check_forward_secrecy(state_dirs: list[Path], record: str) -> None:
    """Once the table ended, no peer keeps its per-table secret (key share, dice, gift-box
    keys, the table's seal key), and the manifest names per-table seal keys, not the
    peers' long-term ones: a long-term key and the record open no card."""
    manifest = decode_body(load(Path(record)).genesis.manifest, Manifest)
    table_keys = {m.seal_key for m in manifest.seats}
    for d in state_dirs:
        assert not list((d / "tables").glob("*.secret")), f"{d}: table secret not erased"
        assert list((d / "tables").glob("*.rec")), f"{d}: the record must stay"
        long_term = SealKey.from_private_bytes((d / SEAL_FILE).read_bytes()).public
        assert long_term not in table_keys


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
