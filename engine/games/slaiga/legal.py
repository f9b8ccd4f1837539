"""Slaiga's legal moves and views: what a seat may do and see, phase by phase.

Both are on the hot path of every simulated game, so they hand out interned actions
(``actions``) and read faces from a per-seat view table kept up to date as the game
learns (``_learn``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from engine.cards import ACE, JACK, JOKER_RANK, KING, QUEEN, SUITS, Card
from engine.game import Action, CardView
from engine.games.slaiga.actions import (
    DISCARD,
    DRAW,
    SOURCES,
    CancelCheck,
    KingLook,
    MissVerdict,
    QueenSwap,
    Swap,
    card_actions,
    jack_shots,
    place_row,
    seat_actions,
    shoot_actions,
)
from engine.games.slaiga.agenda import SlaigaAgenda
from engine.games.slaiga.hands import (
    MISS_LIMIT,
    QUEEN_REACH,
    has_straight_flush,
    is_bullet,
    is_shoot,
    next_suit,
)
from engine.obligations import Deal, Reveal, Shuffle, Transfer


class SlaigaMoves(SlaigaAgenda):
    """Legal actions per phase (``_legal_<phase>``) and the seat views."""

    def __init__(self, seats: int, options: Any = None) -> None:
        super().__init__(seats, options)
        self._hidden_views = tuple(CardView(h, None) for h in range(len(self.deck)))
        # The view table: ``_views[seat][h]`` is ``face_for(seat, h)`` as a CardView, kept
        # up to date by ``_learn`` (the only place ``seen`` and ``faces`` change) so that a
        # view is a few C-level ``map``s. ``_views_of`` holds the ``seen``/``faces`` the
        # table was made from; ``view`` rebuilds the table whenever they differ (a test
        # may rewrite ``faces``), so a view never shows anything but ``face_for``.
        self._views: list[list[CardView]] = [list(self._hidden_views) for _ in range(seats)]
        self._views_of: tuple[dict[int, int], dict[int, Card]] = ({}, {})

    # ---- views ----------------------------------------------------------------------------------

    def _learn(self, ob, answer) -> None:
        """Record the answer (base class), then refresh the view table for its handles."""
        super()._learn(ob, answer)
        if isinstance(ob, (Shuffle, Reveal, Deal)):
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
            "task": self.agenda[0] if self.agenda else None,
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

    # ---- legal actions, by phase -----------------------------------------------------------------

    def _legal_draws(self, seat: int) -> list[Action]:
        mine = seat_actions(seat)
        return [mine[src] for src in SOURCES if self.zones[src]]

    def _opponents(self, seat: int) -> tuple[int, ...]:
        return tuple(t for t in range(self.seats) if t != seat and self.active[t])

    def _hand_faces(self, seat: int) -> list[tuple[int, Card | None]]:
        """``(h, face_for(seat, h))`` for each card of ``seat``'s hand, in one pass."""
        seen, faces, bit = self.seen, self.faces, 1 << seat
        return [(h, faces.get(h) if seen.get(h, 0) & bit else None) for h in self.hand(seat)]

    def _legal_turn(self, seat: int) -> list[Action]:
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

    def _legal_shot_card(self, seat: int) -> list[Action]:
        if self.LYING:
            out: list[Action] = []
            for h in self.hand(seat):
                acts = card_actions(seat, h)
                out.append(acts.shot)
                out.append(acts.shot_ace)
            return out
        out = []
        need = next_suit(self.agenda[0].n)
        for h in self.hand(seat):
            f = self.face_for(seat, h)
            if f is not None and is_shoot(f) and f.suit == need:
                acts = card_actions(seat, h)
                out.append(acts.shot_ace if f.rank == ACE else acts.shot)
        return out

    def _legal_discard(self, seat: int) -> list[Action]:
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

    def _legal_king(self, seat: int) -> list[Action]:
        top = min(self.options["king_max"], len(self.zones[DRAW]))
        return [KingLook(seat, k) for k in range(1, top + 1)]

    def _legal_queen(self, seat: int) -> list[Action]:
        reach = self.zones[DISCARD][:QUEEN_REACH]
        return [QueenSwap(seat, g, t) for g in self.hand(seat) for t in reach]

    def _legal_answer(self, seat: int) -> list[Action]:
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

    def _legal_check_or_pass(self, seat: int) -> list[Action]:
        """A miss answer or a win ask: check, or let it be."""
        mine = seat_actions(seat)
        return [mine["check"], mine["pass"]]

    def _legal_check_response(self, seat: int) -> list[Action]:
        out: list[Action] = []
        if self.agenda[0].tag == "miss":
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

    def _legal_give(self, seat: int) -> list[Action]:
        return [card_actions(seat, h).give for h in self.hand(seat)]

    def _legal_place(self, seat: int) -> list[Action]:
        placing = self.agenda[0].kind == "place"
        zone = self.zones[self._place_zones[seat]] if placing else self.hand(seat)
        n = len(self.zones[DRAW]) + 1
        size = len(self.deck) + 1  # the draw pile never holds more than the deck
        out: list[Action] = []
        for h in zone:
            out.extend(place_row(seat, h, size)[:n])
        return out

    def _legal_swap(self, seat: int) -> list[Action]:
        out: list[Action] = [seat_actions(seat)["pass"]]
        out.extend(Swap(seat, h, p) for h in self.hand(seat) for p in self.agenda[0].handles)
        return out

    def _legal_give_back(self, seat: int) -> list[Action]:
        return [card_actions(seat, h).give_back for h in self.hand(seat)]
