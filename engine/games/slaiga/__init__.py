"""Slaiga and Honest Slaiga: straight flushes, volleys, and lies you can check
(docs/rules/slaiga.md).

``actions`` holds the actions, ``hands`` the card logic, ``agenda`` the turn structure
and handlers, ``legal`` the legal moves and views, ``rules`` the two game classes and
their phase table, ``bots`` the heuristic player and ``stats`` the simulation summary;
this module registers both games.
"""

from engine.bots import RandomBot
from engine.games.slaiga.bots import SlaigaBot
from engine.games.slaiga.rules import HonestSlaiga, Slaiga
from engine.games.slaiga.stats import summarise
from engine.registry import GameSpec, register

BOTS = {"random": RandomBot, "heuristic": SlaigaBot}

SPEC = register(
    GameSpec(
        name="slaiga",
        factory=Slaiga,
        game_class=Slaiga,
        bots=BOTS,
        default_seats=4,
        description="Slaiga: straight flushes, volleys, and lies you can check",
        summarise=summarise,
    )
)
HONEST_SPEC = register(
    GameSpec(
        name="honest-slaiga",
        factory=HonestSlaiga,
        game_class=HonestSlaiga,
        bots=BOTS,
        default_seats=4,
        description="Honest Slaiga: face-up volleys, proved misses and wins",
        summarise=summarise,
    )
)

from engine.games.slaiga import words  # noqa: E402, F401  (registers the game's words)
