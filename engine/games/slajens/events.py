"""Slåjens' events as typed values (``Event.detail``) that its words tell in a sentence of
their own; the event's ``kind`` string is unchanged (statistics count it)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class GameOver:
    """The last round is over: ``totals`` per seat."""

    totals: tuple[int, ...]
