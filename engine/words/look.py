"""How a game's table looks, as pure data: one seat's view in rows and styled lines.

A game's ``Look`` (registered with its words, ``engine.words``) lays out the view of one
seat: a header, one ``SeatRow`` per seat, the table's lines and the hand. Lines are
``Styled``: plain text with style names (``"bold red"``, ``"dim"``) that ``cli.render``
turns into terminal text; nothing here prints or knows the terminal. Everything is
computed from ``game.view(seat)`` and what else the seat may see, so a look cannot show a
face the seat may not see.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from engine.cards import JOKER_RANK, SUIT_SYMBOLS, Card
from engine.game import CardView, Event, Game
from engine.words.names import Names

HIDDEN = "▒▒"
RED = "bold red"
BLACK = "bold"
ORDINALS = {1: "1st", 2: "2nd", 3: "3rd"}


class Styled:
    """A line of text in parts, each with a style name (``rich``'s names, empty for none);
    ``style`` is the style of the whole line. Built like ``rich.text.Text``."""

    __slots__ = ("text", "style", "parts")

    def __init__(self, text: str = "", style: str = "") -> None:
        self.text, self.style = text, style
        self.parts: list[tuple[str, str] | Styled] = []

    def append(self, text: str, style: str = "") -> Styled:
        self.parts.append((text, style))
        return self

    def append_text(self, other: Styled) -> Styled:
        self.parts.append(other)
        return self

    @property
    def plain(self) -> str:
        return self.text + "".join(p.plain if isinstance(p, Styled) else p[0] for p in self.parts)

    def __str__(self) -> str:
        return self.plain


def ordinal(n: int) -> str:
    return ORDINALS.get(n, f"{n}th")


# ---- cards ---------------------------------------------------------------------------


def face_text(face: Card | None) -> Styled:
    """One card with its suit in colour (hearts and diamonds red), or ``▒▒`` if hidden."""
    if face is None:
        return Styled(HIDDEN, style="dim")
    if face.rank == JOKER_RANK:
        return Styled("Jk", style="bold magenta")
    return Styled(str(face), style=RED if face.suit in (1, 2) else BLACK)


def cards_text(faces: Sequence[Card | None], sep: str = " ") -> Styled:
    out = Styled()
    for i, f in enumerate(faces):
        if i:
            out.append(sep)
        out.append_text(face_text(f))
    return out


def marked_cards(cards: Sequence[CardView], secret: frozenset[int]) -> Styled:
    """Cards on the table; those only you can see are in brackets: face down to others."""
    out = Styled()
    for i, c in enumerate(cards):
        if i:
            out.append(" ")
        if c.handle in secret and c.face is not None:
            out.append("[")
            out.append_text(face_text(c.face))
            out.append("]")
        else:
            out.append_text(face_text(c.face))
    return out


def suit_text(suit: int | None) -> Styled:
    if suit is None or suit not in range(4):
        return Styled("?")
    return Styled(SUIT_SYMBOLS[suit], style=RED if suit in (1, 2) else BLACK)


def by_suit(face: Card) -> tuple[int, int]:
    """Suit-major order (for the flush games), jokers last."""
    return (5, 0) if face.rank == JOKER_RANK else (face.suit, face.rank)


def sorted_hand(
    hand: Sequence[CardView], key: Callable[[Card], Any] = by_suit
) -> list[Card | None]:
    """The faces of ``hand`` in ``key`` order, the hidden ones last."""
    faces = [c.face for c in hand]
    known = [f for f in faces if f is not None]
    return sorted(known, key=key) + [None] * (len(faces) - len(known))


@dataclass
class SeatRow:
    seat: int
    cards: str
    status: str


@dataclass
class TableView:
    """Everything the table screen shows, already restricted to one seat."""

    game: str
    view: dict[str, Any]
    names: Names
    to_move: tuple[int, ...]
    events: Sequence[str] = ()
    progress: str = ""
    over: bool = False
    since: int = 0  # how many of ``events`` (the newest) came after your last move
    moved: bool = True  # you have moved already ("Since your last move", else "So far")
    secret: frozenset[int] = frozenset()  # handles on the table you see and others do not


class Look:
    """How one game's view is laid out; subclasses fill in the parts. ``hand_order`` sorts
    the seat's own hand (by suit, jokers last, unless the game says otherwise)."""

    hand_order: Callable[[Card], Any] = staticmethod(by_suit)
    names_gains = False  # name, after an event, a card that came into the hand (``gains``)

    def header(self, v: dict[str, Any]) -> str:
        return ""

    def seats(self, t: TableView) -> list[SeatRow]:
        raise NotImplementedError

    def table(self, t: TableView) -> list[Styled]:
        return []

    def hand(self, t: TableView) -> list[Card | None] | None:
        hand = t.view.get("hand")
        return None if hand is None else sorted_hand(hand, self.hand_order)

    def secret(self, game: Game, seat: int) -> frozenset[int]:
        """Cards on the table (not in a hand) that ``seat`` sees and the others do not, shown
        marked as face down to them."""
        return frozenset()

    def gains(self, event: Event, me: int) -> bool:
        """Whether ``event`` moves a card into ``me``'s hand whose face only ``me`` learns
        (it is then named after the event)."""
        return False


class GenericLook(Look):
    """Any other game: hand counts per seat, and every pile of cards the view shows."""

    def seats(self, t: TableView) -> list[SeatRow]:
        v = t.view
        sizes = v.get("hand_sizes") or v.get("sizes") or ()
        return [
            SeatRow(s, str(sizes[s]) if s < len(sizes) else "", "") for s in range(len(t.names))
        ]

    def table(self, t: TableView) -> list[Styled]:
        out = []
        for key, value in t.view.items():
            if key == "hand" or not isinstance(value, tuple) or not value:
                continue
            if all(isinstance(c, CardView) for c in value):
                line = Styled(f"{key.replace('_', ' ').capitalize()}: ")
                line.append_text(cards_text([c.face for c in value]))
                out.append(line)
        return out
