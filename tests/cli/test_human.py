"""``HumanPlayer`` in a Trio game loop, with a scripted terminal.

Whole games are played by a person who presses Enter at every question (so
takes the preselected suggestion) and the keystrokes are counted; an answer
window that nobody answers passes by itself; deciding never blocks the Trio
loop; quitting raises ``PlayerQuit``.
"""

from __future__ import annotations

import contextlib
import re

import trio

from cli.human import HumanPlayer, PlayerQuit
from cli.narrate import unique_names
from cli.play import Table, bot_players, local_backend
from cli.render import plain
from tests.cli._screens import FakeTerminal

NAMES = ("Ann", "Bob", "Cat", "Dan", "Eve")


def seat_person(game_name: str, seats: int, options: dict, seed: int, term: FakeTerminal, **kw):
    names = unique_names(NAMES[:seats])
    table = Table(game_name, seats, options, 0, names, seed)
    human = HumanPlayer(names, 0, game_name, terminal=term, **kw)
    term.player = human
    players = bot_players(table, "heuristic", skip=0)
    players[0] = human
    return human, table, [players[s] for s in range(seats)]


def enter(_player) -> list[str]:
    return ["enter"]


async def play_whole(game_name: str, seats: int, options: dict, seed: int):
    term = FakeTerminal(person=enter)
    human, table, players = seat_person(game_name, seats, options, seed, term, answer_timeout=0)
    summary = await local_backend(players, table)
    return human, term, summary


async def test_whole_games_by_pressing_enter_and_the_keys_they_take():
    """A Slave match and a Slaiga game end, every frame is 80x24, and few keys are needed."""
    figures = {}
    for game_name, seats, options in (
        ("slave", 5, {}),
        ("slaiga", 4, {}),
        ("slajens", 3, {"rounds": 3}),
    ):
        human, term, summary = await play_whole(game_name, seats, options, seed=1)
        assert summary["ranking"] and sorted(summary["ranking"]) == list(range(seats))
        assert human.finished and not term.started  # the terminal was given back
        assert term.frame_count > human.asked
        for frame in term.frames:
            assert len(frame) == 24 and all(line.cell_len <= 80 for line in frame)
        assert term.sent >= human.asked  # at least one key per question asked
        figures[game_name] = (human.asked, term.sent, summary["actions"])
    # forced moves (one option, reload draws) are not asked: far fewer questions than moves
    asked, keys, actions = figures["slaiga"]
    assert asked < actions / 3
    print("questions, keys, table actions:", figures)


async def test_an_unanswered_window_passes_when_the_countdown_ends():
    seen: list[str] = []

    def person(player):  # answers turns, never answers a window
        if player.prompter is not None and player.countdown is not None:
            seen.append(plain(player.screen()))
            return []
        return ["enter"]

    term = FakeTerminal(person=person)
    human, table, players = seat_person(
        "aight-of-spaides", 3, {"max_turns": 6}, 4, term, answer_timeout=0.05
    )
    await local_backend(players, table)
    assert any(re.search(r"\d+s left", s) for s in seen), "the window shows its countdown"
    assert any("time is up: you let the move stand" in e for e in human.events)


async def test_deciding_leaves_the_trio_loop_free():
    """While the person thinks (no key yet), other Trio tasks keep running."""
    term = FakeTerminal()  # no keys: the person is thinking
    human, table, players = seat_person("slave", 4, {"games": 1}, 3, term, answer_timeout=0)
    ticks_while_asking = 0

    async def other_task(cancel):
        nonlocal ticks_while_asking
        while human.prompter is None:  # until the person is asked
            await trio.sleep(0.001)
        while ticks_while_asking < 500:
            await trio.sleep(0)
            assert human.prompter is not None  # still waiting for a key
            ticks_while_asking += 1
        cancel.cancel()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(other_task, nursery.cancel_scope)
        await local_backend(players, table)
    assert ticks_while_asking == 500
    human.close()


async def test_quitting_raises_player_quit_and_restores_the_terminal():
    term = FakeTerminal(keys=[*"quit", "enter", "y"])
    human, table, players = seat_person("slaiga", 3, {}, 2, term, answer_timeout=0)
    try:
        with human:
            await local_backend(players, table)
    except PlayerQuit:
        pass
    else:
        raise AssertionError("quit did not end the game")
    assert not term.started


async def test_a_refused_move_keeps_the_question_and_says_why():
    """A typed move that cannot be made is kept on the input line with the reason."""
    shown: list[tuple[str, str]] = []

    def person(player):
        p = player.prompter
        if p is not None and p.message:
            shown.append((p.message, p.input))
            return ["clear", *"quit", "enter", "y"]
        return [*"2s 2s", "enter"]

    term = FakeTerminal(person=person)
    human, table, players = seat_person("slave", 4, {"games": 1}, 5, term, answer_timeout=0)
    with contextlib.suppress(PlayerQuit):
        await local_backend(players, table)
    message, kept = shown[0]
    assert kept == "2s 2s"
    assert "2♠" in message or "card" in message or "pass" in message
