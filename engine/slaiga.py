"""Old import path of the Slaiga registry entries, kept while code elsewhere moves to engine.games.slaiga.

A thin re-export (including the old names of renamed things); import from the new
modules instead. To be removed once nothing imports this path.
"""

from engine import registry
from engine.games.slaiga import BOTS  # noqa: F401
from engine.games.slaiga.stats import *  # noqa: F403

GAMES = {name: registry.get(name) for name in ("slaiga", "honest-slaiga")}
