"""A demonstration protocol to exercise the record: counting turns and echo rounds.

Seats take turns in seat order, each appending ``count`` = previous count + 1.
Every ``round_every``-th step is a round in which *every* seat concurrently
sends ``echo`` carrying the current count, which exercises leaderless ordering
of concurrent responders.  The protocol ends after ``steps`` steps.  A wrong
count or echo value is an :class:`InvalidMove` naming the seat.

It exercises the record without a game (tests, benchmarks, ``--demo-steps``);
it is driven by the same :class:`p2p.record.order.Rule` contract as a game's rule
(:mod:`p2p.table.game_rule`).  Its parameters
(steps and round interval) are part of the signed table manifest, as
:class:`DemoProtocol`, so the record alone says how long it runs and which
steps are rounds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

from p2p.errors import InvalidMove
from p2p.record.order import Owed, StepView
from p2p.wire import U32, U64_MAX, Body, TableProtocol, UInt, body, table_protocol

if TYPE_CHECKING:  # forming imports this module (to register DemoProtocol), not vice versa
    from p2p.table.forming import Manifest, NextRule

COUNT_KIND = "count"
ECHO_KIND = "echo"
DEFAULT_DEMO_STEPS = 300
DEFAULT_ROUND_EVERY = 10
DEMO_PROTOCOL = "demo"

Counter = Annotated[int, UInt(max=U64_MAX)]


@body(COUNT_KIND)
@dataclass(frozen=True, slots=True)
class Count(Body):
    value: Counter


@body(ECHO_KIND)
@dataclass(frozen=True, slots=True)
class Echo(Body):
    value: Counter


@table_protocol(DEMO_PROTOCOL)
@dataclass(frozen=True, slots=True)
class DemoProtocol(TableProtocol):
    """The manifest's record of the demo parameters: ``steps`` demo steps after the seat
    order (0: the record ends with it), an echo round every ``round_every``-th (0: none)."""

    steps: U32
    round_every: U32

    def start(self, manifest: Any, seat_order: tuple[int, ...]) -> DemoRule:
        return DemoRule(manifest.n_seats, seat_order, self.steps, self.round_every)


class DemoRule:
    """Turn-taking counter with all-seat echo rounds; a :class:`p2p.record.order.Rule`."""

    __slots__ = ("n", "seat_order", "steps", "round_every", "done", "count", "turn")

    def __init__(
        self,
        n_seats: int,
        seat_order: tuple[int, ...],
        steps: int = DEFAULT_DEMO_STEPS,
        round_every: int = DEFAULT_ROUND_EVERY,
    ) -> None:
        if sorted(seat_order) != list(range(n_seats)):
            raise ValueError(f"seat order {seat_order} is not a permutation of {n_seats} seats")
        self.n = n_seats
        self.seat_order = seat_order
        self.steps = steps
        self.round_every = round_every
        self.done = 0  # demo steps completed
        self.count = 0
        self.turn = 0  # count steps completed

    @classmethod
    def factory(
        cls, steps: int = DEFAULT_DEMO_STEPS, round_every: int = DEFAULT_ROUND_EVERY
    ) -> NextRule:
        """A ``then`` for :class:`p2p.table.forming.FormingRule` with explicit parameters
        (tests of the rule alone; a table takes them from its manifest instead)."""

        def make(manifest: Manifest, seat_order: tuple[int, ...]) -> DemoRule:
            return cls(manifest.n_seats, seat_order, steps, round_every)

        return make

    def _is_round(self) -> bool:
        return self.round_every > 0 and (self.done + 1) % self.round_every == 0

    def owed(self) -> Owed | None:
        if self.done >= self.steps:
            return None
        if self._is_round():
            return Owed.responders(range(self.n), ECHO_KIND)
        return Owed.actor(self.seat_order[self.turn % self.n], COUNT_KIND)

    def check(self, seat: int, body: Body) -> None:
        if isinstance(body, Count) and body.value != self.count + 1:
            raise InvalidMove(seat, f"count {body.value}, expected {self.count + 1}")
        if isinstance(body, Echo) and body.value != self.count:
            raise InvalidMove(seat, f"echo {body.value}, expected {self.count}")

    def advance(self, step: StepView) -> None:
        if not self._is_round():
            self.count += 1
            self.turn += 1
        self.done += 1


def next_body(rule: DemoRule, kind: str) -> Body:
    """The honest body for ``kind`` at the current demo step."""
    return Count(rule.count + 1) if kind == COUNT_KIND else Echo(rule.count)
