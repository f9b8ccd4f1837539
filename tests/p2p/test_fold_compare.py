"""Our seat engine compared with the table's after every action round
(``GameRule._compare``, p2p/table/game_rule/fold.py).

Each peer runs its own seat's engine, which learns faces the table's seatless engine
does not; the two must agree on the public state after every round (docs/design.md).
The tests count hashing work (calls of ``Game.state_hash``, never time): the check
runs every round without hashing either engine, a difference is still found at the
round it starts, and a difference that ``==`` cannot see is found by the hashes
compared at the game's end, before the result is signed.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from engine.game import Game
from p2p.errors import FoldFailed
from p2p.table import local_table
from p2p.table.game_rule import ACTION_KIND
from p2p.table.seat import game_of
from p2p.wire import Entry, Signed, decode_body

GAME, SEATS, OPTIONS = "slajens", 2, {"rounds": 3}  # dice only: no shuffle proofs, cheap
TAMPERED = 1
AFTER = 12
"""Entries signed before the seat engine is tampered with."""


def _play(
    monkeypatch: pytest.MonkeyPatch,
    tamper: Callable[[Game], None] | None = None,
    after: int = 0,
    tables: list[local_table.LocalTable] | None = None,
) -> tuple[local_table.LocalTable, list[int]]:
    """Play a table to its end, counting ``Game.state_hash`` calls (in ``hashes[0]``);
    ``tamper`` changes slot TAMPERED's seat engine once ``after`` entries are signed.
    The table is appended to ``tables`` (to look at it after a failure)."""
    hashes = [0]
    state_hash = Game.state_hash

    def counted(self: Game) -> str:
        hashes[0] += 1
        return state_hash(self)

    monkeypatch.setattr(Game, "state_hash", counted)
    table = local_table.new_table(GAME, SEATS, OPTIONS)
    if tables is not None:
        tables.append(table)

    def on_entry(t: local_table.LocalTable) -> None:
        if tamper is not None and len(t.log) == after:
            rule = game_of(t.drivers[TAMPERED].record)
            assert rule is not None and rule.mine is not None
            tamper(rule.mine.engine)

    local_table.run(table, on_entry=on_entry)
    return table, hashes


def _entry(signed: Signed) -> Entry:
    return decode_body(signed.entry, Entry)


def _action_rounds(table: local_table.LocalTable) -> int:
    return len({e.step for e in table.records[0].entries() if e.body.TAG == ACTION_KIND})


def test_every_round_is_compared_without_hashing_either_engine(monkeypatch):
    table, hashes = _play(monkeypatch)
    assert not table.cheats and all(r.finished for r in table.records)
    rounds = _action_rounds(table)
    assert rounds >= 10
    # per seat: the table's final hash and our engine's, once; before, both engines'
    # states were hashed after every round (2 * rounds per seat)
    assert hashes[0] <= 2 * SEATS, f"{hashes[0]} state hashes for {rounds} action rounds"
    for r in table.records:
        rule = game_of(r)
        assert rule is not None and rule.done
        assert rule.states_compared >= rounds  # the check ran after every round
        assert rule.hashes_compared == 1  # the end's, before the result is signed


def test_a_difference_is_found_at_the_round_it_starts(monkeypatch):
    def miscount(engine: Game) -> None:
        engine.turns += 1  # public state that no later action repairs

    tables: list = []
    with pytest.raises(FoldFailed) as failed:
        _play(monkeypatch, miscount, after=AFTER, tables=tables)
    assert "state hash differs from the table's" in str(failed.value.__cause__)
    (table,) = tables
    # found by the next round's comparison: at most one action round after the tamper
    later = [e for e in map(_entry, table.log[AFTER:]) if e.body.TAG == ACTION_KIND]
    assert len({e.step for e in later}) <= 1, "found rounds late"
    rule = game_of(table.drivers[TAMPERED].record)
    assert rule.hashes_compared == 1  # ``==`` found it; the hashes confirmed it


def test_a_difference_equal_to_python_is_found_by_the_hashes_at_the_end(monkeypatch):
    """``False == 0`` in Python, but the state hash renders them apart: the rounds'
    ``==`` passes, and the end's comparison of both hashes finds it before signing."""

    def retype(engine: Game) -> None:
        assert engine.options["teams"] == 0
        engine.options["teams"] = False

    tables: list = []
    with pytest.raises(FoldFailed) as failed:
        _play(monkeypatch, retype, after=AFTER, tables=tables)
    assert "state hash differs from the table's" in str(failed.value.__cause__)
    (table,) = tables
    rule = game_of(table.drivers[TAMPERED].record)
    assert not rule.done  # found before the result was signed
