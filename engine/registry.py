"""The games ``slaiga`` knows, by name.

Each game package under ``engine/games/`` registers its games where it defines them
(``register(GameSpec(...))`` in its ``__init__``). ``names()`` and ``get()`` import
``engine.games`` on first use, which imports every game package; the registry itself
names no module, so adding a game touches only its own package and one import line in
``engine/games/__init__.py`` (see docs/adding-a-game.md).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from engine.bots import Bot
from engine.errors import EngineError
from engine.game import Game
from engine.runner import SimResult

_GAMES: dict[str, GameSpec] = {}


@dataclass(frozen=True)
class GameSpec:
    """How to build a game and its bots.

    ``factory(seats, options)`` builds a game. ``bots`` maps a bot kind
    (``random``, ``heuristic``) to a constructor ``(seat, rng, **params)``.
    ``summarise`` (optional) turns a list of results into extra summary lines
    (a dict of name to value) for ``slaiga simulate``. ``listed`` is false for
    an example game (the template of docs/adding-a-game.md): ``get`` finds it,
    ``names`` does not offer it.
    """

    name: str
    factory: Callable[[int, Mapping[str, Any] | None], Game]
    game_class: type[Game]
    bots: Mapping[str, Callable[..., Bot]]
    default_seats: int
    description: str = ""
    summarise: Callable[[list[SimResult]], dict[str, Any]] | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    listed: bool = True


def register(spec: GameSpec) -> GameSpec:
    """Make ``spec`` known under ``spec.name``; a second game of that name is an error."""
    old = _GAMES.get(spec.name)
    if old is not None and old != spec:
        raise EngineError(f"two games are registered as {spec.name!r}")
    _GAMES[spec.name] = spec
    return spec


def _load() -> None:
    importlib.import_module("engine.games")


def names() -> list[str]:
    """The games offered to players, in the order the game packages register them."""
    _load()
    return [name for name, spec in _GAMES.items() if spec.listed]


def get(name: str) -> GameSpec:
    _load()
    spec = _GAMES.get(name)
    if spec is None:
        raise EngineError(f"unknown game {name!r}; known games: {', '.join(names())}")
    return spec
