"""The games ``slaiga`` knows, by name, loaded lazily.

Each game module defines ``GAMES``: a dict from game name to ``GameSpec``.
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

MODULES = {
    "slaiga": "engine.slaiga",
    "honest-slaiga": "engine.slaiga",
    "aight-of-spaides": "engine.aight",
    "slave": "engine.slave",
    "slajens": "engine.slajens",
}


@dataclass(frozen=True)
class GameSpec:
    """How to build a game and its bots.

    ``factory(seats, options)`` builds a game. ``bots`` maps a bot kind
    (``random``, ``heuristic``) to a constructor ``(seat, rng, **params)``.
    ``summarise`` (optional) turns a list of results into extra summary lines
    (a dict of name to value) for ``slaiga simulate``.
    """

    name: str
    factory: Callable[[int, Mapping[str, Any] | None], Game]
    game_class: type[Game]
    bots: Mapping[str, Callable[..., Bot]]
    default_seats: int
    description: str = ""
    summarise: Callable[[list[SimResult]], dict[str, Any]] | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)


def names() -> list[str]:
    return list(MODULES)


def get(name: str) -> GameSpec:
    if name not in MODULES:
        raise EngineError(f"unknown game {name!r}; known games: {', '.join(MODULES)}")
    try:
        module = importlib.import_module(MODULES[name])
    except ModuleNotFoundError as exc:
        raise EngineError(f"game {name!r} is not available yet ({exc})") from exc
    return module.GAMES[name]
