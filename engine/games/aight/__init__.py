"""Aight of Spaides: a shedding game whose players write its rules
(docs/rules/aight-of-spaides.md).

``actions`` holds the actions, ``rulebook`` the rule language (rules are data, checked
by every peer), ``rules`` the game, ``bots`` the players and ``stats`` the simulation
summary; this module registers the game.
"""

from engine.games.aight.bots import HeuristicBot, RandomAightBot
from engine.games.aight.rules import AightOfSpaides
from engine.games.aight.stats import summarise
from engine.registry import GameSpec, register

SPEC = register(
    GameSpec(
        name="aight-of-spaides",
        factory=AightOfSpaides,
        game_class=AightOfSpaides,
        bots={"random": RandomAightBot, "heuristic": HeuristicBot},
        default_seats=4,
        description="Uno-like shedding game whose players create the rules",
        summarise=summarise,
    )
)

from engine.games.aight import words  # noqa: E402, F401  (registers the game's words)
