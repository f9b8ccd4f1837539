"""Slåjens: five dice, up to three rolls, Berserker, Sjond steals (docs/rules/slajens.md).

``actions`` holds the actions, ``rules`` the game, ``bots`` the heuristic player and
``stats`` the simulation summary; this module registers the game.
"""

from engine.bots import RandomBot
from engine.games.slajens.bots import SlajensHeuristicBot
from engine.games.slajens.rules import Slajens
from engine.games.slajens.stats import summarise
from engine.registry import GameSpec, register

SPEC = register(
    GameSpec(
        name="slajens",
        factory=Slajens,
        game_class=Slajens,
        bots={"random": RandomBot, "heuristic": SlajensHeuristicBot},
        default_seats=4,
        description="Slåjens: five dice, three rolls, Berserker, Sjond steals",
        summarise=summarise,
    )
)

from engine.games.slajens import words  # noqa: E402, F401  (registers the game's words)
