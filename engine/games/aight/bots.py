"""Bots for Aight of Spaides.

Both judge only from their own ``view``: their own hand's faces, and public
facts (the rule book, the pile's top, the public ``MoveRecord`` of the last
move). A missing announcement and an illegal face-up play are public, so an
honest bot can call Improper! on every broken structured rule without seeing
any hidden card.

* ``RandomAightBot`` plays a random *proper* action, but at rate
  ``improper_rate`` plays any card at all or drops its announcements; it calls
  Improper! at random (``call_rate``) and creates random valid rules, repeals
  and amendments included.
* ``HeuristicBot`` plays properly under every structured rule and makes every
  announcement, except for a person's slips at rate ``mistake_rate`` of its
  turns (seeded: the bot's own ``rng``): it forgets a required word, or plays
  a card the rules do not allow. It calls Improper! exactly when a structured
  rule was broken, creates rules from the catalogue and spends pending rules
  at once, dealing the cards to the opponent with the fewest.

Both vote to end once the game has run ``end_after`` turns, and propose it
then, and again only every ``end_every`` turns after a proposal (a table is
not asked every turn).
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Sequence
from typing import Any

from engine.bots import Bot
from engine.cards import RANKS, SUITS, Card
from engine.game import Action
from engine.games.aight.actions import (
    SPEND_DEAL,
    Call,
    Draw,
    EndTurn,
    KeepRule,
    Pass,
    Play,
    PlayDrawn,
    ProposeEnd,
    Spend,
    Vote,
    VoteEnd,
)
from engine.games.aight.rulebook import (
    COLOURS,
    EVENTS,
    MAX_DRAW_NEXT,
    WIN_CONDITIONS,
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
    MoveRecord,
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
    Wild,
    WinCondition,
    catalogue,
)

DEFAULT_END_AFTER = 60
DEFAULT_END_EVERY = 20
DEFAULT_MISTAKE_RATE = 0.05
RULE_TRIES = 12


# ---- judging from a view ------------------------------------------------------------


def _face(view: dict[str, Any], handle: int) -> Card | None:
    for cv in view["hand"]:
        if cv.handle == handle:
            return cv.face
    drawn = view["drawn"]
    if drawn is not None and drawn.handle == handle:
        return drawn.face
    return None


def record_for(view: dict[str, Any], action: Action) -> MoveRecord | None:
    """The public record ``action`` would make, as far as this seat can tell."""
    seat, top, named, stack = view["seat"], view["top"].face, view["named_suit"], view["stack"]
    emptied = len(view["hand"]) == 1
    if isinstance(action, Play):
        face = _face(view, action.card)
        if face is None:
            return None
        return MoveRecord(
            seat, "play", face, top, named, action.words, action.suit,
            action.rule is not None, emptied, stack,
        )  # fmt: skip
    if isinstance(action, PlayDrawn):
        face = view["drawn"].face
        return MoveRecord(
            seat, "draw_play", face, top, named, view["draw_words"] + action.words, action.suit,
            action.rule is not None, emptied, stack,
        )  # fmt: skip
    if isinstance(action, Draw | EndTurn):
        words = action.words if isinstance(action, Draw) else view["draw_words"]
        return MoveRecord(seat, "draw", None, top, named, words, None, False, False, 0)
    return None


def is_proper(view: dict[str, Any], action: Action, will_create: bool = True) -> bool:
    """Whether ``action`` is proper; with ``will_create``, a play that must create
    a rule counts as carrying one (the bot attaches it once it has chosen)."""
    rec = record_for(view, action)
    if rec is None:
        return False
    book = view["book"]
    card = rec.card
    if (
        will_create
        and card is not None
        and not rec.has_rule
        and book.creates_rule(card, rec.emptied)
    ):
        rec = dataclasses.replace(rec, has_rule=True)
    return not book.improper(rec)


def standings_of(view: dict[str, Any]) -> Standings:
    return Standings(view["unmaus"], view["created"])


def needs_rule(view: dict[str, Any], action: Action) -> bool:
    rec = record_for(view, action)
    return (
        rec is not None
        and rec.card is not None
        and view["book"].creates_rule(rec.card, rec.emptied)
    )


def valid_catalogue(book: RuleBook, standings: Standings) -> list[RuleSpec]:
    out = []
    for spec in catalogue():
        try:
            book.validate(spec, standings)
        except BadRule:
            continue
        out.append(spec)
    return out


def free_text_rule(book: RuleBook) -> RuleSpec:
    """A free-text house rule with a number no other rule has used."""
    return RuleSpec(Always(), FreeText(f"House rule {len(book.rules) + 1}: be polite"))


# ---- random rules (for the random bot and for property tests) ------------------------


def random_trigger(rng: random.Random, card_only: bool = False) -> Any:
    kinds = ["any", "card", "rank", "suit", "colour"] + ([] if card_only else ["event", "always"])
    k = rng.choice(kinds)
    if k == "any":
        return AnyCard()
    if k == "card":
        return OnCard(rng.choice(RANKS), rng.choice(SUITS))
    if k == "rank":
        return OnRank(rng.choice(RANKS))
    if k == "suit":
        return OnSuit(rng.choice(SUITS))
    if k == "colour":
        return OnColour(rng.choice(COLOURS))
    if k == "event":
        return OnEvent(rng.choice(EVENTS))
    return Always()


def random_effect(rng: random.Random, n_rules: int, depth: int = 0) -> Any:
    k = rng.randrange(16 if depth == 0 else 14)
    if k == 0:
        return SkipNext()
    if k == 1:
        return Reverse()
    if k == 2:
        return DrawNext(rng.randint(1, MAX_DRAW_NEXT // 2), rng.random() < 0.5)
    if k == 3:
        return PlayAgain()
    if k == 4:
        return Wild()
    if k == 5:
        return Announce(rng.choice(("Ten-ten", "Spaides", "Hah", "Oi")))
    if k == 6:
        return AllowOn(random_trigger(rng, card_only=True))
    if k == 7:
        return ForbidOn(random_trigger(rng, card_only=True))
    if k == 8:
        return SetUnmauCount(rng.randint(0, 8))
    if k == 9:
        return SetPenalty(rng.randint(0, 3))
    if k == 10:
        cond = rng.choice(WIN_CONDITIONS)
        return WinCondition(cond, 1 if cond == "empty_no_pending" else rng.randint(2, 6))
    if k == 11:
        return CreateRule()
    if k == 12:
        return FreeText(f"Free rule {rng.randrange(1000)}")
    if k == 13:
        return MatchRankOrSuit()
    if k == 14:
        return Repeal(rng.randint(1, max(1, n_rules)))
    return Amend(rng.randint(1, max(1, n_rules)), random_spec(rng, n_rules, depth + 1))


def random_spec(rng: random.Random, n_rules: int, depth: int = 0) -> RuleSpec:
    """A random rule; it may well be invalid (callers validate)."""
    return RuleSpec(random_trigger(rng), random_effect(rng, n_rules, depth))


def random_valid_rule(rng: random.Random, book: RuleBook, standings: Standings) -> RuleSpec:
    for _ in range(RULE_TRIES):
        spec = random_spec(rng, len(book.rules))
        try:
            book.validate(spec, standings)
        except BadRule:
            continue
        return spec
    options = valid_catalogue(book, standings)
    return rng.choice(options) if options else free_text_rule(book)


# ---- the bots -------------------------------------------------------------------------


class _AightBot(Bot):
    def __init__(self, seat: int, rng: random.Random, **params: Any) -> None:
        super().__init__(seat, rng, **params)
        self.end_after = int(params.get("end_after", DEFAULT_END_AFTER))
        self.end_every = max(1, int(params.get("end_every", DEFAULT_END_EVERY)))
        self.proposed_at: int | None = None

    def choose_rule(self, view: dict[str, Any]) -> RuleSpec:
        raise NotImplementedError

    def with_rule(self, view: dict[str, Any], action: Action) -> Action:
        if isinstance(action, Play | PlayDrawn) and needs_rule(view, action):
            rule = self.choose_rule(view)
            if isinstance(action, Play):
                return Play(action.seat, action.card, action.words, action.suit, rule)
            return PlayDrawn(action.seat, action.words, action.suit, rule)
        return action

    def wants_end(self, view: dict[str, Any]) -> bool:
        return view["turns"] >= self.end_after

    def common(self, view: dict[str, Any], legal: Sequence[Action]) -> Action | None:
        """Decisions both bots make alike (ending votes)."""
        phase = view["phase"]
        if phase == "end_vote":
            return VoteEnd(self.seat, self.wants_end(view))
        if phase == "turn" and self.wants_end(view) and ProposeEnd(self.seat) in legal:
            turns = view["turns"]
            if self.proposed_at is None or turns - self.proposed_at >= self.end_every:
                self.proposed_at = turns
                return ProposeEnd(self.seat)
        return None


class RandomAightBot(_AightBot):
    """Random proper play, with improper plays and skipped announcements at
    ``improper_rate``; random Improper! calls at ``call_rate``."""

    kind = "random"

    def __init__(self, seat: int, rng: random.Random, **params: Any) -> None:
        super().__init__(seat, rng, **params)
        self.improper_rate = float(params.get("improper_rate", 0.1))
        self.call_rate = float(params.get("call_rate", 0.1))

    def choose_rule(self, view: dict[str, Any]) -> RuleSpec:
        return random_valid_rule(self.rng, view["book"], standings_of(view))

    def act(self, view: dict[str, Any], legal: Sequence[Action]) -> Action:
        done = self.common(view, legal)
        if done is not None:
            return done
        rng, phase = self.rng, view["phase"]
        if phase in ("turn", "drawn"):
            moves = [a for a in legal if not isinstance(a, ProposeEnd)]
            if rng.random() < self.improper_rate:
                a = rng.choice(moves)
                if rng.random() < 0.5 and getattr(a, "words", ()):
                    a = _without_words(a)
                return a if rng.random() < 0.5 else self.with_rule(view, a)
            proper = [a for a in moves if is_proper(view, a)]
            return self.with_rule(view, rng.choice(proper or moves))
        if phase == "window":
            if rng.random() < self.call_rate:
                return rng.choice([a for a in legal if isinstance(a, Call)])
            return Pass(self.seat)
        if phase == "vote":
            return Vote(self.seat, rng.random() < 0.5)
        if phase == "interlude":
            if rng.random() < 0.7 and not view["book"].full:
                seats = [s for s in range(view["seats"]) if s not in view.get("gone", ())]
                deal = tuple(rng.choice(seats) for _ in range(SPEND_DEAL))
                return Spend(self.seat, self.choose_rule(view), deal)
            return KeepRule(self.seat)
        return rng.choice(list(legal))


def _without_words(a: Action) -> Action:
    if isinstance(a, Play):
        return Play(a.seat, a.card, (), a.suit, a.rule)
    if isinstance(a, PlayDrawn):
        return PlayDrawn(a.seat, (), a.suit, a.rule)
    if isinstance(a, Draw):
        return Draw(a.seat, ())
    return a


class HeuristicBot(_AightBot):
    """Plays properly, announces, calls every broken structured rule, creates
    catalogue rules; ``vote_yes`` is its chance of upholding a free-text call."""

    kind = "heuristic"

    def __init__(self, seat: int, rng: random.Random, **params: Any) -> None:
        super().__init__(seat, rng, **params)
        self.vote_yes = float(params.get("vote_yes", 0.5))
        self.mistake_rate = float(params.get("mistake_rate", DEFAULT_MISTAKE_RATE))

    def choose_rule(self, view: dict[str, Any]) -> RuleSpec:
        book = view["book"]
        options = valid_catalogue(book, standings_of(view))
        return self.rng.choice(options) if options else free_text_rule(book)

    def _slip(
        self, view: dict[str, Any], legal: Sequence[Action], proper: Sequence[Action]
    ) -> Action | None:
        """A person's mistake: a proper play with its required words forgotten if there
        is one, else a card the rules do not allow (``None``: no mistake to make)."""
        wordy = [a for a in proper if getattr(a, "words", ())]
        if wordy:
            return self.with_rule(view, _without_words(self.rng.choice(wordy)))
        wrong = [a for a in legal if isinstance(a, Play | PlayDrawn) and a not in proper]
        if wrong:
            return self.with_rule(view, self.rng.choice(wrong))
        return None

    def _score(self, view: dict[str, Any], a: Action) -> float:
        rec = record_for(view, a)
        if rec is None or rec.card is None:
            return 0.0
        effects = view["book"].card_effects(rec.card)
        attack = sum(1 for _, e in effects if isinstance(e, DrawNext | SkipNext))
        return 2.0 * attack + (1.0 if rec.emptied else 0.0) + self.rng.random()

    def act(self, view: dict[str, Any], legal: Sequence[Action]) -> Action:
        done = self.common(view, legal)
        if done is not None:
            return done
        phase = view["phase"]
        if phase in ("turn", "drawn"):
            plays = [a for a in legal if isinstance(a, Play | PlayDrawn) and is_proper(view, a)]
            if self.mistake_rate > 0 and self.rng.random() < self.mistake_rate:
                slip = self._slip(view, legal, plays)
                if slip is not None:
                    return slip
            if plays:
                return self.with_rule(view, max(plays, key=lambda a: self._score(view, a)))
            if phase == "drawn":
                return EndTurn(self.seat)
            return next(a for a in legal if isinstance(a, Draw))
        if phase == "window":
            move = view["move"]
            if move is not None and view["book"].improper(move):
                return Call(self.seat, 0)
            return Pass(self.seat)
        if phase == "vote":
            return Vote(self.seat, self.rng.random() < self.vote_yes)
        if phase == "interlude":
            if view["book"].full:  # no rule can be created: keep it
                return KeepRule(self.seat)
            sizes = view["hand_sizes"]
            gone = view.get("gone", ())
            others = [s for s in range(view["seats"]) if s != self.seat and s not in gone]
            others = others or [self.seat]
            target = min(others, key=lambda s: (sizes[s], s))
            return Spend(self.seat, self.choose_rule(view), (target,) * SPEND_DEAL)
        return self.rng.choice(list(legal))
