"""Old import path of the 'high card' test game, now the template game
``engine.games.highcard`` (docs/adding-a-game.md). A thin re-export, to be removed once
nothing imports this path."""

from engine.games.highcard.actions import PlayCard
from engine.games.highcard.rules import HighCard

__all__ = ["HighCard", "PlayCard"]
