"""Bot players. A bot sees only its seat's ``view`` and legal actions.

Bots are players, not chance: their own seeded ``random.Random`` stands for a
player's whims and is never the game's source of chance.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from engine.game import Action, Event


class Bot:
    """Base class. ``act`` picks one of ``legal``; ``observe`` sees events."""

    kind = "bot"

    def __init__(self, seat: int, rng: random.Random, **params: Any) -> None:
        self.seat = seat
        self.rng = rng
        self.params = params

    def act(self, view: dict[str, Any], legal: Sequence[Action]) -> Action:
        raise NotImplementedError

    def observe(self, event: Event) -> None:
        """Called with every event this seat may see, in order."""


class RandomBot(Bot):
    """Plays a uniformly random legal action."""

    kind = "random"

    def act(self, view: dict[str, Any], legal: Sequence[Action]) -> Action:
        return self.rng.choice(list(legal))
