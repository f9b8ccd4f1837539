"""Slaiga and Honest Slaiga (RULES.md §1; seed 000_5c5d6408b5a2fc2f.txt) on the engine core.

One class plays both variants: ``Slaiga`` (``slaiga``, lying allowed, the draw
pile face up, shots and blocks face down with claimed suits, every lie open to
a check) and ``HonestSlaiga`` (``honest-slaiga``, face-down draw pile, shots
and blocks face up, misses and win claims proved).

How the turn structure is kept in one place
-------------------------------------------
Everything that still has to happen is an *agenda*: a public list of
``Step`` records. The head step decides the phase and the seat to move
(``PHASE_ACTIONS`` maps each interactive phase to the actions it accepts).
Automatic steps (``AUTO_STEPS``: reveal the next six cards, move the volley to
the discard pile, blind pick, finish a seat, pass the turn) run without an
action. A rule that has consequences pushes them as steps, in the rulebook's
order, e.g. a conceded volley pushes ``give`` (payer chooses the penalty
cards), ``place`` (receiver places them), ``volley_discard``, ``reload`` of
the loser, ``reload`` of the winner, ``next_turn`` after the attacker.

Response windows and their fixed answer order (no timing involved)
-----------------------------------------------------------------
* Shot/block check: only the seat that must answer the face-down card may
  check it, as its answer (phase ``answer``).
* Miss check: only the attacker, right after the miss (phase ``miss_answer``).
* Win checks (``slaiga``): the other seats still in play are asked *one at a
  time* in ascending seat order starting after the claimer, wrapping around
  (phase ``win_ask``); each says ``Check`` or ``Pass``. The first check that is
  not cancelled reveals the hand and ends the round; if all pass the claim
  stands.
* Joker answers: after any check the *checked* seat answers first (phase
  ``check_response``): ``CancelCheck`` with a joker or ``AcceptCheck``. The
  window opens whenever the ``jokers`` option is on, whether or not the seat
  holds a joker, so that the window itself leaks nothing. For a miss check
  the accepting answer is ``MissVerdict(fewer)``: the hand is shown to the
  attacker only (``Reveal(hand, to={A})``) and the verdict is backed by a
  ``Prove`` obligation (``FewerOfSuit`` or ``AtLeastOfSuit``) so that seats
  who did not see the hand learn the outcome without a peek.

Interpretations (where RULES.md leaves a detail open; documented, not options)
------------------------------------------------------------------------------
* A win claim is "draw, then put one card face down"; it is true when the six
  cards left in hand contain a straight flush.
* Honest first answer: with fewer than three cards of T the defender must call
  miss (``Prove(FewerOfSuit)``); with three or more, conceding or blocking is
  backed by ``Prove(AtLeastOfSuit)``. In ``slaiga`` nothing is enforced.
* In ``slaiga`` a claim may say "ace"; an ace claim must be answered by an ace
  claim (ace rule), and a checked ace claim is true only for an ace.
* A jack volley has no ace rule (any bullet answers any bullet).
* A penalty larger than the payer's hand takes the whole hand.
* A joker's "draws one card" may come from either pile, like a reload.
* A cancelled shot/block check leaves the checker to answer the same card,
  and it may not be checked again; a cancelled miss check leaves the miss
  with its normal one-card penalty.
* A face-down shot or block whose face everyone already saw (a card taken
  from the face-up draw pile or the discard pile) is still a claim and may be
  checked; the check needs no new reveal.
* Action fields must have their exact types (an ``int`` handle, seat or
  position, a ``bool`` flag, a ``str`` pile): a peer's ``True`` or ``1.0``
  is refused as illegal, never taken for handle 1.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, fields
from functools import cache, lru_cache
from typing import Any, NamedTuple

from engine.cards import ACE, JACK, JOKER_RANK, KING, QUEEN, SUIT_SYMBOLS, Card, standard_deck
from engine.errors import FalseClaim
from engine.game import Action, CardView, Game, Handler, Outcome
from engine.obligations import (
    AtLeastInSet,
    FewerOfSuit,
    JointRandom,
    Prove,
    Reveal,
    Shuffle,
    Statement,
    Transfer,
    faces_where,
)
from engine.options import OptionSpec

HAND_SIZE = 6
STRAIGHT_LEN = 5
MISS_LIMIT = 3  # D calls miss with fewer than this many cards of suit T
PENALTY_CAP = 5  # a check penalty is at most this
FALSE_MISS_PENALTY = 3
CHECK_PLACE = 4  # cards placed by A after a true miss, by the checker after a true win
LOOK_COUNT = 6  # cards D looks at after a true miss check
SWAP_MAX = 3
QUEEN_REACH = 6  # the queen reaches the 6 most recent discards
KING_CAP = 6  # [house] cap on the king's reveal
DEFAULT_MAX_TURNS = 1000
N_JOKERS = 2
SHOOT_RANKS = frozenset({JACK, QUEEN, KING, ACE})
BULLET_RANKS = frozenset({JACK, QUEEN, KING, ACE, JOKER_RANK})
DRAW, DISCARD = "draw", "discard"
SOURCES = (DRAW, DISCARD)
SUITS = (0, 1, 2, 3)
BOOLS = (False, True)


def next_suit(suit: int) -> int:
    """The suit after ``suit`` (♣ < ♦ < ♥ < ♠, wrapping ♠ -> ♣)."""
    return (suit + 1) % 4


def is_shoot(face: Card) -> bool:
    return face.rank in SHOOT_RANKS


def is_bullet(face: Card) -> bool:
    return face.rank in BULLET_RANKS


def _suit_masks(faces: Iterable[Card]) -> list[int]:
    masks = [0, 0, 0, 0]
    for f in faces:
        if f.rank != JOKER_RANK:
            masks[f.suit] |= 1 << f.rank
    return masks


_RUN = (1 << STRAIGHT_LEN) - 1


def has_straight_flush(faces: Iterable[Card], wrap: bool = False) -> bool:
    """Five cards of one suit with consecutive ranks; an ace is high or low.

    Without ``wrap`` (the [house] default) Q-K-A-2-3 is not a straight.
    """
    for m in _suit_masks(faces):
        if m.bit_count() < STRAIGHT_LEN:
            continue
        if m & (1 << ACE):
            m |= 1 << 1  # ace low
        for low in range(1, ACE - STRAIGHT_LEN + 2):
            if (m >> low) & _RUN == _RUN:
                return True
        if wrap:
            # ranks 2..14 as a 13-cycle: windows that run over the ace into 2..
            cyc = m >> 2
            cyc = cyc | (cyc << 13)
            for low in range(13):
                if (cyc >> low) & _RUN == _RUN:
                    return True
    return False


@dataclass(frozen=True, slots=True)
class AtLeastOfSuit(Statement):
    """At least ``count`` of ``handles`` are of ``suit``.

    The complement of ``FewerOfSuit`` (the same threshold proof over the suit
    instead of over the other suits). Honest Slaiga's defender proves it when
    conceding or blocking a first shot; a caught false miss proves it.
    """

    handles: tuple[int, ...]
    suit: int
    count: int

    def holds(self, face_of) -> bool:
        return sum(1 for h in self.handles if face_of(h).suit == self.suit) >= self.count

    def shape(self) -> Statement:
        return AtLeastInSet(
            self.seat, self.handles, faces_where(lambda f: f.suit == self.suit), self.count
        )

    def __str__(self) -> str:
        return (
            f"seat {self.seat} holds at least {self.count} {SUIT_SYMBOLS[self.suit]} "
            f"among {len(self.handles)} cards"
        )


# ---- actions --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Draw(Action):
    """Take the top card of ``source`` (``draw`` or ``discard``): turn, reload, joker draw."""

    source: str


@dataclass(frozen=True, slots=True)
class Discard(Action):
    """Discard ``card`` face up; ``declare`` a king's or queen's bullet ability."""

    card: int
    declare: bool = False


@dataclass(frozen=True, slots=True)
class ClaimWin(Action):
    """Put ``card`` face down on the discard pile and say "slaiga"."""

    card: int


@dataclass(frozen=True, slots=True)
class Shoot(Action):
    """Name opponent ``target`` and target suit ``suit``; the card follows (``ShotCard``)."""

    target: int
    suit: int


@dataclass(frozen=True, slots=True)
class ShotCard(Action):
    """Play the first shot's ``card`` (claimed: a shoot card of the suit after T; ace if ``ace``)."""

    card: int
    ace: bool = False


@dataclass(frozen=True, slots=True)
class JackShot(Action):
    target: int
    card: int


@dataclass(frozen=True, slots=True)
class Answer(Action):
    """Block, countershoot, or (jack volley) answer with a bullet."""

    card: int
    ace: bool = False


@dataclass(frozen=True, slots=True)
class Concede(Action):
    pass


@dataclass(frozen=True, slots=True)
class Miss(Action):
    pass


@dataclass(frozen=True, slots=True)
class Check(Action):
    """Shot/block check (as an answer), miss check, or win check, by phase."""


@dataclass(frozen=True, slots=True)
class Pass(Action):
    """Accept a miss, decline a win check, or stop swapping."""


@dataclass(frozen=True, slots=True)
class CancelCheck(Action):
    joker: int


@dataclass(frozen=True, slots=True)
class AcceptCheck(Action):
    pass


@dataclass(frozen=True, slots=True)
class MissVerdict(Action):
    """Answer a miss check: show the hand to the attacker and prove the verdict."""

    fewer: bool


@dataclass(frozen=True, slots=True)
class Give(Action):
    card: int


@dataclass(frozen=True, slots=True)
class Place(Action):
    """Place ``card`` in the draw pile at ``position`` (0 = top)."""

    card: int
    position: int


@dataclass(frozen=True, slots=True)
class Swap(Action):
    """After a true miss check: swap hand ``card`` with looked-at ``pile_card``."""

    card: int
    pile_card: int


@dataclass(frozen=True, slots=True)
class KingLook(Action):
    count: int


@dataclass(frozen=True, slots=True)
class QueenSwap(Action):
    give: int
    take: int


@dataclass(frozen=True, slots=True)
class GiveBack(Action):
    card: int


ALL_ACTIONS = (
    Draw,
    Discard,
    ClaimWin,
    Shoot,
    ShotCard,
    JackShot,
    Answer,
    Concede,
    Miss,
    Check,
    Pass,
    CancelCheck,
    AcceptCheck,
    MissVerdict,
    Give,
    Place,
    Swap,
    KingLook,
    QueenSwap,
    GiveBack,
)

# Every field's exact type, per action class. Actions arrive from the network decoded from
# plain data, so a peer may send ``True`` or ``1.0`` where a handle is due: both compare equal
# to handle 1 and would slip through ``in`` tests, then corrupt zones (bool/float handles) or
# crash mid-handler. ``handle`` checks these before anything else.
_WIRE_TYPES = {"int": int, "bool": bool, "str": str}
FIELD_TYPES: dict[type[Action], tuple[tuple[str, type], ...]] = {
    cls: tuple((f.name, _WIRE_TYPES[f.type]) for f in fields(cls)) for cls in ALL_ACTIONS
}

# ---- interned actions for legal_actions ---------------------------------------------
#
# Actions are frozen values, so ``legal_actions`` hands out shared instances from these
# memoised tables instead of building hundreds of dataclasses per action taken (every
# key is a seat, a handle or a small tuple of them, so the tables stay small).


class CardActions(NamedTuple):
    """Every action naming one hand card ``h`` of one seat."""

    discard: Discard
    declare: Discard
    claim: ClaimWin
    shot: ShotCard
    shot_ace: ShotCard
    answer: Answer
    answer_ace: Answer
    give: Give
    give_back: GiveBack


@cache
def card_actions(seat: int, h: int) -> CardActions:
    return CardActions(
        Discard(seat, h, False),
        Discard(seat, h, True),
        ClaimWin(seat, h),
        ShotCard(seat, h, False),
        ShotCard(seat, h, True),
        Answer(seat, h, False),
        Answer(seat, h, True),
        Give(seat, h),
        GiveBack(seat, h),
    )


@cache
def place_row(seat: int, h: int, positions: int) -> tuple[Place, ...]:
    """``Place(seat, h, p)`` for ``p`` in ``range(positions)``; legal rows are slices."""
    return tuple(Place(seat, h, p) for p in range(positions))


@cache
def shoot_actions(seat: int, opps: tuple[int, ...], suits: tuple[int, ...]) -> tuple[Shoot, ...]:
    return tuple(Shoot(seat, t, suit) for t in opps for suit in suits)


@cache
def jack_shots(seat: int, h: int, opps: tuple[int, ...]) -> tuple[JackShot, ...]:
    return tuple(JackShot(seat, t, h) for t in opps)


@cache
def seat_actions(seat: int) -> dict[str, Action]:
    """The card-less actions of ``seat`` by name (draws by pile name)."""
    return {
        DRAW: Draw(seat, DRAW),
        DISCARD: Draw(seat, DISCARD),
        "concede": Concede(seat),
        "miss": Miss(seat),
        "check": Check(seat),
        "pass": Pass(seat),
        "accept": AcceptCheck(seat),
    }


# The phase table: each interactive step kind and the actions it accepts.
PHASE_ACTIONS: dict[str, tuple[type[Action], ...]] = {
    "turn": (Draw, Shoot, JackShot),
    "shot_card": (ShotCard,),
    "discard": (Discard, ClaimWin),
    "king": (KingLook,),
    "queen": (QueenSwap,),
    "answer": (Answer, Concede, Miss, Check),
    "miss_answer": (Check, Pass),
    "check_response": (CancelCheck, AcceptCheck, MissVerdict),
    "give": (Give,),
    "place": (Place,),
    "place_hand": (Place,),
    "swap": (Swap, Pass),
    "reload": (Draw,),
    "give_back": (GiveBack,),
    "win_ask": (Check, Pass),
}
AUTO_STEPS = frozenset(
    {"look", "volley_discard", "jack_pick", "finish", "next_turn", "resolve_check"}
)


@dataclass(frozen=True, slots=True)
class Step:
    """One agenda entry. ``seat`` moves (interactive steps); the rest is per kind.

    give: seat pays ``n`` cards to ``other``. place: seat places its received
    cards. place_hand: seat places ``n`` cards from hand. reload: seat draws up
    to ``n`` cards in hand. swap: ``n`` swaps left among pile ``handles``.
    win_ask: seat may check ``other``'s claim; ``handles`` are the seats still to
    ask. check_response: seat (checked) answers ``other``'s check of ``tag``.
    """

    kind: str
    seat: int = -1
    other: int = -1
    n: int = 0
    handles: tuple[int, ...] = ()
    tag: str = ""


# Steps are values; the agenda takes shared instances (a frozen dataclass is slow to build
# and a game pushes a few per action). Bounded: swap and win-ask steps carry handle tuples.
step_of = lru_cache(maxsize=4096)(Step)


@dataclass(frozen=True, slots=True)
class Play:
    """One volley card: who, which handle, role and claim (suit -1 in a jack volley)."""

    seat: int
    handle: int
    role: str  # "shot" | "block" | "jack"
    suit: int
    ace: bool


class Volley:
    __slots__ = ("kind", "attacker", "defender", "target", "plays", "shots", "checked")

    def __init__(self, kind: str, attacker: int, defender: int, target: int) -> None:
        self.kind = kind  # "suit" | "jack"
        self.attacker = attacker
        self.defender = defender
        self.target = target
        self.plays: list[Play] = []
        self.shots = 0
        self.checked = False  # the last card was checked and the check cancelled

    def opponent(self, seat: int) -> int:
        return self.defender if seat == self.attacker else self.attacker

    def public(self) -> tuple:
        return (
            self.kind,
            self.attacker,
            self.defender,
            self.target,
            tuple(self.plays),
            self.shots,
            self.checked,
        )


def claim_holds(play: Play, face: Card, block_any: bool) -> bool:
    """Is ``face`` what ``play`` claimed (a shoot card / a card of its suit, ace if said)?"""
    if face.suit != play.suit:
        return False
    if play.ace and face.rank != ACE:
        return False
    if play.role == "shot" or not block_any:
        return is_shoot(face)
    return True


class Slaiga(Game):
    """``slaiga``: the base game with lying (RULES.md §1)."""

    NAME = "slaiga"
    LYING = True
    MIN_SEATS, MAX_SEATS = 2, 8
    ACTIONS = ALL_ACTIONS
    OPTIONS = (
        OptionSpec("jokers", bool, True, "add two jokers (they cancel checks)"),
        OptionSpec(
            "max_turns",
            int,
            DEFAULT_MAX_TURNS,
            "turn cap: the game ends as a draw after this many turns",
            minimum=1,
        ),
        OptionSpec("turn_up_discard", bool, False, "[house] start the discard pile with a card"),
        OptionSpec("wrap_straights", bool, False, "[house] straights may wrap K-A-2"),
        OptionSpec("block_any", bool, True, "[house] blocks may be any card of the suit"),
        OptionSpec("check_ends_volley", bool, True, "[house] a shot/block check ends the volley"),
        OptionSpec(
            "miss_check_replaces", bool, True, "[house] a true miss check replaces the miss penalty"
        ),
        OptionSpec(
            "reveal_volley_cards", bool, False, "[house] reveal unchecked face-down volley cards"
        ),
        OptionSpec(
            "loser_reloads_first", bool, True, "[house] after a volley the loser reloads first"
        ),
        OptionSpec(
            "king_max", int, KING_CAP, "[house] most cards a king reveals", minimum=1, maximum=52
        ),
    )

    def __init__(self, seats: int, options=None) -> None:
        super().__init__(seats, options)
        self.agenda: list[Step] = []
        self.volley: Volley | None = None
        self.current = 0
        self.active = [True] * seats
        self.places: list[int] = []
        self.over = False
        self.capped = False
        self._hand_zones = tuple(f"hand:{s}" for s in range(seats))
        self._place_zones = tuple(f"place:{s}" for s in range(seats))
        self._hidden_views = tuple(CardView(h, None) for h in range(len(self.deck)))
        # The view table: ``_views[seat][h]`` is ``face_for(seat, h)`` as a CardView, kept
        # up to date by ``_learn`` (the only place ``seen`` and ``faces`` change) so that a
        # view is a few C-level ``map``s. ``_views_of`` holds the ``seen``/``faces`` the
        # table was made from; ``view`` rebuilds the table whenever they differ (a test
        # may rewrite ``faces``), so a view never shows anything but ``face_for``.
        self._views: list[list[CardView]] = [list(self._hidden_views) for _ in range(seats)]
        self._views_of: tuple[dict[int, int], dict[int, Card]] = ({}, {})
        self._handlers = {
            "turn": self._on_turn,
            "shot_card": self._on_shot_card,
            "discard": self._on_discard,
            "king": self._on_king,
            "queen": self._on_queen,
            "answer": self._on_answer,
            "miss_answer": self._on_miss_answer,
            "check_response": self._on_check_response,
            "give": self._on_give,
            "place": self._on_place,
            "place_hand": self._on_place,
            "swap": self._on_swap,
            "reload": self._on_reload,
            "give_back": self._on_give_back,
            "win_ask": self._on_win_ask,
        }
        self._legal = {kind: getattr(self, f"_legal_{kind}") for kind in PHASE_ACTIONS}
        self._auto = {
            "look": self._auto_look,
            "volley_discard": self._auto_volley_discard,
            "jack_pick": self._auto_jack_pick,
            "finish": self._auto_finish,
            "next_turn": self._auto_next_turn,
            "resolve_check": self._auto_resolve_check,
        }

    # ---- setup ----------------------------------------------------------------------

    def make_deck(self):
        return standard_deck(jokers=N_JOKERS if self.options["jokers"] else 0)

    def setup(self) -> Handler:
        self.zones.add(DRAW, range(len(self.deck)))
        self.zones.add(DISCARD)
        self.zones.add("volley")
        for s in range(self.seats):
            self.zones.add(f"hand:{s}")
            self.zones.add(f"place:{s}")
        yield Shuffle(tuple(self.zones[DRAW]), "deal")
        for s in range(self.seats):
            hand = tuple(self.zones[DRAW][:HAND_SIZE])
            for h in hand:
                self.zones.move(h, f"hand:{s}")
            yield Reveal(hand, frozenset((s,)), "deal")
        self.emit("deal", f"{HAND_SIZE} cards dealt to each of {self.seats} seats")
        if self.options["turn_up_discard"]:
            h = self.zones[DRAW][0]
            self.zones.move(h, DISCARD, 0)
            faces = yield Reveal((h,), None, "turn up")
            self.emit("turn-up", f"discard pile starts with {faces[h]}", card=faces[h])
        yield from self._expose_top()
        self.agenda = [step_of("turn", 0)]
        yield from self._proceed()

    # ---- the agenda -------------------------------------------------------------------

    def _push(self, *steps: Step) -> None:
        self.agenda[0:0] = steps

    def _step_done(self, step: Step) -> bool:
        k = step.kind
        if k == "give":
            return step.n <= 0 or not self.zones[self._hand_zones[step.seat]]
        if k == "place":
            return not self.zones[self._place_zones[step.seat]]
        if k == "place_hand":
            return step.n <= 0 or not self.zones[self._hand_zones[step.seat]]
        if k == "reload":
            return len(self.zones[self._hand_zones[step.seat]]) >= step.n or not (
                self.zones[DRAW] or self.zones[DISCARD]
            )
        if k == "swap":
            return step.n <= 0 or not step.handles or not self.zones[self._hand_zones[step.seat]]
        if k == "give_back":
            return not self.zones[self._hand_zones[step.seat]]
        return False

    def _proceed(self) -> Handler:
        while self.agenda and not self.over:
            step = self.agenda[0]
            if step.kind in AUTO_STEPS:
                self.agenda.pop(0)
                yield from self._auto[step.kind](step)
                continue
            if self._step_done(step):
                self.agenda.pop(0)
                continue
            self.phase = step.kind
            return
        self.agenda.clear()
        self.phase = "over"

    def handle(self, action: Action) -> Handler:
        types = FIELD_TYPES.get(type(action))
        if types is None:
            raise self.illegal(action, f"{type(action).__name__} is not an action of {self.NAME}")
        for name, kind in types:
            value = getattr(action, name)
            if type(value) is not kind:
                raise self.illegal(
                    action, f"field {name!r} must be {kind.__name__}, not {type(value).__name__}"
                )
        step = self.agenda[0]
        allowed = PHASE_ACTIONS[step.kind]
        if not isinstance(action, allowed):
            names = ", ".join(c.__name__ for c in allowed)
            raise self.illegal(
                action, f"{type(action).__name__} is not allowed now (allowed: {names})"
            )
        yield from self._handlers[step.kind](step, action)
        yield from self._proceed()

    # ---- helpers ----------------------------------------------------------------------

    def hand(self, seat: int) -> list[int]:
        return self.zones[self._hand_zones[seat]]  # type: ignore[return-value]

    def _require_in_hand(self, action: Action, card: int, seat: int | None = None) -> None:
        s = action.seat if seat is None else seat
        if card not in self.zones[self._hand_zones[s]]:
            raise self.illegal(action, f"card #{card} is not in seat {s}'s hand")

    def _next_active(self, seat: int) -> int:
        for i in range(1, self.seats + 1):
            s = (seat + i) % self.seats
            if self.active[s]:
                return s
        return seat

    def _others_in_order(self, seat: int) -> tuple[int, ...]:
        return tuple(
            (seat + i) % self.seats
            for i in range(1, self.seats)
            if self.active[(seat + i) % self.seats]
        )

    def _expose_top(self) -> Handler:
        """``slaiga``: the draw pile's top card is always public."""
        if self.LYING:
            pile = self.zones[DRAW]
            if pile and not self.is_public(pile[0]):
                h = pile[0]
                faces = yield Reveal((h,), None, "draw pile top")
                self.emit("top", f"draw pile top: {faces.get(h, '▒▒')}", card=faces.get(h))

    def _refill(self) -> Handler:
        """When the draw pile runs out, the whole discard pile is shuffled jointly into it."""
        if not self.zones[DRAW] and self.zones[DISCARD]:
            for h in list(self.zones[DISCARD]):
                self.zones.move(h, DRAW)
            yield Shuffle(tuple(self.zones[DRAW]), "reshuffle")
            self.emit(
                "reshuffle",
                f"discard pile shuffled into a new draw pile of {len(self.zones[DRAW])}",
            )
        yield from self._expose_top()

    def _take(self, seat: int, source: str) -> Handler:
        pile = self.zones[source]
        h = pile[0]
        public = self.is_public(h)
        self.zones.move(h, self._hand_zones[seat])
        if not self.visible(seat, h):
            yield Reveal((h,), frozenset((seat,)), "draw")
        face = self.faces.get(h) if public else None
        what = str(face) if face is not None else "a card"
        self.emit(
            "draw",
            f"seat {seat} takes {what} from the {source} pile",
            seat,
            source=source,
            card=face,
        )
        if source == DRAW:
            yield from self._refill()

    def _validate_draw(self, action: Draw) -> None:
        if action.source not in SOURCES:
            raise self.illegal(action, f"unknown pile {action.source!r}")
        if not self.zones[action.source]:
            raise self.illegal(action, f"the {action.source} pile is empty")

    def _reveal_public(self, handles: tuple[int, ...], reason: str) -> Handler:
        need = tuple(h for h in handles if not self.is_public(h))
        if need:
            yield Reveal(need, None, reason)
        return {h: self.faces.get(h) for h in handles}

    def _reload_steps(self, loser: int, winner: int) -> tuple[Step, Step]:
        first, second = (loser, winner) if self.options["loser_reloads_first"] else (winner, loser)
        return step_of("reload", first, n=HAND_SIZE), step_of("reload", second, n=HAND_SIZE)

    def _penalty(self, payer: int, receiver: int, n: int, attacker: int) -> tuple[Step, ...]:
        return (
            step_of("give", payer, receiver, n),
            step_of("place", receiver),
            step_of("volley_discard"),
            *self._reload_steps(payer, receiver),
            step_of("next_turn", attacker),
        )

    def _known_suit_count(self, seat: int, suit: int) -> int | None:
        """Cards of ``suit`` in ``seat``'s hand if this instance may see them all."""
        faces = [self.face_for(seat, h) for h in self.hand(seat)]
        if any(f is None for f in faces):
            return None
        return sum(1 for f in faces if f.suit == suit)

    # ---- turn ---------------------------------------------------------------------------

    def _on_turn(self, step: Step, a: Action) -> Handler:
        seat = step.seat
        if isinstance(a, Draw):
            self._validate_draw(a)
            self.agenda.pop(0)
            yield from self._take(seat, a.source)
            self._push(step_of("discard", seat))
            return
        target = a.target
        if not (0 <= target < self.seats) or target == seat or not self.active[target]:
            raise self.illegal(a, f"seat {target} is not an opponent in play")
        if isinstance(a, JackShot):
            self._require_in_hand(a, a.card)
            face = self.face_for(seat, a.card)
            if face is not None and face.rank != JACK:
                raise self.illegal(a, f"a jack shot needs a jack, not {face}")
            self.agenda.pop(0)
            self.zones.move(a.card, "volley")
            faces = yield from self._reveal_public((a.card,), "jack shot")
            if faces[a.card].rank != JACK:
                raise FalseClaim(seat, f"jack shot with {faces[a.card]}")
            v = Volley("jack", seat, target, -1)
            v.plays.append(Play(seat, a.card, "jack", -1, False))
            v.shots = 1
            self.volley = v
            self.emit(
                "jack-shot",
                f"seat {seat} jack-shoots seat {target} with {faces[a.card]}",
                seat,
                target=target,
            )
            self._push(step_of("answer", target))
            return
        if not 0 <= a.suit < 4:
            raise self.illegal(a, f"no suit {a.suit}")
        if not self.LYING:
            faces = [self.face_for(seat, h) for h in self.hand(seat)]
            if None not in faces and not any(
                is_shoot(f) and f.suit == next_suit(a.suit) for f in faces
            ):
                raise self.illegal(a, f"no shoot card of {SUIT_SYMBOLS[next_suit(a.suit)]} in hand")
        self.agenda.pop(0)
        self._push(step_of("shot_card", seat, target, a.suit))
        return
        yield

    def _on_shot_card(self, step: Step, a: ShotCard) -> Handler:
        seat, target = step.seat, step.other
        self._require_in_hand(a, a.card)
        a_suit = step.n
        play = Play(seat, a.card, "shot", next_suit(a_suit), bool(a.ace))
        if not self.LYING:
            self._validate_honest(a, play)
        self.agenda.pop(0)
        self.zones.move(a.card, "volley")
        v = Volley("suit", seat, target, a_suit)
        v.plays.append(play)
        v.shots = 1
        self.volley = v
        shown = ""
        if not self.LYING:
            faces = yield from self._reveal_public((a.card,), "shot")
            self._verify_honest(play, faces[a.card])
            shown = f" with {faces[a.card]}"
        claim = self._claim_text(play)
        self.emit(
            "shot",
            f"seat {seat} shoots seat {target}: {SUIT_SYMBOLS[a_suit]} target, {claim}{shown}",
            seat,
            target=target,
            suit=a_suit,
        )
        self._push(step_of("answer", target))

    def _claim_text(self, play: Play) -> str:
        sym = SUIT_SYMBOLS[play.suit]
        return f"{'ace ' if play.ace else ''}{sym} {play.role}"

    def _validate_honest(self, a: Action, play: Play) -> None:
        """Honest plays are face up: the player's own engine checks them early."""
        face = self.face_for(a.seat, play.handle)
        if face is None:
            return
        if face.suit != play.suit:
            raise self.illegal(a, f"{face} is not {SUIT_SYMBOLS[play.suit]} (the required suit)")
        if play.role == "shot" and not is_shoot(face):
            raise self.illegal(a, f"{face} is not a shoot card (J, Q, K or A)")
        if play.role == "block" and not self.options["block_any"] and not is_shoot(face):
            raise self.illegal(a, f"{face} is not a shoot card (blocks must be, at this table)")
        if play.ace != (face.rank == ACE):
            raise self.illegal(a, f"the ace flag does not match {face}")

    def _verify_honest(self, play: Play, face: Card) -> None:
        if not claim_holds(play, face, self.options["block_any"]) or play.ace != (face.rank == ACE):
            raise FalseClaim(play.seat, f"face-up {play.role} {face} breaks the volley rules")

    # ---- discard, claims, king and queen ---------------------------------------------------

    def _on_discard(self, step: Step, a: Action) -> Handler:
        seat = step.seat
        self._require_in_hand(a, a.card)
        if isinstance(a, Discard):
            if a.declare:
                face = self.face_for(seat, a.card)
                if face is not None and face.rank not in (KING, QUEEN):
                    raise self.illegal(a, f"{face} has no ability to declare on discard")
                if face is not None and face.rank == KING and not self.zones[DRAW]:
                    raise self.illegal(a, "the draw pile is empty: nothing for a king to reveal")
            self.agenda.pop(0)
            self.zones.move(a.card, DISCARD, 0)
            faces = yield from self._reveal_public((a.card,), "discard")
            face = faces[a.card]
            self.emit("discard", f"seat {seat} discards {face}", seat, card=face)
            then = [step_of("next_turn", seat)]
            if a.declare:
                if face.rank not in (KING, QUEEN):
                    raise FalseClaim(seat, f"declared an ability on {face}")
                then.insert(0, step_of("king" if face.rank == KING else "queen", seat))
            self._push(*then)
            return
        # ClaimWin
        rest = [h for h in self.hand(seat) if h != a.card]
        if not self.LYING:
            faces = [self.face_for(seat, h) for h in rest]
            if None not in faces and not has_straight_flush(faces, self.options["wrap_straights"]):
                raise self.illegal(a, "honest slaiga: the hand left holds no straight flush")
        self.agenda.pop(0)
        self.zones.move(a.card, DISCARD, 0)
        self.emit("claim", f'seat {seat} puts a card face down and says "slaiga"', seat)
        if not self.LYING:
            faces = yield from self._reveal_public(tuple(rest), "win claim")
            if not has_straight_flush(faces.values(), self.options["wrap_straights"]):
                raise FalseClaim(seat, "win claim without a straight flush")
            shown = " ".join(str(faces[h]) for h in rest)
            self.emit("win:proved", f"seat {seat} shows {shown}", seat)
            self._push(step_of("finish", seat), step_of("next_turn", seat))
            return
        self._push(*self._win_round(seat, self._others_in_order(seat)))

    def _win_round(self, claimer: int, ask: tuple[int, ...]) -> tuple[Step, ...]:
        if ask:
            return (step_of("win_ask", ask[0], claimer, handles=ask[1:]),)
        return step_of("finish", claimer), step_of("next_turn", claimer)

    def _on_king(self, step: Step, a: KingLook) -> Handler:
        top = min(self.options["king_max"], len(self.zones[DRAW]))
        if not 1 <= a.count <= top:
            raise self.illegal(a, f"a king reveals 1 to {top} cards")
        self.agenda.pop(0)
        handles = tuple(self.zones[DRAW][: a.count])
        faces = yield from self._reveal_public(handles, "king")
        shown = " ".join(str(faces[h]) for h in handles)
        self.emit(
            "king",
            f"seat {a.seat}'s king reveals the next {a.count}: {shown}",
            a.seat,
            count=a.count,
        )

    def _on_queen(self, step: Step, a: QueenSwap) -> Handler:
        self._require_in_hand(a, a.give)
        reach = self.zones[DISCARD][:QUEEN_REACH]
        if a.take not in reach:
            raise self.illegal(
                a, f"card #{a.take} is not among the {QUEEN_REACH} most recent discards"
            )
        self.agenda.pop(0)
        idx = self.zones[DISCARD].index(a.take)
        self.zones.move(a.take, f"hand:{a.seat}")
        self.zones.move(a.give, DISCARD, idx)
        if not self.visible(a.seat, a.take):
            yield Reveal((a.take,), frozenset((a.seat,)), "queen")
        faces = yield from self._reveal_public((a.give,), "queen")
        took = self.faces.get(a.take) if self.is_public(a.take) else None
        self.emit(
            "queen",
            f"seat {a.seat}'s queen swaps {faces[a.give]} for {took or 'a face-down card'}",
            a.seat,
            card=faces[a.give],
            took=took,
        )

    # ---- volleys ----------------------------------------------------------------------------

    def _first_answer(self, v: Volley, seat: int) -> bool:
        return v.kind == "suit" and len(v.plays) == 1 and seat == v.defender

    def _honest_first(self, a: Action, v: Volley) -> bool:
        """Honest first answer other than miss: D must hold 3+ of T (checked early if known)."""
        if self.LYING or not self._first_answer(v, a.seat):
            return False
        count = self._known_suit_count(a.seat, v.target)
        if count is not None and count < MISS_LIMIT:
            raise self.illegal(
                a, f"fewer than {MISS_LIMIT} {SUIT_SYMBOLS[v.target]} in hand: call miss"
            )
        return True

    def _at_least(self, seat: int, suit: int) -> Prove:
        return Prove(AtLeastOfSuit(seat, tuple(self.hand(seat)), suit, MISS_LIMIT), "first answer")

    def _on_answer(self, step: Step, a: Action) -> Handler:
        v = self.volley
        assert v is not None
        seat = step.seat
        last = v.plays[-1]
        if isinstance(a, Concede):
            prove = self._honest_first(a, v)
            self.agenda.pop(0)
            if prove:
                yield self._at_least(seat, v.target)
            self.emit(
                "concede", f"seat {seat} concedes after {v.shots} shot(s)", seat, shots=v.shots
            )
            self._end_volley(loser=seat, penalty=v.shots)
            return
        if isinstance(a, Miss):
            if not self._first_answer(v, seat):
                raise self.illegal(a, "only the defender's first answer to a shot may be a miss")
            if not self.LYING:
                count = self._known_suit_count(seat, v.target)
                if count is not None and count >= MISS_LIMIT:
                    raise self.illegal(
                        a,
                        f"{count} {SUIT_SYMBOLS[v.target]} in hand: honest slaiga forbids a false miss",
                    )
            self.agenda.pop(0)
            self.emit("miss", f"seat {seat} calls miss", seat)
            if not self.LYING:
                yield Prove(FewerOfSuit(seat, tuple(self.hand(seat)), v.target, MISS_LIMIT), "miss")
                self._push(*self._miss_penalty(v))
            else:
                self._push(step_of("miss_answer", v.attacker, seat))
            return
        if isinstance(a, Check):
            if not self.LYING or v.kind != "suit":
                raise self.illegal(a, "only face-down shots and blocks can be checked")
            if v.checked:
                raise self.illegal(a, "this card's check was cancelled; it cannot be checked again")
            self.agenda.pop(0)
            self.emit(
                "check-called", f"seat {seat} calls a {last.role} check", seat, check=last.role
            )
            self._push(self._check_window(last.role, checked=last.seat, checker=seat))
            return
        # Answer
        self._require_in_hand(a, a.card)
        if v.kind == "jack":
            face = self.face_for(seat, a.card)
            if face is not None and not is_bullet(face):
                raise self.illegal(a, f"{face} is not a bullet (A, K, Q, J or joker)")
            self.agenda.pop(0)
            self.zones.move(a.card, "volley")
            faces = yield from self._reveal_public((a.card,), "jack volley")
            if not is_bullet(faces[a.card]):
                raise FalseClaim(seat, f"jack-volley answer {faces[a.card]} is not a bullet")
            v.plays.append(Play(seat, a.card, "jack", -1, False))
            if seat == v.attacker:
                v.shots += 1
            self.emit("jack-answer", f"seat {seat} answers with {faces[a.card]}", seat)
            self._push(step_of("answer", v.opponent(seat)))
            return
        role = "block" if seat == v.defender else "shot"
        play = Play(seat, a.card, role, next_suit(last.suit), bool(a.ace))
        if last.ace and not play.ace:
            raise self.illegal(a, "an ace can only be answered with an ace")
        if not self.LYING:
            self._validate_honest(a, play)
        prove = self._honest_first(a, v)
        self.agenda.pop(0)
        if prove:
            yield self._at_least(seat, v.target)
        self.zones.move(a.card, "volley")
        v.plays.append(play)
        v.checked = False
        if role == "shot":
            v.shots += 1
        shown = ""
        if not self.LYING:
            faces = yield from self._reveal_public((a.card,), role)
            self._verify_honest(play, faces[a.card])
            shown = f" with {faces[a.card]}"
        kind = "block" if role == "block" else "countershot"
        self.emit(kind, f"seat {seat}: {self._claim_text(play)}{shown}", seat)
        self._push(step_of("answer", v.opponent(seat)))

    def _miss_penalty(self, v: Volley) -> tuple[Step, ...]:
        return self._penalty(v.attacker, v.defender, 1, v.attacker)

    def _end_volley(self, loser: int, penalty: int) -> None:
        v = self.volley
        assert v is not None
        winner = v.opponent(loser)
        if v.kind == "jack":
            self._push(
                step_of("jack_pick", winner, loser),
                step_of("volley_discard"),
                *self._reload_steps(loser, winner),
                step_of("next_turn", v.attacker),
            )
        else:
            self._push(*self._penalty(loser, winner, penalty, v.attacker))

    def _on_miss_answer(self, step: Step, a: Action) -> Handler:
        v = self.volley
        assert v is not None
        self.agenda.pop(0)
        if isinstance(a, Pass):
            self.emit("miss-accepted", f"seat {a.seat} accepts the miss", a.seat)
            self._push(*self._miss_penalty(v))
        else:
            self.emit("check-called", f"seat {a.seat} calls a miss check", a.seat, check="miss")
            self._push(self._check_window("miss", checked=v.defender, checker=a.seat))
        return
        yield  # a generator

    def _check_window(
        self, tag: str, checked: int, checker: int, ask: tuple[int, ...] = ()
    ) -> Step:
        if self.options["jokers"] or tag == "miss":
            return step_of("check_response", checked, checker, handles=ask, tag=tag)
        return step_of("resolve_check", checked, checker, handles=ask, tag=tag)

    # ---- checks -----------------------------------------------------------------------------

    def _on_check_response(self, step: Step, a: Action) -> Handler:
        seat, checker, tag = step.seat, step.other, step.tag
        if isinstance(a, CancelCheck):
            self._require_in_hand(a, a.joker)
            face = self.face_for(seat, a.joker)
            if face is not None and face.rank != JOKER_RANK:
                raise self.illegal(a, f"{face} is not a joker")
            self.agenda.pop(0)
            self.zones.move(a.joker, DRAW)
            faces = yield from self._reveal_public((a.joker,), "joker")
            if faces[a.joker].rank != JOKER_RANK:
                raise FalseClaim(seat, f"cancelled a check with {faces[a.joker]}")
            yield from self._expose_top()
            self.emit(
                "joker", f"seat {seat} plays a joker: the {tag} check is cancelled", seat, check=tag
            )
            draw_one = step_of("reload", seat, n=len(self.hand(seat)) + 1)
            v = self.volley
            if tag in ("shot", "block"):
                assert v is not None
                v.checked = True
                self._push(draw_one, step_of("answer", checker))
            elif tag == "miss":
                assert v is not None
                self._push(draw_one, *self._miss_penalty(v))
            else:
                self._push(draw_one, *self._win_round(seat, step.handles))
            return
        if isinstance(a, MissVerdict):
            if tag != "miss":
                raise self.illegal(a, "only a miss check is answered with a verdict")
            v = self.volley
            assert v is not None
            count = self._known_suit_count(seat, v.target)
            if count is not None and (count < MISS_LIMIT) != a.fewer:
                raise self.illegal(
                    a, f"the verdict must be the truth: {count} {SUIT_SYMBOLS[v.target]}"
                )
            self.agenda.pop(0)
            hand = tuple(self.hand(seat))
            yield Reveal(hand, frozenset((checker,)), "miss check")
            shown = " ".join(str(self.faces.get(h, "▒▒")) for h in hand)
            self.emit(
                "hand-shown",
                f"seat {seat} shows seat {checker}: {shown}",
                seat,
                audience={seat, checker},
            )
            if a.fewer:
                yield Prove(FewerOfSuit(seat, hand, v.target, MISS_LIMIT), "miss check")
            else:
                yield Prove(AtLeastOfSuit(seat, hand, v.target, MISS_LIMIT), "miss check")
            self._miss_verdict(v, a.fewer)
            return
        if tag == "miss":
            raise self.illegal(a, "a miss check is answered with MissVerdict or a joker")
        self.agenda.pop(0)
        yield from self._resolve(tag, seat, checker, step.handles)

    def _auto_resolve_check(self, step: Step) -> Handler:
        yield from self._resolve(step.tag, step.seat, step.other, step.handles)

    def _miss_verdict(self, v: Volley, fewer: bool) -> None:
        a_seat, d_seat = v.attacker, v.defender
        if fewer:
            self.emit(
                "check:miss:true",
                f"the miss was true: seat {a_seat} places {CHECK_PLACE} cards",
                a_seat,
            )
            extra = (
                ()
                if self.options["miss_check_replaces"]
                else (
                    step_of("give", a_seat, d_seat, 1),
                    step_of("place", d_seat),
                )
            )
            self._push(
                *extra,
                step_of("place_hand", a_seat, n=CHECK_PLACE),
                step_of("look", d_seat),
                step_of("volley_discard"),
                *self._reload_steps(a_seat, d_seat),
                step_of("next_turn", a_seat),
            )
        else:
            self.emit(
                "check:miss:liar",
                f"the miss was a lie: seat {d_seat} pays {FALSE_MISS_PENALTY}",
                d_seat,
            )
            self._push(*self._penalty(d_seat, a_seat, FALSE_MISS_PENALTY, a_seat))

    def _resolve(self, tag: str, checked: int, checker: int, ask: tuple[int, ...]) -> Handler:
        if tag == "win":
            hand = tuple(self.hand(checked))
            faces = yield from self._reveal_public(hand, "win check")
            shown = " ".join(str(faces[h]) for h in hand)
            if has_straight_flush(faces.values(), self.options["wrap_straights"]):
                self.emit(
                    "check:win:true",
                    f"seat {checked} shows {shown}: a true win",
                    checked,
                    checker=checker,
                )
                self._push(
                    step_of("finish", checked),
                    step_of("place_hand", checker, n=CHECK_PLACE),
                    step_of("reload", checker, n=HAND_SIZE),
                    step_of("next_turn", checked),
                )
            else:
                self.emit(
                    "check:win:liar",
                    f"seat {checked} shows {shown}: a lie",
                    checked,
                    checker=checker,
                )
                self._push(
                    step_of("place_hand", checked, n=len(hand)),
                    step_of("reload", checked, n=HAND_SIZE),
                    step_of("next_turn", checked),
                )
            return
        v = self.volley
        assert v is not None
        play = v.plays[-1]
        faces = yield from self._reveal_public((play.handle,), f"{tag} check")
        face = faces[play.handle]
        true = claim_holds(play, face, self.options["block_any"])
        n = v.shots
        if true:
            payer, pay = checker, min(n, PENALTY_CAP)
        else:
            payer, pay = checked, min(n + 1, PENALTY_CAP)
        verdict = "true" if true else "liar"
        self.emit(
            f"check:{tag}:{verdict}",
            f"the {tag} was {face}: {'true' if true else 'a lie'}; seat {payer} pays {pay}",
            payer,
            pay=pay,
        )
        if true and not self.options["check_ends_volley"]:
            v.checked = True
            self._push(
                step_of("give", payer, checked, pay),
                step_of("place", checked),
                step_of("answer", checker),
            )
            return
        self._push(*self._penalty(payer, v.opponent(payer), pay, v.attacker))

    # ---- win checks -------------------------------------------------------------------------

    def _on_win_ask(self, step: Step, a: Action) -> Handler:
        self.agenda.pop(0)
        claimer = step.other
        if isinstance(a, Pass):
            self.emit("win-pass", f"seat {a.seat} does not check", a.seat)
            self._push(*self._win_round(claimer, step.handles))
        else:
            self.emit(
                "check-called",
                f"seat {a.seat} calls a win check on seat {claimer}",
                a.seat,
                check="win",
            )
            self._push(self._check_window("win", checked=claimer, checker=a.seat, ask=step.handles))
        return
        yield

    # ---- penalties, placing, swaps, reloads ---------------------------------------------------

    def _on_give(self, step: Step, a: Give) -> Handler:
        self._require_in_hand(a, a.card)
        self.agenda[0] = step_of("give", step.seat, step.other, step.n - 1)
        self.zones.move(a.card, self._place_zones[step.other])
        yield Transfer(a.card, step.seat, step.other, "penalty")
        self.emit(
            "penalty-card", f"seat {step.seat} gives seat {step.other} a penalty card", step.seat
        )

    def _on_place(self, step: Step, a: Place) -> Handler:
        zone = (self._place_zones if step.kind == "place" else self._hand_zones)[a.seat]
        if a.card not in self.zones[zone]:
            raise self.illegal(a, f"card #{a.card} is not among the cards to place")
        if not 0 <= a.position <= len(self.zones[DRAW]):
            raise self.illegal(a, f"position {a.position} is outside 0..{len(self.zones[DRAW])}")
        if step.kind == "place_hand":
            self.agenda[0] = step_of("place_hand", step.seat, n=step.n - 1)
        self.zones.move(a.card, DRAW, a.position)
        self.emit(
            "place",
            f"seat {a.seat} places a card at position {a.position}",
            a.seat,
            position=a.position,
        )
        if a.position == 0:
            yield from self._expose_top()

    def _auto_look(self, step: Step) -> Handler:
        handles = tuple(self.zones[DRAW][:LOOK_COUNT])
        if handles:
            yield Reveal(handles, frozenset((step.seat,)), "look")
        self.emit(
            "look", f"seat {step.seat} looks at the next {len(handles)} draw-pile cards", step.seat
        )
        self._push(step_of("swap", step.seat, n=SWAP_MAX, handles=handles))

    def _on_swap(self, step: Step, a: Action) -> Handler:
        if isinstance(a, Pass):
            self.agenda.pop(0)
            return
        self._require_in_hand(a, a.card)
        if a.pile_card not in step.handles:
            raise self.illegal(a, f"card #{a.pile_card} is not one of the looked-at cards left")
        rest = tuple(h for h in step.handles if h != a.pile_card)
        self.agenda[0] = step_of("swap", step.seat, n=step.n - 1, handles=rest)
        idx = self.zones[DRAW].index(a.pile_card)
        self.zones.move(a.pile_card, f"hand:{a.seat}")
        self.zones.move(a.card, DRAW, idx)
        self.emit(
            "swap", f"seat {a.seat} swaps a card at draw-pile position {idx}", a.seat, position=idx
        )
        if idx == 0:
            yield from self._expose_top()

    def _on_reload(self, step: Step, a: Draw) -> Handler:
        self._validate_draw(a)
        yield from self._take(step.seat, a.source)

    def _auto_volley_discard(self, step: Step) -> Handler:
        v = self.volley
        assert v is not None
        plays = v.plays
        if self.options["reveal_volley_cards"]:
            yield from self._reveal_public(tuple(p.handle for p in plays), "volley end")
        for p in plays:
            self.zones.move(p.handle, DISCARD, 0)
        prefix = "jack-volley" if v.kind == "jack" else "volley"
        self.emit(
            f"{prefix}-length:{len(plays)}",
            f"{prefix.replace('-', ' ')} between seats {v.attacker} and {v.defender} ends: "
            f"{len(plays)} card(s), {v.shots} shot(s)",
            length=len(plays),
            shots=v.shots,
        )
        self.volley = None

    def _auto_jack_pick(self, step: Step) -> Handler:
        winner, loser = step.seat, step.other
        hand = tuple(self.hand(loser))
        if not hand:
            return
        idx = yield JointRandom(len(hand), "jack pick")
        h = hand[idx]
        self.zones.move(h, f"hand:{winner}")
        yield Transfer(h, loser, winner, "jack pick")
        self.emit(
            "jack-pick", f"seat {winner} takes a blind card from seat {loser}", winner, loser=loser
        )
        self._push(step_of("give_back", winner, loser))

    def _on_give_back(self, step: Step, a: GiveBack) -> Handler:
        self._require_in_hand(a, a.card)
        self.agenda.pop(0)
        self.zones.move(a.card, f"hand:{step.other}")
        yield Transfer(a.card, step.seat, step.other, "jack give-back")
        self.emit("give-back", f"seat {step.seat} gives seat {step.other} a card back", step.seat)

    def _auto_finish(self, step: Step) -> Handler:
        seat = step.seat
        self.places.append(seat)
        self.active[seat] = False
        self.emit(
            "finish",
            f"seat {seat} goes out in place {len(self.places)}",
            seat,
            place=len(self.places),
        )
        left = [s for s in range(self.seats) if self.active[s]]
        if len(left) <= 1:
            for s in left:
                self.places.append(s)
                self.active[s] = False
                self.emit(
                    "finish",
                    f"seat {s} is left in last place {len(self.places)}",
                    s,
                    place=len(self.places),
                )
            self.over = True
            self.agenda.clear()
        return
        yield

    def _auto_next_turn(self, step: Step) -> Handler:
        self.turns += 1
        if self.turns >= self.options["max_turns"]:
            self.capped = True
            self.over = True
            self.agenda.clear()
            self.emit(
                "turn-cap", f"turn cap {self.options['max_turns']} reached: the game is a draw"
            )
            return
        self.current = self._next_active(step.seat)
        self._push(step_of("turn", self.current))
        return
        yield

    # ---- queries --------------------------------------------------------------------------------

    def to_move(self) -> tuple[int, ...]:
        if self._pending is not None or self.over or not self.agenda:
            return ()
        return (self.agenda[0].seat,)

    def is_over(self) -> bool:
        return self.over

    def outcome(self) -> Outcome:
        if self.capped:
            rest = tuple(s for s in range(self.seats) if s not in self.places)
            return Outcome(tuple(self.places) + rest, draw=True, reason="turn cap reached")
        return Outcome(tuple(self.places), reason="one seat left")

    def public_state(self) -> Any:
        return {
            "agenda": tuple(self.agenda),
            "volley": self.volley.public() if self.volley else None,
            "current": self.current,
            "active": tuple(self.active),
            "places": tuple(self.places),
            "capped": self.capped,
        }

    def _learn(self, ob, answer) -> None:
        """Record the answer (base class), then refresh the view table for its handles."""
        super()._learn(ob, answer)
        if isinstance(ob, (Shuffle, Reveal)):
            self._refresh_views(ob.handles)
        elif isinstance(ob, Transfer):
            self._refresh_views((ob.handle,))

    def _refresh_views(self, handles: Iterable[int]) -> None:
        seen, faces = self.seen, self.faces
        snap_seen, snap_faces = self._views_of
        hidden, tables = self._hidden_views, self._views
        for h in handles:
            bits = seen.get(h, 0)
            face = faces.get(h)
            if bits:
                snap_seen[h] = bits
            else:
                snap_seen.pop(h, None)
            if face is None:
                snap_faces.pop(h, None)
                shown = hidden[h]
            else:
                snap_faces[h] = face
                shown = CardView(h, face)
            for s, table in enumerate(tables):
                table[h] = shown if (bits >> s) & 1 else hidden[h]

    def _view_table(self, seat: int) -> list[CardView]:
        snap_seen, snap_faces = self._views_of
        if snap_faces != self.faces or snap_seen != self.seen:
            self._views_of = ({}, {})
            self._refresh_views(range(len(self.deck)))
        return self._views[seat]

    def view(self, seat: int) -> dict[str, Any]:
        of = self._view_table(seat).__getitem__
        piles = self.zones
        hands = tuple([tuple(map(of, piles[z])) for z in self._hand_zones])
        v = self.volley
        return {
            "seat": seat,
            "lying": self.LYING,
            "phase": self.phase,
            "step": self.agenda[0] if self.agenda else None,
            "current": self.current,
            "turns": self.turns,
            "hand": hands[seat],
            "hands": hands,
            "to_place": tuple(map(of, piles[self._place_zones[seat]])),
            "draw": tuple(map(of, piles[DRAW])),
            "discard": tuple(map(of, piles[DISCARD])),
            "volley": v.public() if v else None,
            "volley_cards": tuple(map(of, piles["volley"])),
            "active": tuple(self.active),
            "places": tuple(self.places),
        }

    def legal_actions(self, seat: int) -> list[Action]:
        if seat not in self.to_move():
            return []
        step = self.agenda[0]
        return self._legal[step.kind](step, seat)

    def _legal_draws(self, seat: int) -> list[Action]:
        mine = seat_actions(seat)
        return [mine[src] for src in SOURCES if self.zones[src]]

    def _opponents(self, seat: int) -> tuple[int, ...]:
        return tuple(t for t in range(self.seats) if t != seat and self.active[t])

    def _hand_faces(self, seat: int) -> list[tuple[int, Card | None]]:
        """``(h, face_for(seat, h))`` for each card of ``seat``'s hand, in one pass."""
        seen, faces, bit = self.seen, self.faces, 1 << seat
        return [(h, faces.get(h) if seen.get(h, 0) & bit else None) for h in self.hand(seat)]

    def _legal_turn(self, step: Step, seat: int) -> list[Action]:
        out = self._legal_draws(seat)
        opps = self._opponents(seat)
        shot_suits: set[int] = set()
        for h, f in self._hand_faces(seat):
            if f is not None and f.rank == JACK:
                out.extend(jack_shots(seat, h, opps))
            if f is not None and is_shoot(f):
                shot_suits.add((f.suit - 1) % 4)
        targets = SUITS if self.LYING else tuple(sorted(shot_suits))
        out.extend(shoot_actions(seat, opps, targets))
        return out

    def _legal_shot_card(self, step: Step, seat: int) -> list[Action]:
        if self.LYING:
            out: list[Action] = []
            for h in self.hand(seat):
                acts = card_actions(seat, h)
                out.append(acts.shot)
                out.append(acts.shot_ace)
            return out
        out = []
        need = next_suit(step.n)
        for h in self.hand(seat):
            f = self.face_for(seat, h)
            if f is not None and is_shoot(f) and f.suit == need:
                acts = card_actions(seat, h)
                out.append(acts.shot_ace if f.rank == ACE else acts.shot)
        return out

    def _legal_discard(self, step: Step, seat: int) -> list[Action]:
        out: list[Action] = []
        hand = self.hand(seat)
        wrap = self.options["wrap_straights"]
        pile = self.zones[DRAW]
        for h, f in self._hand_faces(seat):
            acts = card_actions(seat, h)
            out.append(acts.discard)
            if f is not None and (f.rank == QUEEN or (f.rank == KING and pile)):
                out.append(acts.declare)
            if self.LYING:
                out.append(acts.claim)
            else:
                rest = [self.face_for(seat, x) for x in hand if x != h]
                if None not in rest and has_straight_flush(rest, wrap):
                    out.append(acts.claim)
        return out

    def _legal_king(self, step: Step, seat: int) -> list[Action]:
        top = min(self.options["king_max"], len(self.zones[DRAW]))
        return [KingLook(seat, k) for k in range(1, top + 1)]

    def _legal_queen(self, step: Step, seat: int) -> list[Action]:
        reach = self.zones[DISCARD][:QUEEN_REACH]
        return [QueenSwap(seat, g, t) for g in self.hand(seat) for t in reach]

    def _legal_answer(self, step: Step, seat: int) -> list[Action]:
        v = self.volley
        assert v is not None
        last = v.plays[-1]
        hand = self.hand(seat)
        mine = seat_actions(seat)
        out: list[Action] = []
        if v.kind == "jack":
            out.append(mine["concede"])
            for h in hand:
                f = self.face_for(seat, h)
                if f is not None and is_bullet(f):
                    out.append(card_actions(seat, h).answer)
            return out
        first = self._first_answer(v, seat)
        if not self.LYING and first:
            count = self._known_suit_count(seat, v.target)
            if count is not None and count < MISS_LIMIT:
                return [mine["miss"]]
        out.append(mine["concede"])
        if first and self.LYING:
            out.append(mine["miss"])
        if self.LYING and not v.checked:
            out.append(mine["check"])
        if self.LYING:
            for h in hand:
                acts = card_actions(seat, h)
                out.append(acts.answer_ace)
                if not last.ace:
                    out.append(acts.answer)
            return out
        suit = next_suit(last.suit)
        shoot_only = seat != v.defender or not self.options["block_any"]
        for h in hand:
            f = self.face_for(seat, h)
            if f is None or f.suit != suit or (last.ace and f.rank != ACE):
                continue
            if shoot_only and not is_shoot(f):
                continue
            acts = card_actions(seat, h)
            out.append(acts.answer_ace if f.rank == ACE else acts.answer)
        return out

    def _legal_miss_answer(self, step: Step, seat: int) -> list[Action]:
        mine = seat_actions(seat)
        return [mine["check"], mine["pass"]]

    def _legal_check_response(self, step: Step, seat: int) -> list[Action]:
        out: list[Action] = []
        if step.tag == "miss":
            v = self.volley
            assert v is not None
            count = self._known_suit_count(seat, v.target)
            if count is not None:
                out.append(MissVerdict(seat, count < MISS_LIMIT))
        else:
            out.append(seat_actions(seat)["accept"])
        for h in self.hand(seat):
            f = self.face_for(seat, h)
            if f is not None and f.rank == JOKER_RANK:
                out.append(CancelCheck(seat, h))
        return out

    def _legal_give(self, step: Step, seat: int) -> list[Action]:
        return [card_actions(seat, h).give for h in self.hand(seat)]

    def _legal_place(self, step: Step, seat: int) -> list[Action]:
        zone = self.zones[self._place_zones[seat]] if step.kind == "place" else self.hand(seat)
        n = len(self.zones[DRAW]) + 1
        size = len(self.deck) + 1  # the draw pile never holds more than the deck
        out: list[Action] = []
        for h in zone:
            out.extend(place_row(seat, h, size)[:n])
        return out

    _legal_place_hand = _legal_place

    def _legal_swap(self, step: Step, seat: int) -> list[Action]:
        out: list[Action] = [seat_actions(seat)["pass"]]
        out.extend(Swap(seat, h, p) for h in self.hand(seat) for p in step.handles)
        return out

    def _legal_reload(self, step: Step, seat: int) -> list[Action]:
        return self._legal_draws(seat)

    def _legal_give_back(self, step: Step, seat: int) -> list[Action]:
        return [card_actions(seat, h).give_back for h in self.hand(seat)]

    def _legal_win_ask(self, step: Step, seat: int) -> list[Action]:
        mine = seat_actions(seat)
        return [mine["check"], mine["pass"]]


class HonestSlaiga(Slaiga):
    """``honest-slaiga``: face-down draw pile, face-up volleys, proved misses and wins."""

    NAME = "honest-slaiga"
    LYING = False
    OPTIONS = tuple(
        OptionSpec(o.name, o.kind, False, "add two jokers (no use in honest play but jack volleys)")
        if o.name == "jokers"
        else o
        for o in Slaiga.OPTIONS
    )
