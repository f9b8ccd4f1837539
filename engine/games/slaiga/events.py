"""Slaiga's events as typed values (``Event.detail``), one frozen dataclass per kind that
its words tell in a sentence of their own (``words.narrate``): what was claimed and shown in
a volley, which check was called, a check's verdict, the end of a volley, and a card that
changes hands blind. The event's ``kind`` string is unchanged (statistics count it)."""

from __future__ import annotations

from dataclasses import dataclass

from engine.cards import Card


@dataclass(frozen=True, slots=True)
class Played:
    """A volley card: a shot (``target`` is the seat shot at, ``target_suit`` the suit), a
    block or a shot back, claimed as ``ace`` or not of ``suit``; ``shown`` is its face when
    it is played face up (Honest Slaiga)."""

    role: str  # "shot" (a shot or a shot back) or "block"
    suit: int
    ace: bool
    shown: Card | None = None
    target: int | None = None
    target_suit: int | None = None
    back: bool = False  # a shot back (countershot)


@dataclass(frozen=True, slots=True)
class CheckCalled:
    """A check of the last volley card (``"shot"``, ``"block"``) or of a miss."""

    what: str


@dataclass(frozen=True, slots=True)
class Verdict:
    """A shot or block check's verdict: the card was ``face``; ``true`` if the claim held;
    the payer (the event's seat) pays ``pay`` cards."""

    what: str
    face: Card
    true: bool
    pay: int


@dataclass(frozen=True, slots=True)
class VolleyEnded:
    """A volley (or jack volley) between ``attacker`` and ``defender`` ends."""

    jack: bool
    attacker: int
    defender: int
    cards: int
    shots: int


@dataclass(frozen=True, slots=True)
class Handed:
    """A card that moves blind from ``giver`` to ``receiver`` in the jack volley's end: only
    the receiver learns its face."""

    giver: int
    receiver: int


@dataclass(frozen=True, slots=True)
class Dealt:
    """The deal: ``cards`` cards to each of ``seats`` players, face down to the others."""

    cards: int
    seats: int
