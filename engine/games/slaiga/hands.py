"""Slaiga's card logic: straight flushes, shoot cards and bullets, what a volley card
claims, and the statement a seat proves about its hand (docs/rules/slaiga.md)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar

from engine.cards import ACE, JACK, JOKER_RANK, KING, QUEEN, SUIT_SYMBOLS, Card
from engine.obligations import AtLeastInSet, FaceOf, Statement, faces_where

HAND_SIZE = 6
STRAIGHT_LEN = 5
MISS_LIMIT = 3  # D calls miss with fewer than this many cards of suit T
PENALTY_CAP = 5  # a check penalty is at most this
FALSE_MISS_PENALTY = 3
CHECK_PLACE = 4  # cards placed by A after a true miss, by the checker after a true win
LOOK_COUNT = 6  # cards D looks at after a true miss check
SWAP_MAX = 3
QUEEN_REACH = 6  # the queen reaches the 6 most recent discards
KING_CAP = 6  # [house] cap on the king's reveal
N_JOKERS = 2
SHOOT_RANKS = frozenset({JACK, QUEEN, KING, ACE})
BULLET_RANKS = frozenset({JACK, QUEEN, KING, ACE, JOKER_RANK})


def next_suit(suit: int) -> int:
    """The suit after ``suit`` (♣ < ♦ < ♥ < ♠, wrapping ♠ -> ♣)."""
    return (suit + 1) % 4


def is_shoot(face: Card) -> bool:
    return face.rank in SHOOT_RANKS


def is_bullet(face: Card) -> bool:
    return face.rank in BULLET_RANKS


def _suit_masks(faces: Iterable[Card]) -> list[int]:
    masks = [0, 0, 0, 0]
    for f in faces:
        if f.rank != JOKER_RANK:
            masks[f.suit] |= 1 << f.rank
    return masks


_RUN = (1 << STRAIGHT_LEN) - 1


def has_straight_flush(faces: Iterable[Card], wrap: bool = False) -> bool:
    """Five cards of one suit with consecutive ranks; an ace is high or low.

    Without ``wrap`` (the [house] default) Q-K-A-2-3 is not a straight.
    """
    for m in _suit_masks(faces):
        if m.bit_count() < STRAIGHT_LEN:
            continue
        if m & (1 << ACE):
            m |= 1 << 1  # ace low
        for low in range(1, ACE - STRAIGHT_LEN + 2):
            if (m >> low) & _RUN == _RUN:
                return True
        if wrap:
            # ranks 2..14 as a 13-cycle: windows that run over the ace into 2..
            cyc = m >> 2
            cyc = cyc | (cyc << 13)
            for low in range(13):
                if (cyc >> low) & _RUN == _RUN:
                    return True
    return False


@dataclass(frozen=True, slots=True)
class VolleyCard:
    """One card of a volley, as the table knows it: who played which handle, in which
    role (``shot``, ``block`` or ``jack``), and what it claims: a card of ``suit``
    (-1 in a jack volley), an ace if ``ace``."""

    HASH_TAG: ClassVar[str] = "Play"  # its name in the state-hash format

    seat: int
    handle: int
    role: str  # "shot" | "block" | "jack"
    suit: int
    ace: bool


def claim_holds(card: VolleyCard, face: Card, block_any: bool) -> bool:
    """Is ``face`` what ``card`` claimed (a shoot card / a card of its suit, ace if said)?"""
    if face.suit != card.suit:
        return False
    if card.ace and face.rank != ACE:
        return False
    if card.role == "shot" or not block_any:
        return is_shoot(face)
    return True


@dataclass(frozen=True, slots=True)
class AtLeastOfSuit(Statement):
    """At least ``count`` of ``handles`` are of ``suit``.

    The complement of ``FewerOfSuit`` (the same threshold proof over the suit
    instead of over the other suits). Honest Slaiga's defender proves it when
    conceding or blocking a first shot; a caught false miss proves it.
    """

    handles: tuple[int, ...]
    suit: int
    count: int

    def holds(self, face_of: FaceOf) -> bool:
        return sum(1 for h in self.handles if face_of(h).suit == self.suit) >= self.count

    def shape(self) -> Statement:
        return AtLeastInSet(
            self.seat, self.handles, faces_where(lambda f: f.suit == self.suit), self.count
        )

    def __str__(self) -> str:
        return (
            f"seat {self.seat} holds at least {self.count} {SUIT_SYMBOLS[self.suit]} "
            f"among {len(self.handles)} cards"
        )
