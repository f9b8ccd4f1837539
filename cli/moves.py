"""Moves as players say them, for the game at this terminal.

Each game brings its own words (``engine/games/<game>/words.py``, registered with
``engine.words``): typed shorthand and plain words for every legal action (``say``,
``describe``, ``parse``), short grouped menus (``menu``), the prompt's question and the
``?`` page. A game without words of its own is played with ``GenericMoves``: every action
typed and listed from its fields. ``cli.human`` asks through these; nothing here names a
game.
"""

from __future__ import annotations

from engine.words import words_for
from engine.words.menus import MoveError
from engine.words.moves import (
    GenericMoves,
    Moves,
    same_move,
    take_cards,
    validate_plan,
)
from engine.words.names import Names


def moves_for(game_name: str, names: Names) -> Moves:
    """The moves of game ``game_name`` for a table with these names."""
    return words_for(game_name).moves(names)


__all__ = [
    "GenericMoves",
    "MoveError",
    "Moves",
    "moves_for",
    "same_move",
    "take_cards",
    "validate_plan",
]
