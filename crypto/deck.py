"""Card encodings: one fixed group element per card handle.

Barnett and Smart ("Mental poker revisited", 2003) encode card ``i`` as a
fixed group element ``M_i``.  Here ``M_i = hash_to_point("card", deck_id, i)``,
so nobody knows any discrete-log relation among the cards or with ``G``
(otherwise products of masked cards could be related).

Supported decks (:data:`DECK_SIZES`):

* 52: handles 0..51, face = handle.
* 54: handles 0..53, face = handle; faces 52 and 53 are the two jokers.
* 104: two standard decks.  Handles 0..103 are *distinct* group elements (so
  each physical card unmasks to exactly one handle and shuffle proofs see no
  duplicates), and ``face = handle % 52``: handles ``f`` and ``f + 52`` are the
  two copies of face ``f``.

What a face means (suit and rank) is the engine's business; crypto only maps
handles to points and back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from crypto.errors import DeckMismatch, InvalidEncoding, InvalidProof
from crypto.group import Point, hash_to_point

DECK_SIZES = (52, 54, 104)
STANDARD_FACES = 52
_CARD_DOMAIN = b"slaiga/v1/card"
_INDEX_BYTES = 2


def card_point(deck_id: str, index: int) -> Point:
    """The group element of handle ``index`` in the deck named ``deck_id``."""
    if type(index) is not int or not 0 <= index < 2 ** (8 * _INDEX_BYTES):
        raise InvalidEncoding("card index out of range")
    return hash_to_point(_CARD_DOMAIN, deck_id.encode(), index.to_bytes(_INDEX_BYTES, "little"))


@dataclass(frozen=True, slots=True)
class Deck:
    """The encodings of every handle of one deck, with reverse lookup."""

    size: int
    points: tuple[Point, ...]
    _index: dict[bytes, int] = field(repr=False, compare=False)

    @property
    def deck_id(self) -> str:
        return deck_id(self.size)

    def point(self, index: int) -> Point:
        if type(index) is not int or not 0 <= index < self.size:
            raise InvalidEncoding(f"card index {index!r} not in deck of {self.size}")
        return self.points[index]

    def index_of(self, p: Point) -> int:
        """The handle whose encoding is ``p``; raise :class:`InvalidProof` if none."""
        try:
            return self._index[p.data]
        except KeyError:
            raise InvalidProof(f"point is not a card of the {self.size}-card deck") from None

    def face(self, index: int) -> int:
        """Face of a handle (see module docstring)."""
        self.point(index)
        return index % STANDARD_FACES if self.size == 2 * STANDARD_FACES else index

    def check_size(self, n: int, what: str = "pile") -> None:
        if n != self.size:
            raise DeckMismatch(f"{what} has {n} cards, deck has {self.size}")


def deck_id(size: int) -> str:
    if size not in DECK_SIZES:
        raise DeckMismatch(f"unsupported deck size {size}; supported: {DECK_SIZES}")
    return f"deck{size}"


@lru_cache(maxsize=len(DECK_SIZES))
def deck_points(size: int) -> Deck:
    """The :class:`Deck` of ``size`` cards (52, 54 or 104); cached."""
    name = deck_id(size)
    points = tuple(card_point(name, i) for i in range(size))
    index = {p.data: i for i, p in enumerate(points)}
    if len(index) != size:  # pragma: no cover - would need a hash collision
        raise InvalidProof("card encodings collide")
    return Deck(size, points, index)
