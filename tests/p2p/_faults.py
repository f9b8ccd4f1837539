"""Checks shared by the fault tests that play a real game (tests/p2p/test_netns.py,
tests/p2p/test_pause.py): how far a peer's record has got, and what every peer must
agree on once a game that went through a fault has finished."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from p2p.errors import CorruptRecordFile
from p2p.record.store import load
from tests.p2p._games import verify_all_json

NAMING_EVENTS = frozenset({"cheat", "convicted", "abandoned", "aborted", "divergent"})
"""Progress events (``--events``) that name a seat, or say the records disagree."""


def entries_in(tables: Path) -> int:
    """Entries in the one record file under a state folder's ``tables`` (0 before it exists)."""
    files = list(tables.glob("*.rec")) if tables.exists() else []
    if not files:
        return 0
    try:
        return len(load(files[0]).entries)
    except (CorruptRecordFile, OSError, ValueError):
        return 0  # caught between a frame's header and its payload: try again


def named(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The events in which a peer names a seat (or sees a different record)."""
    return [e for e in events if e["event"] in NAMING_EVENTS]


def check_same_finished_game(results: list[dict[str, Any]], seats: int) -> None:
    """Every peer finished the same game with nobody blamed, and each one's record file
    passes ``slaiga verify`` (a real subprocess, every file at once) with that very result."""
    assert len(results) == seats
    for key in ("table_id", "ranking", "state_hash", "record_head"):
        assert len({repr(r[key]) for r in results}) == 1, (key, [r[key] for r in results])
    assert all(r["finished"] and r["culprit"] is None for r in results), results
    assert sorted(r["seat"] for r in results) == list(range(seats))
    assert sorted(results[0]["ranking"]) == list(range(seats))
    verified = verify_all_json([r["record"] for r in results])
    for r, (code, report) in zip(results, verified, strict=True):
        assert code == 0, (r["record"], report)
        assert report["ok"] and report["finished"], report
        assert report["head"] == r["record_head"]
        assert report["state_hash"] == r["state_hash"]
        assert report["ranking"] == r["ranking"]
