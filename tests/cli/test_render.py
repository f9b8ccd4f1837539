"""The table screen: every screen of whole games shows only what the seat may see.

A card face may appear on a seat's screen only if the engine let that seat see
a card with that face at some point of the game (``face_for``, accumulated
over every step), so a hidden hand, a face-down shot or a toppled KING's cards
can never show. Each screen must also fit 80x24 exactly.
"""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path

import pytest

from cli.menus import Choice, Pick, is_plan
from cli.moves import moves_for
from cli.narrate import Names, narrate
from cli.render import PromptView, TableView, end_lines, plain, render_screen, result_lines
from cli.screen import Prompter
from engine import registry, runner
from engine.cards import Card
from engine.dealer import LocalDealer
from engine.game import Event
from engine.games.slaiga.events import CheckCalled, Played, Verdict, VolleyEnded
from engine.games.slave.events import MatchOver
from tests.cli._screens import faces_on

GAMES = {
    "slave": (4, {"games": 2}),
    "slaiga": (4, {}),
    "honest-slaiga": (3, {"jokers": True}),
    "aight-of-spaides": (3, {"max_turns": 150}),
    "slajens": (3, {"sjond": True, "rounds": 4}),
    "high-card": (3, {"hand": 3}),  # no moves of its own: the generic ones
}
NAMES = ("Ann", "Bob", "Cat", "Dan", "Eve", "Fay")
RULE_FACES = {"slave": {"3♣"}}  # named by the rules themselves ("the holder of 3♣ opens")


def seen_now(game, seat: int) -> set[str]:
    return {str(f) for h in range(len(game.deck)) if (f := game.face_for(seat, h)) is not None}


def settle(game, dealer, events: list[Event], after_each) -> list[Event]:
    """``runner.settle``, looking at what every seat may see after each dealer answer
    (a face revealed and shuffled away within one step was still seen)."""
    while (ob := game.pending()) is not None:
        events.extend(game.resolve(dealer.fulfil(ob)))
        after_each()
    return events


def prompt_for(game, seat: int, moves) -> PromptView:
    """The prompt the person would get: the first question of the move's menu."""
    root = moves.menu(game, seat, None)
    if is_plan(root):
        return PromptView(moves.question(game, seat), [moves.describe(game, seat, root[0])])
    return Prompter(root, moves.question(game, seat), lambda t: ()).view(None)


@pytest.mark.parametrize("game_name", sorted(GAMES))
def test_every_screen_of_a_whole_game_shows_only_what_the_seat_may_see(game_name):
    seats, options = GAMES[game_name]
    spec = registry.get(game_name)
    game = spec.factory(seats, options)
    dealer = LocalDealer(game.deck, 7)
    bots = [spec.bots["heuristic"](s, random.Random(s)) for s in range(seats)]
    watchers = (0, seats - 1)
    names = {w: Names(NAMES[:seats], w) for w in watchers}
    moves = {w: moves_for(game_name, names[w]) for w in watchers}
    told: dict[int, list[str]] = {w: [] for w in watchers}
    allowed: dict[int, set[str]] = {w: set(RULE_FACES.get(game_name, ())) for w in watchers}
    screens = 0

    def publish(events: list[Event]) -> None:
        for ev in events:
            for b in bots:
                if ev.visible_to(b.seat):
                    b.observe(ev)
            for w in watchers:
                if ev.visible_to(w):
                    told[w].append(narrate(ev, names[w]))

    def look() -> None:
        nonlocal screens
        for w in watchers:
            allowed[w] |= seen_now(game, w)
            if "book" in game.view(w):  # rules are public, and may name cards
                allowed[w] |= faces_on("\n".join(game.view(w)["book"].lines()))
            prompt = prompt_for(game, w, moves[w]) if w in game.to_move() else None
            t = TableView(game_name, game.view(w), names[w], game.to_move(), told[w][-30:])
            lines = render_screen(t, prompt, 80, 24)
            assert len(lines) == 24
            assert all(line.cell_len <= 80 for line in lines), plain(lines)
            text = plain(lines)
            leaked = faces_on(text) - allowed[w]
            assert not leaked, f"seat {w} shown {leaked} it never saw:\n{text}"
            screens += 1

    def learn() -> None:  # a face once seen stays known to the person
        for w in watchers:
            allowed[w] |= seen_now(game, w)

    publish(settle(game, dealer, game.start(), learn))
    look()
    steps = 0
    while not game.is_over() and steps < 5000:
        seat = game.to_move()[0]
        action = bots[seat].act(game.view(seat), game.legal_actions(seat))
        publish(settle(game, dealer, game.apply(action), learn))
        look()
        steps += 1
    assert game.is_over()
    assert screens > 2 * steps


def test_hidden_cards_show_as_blocks_and_hands_as_counts():
    spec = registry.get("slaiga")
    game = spec.factory(3, {})
    runner.start(game, LocalDealer(game.deck, 3))
    names = Names(NAMES[:3], 1)
    t = TableView(
        "slaiga", game.view(1), names, game.to_move(), ["Ann takes 9♦ from the draw pile"]
    )
    text = plain(render_screen(t, None, 80, 24))
    mine = {str(c.face) for c in game.view(1)["hand"]}
    assert "Your hand (6):" in text
    assert all(f in text for f in mine)
    assert "▶ Ann" in text and "Bob (you)" in text  # whose turn, marked plainly
    assert "Waiting for Ann" in text
    top = game.view(1)["draw"][0].face
    assert f"top {top}" in text  # slaiga's draw pile is face up


def test_events_name_players_instead_of_seat_numbers():
    names = Names(["Ann", "Bob", "Cat"], 0)
    shot = Event(
        "shot",
        "seat 1 shoots seat 2: ♣ target, ♦ shot",
        1,
        None,
        {"target": 2, "suit": 0},
        Played("shot", 1, False, None, 2, 0),
    )
    assert narrate(shot, names) == "Bob shoots Cat: ♣ target, claims a ♦ shot, face down"
    called = Event(
        "check-called", "seat 2 calls a shot check", 2, None, {"check": "shot"}, CheckCalled("shot")
    )
    assert narrate(called, names) == "Cat checks the shot"
    nine = Verdict("shot", Card(9, 1), False, 2)
    verdict = Event(
        "check:shot:liar", "the shot was 9♦: a lie; seat 1 pays 2", 1, None, {"pay": 2}, nine
    )
    assert narrate(verdict, names) == "It was 9♦: a lie — Bob pays 2"
    plays = Event("play", "seat 0 plays 9♥ 9♠", 0)
    assert narrate(plays, names) == "Ann plays 9♥ 9♠"
    volley = Event(
        "volley-length:2",
        "volley between seats 1 and 2 ends: 2 card(s), 1 shot(s)",
        detail=VolleyEnded(False, 1, 2, 2, 1),
    )
    assert narrate(volley, names).startswith("The volley between Bob and Cat ends")
    match = Event(
        "match",
        "match over; points [3, 1, 0]",
        None,
        None,
        {"points": (3, 1, 0)},
        MatchOver((3, 1, 0)),
    )
    assert narrate(match, names) == "Match over. Points: Ann 3, Bob 1, Cat 0"


def test_the_deal_names_the_players_not_seats():
    game = registry.get("slaiga").factory(3, {})
    events = runner.start(game, LocalDealer(game.deck, 1))
    (deal,) = [e for e in events if e.kind == "deal"]
    assert (
        narrate(deal, Names(["Ann", "Bob", "Cat"], 1)) == "Ann, Bob and Cat are dealt 6 cards each"
    )
    assert deal.text == "6 cards dealt to each of 3 players"  # without names (statistics, logs)


def test_repeated_names_are_told_apart():
    names = Names(["bob", "Bob", ""], 2)
    assert names.names == ("bob", "Bob 2", "Seat 3")
    assert names.find("bob-2") == 1 and names.find("seat-3") == 2 and names.find("#1") == 0


def test_end_screen_has_ranking_record_verification_and_command(monkeypatch):
    # slaiga installed on the PATH, as for a player: the command printed is `slaiga verify`
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    names = Names(["Ann", "Bob", "Cat"], 0)
    summary = {
        "table_id": "ab12",
        "game": "slave",
        "seat": 0,
        "ranking": [1, 0, 2],
        "scores": [4, 6, 0],
        "state_hash": "00",
        "record_head": "ff",
        "record": "/tmp/tables/ab12.rec",
        "culprit": None,
        "entries": 212,
        "proofs": 57,
    }
    text = plain(end_lines(summary, names))
    assert "Winner: Bob" in text
    assert text.index("Bob") < text.index("Ann (you)") < text.index("Cat")
    assert "Record: /tmp/tables/ab12.rec" in text
    # what it counts, said: every signature, and the others' proofs (this peer made its own)
    assert "212 signatures and 57 proofs of the other players checked, no cheat." in text
    assert "slaiga verify /tmp/tables/ab12.rec" in text
    cheat = plain(end_lines(dict(summary, culprit=2), names))
    assert "Cat was caught cheating" in cheat and "no cheat" not in cheat


def test_a_long_menu_scrolls_and_keeps_the_choice_in_sight():
    spec = registry.get("slaiga")
    game = spec.factory(2, {})
    runner.start(game, LocalDealer(game.deck, 5))
    names = Names(["Ann", "Bob"], 0)
    opts = [f"option {i}" for i in range(40)]
    prompt = PromptView("Pick one", opts, selected=33)
    t = TableView("slaiga", game.view(0), names, game.to_move())
    text = plain(render_screen(t, prompt, 80, 24))
    assert "option 33" in text and "option 0 " not in text


def test_multiple_choice_shows_ticks():
    pick = Pick("Give 2 cards", ["3♣", "9♦", "K♠"], lambda c: (), count=2, preset=(0, 2))
    view = Prompter(pick, "Give 2 cards", lambda t: ()).view()
    assert view.marks == [True, False, True]
    assert isinstance(Choice("x", []), Choice)


def test_the_leak_scan_catches_a_hidden_card():
    """The scan above is not blind: an opponent's card slipped into the events is caught."""
    spec = registry.get("slave")
    game = spec.factory(4, {})
    publish = []
    settle(game, LocalDealer(game.deck, 2), game.start(), lambda: publish.append(seen_now(game, 0)))
    allowed = set().union(*publish) | seen_now(game, 0)
    theirs = [game.faces[h] for h in game.zones["hand:1"]]
    t = TableView(
        "slave", game.view(0), Names(NAMES[:4], 0), game.to_move(), [f"Bob holds {theirs[0]}"]
    )
    shown = faces_on(plain(render_screen(t, None, 80, 24)))
    assert shown - allowed == {str(theirs[0])}


def test_the_log_opens_on_a_full_last_page():
    """The log (newest last) is cut into pages from its end: its last page, where it opens,
    is full, not the 1 to 22 events left over after the full pages."""
    from cli.render import render_page

    events = [f"event {i}" for i in range(1, 46)]  # 45 events, 22 a page at 80x24
    last, pages = render_page("Log", events, 10**9, 80, 24, from_end=True)
    assert pages == 3
    shown = [line.plain for line in last[1:-1]]
    assert shown == [f"event {i}" for i in range(24, 46)]
    first, _ = render_page("Log", events, 0, 80, 24, from_end=True)
    assert [line.plain for line in first[1:-1] if line.plain] == ["event 1"]
    # help and rules still read from the top
    top, _ = render_page("Help", events, 0, 80, 24)
    assert top[1].plain == "event 1" and top[22].plain == "event 22"


def test_a_draw_at_the_turn_limit_lists_no_places_and_says_why_in_words():
    """It once read "A draw: cap: turn cap 25 reached" over "1st Ann", "2nd Bob"."""
    names = Names(["Ann", "Bob", "Cat"], 0)
    summary = {
        "game": "aight-of-spaides",
        "ranking": [0, 2, 1],
        "scores": [3, 5, 6],
        "draw": True,
        "reason": "cap: turn cap 25 reached",
    }
    text = plain(result_lines(summary, names))
    assert "A draw: the turn limit of 25 turns was reached" in text
    assert "cap:" not in text and "1st" not in text and "place" not in text
    assert text.index("Ann") < text.index("Cat") < text.index("Bob")


def test_every_slaiga_task_is_said_in_words():
    """The line under Slaiga's table says what the game waits for; an automatic step (the
    volley going to the discard pile while its cards are proved) has words too, never the
    task's identifier."""
    from engine.games.slaiga.agenda import Task
    from engine.games.slaiga.rules import Slaiga
    from engine.games.slaiga.words import slaiga_task_text

    names = Names(["Ann", "Bob", "Cat"], 0)
    for kind in Slaiga.PHASES:
        text = slaiga_task_text(Task(kind, 0, 1, n=2), names, {})
        assert text != kind and "_" not in text, kind
