"""A heuristic Slåjens player: exact expectimax over which dice to keep.

The dice state is a multiset of five faces (252 of them) and the number of
rolls left (0-2). ``Tables`` computes, once per scoring rule, the expected
final score of every state when playing to maximise it::

    V(d, 0) = F(d)
    V(d, r) = max(F(d), max over kept sub-multisets k of d: E[V(k + new dice, r - 1)])

where ``F`` is the expected score of stopping with ``d``: the plain score, or
for a Berserker the plain sum plus 7 (two rerolled dice). That is how the
bot "knows when Berserker pays": three 1s are worth far less as a Berserker
than as Lyja's Luck, three 6s far more. The same recursion gives the second
moment, hence a normal approximation of the turn score's spread, used to
guess how likely a steal target is to fail its defence.

Steals cost nothing when they miss, so the bot always declares when a target
is eligible, choosing the target and amount with the best expected gain
``amount * P(defence fails)``. During a steal turn it keeps dice for
``score + gain * [three in a row shown]`` (a second expectimax with a "not yet
hit" flag, cached per gain). As a target it always defends (defending is
never worse than accepting).
"""

from __future__ import annotations

import math
import operator
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations_with_replacement, product
from typing import Any

from engine.bots import Bot
from engine.game import Action
from engine.games.slajens.actions import DICE, NO_TARGET, SIDES, Keep, Respond, RollDice, Stop
from engine.games.slajens.rules import BERSERKER_COUNT, MAX_ROLLS, has_run, plain_score

Dice = tuple[int, ...]  # sorted faces
FACES = tuple(range(1, SIDES + 1))
BERSERKER_EXTRA = 7.0  # expected sum of the two rerolled dice


def _outcomes(k: int) -> tuple[tuple[Dice, float], ...]:
    """Every multiset of ``k`` dice with its probability."""
    counts: Counter[Dice] = Counter(tuple(sorted(r)) for r in product(FACES, repeat=k))
    total = SIDES**k
    return tuple((d, c / total) for d, c in counts.items())


def submultisets(d: Dice) -> list[Dice]:
    """Proper sub-multisets of ``d`` (the dice one may keep before rerolling)."""
    c = Counter(d)
    faces = sorted(c)
    out = []
    for choice in product(*(range(c[f] + 1) for f in faces)):
        sub = tuple(f for f, n in zip(faces, choice, strict=True) for _ in range(n))
        if len(sub) < DICE:
            out.append(sub)
    return out


@dataclass(frozen=True)
class DiceSpace:
    """Every throw of the dice, what may be kept of it, and where a reroll leads."""

    outcomes: tuple[tuple[tuple[Dice, float], ...], ...]
    """``outcomes[k]``: every multiset of ``k`` dice with its probability."""
    states: tuple[Dice, ...]
    """Every multiset of all the dice."""
    subs: dict[Dice, list[Dice]]
    """What may be kept of each state."""
    trans: dict[Dice, tuple[tuple[Dice, float], ...]]
    """Kept multiset -> [(resulting dice, probability)] after rerolling the rest."""
    run_states: frozenset[Dice]
    """The states that show three in a row."""
    trans_columns: tuple[tuple[Dice, tuple[int, ...], tuple[float, ...]], ...]
    """``trans`` by position, for the loops in C of :func:`_expect` (a dict lookup by a
    tuple of dice hashes the tuple every time): each kept multiset, the indices in
    ``states`` of its outcomes, and their probabilities."""
    subs_at: dict[Dice, tuple[int, ...]]
    """``subs`` as indices in the order of ``trans`` (so of what :func:`_expect` returns)."""


def _make_dice_space() -> DiceSpace:
    """The dice arithmetic under every table (:data:`DICE_SPACE`)."""
    outcomes = tuple(_outcomes(k) for k in range(DICE + 1))
    states = tuple(combinations_with_replacement(FACES, DICE))
    subs = {d: submultisets(d) for d in states}
    kept = sorted({sub for subs_of in subs.values() for sub in subs_of})
    trans = {
        sub: tuple((tuple(sorted(sub + new)), p) for new, p in outcomes[DICE - len(sub)])
        for sub in kept
    }
    run_states = frozenset(d for d in states if has_run(d))
    state_at = {d: i for i, d in enumerate(states)}
    kept_at = {sub: i for i, sub in enumerate(trans)}
    trans_columns = tuple(
        (sub, tuple(state_at[e] for e, _ in to), tuple(p for _, p in to))
        for sub, to in trans.items()
    )
    subs_at = {d: tuple(kept_at[sub] for sub in subs_of) for d, subs_of in subs.items()}
    return DiceSpace(outcomes, states, subs, trans, run_states, trans_columns, subs_at)


DICE_SPACE = _make_dice_space()
"""Made at import, not when a bot first needs it: a peer's bot plays on the peer's event
loop, and the 15 ms it takes (50-100 ms on a busy machine) blocked the loop at its first
turn."""


def stop_value(d: Dice, slalt_double: bool) -> float:
    for v in set(d):
        if d.count(v) >= BERSERKER_COUNT:
            return float(sum(d)) + BERSERKER_EXTRA
    return float(plain_score(d, slalt_double))


def _expect(table: dict[Dice, float]) -> dict[Dice, float]:
    """E[table(dice)] after rerolling, for every kept multiset.

    ``sum(p * table[e] for e, p in trans)``, term by term in the same order (so the very
    same floats), with the loop in C: the bot computes this for every steal amount."""
    space = DICE_SPACE
    value = list(map(table.__getitem__, space.states)).__getitem__
    return {
        sub: sum(map(operator.mul, probs, map(value, outcomes)))
        for sub, outcomes, probs in space.trans_columns
    }


class Tables:
    """Expectimax values, best keeps and score moments for one scoring rule."""

    def __init__(self, slalt_double: bool) -> None:
        self.slalt_double = slalt_double
        space = self.space = DICE_SPACE
        self.stop = {d: stop_value(d, slalt_double) for d in space.states}
        stop_m2 = {d: self._stop_m2(d) for d in space.states}
        # value[r][d]: expected final score with r rolls left; m2 its second
        # moment under the same policy; keep[r][d]: best kept multiset (None: stop)
        self.value: list[dict[Dice, float]] = [dict(self.stop)]
        self.m2: list[dict[Dice, float]] = [stop_m2]
        self.keep: list[dict[Dice, Dice | None]] = [dict.fromkeys(space.states)]
        for _ in range(1, MAX_ROLLS):
            w, w2 = _expect(self.value[-1]), _expect(self.m2[-1])
            value, m2, keep = {}, {}, {}
            for d in space.states:
                best, best_m2, best_k = self.stop[d], stop_m2[d], None
                for sub in space.subs[d]:
                    if w[sub] > best + 1e-12:
                        best, best_m2, best_k = w[sub], w2[sub], sub
                value[d], m2[d], keep[d] = best, best_m2, best_k
            self.value.append(value)
            self.m2.append(m2)
            self.keep.append(keep)
        first = MAX_ROLLS - 1
        self.mean = sum(p * self.value[first][d] for d, p in space.outcomes[DICE])
        second = sum(p * self.m2[first][d] for d, p in space.outcomes[DICE])
        self.sd = math.sqrt(max(second - self.mean**2, 1.0))
        self._steal: dict[int, list[dict[Dice, float]]] = {}
        self.defended_worth: dict[int, float] = {}
        """``amount * p_below(amount)``: a steal's expected gain against a defence (kept
        by the bots for every amount they have weighed)."""

    def _stop_m2(self, d: Dice) -> float:
        for v in set(d):
            if d.count(v) >= BERSERKER_COUNT:
                base = sum(d)
                return sum(p * (base + sum(x)) ** 2 for x, p in self.space.outcomes[2])
        return float(plain_score(d, self.slalt_double)) ** 2

    def p_below(self, amount: int) -> float:
        """Approximate P(a turn scores less than ``amount``) (normal, continuity)."""
        z = (amount - 0.5 - self.mean) / self.sd
        return 0.5 * (1.0 + math.erf(z / math.sqrt(2.0)))

    def steal_w(self, gain: int) -> list[dict[Dice, float]]:
        """``w[r][sub]``: expected value of rerolling around ``sub`` with ``r`` rolls
        left after it, before three in a row has shown, when showing it is worth
        ``gain`` on top of the score."""
        if gain in self._steal:
            return self._steal[gain]
        space = self.space
        before = dict(self.stop)  # rolls left 0, not yet hit
        ws = []
        for r in range(MAX_ROLLS - 1):
            plain = self.value[r]
            target = {
                d: (plain[d] + gain if d in space.run_states else before[d]) for d in space.states
            }
            w = _expect(target)
            ws.append(w)
            after = list(w.values()).__getitem__  # in the order of trans
            before = {d: max([self.stop[d], *map(after, space.subs_at[d])]) for d in space.states}
        self._steal[gain] = ws
        return ws

    def best_keep(self, d: Dice, rolls_left: int, gain: int) -> Dice | None:
        """The multiset to keep (``None``: stop) with ``rolls_left`` rolls to come."""
        if gain <= 0:
            return self.keep[rolls_left][d]
        w = self.steal_w(gain)[rolls_left - 1]
        best, best_k = self.stop[d], None
        for sub in self.space.subs[d]:
            if w[sub] > best + 1e-12:
                best, best_k = w[sub], sub
        return best_k


@lru_cache(maxsize=2)
def tables(slalt_double: bool) -> Tables:
    return Tables(slalt_double)


def _positions(dice: Sequence[int], sub: Dice) -> tuple[int, ...]:
    """Die positions showing the multiset ``sub``."""
    need = Counter(sub)
    out = []
    for i, v in enumerate(dice):
        if need[v] > 0:
            need[v] -= 1
            out.append(i)
    return tuple(out)


class SlajensHeuristicBot(Bot):
    kind = "heuristic"

    def __init__(self, seat: int, rng: Any, **params: Any) -> None:
        super().__init__(seat, rng, **params)
        self.gain = 0  # what three in a row is worth this turn

    def act(self, view: dict[str, Any], legal: Sequence[Action]) -> Action:
        options = dict(view["options"])
        tab = tables(bool(options.get("slalt_double", False)))
        first = legal[0]
        if isinstance(first, Respond):
            return Respond(self.seat, True)
        if isinstance(first, RollDice):
            return self._start(view, legal, tab)
        dice = view["dice"]
        rolls_left = MAX_ROLLS - view["rolls"]
        gain = self.gain if view["steal"] is not None and not view["hit"] else 0
        sub = tab.best_keep(tuple(sorted(dice)), rolls_left, gain)
        if sub is None:
            return Stop(self.seat)
        return Keep(self.seat, _positions(dice, sub))

    def _start(self, view: dict[str, Any], legal: Sequence[Action], tab: Tables) -> Action:
        self.gain = 0
        best: tuple[float, Action] = (0.0, RollDice(self.seat))
        rounds, rnd = view["rounds"], view["round"]
        scores = view["scores"]
        defence = options_defend(view)
        # a turn may offer thousands of steals: whether a target can defend is found once
        # per target, and what an amount is worth against a defence once per table
        can_defend: dict[int, bool] = {}
        worth = tab.defended_worth
        for a in legal:
            if not isinstance(a, RollDice) or a.target == NO_TARGET:
                continue
            amount = a.amount
            defends = can_defend.get(a.target)
            if defends is None:
                played = len(scores[a.target]) == rnd
                defends = can_defend[a.target] = defence and (not played or rnd < rounds)
            if defends:
                value = worth.get(amount)
                if value is None:
                    value = worth[amount] = amount * tab.p_below(amount)
            else:
                value = amount * 1.0
            if value > best[0]:
                best = (value, a)
        self.gain = round(best[0])
        return best[1]


def options_defend(view: dict[str, Any]) -> bool:
    return dict(view["options"]).get("defence", "score") == "score"
