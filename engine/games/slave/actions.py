"""Slave's actions (docs/rules/slave.md), with the exact wire form of every field."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from engine.codec import Handle, Size
from engine.game import Action

MAX_SET = 4
KING_GIVES = 2  # SLAVE -> KING, then KING returns as many
QUEEN_GIVES = 1  # VICE SLAVE -> QUEEN, then QUEEN returns as many


@dataclass(frozen=True, slots=True)
class Play(Action):
    """Play a set: 1-4 handles of one rank from the seat's hand."""

    cards: Annotated[tuple[Handle, ...], Size(1, MAX_SET)]


@dataclass(frozen=True, slots=True)
class Pass(Action):
    """Pass: the seat may not play on this pile again."""


@dataclass(frozen=True, slots=True)
class Give(Action):
    """Exchange: hand ``cards`` to the receiver of this exchange, listed in ascending
    handle order (one canonical order, so the list does not rank the cards)."""

    cards: Annotated[tuple[Handle, ...], Size(1, max(KING_GIVES, QUEEN_GIVES))]


@dataclass(frozen=True, slots=True)
class NotOpener(Action):
    """First deal: "I do not hold 3♣" (proved by ``LacksCard``)."""
