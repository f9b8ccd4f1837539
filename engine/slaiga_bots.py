"""A heuristic Slaiga bot that sees only its seat's view and the events shown to it.

What it does (issue 3):
* collects towards its most promising straight flush: every hand is scored by
  the 40 five-card windows (4 suits x ace-low..ace-high), windows holding a
  card it has seen in another hand count as dead;
* tracks what it has seen: every public draw of a known card and every
  discard (``observe``) moves its estimate of that opponent's suits, and the
  view's known cards (face-up pile top, reveals, shown hands, transfers) are
  counted as seen when it estimates how likely a claim is;
* shoots when its estimate that the target holds three of the target suit is
  strong, and in ``slaiga`` bluffs at a tunable rate (``bluff``), checks a
  claim when it is unlikely given the unseen cards (``check_below``), checks
  win claims that no unseen straight flush can explain or when a true claim
  would cost it little, and plays a joker on a check that would catch its lie.

Parameters (``Bot(seat, rng, **params)``): ``bluff`` (0.15), ``check_below``
(0.35), ``shoot_at`` (3.0), ``win_bluff`` (0.05), ``jack_rate`` (0.2).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from math import comb
from typing import Any

from engine.bots import Bot
from engine.cards import ACE, JOKER_RANK, KING, QUEEN, SUITS, Card
from engine.game import Action, Event
from engine.slaiga_game import (
    DISCARD,
    DRAW,
    MISS_LIMIT,
    AcceptCheck,
    Answer,
    CancelCheck,
    Check,
    ClaimWin,
    Concede,
    Discard,
    Draw,
    Give,
    GiveBack,
    JackShot,
    Miss,
    MissVerdict,
    Pass,
    Place,
    Shoot,
    ShotCard,
    Swap,
    claim_holds,
    has_straight_flush,
    is_bullet,
    is_shoot,
    next_suit,
)

# ---- straight-flush windows ---------------------------------------------------------

WINDOWS: list[tuple[int, frozenset[int]]] = []
for _suit in SUITS:
    for _low in range(1, 11):
        WINDOWS.append((_suit, frozenset(ACE if r == 1 else r for r in range(_low, _low + 5))))
CARD_WINDOWS: dict[Card, tuple[int, ...]] = {
    Card(r, s): tuple(i for i, (ws, rs) in enumerate(WINDOWS) if ws == s and r in rs)
    for s in SUITS
    for r in range(2, 15)
}
N_WINDOWS = len(WINDOWS)
INTEREST_DECAY = 0.9
DEFAULTS = {
    "bluff": 0.15,
    "check_below": 0.35,
    "shoot_at": 3.0,
    "win_bluff": 0.05,
    "jack_rate": 0.2,
}


def window_counts(faces, dead: frozenset[int] = frozenset()) -> list[int]:
    counts = [0] * N_WINDOWS
    for f in faces:
        if f is not None and f.rank != JOKER_RANK:
            for w in CARD_WINDOWS[f]:
                counts[w] += 1
    for w in dead:
        counts[w] = -1
    return counts


def hand_value(faces, dead: frozenset[int] = frozenset()) -> float:
    """Best window count first, then how concentrated the hand is."""
    counts = window_counts(faces, dead)
    return max(counts) * 10 + sum(c * c for c in counts if c > 0) * 0.01


class SlaigaBot(Bot):
    """Heuristic player for both variants (see the module docstring)."""

    kind = "heuristic"

    def __init__(self, seat: int, rng: random.Random, **params: Any) -> None:
        super().__init__(seat, rng, **params)
        p = {**DEFAULTS, **params}
        self.bluff = float(p["bluff"])
        self.check_below = float(p["check_below"])
        self.shoot_at = float(p["shoot_at"])
        self.win_bluff = float(p["win_bluff"])
        self.jack_rate = float(p["jack_rate"])
        self.interest: dict[int, list[float]] = {}
        self._dead_now: frozenset[int] = frozenset()
        self._planned: Action | None = None

    # ---- tracking ---------------------------------------------------------------------

    def _suits_of(self, seat: int) -> list[float]:
        if seat not in self.interest:
            self.interest[seat] = [0.0, 0.0, 0.0, 0.0]
        return self.interest[seat]

    def observe(self, event: Event) -> None:
        seat = event.seat
        if seat is None or seat == self.seat:
            return
        card = event.data.get("card")
        if event.kind == "draw" and card is not None and card.rank != JOKER_RANK:
            suits = self._suits_of(seat)
            for s in SUITS:
                suits[s] *= INTEREST_DECAY
            # taking a known discard is a choice; the face-up draw-pile top barely is
            suits[card.suit] += 1.5 if event.data.get("source") == DISCARD else 0.3
        elif event.kind == "discard" and card is not None and card.rank != JOKER_RANK:
            self._suits_of(seat)[card.suit] -= 1.0
        elif event.kind == "queen":
            took = event.data.get("took")
            if took is not None and took.rank != JOKER_RANK:
                self._suits_of(seat)[took.suit] += 1.5
        elif event.kind in ("check:win:liar", "check:win:true", "finish"):
            self.interest.pop(seat, None)

    # ---- helpers ------------------------------------------------------------------------

    def _dead_windows(self, view: dict[str, Any]) -> frozenset[int]:
        dead: set[int] = set()
        for s, cards in enumerate(view["hands"]):
            if s == self.seat:
                continue
            for c in cards:
                if c.face is not None and c.face.rank != JOKER_RANK:
                    dead.update(CARD_WINDOWS[c.face])
        return frozenset(dead)

    def _unseen(self, view: dict[str, Any]) -> tuple[dict[Card, int], int]:
        """Faces this seat has not located, with the number of hidden handles."""
        seen: dict[Card, int] = {}
        hidden = 0
        total = 0
        groups = [
            *view["hands"],
            view["draw"],
            view["discard"],
            view["volley_cards"],
            view["to_place"],
        ]
        for group in groups:
            for c in group:
                total += 1
                if c.face is None:
                    hidden += 1
                else:
                    seen[c.face] = seen.get(c.face, 0) + 1
        unseen = {}
        for s in SUITS:
            for r in range(2, 15):
                f = Card(r, s)
                if not seen.get(f):
                    unseen[f] = 1
        return unseen, hidden

    def _p_holds(self, view: dict[str, Any], match, hand_size: int) -> float:
        """P(a hidden hand of ``hand_size`` holds at least one unseen card ``match``es)."""
        unseen, hidden = self._unseen(view)
        m = sum(1 for f in unseen if match(f))
        if m == 0 or hidden == 0:
            return 0.0
        hidden = max(hidden, m)
        k = min(hand_size, hidden)
        return 1.0 - comb(hidden - m, k) / comb(hidden, k)

    def _est_suit(self, view: dict[str, Any], seat: int, suit: int) -> float:
        known = sum(1 for c in view["hands"][seat] if c.face is not None and c.face.suit == suit)
        return known + 0.5 * max(0.0, self._suits_of(seat)[suit])

    def _worst(self, view, handles: Sequence[int], faces: dict[int, Card | None]) -> int:
        """The card whose loss hurts the hand least (keeps bullets a little)."""
        dead = self._dead_now
        hand = list(faces.items())
        best, best_v = handles[0], None
        for h in handles:
            rest = [f for x, f in hand if x != h]
            v = hand_value(rest, dead)
            f = faces.get(h)
            if f is not None and is_bullet(f):
                v -= 0.5
            if best_v is None or v > best_v:
                best, best_v = h, v
        return best

    # ---- acting -------------------------------------------------------------------------

    def act(self, view: dict[str, Any], legal: Sequence[Action]) -> Action:
        phase = view["phase"]
        self._dead_now = self._dead_windows(view)
        handler = getattr(self, f"_act_{phase}", None)
        if handler is not None:
            choice = handler(view, legal)
            if choice is not None:
                return choice
        return legal[0]

    def _hand(self, view) -> dict[int, Card | None]:
        return {c.handle: c.face for c in view["hand"]}

    def _act_turn(self, view, legal):
        me = self.seat
        hand = self._hand(view)
        dead = self._dead_now
        base = hand_value(hand.values(), dead)
        lying = view["lying"]
        # shoot when an opponent most likely holds 3+ of the target suit
        best = None
        for t, active in enumerate(view["active"]):
            if t == me or not active:
                continue
            for suit in SUITS:
                est = self._est_suit(view, t, suit)
                if est < self.shoot_at or (best is not None and est <= best[0]):
                    continue
                need = next_suit(suit)
                for h, f in hand.items():
                    if f is not None and is_shoot(f) and f.suit == need:
                        loss = base - hand_value([x for y, x in hand.items() if y != h], dead)
                        if loss < 10:
                            best = (est, Shoot(me, t, suit), ShotCard(me, h, f.rank == ACE))
        if best is not None:
            self._planned = best[2]
            return best[1]
        if lying and self.rng.random() < self.bluff * 0.2:
            opps = [t for t, a in enumerate(view["active"]) if a and t != me]
            t = max(opps, key=lambda s: max(self._suits_of(s)))
            suit = max(SUITS, key=lambda s: self._suits_of(t)[s])
            self._planned = ShotCard(me, self._worst(view, list(hand), hand), False)
            return Shoot(me, t, suit)
        jacks = [a for a in legal if isinstance(a, JackShot)]
        if jacks and self.rng.random() < self.jack_rate:
            bullets = sum(1 for f in hand.values() if f is not None and is_bullet(f))
            if bullets >= 2:
                return self.rng.choice(jacks)
        return self._choose_draw(view, hand, dead, legal)

    def _act_shot_card(self, view, legal):
        planned, self._planned = self._planned, None
        if planned is not None and planned in legal:
            return planned
        return None

    def _choose_draw(self, view, hand, dead, legal):
        base = hand_value(hand.values(), dead)
        options = []
        for src, pile in ((DISCARD, view["discard"]), (DRAW, view["draw"])):
            if pile and Draw(self.seat, src) in legal:
                top = pile[0].face
                if top is None:
                    options.append((0.5, src))
                else:
                    options.append((hand_value([*hand.values(), top], dead) - base, src))
        if not options:
            return legal[0]
        gain, src = max(options)
        if gain <= 0.5 and any(s == DRAW for _, s in options):
            src = DRAW
        return Draw(self.seat, src)

    def _act_reload(self, view, legal):
        return self._choose_draw(view, self._hand(view), self._dead_now, legal)

    def _act_discard(self, view, legal):
        me = self.seat
        hand = self._hand(view)
        faces = list(hand.items())
        for h, _ in faces:
            rest = [f for x, f in faces if x != h]
            if None not in rest and has_straight_flush(rest):
                return ClaimWin(me, h)
        dead = self._dead_now
        worst = self._worst(view, list(hand), hand)
        if view["lying"]:
            best = max(window_counts(hand.values(), dead))
            if best >= 4 and self.rng.random() < self.win_bluff:
                return ClaimWin(me, worst)
        f = hand[worst]
        if (
            f is not None
            and f.rank in (KING, QUEEN)
            and Discard(me, worst, True) in legal
            and (f.rank == KING or self._queen_gain(view, hand, worst, dead) > 0)
        ):
            return Discard(me, worst, True)
        return Discard(me, worst, False)

    def _queen_gain(self, view, hand, discarded, dead) -> float:
        rest = [f for h, f in hand.items() if h != discarded]
        base = hand_value(rest, dead)
        gains = [
            hand_value([*rest, c.face], dead) - base
            for c in view["discard"][:5]
            if c.face is not None
        ]
        return max(gains, default=0.0) - 10

    def _act_king(self, view, legal):
        return max(legal, key=lambda a: a.count)

    def _act_queen(self, view, legal):
        hand = self._hand(view)
        dead = self._dead_now
        faces = {c.handle: c.face for c in view["discard"]}
        best, best_v = None, None
        for a in legal:
            take = faces.get(a.take)
            new = [f for h, f in hand.items() if h != a.give] + [take]
            v = hand_value(new, dead)
            if best_v is None or v > best_v:
                best, best_v = a, v
        return best

    def _my_last(self, view):
        v = view["volley"]
        plays = v[4]
        return v, plays[-1]

    def _act_answer(self, view, legal):
        me = self.seat
        vol, last = self._my_last(view)
        kind, attacker, defender, target, plays, shots, checked = vol
        hand = self._hand(view)
        dead = self._dead_now
        base = hand_value(hand.values(), dead)
        lying = view["lying"]
        if kind == "jack":
            answers = [a for a in legal if isinstance(a, Answer)]
            cheap = [
                a
                for a in answers
                if base - hand_value([f for h, f in hand.items() if h != a.card], dead) < 10
            ]
            return cheap[0] if cheap else Concede(me)
        if Miss(me) in legal and len(legal) == 1:
            return legal[0]
        first = len(plays) == 1 and me == defender
        if first:
            count = sum(1 for f in hand.values() if f is not None and f.suit == target)
            if count < MISS_LIMIT:
                return Miss(me)
            if lying and self.rng.random() < self.bluff * 0.5:
                return Miss(me)
        suit = next_suit(last.suit)
        role = "block" if me == defender else "shot"
        truthful = []
        for h, f in hand.items():
            if f is None or f.suit != suit or (last.ace and f.rank != ACE):
                continue
            if role == "shot" and not is_shoot(f):
                continue
            loss = base - hand_value([x for y, x in hand.items() if y != h], dead)
            truthful.append((loss, h, f.rank == ACE))
        truthful.sort()
        if Check(me) in legal:
            if last.ace:
                p = self._p_holds(view, lambda f: f.suit == last.suit and f.rank == ACE, 6)
            elif last.role == "shot":
                p = self._p_holds(view, lambda f: f.suit == last.suit and is_shoot(f), 6)
            else:
                p = self._p_holds(view, lambda f: f.suit == last.suit, 6)
            if p < self.check_below or (not truthful and p < 0.9):
                return Check(me)
        if truthful and truthful[0][0] < 10:
            _, h, ace = truthful[0]
            if Answer(me, h, ace) in legal:
                return Answer(me, h, ace)
        if lying and self.rng.random() < self.bluff:
            h = self._worst(view, list(hand), hand)
            return Answer(me, h, bool(last.ace))
        return Concede(me)

    def _act_miss_answer(self, view, legal):
        vol = view["volley"]
        defender, target = vol[2], vol[3]
        if self._est_suit(view, defender, target) >= self.shoot_at + 1.5:
            return Check(self.seat)
        return Pass(self.seat)

    def _act_check_response(self, view, legal):
        me = self.seat
        jokers = [a for a in legal if isinstance(a, CancelCheck)]
        verdicts = [a for a in legal if isinstance(a, MissVerdict)]
        step = view["step"]
        caught = False
        if verdicts:
            caught = not verdicts[0].fewer
        elif step.tag == "win":
            caught = not has_straight_flush([c.face for c in view["hand"] if c.face is not None])
        elif view["volley"] is not None:
            last = view["volley"][4][-1]
            face = next((c.face for c in view["volley_cards"] if c.handle == last.handle), None)
            caught = face is None or not claim_holds(last, face, True)
        if caught and jokers:
            return jokers[0]
        if verdicts:
            return verdicts[0]
        return AcceptCheck(me)

    def _act_win_ask(self, view, legal):
        me = self.seat
        claimer = view["step"].other
        unseen, _ = self._unseen(view)
        known = {c.face for c in view["hands"][claimer] if c.face is not None}
        feasible = False
        for suit, ranks in WINDOWS:
            cards = [Card(r, suit) for r in ranks]
            if all(c in known or c in unseen for c in cards):
                feasible = True
                break
        if not feasible:
            return Check(me)
        mine = max(window_counts(self._hand(view).values(), self._dead_now))
        if mine <= 3 and self.rng.random() < 0.5:
            return Check(me)
        return Pass(me)

    def _act_give(self, view, legal):
        hand = self._hand(view)
        return Give(self.seat, self._worst(view, list(hand), hand))

    def _act_give_back(self, view, legal):
        hand = self._hand(view)
        return GiveBack(self.seat, self._worst(view, list(hand), hand))

    def _act_place(self, view, legal):
        zone = view["to_place"] if view["phase"] == "place" else view["hand"]
        if view["phase"] == "place_hand":
            hand = self._hand(view)
            h = self._worst(view, list(hand), hand)
        else:
            h = zone[0].handle
        return Place(self.seat, h, len(view["draw"]))

    _act_place_hand = _act_place

    def _act_swap(self, view, legal):
        hand = self._hand(view)
        dead = self._dead_now
        base = hand_value(hand.values(), dead)
        pile = {c.handle: c.face for c in view["draw"]}
        best, best_v = Pass(self.seat), base
        for a in legal:
            if isinstance(a, Swap):
                new = [f for h, f in hand.items() if h != a.card] + [pile.get(a.pile_card)]
                v = hand_value(new, dead)
                if v > best_v + 0.5:
                    best, best_v = a, v
        return best
