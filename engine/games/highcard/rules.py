"""High Card: the smallest complete game, and the template for adding one
(docs/adding-a-game.md).

Each seat is dealt ``hand`` cards privately (a table option, default 2); then, in turn
from seat 0, each seat plays one card face up until every card is on the table. The seat
with the highest card played, in Slave's order (3 low, 2 high, then ♣ < ♦ < ♥ < ♠),
wins; the others follow by their best card.

Leaving (``Game.leave``): a seat that has left for good puts its unplayed cards face
down out of play and ranks last; the others play on, and the game ends when every card
still held has been played.

What it shows: a shuffle and private deals (``Shuffle`` and ``Reveal`` obligations), a
public reveal, a phase table with a handler and a legal-move function, a view that holds
only what the seat may see, and the public state that goes into the state hash.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engine.cards import Card, slave_key, standard_deck
from engine.game import Action, Game, Handler, Outcome, Phase
from engine.games.highcard.actions import PlayCard
from engine.options import OptionSpec


class HighCard(Game):
    NAME = "high-card"
    MIN_SEATS, MAX_SEATS = 2, 4
    OPTIONS = (OptionSpec("hand", int, 2, "cards per hand", minimum=1, maximum=4),)

    def __init__(self, seats: int, options: dict[str, Any] | None = None) -> None:
        super().__init__(seats, options)
        self.current = 0
        self.played_by: list[int] = []  # the seat of each card on the table, in order

    def make_deck(self) -> Sequence[Card]:
        return standard_deck()

    # ---- setup: deal ------------------------------------------------------------------

    def setup(self) -> Handler:
        self.zones.add("deck", range(len(self.deck)))
        self.zones.add("table")
        for s in range(self.seats):
            self.zones.add(f"hand:{s}")
        yield from self.shuffle_zone("deck")
        hands = []
        for s in range(self.seats):
            hand = list(self.zones["deck"][: self.options["hand"]])
            for h in hand:
                self.zones.move(h, f"hand:{s}")
            hands.append((s, hand))
        yield from self.deal(hands)
        self.phase = "play"

    # ---- the one phase ------------------------------------------------------------------

    def _on_play(self, action: PlayCard) -> Handler:
        if action.card not in self.zones[f"hand:{action.seat}"]:
            raise self.illegal(action, "you do not hold that card")  # validate first...
        self.zones.move(action.card, "table")  # ...then act
        self.played_by.append(action.seat)
        faces = yield from self.reveal([action.card])
        self.emit("play", self.play_text(action, faces[action.card]), action.seat)
        self.turns += 1
        self._next()

    def _next(self) -> None:
        """The next present seat with a card to play, or the end."""
        for k in range(1, self.seats + 1):
            s = (self.current + k) % self.seats
            if s not in self.gone and self.zones[f"hand:{s}"]:
                self.current = s
                return
        self.phase = "over"

    def on_leave(self, seat: int) -> None:
        self.retire(self.zones[f"hand:{seat}"])
        self.emit("out", f"seat {seat}'s cards leave play face down", seat)
        if len(self.present()) <= 1:
            self.phase = "over"
        elif self.current == seat:
            self._next()

    def play_text(self, action: PlayCard, face: Card) -> str:
        """The public event text for ``action`` playing ``face``; a subclass that reads a
        face it may not see here is how the p2p tests check that a peer catches it."""
        return f"seat {action.seat} plays {face}"

    def _legal_play(self, seat: int) -> list[Action]:
        return [PlayCard(seat, h) for h in self.zones[f"hand:{seat}"]]

    PHASES = {
        "setup": Phase(),
        "play": Phase({PlayCard: _on_play}, legal=_legal_play),
        "over": Phase(),
    }

    # ---- queries -------------------------------------------------------------------------

    def to_move(self) -> tuple[int, ...]:
        if self._pending is not None or self.phase != "play":
            return ()
        return (self.current,)

    def view(self, seat: int) -> dict[str, Any]:
        return {
            "hand": self.cards_view(seat, self.zones[f"hand:{seat}"]),
            "table": self.cards_view(seat, self.zones["table"]),
            "sizes": [len(self.zones[f"hand:{s}"]) for s in range(self.seats)],
        }

    def public_state(self) -> Any:
        return {"current": self.current, "played_by": list(self.played_by)}

    def is_over(self) -> bool:
        return self.phase == "over"

    def outcome(self) -> Outcome:
        # rank the present seats by their best card played; seats that left come last
        best = {s: -1 for s in self.present()}
        for s, h in zip(self.played_by, self.zones["table"], strict=True):
            if s in best:
                best[s] = max(best[s], slave_key(self.faces[h]))
        ranking = sorted(best, key=best.__getitem__, reverse=True)
        return Outcome((*ranking, *reversed(self.gone)))
