"""Cards, suits, decks and the named card orders the games use.

A *face* is what is printed on a card (``Card``). A *handle* is the integer id
of one physical card at the table: handle ``i`` starts life as face
``deck[i]`` of a fresh, ordered deck, and the engine learns a handle's face
only when the rules reveal it (see ``engine.obligations``). Two copies of the
same face (Aight of Spaides' double deck, Slaiga's two jokers) are distinct
handles with equal faces.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

CLUBS, DIAMONDS, HEARTS, SPADES = 0, 1, 2, 3
SUITS = (CLUBS, DIAMONDS, HEARTS, SPADES)
SUIT_SYMBOLS = ("♣", "♦", "♥", "♠")
SUIT_NAMES = ("clubs", "diamonds", "hearts", "spades")
SUIT_LETTERS = ("C", "D", "H", "S")

JACK, QUEEN, KING, ACE = 11, 12, 13, 14
RANKS = tuple(range(2, 15))
RANK_NAMES = {11: "J", 12: "Q", 13: "K", 14: "A"}

JOKER_RANK = 0
JOKER_SUIT = 4  # outside SUITS, so a joker never counts towards any suit


class Card(NamedTuple):
    """A card face. ``rank`` is 2..14 (ace high) or 0 for a joker."""

    rank: int
    suit: int

    @property
    def is_joker(self) -> bool:
        return self.rank == JOKER_RANK

    def __str__(self) -> str:
        if self.is_joker:
            return "🃏"
        return f"{RANK_NAMES.get(self.rank, str(self.rank))}{SUIT_SYMBOLS[self.suit]}"

    def __repr__(self) -> str:
        return f"Card({self})"

    @property
    def code(self) -> str:
        """ASCII name, e.g. ``QS``, ``10H`` or ``JK``."""
        if self.is_joker:
            return "JK"
        return f"{RANK_NAMES.get(self.rank, str(self.rank))}{SUIT_LETTERS[self.suit]}"


JOKER = Card(JOKER_RANK, JOKER_SUIT)


def parse_card(text: str) -> Card:
    """Parse ``QS``, ``10h``, ``Q♠`` or ``JK``; raise ``ValueError`` otherwise."""
    t = text.strip().upper()
    if t in ("JK", "JOKER", "🃏"):
        return JOKER
    if len(t) < 2:
        raise ValueError(f"not a card: {text!r}")
    rank_text, suit_text = t[:-1], t[-1]
    symbols = {s: i for i, s in enumerate(SUIT_SYMBOLS)} | {
        s: i for i, s in enumerate(SUIT_LETTERS)
    }
    if suit_text not in symbols:
        raise ValueError(f"not a card (bad suit): {text!r}")
    names = {v: k for k, v in RANK_NAMES.items()}
    if rank_text in names:
        rank = names[rank_text]
    elif rank_text.isdigit() and 2 <= int(rank_text) <= 10:
        rank = int(rank_text)
    else:
        raise ValueError(f"not a card (bad rank): {text!r}")
    return Card(rank, symbols[suit_text])


def cards(text: str) -> list[Card]:
    """Parse a space-separated list of cards (handy in tests)."""
    return [parse_card(t) for t in text.split()]


def standard_deck(jokers: int = 0, copies: int = 1) -> tuple[Card, ...]:
    """``copies`` ordered 52-card decks (suit-major, ascending rank), then jokers."""
    one = [Card(r, s) for s in SUITS for r in RANKS]
    return tuple(one * copies + [JOKER] * jokers)


# ---- named orders -------------------------------------------------------------
# Statements sent to a dealer (see ``engine.obligations``) refer to orders by
# name, so that they stay plain data that any peer can evaluate.

SLAVE_RANKS = (3, 4, 5, 6, 7, 8, 9, 10, JACK, QUEEN, KING, ACE, 2)
_SLAVE_RANK_INDEX = {r: i for i, r in enumerate(SLAVE_RANKS)}


def slave_key(card: Card) -> int:
    """Slave's total order (docs/rules/slave.md): rank 3 < … < A < 2, then ♣ < ♦ < ♥ < ♠."""
    return _SLAVE_RANK_INDEX[card.rank] * 4 + card.suit


ORDERS: dict[str, Callable[[Card], int]] = {"slave": slave_key}
