"""Old import path of Aight of Spaides' bots, kept while code elsewhere moves to engine.games.aight.bots.

A thin re-export (including the old names of renamed things); import from the new
modules instead. To be removed once nothing imports this path.
"""

from engine.games.aight.bots import *  # noqa: F403
from engine.games.aight.bots import standings_of

context_of = standings_of
