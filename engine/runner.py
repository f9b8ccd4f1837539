"""Drive a game with a dealer and bots: the loop ``slaiga simulate`` runs.

Pure: no printing, no clocks. Progress goes to an optional ``on_event``
callback, and every bound is explicit (``max_actions``), so a simulation can
never hang even when a seeded game would go on forever.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from engine.bots import Bot
from engine.dealer import Dealer, LocalDealer
from engine.errors import EngineError
from engine.game import Event, Game, Outcome

DEFAULT_MAX_ACTIONS = 200_000


@dataclass
class SimResult:
    """The result of one simulated game."""

    outcome: Outcome
    actions: int
    turns: int
    state_hash: str
    events: Counter[str] = field(default_factory=Counter)
    stats: dict = field(default_factory=dict)


def settle(game: Game, dealer: Dealer) -> list[Event]:
    """Discharge every pending obligation; return the events that resulted."""
    events: list[Event] = []
    while (ob := game.pending()) is not None:
        events.extend(game.resolve(dealer.fulfil(ob)))
    return events


def step(game: Game, dealer: Dealer, action) -> list[Event]:
    """Apply one action, then settle its obligations."""
    events = game.apply(action)
    events.extend(settle(game, dealer))
    return events


def start(game: Game, dealer: Dealer) -> list[Event]:
    events = game.start()
    events.extend(settle(game, dealer))
    return events


def play(
    game: Game,
    dealer: Dealer,
    bots: Sequence[Bot],
    *,
    max_actions: int = DEFAULT_MAX_ACTIONS,
    on_event: Callable[[Event], None] | None = None,
    check: Callable[[Game], None] | None = None,
) -> SimResult:
    """Play ``game`` to its end with one bot per seat.

    ``check`` (if given) runs after every action, for invariants in tests.
    Reaching ``max_actions`` ends the game as a draw instead of hanging.
    """
    if len(bots) != game.seats:
        raise EngineError(f"{len(bots)} bots for {game.seats} seats")
    counts: Counter[str] = Counter()

    def publish(events: list[Event]) -> None:
        for ev in events:
            counts[ev.kind] += 1
            if on_event is not None:
                on_event(ev)
            for bot in bots:
                if ev.visible_to(bot.seat):
                    bot.observe(ev)

    publish(start(game, dealer))
    actions = 0
    outcome: Outcome | None = None
    while not game.is_over():
        if actions >= max_actions:
            outcome = Outcome((), draw=True, reason=f"action cap {max_actions} reached")
            break
        movers = game.to_move()
        if not movers:
            raise EngineError(f"{game.NAME}: nobody to move in phase {game.phase!r}")
        seat = movers[0]
        action = bots[seat].act(game.view(seat), game.legal_actions(seat))
        publish(step(game, dealer, action))
        actions += 1
        if check is not None:
            check(game)
    if outcome is None:
        outcome = game.outcome()
    return SimResult(outcome, actions, game.turns, game.state_hash(), counts)


def resample_hidden(game: Game, dealer: LocalDealer, seat: int, rng: random.Random) -> None:
    """Permute the true faces of every handle ``seat`` may not see (the leak test).

    Both the dealer's truth and the (omniscient) game's known faces change;
    ``view(seat)`` and ``legal_actions(seat)`` must not.
    """
    hidden = [h for h in range(len(game.deck)) if not game.visible(seat, h)]
    new = dealer.permute_hidden(hidden, rng)
    for h in hidden:
        if h in game.faces:
            game.faces[h] = new[h]


def check_conservation(game: Game, dealer: LocalDealer) -> None:
    """Every handle is in exactly one zone, and the faces are still the deck."""
    game.check_conservation()
    if Counter(dealer.truth) != Counter(game.deck):
        raise EngineError("the dealer's faces no longer match the deck")
    for h, face in game.faces.items():
        if dealer.truth[h] != face:
            raise EngineError(f"handle {h}: game thinks {face}, dealer has {dealer.truth[h]}")
