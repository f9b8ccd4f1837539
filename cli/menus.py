"""The question tree a move is chosen by, as ``cli`` knows it: ``engine.words.menus``
(the games build these questions with their words; ``cli.screen`` asks them)."""

from engine.words.menus import *  # noqa: F403
from engine.words.menus import __all__  # noqa: F401
