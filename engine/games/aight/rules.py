"""Aight of Spaides (docs/rules/aight-of-spaides.md): a game whose players write its rules.

Two 52-card decks without jokers (104 handles; the two copies of a face are
distinct handles). Each seat is dealt 8 cards privately, the next card is
turned up to start the played pile, and seats then take turns: play a card
that the active rules allow on the pile's top, or draw one card and perhaps
play it at once. When the deck runs out, the played pile except its top is
shuffled jointly into a new deck.

**Rules.** The rules live in a ``RuleBook`` (``engine.games.aight.rulebook``): base
rules #1-#6 (match rank or suit; the 8♠ needs "Aight of Spaides" and creates a
rule; Unmau needs "Unmau"; Unmau picks up 5; a penalty is 1 card) and every
rule created since. Rules are data, validated before they are accepted.

**Improper!** Moves that break the rules are not blocked (``IllegalAction`` is
only for what no table would allow: acting out of turn, playing a card one does
not hold, a malformed or invalid rule). After every move (a play, a draw, or a
draw then play) a response window opens: *every other seat answers once*,
``Call`` (citing rule 0 = "the structured rules", or a free-text rule's number)
or ``Pass``, in ascending seat order starting after the mover. When all have
answered, the calls are resolved in that same order:

* a structured call is right iff ``RuleBook.improper`` finds a reason in the
  public ``MoveRecord``; a call citing a free-text rule is put to a vote of
  every seat except the mover (the caller included unless option
  ``caller_votes`` is off), upheld by a strict majority or the threshold of
  option ``vote_threshold`` **[house]**;
* the first right call ends the resolution: the offender takes back the
  played card and draws the penalty (rule #6); a pending stack it did not
  pass on is drawn as well;
* each wrong call before it costs the caller the penalty (table option
  ``wrong_call_penalty``, default on **[house]**);
* if no call is right, the move stands, and only then do its effects happen
  (skip, reverse, draws, wild suit, rule creation, Unmau). So a right call
  never has to undo an effect.

**Unmau and pending rules.** A standing play that empties the hand is an Unmau
(whether or not it was announced; a missing "Unmau" is merely improper). The
seat picks up 5 cards (rule-changeable) and gains a pending rule. Between two
moves, after every window, each holder of a pending rule is asked in seat
order from the mover, ``Spend`` (a rule plus 3 cards dealt from the deck to
seats of its choice) or ``KeepRule`` **[house]**: once each, or, with option
``spend_several``, again after each ``Spend`` while it still holds one.

**Ending.** On its turn a seat may once ``ProposeEnd``; every seat then votes
and a unanimous vote ends the game as a draw. A win condition created by a
rule ends it with a winner. ``max_turns`` ends an endless game as a draw.

**Reshuffle.** When a draw finds the deck empty, the played pile except its
top is shuffled jointly into a new deck; while a played card still awaits the
window's verdict, the card under it is kept as well, so that a card taken back
leaves the old top in place.

**Leaving** (``Game.leave``, a table with the ``survive`` option). The seat's hand
goes face down out of play, and so do its pending rules and lost turns; from then on
every count of seats in order (the next seat, a window, a vote, the end vote) passes
over it, and nothing is dealt to it. A turn it had begun ends (a card it drew leaves
with its hand); a window, vote or end vote counts it out (as if it had not been there);
a move of its own still being judged is judged as usual, and a card taken back goes
out of play. When one seat is left, it wins.

**Hidden information.** Every deal and draw is a ``Reveal`` to the drawer,
every played card a public ``Reveal``, every reshuffle a ``Shuffle``. A card
taken back stays known to everybody. All judging uses only public facts.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from engine.cards import SUIT_SYMBOLS, SUITS, Card, standard_deck
from engine.errors import EngineError
from engine.game import Action, Game, Handler, Outcome, Phase
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
from engine.games.aight.events import Unmau
from engine.games.aight.rulebook import (
    BadRule,
    DrawNext,
    Effect,
    MoveRecord,
    PlayAgain,
    Reverse,
    RuleBook,
    RuleSpec,
    SkipNext,
    Standings,
    Wild,
    catalogue,
)
from engine.obligations import Shuffle
from engine.options import OptionSpec

HAND_SIZE = 8
DECK_COPIES = 2
DEFAULT_MAX_TURNS = 1000
VOTE_THRESHOLDS = ("majority", "half", "two-thirds", "all")


def upheld(yes: int, voters: int, threshold: str) -> bool:
    """Does a free-text call with ``yes`` of ``voters`` votes meet ``threshold``?"""
    if threshold == "half":
        return 2 * yes >= voters
    if threshold == "two-thirds":
        return 3 * yes >= 2 * voters
    if threshold == "all":
        return yes == voters
    return 2 * yes > voters  # majority: more than half


class AightOfSpaides(Game):
    NAME = "aight-of-spaides"
    MIN_SEATS, MAX_SEATS = 2, 10
    OPTIONS = (
        OptionSpec(
            "max_turns",
            int,
            DEFAULT_MAX_TURNS,
            "turn cap: the game ends as a draw after this many turns",
            minimum=1,
            maximum=10_000_000,
        ),
        OptionSpec(
            "wrong_call_penalty",
            bool,
            True,
            "a wrong Improper! call costs the caller the penalty [house]",
        ),
        OptionSpec(
            "vote_threshold",
            str,
            "majority",
            "votes that uphold a call citing a free-text rule (majority: more than half of "
            "the voters; half, two-thirds: at least that share; all) [house]",
            choices=VOTE_THRESHOLDS,
            hashed_at_default=False,
        ),
        OptionSpec(
            "caller_votes",
            bool,
            True,
            "the caller votes on its own free-text call (off: only the others, unless "
            "nobody else is left) [house]",
            hashed_at_default=False,
        ),
        OptionSpec(
            "spend_several",
            bool,
            False,
            "a holder of several pending rules may spend them all between the same two "
            "moves (off: one) [house]",
            hashed_at_default=False,
        ),
    )

    def make_deck(self) -> Sequence[Card]:
        return standard_deck(copies=DECK_COPIES)

    # ---- setup ------------------------------------------------------------------

    def setup(self) -> Handler:
        n = self.seats
        self.book = RuleBook()
        self.current = 0
        self.direction = 1
        self.skip = 0
        self.lost = [0] * n  # turns lost by a seat skipped from outside the mover's turn
        self.again = False
        self.stack = 0
        self.named_suit: int | None = None
        self.pending_rules = [0] * n
        self.unmaus = [0] * n
        self.created = [0] * n
        self.move: MoveRecord | None = None
        self.move_handle: int | None = None
        self.move_rule: RuleSpec | None = None
        self.draw_words: tuple[str, ...] = ()
        self.drawn: int | None = None
        self.order: tuple[int, ...] = ()
        self.answers: dict[int, int | None] = {}
        self.calls: list[tuple[int, int]] = []
        self.voting: tuple[int, int] | None = None
        self.votes: dict[int, bool] = {}
        self.queue: list[int] = []
        self.proposed = False
        self.end_votes: dict[int, bool] = {}
        self.winner: int | None = None
        self.end_reason = ""
        self.zones.add("deck", range(len(self.deck)))
        self.zones.add("pile")
        for s in range(n):
            self.zones.add(f"hand:{s}")
        yield Shuffle(tuple(self.zones["deck"]), "initial shuffle")
        hands = []
        for s in range(n):
            hand = list(self.zones["deck"][:HAND_SIZE])
            for h in hand:
                self.zones.move(h, f"hand:{s}")
            hands.append((s, hand))
        yield from self.deal(hands)
        for s in range(n):
            self.emit("deal", f"seat {s} is dealt {HAND_SIZE} cards", s)
        top = self.zones["deck"][0]
        self.zones.move(top, "pile", 0)
        faces = yield from self.reveal([top], reason="turn up")
        self.emit("start", f"{faces.get(top, '?')} is turned up to start the pile")
        yield from self._begin_turn(0)

    # ---- small helpers --------------------------------------------------------------

    def hand(self, seat: int) -> Sequence[int]:
        return self.zones[f"hand:{seat}"]

    def top(self) -> Card:
        return self.faces[self.zones["pile"][0]]  # the pile's top is always public

    def next_of(self, seat: int) -> int:
        nxt = (seat + self.direction) % self.seats
        while nxt in self.gone:  # a seat that has left is passed over
            nxt = (nxt + self.direction) % self.seats
        return nxt

    def standings(self) -> Standings:
        return Standings(tuple(self.unmaus), tuple(self.created))

    def _order_from(self, seat: int, include: bool) -> tuple[int, ...]:
        start = 0 if include else 1
        order = ((seat + i) % self.seats for i in range(start, self.seats))
        return tuple(s for s in order if s not in self.gone)

    def _check_rule(self, action: Action, rule: Any, required: bool) -> None:
        if rule is None:
            if required:
                raise self.illegal(action, "a rule is required")
            return
        try:
            self.book.validate(rule, self.standings())
        except BadRule as exc:
            raise self.illegal(action, f"invalid rule: {exc}") from exc

    # ---- who moves ------------------------------------------------------------------------

    def to_move(self) -> tuple[int, ...]:
        if self._pending is not None:
            return ()
        p = self.phase
        if p in ("turn", "drawn"):
            return (self.current,)
        if p == "window":
            return tuple(s for s in self.order if s not in self.answers)
        if p == "vote":
            return tuple(s for s in self.order if s not in self.votes)
        if p == "interlude":
            return tuple(self.queue[:1])
        if p == "end_vote":
            return tuple(s for s in self.order if s not in self.end_votes)
        return ()

    def is_over(self) -> bool:
        return self.phase == "over"

    # ---- turn actions -------------------------------------------------------------------

    def _on_play(self, a: Play) -> Handler:
        if a.card not in self.hand(a.seat):
            raise self.illegal(a, "you do not hold that card")
        self._check_rule(a, a.rule, required=False)
        yield from self._play(a.seat, a.card, "play", a.words, a.suit, a.rule)

    def _play(
        self,
        seat: int,
        h: int,
        kind: str,
        words: tuple[str, ...],
        suit: int | None,
        rule: RuleSpec | None,
    ) -> Handler:
        top, named = self.top(), self.named_suit
        self.zones.move(h, "pile", 0)
        faces = yield from self.reveal([h], reason="play")
        card = faces.get(h) or self.faces[h]
        all_words = self.draw_words + words if kind == "draw_play" else words
        self.move = MoveRecord(
            seat,
            kind,
            card,
            top,
            named,
            all_words,
            suit,
            rule is not None,
            not self.hand(seat),
            self.stack,
        )
        self.move_handle, self.move_rule = h, rule
        said = f" saying “{'”, “'.join(all_words)}”" if all_words else ""
        named_text = f" naming {SUIT_SYMBOLS[suit]}" if suit is not None else ""
        self.emit("play", f"seat {seat} plays {card} on {top}{said}{named_text}", seat)
        self._open_window(seat)

    def _on_draw(self, a: Draw) -> Handler:
        seat = a.seat
        if self.stack:
            n, self.stack = self.stack, 0
            yield from self._draw(seat, n, "takes the stack and draws {n}")
            self._record_draw(seat, a.words)
            return
        got = yield from self._draw(seat, 1, "draws {n}")
        if not got:
            self._record_draw(seat, a.words)
            return
        self.drawn = got[0]
        self.draw_words = a.words
        self.phase = "drawn"

    def _record_draw(self, seat: int, words: tuple[str, ...]) -> None:
        self.move = MoveRecord(
            seat, "draw", None, self.top(), self.named_suit, words, None, False, False, 0
        )
        self.move_handle, self.move_rule = None, None
        self._open_window(seat)

    def _on_play_drawn(self, a: PlayDrawn) -> Handler:
        self._check_rule(a, a.rule, required=False)
        h, self.drawn = self.drawn, None
        assert h is not None
        yield from self._play(a.seat, h, "draw_play", a.words, a.suit, a.rule)

    def _on_end_turn(self, a: EndTurn) -> Handler:
        self.drawn = None
        self._record_draw(a.seat, self.draw_words)
        return
        yield

    def _on_propose_end(self, a: ProposeEnd) -> Handler:
        if self.proposed:
            raise self.illegal(a, "this seat already proposed to end during this turn")
        self.proposed = True
        self.order = self._order_from(a.seat, include=True)
        self.end_votes = {}
        self.phase = "end_vote"
        self.emit("end:proposed", f"seat {a.seat} proposes to end the game", a.seat)
        return
        yield

    def _on_vote_end(self, a: VoteEnd) -> Handler:
        self.end_votes[a.seat] = a.yes
        yield from self._end_votes_in()

    def _end_votes_in(self) -> Handler:
        seats = self.seats - len(self.gone)
        if len(self.end_votes) < seats:
            return
        yes = sum(self.end_votes.values())
        if yes == seats:
            self._finish("vote", None, "every seat voted to end the game")
        else:
            self.emit("end:rejected", f"the proposal to end fails ({yes}/{seats} for)")
            self.phase = "turn"
            if self.current in self.gone:  # the proposer has left: its turn ends
                self.move = None
                yield from self._next_turn()

    # ---- the Improper! window -----------------------------------------------------------

    def _open_window(self, mover: int) -> None:
        self.order = self._order_from(mover, include=False)
        self.answers = {}
        self.calls = []
        self.phase = "window"

    def _on_call(self, a: Call) -> Handler:
        if a.cite != 0:
            try:
                rule = self.book.get(a.cite)
            except BadRule as exc:
                raise self.illegal(a, str(exc)) from exc
            if not rule.active:
                raise self.illegal(a, f"rule #{a.cite} is {rule.status}")
        self.answers[a.seat] = a.cite
        self.emit("improper:call", f"seat {a.seat} calls Improper!", a.seat, cite=a.cite)
        yield from self._window_answered()

    def _on_pass(self, a: Pass) -> Handler:
        self.answers[a.seat] = None
        yield from self._window_answered()

    def _window_answered(self) -> Handler:
        if len(self.answers) < len(self.order):
            return
        self.calls = [(s, c) for s in self.order if (c := self.answers[s]) is not None]
        yield from self._resolve()

    def _resolve(self) -> Handler:
        """Judge the calls in window order until one is right or none is left."""
        move = self.move
        assert move is not None
        while self.calls:
            caller, cite = self.calls.pop(0)
            if cite and self.book.is_free_text(cite):
                self.voting = (caller, cite)
                self.votes = {}
                self.order = self._voters(move.seat, caller)
                self.phase = "vote"
                self.emit(
                    "improper:vote",
                    f"seat {caller} cites free-text rule #{cite}; the table votes",
                    caller,
                )
                return
            reasons = self.book.improper(move)
            if reasons:
                self.emit(
                    "improper:right",
                    f"Improper! by seat {caller} is right: {'; '.join(reasons)}",
                    caller,
                )
                yield from self._take_back(move)
                return
            yield from self._wrong_call(caller)
        if self.book.improper(move):
            self.emit("improper:uncalled", f"seat {move.seat}'s improper move stands", move.seat)
        yield from self._stand(move)

    def _voters(self, mover: int, caller: int) -> tuple[int, ...]:
        """Everyone but the mover, in window order; without the caller if the table
        says so (option ``caller_votes``), unless nobody else is left to vote."""
        order = self._order_from(mover, include=False)
        if self.options["caller_votes"]:
            return order
        return tuple(s for s in order if s != caller) or (caller,)

    def _on_vote(self, a: Vote) -> Handler:
        self.votes[a.seat] = a.upheld
        yield from self._votes_in()

    def _votes_in(self) -> Handler:
        if len(self.votes) < len(self.order):
            return
        assert self.voting is not None and self.move is not None
        caller, cite = self.voting
        self.voting = None
        yes, voters = sum(self.votes.values()), len(self.votes)
        if upheld(yes, voters, self.options["vote_threshold"]):
            self.emit(
                "improper:right",
                f"the table upholds seat {caller}'s call under rule #{cite} ({yes} of {voters} for)",
                caller,
            )
            yield from self._take_back(self.move)
            return
        self.emit(
            "improper:rejected", f"the table rejects the call ({yes} of {voters} for)", caller
        )
        yield from self._wrong_call(caller)
        yield from self._resolve()

    def _wrong_call(self, caller: int) -> Handler:
        self.emit("improper:wrong", f"seat {caller}'s Improper! call is wrong", caller)
        if self.options["wrong_call_penalty"]:
            yield from self._penalise(caller)

    def _penalise(self, seat: int) -> Handler:
        n = self.book.penalty()
        self.emit("penalty", f"seat {seat} pays a penalty of {_cards(n)}", seat, n=n)
        yield from self._draw(seat, n, "draws {n} for the penalty")
        yield from self._apply(self.book.event_effects("penalty"), seat, "penalty")

    def _take_back(self, move: MoveRecord) -> Handler:
        seat = move.seat
        if self.move_handle is not None:
            self.zones.move(self.move_handle, f"hand:{seat}")
            self.emit("take_back", f"seat {seat} takes back {move.card}", seat)
            self.move_handle = None
            if seat in self.gone:
                self.retire(self.hand(seat))
        if move.kind != "draw" and move.stack:
            self.stack = 0
            yield from self._draw(seat, move.stack, "takes the stack and draws {n}")
        yield from self._penalise(seat)
        yield from self._end_move()

    # ---- a move stands: its effects -------------------------------------------------------

    def _stand(self, move: MoveRecord) -> Handler:
        seat, card = move.seat, move.card
        self.move_handle = None  # the card stands: it is now simply the pile's top
        if card is not None and move.kind != "draw":
            self.named_suit = move.suit if card in self.book.compiled.wild else None
            if move.stack and not self.book.stacks(card):
                self.stack = 0
                yield from self._draw(seat, move.stack, "does not stack, and draws {n}")
            yield from self._apply(self.book.card_effects(card), seat, str(card), move.suit)
            # an Unmau needs the hand still empty (drawing a refused stack refills it);
            # its event rules fire exactly when the Unmau itself happens
            unmau = move.emptied and not self.hand(seat)
            if unmau:
                yield from self._apply(self.book.event_effects("unmau"), seat, "Unmau")
            if self.move_rule is not None:
                if self.book.creates_rule(card, move.emptied):
                    self._create(self.move_rule, seat)
                else:
                    self.emit("rule:ignored", f"{card} creates no rule; the rule lapses", seat)
            if self.phase != "over" and unmau:
                yield from self._unmau(seat)
        if move.kind in ("draw", "draw_play") and self.phase != "over":
            yield from self._apply(self.book.event_effects("draw"), seat, "draw")
        yield from self._end_move()

    def _apply(
        self,
        effects: Sequence[tuple[int, Effect]],
        actor: int,
        cause: str,
        suit: int | None = None,
    ) -> Handler:
        for number, e in effects:
            if isinstance(e, SkipNext):
                if actor == self.current:
                    self.skip += 1
                    skipped = self.next_of(actor)
                else:  # a penalised wrong caller: the seat after *it* loses a turn
                    skipped = self.next_of(actor)
                    self.lost[skipped] += 1
                self.emit("skip", f"{cause}: seat {skipped} is skipped (rule #{number})", actor)
            elif isinstance(e, Reverse):
                self.direction = -self.direction
                self.emit("reverse", f"{cause}: direction reverses (rule #{number})", actor)
            elif isinstance(e, PlayAgain):
                self.again = True
                self.emit("play_again", f"{cause}: seat {actor} plays again (rule #{number})")
            elif isinstance(e, DrawNext):
                if e.stacking:
                    self.stack += e.n
                    self.emit("stack", f"{cause}: the stack grows to {self.stack}", actor)
                else:
                    target = self.next_of(actor)
                    self.emit("draw_next", f"{cause}: seat {target} draws {e.n}", target)
                    yield from self._draw(target, e.n, f"draws {{n}} (rule #{number})")
            elif isinstance(e, Wild) and suit is not None:
                self.emit("wild", f"{cause} is wild: {SUIT_SYMBOLS[suit]} is named", actor)

    def _create(self, spec: RuleSpec, author: int) -> None:
        try:
            self.book, rule = self.book.add(spec, author, self.standings())
        except BadRule as exc:  # pre-validated, so only if the book changed meanwhile
            self.emit("rule:rejected", f"the rule is rejected: {exc}", author)
            return
        self.created[author] += 1
        kind = spec.effect.KIND
        self.emit(f"rule:{kind}", f"seat {author} creates {rule.describe()}", author, rule=kind)
        for _, w in self.book.wins():
            if w.condition == "rules_created" and self.created[author] >= w.k:
                self._finish("win", author, f"seat {author} created {w.k} rules")
                return

    def _unmau(self, seat: int) -> Handler:
        self.unmaus[seat] += 1
        self.emit(
            "unmau", f"seat {seat}: Unmau!", seat, detail=Unmau(seat), count=self.unmaus[seat]
        )
        for number, w in self.book.wins():
            if (w.condition == "unmaus" and self.unmaus[seat] >= w.k) or (
                w.condition == "empty_no_pending" and self.pending_rules[seat] == 0
            ):
                self._finish("win", seat, f"seat {seat} wins by rule #{number}")
                return
        self.pending_rules[seat] += 1
        yield from self._draw(seat, self.book.unmau_count(), "picks up {n} for Unmau")

    def _end_move(self) -> Handler:
        if self.phase == "over":
            return
        mover = self.move.seat if self.move is not None else self.current
        self.queue = [s for s in self._order_from(mover, include=True) if self.pending_rules[s]]
        if self.queue:
            self.phase = "interlude"
            return
        yield from self._next_turn()

    # ---- pending rules --------------------------------------------------------------------

    def _on_spend(self, a: Spend) -> Handler:
        if gone := sorted(set(a.deal) & set(self.gone)):
            raise self.illegal(a, f"seat {gone[0]} has left the table")
        self._check_rule(a, a.rule, required=True)
        self.pending_rules[a.seat] -= 1
        if not (self.options["spend_several"] and self.pending_rules[a.seat]):
            self.queue.pop(0)  # with spend_several, a holder is asked again while it holds one
        self.emit("pending:spent", f"seat {a.seat} spends a pending rule", a.seat)
        self._create(a.rule, a.seat)
        if self.phase == "over":
            return
        for target, n in sorted(Counter(a.deal).items()):
            yield from self._draw(target, n, f"is dealt {{n}} by seat {a.seat}")
        yield from self._after_interlude()

    def _on_keep_rule(self, a: KeepRule) -> Handler:
        self.queue.pop(0)
        yield from self._after_interlude()

    def _after_interlude(self) -> Handler:
        if not self.queue:
            yield from self._next_turn()

    # ---- turns ------------------------------------------------------------------------------

    def _next_turn(self) -> Handler:
        mover = self.move.seat if self.move is not None else self.current
        if self.again and mover not in self.gone:
            nxt = mover
        else:
            nxt = mover
            for _ in range(1 + self.skip):
                nxt = self.next_of(nxt)
        self.again, self.skip = False, 0
        while self.lost[nxt]:  # finite: every pass spends one lost turn
            self.lost[nxt] -= 1
            self.emit("skip:lost", f"seat {nxt} loses its turn", nxt)
            nxt = self.next_of(nxt)
        self.move = None
        yield from self._begin_turn(nxt)

    def _begin_turn(self, seat: int) -> Handler:
        if self.turns >= self.options["max_turns"]:
            self._finish("cap", None, f"turn cap {self.options['max_turns']} reached")
            return
        self.turns += 1
        self.current = seat
        self.proposed = False
        self.phase = "turn"
        yield from self._apply(self.book.event_effects("turn_start"), seat, "turn start")

    def _finish(self, how: str, winner: int | None, reason: str) -> None:
        self.phase = "over"
        self.winner = winner
        self.end_reason = f"{how}: {reason}"
        self.emit(f"end:{how}", reason, winner)

    # ---- leaving ----------------------------------------------------------------------------

    def on_leave(self, seat: int) -> Handler:
        """docs/rules/aight-of-spaides.md, "A player who leaves"."""
        self.retire(self.hand(seat))
        self.pending_rules[seat] = 0
        self.lost[seat] = 0
        self.emit("out", f"seat {seat}'s cards leave play face down", seat)
        present = self.present()
        if len(present) == 1:
            self._finish("left", present[0], "every other seat has left the table")
            return
        p = self.phase
        if p in ("turn", "drawn") and self.current == seat:
            self.drawn, self.draw_words, self.move = None, (), None
            yield from self._next_turn()
        elif p == "window" and seat in self.order:
            self.order = tuple(s for s in self.order if s != seat)
            self.answers.pop(seat, None)
            yield from self._window_answered()
        elif p == "vote" and seat in self.order:
            self.order = tuple(s for s in self.order if s != seat)
            self.votes.pop(seat, None)
            yield from self._votes_in()
        elif p == "interlude" and seat in self.queue:
            first = self.queue[0] == seat
            self.queue.remove(seat)
            if first:
                yield from self._after_interlude()
        elif p == "end_vote":
            self.order = tuple(s for s in self.order if s != seat)
            self.end_votes.pop(seat, None)
            yield from self._end_votes_in()

    # ---- drawing ------------------------------------------------------------------------------

    def _draw(self, seat: int, n: int, verb: str) -> Handler:
        """Move up to ``n`` cards from the deck to ``seat``, reshuffling as needed; ``verb``
        says it, with ``{n}`` where the number of cards goes ("draws {n} for the penalty")."""
        got: list[int] = []
        if seat in self.gone:
            return got  # nothing is dealt to a seat that has left
        for _ in range(n):
            if not self.zones["deck"]:
                # while a played card awaits its verdict, the card under it stays too
                keep = 1 if self.move_handle is None else 2
                rest = tuple(self.zones["pile"][keep:])
                if not rest:
                    break
                yield Shuffle(rest, "reshuffle")
                for h in rest:
                    self.zones.move(h, "deck")
                self.emit("reshuffle", f"the pile is shuffled into a new deck of {len(rest)}")
            h = self.zones["deck"][0]
            self.zones.move(h, f"hand:{seat}")
            got.append(h)
        if got:
            faces = yield from self.reveal(got, to={seat}, reason="draw")
            said = verb.replace("{n}", _cards(len(got)))
            self.emit("draw", f"seat {seat} {said}", seat, n=len(got))
            shown = " ".join(str(faces[h]) for h in got if h in faces)
            self.emit("draw:private", f"seat {seat} gets {shown}", seat, audience={seat})
        elif n:
            self.emit("draw:empty", f"seat {seat} draws nothing: no cards are left", seat)
        return got

    # ---- views -------------------------------------------------------------------------------

    def _legal_turn(self, seat: int) -> list[Action]:
        hand = self.hand(seat)
        out: list[Action] = [Draw(seat, self.book.required_words("draw", None, False))]
        for h in hand:
            face = self.face_for(seat, h)
            out.extend(self._play_forms(seat, h, face, len(hand) == 1, "play"))
        if not self.proposed:
            out.append(ProposeEnd(seat))
        return out

    def _legal_drawn(self, seat: int) -> list[Action]:
        assert self.drawn is not None
        face = self.face_for(seat, self.drawn)
        return [
            *self._play_forms(seat, self.drawn, face, len(self.hand(seat)) == 1, "draw_play"),
            EndTurn(seat),
        ]

    def _legal_window(self, seat: int) -> list[Action]:
        return [Pass(seat), Call(seat, 0)] + [Call(seat, n) for n in self.book.free_text_numbers()]

    def _legal_vote(self, seat: int) -> list[Action]:
        return [Vote(seat, True), Vote(seat, False)]

    def _legal_end_vote(self, seat: int) -> list[Action]:
        return [VoteEnd(seat, True), VoteEnd(seat, False)]

    def _legal_interlude(self, seat: int) -> list[Action]:
        out: list[Action] = [KeepRule(seat)]
        standings = self.standings()
        for spec in catalogue():
            try:
                self.book.validate(spec, standings)
            except BadRule:
                continue
            out.append(Spend(seat, spec, (self.next_of(seat),) * SPEND_DEAL))
            break
        return out

    def _play_forms(
        self, seat: int, h: int, face: Card | None, emptying: bool, kind: str
    ) -> list[Action]:
        """One action per way of playing ``h`` with the announcements its face needs
        (the rule a card must create is left ``None`` for the player to fill in)."""
        words: tuple[str, ...] = ()
        suits: tuple[int | None, ...] = (None,)
        if face is not None:
            words = self.book.required_words(kind, face, emptying)
            if kind == "draw_play":
                words = tuple(w for w in words if w not in self.draw_words)
            if face in self.book.compiled.wild:
                suits = SUITS
        if kind == "play":
            return [Play(seat, h, words, s) for s in suits]
        return [PlayDrawn(seat, words, s) for s in suits]

    def view(self, seat: int) -> dict[str, Any]:
        pile = self.zones["pile"]
        return {
            "phase": self.phase,
            "seat": seat,
            "seats": self.seats,
            "current": self.current,
            "direction": self.direction,
            "turns": self.turns,
            "hand": self.cards_view(seat, self.hand(seat)),
            "hand_sizes": tuple(len(self.hand(s)) for s in range(self.seats)),
            "deck_size": len(self.zones["deck"]),
            "pile_size": len(pile),
            "top": self.card_view(seat, pile[0]) if pile else None,
            "named_suit": self.named_suit,
            "stack": self.stack,
            "lost": tuple(self.lost),
            "book": self.book,
            "rules": self.book.lines(),
            "pending_rules": tuple(self.pending_rules),
            "unmaus": tuple(self.unmaus),
            "created": tuple(self.created),
            "move": self.move,
            "drawn": self.card_view(seat, self.drawn) if self.drawn is not None else None,
            "draw_words": self.draw_words if self.drawn is not None else (),
            "answers": tuple(sorted(self.answers.items())) if self.phase == "window" else (),
            "voting": self.voting,
            "proposed": self.proposed,
            "gone": self.gone,
        }

    def public_state(self) -> Any:
        return {
            "rules": self.book.rules,
            "current": self.current,
            "direction": self.direction,
            "skip": self.skip,
            "lost": self.lost,
            "again": self.again,
            "stack": self.stack,
            "named_suit": self.named_suit,
            "pending_rules": self.pending_rules,
            "unmaus": self.unmaus,
            "created": self.created,
            "move": self.move,
            "move_handle": self.move_handle,
            "move_rule": self.move_rule,
            "draw_words": self.draw_words,
            "drawn": self.drawn,
            "order": self.order,
            "answers": {str(k): v for k, v in self.answers.items()},
            "calls": self.calls,
            "voting": self.voting,
            "votes": {str(k): v for k, v in self.votes.items()},
            "queue": self.queue,
            "proposed": self.proposed,
            "end_votes": {str(k): v for k, v in self.end_votes.items()},
            "winner": self.winner,
            "end_reason": self.end_reason,
        }

    def outcome(self) -> Outcome:
        if not self.is_over():
            raise EngineError("the game is not over")
        sizes = [len(self.hand(s)) for s in range(self.seats)]
        rest = sorted((s for s in self.present() if s != self.winner), key=lambda s: sizes[s])
        rest += reversed(self.gone)  # seats that left come last, the first to leave last
        if self.winner is not None:
            return Outcome((self.winner, *rest), reason=self.end_reason, scores=tuple(sizes))
        return Outcome(tuple(rest), draw=True, reason=self.end_reason, scores=tuple(sizes))

    PHASES = {
        "setup": Phase(),
        "turn": Phase(
            {Play: _on_play, Draw: _on_draw, ProposeEnd: _on_propose_end}, legal=_legal_turn
        ),
        "drawn": Phase({PlayDrawn: _on_play_drawn, EndTurn: _on_end_turn}, legal=_legal_drawn),
        "window": Phase({Call: _on_call, Pass: _on_pass}, legal=_legal_window),
        "vote": Phase({Vote: _on_vote}, legal=_legal_vote),
        "interlude": Phase({Spend: _on_spend, KeepRule: _on_keep_rule}, legal=_legal_interlude),
        "end_vote": Phase({VoteEnd: _on_vote_end}, legal=_legal_end_vote),
        "over": Phase(),
    }


def _cards(n: int) -> str:
    """A number of cards in words: "1 card", "3 cards"."""
    return f"{n} card" if n == 1 else f"{n} cards"
