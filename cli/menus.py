"""The question tree a move is chosen by (``engine.words.menus``), as ``cli`` knows it.

The games build these questions with their words; ``cli.screen`` asks them.
"""

from engine.words.menus import (
    Ask,
    Choice,
    MoveError,
    Node,
    Number,
    Option,
    Pick,
    Plan,
    branch,
    choose,
    grouped,
    is_plan,
    leaf,
    one_of,
    resolve,
)

__all__ = [
    "Ask",
    "Choice",
    "MoveError",
    "Node",
    "Number",
    "Option",
    "Pick",
    "Plan",
    "branch",
    "choose",
    "grouped",
    "is_plan",
    "leaf",
    "one_of",
    "resolve",
]
