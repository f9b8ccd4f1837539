"""Old import path of Aight of Spaides' rule language, kept while code elsewhere moves to engine.games.aight.rulebook.

A thin re-export (including the old names of renamed things); import from the new
modules instead. To be removed once nothing imports this path.
"""

from engine.codec import BRIEF_LEN, brief  # noqa: F401
from engine.games.aight.rulebook import *  # noqa: F403
from engine.games.aight.rulebook import Standings

Context = Standings
