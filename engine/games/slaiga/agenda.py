"""Slaiga's turn structure: the agenda and the handlers of every action and automatic step.

Everything that still has to happen is an *agenda*: a public list of ``Task``
records. The head task decides the phase and the seat to move (``Slaiga.PHASES``
in ``rules`` maps each phase to its actions, or to the automatic step that runs
it). Automatic steps (reveal the next six cards, move the volley to the
discard pile, blind pick, finish a seat, pass the turn, resolve a check that no
joker can cancel) run without an action. A rule that has consequences pushes
them as tasks, in the rulebook's order, e.g. a conceded volley pushes ``give``
(payer chooses the penalty cards), ``place`` (receiver places them),
``volley_discard``, ``reload`` of the loser, ``reload`` of the winner,
``next_turn`` after the attacker.

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

Leaving (``Game.leave``, a table with the ``survive`` option; docs/rules/slaiga.md)
-----------------------------------------------------------------------------------
The seat is out as if eliminated: it ranks below every seat still playing (a seat that
had already gone out keeps its place), its hand and the cards it had yet to place
leave play face down, and every task of it or owed to it is dropped. A volley it is
part of ends there with no penalty: the volley's cards leave play face down, the other
player reloads, and the turn passes on. A win claim of its own lapses; a win check it
was asked or had called is skipped, and the asking goes on. When the turn's business is
all dropped, the turn passes on from the seat whose turn it was. With one seat left in
play, the game ends.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, ClassVar

from engine.cards import ACE, JACK, JOKER_RANK, KING, QUEEN, SUIT_SYMBOLS, Card, standard_deck
from engine.errors import FalseClaim
from engine.game import Action, Game, Handler, Outcome
from engine.games.slaiga.actions import (
    DISCARD,
    DRAW,
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
    KingLook,
    Miss,
    MissVerdict,
    Pass,
    Place,
    QueenSwap,
    Shoot,
    ShotCard,
    Swap,
)
from engine.games.slaiga.events import CheckCalled, Dealt, Handed, Played, Verdict, VolleyEnded
from engine.games.slaiga.hands import (
    CHECK_PLACE,
    FALSE_MISS_PENALTY,
    HAND_SIZE,
    LOOK_COUNT,
    MISS_LIMIT,
    N_JOKERS,
    PENALTY_CAP,
    QUEEN_REACH,
    SWAP_MAX,
    AtLeastOfSuit,
    VolleyCard,
    claim_holds,
    has_straight_flush,
    is_bullet,
    is_shoot,
    next_suit,
)
from engine.obligations import FewerOfSuit, JointRandom, Prove, Reveal, Shuffle, Transfer


@dataclass(frozen=True, slots=True)
class Task:
    """One agenda entry. ``seat`` moves (interactive tasks); the rest is per kind.

    give: seat pays ``n`` cards to ``other``. place: seat places its received
    cards. place_hand: seat places ``n`` cards from hand. reload: seat draws up
    to ``n`` cards in hand. swap: ``n`` swaps left among pile ``handles``.
    win_ask: seat may check ``other``'s claim; ``handles`` are the seats still to
    ask. check_response: seat (checked) answers ``other``'s check of ``tag``.
    shot_card: seat shoots ``other`` with target suit ``n``.
    """

    HASH_TAG: ClassVar[str] = "Step"  # its name in the state-hash format

    kind: str
    seat: int = -1
    other: int = -1
    n: int = 0
    handles: tuple[int, ...] = ()
    tag: str = ""


# Tasks are values; the agenda takes shared instances (a frozen dataclass is slow to build
# and a game pushes a few per action). Bounded: swap and win-ask tasks carry handle tuples.
task_of = lru_cache(maxsize=4096)(Task)


class Volley:
    """The volley being played: its cards, shots so far, and whether the last card's
    check was cancelled."""

    __slots__ = ("kind", "attacker", "defender", "target", "plays", "shots", "checked")

    def __init__(self, kind: str, attacker: int, defender: int, target: int) -> None:
        self.kind = kind  # "suit" | "jack"
        self.attacker = attacker
        self.defender = defender
        self.target = target
        self.plays: list[VolleyCard] = []
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


class SlaigaAgenda(Game):
    """The state of a Slaiga table, its agenda, and the handler of every action and
    automatic step; ``rules.Slaiga`` binds them to phases. ``LYING`` tells the variants
    apart (``slaiga`` lets shots and blocks lie face down; ``honest-slaiga`` does not).
    """

    LYING: ClassVar[bool] = True

    def __init__(self, seats: int, options: Any = None) -> None:
        super().__init__(seats, options)
        self.agenda: list[Task] = []
        self.volley: Volley | None = None
        self.current = 0
        self.active = [True] * seats
        self.places: list[int] = []
        self.over = False
        self.capped = False
        self._hand_zones = tuple(f"hand:{s}" for s in range(seats))
        self._place_zones = tuple(f"place:{s}" for s in range(seats))

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
        hands = []
        for s in range(self.seats):
            hand = tuple(self.zones[DRAW][:HAND_SIZE])
            for h in hand:
                self.zones.move(h, f"hand:{s}")
            hands.append((s, hand))
        yield from self.deal(hands)
        self.emit(
            "deal",
            f"{HAND_SIZE} cards dealt to each of {self.seats} players",
            detail=Dealt(HAND_SIZE, self.seats),
        )
        if self.options["turn_up_discard"]:
            h = self.zones[DRAW][0]
            self.zones.move(h, DISCARD, 0)
            faces = yield Reveal((h,), None, "turn up")
            self.emit("turn-up", f"discard pile starts with {faces[h]}", card=faces[h])
        yield from self._expose_top()
        self.agenda = [task_of("turn", 0)]

    # ---- the agenda -------------------------------------------------------------------

    def _push(self, *tasks: Task) -> None:
        self.agenda[0:0] = tasks

    def _task_done(self, task: Task) -> bool:
        k = task.kind
        if k == "give":
            return task.n <= 0 or not self.zones[self._hand_zones[task.seat]]
        if k == "place":
            return not self.zones[self._place_zones[task.seat]]
        if k == "place_hand":
            return task.n <= 0 or not self.zones[self._hand_zones[task.seat]]
        if k == "reload":
            return len(self.zones[self._hand_zones[task.seat]]) >= task.n or not (
                self.zones[DRAW] or self.zones[DISCARD]
            )
        if k == "swap":
            return task.n <= 0 or not task.handles or not self.zones[self._hand_zones[task.seat]]
        if k == "give_back":
            return not self.zones[self._hand_zones[task.seat]]
        return False

    def next_phase(self) -> str:
        """The head task's kind, once finished tasks are dropped (``over`` when none is
        left); the game runs automatic ones at once (``Game`` does, from ``PHASES``)."""
        while self.agenda and not self.over:
            task = self.agenda[0]
            if self._task_done(task):
                self.agenda.pop(0)
                continue
            return task.kind
        self.agenda.clear()
        return "over"

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
        if not self.zones[action.source]:
            raise self.illegal(action, f"the {action.source} pile is empty")

    def _reveal_public(self, handles: tuple[int, ...], reason: str) -> Handler:
        need = tuple(h for h in handles if not self.is_public(h))
        if need:
            yield Reveal(need, None, reason)
        return {h: self.faces.get(h) for h in handles}

    def _reload_tasks(self, loser: int, winner: int) -> tuple[Task, Task]:
        first, second = (loser, winner) if self.options["loser_reloads_first"] else (winner, loser)
        return task_of("reload", first, n=HAND_SIZE), task_of("reload", second, n=HAND_SIZE)

    def _penalty(self, payer: int, receiver: int, n: int, attacker: int) -> tuple[Task, ...]:
        return (
            task_of("give", payer, receiver, n),
            task_of("place", receiver),
            task_of("volley_discard"),
            *self._reload_tasks(payer, receiver),
            task_of("next_turn", attacker),
        )

    def _known_suit_count(self, seat: int, suit: int) -> int | None:
        """Cards of ``suit`` in ``seat``'s hand if this instance may see them all."""
        faces = [self.face_for(seat, h) for h in self.hand(seat)]
        if any(f is None for f in faces):
            return None
        return sum(1 for f in faces if f.suit == suit)

    # ---- turn ---------------------------------------------------------------------------

    def _on_draw(self, a: Draw) -> Handler:
        self._validate_draw(a)
        self.agenda.pop(0)
        yield from self._take(a.seat, a.source)
        self._push(task_of("discard", a.seat))

    def _check_target(self, a: Shoot | JackShot) -> None:
        target = a.target
        if target == a.seat or not self.active[target]:
            raise self.illegal(a, f"seat {target} is not an opponent in play")

    def _on_jack_shot(self, a: JackShot) -> Handler:
        seat, target = a.seat, a.target
        self._check_target(a)
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
        v.plays.append(VolleyCard(seat, a.card, "jack", -1, False))
        v.shots = 1
        self.volley = v
        self.emit(
            "jack-shot",
            f"seat {seat} jack-shoots seat {target} with {faces[a.card]}",
            seat,
            target=target,
        )
        self._push(task_of("answer", target))

    def _on_shoot(self, a: Shoot) -> None:
        seat = a.seat
        self._check_target(a)
        if not self.LYING:
            faces = [self.face_for(seat, h) for h in self.hand(seat)]
            if None not in faces and not any(
                is_shoot(f) and f.suit == next_suit(a.suit) for f in faces
            ):
                raise self.illegal(a, f"no shoot card of {SUIT_SYMBOLS[next_suit(a.suit)]} in hand")
        self.agenda.pop(0)
        self._push(task_of("shot_card", seat, a.target, a.suit))

    def _on_shot_card(self, a: ShotCard) -> Handler:
        task = self.agenda[0]
        seat, target = task.seat, task.other
        self._require_in_hand(a, a.card)
        a_suit = task.n
        card = VolleyCard(seat, a.card, "shot", next_suit(a_suit), bool(a.ace))
        if not self.LYING:
            self._validate_honest(a, card)
        self.agenda.pop(0)
        self.zones.move(a.card, "volley")
        v = Volley("suit", seat, target, a_suit)
        v.plays.append(card)
        v.shots = 1
        self.volley = v
        shown = ""
        face = None
        if not self.LYING:
            faces = yield from self._reveal_public((a.card,), "shot")
            face = faces[a.card]
            self._verify_honest(card, face)
            shown = f" with {face}"
        claim = self._claim_text(card)
        self.emit(
            "shot",
            f"seat {seat} shoots seat {target}: {SUIT_SYMBOLS[a_suit]} target, {claim}{shown}",
            seat,
            detail=Played(card.role, card.suit, card.ace, face, target, a_suit),
            target=target,
            suit=a_suit,
        )
        self._push(task_of("answer", target))

    def _claim_text(self, card: VolleyCard) -> str:
        sym = SUIT_SYMBOLS[card.suit]
        return f"{'ace ' if card.ace else ''}{sym} {card.role}"

    def _validate_honest(self, a: Action, card: VolleyCard) -> None:
        """Honest plays are face up: the player's own engine checks them early."""
        face = self.face_for(a.seat, card.handle)
        if face is None:
            return
        if face.suit != card.suit:
            raise self.illegal(a, f"{face} is not {SUIT_SYMBOLS[card.suit]} (the required suit)")
        if card.role == "shot" and not is_shoot(face):
            raise self.illegal(a, f"{face} is not a shoot card (J, Q, K or A)")
        if card.role == "block" and not self.options["block_any"] and not is_shoot(face):
            raise self.illegal(a, f"{face} is not a shoot card (blocks must be, at this table)")
        if card.ace != (face.rank == ACE):
            raise self.illegal(a, f"the ace flag does not match {face}")

    def _verify_honest(self, card: VolleyCard, face: Card) -> None:
        if not claim_holds(card, face, self.options["block_any"]) or card.ace != (face.rank == ACE):
            raise FalseClaim(card.seat, f"face-up {card.role} {face} breaks the volley rules")

    # ---- discard, claims, king and queen ---------------------------------------------------

    def _on_discard(self, a: Discard) -> Handler:
        seat = a.seat
        self._require_in_hand(a, a.card)
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
        then = [task_of("next_turn", seat)]
        if a.declare:
            if face.rank not in (KING, QUEEN):
                raise FalseClaim(seat, f"declared an ability on {face}")
            then.insert(0, task_of("king" if face.rank == KING else "queen", seat))
        self._push(*then)

    def _on_claim_win(self, a: ClaimWin) -> Handler:
        seat = a.seat
        self._require_in_hand(a, a.card)
        rest = [h for h in self.hand(seat) if h != a.card]
        if not self.LYING:
            faces = [self.face_for(seat, h) for h in rest]
            if None not in faces and not has_straight_flush(faces, self.options["wrap_straights"]):
                raise self.illegal(a, "honest slaiga: the hand left holds no straight flush")
        self.agenda.pop(0)
        self.zones.move(a.card, DISCARD, 0)
        self.emit("claim", f'seat {seat} puts a card face down and says "slaiga"', seat)
        if not self.LYING:
            shown_faces = yield from self._reveal_public(tuple(rest), "win claim")
            if not has_straight_flush(shown_faces.values(), self.options["wrap_straights"]):
                raise FalseClaim(seat, "win claim without a straight flush")
            shown = " ".join(str(shown_faces[h]) for h in rest)
            self.emit("win:proved", f"seat {seat} shows {shown}", seat)
            self._push(task_of("finish", seat), task_of("next_turn", seat))
            return
        self._push(*self._win_round(seat, self._others_in_order(seat)))

    def _win_round(self, claimer: int, ask: tuple[int, ...]) -> tuple[Task, ...]:
        if ask:
            return (task_of("win_ask", ask[0], claimer, handles=ask[1:]),)
        return task_of("finish", claimer), task_of("next_turn", claimer)

    def _on_king(self, a: KingLook) -> Handler:
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

    def _on_queen(self, a: QueenSwap) -> Handler:
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

    def _on_concede(self, a: Concede) -> Handler:
        v = self.volley
        assert v is not None
        seat = a.seat
        prove = self._honest_first(a, v)
        self.agenda.pop(0)
        if prove:
            yield self._at_least(seat, v.target)
        self.emit("concede", f"seat {seat} concedes after {v.shots} shot(s)", seat, shots=v.shots)
        self._end_volley(loser=seat, penalty=v.shots)

    def _on_miss(self, a: Miss) -> Handler:
        v = self.volley
        assert v is not None
        seat = a.seat
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
            self._push(task_of("miss_answer", v.attacker, seat))

    def _on_check_card(self, a: Check) -> None:
        """A shot/block check, given as the answer to the face-down card."""
        v = self.volley
        assert v is not None
        seat = a.seat
        last = v.plays[-1]
        if not self.LYING or v.kind != "suit":
            raise self.illegal(a, "only face-down shots and blocks can be checked")
        if v.checked:
            raise self.illegal(a, "this card's check was cancelled; it cannot be checked again")
        self.agenda.pop(0)
        self.emit(
            "check-called",
            f"seat {seat} calls a {last.role} check",
            seat,
            detail=CheckCalled(last.role),
            check=last.role,
        )
        self._push(self._check_window(last.role, checked=last.seat, checker=seat))

    def _on_answer(self, a: Answer) -> Handler:
        v = self.volley
        assert v is not None
        seat = a.seat
        last = v.plays[-1]
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
            v.plays.append(VolleyCard(seat, a.card, "jack", -1, False))
            if seat == v.attacker:
                v.shots += 1
            self.emit("jack-answer", f"seat {seat} answers with {faces[a.card]}", seat)
            self._push(task_of("answer", v.opponent(seat)))
            return
        role = "block" if seat == v.defender else "shot"
        card = VolleyCard(seat, a.card, role, next_suit(last.suit), bool(a.ace))
        if last.ace and not card.ace:
            raise self.illegal(a, "an ace can only be answered with an ace")
        if not self.LYING:
            self._validate_honest(a, card)
        prove = self._honest_first(a, v)
        self.agenda.pop(0)
        if prove:
            yield self._at_least(seat, v.target)
        self.zones.move(a.card, "volley")
        v.plays.append(card)
        v.checked = False
        if role == "shot":
            v.shots += 1
        shown = ""
        face = None
        if not self.LYING:
            faces = yield from self._reveal_public((a.card,), role)
            face = faces[a.card]
            self._verify_honest(card, face)
            shown = f" with {face}"
        kind = "block" if role == "block" else "countershot"
        played = Played(card.role, card.suit, card.ace, face, back=role != "block")
        self.emit(kind, f"seat {seat}: {self._claim_text(card)}{shown}", seat, detail=played)
        self._push(task_of("answer", v.opponent(seat)))

    def _miss_penalty(self, v: Volley) -> tuple[Task, ...]:
        return self._penalty(v.attacker, v.defender, 1, v.attacker)

    def _end_volley(self, loser: int, penalty: int) -> None:
        v = self.volley
        assert v is not None
        winner = v.opponent(loser)
        if v.kind == "jack":
            self._push(
                task_of("jack_pick", winner, loser),
                task_of("volley_discard"),
                *self._reload_tasks(loser, winner),
                task_of("next_turn", v.attacker),
            )
        else:
            self._push(*self._penalty(loser, winner, penalty, v.attacker))

    def _on_accept_miss(self, a: Pass) -> None:
        v = self.volley
        assert v is not None
        self.agenda.pop(0)
        self.emit("miss-accepted", f"seat {a.seat} accepts the miss", a.seat)
        self._push(*self._miss_penalty(v))

    def _on_check_miss(self, a: Check) -> None:
        v = self.volley
        assert v is not None
        self.agenda.pop(0)
        self.emit(
            "check-called",
            f"seat {a.seat} calls a miss check",
            a.seat,
            detail=CheckCalled("miss"),
            check="miss",
        )
        self._push(self._check_window("miss", checked=v.defender, checker=a.seat))

    def _check_window(
        self, tag: str, checked: int, checker: int, ask: tuple[int, ...] = ()
    ) -> Task:
        if self.options["jokers"] or tag == "miss":
            return task_of("check_response", checked, checker, handles=ask, tag=tag)
        return task_of("resolve_check", checked, checker, handles=ask, tag=tag)

    # ---- checks -----------------------------------------------------------------------------

    def _on_cancel_check(self, a: CancelCheck) -> Handler:
        task = self.agenda[0]
        seat, checker, tag = task.seat, task.other, task.tag
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
        draw_one = task_of("reload", seat, n=len(self.hand(seat)) + 1)
        v = self.volley
        if tag in ("shot", "block"):
            assert v is not None
            v.checked = True
            self._push(draw_one, task_of("answer", checker))
        elif tag == "miss":
            assert v is not None
            self._push(draw_one, *self._miss_penalty(v))
        else:
            self._push(draw_one, *self._win_round(seat, task.handles))

    def _on_miss_verdict(self, a: MissVerdict) -> Handler:
        task = self.agenda[0]
        seat, checker = task.seat, task.other
        if task.tag != "miss":
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

    def _on_accept_check(self, a: AcceptCheck) -> Handler:
        task = self.agenda[0]
        if task.tag == "miss":
            raise self.illegal(a, "a miss check is answered with MissVerdict or a joker")
        self.agenda.pop(0)
        yield from self._resolve(task.tag, task.seat, task.other, task.handles)

    def _auto_resolve_check(self) -> Handler:
        task = self.agenda.pop(0)
        yield from self._resolve(task.tag, task.seat, task.other, task.handles)

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
                    task_of("give", a_seat, d_seat, 1),
                    task_of("place", d_seat),
                )
            )
            self._push(
                *extra,
                task_of("place_hand", a_seat, n=CHECK_PLACE),
                task_of("look", d_seat),
                task_of("volley_discard"),
                *self._reload_tasks(a_seat, d_seat),
                task_of("next_turn", a_seat),
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
                    task_of("finish", checked),
                    task_of("place_hand", checker, n=CHECK_PLACE),
                    task_of("reload", checker, n=HAND_SIZE),
                    task_of("next_turn", checked),
                )
            else:
                self.emit(
                    "check:win:liar",
                    f"seat {checked} shows {shown}: a lie",
                    checked,
                    checker=checker,
                )
                self._push(
                    task_of("place_hand", checked, n=len(hand)),
                    task_of("reload", checked, n=HAND_SIZE),
                    task_of("next_turn", checked),
                )
            return
        v = self.volley
        assert v is not None
        card = v.plays[-1]
        faces = yield from self._reveal_public((card.handle,), f"{tag} check")
        face = faces[card.handle]
        true = claim_holds(card, face, self.options["block_any"])
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
            detail=Verdict(tag, face, true, pay),
            pay=pay,
        )
        if true and not self.options["check_ends_volley"]:
            v.checked = True
            self._push(
                task_of("give", payer, checked, pay),
                task_of("place", checked),
                task_of("answer", checker),
            )
            return
        self._push(*self._penalty(payer, v.opponent(payer), pay, v.attacker))

    # ---- win checks -------------------------------------------------------------------------

    def _on_pass_win(self, a: Pass) -> None:
        task = self.agenda.pop(0)
        self.emit("win-pass", f"seat {a.seat} does not check", a.seat)
        self._push(*self._win_round(task.other, task.handles))

    def _on_check_win(self, a: Check) -> None:
        task = self.agenda.pop(0)
        claimer = task.other
        self.emit(
            "check-called",
            f"seat {a.seat} calls a win check on seat {claimer}",
            a.seat,
            check="win",
        )
        self._push(self._check_window("win", checked=claimer, checker=a.seat, ask=task.handles))

    # ---- penalties, placing, swaps, reloads ---------------------------------------------------

    def _on_give(self, a: Give) -> Handler:
        task = self.agenda[0]
        self._require_in_hand(a, a.card)
        self.agenda[0] = task_of("give", task.seat, task.other, task.n - 1)
        self.zones.move(a.card, self._place_zones[task.other])
        yield Transfer(a.card, task.seat, task.other, "penalty")
        self.emit(
            "penalty-card", f"seat {task.seat} gives seat {task.other} a penalty card", task.seat
        )

    def _on_place(self, a: Place) -> Handler:
        task = self.agenda[0]
        zone = (self._place_zones if task.kind == "place" else self._hand_zones)[a.seat]
        if a.card not in self.zones[zone]:
            raise self.illegal(a, f"card #{a.card} is not among the cards to place")
        if a.position > len(self.zones[DRAW]):
            raise self.illegal(a, f"position {a.position} is outside 0..{len(self.zones[DRAW])}")
        if task.kind == "place_hand":
            self.agenda[0] = task_of("place_hand", task.seat, n=task.n - 1)
        self.zones.move(a.card, DRAW, a.position)
        self.emit(
            "place",
            f"seat {a.seat} places a card at position {a.position}",
            a.seat,
            position=a.position,
        )
        if a.position == 0:
            yield from self._expose_top()

    def _auto_look(self) -> Handler:
        task = self.agenda.pop(0)
        handles = tuple(self.zones[DRAW][:LOOK_COUNT])
        if handles:
            yield Reveal(handles, frozenset((task.seat,)), "look")
        self.emit(
            "look", f"seat {task.seat} looks at the next {len(handles)} draw-pile cards", task.seat
        )
        self._push(task_of("swap", task.seat, n=SWAP_MAX, handles=handles))

    def _on_stop_swapping(self, a: Pass) -> None:
        self.agenda.pop(0)

    def _on_swap(self, a: Swap) -> Handler:
        task = self.agenda[0]
        self._require_in_hand(a, a.card)
        if a.pile_card not in task.handles:
            raise self.illegal(a, f"card #{a.pile_card} is not one of the looked-at cards left")
        rest = tuple(h for h in task.handles if h != a.pile_card)
        self.agenda[0] = task_of("swap", task.seat, n=task.n - 1, handles=rest)
        idx = self.zones[DRAW].index(a.pile_card)
        self.zones.move(a.pile_card, f"hand:{a.seat}")
        self.zones.move(a.card, DRAW, idx)
        self.emit(
            "swap", f"seat {a.seat} swaps a card at draw-pile position {idx}", a.seat, position=idx
        )
        if idx == 0:
            yield from self._expose_top()

    def _on_reload(self, a: Draw) -> Handler:
        self._validate_draw(a)
        yield from self._take(a.seat, a.source)

    def _auto_volley_discard(self) -> Handler:
        self.agenda.pop(0)
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
            detail=VolleyEnded(v.kind == "jack", v.attacker, v.defender, len(plays), v.shots),
            length=len(plays),
            shots=v.shots,
        )
        self.volley = None

    def _auto_jack_pick(self) -> Handler:
        task = self.agenda.pop(0)
        winner, loser = task.seat, task.other
        hand = tuple(self.hand(loser))
        if not hand:
            return
        idx = yield JointRandom(len(hand), "jack pick")
        h = hand[idx]
        self.zones.move(h, f"hand:{winner}")
        yield Transfer(h, loser, winner, "jack pick")
        self.emit(
            "jack-pick",
            f"seat {winner} takes a blind card from seat {loser}",
            winner,
            detail=Handed(loser, winner),
            loser=loser,
        )
        self._push(task_of("give_back", winner, loser))

    def _on_give_back(self, a: GiveBack) -> Handler:
        task = self.agenda[0]
        self._require_in_hand(a, a.card)
        self.agenda.pop(0)
        self.zones.move(a.card, f"hand:{task.other}")
        yield Transfer(a.card, task.seat, task.other, "jack give-back")
        self.emit(
            "give-back",
            f"seat {task.seat} gives seat {task.other} a card back",
            task.seat,
            detail=Handed(task.seat, task.other),
        )

    def _auto_finish(self) -> None:
        seat = self.agenda.pop(0).seat
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

    def _auto_next_turn(self) -> None:
        seat = self.agenda.pop(0).seat
        self.turns += 1
        if self.turns >= self.options["max_turns"]:
            self.capped = True
            self.over = True
            self.agenda.clear()
            self.emit(
                "turn-cap", f"turn cap {self.options['max_turns']} reached: the game is a draw"
            )
            return
        self.current = self._next_active(seat)
        self._push(task_of("turn", self.current))

    # ---- leaving ---------------------------------------------------------------------------------

    def on_leave(self, seat: int) -> None:
        self.retire(self.zones[self._hand_zones[seat]])
        self.retire(self.zones[self._place_zones[seat]])
        self.active[seat] = False
        self.emit("out", f"seat {seat} is out: its cards leave play face down", seat)
        left = [s for s in range(self.seats) if self.active[s]]
        if len(left) <= 1:
            for s in left:
                self.places.append(s)
                self.active[s] = False
                self.emit("finish", f"seat {s} is the last in play", s, place=len(self.places))
            self.over = True
            self.agenda.clear()
            return
        v = self.volley
        if v is not None and seat in (v.attacker, v.defender):
            other = v.opponent(seat)
            self.retire(p.handle for p in v.plays)
            self.volley = None
            self.emit("volley-void", f"the volley with seat {seat} ends with no penalty", other)
            kept = [t for t in self.agenda if t.kind in ("place", "reload") and t.seat != seat]
            if self.active[other] and task_of("reload", other, n=HAND_SIZE) not in kept:
                kept.append(task_of("reload", other, n=HAND_SIZE))
            self.agenda = [*kept, task_of("next_turn", self.current)]
            return
        agenda: list[Task] = []
        for t in self.agenda:
            if t.kind == "win_ask" and seat in (t.seat, t.other):
                if t.other != seat:  # the asked seat left: ask the next one
                    agenda.extend(self._win_round(t.other, self._without(t.handles, seat)))
                continue
            if t.tag == "win" and t.kind in ("check_response", "resolve_check"):
                if t.seat == seat:
                    continue  # the claimer left: its claim lapses
                if t.other == seat:  # the checker left: the asking goes on
                    agenda.extend(self._win_round(t.seat, self._without(t.handles, seat)))
                    continue
                t = task_of(t.kind, t.seat, t.other, t.n, self._without(t.handles, seat), t.tag)
            elif seat in (t.seat, t.other) and t.kind != "next_turn":
                continue  # (the turn still passes on from it)
            agenda.append(t)
        if not agenda:
            agenda.append(task_of("next_turn", self.current))
        self.agenda = agenda

    @staticmethod
    def _without(seats: tuple[int, ...], seat: int) -> tuple[int, ...]:
        return tuple(s for s in seats if s != seat)

    # ---- queries --------------------------------------------------------------------------------

    def to_move(self) -> tuple[int, ...]:
        if self._pending is not None or self.over or not self.agenda:
            return ()
        return (self.agenda[0].seat,)

    def is_over(self) -> bool:
        return self.over

    def outcome(self) -> Outcome:
        gone = tuple(s for s in reversed(self.gone) if s not in self.places)
        if self.capped:
            rest = tuple(s for s in range(self.seats) if s not in self.places and s not in gone)
            return Outcome(tuple(self.places) + rest + gone, draw=True, reason="turn cap reached")
        return Outcome(tuple(self.places) + gone, reason="one seat left")

    def public_state(self) -> Any:
        return {
            "agenda": tuple(self.agenda),
            "volley": self.volley.public() if self.volley else None,
            "current": self.current,
            "active": tuple(self.active),
            "places": tuple(self.places),
            "capped": self.capped,
        }
