"""Aight of Spaides' actions (docs/rules/aight-of-spaides.md), with the exact wire form of
every field. A rule a player creates travels as plain data through ``spec_to_dict`` and
``spec_from_dict`` (``rulebook``), which check every key, type and range."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from engine.cards import SUITS
from engine.codec import Handle, Nested, Range, Seat, Size, Text
from engine.game import Action
from engine.games.aight.rulebook import (
    MAX_ANNOUNCEMENTS,
    MAX_RULES,
    MAX_WORDS_LEN,
    RuleSpec,
    spec_from_dict,
    spec_to_dict,
)

SPEND_DEAL = 3  # cards a spent pending rule deals

Words = Annotated[tuple[Annotated[str, Text(MAX_WORDS_LEN)], ...], Size(0, MAX_ANNOUNCEMENTS)]
"""The announcements a move carries (the rule book never requires more)."""

Suit = Annotated[int, Range(SUITS[0], SUITS[-1] + 1)]

Rule = Annotated[
    RuleSpec, Nested(RuleSpec, spec_to_dict, spec_from_dict, RuleSpec.check, what="rule")
]
"""A rule a player creates: checked on its own here, against the rule book by the game."""


@dataclass(frozen=True, slots=True)
class Play(Action):
    """Play ``card`` from the hand with ``words`` announced; ``suit`` names the
    suit for a wild card; ``rule`` is the rule created by it (8♠)."""

    card: Handle
    words: Words = ()
    suit: Suit | None = None
    rule: Rule | None = None


@dataclass(frozen=True, slots=True)
class Draw(Action):
    """Draw one card (or, with a stack pending, the whole stack)."""

    words: Words = ()


@dataclass(frozen=True, slots=True)
class PlayDrawn(Action):
    """Play the card just drawn."""

    words: Words = ()
    suit: Suit | None = None
    rule: Rule | None = None


@dataclass(frozen=True, slots=True)
class EndTurn(Action):
    """Keep the card just drawn."""


@dataclass(frozen=True, slots=True)
class Call(Action):
    """Call Improper! on the last move. ``cite`` 0 = the structured rules,
    otherwise the number of the free-text rule broken."""

    cite: Annotated[int, Range(0, MAX_RULES + 1)] = 0


@dataclass(frozen=True, slots=True)
class Pass(Action):
    """Let the last move stand as far as this seat is concerned."""


@dataclass(frozen=True, slots=True)
class Vote(Action):
    """Vote on an Improper! call citing a free-text rule."""

    upheld: bool


@dataclass(frozen=True, slots=True)
class Spend(Action):
    """Spend a pending rule: create ``rule`` and deal 3 cards to ``deal``'s seats."""

    rule: Rule
    deal: Annotated[tuple[Seat, ...], Size(SPEND_DEAL, SPEND_DEAL)]


@dataclass(frozen=True, slots=True)
class KeepRule(Action):
    """Keep the pending rule for later."""


@dataclass(frozen=True, slots=True)
class ProposeEnd(Action):
    """Propose to end the game (once per turn); every seat then votes."""


@dataclass(frozen=True, slots=True)
class VoteEnd(Action):
    """Vote on ending the game."""

    yes: bool
