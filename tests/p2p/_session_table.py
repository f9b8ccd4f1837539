"""Slot 0's table session (:class:`p2p.table.session.TableSession`, the node's policy
with no I/O) at an in-process game table: no socket, no clock, no child process.

The other seats are :class:`p2p.table.seat.SeatDriver` s with records of their own, as in
:mod:`p2p.table.local_table`; entries are routed in memory.  The session's writes go to
a real record file through :class:`p2p.net.durable.Durable`, as the node carries them
out, and what it would send is kept in :attr:`SessionTable.sent`.  So a policy test (the
end vote, evidence kept, verdicts) runs in the pure tier and checks the very file a peer
writes; tests/p2p/_node_table.py puts a real :class:`p2p.net.node.Node` at slot 0 instead,
for the tests whose subject is the node itself.
"""

from __future__ import annotations

import random
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from crypto.identity import IdentityKey
from crypto.seal import SealKey
from engine import registry
from engine.players import BotPlayer
from p2p import wire
from p2p.errors import CheatDetected
from p2p.net.durable import SENDS, WRITES, Durable
from p2p.record.chain import Record
from p2p.record.store import RecordFile
from p2p.table import effects
from p2p.table.events import NodeEvent
from p2p.table.game_rule import SeatKeys
from p2p.table.local_table import game_genesis
from p2p.table.seat import SeatDriver, rule_factory
from p2p.table.session import TableSession

PLAYERS = ["Ann", "Bob", "Cid", "Dee", "Eli", "Fay"]
"""The players' names by slot (names no seat number can be mistaken for)."""

NOW = 1000.0
"""The session's clock in these tests (it is given the time, never reads one)."""


def other_drivers(genesis: Any, ids: list[IdentityKey], seals: list[SealKey]) -> dict:
    """A seat driver, with a record of its own, for every slot but 0."""
    drivers = {}
    for slot in range(1, len(ids)):
        keys = SeatKeys(slot, ids[slot], seals[slot], secrets.token_bytes(32), None)
        drivers[slot] = SeatDriver(Record(genesis, rule_factory(keys)), ids[slot], slot)
    return drivers


class InMemoryTable:
    """The seats at slots 1.. (``drivers``) and the routing between them and slot 0; a
    subclass says how slot 0 takes an entry (:meth:`to_me`) and acts (:meth:`act`)."""

    def __init__(self, drivers: dict[int, SeatDriver]) -> None:
        self.drivers = drivers
        self.players: dict[int, BotPlayer] = {}
        self.refused: list[CheatDetected] = []
        self.silent: set[int] = set()
        """Slots whose drivers say nothing (a player who vanished)."""

    @property
    def record(self) -> Record:
        raise NotImplementedError

    def to_me(self, signed: wire.Signed, author: int) -> None:
        raise NotImplementedError

    def act(self) -> list[wire.Signed]:
        """Slot 0 says what it owes; returns what it sent."""
        raise NotImplementedError

    def ended(self) -> bool:
        raise NotImplementedError

    @property
    def session(self) -> TableSession:
        raise NotImplementedError

    def now(self) -> float:
        """Slot 0's clock."""
        raise NotImplementedError

    def deliver(self, signed: wire.Signed, author: int, *, to_node: bool = True) -> None:
        for slot, d in self.drivers.items():
            if slot != author:
                try:
                    d.record.offer(signed)
                except CheatDetected as exc:
                    self.refused.append(exc)
        if to_node and author != 0:
            self.to_me(signed, author)

    def chooser(self, slot: int) -> Any:
        """How slot ``slot`` decides: a heuristic bot of its own (seeded by the slot)."""

        def choose(engine: Any, seat: int) -> Any:
            player = self.players.get(slot)
            if player is None:
                spec = registry.get(self.record.manifest.game)
                player = BotPlayer.make(spec.bots["heuristic"], seat, random.Random(slot))
                self.players[slot] = player
            return player.choose(engine, seat)

        return choose

    def _drive(self, d: SeatDriver) -> wire.Signed | None:
        body = d.next_body(self.chooser(d.slot))  # the seat driver the node and LocalTable use
        if body is None:
            return None
        return d.sign(body).accepted[0].signed

    def round(self) -> bool:
        """Everyone says what it owes once; ``False`` when nobody had anything to say."""
        moved = False
        for signed in self.act():
            self.deliver(signed, 0)
            moved = True
        for slot, d in self.drivers.items():
            if slot in self.silent:
                continue
            signed = self._drive(d)
            if signed is not None:
                self.deliver(signed, slot)
                moved = True
        return moved

    def run_until(self, done: Any, max_rounds: int = 10_000) -> None:
        for _ in range(max_rounds):
            if done(self) or self.ended():
                return
            if not self.round():
                return
        raise AssertionError("the table did not get there")


class SessionTable(InMemoryTable):
    """Slot 0 is ``session``; its effects are carried out as the node's are: events in
    ``events``, writes to ``store`` (through :class:`p2p.net.durable.Durable`), sends in
    ``sent``."""

    def __init__(
        self, tmp: Path, game: str, seats: int, limits: tuple[int, int, int, int] | None = None
    ) -> None:
        genesis, ids, seals = game_genesis(game, seats, limits=limits, names=PLAYERS[:seats])
        super().__init__(other_drivers(genesis, ids, seals))
        keys = SeatKeys(0, ids[0], seals[0], secrets.token_bytes(32), None)
        record = Record(genesis, rule_factory(keys))
        self.identity = ids[0]
        self._session = TableSession(record, ids[0], 0)
        self.driver = SeatDriver(record, ids[0], 0)
        tmp.mkdir(parents=True, exist_ok=True)
        self.store = RecordFile.create(tmp / "table.rec", genesis)
        self.events: list[NodeEvent] = []
        self.sent: list[effects.Effect] = []
        self.durable = Durable(lambda: self.store, self.sent.append)

    @property
    def record(self) -> Record:
        return self.session.record

    @property
    def session(self) -> TableSession:
        return self._session

    def now(self) -> float:
        return NOW

    @property
    def path(self) -> Path:
        return self.store.path

    def do(self, todo: list[effects.Effect]) -> None:
        """Carry out the session's effects as :meth:`p2p.net.node.Node._do` does (what the
        node shows a player is left out: no player sits here)."""
        for fx in todo:
            if isinstance(fx, NodeEvent):
                self.events.append(fx)
            elif isinstance(fx, WRITES):
                self.durable.write(fx, None)
            elif isinstance(fx, SENDS):
                self.durable.send(fx)

    def run(self, event: str, *args: Any) -> Any:
        """Give the session an event (its method ``event``), as ``Node._run`` does."""
        try:
            out = getattr(self.session, event)(*args)
        finally:
            self.do(self.session.drain())
        if isinstance(out, list):
            self.do(out)
            return None
        return out

    def to_me(self, signed: wire.Signed, author: int) -> None:
        self.run("offer", signed, author, True)

    def act(self) -> list[wire.Signed]:
        """Sign every entry we owe, as the node's seat does (a voter signs nothing more)."""
        before = len(self.sent)
        session, rec = self.session, self.record
        while not session.ended() and session.my_vote is None and rec.owes(0):
            body = self.driver.next_body(self.chooser(0))
            if body is None:
                break
            self.run("own", body)
        return [fx.accepted.signed for fx in self.sent[before:] if isinstance(fx, effects.SendOwn)]

    def ended(self) -> bool:
        return self.session.ended()

    def vote_end(self, slot: int) -> str | None:
        """Our player votes to end the table for ``slot`` (``Node.vote_end``)."""
        return self.run("vote", slot, NOW)

    def take_vote(self, vote: wire.EndVote, via: int) -> None:
        self.run("take_vote", vote, via)

    def close(self) -> None:
        self.store.close()


@contextmanager
def session_table(tmp: Path, game: str = "high-card", seats: int = 3) -> Iterator[SessionTable]:
    """A :class:`SessionTable` whose record file is closed after use."""
    t = SessionTable(tmp, game, seats)
    try:
        yield t
    finally:
        t.close()
