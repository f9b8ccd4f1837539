"""Old import path of Slaiga's bot, kept while code elsewhere moves to engine.games.slaiga.bots.

A thin re-export (including the old names of renamed things); import from the new
modules instead. To be removed once nothing imports this path.
"""

from engine.games.slaiga.bots import *  # noqa: F403
