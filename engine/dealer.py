"""The ``Dealer`` seam and the trusted local dealer.

A dealer discharges obligations (``engine.obligations``). ``LocalDealer``
knows every face and draws chance from its own seeded ``random.Random``; it
is what simulations, bots and rule tests use. Tests can *stack* it: fix the
order of the first full shuffle, the dice and the joint random picks, so that
a scenario plays out exactly.
"""

from __future__ import annotations

import random
from collections import Counter, deque
from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from engine.cards import Card
from engine.errors import BadAnswer, FalseClaim
from engine.obligations import (
    Deal,
    JointRandom,
    Obligation,
    Prove,
    Reveal,
    Roll,
    Shuffle,
    Transfer,
)


class Dealer(Protocol):
    """Anything that can discharge an obligation and give back its answer."""

    def fulfil(self, ob: Obligation) -> Any: ...


class LocalDealer:
    """An omniscient, seeded dealer for one game.

    ``deck`` is the game's face list (handle ``i`` starts as ``deck[i]``).
    ``stacked`` fixes the top of the pile after the first shuffle: the first
    ``len(stacked)`` shuffled positions get these faces in order and the rest
    are shuffled at random. ``dice`` and ``picks`` are consumed, in order, by
    ``Roll`` and ``JointRandom`` before the seeded generator takes over.
    """

    def __init__(
        self,
        deck: Sequence[Card],
        seed: int = 0,
        *,
        stacked: Sequence[Card] | None = None,
        dice: Iterable[int] = (),
        picks: Iterable[int] = (),
    ) -> None:
        self.truth: list[Card] = list(deck)
        self.rng = random.Random(seed)
        self._stacked = list(stacked) if stacked is not None else None
        self._dice = deque(dice)
        self._picks = deque(picks)
        self.counts: Counter[str] = Counter()
        if self._stacked is not None:
            missing = Counter(self._stacked) - Counter(self.truth)
            if missing:
                raise ValueError(f"stacked deck has faces the game's deck lacks: {dict(missing)}")

    def face(self, handle: int) -> Card:
        return self.truth[handle]

    def fulfil(self, ob: Obligation) -> Any:
        self.counts[type(ob).__name__] += 1
        if isinstance(ob, Shuffle):
            self._shuffle(ob.handles)
            return None
        if isinstance(ob, Reveal | Deal):
            return {h: self.truth[h] for h in ob.handles}
        if isinstance(ob, Transfer):
            return {ob.handle: self.truth[ob.handle]}
        if isinstance(ob, Prove):
            if not ob.statement.holds(self.face):
                raise FalseClaim(ob.statement.seat, ob.statement)
            return None
        if isinstance(ob, Roll):
            return tuple(self._die(ob.sides) for _ in range(ob.count))
        if isinstance(ob, JointRandom):
            if ob.bound < 1:
                raise BadAnswer(f"joint random bound must be positive, got {ob.bound}")
            if self._picks:
                pick = self._picks.popleft()
                if not 0 <= pick < ob.bound:
                    raise BadAnswer(f"stacked pick {pick} outside range({ob.bound})")
                return pick
            return self.rng.randrange(ob.bound)
        raise BadAnswer(f"local dealer cannot discharge {ob!r}")

    def _die(self, sides: int) -> int:
        if self._dice:
            value = self._dice.popleft()
            if not 1 <= value <= sides:
                raise BadAnswer(f"stacked die {value} outside 1..{sides}")
            return value
        return self.rng.randint(1, sides)

    def _shuffle(self, handles: Sequence[int]) -> None:
        faces = [self.truth[h] for h in handles]
        self.rng.shuffle(faces)
        if self._stacked is not None:
            stacked, self._stacked = self._stacked, None
            if len(stacked) > len(faces):
                raise ValueError(
                    f"stacked deck has {len(stacked)} cards but the shuffle covers {len(faces)}"
                )
            pool = Counter(faces) - Counter(stacked)
            if sum(pool.values()) != len(faces) - len(stacked):
                raise ValueError("stacked deck does not match the faces being shuffled")
            rest = []
            for f in faces:  # the shuffled faces that the stack did not claim
                if pool[f] > 0:
                    pool[f] -= 1
                    rest.append(f)
            faces = list(stacked) + rest
        for h, f in zip(handles, faces, strict=True):
            self.truth[h] = f

    def permute_hidden(self, handles: Sequence[int], rng: random.Random) -> dict[int, Card]:
        """Permute the true faces of ``handles`` (for leak tests); return the new faces."""
        faces = [self.truth[h] for h in handles]
        rng.shuffle(faces)
        for h, f in zip(handles, faces, strict=True):
            self.truth[h] = f
        return {h: self.truth[h] for h in handles}
