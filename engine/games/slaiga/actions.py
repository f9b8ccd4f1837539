"""Slaiga's actions (docs/rules/slaiga.md), with the exact wire form of every field, and
the interned tables that ``legal_actions`` hands out.

Actions are frozen values, so ``legal_actions`` hands out shared instances from memoised
tables instead of building hundreds of dataclasses per action taken (every key is a
seat, a handle or a small tuple of them, so the tables stay small).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Annotated, NamedTuple

from engine.cards import SUITS
from engine.codec import CARDS, Choice, Handle, Range, Seat
from engine.game import Action

DRAW, DISCARD = "draw", "discard"
SOURCES = (DRAW, DISCARD)

Suit = Annotated[int, Range(SUITS[0], SUITS[-1] + 1)]
Pile = Annotated[str, Choice(SOURCES)]
Position = Annotated[int, Range(0, CARDS + 1)]
"""A place in the draw pile: 0 is the top, the pile's length its bottom."""


@dataclass(frozen=True, slots=True)
class Draw(Action):
    """Take the top card of ``source`` (``draw`` or ``discard``): turn, reload, joker draw."""

    source: Pile


@dataclass(frozen=True, slots=True)
class Discard(Action):
    """Discard ``card`` face up; ``declare`` a king's or queen's bullet ability."""

    card: Handle
    declare: bool = False


@dataclass(frozen=True, slots=True)
class ClaimWin(Action):
    """Put ``card`` face down on the discard pile and say "slaiga"."""

    card: Handle


@dataclass(frozen=True, slots=True)
class Shoot(Action):
    """Name opponent ``target`` and target suit ``suit``; the card follows (``ShotCard``)."""

    target: Seat
    suit: Suit


@dataclass(frozen=True, slots=True)
class ShotCard(Action):
    """Play the first shot's ``card`` (claimed: a shoot card of the suit after T; ace if ``ace``)."""

    card: Handle
    ace: bool = False


@dataclass(frozen=True, slots=True)
class JackShot(Action):
    """Start a jack volley against ``target`` with the jack ``card``, face up."""

    target: Seat
    card: Handle


@dataclass(frozen=True, slots=True)
class Answer(Action):
    """Block, countershoot, or (jack volley) answer with a bullet."""

    card: Handle
    ace: bool = False


@dataclass(frozen=True, slots=True)
class Concede(Action):
    """Give up the volley and pay its penalty."""


@dataclass(frozen=True, slots=True)
class Miss(Action):
    """The defender's first answer: "I hold fewer than three of the target suit"."""


@dataclass(frozen=True, slots=True)
class Check(Action):
    """Shot/block check (as an answer), miss check, or win check, by phase."""


@dataclass(frozen=True, slots=True)
class Pass(Action):
    """Accept a miss, decline a win check, or stop swapping."""


@dataclass(frozen=True, slots=True)
class CancelCheck(Action):
    """Cancel a check by playing the joker ``joker``."""

    joker: Handle


@dataclass(frozen=True, slots=True)
class AcceptCheck(Action):
    """Let a shot, block or win check go ahead."""


@dataclass(frozen=True, slots=True)
class MissVerdict(Action):
    """Answer a miss check: show the hand to the attacker and prove the verdict."""

    fewer: bool


@dataclass(frozen=True, slots=True)
class Give(Action):
    """Hand one penalty card to the receiver."""

    card: Handle


@dataclass(frozen=True, slots=True)
class Place(Action):
    """Place ``card`` in the draw pile at ``position`` (0 = top)."""

    card: Handle
    position: Position


@dataclass(frozen=True, slots=True)
class Swap(Action):
    """After a true miss check: swap hand ``card`` with looked-at ``pile_card``."""

    card: Handle
    pile_card: Handle


@dataclass(frozen=True, slots=True)
class KingLook(Action):
    """A declared king: reveal the next ``count`` cards of the draw pile."""

    count: Annotated[int, Range(1, CARDS + 1)]


@dataclass(frozen=True, slots=True)
class QueenSwap(Action):
    """A declared queen: swap hand card ``give`` for recent discard ``take``."""

    give: Handle
    take: Handle


@dataclass(frozen=True, slots=True)
class GiveBack(Action):
    """After a jack volley's blind pick: give the loser one card back."""

    card: Handle


# ---- interned actions for legal_actions ---------------------------------------------


class CardActions(NamedTuple):
    """Every action naming one hand card ``h`` of one seat."""

    discard: Discard
    declare: Discard
    claim: ClaimWin
    shot: ShotCard
    shot_ace: ShotCard
    answer: Answer
    answer_ace: Answer
    give: Give
    give_back: GiveBack


@cache
def card_actions(seat: int, h: int) -> CardActions:
    return CardActions(
        Discard(seat, h, False),
        Discard(seat, h, True),
        ClaimWin(seat, h),
        ShotCard(seat, h, False),
        ShotCard(seat, h, True),
        Answer(seat, h, False),
        Answer(seat, h, True),
        Give(seat, h),
        GiveBack(seat, h),
    )


@cache
def place_row(seat: int, h: int, positions: int) -> tuple[Place, ...]:
    """``Place(seat, h, p)`` for ``p`` in ``range(positions)``; legal rows are slices."""
    return tuple(Place(seat, h, p) for p in range(positions))


@cache
def shoot_actions(seat: int, opps: tuple[int, ...], suits: tuple[int, ...]) -> tuple[Shoot, ...]:
    return tuple(Shoot(seat, t, suit) for t in opps for suit in suits)


@cache
def jack_shots(seat: int, h: int, opps: tuple[int, ...]) -> tuple[JackShot, ...]:
    return tuple(JackShot(seat, t, h) for t in opps)


@cache
def seat_actions(seat: int) -> dict[str, Action]:
    """The card-less actions of ``seat`` by name (draws by pile name)."""
    return {
        DRAW: Draw(seat, DRAW),
        DISCARD: Draw(seat, DISCARD),
        "concede": Concede(seat),
        "miss": Miss(seat),
        "check": Check(seat),
        "pass": Pass(seat),
        "accept": AcceptCheck(seat),
    }
