"""Each game's words: how its moves are said, described, typed and offered in menus, how its
table looks and how its events are told.

A game package brings its words in a module of its own (``engine/games/<game>/words.py``)
that registers them, as the package registers its rules:

    register_words("slave", GameWords(title="Slave", moves=SlaveMoves, look=SlaveLook()))

``words_for(name)`` finds them (importing every game package first); a game without
words of its own gets ``GameWords`` with its name as title, ``GenericMoves`` (every action
typed and listed from its fields) and ``GenericLook``. Everything here is pure: functions
and data from a seat's view to text and menus; ``cli`` draws them on a terminal.

``menus`` holds the question tree a move is chosen by, ``moves`` the ``Moves`` interface
and its helpers, ``look`` the ``Look`` interface, ``names`` the table's names and
``tokens`` how cards, ranks and suits are typed.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from engine.errors import EngineError
from engine.game import Event
from engine.words.look import GenericLook, Look
from engine.words.moves import GenericMoves, Moves
from engine.words.names import Names

Teller = Callable[[Any, Event, Names], str]

_WORDS: dict[str, GameWords] = {}
_TELLERS: dict[type, Teller] = {}


@dataclass(frozen=True)
class GameWords:
    """One game's words. ``tells`` maps each typed event of the game (the class of an
    ``Event.detail``) to the function that tells it in a sentence, ``(detail, event, names)``;
    any other event is told from its text, with names for seat numbers."""

    title: str
    moves: type[Moves] = GenericMoves
    look: Look = field(default_factory=GenericLook)
    tells: Mapping[type, Teller] = field(default_factory=dict)
    endings: Mapping[str, str] = field(default_factory=dict)
    """How the game's own end reasons (``Outcome.reason``) are said to players, where the
    engine's words are too short to read alone ("one seat left")."""


def register_words(name: str, words: GameWords) -> GameWords:
    """Make ``words`` the words of game ``name``; other words for that name are an error."""
    old = _WORDS.get(name)
    if old is not None and old is not words:
        raise EngineError(f"two sets of words are registered for {name!r}")
    _WORDS[name] = words
    for cls, teller in words.tells.items():
        if _TELLERS.setdefault(cls, teller) is not teller:
            raise EngineError(f"two ways to tell {cls.__name__} events are registered")
    return words


def tell(event: Event, names: Names) -> str | None:
    """``event`` in the sentence its game's words make of its typed detail, or ``None``
    where the game tells it by its text."""
    if event.detail is None:
        return None
    importlib.import_module("engine.games")
    teller = _TELLERS.get(type(event.detail))
    return teller(event.detail, event, names) if teller is not None else None


_GENERIC: dict[str, GameWords] = {}


def words_for(name: str) -> GameWords:
    """The words of game ``name``: its own, or the generic ones (titled by its name)."""
    importlib.import_module("engine.games")
    found = _WORDS.get(name)
    if found is None:
        found = _GENERIC.setdefault(name, GameWords(title=name))
    return found


__all__ = ["GameWords", "Look", "Moves", "Names", "register_words", "tell", "words_for"]
