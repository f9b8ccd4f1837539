"""Old import path of Slave, kept while code elsewhere moves to engine.games.slave.

A thin re-export (including the old names of renamed things); import from the new
modules instead. To be removed once nothing imports this path.
"""

from engine import registry
from engine.games.slave.actions import *  # noqa: F403
from engine.games.slave.rules import *  # noqa: F403
from engine.games.slave.rules import Exchange, Slave
from engine.games.slave.stats import summarise  # noqa: F401

ExchangeStep = Exchange
PHASE_ACTIONS = {name: tuple(p.actions) for name, p in Slave.PHASES.items()}
GAMES = {"slave": registry.get("slave")}
