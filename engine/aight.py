"""Old import path of Aight of Spaides, kept while code elsewhere moves to engine.games.aight.

A thin re-export (including the old names of renamed things); import from the new
modules instead. To be removed once nothing imports this path.
"""

from engine import registry
from engine.games.aight.actions import *  # noqa: F403
from engine.games.aight.rulebook import CreateRule, describe  # noqa: F401
from engine.games.aight.rules import *  # noqa: F403
from engine.games.aight.rules import AightOfSpaides
from engine.games.aight.stats import summarise  # noqa: F401

ACTIONS = AightOfSpaides.ACTIONS
PHASES = {name: tuple(p.actions) for name, p in AightOfSpaides.PHASES.items()}
MAX_WORDS = MAX_ANNOUNCEMENTS  # noqa: F405
GAMES = {"aight-of-spaides": registry.get("aight-of-spaides")}
