"""Slåjens' actions (docs/rules/slajens.md), with the exact wire form of every field."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from engine.codec import SEATS, Range, Size
from engine.game import Action

DICE = 5
SIDES = 6
LUCK_FACE, LUCK_SCORE = 1, 10
NO_TARGET = -1
MAX_TURN_SCORE = DICE * LUCK_SCORE  # five 1s; a Berserker scores at most 3*6 + 2*6
"""The most one turn can score, hence the largest amount a steal capped by a previous
round's score can name."""
MAX_SEATS, MAX_ROUNDS = 10, 1000
MAX_STEAL = MAX_SEATS * MAX_ROUNDS * MAX_TURN_SCORE
"""No total can pass every score of the game, hence the largest amount a steal capped by
the running total (option ``steal_cap=total``) can name."""

Position = Annotated[int, Range(0, DICE)]


@dataclass(frozen=True, slots=True)
class RollDice(Action):
    """Roll all five dice; ``target >= 0`` declares a steal of ``amount``."""

    target: Annotated[int, Range(NO_TARGET, SEATS)] = NO_TARGET
    amount: Annotated[int, Range(0, MAX_STEAL + 1)] = 0


_STEALS: dict[tuple[int, int], list[RollDice]] = {}


def steals(seat: int, target: int, cap: int) -> list[RollDice]:
    """``RollDice(seat, target, amount)`` for every amount 1..``cap``, in that order.

    Made once per amount and shared (actions are frozen): with ``steal_cap=total`` a turn
    can offer thousands of them, and building each again at every turn was most of the
    cost of listing a seat's legal actions."""
    made = _STEALS.setdefault((seat, target), [])
    if len(made) < cap:
        made.extend(RollDice(seat, target, a) for a in range(len(made) + 1, cap + 1))
    return made[:cap]


@dataclass(frozen=True, slots=True)
class Keep(Action):
    """Keep the dice at these positions (0-4) and reroll the others."""

    keep: Annotated[tuple[Position, ...], Size(0, DICE)]


@dataclass(frozen=True, slots=True)
class Stop(Action):
    """Score the dice now."""


@dataclass(frozen=True, slots=True)
class Respond(Action):
    """A steal's target: defend on the next turn, or accept the loss now."""

    defend: bool
