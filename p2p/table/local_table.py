"""A whole game table in one process: every seat's real protocol code, routed in memory.

Each seat has its own identity key, its own :class:`p2p.record.chain.Record` with its
own secrets (:class:`p2p.table.seat.SeatDriver`), and its own bot.  The router
signs each seat's entries and offers the exact signed bytes to every other
seat's record, so every body is encoded and decoded and every proof checked
just as over the network; only the sockets are missing.  It is the
in-process dealer built from the very same per-seat code that peers run, so
tests of the protocol and the benchmark's in-process baseline
(``slaiga bench table``) exercise what a LAN table does.
"""

from __future__ import annotations

import random
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from crypto.identity import IdentityKey
from crypto.seal import SealKey
from engine import registry
from engine.options import manifest_options
from engine.players import BotPlayer
from p2p.errors import CheatDetected, LocalProtocolError
from p2p.record.chain import Record
from p2p.table.forming import (
    DEFAULT_MAX_WAIT_MS,
    DEFAULT_STALL_AFTER_MS,
    Manifest,
    make_genesis,
    manifest_bytes,
    new_table_id,
    sign_manifest,
)
from p2p.table.game_rule import (
    DEFAULT_DECIDE_MAX_MS,
    DEFAULT_DECIDE_STALL_MS,
    GameProtocol,
    SeatKeys,
)
from p2p.table.seat import SeatDriver, rule_factory
from p2p.wire import PROTOCOL_VERSION, Genesis, Member, Signed


@dataclass
class LocalTable:
    """The seats of one in-process table and what happened."""

    genesis: Genesis
    drivers: list[SeatDriver]
    players: dict[int, BotPlayer] = field(default_factory=dict)
    log: list[Signed] = field(default_factory=list)
    cheats: list[CheatDetected] = field(default_factory=list)

    @property
    def records(self) -> list[Record]:
        return [d.record for d in self.drivers]


def game_genesis(
    game: str,
    seats: int,
    options: Mapping[str, Any] | None = None,
    identities: list[IdentityKey] | None = None,
    seals: list[SealKey] | None = None,
    limits: tuple[int, int, int, int] | None = None,
    names: list[str] | None = None,
) -> tuple[Genesis, list[IdentityKey], list[SealKey]]:
    """A signed genesis for a game table of ``seats`` fresh identities (tests, bench);
    ``limits`` are the silence limits in ms (stall, max wait, decision stall, decision
    max wait), the defaults when ``None``; ``names`` the players' names (``seatN``)."""
    stall, wait, decide_stall, decide_max = limits or (
        DEFAULT_STALL_AFTER_MS,
        DEFAULT_MAX_WAIT_MS,
        DEFAULT_DECIDE_STALL_MS,
        DEFAULT_DECIDE_MAX_MS,
    )
    spec = registry.get(game)
    opts = manifest_options(
        spec.game_class.OPTIONS, spec.factory(seats, dict(options or {})).options
    )
    ids = identities or [IdentityKey.generate() for _ in range(seats)]
    sls = seals or [SealKey.generate() for _ in range(seats)]
    members = tuple(
        Member(
            names[i] if names else f"seat{i}",
            ids[i].public,
            sls[i].public,
            f"127.0.0.1:{40000 + i}",
        )
        for i in range(seats)
    )
    manifest = Manifest(
        PROTOCOL_VERSION,
        new_table_id(),
        game,
        opts,
        members,
        stall,
        wait,
        GameProtocol(decide_stall, decide_max),
    )
    raw = manifest_bytes(manifest)
    genesis = make_genesis(raw, {i: sign_manifest(ids[i], raw) for i in range(seats)})
    return genesis, ids, sls


def new_table(
    game: str,
    seats: int,
    options: Mapping[str, Any] | None = None,
    cheats: Mapping[int, Any] | None = None,
) -> LocalTable:
    genesis, ids, seals = game_genesis(game, seats, options)
    drivers = []
    for slot in range(seats):
        keys = SeatKeys(
            slot, ids[slot], seals[slot], secrets.token_bytes(32), (cheats or {}).get(slot)
        )
        drivers.append(SeatDriver(Record(genesis, rule_factory(keys)), ids[slot], slot))
    return LocalTable(genesis, drivers)


def run(
    table: LocalTable,
    bot: str = "heuristic",
    seed: int = 0,
    max_entries: int = 200_000,
    make_player: Callable[[int, int], BotPlayer | None] | None = None,
    on_entry: Callable[[LocalTable], None] | None = None,
    lost: Mapping[int, int] | None = None,
    name_absent: bool = True,
) -> LocalTable:
    """Play until every record is finished (or a cheat ends it); raise on a stuck table.

    ``make_player(slot, engine_seat)`` may supply a seat's player (``None``: a ``bot``);
    ``on_entry(table)`` is called after each entry reached every seat (tests).
    ``lost`` maps a slot to the number of entries the table signs before that seat goes
    silent for good; when nobody else can move, every other seat still at the table
    signs ``absent`` naming the silent seats (the absence limit, with no clock)."""
    spec = registry.get(table.records[0].manifest.game)
    n = len(table.drivers)
    lost = dict(lost or {})
    silent: set[int] = set()
    voted: set[tuple[int, int, int]] = set()
    for _ in range(max_entries):
        for r in table.records:
            if r.failure is not None:
                raise r.failure  # our own code failed folding a step (its cause attached)
        live = [d for d in table.drivers if d.slot not in silent]
        if all(d.record.finished for d in live):
            return table
        silent |= {s for s, after in lost.items() if len(table.log) >= after}
        moved = False
        for d in table.drivers:
            if d.slot in silent or d.slot in d.record.removed:
                continue

            def choose(engine: Any, seat: int, d: SeatDriver = d) -> Any:
                player = table.players.get(d.slot)
                if player is None and make_player is not None:
                    player = make_player(d.slot, seat)
                if player is None:
                    player = BotPlayer.make(spec.bots[bot], seat, random.Random(seed * 1000 + seat))
                    table.players[d.slot] = player
                return player.choose(engine, seat)

            body = d.next_body(choose)
            if body is None:
                continue
            offer = d.sign(body)
            signed = offer.accepted[0].signed
            table.log.append(signed)
            table.cheats.extend(offer.cheats)
            for other in table.drivers:
                if other is d or other.slot in silent:
                    continue
                try:
                    got = other.record.offer(signed)
                except CheatDetected as exc:
                    table.cheats.append(exc)
                    continue
                table.cheats.extend(got.cheats)
            for other in table.drivers:
                view = other.seat_view()
                events = other.take_events()
                if view is not None and events and other.slot in table.players:
                    table.players[other.slot].observe(view[0], view[1], events)
            moved = True
            if on_entry is not None:
                on_entry(table)
        if table.cheats:
            return table
        if not moved and silent and name_absent:
            moved = _name_absent(table, silent, voted)
        if not moved:
            owed = table.records[0].owed
            raise LocalProtocolError(f"table stuck at step {table.records[0].step}: {owed}")
    raise LocalProtocolError(f"no end after {max_entries} entries ({n} seats)")


def _name_absent(table: LocalTable, silent: set[int], voted: set[tuple[int, int, int]]) -> bool:
    """Every seat still at the table signs ``absent`` naming the silent seats that are
    not out yet (once per step); ``True`` if any did."""
    from p2p.table.game_rule.survive import AbsentBody

    moved = False
    for d in table.drivers:
        r = d.record.lane_round()
        if d.slot in silent or d.record.finished or (d.slot, d.record.step, r) in voted:
            continue
        named = tuple(sorted(s for s in silent if s not in d.record.removed))
        if not named:
            continue
        voted.add((d.slot, d.record.step, r))
        offer = d.sign(AbsentBody(named, r))
        signed = offer.accepted[0].signed
        table.log.append(signed)
        for other in table.drivers:
            if other is d or other.slot in silent:
                continue
            try:
                got = other.record.offer(signed)
            except CheatDetected as exc:
                table.cheats.append(exc)
                continue
            table.cheats.extend(got.cheats)
        moved = True
    return moved
