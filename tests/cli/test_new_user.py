"""What a new user met trying every command at a real terminal, and its fix: player names
kept as written at the start of a told event, ``slaiga verify`` and ``replay`` with no file
say where the player's records are, and an end reason too short to read alone is said in
the game's words."""

from __future__ import annotations

import shutil
from pathlib import Path

from cli.narrate import Names, narrate
from cli.render import plain, result_lines
from engine.game import Event
from tests.cli.test_commands import slaiga

V3 = Path(__file__).parent.parent / "vectors" / "v3-slajens.rec"


def test_a_told_event_keeps_a_lower_case_name_as_written() -> None:
    names = Names(["p0", "ann", "Bob"], 0)
    assert narrate(Event("play", "seat 1 plays 3♣", seat=1), names) == "ann plays 3♣"
    assert narrate(Event("out", "seat 0 is out (place 1)", seat=0), names) == "p0 is out (place 1)"
    # a sentence that does not begin with a name still begins with a capital
    said = narrate(Event("clear", "the pile is cleared; seat 1 leads"), names)
    assert said == "The pile is cleared; ann leads"


def test_verify_and_replay_with_no_file_list_the_newest_records(tmp_path: Path) -> None:
    home = tmp_path / "home"
    for command in ("verify", "replay"):
        run = slaiga(command, home=home)
        assert run.returncode == 2, run.stderr
        assert f"slaiga {command}: give a record file to {command} (RECORD-FILE)." in run.stderr
        assert "No games of yours are recorded yet" in run.stderr
        assert str(home / "tables") in run.stderr
    (home / "tables").mkdir(parents=True)
    kept = home / "tables" / "5243b8a41c59532bd628cb6b793c60d1.rec"
    shutil.copy(V3, kept)
    for command in ("verify", "replay"):
        run = slaiga(command, home=home)
        assert run.returncode == 2, run.stderr
        assert "Your newest games' records" in run.stderr
        assert f" {command} {kept}" in run.stderr  # a command to paste


def test_an_end_reason_is_said_in_the_games_words() -> None:
    names = Names(["Ann", "Bob", "Cat"], 0)
    summary = {"game": "slaiga", "ranking": [1, 0, 2], "reason": "one seat left"}
    text = plain(result_lines(summary, names))
    assert "Winner: Bob" in text
    assert "one seat left" not in text
    assert "only one player is left in play: the others went out" in text
    draw = {
        "game": "honest-slaiga",
        "ranking": [0, 1, 2],
        "draw": True,
        "reason": "turn cap reached",
    }
    text = plain(result_lines(draw, names))
    assert "A draw: the turn limit was reached" in text


def test_play_and_rules_with_no_game_list_the_games(tmp_path: Path) -> None:
    from engine import registry

    for command in ("play", "rules"):
        run = slaiga(command, home=tmp_path / "home")
        assert run.returncode == 2, run.stderr
        assert f"Type slaiga {command} GAME, GAME one of:" in run.stderr
        for name in registry.names():
            assert f"  {name} " in run.stderr
            assert registry.get(name).description in run.stderr
        assert "the following arguments are required" not in run.stderr


def test_a_table_that_nothing_answers_is_said_without_an_exception_repr(tmp_path: Path) -> None:
    """Joining or watching an address where nothing listens (port 1 on loopback)."""
    for args in (("join", "--peer", "127.0.0.1:1"), ("watch", "--peer", "127.0.0.1:1")):
        run = slaiga(*args, home=tmp_path / "home")
        assert run.returncode == 1, run.stderr
        assert "nothing listens there (is the table still open, and the address right?)" in (
            run.stderr
        )
        assert "OSError" not in run.stderr and "Error(" not in run.stderr
        error = " ".join(run.stderr[run.stderr.index("error:") :].split())
        assert error.startswith("error: cannot reach the table at 127.0.0.1:1: nothing listens")
        assert error.count("127.0.0.1:1") == 1  # the address named once


def test_replay_shows_the_rules_and_the_log_when_typed(tmp_path: Path) -> None:
    """The table screen tells a player to type `rules` (and `log`); in a replay they work
    too: the rules page (with the table's own rule book where the game has one) and every
    event so far; another word is answered, not ignored."""
    from cli.replay import Replay, Screen
    from tests.cli._replays import played_record
    from tests.cli._screens import FakeTerminal

    path, _ = played_record(tmp_path, "aight-of-spaides", 2, {"max_turns": 6})
    keys = ["pgdn", "pgdn", *"rules", "enter", "esc", *"log", "enter", "enter"]
    keys += [*"dance", "enter", "q"]
    term = FakeTerminal(keys, keep=100)
    Screen(Replay(path), term).run()
    frames = [plain(f) for f in term.frames]
    rules = [f for f in frames if f.startswith("Rules")]
    assert rules and "This table's rule book:" in rules[0], frames[-3:]
    log = [f for f in frames if f.startswith("Log: every event so far")]
    assert log and "is dealt" in log[0], frames[-3:]
    assert any("'dance': type a step number, rules or log, then Enter" in f for f in frames)


def test_a_berserker_is_told_in_a_sentence() -> None:
    """Slåjens told "Cat Berserker on 4s: 16, rerolls 2 5 for 23" (no verb)."""
    from engine.games.slajens.actions import RollDice, Stop
    from engine.runner import settle
    from tests.engine.test_slajens import new

    g, d = new(dice=[4, 4, 3, 4, 1, 2, 5])
    g.apply(RollDice(0))
    settle(g, d)
    g.apply(Stop(0))
    (told,) = [e for e in settle(g, d) if e.kind == "berserker"]
    said = narrate(told, Names(["Cat", "Ann"], 1))
    assert said == "Cat has a Berserker of 4s: 16, and rerolls two dice (2 and 5) for 23"
