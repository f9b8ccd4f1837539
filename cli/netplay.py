"""Who plays our seat at a LAN table, and how a finished game is reported.

``--bot heuristic`` (or ``random``) makes this process a bot peer: it keeps
its own identity key and key share like any other peer, and its bot sees
only its own seat's view.  Without ``--bot`` the person at the terminal
plays the seat through the table screen (``cli.human``) when it is
available, else through a plain numbered prompt.
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


class PromptPlayer:
    """A plain prompt: the seat's view, numbered legal moves, one line of input."""

    def __init__(self, names: Sequence[str], seat: int, game: str) -> None:
        self.names = list(names)
        self.seat = seat
        self.game = game

    def observe(self, game: Game, seat: int, events: Sequence[Event]) -> None:
        for ev in events:
            print(f"  · {ev.text}", flush=True)

    async def decide(self, game: Game, seat: int) -> Action:
        legal = game.legal_actions(seat)
        if len(legal) == 1:
            print(f"  (only move) {legal[0]}", flush=True)
            return legal[0]
        view = game.view(seat)
        print(f"\n{self.names[seat]}, your move:", flush=True)
        for key, value in view.items():
            print(f"  {key}: {value}", flush=True)
        for i, action in enumerate(legal):
            print(f"  [{i}] {action}", flush=True)
        while True:
            line = await trio.to_thread.run_sync(_read_line, abandon_on_cancel=True)
            if line is None:
                raise EOFError("input closed")
            line = line.strip()
            if line.isdigit() and int(line) < len(legal):
                return legal[int(line)]
            print(f"  type a number from 0 to {len(legal) - 1}", flush=True)

    def progress(self, text: str) -> None:
        print(f"  … {text}", flush=True)

    def finish(self, summary: Mapping[str, Any]) -> None:
        pass


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


def _read_line() -> str | None:
    line = sys.stdin.readline()
    return line if line else None


def player_factory(
    bot: str | None,
    seed: int | None = None,
    params: Mapping[str, Any] | None = None,
    think_ms: int = 0,
) -> Callable[[list[str], int, str], Player]:
    """Build the ``NodeConfig.make_player`` for ``--bot`` (or a person without it)."""

    def make(names: list[str], seat: int, game: str) -> Player:
        if bot is not None:
            spec = registry.get(game)
            rng = random.Random(secrets.randbits(64) if seed is None else seed)
            player = BotPlayer.make(spec.bots[bot], seat, rng, params)
            return ThinkingBot(player, think_ms / 1000) if think_ms > 0 else player
        try:
            from cli.human import HumanPlayer  # the table screen, when installed
        except ImportError:
            return PromptPlayer(names, seat, game)
        return HumanPlayer(names=names, seat=seat, game=game)  # type: ignore[return-value]

    return make
