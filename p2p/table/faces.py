"""Engine card faces and crypto card indices: which encoding stands for which card.

The crypto deck (``crypto.deck.deck_points``) has ``size`` card encodings, index
``k`` for each. Index ``k`` is face ``k mod 52`` in the 104-card double deck and
face ``k`` otherwise, where face ``f < 52`` is rank ``2 + f mod 13`` of suit
``f div 13`` and faces 52 and 53 are jokers (p2p/RECORD_FORMAT.md, "Cards").
"""

from __future__ import annotations

from collections.abc import Sequence

from crypto.deck import STANDARD_FACES
from engine.cards import JOKER, RANKS, SUITS, Card
from engine.errors import EngineError


def index_face(index: int, size: int) -> Card:
    """The engine face of crypto card index ``index`` in a deck of ``size`` (crypto.deck)."""
    f = index % STANDARD_FACES if size == 2 * STANDARD_FACES else index
    if f >= STANDARD_FACES:
        return JOKER
    return Card(RANKS[f % len(RANKS)], SUITS[f // len(RANKS)])


def handle_indices(deck_faces: Sequence[Card], size: int) -> tuple[int, ...]:
    """Crypto index of each handle: copies of a face take that face's indices in order."""
    free: dict[Card, list[int]] = {}
    for k in range(size):
        free.setdefault(index_face(k, size), []).append(k)
    out = []
    for h, face in enumerate(deck_faces):
        pool = free.get(face)
        if not pool:
            raise EngineError(f"handle {h}: face {face} has no free card in the {size}-card deck")
        out.append(pool.pop(0))
    return tuple(out)
