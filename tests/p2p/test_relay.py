"""A healthy table sends each entry once per link (p2p/table/relay.py).

Counts, never times: a whole demo table of real nodes over loopback TCP passes on
no entry of another seat, and the policy relays only to a seat that told us it has
no link to the entry's author.  tests/p2p/test_netns.py plays a real game through
one cut link and a partition with these rules.
"""

from __future__ import annotations

import collections
from pathlib import Path

import trio

from p2p import wire
from p2p.net.mesh import Inbox
from p2p.net.node import Node
from p2p.table.relay import NUDGE_MAX_S, NUDGE_S, Nudge, relay_to
from p2p.wire.events import Inbound
from tests.p2p._tables import config

ALL = frozenset(range(4))


def test_a_seat_linked_to_the_author_gets_no_relay():
    links = {slot: ALL - {slot} for slot in ALL}
    assert relay_to(author=1, via=1, me=0, linked=[1, 2, 3], links=links) == []


def test_a_seat_cut_off_from_the_author_gets_it_from_us():
    links = {slot: ALL - {slot} for slot in ALL}
    links[3] = frozenset({0, 2})  # seat 3 told us it lost its link to seat 1
    assert relay_to(author=1, via=1, me=0, linked=[1, 2, 3], links=links) == [3]
    # never back to where it came from, to its author, to us, or over a link we lack
    assert relay_to(author=1, via=3, me=0, linked=[1, 2, 3], links=links) == []
    assert relay_to(author=3, via=3, me=0, linked=[1, 2, 3], links=links) == []
    assert relay_to(author=1, via=1, me=0, linked=[1, 2], links=links) == []


def test_a_seat_that_said_nothing_yet_is_taken_to_be_linked():
    assert relay_to(author=1, via=1, me=0, linked=[1, 2, 3], links={}) == []


def test_a_late_step_is_asked_for_again_and_again_less_often():
    nudge = Nudge()
    assert not nudge.due(0.0, 5, waiting=True)  # the step starts: the clock starts
    assert nudge.deadline() == NUDGE_S
    assert not nudge.due(NUDGE_S / 2, 5, waiting=True)
    asked = [t for t in (x * 0.05 for x in range(1, 400)) if nudge.due(t, 5, waiting=True)]
    gaps = [b - a for a, b in zip(asked, asked[1:], strict=False)]
    assert asked and asked[0] >= NUDGE_S
    assert all(b > a for a, b in zip(gaps, gaps[1:], strict=False) if b < NUDGE_MAX_S)
    assert nudge.asked == len(asked) <= 8  # log of the wait, not its length
    # a step that moved on, or that waits on us only, starts over
    assert not nudge.due(20.0, 6, waiting=True)
    assert not nudge.due(21.0, 6, waiting=False)
    assert nudge.deadline() is None


async def _table(tmp: Path, n: int, steps: int, round_every: int) -> list[Node]:
    nodes = [
        Node(config(tmp, i, demo_steps=steps, round_every=round_every, linger_s=5.0))
        for i in range(n)
    ]
    results = []
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:

            async def run_opener() -> None:
                results.append(await nodes[0].open("bench", n, {}))

            nursery.start_soon(run_opener)
            while nodes[0].mesh is None or nodes[0].mesh.listen_port is None:
                await trio.sleep(0.005)
            address = nodes[0].mesh.address
            for node in nodes[1:]:

                async def run_joiner(node: Node = node) -> None:
                    results.append(await node.join(peer=address))

                nursery.start_soon(run_joiner)
    assert len({r.record.head for r in results}) == 1
    return nodes


def test_a_healthy_table_passes_no_entry_on(tmp_path: Path) -> None:
    """Four nodes, turns and rounds of all seats: every entry reaches each seat over its
    author's link only (no relay frame at all), and every record is the same."""
    nodes = trio.run(_table, tmp_path, 4, 40, 3)
    assert [node.session.relayed for node in nodes] == [0, 0, 0, 0]
    entries = {len(node.record.signed_from(1)) for node in nodes}
    assert len(entries) == 1 and entries.pop() > 40


def test_no_entry_crosses_a_link_twice(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Four nodes over loopback: every entry of a seat reaches each other seat over its
    author's link once (a ``Signed`` frame), and no link carries any entry twice: the
    fetch each seat makes as its links come up is answered without our own entries queued
    on that link already, and is not made twice for one link (a spy counts what each
    node's mesh delivers)."""
    copies: collections.Counter[tuple[int, bytes, bytes]] = collections.Counter()
    direct: collections.Counter[tuple[int, bytes]] = collections.Counter()
    put = Inbox.put

    async def counting_put(self: Inbox, event: Inbound, stranger: bool = False) -> None:
        msg = event.message
        if isinstance(msg, wire.Signed):
            copies[(id(self), event.peer, msg.signature)] += 1
            direct[(id(self), event.peer)] += 1
        elif isinstance(msg, wire.Fetched):
            for signed in msg.entries:
                copies[(id(self), event.peer, signed.signature)] += 1
        await put(self, event, stranger)

    monkeypatch.setattr(Inbox, "put", counting_put)
    nodes = trio.run(_table, tmp_path, 4, 40, 3)
    twice = {key: n for key, n in copies.items() if n > 1}
    assert twice == {}
    seats = collections.Counter(_author(s) for s in nodes[0].record.signed_from(1))
    authored = {node.identity.public: seats[node.my_seat] for node in nodes}
    inboxes = {id(node.mesh.inbox) for node in nodes}  # type: ignore[union-attr]
    for (inbox, peer), n in direct.items():
        assert inbox in inboxes
        assert n == authored[peer]  # each of its own entries, once: no relay, no copy
    assert len(direct) == 4 * 3  # every ordered pair of seats


def _author(signed: wire.Signed) -> int:
    entry = wire.decode_body(signed.entry, wire.Entry)
    return entry.seat  # type: ignore[attr-defined]
