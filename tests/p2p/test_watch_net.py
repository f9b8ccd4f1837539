"""A spectator and the seats in one Trio run on loopback (real TCP, real nodes, issue 20).

The whole story over real processes is tests/p2p/test_watch_procs.py; here, cheaply:

* a table of three real :class:`p2p.net.node.Node` s plays a paced demo record (each step
  waits on a seat long enough for the others to ask for it again, the ``Fetch`` of
  p2p/table/relay.py), one of its players leaves mid-game, and a :class:`Watcher` follows
  it: the spectator reaches the seats' head, is told who left in the players' words,
  and no seat sends it a ``Fetch`` (a spectator holds no record to ask);
* while the spectator is linked, the seats' silence rules count links to seats only: a
  spectator's link is no sign that a seat is heard (or that we are not cut off);
* a spectator checks shuffle proofs and tokens in worker threads, as a seat does
  (p2p/net/offload.py), and reaches the seats' result;
* a seat notice is checked and told once; a forged one blames only the link.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import trio

from crypto.identity import IdentityKey
from p2p.net.node import Node
from p2p.net.watcher import WatchConfig, Watcher
from p2p.table import local_table
from p2p.table.events import Meshed, NodeEvent, SeatBack, SeatLeft, SpectatorJoined
from p2p.table.notice import Notices, sign_notice
from p2p.table.seat import game_of
from p2p.table.session import TableSession
from p2p.table.spectator import Spectator
from tests.p2p._nethelpers import no_leaks
from tests.p2p._tables import config

SEATS = 3
STEPS = 18
PACE_MS = 350
"""Each seat signs at most one demo entry per this interval: the others wait on it past
the relay's first ask (p2p/table/relay.py, ``NUDGE_S``), so they ask their links again."""
LEAVE_AT = 5
"""The player p1 (its slot is the order it joined in) leaves once the spectator holds this
many record steps; a second spectator comes in once the first was told."""
TIMEOUT_S = 60


async def test_a_spectator_follows_the_seats_is_told_who_left_and_is_asked_for_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    nodes: list[Node] = []
    results: dict[int, Any] = {}
    joined = trio.Event()
    told: dict[str, list[SeatLeft]] = {"Wes": [], "Lou": []}
    ticks: list[tuple[int, int, int, int]] = []
    """(seat, seat links, links counted by the silence rules, every link) at each tick of
    the opener, once its spectator is linked."""

    original_tick = TableSession.tick

    def tick(
        self: TableSession, now: float, linked: frozenset[int], connected: int, watching: int = 0
    ) -> Any:
        mesh = nodes[0].mesh if nodes else None
        if self.my_seat == nodes[0].my_seat and mesh is not None and joined.is_set():
            ticks.append((self.my_seat, len(linked), connected, len(mesh.connections)))
        return original_tick(self, now, linked, connected, watching)

    monkeypatch.setattr(TableSession, "tick", tick)

    meshed: list[Meshed] = []

    def on_event(event: NodeEvent) -> None:
        if isinstance(event, SpectatorJoined):
            joined.set()
        if isinstance(event, Meshed):
            meshed.append(event)

    def cfg(i: int) -> Any:
        extra = {"on_event": on_event} if i == 0 else {}
        return config(tmp_path, i, demo_steps=STEPS, demo_pace_ms=PACE_MS, spectators=2, **extra)

    with trio.fail_after(TIMEOUT_S):
        async with no_leaks(), trio.open_nursery() as nursery:
            opener = Node(cfg(0))
            nodes.append(opener)

            async def run_opener() -> None:
                results[0] = await opener.open("slave", SEATS, {"variant": "classic"})

            nursery.start_soon(run_opener)
            while opener.mesh is None or opener.mesh.listen_port is None:
                await trio.sleep(0.01)
            address = opener.mesh.address
            for i in range(1, SEATS):
                node = Node(cfg(i))
                nodes.append(node)

                async def run_joiner(node: Node = node, i: int = i) -> None:
                    results[i] = await node.join(peer=address)

                nursery.start_soon(run_joiner)

            def watcher(name: str, links: int) -> Watcher:
                def seen(spectator: Spectator, event: SeatLeft) -> None:
                    told[name].append(event)

                cfg = WatchConfig(name=name, peer=address, links=links, on_seat=seen)  # type: ignore[arg-type]
                return Watcher(cfg)

            first, late = watcher("Wes", 2), watcher("Lou", 1)
            watched: dict[str, Any] = {}

            async def leave_mid_game() -> None:
                while first.spectator is None or first.spectator.step <= LEAVE_AT:
                    await trio.sleep(0.05)
                nodes[1]._run("leave")  # its player left: a bot plays the seat from now on
                while not told["Wes"]:
                    await trio.sleep(0.05)
                watched["Lou"] = await late.run()  # comes in after the notice went round

            nursery.start_soon(leave_mid_game)
            watched["Wes"] = await first.run()

    seats = [results[i] for i in range(SEATS)]
    for name in ("Wes", "Lou"):
        spectator = watched[name].spectator
        assert {r.record.head for r in seats} == {spectator.head}
        assert spectator.record.finished and spectator.verdict is None
        # told who left, in the players' words, once (each linked seat passes it on), and
        # the late spectator as it came in
        assert [(e.name, e.slot) for e in told[name]] == [("p1", nodes[1].my_seat)], name
        assert told[name][0].describe() == "p1 left; a bot now plays their seat"
    # the seats asked each other for late steps, but never a spectator
    assert any(s.session is not None and s.session.nudge.asked for s in nodes)
    for w in (first, late):
        assert w.ignored.get("fetch", 0) == 0, w.ignored
    # "connected to N of M seats" counts seats (a spectator may be linked already)
    assert [(m.connected, m.of) for m in meshed] == [(SEATS - 1, SEATS - 1)]
    # the opener's silence rules counted its seat links only while the spectator was linked
    assert ticks
    assert all(links == connected for _, links, connected, _ in ticks), ticks
    assert any(every > connected for _, _, connected, every in ticks), ticks


@pytest.fixture(scope="module")
def high_card() -> local_table.LocalTable:
    table = local_table.run(local_table.new_table("high-card", 3))
    assert not table.cheats and all(r.finished for r in table.records)
    return table


@pytest.mark.parametrize("offload", [True, False])
async def test_a_spectator_checks_proofs_off_the_loop_as_a_seat_does(high_card, offload) -> None:
    watcher = Watcher(WatchConfig(offload=offload))
    watcher.spectator = spectator = Spectator(high_card.genesis)
    watcher.manifest = spectator.manifest
    link = spectator.manifest.seats[0].identity
    for signed in high_card.log:
        await watcher._check_ahead([signed])
        watcher._offer(signed, link)
        assert spectator.failure is None and spectator.verdict is None
    result = spectator.result()
    assert result is not None and spectator.record.finished
    seat = game_of(high_card.records[0]).result()
    assert (result["ranking"], result["state_hash"]) == (seat["ranking"], seat["state_hash"])
    assert spectator.head == high_card.records[0].head
    if offload:
        # shuffles and tokens were checked in worker threads, and the fold took the results
        assert watcher.offload is not None and watcher.offload.jobs_run > 0
        assert spectator.proofs > 0
    else:
        assert watcher.offload is None


def test_a_notice_is_checked_told_once_and_a_forged_one_blames_only_the_link(high_card) -> None:
    told: list[Any] = []
    watcher = Watcher(WatchConfig(on_seat=lambda s, e: told.append(e)))
    watcher.spectator = spectator = Spectator(high_card.genesis)
    watcher.manifest = manifest = spectator.manifest
    watcher.notices = Notices(manifest)
    table_id, ann = manifest.table_id, high_card.drivers[1].identity
    left = sign_notice(ann, table_id, 1, 0, 7, back=False)
    forged = sign_notice(IdentityKey.generate(), table_id, 1, 1, 8, back=True)
    watcher._take_notice(forged, 2)
    assert told == [] and len(watcher.junk) == 1
    assert watcher.junk[0].startswith(f"from {manifest.seats[2].name}'s link: a notice that")
    assert "key did not sign it" in watcher.junk[0]
    watcher._take_notice(left, 0)
    watcher._take_notice(left, 2)  # the same notice from another link: told once
    assert [(type(e), e.slot, e.step) for e in told] == [(SeatLeft, 1, 7)]
    watcher._take_notice(sign_notice(ann, table_id, 1, 1, 9, back=True), 0)
    assert [type(e) for e in told] == [SeatLeft, SeatBack]
    assert told[-1].describe() == f"{manifest.seats[1].name} is back"
