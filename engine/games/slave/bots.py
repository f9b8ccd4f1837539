"""A heuristic Slave player: keep strong cards, beat cheaply, lead low.

It sees only its seat's ``view`` (its own hand's faces and the public pile).
Policy, in order:

* the first-deal opener plays all its 3s (it must include 3♣ anyway);
* when returning cards in the exchange it gives away its lowest cards,
  lone cards first (a lone low card is the hardest one to get rid of);
* leading a new pile, it plays its lowest rank as a whole group, so that
  no pair or triple gets broken up;
* answering, it plays the cheapest set that beats the pile, preferring sets
  that do not split a group, and it keeps aces, 2s and fours (by passing)
  while its hand is still large.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from engine.bots import Bot
from engine.cards import Card, slave_key
from engine.game import Action
from engine.games.slave.actions import Give, Pass, Play
from engine.games.slave.rules import FOUR, RANK_INDEX

STRONG_RANK = RANK_INDEX[14]  # aces and 2s are worth keeping
SMALL_HAND = 5  # at or below this many cards, spend anything


class SlaveHeuristicBot(Bot):
    kind = "heuristic"

    def act(self, view: dict[str, Any], legal: Sequence[Action]) -> Action:
        if len(legal) == 1:
            return legal[0]
        faces: dict[int, Card] = {c.handle: c.face for c in view["hand"] if c.face is not None}
        counts = Counter(f.rank for f in faces.values())
        if isinstance(legal[0], Give):
            return self._give(legal, faces, counts)
        plays = [a for a in legal if isinstance(a, Play)]
        can_pass = any(isinstance(a, Pass) for a in legal)
        if not plays:
            return legal[0]
        if view["phase"] == "opening":
            return max(plays, key=lambda a: len(a.cards))

        def cost(a: Play) -> tuple[int, int, int, int]:
            rank = faces[a.cards[0]].rank
            splits = int(len(a.cards) != counts[rank])
            key = max(slave_key(faces[h]) for h in a.cards)
            return (splits, RANK_INDEX[rank], -len(a.cards), key)

        best = min(plays, key=cost)
        if can_pass and len(faces) > SMALL_HAND:
            rank = faces[best.cards[0]].rank
            top = view["top"]
            four_on_single = len(best.cards) == FOUR and len(top) == 1
            if RANK_INDEX[rank] >= STRONG_RANK or four_on_single:
                return next(a for a in legal if isinstance(a, Pass))
        return best

    def _give(
        self, legal: Sequence[Action], faces: dict[int, Card], counts: Counter[int]
    ) -> Action:
        def cost(a: Action) -> tuple[int, int]:
            assert isinstance(a, Give)
            return (
                sum(counts[faces[h].rank] > 1 for h in a.cards),
                sum(slave_key(faces[h]) for h in a.cards),
            )

        return min(legal, key=cost)
