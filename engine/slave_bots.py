"""Old import path of Slave's bots, kept while code elsewhere moves to engine.games.slave.bots.

A thin re-export (including the old names of renamed things); import from the new
modules instead. To be removed once nothing imports this path.
"""

from engine.games.slave.bots import *  # noqa: F403
