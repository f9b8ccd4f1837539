"""Moves as players say them: every legal action can be typed and chosen from a menu.

Random games of every game are played; at each decision, every legal action
of the seat to move must (1) round-trip through its typed form (``say`` then
``parse`` gives the same move, up to which of two identical cards or dice is
meant) and (2) be reachable by walking the seat's menus.
"""

from __future__ import annotations

import random
from itertools import combinations

import pytest

from cli.menus import Ask, Choice, MoveError, Number, Pick, is_plan, resolve
from cli.moves import moves_for, same_move, validate_plan
from cli.narrate import Names
from engine import registry, runner
from engine.bots import RandomBot
from engine.dealer import LocalDealer

GAMES = {
    "slave": (4, {"games": 2}),
    "slaiga": (3, {}),
    "honest-slaiga": (3, {"jokers": True}),
    "aight-of-spaides": (3, {"max_turns": 60}),
    "slajens": (3, {"sjond": True, "rounds": 4, "steal_round_min": 0, "steal_total_min": 0}),
    "high-card": (3, {"hand": 3}),  # no moves of its own: the generic ones
}
NAMES = ("Ann", "Bob", "Cat", "Dan")
MAX_ACTIONS_CHECKED = 250
WALK_LEAVES = 20_000


def games_with_decisions(game_name: str, seeds: range, kinds=("random", "heuristic")):
    """Yield ``(game, seat)`` at every decision of bot games of ``game_name``."""
    seats, options = GAMES[game_name]
    spec = registry.get(game_name)
    for seed in seeds:
        kind = kinds[seed % len(kinds)]
        game = spec.factory(seats, options)
        dealer = LocalDealer(game.deck, seed)
        bots = [
            (RandomBot if kind == "random" else spec.bots[kind])(s, random.Random(seed * 10 + s))
            for s in range(seats)
        ]

        def publish(events, bots=bots):
            for ev in events:
                for b in bots:
                    if ev.visible_to(b.seat):
                        b.observe(ev)

        publish(runner.start(game, dealer))
        steps = 0
        while not game.is_over() and steps < 600:
            seat = game.to_move()[0]
            yield game, seat
            action = bots[seat].act(game.view(seat), game.legal_actions(seat))
            publish(runner.apply(game, dealer, action))
            steps += 1


def walk(node, game, seat, out: list, budget: list[int]) -> None:
    """Every plan the menu tree can end in (the rule builder's tree is not entered)."""
    if budget[0] <= 0:
        return
    if is_plan(node):
        budget[0] -= 1
        out.append(node)
        return
    if isinstance(node, Choice):
        if node.tag == "rule":  # its own tests walk it; here, make the rules the game lists
            specs = {a.rule for a in game.legal_actions(seat) if getattr(a, "rule", None)}
            for spec in specs:
                walk(node.source.finish(spec), game, seat, out, budget)
            return
        for o in node.options:
            walk(resolve(o.then), game, seat, out, budget)
    elif isinstance(node, Pick):
        sizes = [node.count] if node.count is not None else range(node.least, len(node.items) + 1)
        for k in sizes:
            for chosen in combinations(range(len(node.items)), k):
                walk(node.finish(chosen), game, seat, out, budget)
    elif isinstance(node, Number):
        for v in range(node.lo, node.hi + 1):
            walk(node.finish(v), game, seat, out, budget)
    elif isinstance(node, Ask) and node.example:
        walk(node.finish(node.example), game, seat, out, budget)


@pytest.mark.parametrize("game_name", sorted(GAMES))
def test_every_legal_action_round_trips_through_its_typed_form(game_name):
    names = [Names(NAMES[: GAMES[game_name][0]], s) for s in range(GAMES[game_name][0])]
    checked = kinds = 0
    for game, seat in games_with_decisions(game_name, range(4)):
        moves = moves_for(game_name, names[seat])
        legal = game.legal_actions(seat)
        sample = (
            legal
            if len(legal) <= MAX_ACTIONS_CHECKED
            else random.Random(len(legal)).sample(legal, MAX_ACTIONS_CHECKED)
        )
        moves.help(game, seat)  # the ? page describes every move
        for a in sample:
            assert moves.describe(game, seat, a)
            text = moves.say(game, seat, a)
            plan = moves.parse(game, seat, text)
            assert same_move(game, seat, plan[0], a), f"{text!r} -> {plan[0]} != {a}"
            assert validate_plan(game, seat, plan) is None
            checked += 1
        kinds += 1
    assert kinds > 10 and checked >= kinds


@pytest.mark.parametrize("game_name", sorted(GAMES))
def test_every_legal_action_is_reachable_from_the_menus(game_name):
    seats = GAMES[game_name][0]
    names = [Names(NAMES[:seats], s) for s in range(seats)]
    decisions = 0
    for game, seat in games_with_decisions(game_name, range(2)):
        moves = moves_for(game_name, names[seat])
        plans: list = []
        walk(moves.menu(game, seat, None), game, seat, plans, [WALK_LEAVES])
        # a plan may hold several moves of one step (giving 3 penalty cards is 3 gives)
        offered = {x for p in plans for x in p}
        for a in game.legal_actions(seat):
            assert a in offered or any(same_move(game, seat, f, a) for f in offered), (
                f"{moves.say(game, seat, a)!r} ({a}) cannot be reached in phase {game.phase}"
            )
        for p in plans:  # and nothing the menus offer is refused
            assert validate_plan(game, seat, p) is None, (p, validate_plan(game, seat, p))
        decisions += 1
    assert decisions > 10


def test_menus_are_short_where_the_legal_list_was_long():
    """Placing a penalty card (155 legal actions) is a card, then a position."""
    game_name = "slaiga"
    for game, seat in games_with_decisions(game_name, range(6)):
        if game.phase in ("place", "place_hand") and len(game.legal_actions(seat)) > 60:
            moves = moves_for(game_name, Names(NAMES[:3], seat))
            root = moves.menu(game, seat, None)
            first = root.options if isinstance(root, Choice) else []
            assert isinstance(root, (Choice, Number)) and len(first) <= 8
            return
    pytest.skip("no long placement in these games")


def names3(me=0):
    return Names(["Ann", "Bob", "Cat"], me)


def slaiga_at_turn(seed=4, lying=True):
    spec = registry.get("slaiga" if lying else "honest-slaiga")
    game = spec.factory(3, {})
    runner.start(game, LocalDealer(game.deck, seed))
    return game


def test_a_shot_is_said_in_one_breath():
    game = slaiga_at_turn()
    moves = moves_for("slaiga", names3())
    hand = game.view(0)["hand"]
    low = next(c for c in hand if c.face.rank < 11)
    code = f"{low.face}".replace("♣", "c").replace("♦", "d").replace("♥", "h").replace("♠", "s")
    shoot, card = moves.parse(game, 0, f"shoot bob {code} claim As")
    assert (shoot.target, shoot.suit) == (1, 2)  # a ♠ shot means target ♥
    assert (card.card, card.ace) == (low.handle, True)
    runner.apply(game, LocalDealer(game.deck, 0), shoot)
    assert card in game.legal_actions(0)  # the second half is a legal move once asked


def test_typing_mistakes_say_what_would_work():
    game = slaiga_at_turn()
    moves = moves_for("slaiga", names3())
    for text, words in [
        ("shoot zed 9c", "say whom"),
        ("shoot bob Qx", "not a card"),
        ("frobnicate", "not a card"),
        ("check", "cannot check"),
    ]:
        with pytest.raises(MoveError, match=words):
            moves.parse(game, 0, text)


def test_slajens_keeps_dice_by_value():
    spec = registry.get("slajens")
    game = spec.factory(2, {})
    dealer = LocalDealer(game.deck, 0, dice=(6, 2, 6, 1, 6))
    runner.start(game, dealer)
    runner.apply(game, dealer, game.legal_actions(0)[0])
    moves = moves_for("slajens", Names(["Ann", "Bob"], 0))
    (keep,) = moves.parse(game, 0, "keep 6 6 6")
    assert keep.keep == (0, 2, 4)
    assert moves.say(game, 0, keep) == "keep 6 6 6"
    with pytest.raises(MoveError, match="no 5"):
        moves.parse(game, 0, "keep 5")
    assert type(moves.parse(game, 0, "keep 6 2 6 1 6")[0]).__name__ == "Stop"


def test_slave_sets_are_typed_as_cards():
    spec = registry.get("slave")
    game = spec.factory(4, {"games": 1})
    runner.start(game, LocalDealer(game.deck, 1))
    opener = game.to_move()[0]
    moves = moves_for("slave", Names(["Ann", "Bob", "Cat", "Dan"], opener))
    legal = game.legal_actions(opener)
    if type(legal[0]).__name__ == "NotOpener":
        assert moves.parse(game, opener, "pass") == (legal[0],)
    else:
        (play,) = moves.parse(game, opener, "3c")
        assert play in legal


def test_aight_plays_may_be_typed_with_the_word_play_as_the_menu_says():
    """The menu says "play 6♦"; typing "play 6d" once answered "not a card: 'play'"."""
    from engine.games.aight import actions as act

    names = [Names(NAMES[:3], s) for s in range(3)]
    checked = 0
    for game, seat in games_with_decisions("aight-of-spaides", range(2)):
        if game.view(seat)["phase"] != "turn":
            continue
        moves = moves_for("aight-of-spaides", names[seat])
        for a in game.legal_actions(seat):
            if not isinstance(a, act.Play):
                continue
            text = moves.say(game, seat, a)
            assert not text.startswith("play ")
            plan = moves.parse(game, seat, "play " + text)
            assert same_move(game, seat, plan[0], a), f"play {text!r} -> {plan[0]} != {a}"
            checked += 1
        if checked > 50:
            break
    assert checked > 50
