"""Old import path of Slåjens, kept while code elsewhere moves to engine.games.slajens.

A thin re-export (including the old names of renamed things); import from the new
modules instead. To be removed once nothing imports this path.
"""

from engine import registry
from engine.games.slajens.actions import *  # noqa: F403
from engine.games.slajens.rules import *  # noqa: F403
from engine.games.slajens.rules import _ALL_KEEPS, _REROLL, Slajens  # noqa: F401
from engine.games.slajens.stats import summarise  # noqa: F401

PHASE_ACTIONS = {name: tuple(p.actions) for name, p in Slajens.PHASES.items()}
GAMES = {"slajens": registry.get("slajens")}
