"""Every cheat of the catalogue that lives in game contributions, caught in process:
the real per-seat protocol code of every seat (``p2p.local_table``), one seat cheating
through the harness; every honest seat's record convicts exactly that seat."""

from __future__ import annotations

import random

import pytest

from engine import registry
from engine.players import BotPlayer
from p2p import local_table
from p2p.errors import CheatDetected
from p2p.seat import game_of
from tests.p2p.cheaters import GAME_OF, Cheater, force_signing, make_bot

IN_PROCESS = [
    "token",
    "shuffle-drop",
    "shuffle-duplicate",
    "shuffle-substitute",
    "remask",
    "foreign-card",
    "false-miss",
    "gift-not-highest",
    "false-complaint",
    "dice",
    "illegal-play",
]
OPTIONS = {"slave": {"games": 3}, "slajens": {"rounds": 3}}
TRIES = 6
RANDOM_HONEST = ("false-complaint", "false-miss")
"""Random (honest) opponents: they lose deals and shoot plain suit shots, which is what
gives a gift complaint or a miss claim its chance."""


def run_with_cheater(kind: str) -> tuple[local_table.LocalTable, int, Cheater]:
    game, seats = GAME_OF[kind]
    spec = registry.get(game)
    cheat_slot = 1
    for _ in range(TRIES):
        cheater = Cheater(kind)
        table = local_table.new_table(game, seats, OPTIONS.get(game), cheats={cheat_slot: cheater})
        driver = table.drivers[cheat_slot]
        force_signing(driver.record)

        def make_player(slot, seat, driver=driver, cheater=cheater):
            if slot == cheat_slot:
                return make_bot(spec, seat, cheater, lambda: driver.game)
            if kind in RANDOM_HONEST:  # honest players who give the cheater its chance
                return BotPlayer.make(spec.bots["random"], seat, random.Random(seat))
            return None

        local_table.run(table, make_player=make_player)
        if cheater.done:
            return table, cheat_slot, cheater
    pytest.fail(f"{kind}: the cheater never had its chance in {TRIES} games")


@pytest.mark.parametrize("kind", IN_PROCESS)
def test_cheat_is_caught_and_named(kind):
    table, slot, _ = run_with_cheater(kind)
    assert table.cheats, f"{kind} went unnoticed"
    for exc in table.cheats:
        assert isinstance(exc, CheatDetected)
        assert exc.seat == slot, (kind, exc)
    # every honest seat's record ends with the verdict (or refused the entry)
    for d in table.drivers:
        if d.slot != slot:
            rec = d.record
            assert rec.verdict is None or rec.verdict.seat == slot
            game = game_of(rec)
            assert game is None or not game.done
