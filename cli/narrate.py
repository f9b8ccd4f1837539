"""Game events told in plain words, with player names.

The engines name seats by number ("seat 2 plays 9♥"); people know each other by name
(``Names``, in ``engine.words.names``). :func:`narrate` turns one event into a sentence:
the game's own words tell its typed events (``Event.detail``, ``GameWords.tells``), and
any other event is its text with names in place of seat numbers. Only the text and
data of an event the seat may see are used: narration never adds a face.
"""

from __future__ import annotations

from engine.game import Event
from engine.words import tell
from engine.words.names import BOT_NAMES, JOKER_GLYPH, Names, unique_names, words


def narrate(event: Event, names: Names) -> str:
    """One event in plain words, with player names: told by its game's words from its typed
    detail, or else its text with names for seat numbers."""
    told = tell(event, names)
    return told if told is not None else names.sentence(names.tell(event.text))


__all__ = ["BOT_NAMES", "JOKER_GLYPH", "Names", "narrate", "unique_names", "words"]
