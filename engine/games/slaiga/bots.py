"""A heuristic Slaiga bot that sees only its seat's view and the events shown to it.

What it does:
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

Speed (``slaiga bench engine`` plays whole games with four of these bots): a
hand is one int of four 16-bit suit rank masks, and a window's count is the
popcount of a five-bit slice. A suit's (best window, sum of squared counts) is
memoised by (rank mask, dead-window mask); ``act`` scores the hand once, and a
hand that gains or loses one card is rescored from that card's suit alone.
Actions come from the interned tables of ``engine.games.slaiga.actions``. These are the same
integers as a window-by-window count (``window_counts``, checked in the tests),
so the bot's choices do not depend on the representation.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from math import comb
from typing import Any

from engine.bots import Bot
from engine.cards import ACE, JOKER_RANK, KING, QUEEN, SUITS, Card
from engine.game import Action, Event
from engine.games.slaiga.actions import (
    DISCARD,
    DRAW,
    AcceptCheck,
    Answer,
    CancelCheck,
    Check,
    Draw,
    JackShot,
    MissVerdict,
    Pass,
    Place,
    Shoot,
    Swap,
    card_actions,
    seat_actions,
)
from engine.games.slaiga.hands import (
    BULLET_RANKS,
    MISS_LIMIT,
    STRAIGHT_LEN,
    claim_holds,
    has_straight_flush,
    is_bullet,
    is_shoot,
    next_suit,
)

# ---- straight-flush windows ---------------------------------------------------------
#
# Window ``w = suit * WINDOWS_PER_SUIT + (low - 1)`` holds the five ranks low..low+4 of
# ``suit``, rank 1 standing for the ace played low. In a suit's rank mask the ace sets
# both bit 14 and bit 1, so window ``low`` counts ``popcount((mask >> low) & 0b11111)``.

WINDOW_LOWS = tuple(range(1, ACE - STRAIGHT_LEN + 2))  # 1 (A-2-3-4-5) .. 10 (10-J-Q-K-A)
WINDOWS_PER_SUIT = len(WINDOW_LOWS)
SUIT_WINDOWS = (1 << WINDOWS_PER_SUIT) - 1
WINDOW_RUN = (1 << STRAIGHT_LEN) - 1
RANK_BITS = {r: (1 << r) | (1 << 1 if r == ACE else 0) for r in range(2, ACE + 1)}
WINDOWS: list[tuple[int, frozenset[int]]] = [
    (s, frozenset(ACE if r == 1 else r for r in range(low, low + STRAIGHT_LEN)))
    for s in SUITS
    for low in WINDOW_LOWS
]
WINDOW_CARDS = tuple(tuple(Card(r, s) for r in sorted(ranks)) for s, ranks in WINDOWS)
ALL_FACES = tuple(Card(r, s) for s in SUITS for r in range(2, ACE + 1))
# every window a card belongs to, as a bitmask over the 40 window indices
CARD_WINDOW_MASK: dict[Card, int] = {
    f: sum(1 << w for w, (s, ranks) in enumerate(WINDOWS) if s == f.suit and f.rank in ranks)
    for f in ALL_FACES
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
OBSERVED_KINDS = frozenset(
    {"draw", "discard", "queen", "check:win:liar", "check:win:true", "finish"}
)
MEMO_LIMIT = 1 << 16  # bounds each memo below; it refills within a few games
SUIT_SHIFT = 16  # bits per suit in a packed hand (a suit's ranks use bits 1..14)
SUIT_RANKS = (1 << SUIT_SHIFT) - 1
HIGH_RANKS = SUIT_RANKS & ~0b11  # ranks 2..14, without the ace-low bit
# a face's bits in a packed hand: its rank mask shifted to its suit (jokers have none)
CARD_BITS: dict[Card, int] = {f: RANK_BITS[f.rank] << (SUIT_SHIFT * f.suit) for f in ALL_FACES}

_suit_memo: dict[int, tuple[int, int]] = {}


def suit_score(ranks: int, dead: int) -> tuple[int, int]:
    """(best window count, sum of squared counts) of one suit; a dead window counts -1.

    ``ranks`` is the suit's rank mask, ``dead`` the suit's ten dead-window bits. A pure
    function of two small ints, memoised because a game asks the same few hands often.
    """
    key = ranks | dead << SUIT_SHIFT
    return _suit_memo.get(key) or _score_key(key)


def _score_key(key: int) -> tuple[int, int]:
    ranks, dead = key & SUIT_RANKS, key >> SUIT_SHIFT
    best, squares = -1, 0
    for i, low in enumerate(WINDOW_LOWS):
        if (dead >> i) & 1:
            continue
        c = ((ranks >> low) & WINDOW_RUN).bit_count()
        squares += c * c
        if c > best:
            best = c
    if len(_suit_memo) >= MEMO_LIMIT:
        _suit_memo.clear()
    got = _suit_memo[key] = (best, squares)
    return got


def pack(faces: Iterable[Card | None]) -> int:
    """The known, non-joker ``faces`` as one int: four 16-bit suit rank masks."""
    hand = 0
    for f in faces:
        if f is not None:
            hand |= CARD_BITS.get(f, 0)
    return hand


def packed_value(hand: int, dead: int) -> float:
    """``hand_value`` of a packed hand (the four suit scores, looked up inline)."""
    get = _suit_memo.get
    k0 = (hand & SUIT_RANKS) | (dead & SUIT_WINDOWS) << SUIT_SHIFT
    k1 = ((hand >> SUIT_SHIFT) & SUIT_RANKS) | (
        (dead >> WINDOWS_PER_SUIT) & SUIT_WINDOWS
    ) << SUIT_SHIFT
    k2 = ((hand >> 2 * SUIT_SHIFT) & SUIT_RANKS) | (
        (dead >> 2 * WINDOWS_PER_SUIT) & SUIT_WINDOWS
    ) << SUIT_SHIFT
    k3 = (hand >> 3 * SUIT_SHIFT) | (dead >> 3 * WINDOWS_PER_SUIT) << SUIT_SHIFT
    b0, q0 = get(k0) or _score_key(k0)
    b1, q1 = get(k1) or _score_key(k1)
    b2, q2 = get(k2) or _score_key(k2)
    b3, q3 = get(k3) or _score_key(k3)
    return max(b0, b1, b2, b3) * 10 + (q0 + q1 + q2 + q3) * 0.01


def packed_best(hand: int, dead: int) -> int:
    """The most cards a packed hand holds of any live window."""
    return max(
        suit_score(
            (hand >> (s * SUIT_SHIFT)) & SUIT_RANKS,
            (dead >> (s * WINDOWS_PER_SUIT)) & SUIT_WINDOWS,
        )[0]
        for s in SUITS
    )


def hand_value(faces: Iterable[Card | None], dead: int = 0) -> float:
    """Best window count first, then how concentrated the hand is.

    ``dead`` is a bitmask over the 40 windows (a card seen in another hand kills them).
    Equal to ``max(counts) * 10 + sum(c * c for c in counts if c > 0) * 0.01`` over
    ``window_counts(faces, dead)``, computed from bitmasks.
    """
    return packed_value(pack(faces), dead)


def window_counts(faces: Iterable[Card | None], dead: int = 0) -> list[int]:
    """How many of ``faces`` each of the 40 windows holds (-1 for a dead window).

    The plain window-by-window definition that ``hand_value`` computes faster.
    """
    counts = [0] * N_WINDOWS
    for f in faces:
        if f is not None and f.rank != JOKER_RANK:
            for w in range(N_WINDOWS):
                if (CARD_WINDOW_MASK[f] >> w) & 1:
                    counts[w] += 1
    for w in range(N_WINDOWS):
        if (dead >> w) & 1:
            counts[w] = -1
    return counts


def _bits(face: Card | None) -> int:
    return 0 if face is None else CARD_BITS.get(face, 0)


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
        self._planned: Action | None = None
        self._handlers: dict[str, Any] = {}  # phase -> bound _act_<phase> or None
        # per-act caches (``act`` resets them): the view's dead windows, own hand and its
        # suit masks, the hand's value without each card, opponents' known suit counts
        self._dead_now = 0
        self._dead_of: tuple = ()
        self._hand_now: dict[int, Card | None] = {}
        self._packed = 0
        self._base: float | None = None
        self._keys: list[int] = []
        self._squares: tuple[int, ...] = ()
        self._total_squares = 0
        self._best = 0
        self._best_outside: tuple[int, ...] = ()
        self._rest: dict[int, float] = {}
        self._known: dict[int, list[int]] = {}

    # ---- tracking ---------------------------------------------------------------------

    def _suits_of(self, seat: int) -> list[float]:
        if seat not in self.interest:
            self.interest[seat] = [0.0, 0.0, 0.0, 0.0]
        return self.interest[seat]

    def observe(self, event: Event) -> None:
        kind = event.kind
        if kind not in OBSERVED_KINDS:
            return
        seat = event.seat
        if seat is None or seat == self.seat:
            return
        card = event.data.get("card")
        if kind == "draw" and card is not None and card.rank != JOKER_RANK:
            suits = self._suits_of(seat)
            for s in SUITS:
                suits[s] *= INTEREST_DECAY
            # taking a known discard is a choice; the face-up draw-pile top barely is
            suits[card.suit] += 1.5 if event.data.get("source") == DISCARD else 0.3
        elif kind == "discard" and card is not None and card.rank != JOKER_RANK:
            self._suits_of(seat)[card.suit] -= 1.0
        elif kind == "queen":
            took = event.data.get("took")
            if took is not None and took.rank != JOKER_RANK:
                self._suits_of(seat)[took.suit] += 1.5
        elif kind in ("check:win:liar", "check:win:true", "finish"):
            self.interest.pop(seat, None)

    # ---- helpers ------------------------------------------------------------------------

    def _dead_windows(self, view: dict[str, Any]) -> int:
        """Windows killed by a card seen in another hand (reused while those hands stay)."""
        hands = view["hands"]
        others = hands[: self.seat] + hands[self.seat + 1 :]
        if others == self._dead_of:  # CardViews are shared, so this is mostly identity
            return self._dead_now
        dead = 0
        for cards in others:
            for _, f in cards:
                if f is not None:
                    dead |= CARD_WINDOW_MASK.get(f, 0)  # a joker kills no window
        self._dead_of = others
        return dead

    def _unseen(self, view: dict[str, Any]) -> tuple[list[Card], int]:
        """Faces this seat has not located, with the number of hidden handles."""
        seen: set[Card] = set()
        hidden = 0
        groups = [
            *view["hands"],
            view["draw"],
            view["discard"],
            view["volley_cards"],
            view["to_place"],
        ]
        for group in groups:
            for c in group:
                if c.face is None:
                    hidden += 1
                else:
                    seen.add(c.face)
        return [f for f in ALL_FACES if f not in seen], hidden

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
        known = self._known.get(seat)
        if known is None:
            known = self._known[seat] = [0, 0, 0, 0, 0]  # index 4: jokers' suit
            for c in view["hands"][seat]:
                if c.face is not None:
                    known[c.face.suit] += 1
        return known[suit] + 0.5 * max(0.0, self._suits_of(seat)[suit])

    def _value(self) -> float:
        """The current hand's value (its four suit scores are kept for ``_changed``)."""
        if self._base is None:
            hand, dead = self._packed, self._dead_now
            get = _suit_memo.get
            keys = self._keys = [
                ((hand >> (s * SUIT_SHIFT)) & SUIT_RANKS)
                | ((dead >> (s * WINDOWS_PER_SUIT)) & SUIT_WINDOWS) << SUIT_SHIFT
                for s in SUITS
            ]
            (b0, q0), (b1, q1), (b2, q2), (b3, q3) = [get(k) or _score_key(k) for k in keys]
            self._squares = (q0, q1, q2, q3)
            self._total_squares = q0 + q1 + q2 + q3
            # the best window outside each suit, for a hand whose one suit changes
            self._best_outside = (
                max(b1, b2, b3),
                max(b0, b2, b3),
                max(b0, b1, b3),
                max(b0, b1, b2),
            )
            self._best = max(b0, b1, b2, b3)
            self._base = self._best * 10 + self._total_squares * 0.01
        return self._base

    def _best_window(self) -> int:
        """The most cards the hand holds of any live window."""
        self._value()
        return self._best

    def _changed(self, suit: int, key: int) -> float:
        """The hand's value with suit ``suit``'s score key replaced by ``key``."""
        b, q = _suit_memo.get(key) or _score_key(key)
        out = self._best_outside[suit]
        return (b if b > out else out) * 10 + (self._total_squares - self._squares[suit] + q) * 0.01

    def _plus_value(self, face: Card) -> float:
        """The hand's value with ``face`` added (a card from a pile)."""
        base = self._value()
        if face.rank == JOKER_RANK:
            return base
        return self._changed(face.suit, self._keys[face.suit] | RANK_BITS[face.rank])

    def _rest_value(self, h: int) -> float:
        """The current hand's value without card ``h``: only that card's suit score changes."""
        v = self._rest.get(h)
        if v is None:
            v = self._value()
            f = self._hand_now[h]
            if f is not None and f.rank != JOKER_RANK:
                v = self._changed(f.suit, self._keys[f.suit] & ~RANK_BITS[f.rank])
            self._rest[h] = v
        return v

    def _worst(self) -> int:
        """The card whose loss hurts the hand least (keeps bullets a little).

        ``_rest_value`` for every card, inlined: this runs on every discard and penalty.
        """
        base = self._value()
        keys, outside = self._keys, self._best_outside
        squares, total = self._squares, self._total_squares
        get, rest = _suit_memo.get, self._rest
        best, best_v = -1, None
        for h, f in self._hand_now.items():
            v = rest.get(h)
            if v is None:
                if f is None or f.rank == JOKER_RANK:
                    v = base
                else:
                    s = f.suit
                    k = keys[s] & ~RANK_BITS[f.rank]
                    b, q = get(k) or _score_key(k)
                    o = outside[s]
                    v = (b if b > o else o) * 10 + (total - squares[s] + q) * 0.01
                rest[h] = v
            if f is not None and f.rank in BULLET_RANKS:
                v -= 0.5
            if best_v is None or v > best_v:
                best, best_v = h, v
        return best

    # ---- acting -------------------------------------------------------------------------

    def act(self, view: dict[str, Any], legal: Sequence[Action]) -> Action:
        phase = view["phase"]
        self._dead_now = self._dead_windows(view)
        hand = self._hand_now = dict(view["hand"])  # CardView = (handle, face)
        packed = 0
        for f in hand.values():
            if f is not None:
                packed |= CARD_BITS.get(f, 0)  # jokers add nothing
        self._packed = packed
        self._base = None
        self._rest = {}
        self._known = {}
        handler = self._handlers.get(phase)
        if handler is None and phase not in self._handlers:
            handler = self._handlers[phase] = getattr(self, f"_act_{phase}", None)
        if handler is not None:
            choice = handler(view, legal)
            if choice is not None:
                return choice
        return legal[0]

    def _act_turn(self, view, legal):
        me = self.seat
        hand = self._hand_now
        lying = view["lying"]
        # shoot when an opponent most likely holds 3+ of the target suit
        best = None
        shooters = [(h, f) for h, f in hand.items() if f is not None and is_shoot(f)]
        # only target suits this hand can shoot at matter (a shot uses the suit after T)
        suits = sorted({(f.suit - 1) % 4 for _, f in shooters})
        for t, active in enumerate(view["active"]):
            if t == me or not active or not suits:
                continue
            for suit in suits:
                est = self._est_suit(view, t, suit)
                if est < self.shoot_at or (best is not None and est <= best[0]):
                    continue
                need = next_suit(suit)
                for h, f in shooters:
                    if f.suit == need:
                        loss = self._value() - self._rest_value(h)
                        if loss < 10:
                            best = (est, t, suit, h, f.rank == ACE)
        if best is not None:
            _, t, suit, h, ace = best
            acts = card_actions(me, h)
            self._planned = acts.shot_ace if ace else acts.shot
            return Shoot(me, t, suit)
        if lying and self.rng.random() < self.bluff * 0.2:
            opps = [t for t, a in enumerate(view["active"]) if a and t != me]
            t = max(opps, key=lambda s: max(self._suits_of(s)))
            suit = max(SUITS, key=lambda s: self._suits_of(t)[s])
            self._planned = card_actions(me, self._worst()).shot
            return Shoot(me, t, suit)
        jacks = [a for a in legal if isinstance(a, JackShot)]
        if jacks and self.rng.random() < self.jack_rate:
            bullets = sum(1 for f in hand.values() if f is not None and is_bullet(f))
            if bullets >= 2:
                return self.rng.choice(jacks)
        return self._choose_draw(view, legal)

    def _act_shot_card(self, view, legal):
        planned, self._planned = self._planned, None
        if planned is not None and planned in legal:
            return planned
        return None

    def _choose_draw(self, view, legal):
        base = self._value()
        options = []
        sources = {a.source for a in legal if type(a) is Draw}
        for src, pile in ((DISCARD, view["discard"]), (DRAW, view["draw"])):
            if pile and src in sources:
                top = pile[0].face
                if top is None:
                    options.append((0.5, src))
                else:
                    gain = self._plus_value(top) - base
                    options.append((gain, src))
        if not options:
            return legal[0]
        gain, src = max(options)
        if gain <= 0.5 and any(s == DRAW for _, s in options):
            src = DRAW
        return seat_actions(self.seat)[src]

    def _act_reload(self, view, legal):
        return self._choose_draw(view, legal)

    def _act_discard(self, view, legal):
        me = self.seat
        hand = self._hand_now
        packed = self._packed
        # a straight flush needs five ranks of one suit (bits 2..14: the ace once)
        if any(
            ((packed >> (s * SUIT_SHIFT)) & HIGH_RANKS).bit_count() >= STRAIGHT_LEN for s in SUITS
        ):
            for h, f in hand.items():
                if packed_best(packed & ~_bits(f), 0) >= STRAIGHT_LEN:
                    return card_actions(me, h).claim
        worst = self._worst()
        if view["lying"] and self._best_window() >= 4 and self.rng.random() < self.win_bluff:
            return card_actions(me, worst).claim
        f = hand[worst]
        if (
            f is not None
            and f.rank in (KING, QUEEN)
            and card_actions(me, worst).declare in legal
            and (f.rank == KING or self._queen_gain(view, worst) > 0)
        ):
            return card_actions(me, worst).declare
        return card_actions(me, worst).discard

    def _queen_gain(self, view, discarded) -> float:
        dead = self._dead_now
        rest = self._packed & ~_bits(self._hand_now[discarded])
        base = packed_value(rest, dead)
        gains = [
            packed_value(rest | _bits(c.face), dead) - base
            for c in view["discard"][:5]
            if c.face is not None
        ]
        return max(gains, default=0.0) - 10

    def _act_king(self, view, legal):
        return max(legal, key=lambda a: a.count)

    def _act_queen(self, view, legal):
        hand = self._hand_now
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

    def _act_answer(self, view, legal):
        me = self.seat
        mine = seat_actions(me)
        vol = view["volley"]
        kind, attacker, defender, target, plays, shots, checked = vol
        last = plays[-1]
        hand = self._hand_now
        lying = view["lying"]
        if kind == "jack":
            answers = [a for a in legal if isinstance(a, Answer)]
            cheap = [a for a in answers if self._value() - self._rest_value(a.card) < 10]
            return cheap[0] if cheap else mine["concede"]
        if len(legal) == 1 and mine["miss"] in legal:
            return legal[0]
        first = len(plays) == 1 and me == defender
        if first:
            count = sum(1 for f in hand.values() if f is not None and f.suit == target)
            if count < MISS_LIMIT:
                return mine["miss"]
            if lying and self.rng.random() < self.bluff * 0.5:
                return mine["miss"]
        suit = next_suit(last.suit)
        role = "block" if me == defender else "shot"
        truthful = []
        for h, f in hand.items():
            if f is None or f.suit != suit or (last.ace and f.rank != ACE):
                continue
            if role == "shot" and not is_shoot(f):
                continue
            loss = self._value() - self._rest_value(h)
            truthful.append((loss, h, f.rank == ACE))
        truthful.sort()
        if mine["check"] in legal:
            seen = next((c.face for c in view["volley_cards"] if c.handle == last.handle), None)
            if seen is not None:  # a card everyone saw (e.g. drawn from the face-up pile)
                if not claim_holds(last, seen, True):
                    return mine["check"]
            elif last.ace:
                p = self._p_holds(view, lambda f: f.suit == last.suit and f.rank == ACE, 6)
            elif last.role == "shot":
                p = self._p_holds(view, lambda f: f.suit == last.suit and is_shoot(f), 6)
            else:
                p = self._p_holds(view, lambda f: f.suit == last.suit, 6)
            if seen is None and (p < self.check_below or (not truthful and p < 0.9)):
                return mine["check"]
        if truthful and truthful[0][0] < 10:
            _, h, ace = truthful[0]
            answer = card_actions(me, h).answer_ace if ace else card_actions(me, h).answer
            if answer in legal:
                return answer
        if lying and self.rng.random() < self.bluff:
            acts = card_actions(me, self._worst())
            return acts.answer_ace if last.ace else acts.answer
        return mine["concede"]

    def _act_miss_answer(self, view, legal):
        vol = view["volley"]
        defender, target = vol[2], vol[3]
        if self._est_suit(view, defender, target) >= self.shoot_at + 1.5:
            return seat_actions(self.seat)["check"]
        return seat_actions(self.seat)["pass"]

    def _act_check_response(self, view, legal):
        me = self.seat
        jokers = [a for a in legal if isinstance(a, CancelCheck)]
        verdicts = [a for a in legal if isinstance(a, MissVerdict)]
        task = view["task"]
        caught = False
        if verdicts:
            caught = not verdicts[0].fewer
        elif task.tag == "win":
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
        claimer = view["task"].other
        unseen = set(self._unseen(view)[0])
        known = {c.face for c in view["hands"][claimer] if c.face is not None}
        feasible = any(all(c in known or c in unseen for c in cards) for cards in WINDOW_CARDS)
        if not feasible:
            return Check(me)
        mine = self._best_window()
        if mine <= 3 and self.rng.random() < 0.5:
            return Check(me)
        return Pass(me)

    def _act_give(self, view, legal):
        return card_actions(self.seat, self._worst()).give

    def _act_give_back(self, view, legal):
        return card_actions(self.seat, self._worst()).give_back

    def _act_place(self, view, legal):
        h = self._worst() if view["phase"] == "place_hand" else view["to_place"][0].handle
        return Place(self.seat, h, len(view["draw"]))

    _act_place_hand = _act_place

    def _act_swap(self, view, legal):
        hand = self._hand_now
        dead = self._dead_now
        base = self._value()
        pile = {c.handle: c.face for c in view["draw"]}
        best, best_v = Pass(self.seat), base
        for a in legal:
            if isinstance(a, Swap):
                new = [f for h, f in hand.items() if h != a.card] + [pile.get(a.pile_card)]
                v = hand_value(new, dead)
                if v > best_v + 0.5:
                    best, best_v = a, v
        return best
