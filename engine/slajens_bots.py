"""Old import path of Slåjens' bots, kept while code elsewhere moves to engine.games.slajens.bots.

A thin re-export (including the old names of renamed things); import from the new
modules instead. To be removed once nothing imports this path.
"""

from engine.games.slajens.bots import *  # noqa: F403
