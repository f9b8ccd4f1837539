"""Each game brings its own words (engine/games/<game>/words.py); ``cli`` names no game.

* ``cli/`` holds no game's name, title or module: a new game's words are one new folder;
* High Card (the template game) plays a whole game through the command line's player with
  the words of its own folder;
* ``GenericMoves`` names cards by face and seats by name from ``engine.codec``'s field
  types, not from field names.
"""

from __future__ import annotations

import ast
import random
from dataclasses import dataclass
from pathlib import Path

import trio

from cli.moves import GenericMoves, moves_for
from cli.narrate import Names
from cli.render import plain
from engine import registry
from engine.codec import Handle, Seat
from engine.dealer import LocalDealer
from engine.game import Action
from engine.words import words_for
from tests.cli.test_human import play_whole

CLI = Path(__file__).resolve().parents[2] / "cli"


def _program_name_uses(tree: ast.AST) -> set[int]:
    """ids of the "slaiga" constants that name the program: ``prog=``, ``APP_NAME = `` and
    inside ``slaiga_command`` (how to run the program again)."""
    ok: set[int] = set()
    for node in ast.walk(tree):
        prog = isinstance(node, ast.keyword) and node.arg == "prog"
        app = isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "APP_NAME" for t in node.targets
        )
        command = isinstance(node, ast.FunctionDef) and node.name == "slaiga_command"
        if prog or app or command:
            ok |= {id(n) for n in ast.walk(node) if isinstance(n, ast.Constant)}
    return ok


def test_cli_names_no_game():
    games = set(registry.names()) | {"high-card"}
    titles = {words_for(g).title for g in games} - {"Slaiga"}
    found = []
    for path in sorted(CLI.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        allowed = _program_name_uses(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                mods = (
                    [a.name for a in node.names]
                    if isinstance(node, ast.Import)
                    else [node.module or ""]
                )
                found += [f"{path.name}:{node.lineno} imports {m}" for m in mods if "games" in m]
            named = isinstance(node, ast.Constant) and isinstance(node.value, str)
            if named and (
                node.value in titles or (node.value in games and id(node) not in allowed)
            ):
                found.append(f"{path.name}:{node.lineno} names {node.value!r}")
    assert not found, "cli/ names games (their words belong in engine/games/<game>/):\n" + (
        "\n".join(found)
    )


def test_a_game_brings_its_words_in_its_own_folder():
    """Every game's words are registered from its own package's ``words`` module."""
    for name in [*registry.names(), "high-card"]:
        words = words_for(name)
        package = registry.get(name).game_class.__module__.rsplit(".", 1)[0]
        assert words.moves.__module__ == package + ".words", name
        assert type(words.look).__module__ == package + ".words", name


def test_high_card_plays_through_the_command_line_with_its_own_words():
    human, term, summary = trio.run(play_whole, "high-card", 3, {"hand": 3}, 5)
    assert sorted(summary["ranking"]) == [0, 1, 2]
    assert human.asked == 2  # three cards, then two; the last one is played for you
    shown = "\n".join(plain(f) for f in term.frames)
    assert "High Card · you are Ann" in shown
    assert "Played: " in shown and "Your move: play a card" in shown


def test_high_card_words_round_trip():
    spec = registry.get("high-card")
    game = spec.factory(3, {"hand": 3})
    from engine import runner

    runner.start(game, LocalDealer(game.deck, 3))
    seat = game.to_move()[0]
    moves = moves_for("high-card", Names(["Ann", "Bob", "Cat"], seat))
    for a in game.legal_actions(seat):
        face = game.face_for(seat, a.card)
        said = moves.say(game, seat, a)
        assert moves.parse(game, seat, said) == (a,)
        assert moves.parse(game, seat, said.upper()) == (a,)
        assert moves.describe(game, seat, a) == f"play {face}"


def test_generic_moves_read_cards_and_seats_from_the_codec():
    """A field is a card or a seat because its annotation says so (``Handle``, ``Seat``)."""
    spec = registry.get("slaiga")
    for seed in range(40):
        game = spec.factory(3, {})
        from engine import runner

        runner.start(game, LocalDealer(game.deck, seed))
        seat = game.to_move()[0]
        names = Names(["Ann", "Bob", "Cat"], seat)
        generic = GenericMoves(names)
        jacks = [a for a in game.legal_actions(seat) if type(a).__name__ == "JackShot"]
        if not jacks:
            continue
        a = random.Random(seed).choice(jacks)
        face = game.face_for(seat, a.card)
        said = generic.say(game, seat, a)
        assert said.split() == ["jack-shot", names.token(a.target), _code(face)]
        assert generic.parse(game, seat, said) == (a,)
        return
    raise AssertionError("no jack shot in 40 deals")


def _code(face) -> str:
    from engine.words.tokens import card_word

    return card_word(face)


def test_a_game_without_words_is_played_with_the_generic_ones():
    assert words_for("no-such-game").moves is GenericMoves
    assert words_for("no-such-game").title == "no-such-game"
    assert isinstance(moves_for("no-such-game", Names(["Ann", "Bob"], 0)), GenericMoves)


@dataclass(frozen=True, slots=True)
class Toss(Action):
    """An action whose field names say nothing: only the annotations say card and seat."""

    pick: Handle
    whom: Seat
    loud: bool


def test_generic_moves_read_field_types_not_field_names():
    game = registry.get("high-card").factory(3, {"hand": 3})
    from engine import runner

    runner.start(game, LocalDealer(game.deck, 2))
    seat = game.to_move()[0]
    h = game.view(seat)["hand"][0]
    names = Names(["Ann", "Bob", "Cat"], seat)
    toss = Toss(seat, h.handle, (seat + 1) % 3, True)
    said = GenericMoves(names).say(game, seat, toss)
    assert said == f"toss {_code(h.face)} {names.token((seat + 1) % 3)} yes"
    assert GenericMoves(names).describe(game, seat, toss).startswith(f"toss {_code(h.face)}")
