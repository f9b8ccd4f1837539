"""The one game loop, ``runner.play_async``, with kinds of player.

Bots play through ``BotPlayer``; a player whose decision really waits (a person, a
network seat) runs the same loop inside an event loop (trio here), and gets the same
game as a bot making the same choices.
"""

import random

import pytest
import trio

from engine import registry, runner
from engine.dealer import LocalDealer
from engine.errors import EngineError
from engine.players import BotPlayer


class Recorder:
    """A player that waits before it answers and remembers what it was shown."""

    def __init__(self, bot, wait=True):
        self.bot, self.wait = bot, wait
        self.seen, self.summary, self.decisions = [], None, 0

    def observe(self, game, seat, events):
        assert all(ev.visible_to(seat) for ev in events)
        self.seen.extend(events)
        for ev in events:
            self.bot.observe(ev)

    async def decide(self, game, seat):
        if self.wait:
            await trio.sleep(0)  # a real suspension: only an event loop can resume it
        self.decisions += 1
        return self.bot.act(game.view(seat), game.legal_actions(seat))

    def progress(self, text):
        pass

    def finish(self, summary):
        self.summary = summary


def table(name, seed, seats):
    spec = registry.get(name)
    game = spec.factory(seats, None)
    dealer = LocalDealer(game.deck, seed)
    bots = [spec.bots["heuristic"](s, random.Random(seed * 10 + s)) for s in range(seats)]
    return game, dealer, bots


@pytest.mark.parametrize("name", ["slave", "slaiga"])
async def test_waiting_players_in_an_event_loop_play_the_same_game_as_bots(name):
    game, dealer, bots = table(name, 3, 4)
    plain = runner.play(game, dealer, bots)
    game, dealer, bots = table(name, 3, 4)
    players = [Recorder(bots[0]), BotPlayer(bots[1]), bots[2], Recorder(bots[3])]
    result = await runner.play_async(game, dealer, players)
    assert result.state_hash == plain.state_hash and result.events == plain.events
    rec = players[0]
    assert rec.decisions > 0 and rec.summary["state_hash"] == result.state_hash
    assert rec.summary["ranking"] == list(result.outcome.ranking)
    assert 0 < len(rec.seen) <= sum(result.events.values())  # observe checks each one


def test_play_without_an_event_loop_refuses_a_player_that_waits():
    game, dealer, bots = table("slajens", 1, 2)
    with pytest.raises(EngineError, match="event loop"):
        runner.play(game, dealer, [Recorder(bots[0]), bots[1]])
    game, dealer, bots = table("slajens", 1, 2)
    result = runner.play(game, dealer, [Recorder(bots[0], wait=False), bots[1]])
    assert game.is_over() and result.actions > 0


def test_a_player_per_seat():
    game, dealer, bots = table("slajens", 1, 3)
    with pytest.raises(EngineError, match="2 players for 3 seats"):
        runner.play(game, dealer, bots[:2])
