"""The game loop: drive a game with a dealer and one player per seat.

Every seat has a *player* (``engine.players``): a bot, a person at this terminal,
or whatever else decides for a seat. ``play_async`` is the one loop: it starts
the game, settles every obligation with the dealer, asks the player of the seat
to move for a decision, and shows each player the events its seat may see.
Deciding is a coroutine so that a person can think while a table's network loop
runs; ``play`` runs the same loop without an event loop, for players that
answer at once (bots: ``slaiga simulate`` and the benchmarks).

Pure: no printing, no clocks. Progress goes to an optional ``on_event``
callback, and every bound is explicit (``max_actions``), so a simulation can
never hang even when a seeded game would go on forever.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from engine.bots import Bot
from engine.cards import Card
from engine.dealer import Dealer, LocalDealer
from engine.errors import EngineError
from engine.game import Action, Event, Game, Outcome
from engine.players import BotPlayer, Player

T = TypeVar("T")

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

    def summary(self) -> dict[str, Any]:
        """The result as the players' final summary states it (plain data)."""
        outcome = self.outcome
        return {
            "ranking": list(outcome.ranking),
            "draw": outcome.draw,
            "reason": outcome.reason,
            "scores": list(outcome.scores) if outcome.scores is not None else None,
            "state_hash": self.state_hash,
            "actions": self.actions,
            "turns": self.turns,
        }


def settle(game: Game, dealer: Dealer) -> list[Event]:
    """Discharge every pending obligation; return the events that resulted."""
    events: list[Event] = []
    while (ob := game.pending()) is not None:
        events.extend(game.resolve(dealer.fulfil(ob)))
    return events


def apply(game: Game, dealer: Dealer, action: Action) -> list[Event]:
    """Apply one action, then settle its obligations."""
    events = game.apply(action)
    events.extend(settle(game, dealer))
    return events


def start(game: Game, dealer: Dealer) -> list[Event]:
    """Start the game, then settle the obligations of its setup."""
    events = game.start()
    events.extend(settle(game, dealer))
    return events


def as_player(who: Player | Bot) -> Player:
    """A seat's player: a ``Bot`` is played through ``BotPlayer``."""
    return BotPlayer(who) if isinstance(who, Bot) else who


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine that never waits (every player answers at once) to its end.

    A player that does wait (a person, a network seat) needs an event loop: drive
    ``play_async`` from one instead.
    """
    try:
        coro.send(None)
    except StopIteration as done:
        return done.value
    coro.close()
    raise EngineError("a player waited for something: run play_async in an event loop")


async def play_async(
    game: Game,
    dealer: Dealer,
    players: Sequence[Player | Bot],
    *,
    max_actions: int = DEFAULT_MAX_ACTIONS,
    on_event: Callable[[Event], None] | None = None,
    check: Callable[[Game], None] | None = None,
    about: Mapping[str, Any] | None = None,
) -> SimResult:
    """Play ``game`` to its end with one player per seat (``players[s]`` plays seat ``s``).

    Each player sees only the events its seat may see and decides from its seat's
    view and legal actions; at the end every player is told the result
    (``SimResult.summary()`` with its own ``seat``, after what ``about`` says of
    the table). ``check`` (if given) runs after every action, for invariants in
    tests. Reaching ``max_actions`` ends the game as a draw instead of hanging.
    """
    if len(players) != game.seats:
        raise EngineError(f"{len(players)} players for {game.seats} seats")
    seats = [as_player(p) for p in players]
    counts: Counter[str] = Counter()

    def publish(events: list[Event]) -> None:
        if not events:
            return
        public = True
        for ev in events:
            counts[ev.kind] += 1
            if on_event is not None:
                on_event(ev)
            if ev.audience is not None:
                public = False
        for seat, player in enumerate(seats):
            mine = events if public else [ev for ev in events if ev.visible_to(seat)]
            if mine:
                player.observe(game, seat, mine)

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
        action = await seats[seat].decide(game, seat)
        publish(apply(game, dealer, action))
        actions += 1
        if check is not None:
            check(game)
    if outcome is None:
        outcome = game.outcome()
    result = SimResult(outcome, actions, game.turns, game.state_hash(), counts)
    summary = {**(about or {}), **result.summary()}
    for seat, player in enumerate(seats):
        player.finish({**summary, "seat": seat})
    return result


def play(
    game: Game,
    dealer: Dealer,
    players: Sequence[Player | Bot],
    *,
    max_actions: int = DEFAULT_MAX_ACTIONS,
    on_event: Callable[[Event], None] | None = None,
    check: Callable[[Game], None] | None = None,
) -> SimResult:
    """``play_async`` for players that answer at once (bots), without an event loop."""
    return run_sync(
        play_async(game, dealer, players, max_actions=max_actions, on_event=on_event, check=check)
    )


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


_PERMUTED: list[tuple[tuple[Card, ...], list[Card]] | None] = [None]
"""``(deck, truth)``: the last dealer's faces :func:`check_conservation` found to be a
permutation of that deck (a copy). The faces change only at shuffles, so the check after
most actions finds them equal to these and need not sort the deck again."""


def check_conservation(game: Game, dealer: LocalDealer) -> None:
    """Every handle is in exactly one zone, and the faces are still the deck."""
    game.check_conservation()
    truth, deck = dealer.truth, game.deck
    known = _PERMUTED[0]
    if known is None or known[0] is not deck or known[1] != truth:
        if sorted(truth) != sorted(deck):
            raise EngineError("the dealer's faces no longer match the deck")
        _PERMUTED[0] = (deck, list(truth))
    faces = game.faces
    if list(map(truth.__getitem__, faces)) != list(faces.values()):
        for h, face in faces.items():
            if truth[h] != face:
                raise EngineError(f"handle {h}: game thinks {face}, dealer has {truth[h]}")
