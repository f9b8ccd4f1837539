"""Who plays a seat: the one interface every game loop talks to.

A seat's *player* is asked for a decision when its seat owes an action and is
told what happened. Kinds of player: a bot (:class:`BotPlayer`), a person at
this terminal (``cli``), and, on a real table, remote seats whose actions
arrive through the signed record (those need no player object on this peer).

``decide`` is a coroutine so that a person can think while the table's
network loop keeps running; bots answer at once. The player only ever gets
its own seat's engine instance, whose ``view(seat)`` and
``legal_actions(seat)`` hold nothing the seat may not see.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from engine.bots import Bot
from engine.game import Action, Event, Game


class LeftTable(Exception):
    """Raised by :meth:`Player.decide` when the one playing the seat leaves the table
    (a person quits); the game loop decides whether someone else takes the seat."""


class Player(Protocol):
    """The seat-side interface of every game loop (bots, people)."""

    def observe(self, game: Game, seat: int, events: Sequence[Event]) -> None:
        """``events`` (already filtered to those ``seat`` may see) happened; ``game`` is
        the seat's own engine instance after them."""
        ...

    async def decide(self, game: Game, seat: int) -> Action:
        """Choose one of ``game.legal_actions(seat)`` (or raise :class:`LeftTable`)."""
        ...

    def progress(self, text: str) -> None:
        """What the table is doing meanwhile, in plain words ("Bob is shuffling")."""
        ...

    def finish(self, summary: Mapping[str, Any]) -> None:
        """The game ended; ``summary`` is the final result object (ranking, record...)."""
        ...


class BotPlayer:
    """A :class:`Player` that asks a bot: it sees only its seat's view and legal moves."""

    def __init__(self, bot: Bot) -> None:
        self.bot = bot

    @classmethod
    def make(
        cls,
        factory: Callable[..., Bot],
        seat: int,
        rng: random.Random,
        params: Mapping[str, Any] | None = None,
    ) -> BotPlayer:
        return cls(factory(seat, rng, **dict(params or {})))

    def observe(self, game: Game, seat: int, events: Sequence[Event]) -> None:
        see = self.bot.observe
        if getattr(see, "__func__", None) is Bot.observe:
            return  # the bot takes no notice of events (``Bot.observe`` does nothing)
        for ev in events:
            see(ev)

    def choose(self, game: Game, seat: int) -> Action:
        """The bot's decision, synchronously."""
        return self.bot.act(game.view(seat), game.legal_actions(seat))

    async def decide(self, game: Game, seat: int) -> Action:
        return self.choose(game, seat)

    def progress(self, text: str) -> None:
        pass

    def finish(self, summary: Mapping[str, Any]) -> None:
        pass
