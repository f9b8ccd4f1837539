"""Slåjens' events as typed values (``Event.detail``) that its words tell in a sentence of
their own; the event's ``kind`` string is unchanged (statistics count it)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class GameOver:
    """The last round is over: ``totals`` per seat."""

    totals: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Berserker:
    """Three or more dice of ``face``: the plain sum ``base`` of the five, then two dice
    rolled again (``extra``) and added, for ``score``."""

    face: int
    base: int
    extra: tuple[int, ...]
    score: int
