"""Leaving rules (issue 21; docs/design.md, "Surviving a lost player"): a seat that has
left for good, under both dealers.

* The trusted dealer (``LocalDealer``): one omniscient engine, played by bots to the
  end with seats leaving at random points.
* The seatless table: what a peer runs under the mental-poker dealer
  (``p2p.table.game_rule``), one engine per seat that learns only the faces its seat
  may see, and a seatless engine that learns only public faces; every answer is split
  as the mental dealer splits it, and after every step every engine must have the same
  state hash. So ``leave`` is a transition every peer makes alike, with nothing from
  the dealer for the leaving seat's cards.

Every rule: the seat never moves again, its cards are conserved, the game ends (at once
when one seat or team is left), and the ranking puts the seat where its page says.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

import pytest

from engine import registry, runner
from engine.dealer import LocalDealer
from engine.errors import BadOption, EngineError
from engine.game import Game
from engine.obligations import (
    Deal,
    JointRandom,
    Obligation,
    Prove,
    Reveal,
    Roll,
    Shuffle,
    Transfer,
    who_learns,
)
from engine.options import TABLE_OPTIONS

MAX_STEPS = 6000

# (game, seats, options): the games whose leaving rule is written
GAMES = [
    ("high-card", 3, {"hand": 4}),
    ("slave", 4, {"games": 2}),
    ("slave", 5, {"games": 1}),
    ("slajens", 3, {"rounds": 3}),
    ("slajens", 4, {"rounds": 3, "teams": 2, "sjond": True}),
    ("slaiga", 3, {}),
    ("slaiga", 4, {"jokers": False, "check_ends_volley": False}),
    ("honest-slaiga", 3, {"max_turns": 80}),
    ("honest-slaiga", 4, {"jokers": True, "max_turns": 80}),
    ("aight-of-spaides", 3, {"max_turns": 60}),
    ("aight-of-spaides", 4, {"max_turns": 60}),
]
HORIZON = {
    "high-card": 10,
    "slave": 90,
    "slajens": 14,
    "aight-of-spaides": 80,
    "slaiga": 60,
    "honest-slaiga": 60,
}
"""Seats leave within this many decisions (each game lasts longer)."""


def _bots(game: Game, seed: int) -> dict[int, Any]:
    spec = registry.get(game.NAME)
    return {s: spec.bots["random"](s, random.Random(seed * 100 + s)) for s in range(game.seats)}


# ---- the trusted dealer -----------------------------------------------------------------


def play_leaving(
    name: str, seats: int, options: Mapping[str, Any], seed: int, leavers: int = 1
) -> tuple[Game, list[int]]:
    """Play with random bots; ``leavers`` seats leave at random decision points."""
    rng = random.Random(seed)
    game = registry.get(name).factory(seats, dict(options))
    dealer = LocalDealer(game.deck, seed)
    bots = _bots(game, seed)
    runner.start(game, dealer)
    plan = sorted(rng.sample(range(1, HORIZON[name]), leavers))
    left: list[int] = []
    steps = 0
    while not game.is_over():
        assert steps < MAX_STEPS, f"{name}: no end after {steps} steps"
        steps += 1
        if plan and steps >= plan[0]:
            plan.pop(0)
            seat = rng.choice(game.present())
            game.leave(seat)
            runner.settle(game, dealer)
            left.append(seat)
            runner.check_conservation(game, dealer)
            continue
        movers = game.to_move()
        assert movers and not set(movers) & set(game.gone), (movers, game.gone)
        seat = movers[0]
        action = bots[seat].act(game.view(seat), game.legal_actions(seat))
        runner.apply(game, dealer, action)
        runner.check_conservation(game, dealer)
    return game, left


@pytest.mark.parametrize(("name", "seats", "options"), GAMES)
@pytest.mark.parametrize("seed", range(3))
def test_a_seat_leaves_and_the_others_finish(name, seats, options, seed):
    game, left = play_leaving(name, seats, options, seed)
    assert left and game.gone == tuple(left)
    outcome = game.outcome()
    assert sorted(outcome.ranking) == list(range(seats))
    assert all(game.legal_actions(s) == [] for s in left)
    if name == "slajens" and options.get("teams"):
        # a seat that left comes after its team-mates
        (gone,) = left
        mates = [s for s in outcome.ranking if game.team_of[s] == game.team_of[gone]]
        assert mates[-1] == gone
    else:
        assert outcome.ranking[-1] == left[0]  # a seat that left ranks last


@pytest.mark.parametrize(("name", "seats", "options"), GAMES)
def test_the_game_ends_when_one_seat_or_team_is_left(name, seats, options):
    game = registry.get(name).factory(seats, dict(options))
    dealer = LocalDealer(game.deck, 3)
    runner.start(game, dealer)
    teams = getattr(game, "team_of", tuple(range(seats)))
    stay = game.present()[-1]
    for s in range(seats):
        if game.is_over():
            break
        if teams[s] != teams[stay]:
            game.leave(s)
            runner.settle(game, dealer)
    assert game.is_over()
    outcome = game.outcome()
    assert outcome.ranking[0] in [s for s in range(seats) if teams[s] == teams[stay]]
    assert not outcome.draw
    with pytest.raises(EngineError, match="running"):
        game.leave(stay)


def test_leave_is_refused_when_it_cannot_apply():
    game = registry.get("slave").factory(4, {})
    with pytest.raises(EngineError, match="running"):
        game.leave(1)
    dealer = LocalDealer(game.deck, 1)
    game.start()
    with pytest.raises(EngineError, match="dealer owes"):
        game.leave(1)
    runner.settle(game, dealer)
    before = game.state_hash()
    for bad in (-1, 4, "1", True):
        with pytest.raises(EngineError, match="no seat"):
            game.leave(bad)
    assert game.state_hash() == before
    game.leave(2)
    runner.settle(game, dealer)
    with pytest.raises(EngineError, match="already left"):
        game.leave(2)


def test_a_game_without_a_leaving_rule_refuses_and_changes_nothing():
    from engine.games.highcard.rules import HighCard

    class Stubborn(HighCard):
        NAME = "stubborn"
        on_leave = Game.on_leave

    game = Stubborn(3)
    runner.start(game, LocalDealer(game.deck, 0))
    before = game.state_hash()
    with pytest.raises(EngineError, match="no rule for a seat that leaves"):
        game.leave(1)
    assert game.state_hash() == before and game.gone == ()


def test_nobody_leaving_keeps_the_state_hash_format():
    """The table option stays out of the state hash, and so does ``gone`` while empty."""
    a = registry.get("slave").factory(4, {})
    b = registry.get("slave").factory(4, {"survive": True})
    for g in (a, b):
        runner.start(g, LocalDealer(g.deck, 5))
    assert a.state_hash() == b.state_hash()


def test_the_survive_option_needs_three_seats():
    assert [o.name for o in TABLE_OPTIONS] == ["survive", "absent_after", "open_hands"]
    k = len(TABLE_OPTIONS)
    for name in registry.names():
        cls = registry.get(name).game_class
        assert cls.OPTIONS[-k:] == TABLE_OPTIONS, name
        assert [o.name for o in cls.OPTIONS].count("survive") == 1
        assert [o.name for o in cls.OPTIONS].count("absent_after") == 1
    with pytest.raises(BadOption, match="at least 3 players"):
        registry.get("slajens").factory(2, {"survive": "on"})
    assert registry.get("slajens").factory(3, {"survive": "on"}).options["survive"] is True


# ---- the seatless table ---------------------------------------------------------------------


class SeatlessTable:
    """Engines as a table of peers holds them: one per seat, with only its seat's faces,
    and the seatless one, with public faces only; answers split as the mental dealer
    splits them (p2p.table.game_rule)."""

    def __init__(self, name: str, seats: int, options: Mapping[str, Any], seed: int) -> None:
        spec = registry.get(name)
        self.table = spec.factory(seats, dict(options))
        self.mine = {s: spec.factory(seats, dict(options)) for s in range(seats)}
        self.dealer = LocalDealer(self.table.deck, seed)
        self.steps = 0

    def engines(self) -> list[Game]:
        return [self.table, *self.mine.values()]

    def _split(self, ob: Obligation, answer: Any, seat: int | None) -> Any:
        t = self.table
        if isinstance(ob, Reveal | Deal | Transfer):
            learns = who_learns(ob, t.all_seats)
            # a card every seat has now seen goes public (p2p.table.game_rule does so)
            return {
                h: f
                for h, f in answer.items()
                if (seat is not None and learns[h] >> seat & 1)
                or (t.seen.get(h, 0) | learns[h]) == t.all_seats
            }
        if isinstance(ob, Shuffle | Prove):
            return None
        assert isinstance(ob, Roll | JointRandom)
        return answer

    def settle(self) -> None:
        while (ob := self.table.pending()) is not None:
            for e in self.mine.values():
                assert e.pending() == ob
            answer = self.dealer.fulfil(ob)
            parts = [(s, self._split(ob, answer, s)) for s in self.mine]
            self.table.resolve(self._split(ob, answer, None))
            for s, part in parts:
                self.mine[s].resolve(part)
            self.check()

    def check(self) -> None:
        want = self.table.state_hash()
        for s, e in self.mine.items():
            assert e.state_hash() == want, f"seat {s}'s engine differs from the table's"

    def start(self) -> None:
        for e in self.engines():
            e.start()
        self.settle()

    def apply(self, action) -> None:
        for e in self.engines():
            e.apply(action)
        self.settle()

    def leave(self, seat: int) -> None:
        del self.mine[seat]  # its machine is gone
        for e in self.engines():
            e.leave(seat)
        self.settle()


@pytest.mark.parametrize(("name", "seats", "options"), GAMES)
@pytest.mark.parametrize("seed", range(2))
def test_a_seat_leaves_a_seatless_table(name, seats, options, seed):
    rng = random.Random(seed)
    t = SeatlessTable(name, seats, options, seed)
    bots = _bots(t.table, seed)
    t.start()
    when = rng.randrange(1, HORIZON[name])
    steps = 0
    while not t.table.is_over():
        assert steps < MAX_STEPS
        steps += 1
        if steps == when:
            t.leave(rng.choice(t.table.present()))
            continue
        seat = t.table.to_move()[0]
        mine = t.mine[seat]
        action = bots[seat].act(mine.view(seat), mine.legal_actions(seat))
        t.apply(action)
    assert t.table.gone and steps > when
    for e in t.mine.values():
        assert e.is_over() and e.outcome() == t.table.outcome()


# ---- scenarios --------------------------------------------------------------------------------


def _until(name: str, seats: int, options: Mapping[str, Any], stop, seeds=range(40)):
    """A game played by random bots up to the first decision where ``stop(game)``."""
    for seed in seeds:
        game = registry.get(name).factory(seats, dict(options))
        dealer = LocalDealer(game.deck, seed)
        bots = _bots(game, seed)
        runner.start(game, dealer)
        while not game.is_over():
            if stop(game):
                return game, dealer
            seat = game.to_move()[0]
            runner.apply(game, dealer, bots[seat].act(game.view(seat), game.legal_actions(seat)))
    raise AssertionError("no game reached the point")


def test_slave_leaving_before_the_opening_lets_the_next_seat_lead():
    game, dealer = _until("slave", 4, {}, lambda g: g.phase == "opening")
    opener = game.current
    events = game.leave(opener)
    assert game.phase == "play" and game.current == (opener + 1) % 4
    assert "opening rule lapses" in events[-1].text
    assert len(game.zones["out-of-play"]) == 13
    # any set leads now, 3♣ or not
    assert {type(a).__name__ for a in game.legal_actions(game.current)} == {"Play"}


def test_slave_exchanges_with_a_seat_that_left_are_skipped():
    game, dealer = _until("slave", 4, {"games": 3}, lambda g: g.phase == "exchange")
    slave = game.exchanges[0].giver
    events = game.leave(slave)
    runner.settle(game, dealer)
    assert [e.kind for e in events].count("exchange:skipped") == 2  # to KING, and back
    assert game.phase == "exchange" and game.to_move() == (game.exchanges[2].giver,)


def test_slajens_a_steal_on_a_seat_that_leaves_lapses():
    game, dealer = _until(
        "slajens", 3, {"rounds": 6, "sjond": True}, lambda g: g.phase == "respond"
    )
    st = game.respond_to
    before = list(game.totals)
    events = game.leave(st.target)
    assert "steal:lapsed" in [e.kind for e in events]
    assert game.totals == before  # nothing moves: its score stands
    assert game.phase == "start" and game.current not in game.gone
    assert game.steal_problem(game.current, st.target, 1) is not None


def _finish_with_bots(game: Game, dealer: LocalDealer, seed: int = 0) -> None:
    bots = _bots(game, seed)
    for _ in range(MAX_STEPS):
        if game.is_over():
            return
        movers = game.to_move()
        assert movers and not set(movers) & set(game.gone)
        seat = movers[0]
        runner.apply(game, dealer, bots[seat].act(game.view(seat), game.legal_actions(seat)))
        runner.check_conservation(game, dealer)
    raise AssertionError("no end")


@pytest.mark.parametrize("phase", ["window", "interlude", "end_vote", "drawn"])
@pytest.mark.parametrize("who", ["mover", "other"])
def test_aight_a_seat_leaves_in_every_phase(phase, who):
    game, dealer = _until(
        "aight-of-spaides", 4, {"max_turns": 400}, lambda g: g.phase == phase, range(200)
    )
    movers = game.to_move()
    seat = movers[0] if who == "mover" else next(s for s in range(4) if s != movers[0])
    game.leave(seat)
    runner.settle(game, dealer)
    runner.check_conservation(game, dealer)
    assert seat not in game.to_move()
    _finish_with_bots(game, dealer)
    assert game.outcome().ranking[-1] == seat


@pytest.mark.parametrize("who", ["attacker", "defender", "bystander"])
def test_slaiga_a_volley_with_a_seat_that_leaves_ends_with_no_penalty(who):
    game, dealer = _until("slaiga", 4, {}, lambda g: g.phase == "answer", range(100))
    v = game.volley
    out = {"attacker": v.attacker, "defender": v.defender}.get(who)
    if out is None:
        out = next(s for s in range(4) if s not in (v.attacker, v.defender))
    in_volley = len(game.zones["volley"])
    kinds = [e.kind for e in game.leave(out)]
    runner.settle(game, dealer)
    if who == "bystander":
        assert "volley-void" not in kinds and game.volley is v
    else:
        assert "volley-void" in kinds and game.volley is None
        assert len(game.zones["out-of-play"]) >= in_volley
    _finish_with_bots(game, dealer)
    assert game.outcome().ranking[-1] == out


def test_slaiga_a_win_claim_asks_past_a_seat_that_leaves():
    game, dealer = _until("slaiga", 4, {}, lambda g: g.phase == "win_ask", range(300))
    task = game.agenda[0]
    asked, claimer = task.seat, task.other
    game.leave(asked)
    runner.settle(game, dealer)
    assert asked not in game.to_move()
    if game.phase == "win_ask":
        assert game.agenda[0].other == claimer and asked not in game.agenda[0].handles
    _finish_with_bots(game, dealer)


def test_every_game_has_a_leaving_rule():
    for name in [*registry.names(), "high-card"]:
        cls = registry.get(name).game_class
        assert cls.on_leave is not Game.on_leave, name


@pytest.mark.parametrize(("name", "seats", "options"), [g for g in GAMES if g[1] >= 4])
def test_two_seats_leave(name, seats, options):
    game, left = play_leaving(name, seats, options, seed=11, leavers=2)
    assert game.gone == tuple(left) and len(left) == 2
    ranking = game.outcome().ranking
    assert sorted(ranking) == list(range(seats))
    if not options.get("teams"):
        assert set(ranking[-2:]) == set(left)
