"""Play a whole game at a ``MentalTable``: one engine instance per seat, each with its own dealer.

This is what a real table does, minus the network: every seat runs its own
copy of the game, which learns faces only through its ``SeatDealer``; the
seat's bot acts from that copy's ``view`` and ``legal_actions``; every action
is applied to every copy.  After each action the driver checks, for every
copy, that:

* all copies agree on who moves and on ``state_hash()``;
* the copy knows no face its seat may not see (``faces`` against ``seen``),
  and every face it knows is the true one (the table's test-only oracle);

and at the end that all copies asked the table for the same obligations and
report the same outcome.  A game that reads a face its instance was never
shown crashes here (``KeyError`` or similar), which is the point: on a real
peer that face is simply not there.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engine import registry
from engine.errors import EngineError
from engine.game import Event, Game, Outcome
from engine.runner import settle
from p2p.mental_dealer import MentalTable, SeatDealer


class Divergence(EngineError):
    """Seat engines disagree (state hash, mover, outcome) or one knows too much."""


@dataclass
class MentalResult:
    """One finished mental game: the per-seat engines, the table and counts."""

    engines: list[Game]
    table: MentalTable
    outcome: Outcome
    actions: int
    turns: int
    state_hash: str


def check_knowledge(game: Game, seat: int, table: MentalTable, cache: dict) -> None:
    """``game`` (seat ``seat``'s copy) knows only faces ``seat`` may see, and only true ones;
    and at the crypto level, the seat has learnt (and can open) only cards it may see."""
    for h in table.seats[seat].known:
        if not game.visible(seat, h):
            raise Divergence(f"seat {seat} has unmasked card #{h}, which it may not see")
    for h in range(table.size):
        if seat in table.openers(h) and not game.visible(seat, h):
            raise Divergence(f"seat {seat} holds every token for card #{h}, which it may not see")
    for h, face in game.faces.items():
        if not game.visible(seat, h):
            raise Divergence(f"seat {seat}'s engine knows card #{h} ({face}) it may not see")
        key = (h, table.cts[h].c1.data)
        if key not in cache:
            cache[key] = table.oracle_face(h)
        if cache[key] != face:
            raise Divergence(f"seat {seat}'s engine thinks #{h} is {face}, it is {cache[key]}")


def play_mental(
    game_name: str | registry.GameSpec,
    seats: int,
    options: Mapping[str, Any] | None = None,
    *,
    seed: int = 0,
    bot: str = "heuristic",
    max_actions: int = 10_000,
    table_id: bytes = b"mental-play",
    cheats: Mapping[int, str] | None = None,
    insecure_seed: bytes | None = None,
) -> MentalResult:
    """Play ``game_name`` (a registered name or a ``GameSpec``) to its end with one
    engine and one ``SeatDealer`` per seat.

    ``insecure_seed`` (tests only) derives every seat's secret randomness from a
    seed so that a game replays exactly; see ``MentalTable``.
    """
    spec = registry.get(game_name) if isinstance(game_name, str) else game_name
    engines = [spec.factory(seats, options) for _ in range(seats)]
    table = MentalTable(
        seats, engines[0].deck, table_id=table_id, cheats=cheats, insecure_seed=insecure_seed
    )
    dealers = [SeatDealer(table, s) for s in range(seats)]
    bots = [spec.bots[bot](s, random.Random(seed * 1000 + s)) for s in range(seats)]
    oracle: dict = {}

    def publish(s: int, events: list[Event]) -> None:
        for ev in events:
            if ev.visible_to(s):
                bots[s].observe(ev)

    def check() -> None:
        hashes = {g.state_hash() for g in engines}
        if len(hashes) != 1:
            raise Divergence(f"seat engines disagree on the state hash: {sorted(hashes)}")
        movers = {g.to_move() for g in engines}
        if len(movers) != 1:
            raise Divergence(f"seat engines disagree on who moves: {movers}")
        for s, g in enumerate(engines):
            check_knowledge(g, s, table, oracle)

    for s in range(seats):
        events = engines[s].start()
        events.extend(settle(engines[s], dealers[s]))
        publish(s, events)
    check()
    actions = 0
    while not engines[0].is_over() and actions < max_actions:
        movers = engines[0].to_move()
        if not movers:
            raise Divergence(f"{spec.name}: nobody to move in phase {engines[0].phase!r}")
        seat = movers[0]
        mine = engines[seat]
        action = bots[seat].act(mine.view(seat), mine.legal_actions(seat))
        for s in range(seats):
            events = engines[s].apply(action)
            events.extend(settle(engines[s], dealers[s]))
            publish(s, events)
        actions += 1
        check()
    if len(set(table.cursors())) != 1 or table.cursors()[0] != len(table.steps):
        raise Divergence(f"seat engines consumed different obligation counts: {table.cursors()}")
    outcomes = {repr(g.outcome()) for g in engines} if engines[0].is_over() else set()
    if len(outcomes) > 1:
        raise Divergence(f"seat engines disagree on the outcome: {outcomes}")
    if engines[0].is_over():
        outcome = engines[0].outcome()
    else:
        outcome = Outcome((), draw=True, reason=f"action cap {max_actions} reached")
    return MentalResult(engines, table, outcome, actions, engines[0].turns, engines[0].state_hash())
