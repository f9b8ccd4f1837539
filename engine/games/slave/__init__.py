"""Slave: shed your hand in sets; the first out is KING (docs/rules/slave.md).

``actions`` holds the actions, ``rules`` the game, ``bots`` the heuristic player and
``stats`` the simulation summary; this module registers the game.
"""

from engine.bots import RandomBot
from engine.games.slave.bots import SlaveHeuristicBot
from engine.games.slave.rules import Slave
from engine.games.slave.stats import summarise
from engine.registry import GameSpec, register

SPEC = register(
    GameSpec(
        name="slave",
        factory=Slave,
        game_class=Slave,
        bots={"random": RandomBot, "heuristic": SlaveHeuristicBot},
        default_seats=5,
        description="Slave: shed sets of one rank; first out is KING",
        summarise=summarise,
    )
)

from engine.games.slave import words  # noqa: E402, F401  (registers the game's words)
