"""Seats by player name, and engine text in plain English.

The engines name seats by number ("seat 2 plays 9♥"); people know each other by
name. :class:`Names` holds the table's names in engine-seat order (made unique,
so that a typed name always means one seat). Pure: no terminal, no printing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

SEATS_PAIR = re.compile(r"\bseats (\d+) and (\d+)\b")
SEAT_ONE = re.compile(r"\bseat (\d+)\b")
LIST_OF_NUMBERS = re.compile(r"\[(-?\d+(?:, -?\d+)*)\]")
MAYBE_PLURAL = re.compile(r"\b(-?\d+) (\w+)\(s\)")
A_BEFORE_VOWEL = re.compile(r"(?<![\w♣♦♥♠])(a) (?=(?:A|8|8\d|11|18)\b|[aeiouAEIOU][a-z])")
JOKER_GLYPH = "🃏"  # double width in some terminals and not in others: shown as Jk
BOT_NAMES = ("Bob", "Cat", "Dan", "Eve", "Fay", "Gus", "Hal", "Ivy", "Jo", "Kim", "Lou")


def printable(text: str) -> str:
    """``text`` safe to show on a terminal: a player chose it, so every control or format
    character (an escape sequence, a right-to-left override) is shown as "?", never sent
    to the terminal; new lines stay."""
    return "\n".join(
        "".join(c if c.isprintable() else "?" for c in line) for line in text.split("\n")
    )


def unique_names(names: Sequence[str]) -> tuple[str, ...]:
    """``names`` with blanks filled and repeats numbered ("Bob", "Bob 2"), made printable."""
    out: list[str] = []
    for i, raw in enumerate(names):
        base = printable(" ".join(str(raw).split())) or f"Seat {i + 1}"
        name, n = base, 1
        while name.lower() in (o.lower() for o in out):
            n += 1
            name = f"{base} {n}"
        out.append(name)
    return tuple(out)


class Names:
    """The names of a table's seats (engine-seat order) and which seat is "you"."""

    def __init__(self, names: Sequence[str], me: int) -> None:
        self.names = unique_names(names)
        if not 0 <= me < len(self.names):
            raise ValueError(f"seat {me} is not one of {len(self.names)} seats")
        self.me = me
        self.bots: frozenset[int] = frozenset()
        """Seats a bot plays now because their player left (the table screen says so)."""

    def __len__(self) -> int:
        return len(self.names)

    def __call__(self, seat: int | None) -> str:
        if seat is None or not 0 <= seat < len(self.names):
            return f"seat {seat}"
        return self.names[seat]

    def token(self, seat: int) -> str:
        """How a seat is typed in a move: the name in lower case, spaces as dashes."""
        return "-".join(self.names[seat].lower().split())

    def find(self, text: str) -> int | None:
        """The seat ``text`` names: a typed name, a unique start of one, or ``#N`` (1-based)."""
        t = text.strip().lower()
        if not t:
            return None
        if t.startswith("#") and t[1:].isdigit():
            n = int(t[1:]) - 1
            return n if 0 <= n < len(self.names) else None
        tokens = [self.token(s) for s in range(len(self.names))]
        if t in tokens:
            return tokens.index(t)
        if t in ("me", "you", "myself"):
            return self.me
        starts = [s for s, tok in enumerate(tokens) if tok.startswith(t)]
        return starts[0] if len(starts) == 1 else None

    def replace(self, text: str) -> str:
        """``text`` with every "seat N" and "seats N and M" replaced by names."""
        text = SEATS_PAIR.sub(lambda m: f"{self(int(m[1]))} and {self(int(m[2]))}", text)
        return SEAT_ONE.sub(lambda m: self(int(m[1])), text)

    def tell(self, text: str) -> str:
        """``replace``, and a list with one number per seat ("points [3, 1, 0]") by name."""
        out = words(self.replace(text).replace(JOKER_GLYPH, "Jk"))
        return LIST_OF_NUMBERS.sub(
            lambda m: m[0] if len(m[1].split(",")) != len(self) else _per(m, self), out
        )

    def sentence(self, text: str) -> str:
        """``text`` as a sentence: its first letter in capitals, unless it begins with a
        player's name, which is shown as the player wrote it ("p3 plays 3♣", not "P3")."""
        if any(text.startswith(n) for n in self.names):
            return text
        return capital(text)

    def per_seat(self, values: Sequence[object]) -> str:
        """``Ann 3, Bob 1, ...`` for one value per seat."""
        return ", ".join(f"{self(s)} {v}" for s, v in enumerate(values))


def words(text: str) -> str:
    """Plain English for engine text: "1 card(s)" → "1 card", "2 shot(s)" → "2 shots",
    "a A" → "an A", "a 8" → "an 8"."""
    text = MAYBE_PLURAL.sub(lambda m: f"{m[1]} {m[2]}" + ("" if m[1] == "1" else "s"), text)
    return A_BEFORE_VOWEL.sub(lambda m: m[1] + "n ", text)


def _per(match: re.Match[str], names: Names) -> str:
    return "(" + names.per_seat([v.strip() for v in match[1].split(",")]) + ")"


def capital(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text


def article(claim: str) -> str:
    """ "♦ shot" -> "a ♦ shot"; "ace ♦ block" -> "an ace ♦ block"."""
    return ("an " if claim[:1].lower() in "aeiou" else "a ") + claim
