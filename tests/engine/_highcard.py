"""'High card', the template game of docs/adding-a-game.md, for testing the engine core and
the dealers without any real game's rules: tests/engine/test_core.py runs it on the local
dealer, tests/p2p/test_mental_dealer.py on the mental-poker one."""

from engine.games.highcard.actions import PlayCard
from engine.games.highcard.rules import HighCard

__all__ = ["HighCard", "PlayCard"]
