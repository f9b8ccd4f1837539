"""Making a rule in Aight of Spaides: a short typed form, and a step-by-step builder.

A rule is a trigger and an effect (``engine.games.aight.rulebook``). People make one in
three steps: *when* (a card, a rank, a suit, a colour, an event, or always),
*then* (the effects that trigger allows) and the effect's details (how many
cards, which words, which rule to repeal...). Before confirming they read the
rule's generated description, and a rule the rule book would refuse is shown
with the reason instead. A rule may also be written in free text.

The typed form (``format_rule``/``parse_rule`` round-trip every rule)::

    rank 7: draw 2 stacking        Qh: skip          suit hearts: say "Hearts!"
    red: allow on black            unmau: again      always: win unmaus 3
    penalty 2                      repeal 8          amend 8 to rank 9: reverse
    "No talking while a 3 is on top"                 (free text)

The trigger may be left out for rules that are always on (``penalty 2``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from engine.cards import RANKS, SUIT_NAMES, SUIT_SYMBOLS, Card
from engine.games.aight.rulebook import (
    EFFECT_TRIGGERS,
    EVENTS,
    MAX_DRAW_NEXT,
    MAX_PENALTY,
    MAX_UNMAU_COUNT,
    MAX_WIN_K,
    AllowOn,
    Always,
    Amend,
    Announce,
    AnyCard,
    BadRule,
    CreateRule,
    DrawNext,
    ForbidOn,
    FreeText,
    MatchRankOrSuit,
    OnCard,
    OnColour,
    OnEvent,
    OnRank,
    OnSuit,
    PlayAgain,
    Repeal,
    Reverse,
    RuleBook,
    RuleSpec,
    SetPenalty,
    SetUnmauCount,
    SkipNext,
    Standings,
    Trigger,
    Wild,
    WinCondition,
    describe,
)
from engine.words.menus import Ask, Choice, MoveError, Node, Number, Option, Plan, choose
from engine.words.tokens import (
    card_word,
    maybe_card,
    parse_rank,
    parse_suit,
    quoted,
    rank_word,
    tokens,
    unquote,
)

EVENT_WORDS = {"unmau": "unmau", "draw": "draw", "penalty": "penalty", "turn_start": "turn"}
WORD_EVENTS = {v: k for k, v in EVENT_WORDS.items()}
WIN_WORDS = {"unmaus": "unmaus", "empty_no_pending": "empty", "rules_created": "rules"}
WORD_WINS = {v: k for k, v in WIN_WORDS.items()}
EVENT_LABELS = {
    "unmau": "a seat Unmaus (empties its hand)",
    "draw": "a seat draws a card",
    "penalty": "a seat is penalised",
    "turn_start": "a turn starts",
}


# ---- the typed form -----------------------------------------------------------------


def format_pattern(t: Trigger) -> str:
    if isinstance(t, AnyCard):
        return "any"
    if isinstance(t, OnCard):
        return card_word(Card(t.rank, t.suit))
    if isinstance(t, OnRank):
        return f"rank {rank_word(t.rank)}"
    if isinstance(t, OnSuit):
        return f"suit {SUIT_NAMES[t.suit]}"
    if isinstance(t, OnColour):
        return t.colour
    if isinstance(t, OnEvent):
        return EVENT_WORDS[t.event]
    return "always"


def _win_form(e: WinCondition) -> str:
    k = "" if e.condition == "empty_no_pending" else f" {e.k}"
    return f"win {WIN_WORDS[e.condition]}{k}"


EFFECT_FORMS: dict[str, Callable[[Any], str]] = {
    "match": lambda e: "match",
    "skip": lambda e: "skip",
    "reverse": lambda e: "reverse",
    "draw_next": lambda e: f"draw {e.n}" + (" stacking" if e.stacking else ""),
    "play_again": lambda e: "again",
    "wild": lambda e: "wild",
    "announce": lambda e: f"say {quoted(e.words)}",
    "allow_on": lambda e: f"allow on {format_pattern(e.target)}",
    "forbid_on": lambda e: f"forbid on {format_pattern(e.target)}",
    "unmau_count": lambda e: f"unmau picks {e.n}",
    "penalty": lambda e: f"penalty {e.n}",
    "win": _win_form,
    "create_rule": lambda e: "create rule",
    "repeal": lambda e: f"repeal {e.number}",
    "amend": lambda e: f"amend {e.number} to {format_rule(e.spec)}",
    "free_text": lambda e: f"text {quoted(e.text)}",
}
"""The typed form of each effect, by its ``KIND`` (``_effect`` reads them back)."""


def format_effect(e: object) -> str:
    form = EFFECT_FORMS.get(getattr(e, "KIND", ""))
    if form is None:
        raise MoveError(f"unknown effect {e!r}")
    return form(e)


def format_rule(spec: RuleSpec) -> str:
    """The typed form of ``spec`` (``parse_rule`` reads it back)."""
    if isinstance(spec.trigger, Always) and isinstance(spec.effect, FreeText):
        return quoted(spec.effect.text)
    return f"{format_pattern(spec.trigger)}: {format_effect(spec.effect)}"


class _Reader:
    def __init__(self, toks: Sequence[str]) -> None:
        self.toks = list(toks)
        self.i = 0

    def peek(self) -> str | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self, what: str) -> str:
        tok = self.peek()
        if tok is None:
            raise MoveError(f"the rule stops early: expected {what}")
        self.i += 1
        return tok

    def word(self, *allowed: str) -> str:
        tok = self.take(" or ".join(allowed)).lower()
        if tok not in allowed:
            raise MoveError(f"expected {' or '.join(allowed)}, not {tok!r}")
        return tok

    def number(self, what: str, lo: int, hi: int) -> int:
        tok = self.take(what)
        if not tok.lstrip("-").isdigit():
            raise MoveError(f"{what} must be a number, not {tok!r}")
        n = int(tok)
        if not lo <= n <= hi:
            raise MoveError(f"{what} must be {lo} to {hi}, not {n}")
        return n

    def text(self, what: str) -> str:
        tok = self.take(f'{what} in "quotes"')
        text = unquote(tok)
        if text is None:
            raise MoveError(f'put {what} in "quotes"')
        return text


def _pattern(r: _Reader, events: bool) -> Trigger:
    tok = r.take("a card, rank, suit, colour or event")
    low = tok.lower()
    if low == "any":
        return AnyCard()
    if low == "always":
        return Always()
    if low in ("red", "black"):
        return OnColour(low)
    if low == "rank":
        return OnRank(parse_rank(r.take("a rank")))
    if low == "suit":
        return OnSuit(parse_suit(r.take("a suit")))
    if events and low in WORD_EVENTS:
        return OnEvent(WORD_EVENTS[low])
    card = maybe_card(tok)
    if card is not None and card.rank != 0:
        return OnCard(card.rank, card.suit)
    raise MoveError(
        f"not a trigger: {tok!r} (any, a card like Qh, rank 7, suit hearts, red, black, "
        "unmau, draw, penalty, turn, always)"
    )


def _effect(r: _Reader, depth: int) -> object:
    tok = r.take("an effect").lower()
    if tok == "match":
        return MatchRankOrSuit()
    if tok == "skip":
        return SkipNext()
    if tok == "reverse":
        return Reverse()
    if tok == "draw":
        n = r.number("the number of cards", 1, MAX_DRAW_NEXT)
        stacking = r.peek() is not None and r.peek().lower() in ("stacking", "stack")
        if stacking:
            r.take("stacking")
        return DrawNext(n, stacking)
    if tok == "again":
        return PlayAgain()
    if tok == "wild":
        return Wild()
    if tok == "say":
        return Announce(r.text("the words"))
    if tok in ("allow", "forbid"):
        r.word("on")
        target = _pattern(r, events=False)
        return AllowOn(target) if tok == "allow" else ForbidOn(target)
    if tok == "unmau":
        r.word("picks")
        return SetUnmauCount(r.number("the pick-up count", 0, MAX_UNMAU_COUNT))
    if tok == "penalty":
        return SetPenalty(r.number("the penalty", 0, MAX_PENALTY))
    if tok == "win":
        cond = r.word(*WORD_WINS)
        if cond == "empty":
            return WinCondition("empty_no_pending", 1)
        return WinCondition(WORD_WINS[cond], r.number("the count", 1, MAX_WIN_K))
    if tok == "create":
        r.word("rule")
        return CreateRule()
    if tok == "repeal":
        return Repeal(r.number("the rule number", 1, 10_000))
    if tok == "amend":
        number = r.number("the rule number", 1, 10_000)
        r.word("to")
        if depth > 0:
            raise MoveError("an amendment cannot amend")
        return Amend(number, _rule(r, depth + 1))
    if tok == "text":
        return FreeText(r.text("the rule"))
    raise MoveError(
        f'not an effect: {tok!r} (skip, reverse, draw N [stacking], again, wild, say "…", '
        "allow on …, forbid on …, unmau picks N, penalty N, win …, create rule, repeal N, "
        'amend N to …, text "…")'
    )


def _rule(r: _Reader, depth: int) -> RuleSpec:
    first = r.peek()
    if first is not None and unquote(first) is not None:
        r.take("text")
        return RuleSpec(Always(), FreeText(unquote(first)))
    if ":" in r.toks[r.i :] and not _starts_effect(r):
        trigger = _pattern(r, events=True)
        r.word(":")
    else:
        trigger = Always()
    return RuleSpec(trigger, _effect(r, depth))


EFFECT_ONLY = frozenset(
    {"match", "skip", "reverse", "again", "wild", "say", "allow", "forbid", "win", "create",
     "repeal", "amend", "text"}
)  # fmt: skip


def _starts_effect(r: _Reader) -> bool:
    """Does the rule start with its effect (a rule that is always on, trigger left out)?"""
    first = (r.peek() or "").lower()
    nxt = r.toks[r.i + 1].lower() if r.i + 1 < len(r.toks) else ""
    if first in EFFECT_ONLY:
        return True
    if first in ("draw", "penalty"):
        return nxt.isdigit()
    return first == "unmau" and nxt == "picks"


def parse_rule(text: str | Sequence[str]) -> RuleSpec:
    """Read a rule in the typed form; raise ``MoveError`` saying what is wrong."""
    toks = tokens(text) if isinstance(text, str) else list(text)
    if not toks:
        raise MoveError('a rule is needed, e.g. rank 7: draw 2, or "free text"')
    r = _Reader(toks)
    spec = _rule(r, 0)
    if r.peek() is not None:
        raise MoveError(f"unexpected {r.peek()!r} after the rule")
    try:
        spec.check()
    except BadRule as exc:
        raise MoveError(str(exc)) from exc
    return spec


def rule_problem(book: RuleBook, spec: RuleSpec, context: Standings | None) -> str | None:
    """Why the rule book would refuse ``spec`` now, or ``None``."""
    try:
        book.validate(spec, context)
    except BadRule as exc:
        return str(exc)
    return None


# ---- the builder ----------------------------------------------------------------------


Finish = Callable[[RuleSpec], Node | Plan]


def _ranks(then: Callable[[int], Node | Plan]) -> Choice:
    return Choice("Which rank?", [Option(rank_word(r), (lambda r=r: then(r))) for r in RANKS])


def _suits(then: Callable[[int], Node | Plan]) -> Choice:
    return Choice(
        "Which suit?",
        [Option(f"{SUIT_SYMBOLS[s]} {SUIT_NAMES[s]}", (lambda s=s: then(s))) for s in range(4)],
    )


def pattern_menu(title: str, then: Callable[[Trigger], Node | Plan]) -> Choice:
    """Choose a card pattern: any card, a face, a rank, a suit, a colour."""
    return Choice(
        title,
        [
            Option("any card", lambda: then(AnyCard())),
            Option(
                "one card (a rank and a suit)…",
                lambda: _ranks(lambda r: _suits(lambda s: then(OnCard(r, s)))),
            ),
            Option("every card of a rank…", lambda: _ranks(lambda r: then(OnRank(r)))),
            Option("every card of a suit…", lambda: _suits(lambda s: then(OnSuit(s)))),
            Option("a red card (♦ ♥)", lambda: then(OnColour("red"))),
            Option("a black card (♣ ♠)", lambda: then(OnColour("black"))),
        ],
    )


class RuleBuilder:
    """The question tree that makes one rule, ending in ``finish(spec)``."""

    def __init__(self, book: RuleBook, context: Standings | None, finish: Finish) -> None:
        self.book = book
        self.context = context
        self.finish = finish

    def start(self, amending: bool = False) -> Choice:
        opts = [
            Option(
                "a card is played…",
                lambda: pattern_menu("When which card is played?", self.effects),
            ),
            *[Option(f"{EVENT_LABELS[e]}", (lambda e=e: self.effects(OnEvent(e)))) for e in EVENTS],
            Option(
                "always (a standing rule: counts, winning, repeal…)",
                lambda: self.effects(Always(), amending),
            ),
            Option("write the rule in your own words…", self.free_text),
        ]
        return Choice("New rule, step 1: when does it apply?", opts, tag="rule", source=self)

    def free_text(self) -> Ask:
        return Ask(
            "Type the rule (others vote on calls that cite it):",
            lambda text: self.confirm(RuleSpec(Always(), FreeText(text.strip()))),
            example="No talking while a 3 is on top",
        )

    def effects(self, trigger: Trigger, amending: bool = False) -> Node | Plan:
        kinds = [k for k, allowed in EFFECT_TRIGGERS.items() if _fits(trigger, allowed)]
        if amending:
            kinds = [k for k in kinds if k not in ("repeal", "amend")]
        kinds = [k for k in kinds if k not in ("match", "free_text")]
        opts = [Option(EFFECT_LABELS[k], (lambda k=k: self.details(trigger, k))) for k in kinds]
        when = (
            describe(RuleSpec(trigger, SkipNext())).split(",")[0]
            if not isinstance(trigger, Always)
            else "Always"
        )
        return Choice(f"Step 2: {when}, what happens?", opts)

    def details(self, trigger: Trigger, kind: str) -> Node | Plan:
        done = lambda effect: self.confirm(RuleSpec(trigger, effect))  # noqa: E731
        simple = {
            "skip": SkipNext,
            "reverse": Reverse,
            "play_again": PlayAgain,
            "wild": Wild,
            "create_rule": CreateRule,
        }
        if kind in simple:
            return done(simple[kind]())
        if kind == "draw_next":

            def count(n: int) -> Node | Plan:
                if not trigger.CARD:
                    return done(DrawNext(n))
                return Choice(
                    "May the next seat pass the draw on with another such card (stacking)?",
                    [
                        Option("no: the next seat just draws", lambda: done(DrawNext(n))),
                        Option("yes: it stacks", lambda: done(DrawNext(n, True))),
                    ],
                )

            return Number(
                "Step 3: how many cards does the next seat draw?", 1, MAX_DRAW_NEXT, count, 2
            )
        if kind == "announce":
            return Ask(
                "Step 3: which words must be announced?",
                lambda w: done(Announce(w.strip())),
                "Spaides",
            )
        if kind in ("allow_on", "forbid_on"):
            make = AllowOn if kind == "allow_on" else ForbidOn
            verb = "also be played" if kind == "allow_on" else "not be played"
            return pattern_menu(
                f"Step 3: it may {verb} on which top card?", lambda t: done(make(t))
            )
        if kind == "unmau_count":
            return Number(
                "Step 3: how many cards does an Unmau pick up?",
                0,
                MAX_UNMAU_COUNT,
                lambda n: done(SetUnmauCount(n)),
                3,
            )
        if kind == "penalty":
            return Number(
                "Step 3: how many cards is a penalty?",
                0,
                MAX_PENALTY,
                lambda n: done(SetPenalty(n)),
                2,
            )
        if kind == "win":
            return Choice(
                "Step 3: who wins?",
                [
                    Option(
                        "the first seat to Unmau some number of times…",
                        lambda: Number(
                            "How many Unmaus?",
                            1,
                            MAX_WIN_K,
                            lambda k: done(WinCondition("unmaus", k)),
                            2,
                        ),
                    ),
                    Option(
                        "the first seat to empty its hand holding no pending rule",
                        lambda: done(WinCondition("empty_no_pending")),
                    ),
                    Option(
                        "the first seat to create some number of rules…",
                        lambda: Number(
                            "How many rules?",
                            1,
                            MAX_WIN_K,
                            lambda k: done(WinCondition("rules_created", k)),
                            4,
                        ),
                    ),
                ],
            )
        if kind in ("repeal", "amend"):
            rules = [
                r
                for r in self.book.rules
                if r.active and not isinstance(r.spec.effect, Repeal | Amend)
            ]
            if not rules:
                return Choice("There is no rule to change.", [Option("start again", self.start)])
            if kind == "repeal":
                return Choice(
                    "Step 3: repeal which rule?",
                    [Option(r.describe(), (lambda n=r.number: done(Repeal(n)))) for r in rules],
                )
            return Choice(
                "Step 3: amend which rule? (then make its new version)",
                [Option(r.describe(), (lambda n=r.number: self._amend(trigger, n))) for r in rules],
            )
        raise MoveError(f"no builder for {kind}")

    def _amend(self, trigger: Trigger, number: int) -> Node | Plan:
        inner = RuleBuilder(
            self.book,
            self.context,
            lambda spec: self.confirm(RuleSpec(trigger, Amend(number, spec))),
        )
        return inner.start(amending=True)

    def confirm(self, spec: RuleSpec) -> Node | Plan:
        try:
            spec.check()
            problem = rule_problem(self.book, spec, self.context)
        except BadRule as exc:
            problem = str(exc)
        try:
            text = describe(spec)
        except BadRule as exc:
            text, problem = "?", str(exc)
        if problem:
            return Choice(
                f"This rule cannot be made: {problem}",
                [Option("start again", self.start)],
            )
        return Choice(
            f"New rule: {text}",
            [
                Option("create this rule", lambda: self.finish(spec)),
                Option("start again", self.start),
            ],
        )


def _fits(trigger: Trigger, allowed: Sequence[str]) -> bool:
    return (
        ("card" in allowed and trigger.CARD)
        or ("always" in allowed and isinstance(trigger, Always))
        or (isinstance(trigger, OnEvent) and trigger.event in allowed)
    )


EFFECT_LABELS = {
    "match": "a card may be played on one of the same rank or suit",
    "skip": "the next seat is skipped",
    "reverse": "the direction of play reverses",
    "draw_next": "the next seat draws cards…",
    "play_again": "the same seat plays again",
    "wild": "it is wild (playable on anything; its player names a suit)",
    "announce": "the player must announce some words…",
    "allow_on": "it may also be played on…",
    "forbid_on": "it may not be played on…",
    "unmau_count": "an Unmau picks up a number of cards…",
    "penalty": "an Improper! penalty is a number of cards…",
    "win": "a way to win…",
    "create_rule": "the player must create a new rule",
    "repeal": "repeal a rule…",
    "amend": "amend a rule…",
    "free_text": "free text",
}


def rule_menu(book: RuleBook, context: Standings | None, finish: Finish) -> Choice:
    """The builder's first question; answering all of them ends in ``finish(spec)``."""
    return RuleBuilder(book, context, finish).start()


__all__ = ["choose", "format_rule", "parse_rule", "rule_menu", "tokens"]
