"""'High card': a tiny game for testing the engine core and the dealers without any real
game's rules.

It exercises shuffles, private and public reveals and views; tests/engine/test_core.py
runs it on the local dealer, tests/p2p/test_mental_dealer.py on the mental-poker one.
"""

from dataclasses import dataclass

from engine.cards import slave_key, standard_deck
from engine.game import Action, Game, Outcome
from engine.options import OptionSpec


@dataclass(frozen=True, slots=True)
class PlayCard(Action):
    card: int


class HighCard(Game):
    """Each seat is dealt ``hand`` cards privately, then in turn plays one face up; the
    seat with the highest played card (Slave order) wins."""

    NAME = "high-card"
    MIN_SEATS, MAX_SEATS = 2, 4
    OPTIONS = (OptionSpec("hand", int, 2, "cards per hand", minimum=1, maximum=4),)
    ACTIONS = (PlayCard,)

    def make_deck(self):
        return standard_deck()

    def setup(self):
        self.zones.add("deck", range(len(self.deck)))
        self.zones.add("table")
        for s in range(self.seats):
            self.zones.add(f"hand:{s}")
        yield from self.shuffle_zone("deck")
        for s in range(self.seats):
            hand = list(self.zones["deck"][: self.options["hand"]])
            for h in hand:
                self.zones.move(h, f"hand:{s}")
            yield from self.reveal(hand, to={s}, reason="deal")
        self.phase = "play"
        self.current = 0

    def handle(self, action):
        if action.card not in self.zones[f"hand:{action.seat}"]:
            raise self.illegal(action, "you do not hold that card")
        self.zones.move(action.card, "table")
        faces = yield from self.reveal([action.card])
        self.emit("play", self.play_text(action, faces[action.card]), action.seat)
        self.current = (self.current + 1) % self.seats
        self.turns += 1

    def play_text(self, action, face):
        """The public event text for ``action`` playing ``face``; a subclass that reads a
        face it may not see here is how the p2p tests check that a peer catches it."""
        return f"seat {action.seat} plays {face}"

    def to_move(self):
        if self._pending is not None or self.is_over() or self.phase != "play":
            return ()
        return (self.current,)

    def legal_actions(self, seat):
        return [PlayCard(seat, h) for h in self.zones[f"hand:{seat}"]]

    def view(self, seat):
        return {
            "hand": self.cards_view(seat, self.zones[f"hand:{seat}"]),
            "table": self.cards_view(seat, self.zones["table"]),
            "sizes": [len(self.zones[f"hand:{s}"]) for s in range(self.seats)],
        }

    def public_state(self):
        return {"current": getattr(self, "current", None)}

    def is_over(self):
        return (
            self.phase == "play" and len(self.zones["table"]) == self.seats * self.options["hand"]
        )

    def outcome(self):
        # table position i was played by seat i % seats; rank seats by their best card
        best = {s: -1 for s in range(self.seats)}
        for i, h in enumerate(self.zones["table"]):
            s = i % self.seats
            best[s] = max(best[s], slave_key(self.faces[h]))
        return Outcome(tuple(sorted(best, key=best.__getitem__, reverse=True)))
