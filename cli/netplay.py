"""Who plays our seat at a LAN table, and how a finished game is reported.

``--bot heuristic`` (or ``random``) makes this process a bot peer: it keeps
its own identity key and key share like any other peer, and its bot sees
only its own seat's view.  Without ``--bot`` the person at the terminal
plays the seat on the table screen (``cli.human``); when stdin is not a
terminal a bot plays it and the game is printed as it goes.
"""

from __future__ import annotations

import random
import secrets
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import trio

from engine import registry
from engine.game import Action, Event, Game
from engine.players import BotPlayer, Player

BOT_KINDS = ("heuristic", "random")


class ThinkingBot:
    """A bot that takes its time like a person (``--bot-think-ms``): its decisions go
    through the same path as a person's, while the table keeps running."""

    def __init__(self, bot: BotPlayer, think_s: float) -> None:
        self.bot = bot
        self.think_s = think_s

    def observe(self, game: Game, seat: int, events: Sequence[Event]) -> None:
        self.bot.observe(game, seat, events)

    async def decide(self, game: Game, seat: int) -> Action:
        await trio.sleep(self.think_s)
        return self.bot.choose(game, seat)

    def progress(self, text: str) -> None:
        pass

    def finish(self, summary: Mapping[str, Any]) -> None:
        pass


def player_factory(
    bot: str | None,
    seed: int | None = None,
    params: Mapping[str, Any] | None = None,
    think_ms: int = 0,
    answer_timeout: float = 20.0,
    quiet: bool = False,
) -> Callable[[list[str], int, str], Player]:
    """Build the ``NodeConfig.make_player`` for ``--bot`` (or a person without it)."""

    def make(names: list[str], seat: int, game: str) -> Player:
        spec = registry.get(game)
        if bot is not None:
            rng = random.Random(secrets.randbits(64) if seed is None else seed)
            player = BotPlayer.make(spec.bots[bot], seat, rng, params)
            return ThinkingBot(player, think_ms / 1000) if think_ms > 0 else player
        from cli.human import HumanPlayer, WatchingPlayer

        if not (sys.stdin.isatty() and sys.stdout.isatty()):
            # nobody at a terminal: a bot plays the seat and the game is printed
            watcher = spec.bots["heuristic"](seat, random.Random(secrets.randbits(64)))
            return WatchingPlayer(watcher, names, seat, quiet=quiet)
        return HumanPlayer(names, seat, game, answer_timeout=answer_timeout)

    return make


def close_player(player: Any, summary: Mapping[str, Any] | None) -> None:
    """Show the end of the game to our player and give the terminal back."""
    if player is None:
        return
    try:
        if summary is not None:
            player.finish(summary)
    finally:
        close = getattr(player, "close", None)
        if close is not None:
            close()
