"""Slave (docs/rules/slave.md): shed your hand in sets; the first out is KING.

One ``Slave`` object is a whole *match* of ``games`` deals (table option,
default 5 [house]); ``games=1`` is a single deal.

Phases (one table, ``Slave.PHASES``):

* ``opening`` (first deal only): the holder of 3♣ must open with a set of 3s
  containing it. No peer knows where 3♣ is, so seats are asked one at a time
  in ascending seat order: a seat without 3♣ answers ``NotOpener``, backed by
  a ``Prove(LacksCard(...))`` obligation; the holder answers ``Play``.
* ``exchange`` (deals 2+): four exchanges in a fixed order — SLAVE gives KING its
  2 highest cards (``Prove(HighestGiven)`` verified by KING, then
  ``Transfer``s), KING returns 2 of choice, VICE SLAVE gives QUEEN its highest
  card (proved), QUEEN returns 1. Only giver and receiver see the cards.
* ``play``: the current seat plays a set that beats the pile (or leads any
  set on an empty pile, where passing is not allowed) or passes. A pass
  locks the seat out of this pile.
* ``over``: the match has ended.

Rules decided here (and why):

* *Reversal* (the rules' worked example): when a seat plays its last cards,
  the next seat that may still play on the pile is "watched". If it passes,
  the direction flips at once and the turn runs on from the passer in the new
  direction; if it plays, that going-out causes no reversal.
* *Clearing*: when every other seat still in the deal has passed, the pile
  is cleared and the last player leads; if that seat is out, the next seat
  with cards in the current direction leads (option ``out_lead`` [house]).
* *Later deals* start with SLAVE, in the direction in which KING's turn comes
  as late as possible; a tie uses ``tie_direction`` [house].
* *King topple*: from deal 2 on, if someone other than the reigning KING goes
  out first, KING's cards go face down (never revealed) into ``facedown`` and
  KING places last (SLAVE next deal).
* *Dealing*: all 52 cards, one at a time, starting with seat 0 in deal 1 and
  with the SLAVE in later deals (so hands differ by at most one card).
* *Leaving* (``Game.leave``, a table with the ``survive`` option): the seat that
  left ranks last in this deal (unless it had gone out already: its place stands),
  its cards leave play face down, exchanges with it are skipped, and the match ends
  with this deal (the titles and exchanges of later deals assume the seats the match
  began with). If it leaves before the first deal is opened, 3♣ may have left with
  it, so the opening rule lapses and the seat to move leads any set. In the match
  ranking, seats that left come after every seat that stayed.
* *Match result*: each deal gives ``seats - 1 - place`` points (KING the most,
  SLAVE 0). The ranking orders seats by total points, ties broken by the
  final deal's order of going out; ``scores`` are the points.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

from engine.cards import CLUBS, SLAVE_RANKS, Card, slave_key, standard_deck
from engine.game import Action, CardView, Game, Handler, Outcome, Phase
from engine.games.slave.actions import (
    KING_GIVES,
    MAX_SET,
    QUEEN_GIVES,
    Give,
    NotOpener,
    Pass,
    Play,
)
from engine.games.slave.events import MatchOver
from engine.obligations import (
    FaceOf,
    HighestGiven,
    NoneOfFace,
    Prove,
    Reveal,
    Shuffle,
    Statement,
    Transfer,
)
from engine.options import OptionSpec

OPEN_CARD = Card(3, CLUBS)
FOUR = 4
ASCENDING, DESCENDING = 1, -1
RANK_INDEX = {r: i for i, r in enumerate(SLAVE_RANKS)}

KING_T, QUEEN_T, PEOPLE_T, VICE_T, SLAVE_T = "KING", "QUEEN", "PEOPLE", "VICE SLAVE", "SLAVE"


# ---- statement -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LacksCard(Statement):
    """None of ``handles`` (the seat's hand) is ``face``.

    Needed because nobody knows who holds 3♣: every seat before the opener
    proves it does not hold it (a per-card "not equal" proof, or an OR-proof
    over the other 51 faces, on a real table).
    """

    handles: tuple[int, ...]
    face: Card

    def holds(self, face_of: FaceOf) -> bool:
        return all(face_of(h) != self.face for h in self.handles)

    def shape(self) -> Statement:
        return NoneOfFace(self.seat, self.handles, self.face)

    def __str__(self) -> str:
        return f"seat {self.seat} does not hold {self.face} among {len(self.handles)} cards"


# ---- card logic ----------------------------------------------------------------


def set_problem(faces: Sequence[Card]) -> str | None:
    """Why ``faces`` is not a valid set, or ``None`` if it is one."""
    if not 1 <= len(faces) <= MAX_SET:
        return f"a set has 1-{MAX_SET} cards, not {len(faces)}"
    if len({f.rank for f in faces}) != 1:
        return "a set must be of one rank: " + " ".join(map(str, sorted(faces, key=slave_key)))
    return None


def beats(new: Sequence[Card], old: Sequence[Card]) -> bool:
    """Does set ``new`` beat set ``old`` (both valid sets)? docs/rules/slave.md, "Sets".

    Same rank: every suit of ``new`` must be above every suit of ``old``
    (the pair rule, "both suits higher than both suits", generalised). With
    one deck only singles and pairs can meet a set of their own rank (two
    triples or fours of one rank would need six or eight cards), so for
    triples and fours the rule is never reached in play.
    """
    if len(new) == FOUR and len(old) == 1:
        return True  # any four beats any single
    if len(new) != len(old):
        return False
    rn, ro = RANK_INDEX[new[0].rank], RANK_INDEX[old[0].rank]
    if rn != ro:
        return rn > ro
    # same rank: every suit of the new set above every suit of the old one
    return min(f.suit for f in new) > max(f.suit for f in old)


def set_text(faces: Sequence[Card]) -> str:
    return " ".join(str(f) for f in sorted(faces, key=slave_key))


def titles_for(placement: Sequence[int]) -> dict[int, str]:
    """Titles from the order of going out (best first)."""
    out = {s: PEOPLE_T for s in placement}
    out[placement[0]] = KING_T
    out[placement[1]] = QUEEN_T
    out[placement[-2]] = VICE_T
    out[placement[-1]] = SLAVE_T
    return out


# ---- the game ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Exchange:
    """One of a later deal's four exchanges: ``giver`` hands ``count`` cards to
    ``receiver``, its highest ones if ``highest``."""

    giver: int
    receiver: int
    count: int
    highest: bool  # must be the giver's highest cards (proved)


class Slave(Game):
    NAME = "slave"
    MIN_SEATS, MAX_SEATS = 4, 6
    OPTIONS = (
        OptionSpec("games", int, 5, "deals in the match [house]", minimum=1, maximum=100),
        OptionSpec(
            "tie_direction",
            str,
            "ascending",
            "direction of later deals when KING is equally far both ways [house]",
            choices=("ascending", "descending"),
        ),
        OptionSpec(
            "out_lead",
            str,
            "next",
            "who leads a new pile when its last player went out: the next seat with "
            "cards in the current direction (next) or against it (previous) [house]",
            choices=("next", "previous"),
        ),
    )

    def make_deck(self) -> Sequence[Card]:
        return standard_deck()

    # ---- setup and dealing -------------------------------------------------------

    def setup(self) -> Handler:
        n = self.seats
        self.zones.add("deck", range(len(self.deck)))
        for s in range(n):
            self.zones.add(f"hand:{s}")
        self.zones.add("pile")  # every set played on the current pile
        self.zones.add("discard")  # cleared piles
        self.zones.add("facedown")  # a toppled KING's cards
        self.hand_names = tuple(f"hand:{s}" for s in range(n))
        self.game_no = 0
        self.points = [0] * n
        self.placements: list[tuple[int, ...]] = []
        yield from self._new_deal()

    def _reset_deal(self) -> None:
        self.direction = ASCENDING
        self.current = 0
        self.active = set(range(self.seats))
        self.passed: set[int] = set()
        self.top: tuple[int, ...] = ()  # handles of the set to beat (() = leading)
        self._top_view: tuple[CardView, ...] = ()
        self.last: int | None = None  # who played the top set
        self.watch: int | None = None  # the seat whose pass would reverse
        self.out: list[int] = []
        self.toppled: int | None = None
        self.king: int | None = None  # reigning KING (deal 2+)
        self.exchanges: tuple[Exchange, ...] = ()
        self.exchange_no = 0

    def _new_deal(self) -> Handler:
        self.game_no += 1
        self._reset_deal()
        prev_titles = titles_for(self.placements[-1]) if self.placements else {}
        self._titles = tuple(prev_titles.get(s, "") for s in range(self.seats))
        first = 0
        if self.placements:
            prev = self.placements[-1]
            self.king, queen, vice, slave = prev[0], prev[1], prev[-2], prev[-1]
            first = slave
            self.exchanges = (
                Exchange(slave, self.king, KING_GIVES, True),
                Exchange(self.king, slave, KING_GIVES, False),
                Exchange(vice, queen, QUEEN_GIVES, True),
                Exchange(queen, vice, QUEEN_GIVES, False),
            )
        for name in ("pile", "discard", "facedown", *self.hand_names):
            for h in list(self.zones[name]):
                self.zones.move(h, "deck")
        yield Shuffle(tuple(self.zones["deck"]), "deal")
        deck = list(self.zones["deck"])
        for i, h in enumerate(deck):
            self.zones.move(h, self.hand_names[(first + i) % self.seats])
        yield from self.deal((s, self.zones[self.hand_names[s]]) for s in range(self.seats))
        self.emit("deal", f"deal {self.game_no} of {self.options['games']}", game=self.game_no)
        if self.exchanges:
            self.phase = "exchange"
        else:
            self.phase = "opening"
            self.current = 0

    # ---- turn order helpers -----------------------------------------------------

    def _next(self, frm: int, ok: set[int], direction: int | None = None) -> int | None:
        d = self.direction if direction is None else direction
        s = frm
        for _ in range(self.seats):
            s = (s + d) % self.seats
            if s in ok:
                return s
        return None

    def _start_play(self) -> None:
        """Deal 2+: SLAVE leads, away from KING (KING's turn as late as possible)."""
        slave, king = self.exchanges[0].giver, self.king
        assert king is not None
        up = (king - slave) % self.seats  # turns until KING going ascending
        down = self.seats - up
        if up > down:
            self.direction = ASCENDING
        elif down > up:
            self.direction = DESCENDING
        else:
            tie = self.options["tie_direction"]
            self.direction = ASCENDING if tie == "ascending" else DESCENDING
        self.phase = "play"
        if slave in self.gone:
            nxt = self._next(slave, self.active)
            assert nxt is not None
            slave = nxt
        self.current = slave
        way = "ascending" if self.direction == ASCENDING else "descending"
        self.emit(
            "start", f"seat {slave} (SLAVE) leads; play runs {way}, away from KING", seat=slave
        )

    # ---- actions ---------------------------------------------------------------------

    def _check_own(self, action: Action, handles: tuple[int, ...]) -> None:
        where = self.zones.where
        hand = self.hand_names[action.seat]
        for h in handles:
            if where(h) != hand:
                raise self.illegal(action, f"you do not hold card #{h!r}")
        if len(set(handles)) != len(handles):
            raise self.illegal(action, "a card is listed twice")

    def _play_problem(self, faces: Sequence[Card]) -> str | None:
        problem = set_problem(faces)
        if problem:
            return problem
        if self.phase == "opening" and OPEN_CARD not in faces:
            return f"the first deal opens with {OPEN_CARD} (alone or with other 3s)"
        if self.top:
            old = [self.faces[h] for h in self.top]
            if not beats(faces, old):
                return f"{set_text(faces)} does not beat {set_text(old)}"
        return None

    def _on_play(self, action: Play) -> Handler:
        seat, hs = action.seat, action.cards
        self._check_own(action, hs)
        known = [self.face_for(seat, h) for h in hs]
        checked = None not in known
        if checked and (problem := self._play_problem(known)):  # type: ignore[arg-type]
            raise self.illegal(action, problem)
        if not all(self.is_public(h) for h in hs):
            yield Reveal(hs, None, "play")
        faces = [self.faces[h] for h in hs]
        if not checked and (problem := self._play_problem(faces)):
            raise self.illegal(action, problem)  # only a cheating peer gets here
        # -- mutate
        for h in hs:
            self.zones.move(h, "pile")
        self.top = hs
        self._top_view = tuple(CardView(h, self.faces[h]) for h in hs)  # public now
        self.last = seat
        self.watch = None
        self.turns += 1
        if self.phase == "opening":
            self.phase = "play"
        self.emit("play", f"seat {seat} plays {set_text(faces)}", seat=seat, size=len(hs))
        if not self.zones[self.hand_names[seat]]:
            ended = yield from self._go_out(seat)
            if ended:
                return
        self._after_play(seat)

    def _go_out(self, seat: int) -> Handler:
        """``seat`` played its last cards; return whether the deal ended."""
        self.active.discard(seat)
        self.out.append(seat)
        self.emit("out", f"seat {seat} is out (place {len(self.out)})", seat=seat)
        king = self.king
        if king is not None and len(self.out) == 1 and seat != king and king in self.active:
            self.active.discard(king)
            self.toppled = king
            for h in list(self.zones[self.hand_names[king]]):
                self.zones.move(h, "facedown")
            self.emit("topple", f"seat {king} (KING) is toppled and leaves face down", seat=king)
        if len(self.active) <= 1:
            yield from self._end_deal()
            return True
        return False

    def _after_play(self, seat: int) -> None:
        contenders = self.active - self.passed
        contenders.discard(seat)
        if not contenders:
            self._clear()
            return
        nxt = self._next(seat, contenders)
        assert nxt is not None
        if seat not in self.active:
            self.watch = nxt  # a pass by this seat reverses the direction
        self.current = nxt

    def _on_pass(self, action: Pass) -> None:
        seat = action.seat
        if not self.top:
            raise self.illegal(action, "the leader of a new pile must play")
        self.passed.add(seat)
        self.turns += 1
        self.emit("pass", f"seat {seat} passes", seat=seat)
        if self.watch == seat:
            self.direction = -self.direction
            way = "ascending" if self.direction == ASCENDING else "descending"
            self.emit("reversal", f"the direction reverses (now {way})", seat=seat)
        self.watch = None
        contenders = self.active - self.passed
        assert self.last is not None
        contenders.discard(self.last)
        if not contenders:
            self._clear()
            return
        nxt = self._next(seat, contenders)
        assert nxt is not None
        self.current = nxt

    def _clear(self) -> None:
        for h in list(self.zones["pile"]):
            self.zones.move(h, "discard")
        last = self.last
        assert last is not None
        self.top = ()
        self._top_view = ()
        self.passed.clear()
        self.watch = None
        self.last = None
        if last in self.active:
            leader = last
        else:
            d = self.direction if self.options["out_lead"] == "next" else -self.direction
            nxt = self._next(last, self.active, d)
            assert nxt is not None
            leader = nxt
        self.current = leader
        self.emit("clear", f"the pile is cleared; seat {leader} leads", seat=leader)

    def _end_deal(self) -> Handler:
        placement = list(self.out) + sorted(self.active)
        if self.toppled is not None:
            placement.append(self.toppled)
        placement += [s for s in reversed(self.gone) if s not in placement]
        n = self.seats
        for place, s in enumerate(placement):
            self.points[s] += n - 1 - place
        self.placements.append(tuple(placement))
        titles = titles_for(placement)
        text = ", ".join(f"{titles[s]} seat {s}" for s in placement)
        self.emit("title", f"deal {self.game_no} titles: {text}", placement=tuple(placement))
        if self.game_no >= self.options["games"] or self.gone:
            self.phase = "over"
            self.emit(
                "match",
                f"match over; points {self.points}",
                detail=MatchOver(tuple(self.points)),
                points=tuple(self.points),
            )
            return
        yield from self._new_deal()

    def _on_not_opener(self, action: NotOpener) -> Handler:
        seat = action.seat
        hand = tuple(self.zones[self.hand_names[seat]])
        known = [self.face_for(seat, h) for h in hand]
        if None not in known and OPEN_CARD in known:
            raise self.illegal(action, f"you hold {OPEN_CARD} and must open")
        yield Prove(LacksCard(seat, hand, OPEN_CARD), "no 3♣")
        self.emit("no-opener", f"seat {seat} does not hold {OPEN_CARD}", seat=seat)
        self.current = (seat + 1) % self.seats

    def _on_give(self, action: Give) -> Handler:
        ex = self.exchanges[self.exchange_no]
        seat, hs = action.seat, action.cards
        if len(hs) != ex.count:
            raise self.illegal(action, f"give exactly {ex.count} card(s) to seat {ex.receiver}")
        if list(hs) != sorted(set(hs)):
            # one canonical order, so the order cannot tell which given card is higher
            raise self.illegal(action, "list the cards you give in ascending card-number order")
        self._check_own(action, hs)
        hand = self.zones[self.hand_names[seat]]
        rest = tuple(h for h in hand if h not in hs)
        if ex.highest:
            faces = {h: self.face_for(seat, h) for h in hand}
            if None not in faces.values():
                best = sorted(hand, key=lambda h: slave_key(faces[h]), reverse=True)  # type: ignore[arg-type]
                if set(best[: ex.count]) != set(hs):
                    need = set_text([faces[h] for h in best[: ex.count]])  # type: ignore[misc]
                    raise self.illegal(action, f"you must give your highest card(s): {need}")
            yield Prove(
                HighestGiven(seat, hs, rest, "slave", ex.receiver), "slave exchange: highest"
            )
        for h in hs:
            yield Transfer(h, seat, ex.receiver, "exchange")
            self.zones.move(h, self.hand_names[ex.receiver])
        given = " ".join(str(self.faces[h]) if h in self.faces else "?" for h in hs)
        self.emit(
            "exchange",
            f"seat {seat} gives seat {ex.receiver}: {given}",
            seat=seat,
            audience=(seat, ex.receiver),
        )
        self.emit("exchange:public", f"seat {seat} gives seat {ex.receiver} {len(hs)} card(s)")
        self.exchange_no += 1
        self._skip_exchanges()

    def _skip_exchanges(self) -> None:
        """Skip the exchanges of a seat that has left; start play after the last one."""
        while self.exchange_no < len(self.exchanges):
            ex = self.exchanges[self.exchange_no]
            if ex.giver not in self.gone and ex.receiver not in self.gone:
                return
            self.emit(
                "exchange:skipped",
                f"seat {ex.giver} gives seat {ex.receiver} nothing: one of them has left",
            )
            self.exchange_no += 1
        self._start_play()

    # ---- leaving ------------------------------------------------------------------------

    def on_leave(self, seat: int) -> Handler:
        """docs/rules/slave.md, "A player who leaves"."""
        self.retire(self.zones[self.hand_names[seat]])
        self.active.discard(seat)
        self.passed.discard(seat)
        if self.watch == seat:
            self.watch = None
        self.emit(
            "out",
            f"seat {seat} has left: its cards leave play face down, and the match ends"
            " with this deal",
            seat=seat,
        )
        if len(self.active) <= 1:
            yield from self._end_deal()
            return
        if self.phase == "exchange":
            self._skip_exchanges()
            return
        if self.phase == "opening":
            self.phase = "play"  # 3♣ may have left with the seat
            if self.current == seat:
                nxt = self._next(seat, self.active, ASCENDING)
                assert nxt is not None
                self.current = nxt
            self.emit(
                "clear", f"the opening rule lapses; seat {self.current} leads", seat=self.current
            )
            return
        if self.current != seat:
            return
        contenders = self.active - self.passed
        if self.top:
            contenders.discard(self.last)  # type: ignore[arg-type]
            if not contenders:
                self._clear()
                return
        nxt = self._next(seat, contenders)
        assert nxt is not None
        self.current = nxt

    # ---- queries ---------------------------------------------------------------------

    def to_move(self) -> tuple[int, ...]:
        if self._pending is not None or self.phase in ("over", "setup"):
            return ()
        if self.phase == "exchange":
            return (self.exchanges[self.exchange_no].giver,)
        return (self.current,)

    def _groups(self, seat: int) -> dict[int, list[tuple[int, int]]] | None:
        """The seat's hand by rank: rank -> [(suit, handle)] ascending by suit."""
        groups: dict[int, list[tuple[int, int]]] = {}
        seen = self.seen
        faces = self.faces
        bit = 1 << seat
        for h in self.zones[self.hand_names[seat]]:
            if not seen.get(h, 0) & bit or h not in faces:
                return None
            f = faces[h]
            groups.setdefault(f.rank, []).append((f.suit, h))
        for g in groups.values():
            g.sort()
        return groups

    def _legal_opening(self, seat: int) -> list[Action]:
        groups = self._groups(seat)
        if groups is None:
            return []  # this instance cannot see the seat's hand
        threes = groups.get(OPEN_CARD.rank, [])
        if not threes or threes[0][0] != CLUBS:
            return [NotOpener(seat)]
        opener, others = threes[0][1], [h for _, h in threes[1:]]
        out: list[Action] = []
        for k in range(len(others) + 1):
            for combo in combinations(others, k):
                out.append(Play(seat, (opener, *combo)))
        return out

    def _legal_play(self, seat: int) -> list[Action]:
        groups = self._groups(seat)
        if groups is None:
            return []  # this instance cannot see the seat's hand
        out: list[Action] = []
        ranks = sorted(groups, key=RANK_INDEX.__getitem__)
        if not self.top:
            for rank in ranks:
                hs = [h for _, h in groups[rank]]
                for k in range(1, len(hs) + 1):
                    for combo in combinations(hs, k):
                        out.append(Play(seat, combo))
            return out
        old = [self.faces[h] for h in self.top]
        k = len(old)
        old_rank = RANK_INDEX[old[0].rank]
        for rank in ranks:
            g = groups[rank]
            if len(g) < k or RANK_INDEX[rank] < old_rank:
                continue
            if rank == old[0].rank:
                high = max(f.suit for f in old)
                g = [(s, h) for s, h in g if s > high]
                if len(g) < k:
                    continue
            for combo in combinations(g, k):
                out.append(Play(seat, tuple(h for _, h in combo)))
        if k == 1:
            for rank in ranks:
                g = groups[rank]
                if len(g) == FOUR:
                    out.append(Play(seat, tuple(h for _, h in g)))
        out.append(Pass(seat))
        return out

    def _legal_gives(self, seat: int) -> list[Action]:
        ex = self.exchanges[self.exchange_no]
        hand = list(self.zones[self.hand_names[seat]])
        if ex.highest:
            faces = [self.face_for(seat, h) for h in hand]
            if None in faces:
                return []
            best = sorted(hand, key=lambda h: slave_key(self.faces[h]), reverse=True)
            return [Give(seat, tuple(sorted(best[: ex.count])))]
        return [Give(seat, tuple(sorted(combo))) for combo in combinations(hand, ex.count)]

    PHASES = {
        "setup": Phase(),
        "opening": Phase({NotOpener: _on_not_opener, Play: _on_play}, legal=_legal_opening),
        "exchange": Phase({Give: _on_give}, legal=_legal_gives),
        "play": Phase({Play: _on_play, Pass: _on_pass}, legal=_legal_play),
        "over": Phase(),
    }

    def view(self, seat: int) -> dict[str, Any]:
        bit, seen, faces = 1 << seat, self.seen, self.faces
        hand = tuple(
            CardView(h, faces.get(h) if seen.get(h, 0) & bit else None)
            for h in self.zones[self.hand_names[seat]]
        )
        return {
            "seat": seat,
            "seats": self.seats,
            "deal": self.game_no,
            "games": self.options["games"],
            "phase": self.phase,
            "hand": hand,
            "hand_sizes": tuple(len(self.zones[n]) for n in self.hand_names),
            "top": self._top_view,
            "pile_size": len(self.zones["pile"]),
            "last": self.last,
            "passed": tuple(sorted(self.passed)),
            "direction": self.direction,
            "current": self.current,
            "to_move": self.to_move(),
            "out": tuple(self.out),
            "toppled": self.toppled,
            "king": self.king,
            "titles": self._titles,
            "points": tuple(self.points),
        }

    def public_state(self) -> Any:
        return {
            "deal": self.game_no,
            "direction": self.direction,
            "current": self.current,
            "active": sorted(self.active),
            "passed": sorted(self.passed),
            "top": list(self.top),
            "last": self.last,
            "watch": self.watch,
            "out": list(self.out),
            "toppled": self.toppled,
            "king": self.king,
            "step": self.exchange_no,  # the key is part of the state-hash format
            "points": list(self.points),
            "placements": [list(p) for p in self.placements],
        }

    def is_over(self) -> bool:
        return self.phase == "over"

    def next_deal_size(self) -> int | None:
        """The whole deck, while the match has a deal after this one (a seat that left
        ends the match after this deal)."""
        if self.is_over() or self.gone or self.game_no >= self.options["games"]:
            return None
        return len(self.deck)

    def outcome(self) -> Outcome:
        last = self.placements[-1]
        place = {s: i for i, s in enumerate(last)}
        ranking = tuple(
            sorted(range(self.seats), key=lambda s: (s in self.gone, -self.points[s], place[s]))
        )
        return Outcome(
            ranking,
            reason=f"{len(self.placements)} deal(s); points {self.points}",
            scores=tuple(self.points),
        )
