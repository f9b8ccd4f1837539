"""Aight of Spaides' rule language: rules are data, never code.

Players create the rules of Aight of Spaides as they play
(docs/rules/aight-of-spaides.md). A rule created by one peer is accepted by every other peer, so a rule
must be something every peer can check and enforce without trusting its
author: a *trigger* paired with an *effect*, both frozen dataclasses drawn
from a fixed catalogue, or a *free-text* rule that the engine only records.

* ``RuleSpec(trigger, effect)`` is what a player submits. ``spec_to_dict`` and
  ``spec_from_dict`` turn it into plain, msgpack-able dicts and back; the
  decoder checks every key, type and range, because the dict comes from an
  untrusted peer.
* ``RuleBook`` holds the numbered rules of one game (base rules #1-#6 first,
  see ``BASE_RULES``). ``RuleBook.validate(spec, standings)`` rejects bad values,
  self-contradicting rules, duplicates, references to missing rules and any
  change that would leave some top card with no card at all playable on it,
  each with a ``BadRule`` that says why. ``RuleBook.add`` applies a valid
  spec (a repeal or an amendment changes the referenced rule and is itself
  recorded as spent).
* ``describe(spec)`` is the generated one-line human description.
* ``MoveRecord`` is the public record of one move and ``RuleBook.improper``
  judges it. Only public facts go into a record (the faces of played cards
  are revealed to everyone), so every peer, and every bot, computes the same
  verdict on an Improper! call.

Triggers and what they mean for each kind of effect are documented on the
classes; ``EFFECT_TRIGGERS`` is the one table of which trigger kinds an effect
accepts. Effects triggered by an event act relative to the event's *actor*:
the seat that Unmaus, draws, is penalised, or whose turn starts.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from engine.cards import RANKS, SUIT_SYMBOLS, SUITS, Card
from engine.codec import brief
from engine.errors import EngineError

# ---- limits (named so that validation and docs agree) --------------------------

MAX_DRAW_NEXT = 10
MAX_UNMAU_COUNT = 20
MAX_PENALTY = 10
MAX_WIN_K = 20
MAX_WORDS_LEN = 40
MAX_FREE_TEXT_LEN = 200
MAX_RULES = 200  # a game record stays bounded however long the game runs
MAX_ANNOUNCEMENTS = 8  # words one action may carry; no move may require more

UNMAU_WORDS = "Unmau"
AIGHT_WORDS = "Aight of Spaides"
EIGHT_OF_SPADES = Card(8, 3)

EVENTS = ("unmau", "draw", "penalty", "turn_start")
COLOURS = ("red", "black")
RED_SUITS = frozenset({1, 2})  # ♦ ♥
WIN_CONDITIONS = ("unmaus", "empty_no_pending", "rules_created")

ALL_FACES = tuple(Card(r, s) for s in SUITS for r in RANKS)


class BadRule(EngineError, ValueError):
    """A rule that is malformed, out of range, contradictory or unplayable."""


def _rank_name(rank: int) -> str:
    return {11: "J", 12: "Q", 13: "K", 14: "A"}.get(rank, str(rank))


def _check_int(name: str, value: Any, lo: int, hi: int) -> None:
    if type(value) is not int:
        raise BadRule(f"{name} must be an integer, got {brief(value)}")
    if not lo <= value <= hi:
        raise BadRule(f"{name} must be in {lo}..{hi}, got {brief(value)}")


def _check_text(name: str, value: Any, limit: int) -> None:
    if type(value) is not str:
        raise BadRule(f"{name} must be a string, got {brief(value)}")
    if not value or value != value.strip():
        raise BadRule(f"{name} must be non-empty without surrounding spaces, got {brief(value)}")
    if len(value) > limit:
        raise BadRule(f"{name} is {len(value)} characters; the limit is {limit}")
    if not value.isprintable():
        raise BadRule(f"{name} contains unprintable characters: {brief(value)}")


# ---- triggers -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Trigger:
    """Base class. ``KIND`` names the trigger in the wire form."""

    KIND: ClassVar[str] = ""
    CARD: ClassVar[bool] = False  # a card pattern: fires when a matching card is played

    def check(self) -> None:
        """Raise ``BadRule`` if a field is out of range."""

    def matches(self, card: Card) -> bool:
        return False


@dataclass(frozen=True, slots=True)
class Always(Trigger):
    """No trigger: the effect is a standing rule (matching, counts, win, repeal...)."""

    KIND: ClassVar[str] = "always"

    def __str__(self) -> str:
        return "always"


@dataclass(frozen=True, slots=True)
class AnyCard(Trigger):
    """Any card."""

    KIND: ClassVar[str] = "any"
    CARD: ClassVar[bool] = True

    def matches(self, card: Card) -> bool:
        return True

    def __str__(self) -> str:
        return "any card"


@dataclass(frozen=True, slots=True)
class OnCard(Trigger):
    """One specific face (both copies of it)."""

    KIND: ClassVar[str] = "card"
    CARD: ClassVar[bool] = True
    rank: int
    suit: int

    def check(self) -> None:
        _check_int("card rank", self.rank, RANKS[0], RANKS[-1])
        _check_int("card suit", self.suit, SUITS[0], SUITS[-1])

    def matches(self, card: Card) -> bool:
        return card.rank == self.rank and card.suit == self.suit

    def __str__(self) -> str:
        return f"the {_rank_name(self.rank)}{SUIT_SYMBOLS[self.suit]}"


@dataclass(frozen=True, slots=True)
class OnRank(Trigger):
    """Every card of one rank."""

    KIND: ClassVar[str] = "rank"
    CARD: ClassVar[bool] = True
    rank: int

    def check(self) -> None:
        _check_int("rank", self.rank, RANKS[0], RANKS[-1])

    def matches(self, card: Card) -> bool:
        return card.rank == self.rank

    def __str__(self) -> str:
        return f"a {_rank_name(self.rank)}"


@dataclass(frozen=True, slots=True)
class OnSuit(Trigger):
    """Every card of one suit."""

    KIND: ClassVar[str] = "suit"
    CARD: ClassVar[bool] = True
    suit: int

    def check(self) -> None:
        _check_int("suit", self.suit, SUITS[0], SUITS[-1])

    def matches(self, card: Card) -> bool:
        return card.suit == self.suit

    def __str__(self) -> str:
        return f"a {SUIT_SYMBOLS[self.suit]} card"


@dataclass(frozen=True, slots=True)
class OnColour(Trigger):
    """Every red (♦ ♥) or every black (♣ ♠) card."""

    KIND: ClassVar[str] = "colour"
    CARD: ClassVar[bool] = True
    colour: str

    def check(self) -> None:
        if self.colour not in COLOURS:
            raise BadRule(f"colour must be one of {', '.join(COLOURS)}, got {brief(self.colour)}")

    def matches(self, card: Card) -> bool:
        return (card.suit in RED_SUITS) == (self.colour == "red")

    def __str__(self) -> str:
        return f"a {self.colour} card"


@dataclass(frozen=True, slots=True)
class OnEvent(Trigger):
    """An event: ``unmau`` (a seat empties its hand by a standing play), ``draw``
    (the Draw action; forced draws are not events, so rules cannot cascade),
    ``penalty`` (a seat draws a penalty after an Improper! call) or
    ``turn_start`` (a seat's turn begins)."""

    KIND: ClassVar[str] = "event"
    event: str

    def check(self) -> None:
        if self.event not in EVENTS:
            raise BadRule(f"event must be one of {', '.join(EVENTS)}, got {brief(self.event)}")

    def __str__(self) -> str:
        return {
            "unmau": "a seat Unmaus",
            "draw": "a seat draws",
            "penalty": "a seat is penalised",
            "turn_start": "a turn starts",
        }[self.event]


TRIGGERS: dict[str, type[Trigger]] = {
    c.KIND: c for c in (Always, AnyCard, OnCard, OnRank, OnSuit, OnColour, OnEvent)
}


# ---- effects ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Effect:
    """Base class. ``KIND`` names the effect in the wire form."""

    KIND: ClassVar[str] = ""

    def check(self) -> None:
        """Raise ``BadRule`` if a field is out of range."""


@dataclass(frozen=True, slots=True)
class MatchRankOrSuit(Effect):
    """Base rule #1: a card may be played on one of the same rank or suit."""

    KIND: ClassVar[str] = "match"


@dataclass(frozen=True, slots=True)
class SkipNext(Effect):
    """The next seat (after the actor, in the current direction) loses its turn."""

    KIND: ClassVar[str] = "skip"


@dataclass(frozen=True, slots=True)
class Reverse(Effect):
    """The direction of play reverses."""

    KIND: ClassVar[str] = "reverse"


@dataclass(frozen=True, slots=True)
class DrawNext(Effect):
    """The next seat draws ``n``. With ``stacking`` (card triggers only) the draw
    waits for the next turn, whose seat may pass it on, increased, by playing
    another stacking card, or must draw the whole stack."""

    KIND: ClassVar[str] = "draw_next"
    n: int
    stacking: bool = False

    def check(self) -> None:
        _check_int("draw count", self.n, 1, MAX_DRAW_NEXT)
        if type(self.stacking) is not bool:
            raise BadRule(f"stacking must be true or false, got {brief(self.stacking)}")


@dataclass(frozen=True, slots=True)
class PlayAgain(Effect):
    """The actor takes another turn at once."""

    KIND: ClassVar[str] = "play_again"


@dataclass(frozen=True, slots=True)
class Wild(Effect):
    """The card may be played on any card; its player names the suit to follow."""

    KIND: ClassVar[str] = "wild"


@dataclass(frozen=True, slots=True)
class Announce(Effect):
    """The move must include the announcement ``words``, exactly."""

    KIND: ClassVar[str] = "announce"
    words: str

    def check(self) -> None:
        _check_text("announcement", self.words, MAX_WORDS_LEN)


@dataclass(frozen=True, slots=True)
class AllowOn(Effect):
    """Extra matching condition: the trigger's cards may also be played on a top
    card matching ``target``."""

    KIND: ClassVar[str] = "allow_on"
    target: Trigger

    def check(self) -> None:
        _check_card_pattern("target", self.target)


@dataclass(frozen=True, slots=True)
class ForbidOn(Effect):
    """Forbidden matching: the trigger's cards may not be played on a top card
    matching ``target`` (forbidding beats every allowance)."""

    KIND: ClassVar[str] = "forbid_on"
    target: Trigger

    def check(self) -> None:
        _check_card_pattern("target", self.target)


@dataclass(frozen=True, slots=True)
class SetUnmauCount(Effect):
    """Unmau picks up ``n`` cards (the newest active rule of this kind counts)."""

    KIND: ClassVar[str] = "unmau_count"
    n: int

    def check(self) -> None:
        _check_int("Unmau pick-up count", self.n, 0, MAX_UNMAU_COUNT)


@dataclass(frozen=True, slots=True)
class SetPenalty(Effect):
    """An Improper! penalty is ``n`` cards (the newest active rule counts)."""

    KIND: ClassVar[str] = "penalty"
    n: int

    def check(self) -> None:
        _check_int("penalty size", self.n, 0, MAX_PENALTY)


@dataclass(frozen=True, slots=True)
class WinCondition(Effect):
    """A way to win: ``unmaus`` (first to Unmau ``k`` times), ``empty_no_pending``
    (first to empty the hand while holding no pending rule; ``k`` must be 1) or
    ``rules_created`` (first to have created ``k`` rules)."""

    KIND: ClassVar[str] = "win"
    condition: str
    k: int = 1

    def check(self) -> None:
        if self.condition not in WIN_CONDITIONS:
            raise BadRule(
                f"win condition must be one of {', '.join(WIN_CONDITIONS)}, got {brief(self.condition)}"
            )
        _check_int("win count k", self.k, 1, MAX_WIN_K)
        if self.condition == "empty_no_pending" and self.k != 1:
            raise BadRule("win condition empty_no_pending takes no count (k must be 1)")


@dataclass(frozen=True, slots=True)
class CreateRule(Effect):
    """The move must create a new rule (base rule #3 gives this to the 8♠)."""

    KIND: ClassVar[str] = "create_rule"


@dataclass(frozen=True, slots=True)
class Repeal(Effect):
    """Rule ``number`` stops applying."""

    KIND: ClassVar[str] = "repeal"
    number: int

    def check(self) -> None:
        _check_int("rule number", self.number, 1, MAX_RULES)


@dataclass(frozen=True, slots=True)
class Amend(Effect):
    """Rule ``number`` is replaced by ``spec`` (it keeps its number)."""

    KIND: ClassVar[str] = "amend"
    number: int
    spec: RuleSpec

    def check(self) -> None:
        _check_int("rule number", self.number, 1, MAX_RULES)
        if not isinstance(self.spec, RuleSpec):
            raise BadRule(f"an amendment needs a rule, got {brief(self.spec)}")
        self.spec.check()
        if isinstance(self.spec.effect, Repeal | Amend):
            raise BadRule("an amendment cannot itself repeal or amend a rule")


@dataclass(frozen=True, slots=True)
class FreeText(Effect):
    """A rule in words. Recorded and shown; Improper! calls citing it are voted on."""

    KIND: ClassVar[str] = "free_text"
    text: str

    def check(self) -> None:
        _check_text("free text", self.text, MAX_FREE_TEXT_LEN)


EFFECTS: dict[str, type[Effect]] = {
    c.KIND: c
    for c in (
        MatchRankOrSuit,
        SkipNext,
        Reverse,
        DrawNext,
        PlayAgain,
        Wild,
        Announce,
        AllowOn,
        ForbidOn,
        SetUnmauCount,
        SetPenalty,
        WinCondition,
        CreateRule,
        Repeal,
        Amend,
        FreeText,
    )
}

# Which triggers each effect accepts: "card" = any card pattern, event names,
# "always". One table, so that validation and documentation agree.
_CARD = ("card",)
EFFECT_TRIGGERS: dict[str, tuple[str, ...]] = {
    "match": ("always",),
    "skip": _CARD + EVENTS,
    "reverse": _CARD + EVENTS,
    "draw_next": _CARD + EVENTS,
    "play_again": _CARD + ("unmau",),  # on draw/turn start/penalty it would never end
    "wild": _CARD,
    "announce": _CARD + ("unmau", "draw"),  # only moves carry announcements
    "allow_on": _CARD,
    "forbid_on": _CARD,
    "unmau_count": ("always",),
    "penalty": ("always",),
    "win": ("always",),
    "create_rule": _CARD + ("unmau",),
    "repeal": ("always",),
    "amend": ("always",),
    "free_text": ("always",),
}


def _check_card_pattern(name: str, t: Any) -> None:
    if not isinstance(t, Trigger) or not t.CARD:
        raise BadRule(
            f"{name} must be a card pattern (any, card, rank, suit, colour), got {brief(t)}"
        )
    t.check()


@dataclass(frozen=True, slots=True)
class RuleSpec:
    """A rule as submitted: a trigger and an effect."""

    trigger: Trigger
    effect: Effect

    def check(self) -> None:
        """Check the spec on its own (no rule book): types, ranges, trigger fit."""
        if not isinstance(self.trigger, Trigger) or type(self.trigger) is Trigger:
            raise BadRule(f"not a trigger: {brief(self.trigger)}")
        if not isinstance(self.effect, Effect) or type(self.effect) is Effect:
            raise BadRule(f"not an effect: {brief(self.effect)}")
        self.trigger.check()
        self.effect.check()
        allowed = EFFECT_TRIGGERS[self.effect.KIND]
        t = self.trigger
        ok = (
            ("card" in allowed and t.CARD)
            or ("always" in allowed and isinstance(t, Always))
            or (isinstance(t, OnEvent) and t.event in allowed)
        )
        if not ok:
            raise BadRule(
                f"effect {self.effect.KIND} cannot be triggered by {t}; "
                f"it takes: {', '.join(allowed)}"
            )
        if isinstance(self.effect, DrawNext) and self.effect.stacking and not t.CARD:
            raise BadRule("only a card can start a stackable draw")


@dataclass(frozen=True, slots=True)
class Rule:
    """A numbered rule. ``author`` is ``None`` for base rules. ``status`` is
    ``active``, ``repealed`` or ``spent`` (a repeal or amendment that has taken
    effect). ``amended_by`` lists the rules that amended it."""

    number: int
    spec: RuleSpec
    author: int | None
    status: str = "active"
    amended_by: tuple[int, ...] = ()

    @property
    def active(self) -> bool:
        return self.status == "active"

    def describe(self) -> str:
        note = {"active": "", "repealed": " [repealed]", "spent": " [done]"}[self.status]
        amended = (
            f" [amended by #{', #'.join(map(str, self.amended_by))}]" if self.amended_by else ""
        )
        return f"#{self.number}: {describe(self.spec)}{note}{amended}"


# ---- descriptions -------------------------------------------------------------


def describe_effect(effect: Effect) -> str:
    e = effect
    if isinstance(e, MatchRankOrSuit):
        return "a card may be played on one of the same rank or suit"
    if isinstance(e, SkipNext):
        return "the next seat is skipped"
    if isinstance(e, Reverse):
        return "the direction of play reverses"
    if isinstance(e, DrawNext):
        return f"the next seat draws {e.n}" + (" (stackable)" if e.stacking else "")
    if isinstance(e, PlayAgain):
        return "the same seat plays again"
    if isinstance(e, Wild):
        return "it is wild: playable on anything, and its player names the suit"
    if isinstance(e, Announce):
        return f"the player must announce “{e.words}”"
    if isinstance(e, AllowOn):
        return f"it may also be played on {e.target}"
    if isinstance(e, ForbidOn):
        return f"it may not be played on {e.target}"
    if isinstance(e, SetUnmauCount):
        return f"Unmau picks up {e.n} card{'s' if e.n != 1 else ''}"
    if isinstance(e, SetPenalty):
        return f"an Improper! penalty is {e.n} card{'s' if e.n != 1 else ''}"
    if isinstance(e, WinCondition):
        return {
            "unmaus": f"the first seat to Unmau {e.k} time{'s' if e.k != 1 else ''} wins",
            "empty_no_pending": "the first seat to empty its hand holding no pending rule wins",
            "rules_created": f"the first seat to create {e.k} rule{'s' if e.k != 1 else ''} wins",
        }[e.condition]
    if isinstance(e, CreateRule):
        return "the player creates a new rule"
    if isinstance(e, Repeal):
        return f"rule #{e.number} is repealed"
    if isinstance(e, Amend):
        return f"rule #{e.number} now reads: {describe(e.spec)[:-1]}"
    if isinstance(e, FreeText):
        return f"(free text) {e.text}"
    raise BadRule(f"unknown effect {brief(e)}")


def describe(spec: RuleSpec) -> str:
    """A one-line human description generated from the rule's data."""
    body = describe_effect(spec.effect)
    t = spec.trigger
    if isinstance(t, Always):
        return body[0].upper() + body[1:] + "."
    if t.CARD:
        return f"When {t} is played, {body}."
    return f"When {t}, {body}."


# ---- wire form ----------------------------------------------------------------


def _part_to_dict(obj: Trigger | Effect) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": obj.KIND}
    for f in dataclasses.fields(obj):
        v = getattr(obj, f.name)
        if isinstance(v, Trigger):
            v = _part_to_dict(v)
        elif isinstance(v, RuleSpec):
            v = spec_to_dict(v)
        out[f.name] = v
    return out


def spec_to_dict(spec: RuleSpec) -> dict[str, Any]:
    """Plain dict form (str keys, ints, bools, strings), msgpack-able."""
    return {"trigger": _part_to_dict(spec.trigger), "effect": _part_to_dict(spec.effect)}


_NESTED_TRIGGER = {"target"}
_NESTED_SPEC = {"spec"}
_DEPTH_LIMIT = 3


def _part_from_dict(data: Any, table: Mapping[str, type], what: str, depth: int) -> Any:
    if not isinstance(data, Mapping):
        raise BadRule(f"{what} must be a map, got {type(data).__name__}")
    kind = data.get("kind")
    if not isinstance(kind, str) or kind not in table:
        raise BadRule(f"unknown {what} kind {brief(kind)}; known: {', '.join(table)}")
    cls = table[kind]
    names = [f.name for f in dataclasses.fields(cls)]
    keys = set(data) - {"kind"}
    if not all(isinstance(k, str) for k in data):
        raise BadRule(f"{what} {kind}: keys must be strings")
    required = {
        f.name
        for f in dataclasses.fields(cls)
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    }
    if not required <= keys <= set(names):
        raise BadRule(f"{what} {kind}: fields {sorted(map(brief, keys))}; expected {sorted(names)}")
    values = {}
    for k in keys:
        v = data[k]
        if k in _NESTED_TRIGGER:
            v = _part_from_dict(v, TRIGGERS, "target", depth)
        elif k in _NESTED_SPEC:
            if depth >= _DEPTH_LIMIT:
                raise BadRule("rule nested too deeply")
            v = spec_from_dict(v, depth + 1)
        elif not isinstance(v, bool | int | str):
            raise BadRule(f"{what} {kind}: field {k} has bad type {type(v).__name__}")
        values[k] = v
    obj = cls(**values)
    obj.check()
    return obj


def spec_from_dict(data: Any, depth: int = 0) -> RuleSpec:
    """Decode and check a rule from untrusted plain data; raise ``BadRule``."""
    if not isinstance(data, Mapping) or set(data) != {"trigger", "effect"}:
        raise BadRule(f"a rule must be a map with exactly trigger and effect, got {brief(data)}")
    trigger = _part_from_dict(data["trigger"], TRIGGERS, "trigger", depth)
    effect = _part_from_dict(data["effect"], EFFECTS, "effect", depth)
    spec = RuleSpec(trigger, effect)
    spec.check()
    return spec


# ---- the public record of a move ------------------------------------------------


@dataclass(frozen=True, slots=True)
class MoveRecord:
    """What everybody saw of one move, enough to judge an Improper! call.

    ``kind`` is ``play`` (a card from the hand), ``draw`` (drew and kept) or
    ``draw_play`` (drew and played the drawn card). ``top`` and ``named_suit``
    are the pile's top and the suit named on it before the move, ``stack`` the
    stackable draw pending on the mover; ``emptied`` says the play left the hand
    empty.
    """

    seat: int
    kind: str
    card: Card | None
    top: Card
    named_suit: int | None
    words: tuple[str, ...]
    suit: int | None
    has_rule: bool
    emptied: bool
    stack: int


# ---- the rule book ------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Standings:
    """Each seat's Unmaus and created rules: a new win condition must not be met already."""

    unmaus: tuple[int, ...] = ()
    rules_created: tuple[int, ...] = ()


def _base_specs() -> tuple[RuleSpec, ...]:
    eight = OnCard(8, 3)
    return (
        RuleSpec(Always(), MatchRankOrSuit()),
        RuleSpec(eight, Announce(AIGHT_WORDS)),
        RuleSpec(eight, CreateRule()),
        RuleSpec(OnEvent("unmau"), Announce(UNMAU_WORDS)),
        RuleSpec(Always(), SetUnmauCount(5)),
        RuleSpec(Always(), SetPenalty(1)),
    )


BASE_RULES: tuple[RuleSpec, ...] = _base_specs()

# Only these effects can take away a playable card (the dead-top check is skipped
# for the rest, which can only add moves or do not touch matching).
_MAY_NARROW = (ForbidOn, Repeal, Amend)


class _Compiled:
    """Lookup tables of the active rules, built once per rule-book version."""

    __slots__ = (
        "match",
        "allow",
        "forbid",
        "wild",
        "by_face",
        "by_event",
        "unmau_count",
        "penalty",
        "wins",
        "free_text",
        "_memo",
    )

    def __init__(self, rules: Iterable[Rule]) -> None:
        self.match = False
        self.allow: list[tuple[Trigger, Trigger]] = []
        self.forbid: list[tuple[Trigger, Trigger]] = []
        by_face: dict[Card, list[tuple[int, Effect]]] = {f: [] for f in ALL_FACES}
        by_event: dict[str, list[tuple[int, Effect]]] = {e: [] for e in EVENTS}
        self.unmau_count = 0
        self.penalty = 0
        self.wins: list[tuple[int, WinCondition]] = []
        self.free_text: list[int] = []
        for r in rules:
            if not r.active:
                continue
            t, e = r.spec.trigger, r.spec.effect
            if isinstance(e, MatchRankOrSuit):
                self.match = True
            elif isinstance(e, AllowOn):
                self.allow.append((t, e.target))
            elif isinstance(e, ForbidOn):
                self.forbid.append((t, e.target))
            elif isinstance(e, SetUnmauCount):
                self.unmau_count = e.n  # rules are in number order: newest wins
            elif isinstance(e, SetPenalty):
                self.penalty = e.n
            elif isinstance(e, WinCondition):
                self.wins.append((r.number, e))
            elif isinstance(e, FreeText):
                self.free_text.append(r.number)
            elif t.CARD:
                for f in ALL_FACES:
                    if t.matches(f):
                        by_face[f].append((r.number, e))
            elif isinstance(t, OnEvent):
                by_event[t.event].append((r.number, e))
        self.by_face = {f: tuple(v) for f, v in by_face.items()}
        self.by_event = {k: tuple(v) for k, v in by_event.items()}
        self.wild = frozenset(
            f for f, effs in self.by_face.items() if any(isinstance(e, Wild) for _, e in effs)
        )
        self._memo: dict[tuple[Card, Card, int | None], bool] = {}

    def can_play(self, card: Card, top: Card, named_suit: int | None) -> bool:
        key = (card, top, named_suit)
        hit = self._memo.get(key)
        if hit is not None:
            return hit
        suit = top.suit if named_suit is None else named_suit
        ok = (
            (self.match and (card.rank == top.rank or card.suit == suit))
            or card in self.wild
            or any(t.matches(card) and target.matches(top) for t, target in self.allow)
        ) and not any(t.matches(card) and target.matches(top) for t, target in self.forbid)
        self._memo[key] = ok
        return ok

    def most_words(self) -> tuple[int, str]:
        """The most distinct announcements one move can require, and which move:
        a play (its card's rules plus Unmau's) or a draw (a drawn card played at
        once carries the draw's words in the Draw and the rest in PlayDrawn)."""
        unmau = {e.words for _, e in self.by_event["unmau"] if isinstance(e, Announce)}
        most = len({e.words for _, e in self.by_event["draw"] if isinstance(e, Announce)})
        what = "a draw"
        for f, effs in self.by_face.items():
            n = len(unmau | {e.words for _, e in effs if isinstance(e, Announce)})
            if n > most:
                most, what = n, f"playing the last card {f}"
        return most, what

    def dead_top(self) -> tuple[Card, int | None] | None:
        """A top card (with a named suit, if wild) on which nothing may be played."""
        named: tuple[int | None, ...] = (None,)
        for top in ALL_FACES:
            named = (None, *SUITS) if top in self.wild else (None,)
            for ns in named:
                if not any(self.can_play(c, top, ns) for c in ALL_FACES):
                    return top, ns
        return None


class RuleBook:
    """The numbered rules of one game. Immutable: changes return a new book."""

    __slots__ = ("rules", "_compiled", "_verdicts", "_lines")

    def __init__(self, rules: tuple[Rule, ...] | None = None) -> None:
        if rules is None:
            rules = tuple(Rule(i + 1, s, None) for i, s in enumerate(BASE_RULES))
        self.rules = rules
        self._compiled: _Compiled | None = None
        # validate() memo: the book never changes, so a verdict on a spec holds
        self._verdicts: dict[Any, str | None] = {}
        self._lines: tuple[str, ...] | None = None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RuleBook) and other.rules == self.rules

    def __hash__(self) -> int:
        return hash(self.rules)

    def __repr__(self) -> str:
        return f"RuleBook({len(self.rules)} rules)"

    @property
    def compiled(self) -> _Compiled:
        if self._compiled is None:
            self._compiled = _Compiled(self.rules)
        return self._compiled

    def get(self, number: int) -> Rule:
        if not 1 <= number <= len(self.rules):
            raise BadRule(f"there is no rule #{brief(number)} (rules are #1-#{len(self.rules)})")
        return self.rules[number - 1]

    def active(self) -> tuple[Rule, ...]:
        return tuple(r for r in self.rules if r.active)

    def lines(self) -> tuple[str, ...]:
        """Every rule's number, description and status, one line each."""
        if self._lines is None:
            self._lines = tuple(r.describe() for r in self.rules)
        return self._lines

    # ---- validation -----------------------------------------------------------------

    def validate(self, spec: Any, standings: Standings | None = None) -> None:
        """Raise ``BadRule`` (saying why) unless ``spec`` may be added now."""
        if not isinstance(spec, RuleSpec):
            raise BadRule(f"not a rule: {brief(spec)}")
        # The type-strict check runs before the memo: dataclass equality says
        # DrawNext(True) == DrawNext(1), so only specs whose fields have their
        # exact types may share a verdict.
        spec.check()
        key = (spec, standings if isinstance(spec.effect, WinCondition) else None)
        try:
            verdict = self._verdicts.get(key, False)
        except TypeError:  # unhashable junk inside a spec: validate without memo
            self._validate(spec, standings)
            return
        if verdict is False:
            try:
                self._validate(spec, standings)
                verdict = None
            except BadRule as exc:
                verdict = str(exc)
            self._verdicts[key] = verdict
        if verdict is not None:
            raise BadRule(verdict)

    def _validate(self, spec: RuleSpec, standings: Standings | None) -> None:
        if not isinstance(spec, RuleSpec):
            raise BadRule(f"not a rule: {brief(spec)}")
        spec.check()
        if len(self.rules) >= MAX_RULES:
            raise BadRule(f"the rule book is full ({MAX_RULES} rules)")
        e = spec.effect
        if isinstance(e, Repeal | Amend):
            target = self.get(e.number)
            if isinstance(target.spec.effect, Repeal | Amend):
                raise BadRule(f"rule #{e.number} has already taken effect; it cannot change")
            if not target.active:
                raise BadRule(f"rule #{e.number} is {target.status}, not active")
            if isinstance(e, Amend):
                if e.spec == target.spec:
                    raise BadRule(f"the amendment leaves rule #{e.number} as it is")
                self._check_new(e.spec, standings, replacing=e.number)
            new_rules = self._changed(spec, 0)
        else:
            self._check_new(spec, standings, replacing=None)
            new_rules = self.rules + (Rule(len(self.rules) + 1, spec, 0),)
        if isinstance(e, Announce) or (
            isinstance(e, Amend) and isinstance(e.spec.effect, Announce)
        ):
            most, what = _Compiled(new_rules).most_words()
            if most > MAX_ANNOUNCEMENTS:
                raise BadRule(
                    f"this rule would make {what} require {most} announcements; "
                    f"a move carries at most {MAX_ANNOUNCEMENTS}"
                )
        if not isinstance(e, _MAY_NARROW):
            return
        dead = _Compiled(new_rules).dead_top()
        if dead is not None:
            top, ns = dead
            on = f"{top}" + (f" named {SUIT_SYMBOLS[ns]}" if ns is not None else "")
            raise BadRule(f"this rule would make every play illegal on {on}")

    def _check_new(
        self, spec: RuleSpec, standings: Standings | None, replacing: int | None
    ) -> None:
        for r in self.rules:
            if not r.active or r.number == replacing:
                continue
            if r.spec == spec:
                raise BadRule(f"this rule duplicates rule #{r.number}")
            if r.spec.trigger == spec.trigger:
                a, b = r.spec.effect, spec.effect
                pair = {type(a), type(b)}
                if pair == {AllowOn, ForbidOn} and a.target == b.target:  # type: ignore[attr-defined]
                    raise BadRule(
                        f"this rule contradicts rule #{r.number} ({describe(r.spec)}); "
                        f"repeal or amend that rule instead"
                    )
        e = spec.effect
        if isinstance(e, WinCondition) and standings is not None:
            counts = {"unmaus": standings.unmaus, "rules_created": standings.rules_created}.get(
                e.condition, ()
            )
            # a new rule counts for its author, so "created k" must exceed every
            # seat's count plus the rule being created now
            extra = 1 if e.condition == "rules_created" else 0
            for seat, c in enumerate(counts):
                if c + extra >= e.k:
                    raise BadRule(f"seat {seat} has already met this win condition ({c})")

    def _changed(self, spec: RuleSpec, author: int | None) -> tuple[Rule, ...]:
        number = len(self.rules) + 1
        rules = list(self.rules)
        e = spec.effect
        if isinstance(e, Repeal):
            rules[e.number - 1] = dataclasses.replace(rules[e.number - 1], status="repealed")
        elif isinstance(e, Amend):
            old = rules[e.number - 1]
            rules[e.number - 1] = dataclasses.replace(
                old, spec=e.spec, amended_by=old.amended_by + (number,)
            )
        status = "spent" if isinstance(e, Repeal | Amend) else "active"
        rules.append(Rule(number, spec, author, status))
        return tuple(rules)

    def add(
        self, spec: RuleSpec, author: int | None, standings: Standings | None = None
    ) -> tuple[RuleBook, Rule]:
        """Validate and add ``spec``; return the new book and the new rule."""
        self.validate(spec, standings)
        rules = self._changed(spec, author)
        return RuleBook(rules), rules[-1]

    # ---- queries used by the game -------------------------------------------------

    def can_play(self, card: Card, top: Card, named_suit: int | None) -> bool:
        return self.compiled.can_play(card, top, named_suit)

    def card_effects(self, card: Card) -> tuple[tuple[int, Effect], ...]:
        return self.compiled.by_face[card]

    def event_effects(self, event: str) -> tuple[tuple[int, Effect], ...]:
        return self.compiled.by_event[event]

    def unmau_count(self) -> int:
        return self.compiled.unmau_count

    def penalty(self) -> int:
        return self.compiled.penalty

    def wins(self) -> tuple[tuple[int, WinCondition], ...]:
        return tuple(self.compiled.wins)

    def is_free_text(self, number: int) -> bool:
        return number in self.compiled.free_text

    def free_text_numbers(self) -> tuple[int, ...]:
        return tuple(self.compiled.free_text)

    def stacks(self, card: Card) -> bool:
        return any(isinstance(e, DrawNext) and e.stacking for _, e in self.card_effects(card))

    @property
    def full(self) -> bool:
        """No rule can be added (``MAX_RULES``); a rule-creating card then creates none."""
        return len(self.rules) >= MAX_RULES

    def creates_rule(self, card: Card, emptied: bool) -> bool:
        """Whether playing ``card`` must create a rule. Once the book is full no
        rule can be created, so the duty lapses rather than making the card
        unplayable without an Improper!."""
        if len(self.rules) >= MAX_RULES:
            return False
        effs = self.card_effects(card) + (self.event_effects("unmau") if emptied else ())
        return any(isinstance(e, CreateRule) for _, e in effs)

    def required_words(self, kind: str, card: Card | None, emptied: bool) -> tuple[str, ...]:
        """The announcements a move must carry, in rule order, without repeats."""
        effs: tuple[tuple[int, Effect], ...] = ()
        if card is not None and kind != "draw":
            effs += self.card_effects(card)
            if emptied:
                effs += self.event_effects("unmau")
        if kind in ("draw", "draw_play"):
            effs += self.event_effects("draw")
        out: list[str] = []
        for _, e in sorted(effs, key=lambda x: x[0]):
            if isinstance(e, Announce) and e.words not in out:
                out.append(e.words)
        return tuple(out)

    def improper(self, move: MoveRecord) -> tuple[str, ...]:
        """Why ``move`` is improper under the structured rules (empty: proper)."""
        reasons: list[str] = []
        card = move.card
        if card is not None and move.kind != "draw":
            if move.stack and not self.stacks(card):
                reasons.append(f"{card} does not stack on the {move.stack} pending cards")
            if not self.can_play(card, move.top, move.named_suit):
                named = (
                    f" (named {SUIT_SYMBOLS[move.named_suit]})"
                    if move.named_suit is not None
                    else ""
                )
                reasons.append(f"{card} may not be played on {move.top}{named}")
            if card in self.compiled.wild and move.suit is None:
                reasons.append(f"{card} is wild but no suit was named")
            if self.creates_rule(card, move.emptied) and not move.has_rule:
                reasons.append(f"{card} requires creating a rule, and none was created")
        for words in self.required_words(move.kind, card, move.emptied):
            if words not in move.words:
                reasons.append(f"missing announcement “{words}”")
        return tuple(reasons)


# ---- a catalogue of sensible rules (for bots and for the legal-action list) --------


def catalogue() -> tuple[RuleSpec, ...]:
    """Sensible rules a player might create, in a fixed order."""
    out: list[RuleSpec] = [
        RuleSpec(OnRank(7), DrawNext(2, stacking=True)),
        RuleSpec(OnRank(11), SkipNext()),
        RuleSpec(OnRank(12), Reverse()),
        RuleSpec(OnRank(14), Wild()),
        RuleSpec(OnRank(13), PlayAgain()),
        RuleSpec(OnCard(2, 2), DrawNext(4)),
        RuleSpec(OnRank(10), Announce("Ten-ten")),
        RuleSpec(OnColour("red"), AllowOn(OnColour("red"))),
        RuleSpec(OnRank(9), ForbidOn(OnSuit(2))),
        RuleSpec(OnEvent("unmau"), SkipNext()),
        RuleSpec(OnEvent("draw"), Announce("Spaides")),
        RuleSpec(OnEvent("penalty"), Reverse()),
        RuleSpec(OnEvent("turn_start"), DrawNext(1)),
        RuleSpec(OnCard(5, 1), CreateRule()),
        RuleSpec(Always(), SetUnmauCount(3)),
        RuleSpec(Always(), SetPenalty(2)),
        RuleSpec(Always(), WinCondition("unmaus", 2)),
        RuleSpec(Always(), WinCondition("empty_no_pending")),
        RuleSpec(Always(), WinCondition("rules_created", 4)),
        RuleSpec(Always(), FreeText("No talking while a 3 is on top")),
    ]
    return tuple(out)
