"""Old import path of Slaiga's rules, kept while code elsewhere moves to engine.games.slaiga.

A thin re-export (including the old names of renamed things); import from the new
modules instead. To be removed once nothing imports this path.
"""

from engine.games.slaiga.actions import *  # noqa: F403
from engine.games.slaiga.agenda import *  # noqa: F403
from engine.games.slaiga.agenda import Task, task_of
from engine.games.slaiga.hands import *  # noqa: F403
from engine.games.slaiga.hands import VolleyCard
from engine.games.slaiga.legal import *  # noqa: F403
from engine.games.slaiga.rules import *  # noqa: F403
from engine.games.slaiga.rules import DEFAULT_MAX_TURNS, HonestSlaiga, Slaiga  # noqa: F401

Step, step_of, Play = Task, task_of, VolleyCard
ALL_ACTIONS = Slaiga.ACTIONS
PHASE_ACTIONS = {n: tuple(p.actions) for n, p in Slaiga.PHASES.items() if p.auto is None}
AUTO_STEPS = frozenset(n for n, p in Slaiga.PHASES.items() if p.auto is not None)
