"""High Card, the template game (docs/adding-a-game.md): ``actions``, ``rules`` and
``bots``, registered here. It is not offered to players (``listed=False``), but
``slaiga simulate high-card --verbose`` plays it."""

from engine.bots import RandomBot
from engine.games.highcard.bots import HighestFirstBot
from engine.games.highcard.rules import HighCard
from engine.registry import GameSpec, register

SPEC = register(
    GameSpec(
        name="high-card",
        factory=HighCard,
        game_class=HighCard,
        bots={"random": RandomBot, "heuristic": HighestFirstBot},
        default_seats=3,
        description="High Card: the smallest game, the template for a new one",
        listed=False,
    )
)

from engine.games.highcard import words  # noqa: E402, F401  (registers the game's words)
