"""Strangers (keys that passed the handshake but never joined) and keepalives, on loopback.

What one hostile LAN host may cost a table before it joins (issue: "memory and
lockout"): small frames only, a byte allowance, one inbox budget shared by all
strangers, a cap on strangers per address and in all where the oldest makes
room for a newcomer, a short window to say anything, handshake slots where the
oldest pending one makes room, and metered keepalives.  Addresses other than
127.0.0.1 are other loopback addresses (127.0.0.x), so "many hosts" stay on
this machine.  The 60 s flood with the opener's RSS is ``slaiga bench flood``;
a short one is here.
"""

from __future__ import annotations

import contextlib
import secrets
from pathlib import Path

import trio

from bench import flood
from crypto.identity import IdentityKey
from crypto.seal import SealKey
from p2p import wire
from p2p.errors import ConnectionClosed, NodeError
from p2p.net import mesh
from p2p.net.mesh import FramedStream, Inbound, PeerDown, PeerUp, handshake_dialer, open_mesh
from p2p.net.node import Node, TableResult
from tests.p2p._nethelpers import LOOPBACK, no_leaks, raw_hello
from tests.p2p._tables import config

TIMEOUT_S = 30
MiB = 1 << 20


async def _connect(port: int, source: str = LOOPBACK) -> trio.SocketStream:
    sock = trio.socket.socket()
    await sock.bind((source, 0))
    await sock.connect((LOOPBACK, port))
    return trio.SocketStream(sock)


async def stranger(
    port: int, table: bytes | None, source: str = LOOPBACK
) -> tuple[FramedStream, IdentityKey]:
    """A fresh key that passes the handshake from ``source`` (and then does what the test
    says: nothing, junk, pings)."""
    key = IdentityKey.generate()
    framed = FramedStream(await _connect(port, source))
    await handshake_dialer(framed, key, table)
    return framed, key


async def closed_with(framed: FramedStream) -> wire.Message | None:
    """Read until the other side closes; the last message it sent (a Reject, say)."""
    last = None
    try:
        while True:
            last = (await framed.receive()).message
    except ConnectionClosed:
        return last


async def next_of(m: mesh.Mesh, cls: type) -> object:
    while True:
        event = await m.inbox.receive()
        if isinstance(event, cls):
            return event


# ---------------------------------------------------------------------------
# Memory: small frames, an allowance, one shared budget
# ---------------------------------------------------------------------------


async def test_a_stranger_is_cut_off_at_the_prefix_of_a_frame_over_a_few_kib() -> None:
    """A stranger's 8 KiB frame ends its link before the body is read; a member (and a
    stranger once it has joined) may send it."""
    a = IdentityKey.generate()
    table = secrets.token_bytes(16)
    blob = wire.Fetch(table, 0)  # small: delivered from a stranger
    big = wire.Signed(secrets.token_bytes(8 << 10), bytes(64))
    with trio.fail_after(TIMEOUT_S):
        async with no_leaks(), open_mesh(a, table, host=LOOPBACK) as ma:
            ma.members = {a.public}
            framed, key = await stranger(ma.listen_port, table)
            await framed.send(blob)
            got = await next_of(ma, Inbound)
            assert got.peer == key.public and ma.inbox.strangers_held == 0
            await framed.send(big)
            down = await next_of(ma, PeerDown)
            assert down.peer == key.public and down.remote_error
            assert f"outside 17..{mesh.STRANGER_MAX_FRAME + 16}" in down.reason
            assert ma.bytes_held() <= mesh.STRANGER_MAX_FRAME
            await framed.aclose()
            # once it has joined, the same key may send a big frame
            framed, key = await stranger(ma.listen_port, table)
            await framed.send(blob)
            await next_of(ma, Inbound)
            ma.members.add(key.public)
            await framed.send(big)
            got = await next_of(ma, Inbound)
            assert isinstance(got.message, wire.Signed) and len(got.message.entry) == 8 << 10
            await framed.aclose()


async def test_strangers_share_one_inbox_budget_and_each_has_an_allowance() -> None:
    """Sixteen strangers each push small messages nobody reads: together they hold at most
    the shared budget (not sixteen members' shares), and each is refused past its byte
    allowance, with the reason."""
    a = IdentityKey.generate()
    table = secrets.token_bytes(16)
    n = 16
    msg = wire.Signed(secrets.token_bytes(3 << 10), bytes(64))
    with trio.fail_after(TIMEOUT_S):
        async with no_leaks(), open_mesh(a, table, host=LOOPBACK) as ma:
            ma.members = {a.public}
            links = [await stranger(ma.listen_port, table, f"127.0.3.{i + 1}") for i in range(n)]
            peak = 0
            async with trio.open_nursery() as nursery:

                async def push(framed: FramedStream) -> None:
                    for _ in range(2 * mesh.STRANGER_BYTES // len(wire.encode_frame(msg))):
                        try:
                            await framed.send(msg)
                        except ConnectionClosed:
                            return

                for framed, _ in links:
                    nursery.start_soon(push, framed)
                for _ in range(200):
                    peak = max(peak, ma.inbox.bytes)
                    await trio.sleep(0.005)
            pushed = n * 2 * mesh.STRANGER_BYTES
            assert peak <= mesh.STRANGERS_INBOX_BYTES + 2 * len(wire.encode_frame(msg)) + 256
            assert pushed >= 4 * mesh.STRANGERS_INBOX_BYTES
            # nobody reads the inbox; as it drains, each stranger meets its allowance
            async with trio.open_nursery() as nursery:
                nursery.start_soon(lambda: _drain(ma))
                rejects = [await closed_with(framed) for framed, _ in links]
                nursery.cancel_scope.cancel()
            assert all(isinstance(r, wire.Reject) and r.reason == "busy" for r in rejects)
            assert all("without joining" in r.detail for r in rejects)
            assert ma.strangers_cut == n
            for framed, _ in links:
                await framed.aclose()


async def _drain(m: mesh.Mesh) -> None:
    while True:
        await m.inbox.receive()


async def test_a_keyless_flood_leaves_the_openers_rss_within_64_mib() -> None:
    """A few seconds of ``slaiga bench flood`` (the 60 s run is the bench): 24 strangers
    with fresh keys push 1 MiB frames and 4 flood pings against a ``slaiga open`` child;
    its resident memory (read from /proc) stays within 64 MiB of what it was before, and an
    honest player then joins and finishes (before the fix: +130 MiB in 4 s)."""
    out = await trio.to_thread.run_sync(flood.measure, 3.0, 24, 4)
    growth = out["rss_peak_mib"] - out["rss_before_mib"]
    assert growth <= flood.RSS_MARGIN_MIB, out
    assert out["stranger_links"] > 24, out  # they came back with new keys
    assert out["honest_join_finished"] and out["opener_finished"], out
    print(f"flood: RSS +{growth:.1f} MiB, {out}")


# ---------------------------------------------------------------------------
# Lockout: strangers per address, the oldest makes room, a short silent window
# ---------------------------------------------------------------------------


async def test_idle_strangers_from_one_host_do_not_close_the_lobby(tmp_path: Path) -> None:
    """More idle strangers from one host (127.0.0.2) than it may hold: that host keeps at most
    its share (its oldest are told ``busy``), no one is refused at the handshake, and an
    honest player joins while the rest still wait (before the fix: "table is busy")."""
    results: dict[int, TableResult] = {}
    idle = mesh.MAX_STRANGERS_PER_ADDRESS + 4
    with trio.fail_after(TIMEOUT_S):
        async with no_leaks():
            opener = Node(config(tmp_path, 0, demo_steps=6))
            async with trio.open_nursery() as nursery:

                async def run_opener() -> None:
                    results[0] = await opener.open("slave", 2, {"variant": "classic"})

                nursery.start_soon(run_opener)
                while opener.mesh is None or opener.mesh.listen_port is None:
                    await trio.sleep(0.01)
                m = opener.mesh
                links = [
                    await stranger(m.listen_port, m.table_id, "127.0.0.2") for _ in range(idle)
                ]
                while len(m.strangers()) < mesh.MAX_STRANGERS_PER_ADDRESS:
                    await trio.sleep(0.01)
                assert len(m.strangers()) == mesh.MAX_STRANGERS_PER_ADDRESS
                assert m.strangers_evicted == idle - mesh.MAX_STRANGERS_PER_ADDRESS
                first = await closed_with(links[0][0])
                assert isinstance(first, wire.Reject) and first.reason == "busy"
                # an honest player joins while that host's strangers still wait
                assert len(m.strangers()) == mesh.MAX_STRANGERS_PER_ADDRESS
                joiner = Node(config(tmp_path, 1, demo_steps=6))
                results[1] = await joiner.join(peer=m.address)
                while 0 not in results:
                    await trio.sleep(0.01)
                for framed, _ in links:
                    await framed.aclose()
    assert results[0].record.finished and results[0].record.head == results[1].record.head


async def test_the_oldest_stranger_makes_room_when_the_lobby_is_full() -> None:
    """Strangers from many addresses fill the lobby: a newcomer takes the oldest's place."""
    a = IdentityKey.generate()
    table = secrets.token_bytes(16)
    with trio.fail_after(TIMEOUT_S):
        async with no_leaks(), open_mesh(a, table, host=LOOPBACK) as ma:
            ma.members = {a.public}
            links = []
            for i in range(mesh.MAX_STRANGERS + 1):
                links.append(await stranger(ma.listen_port, table, f"127.0.1.{i % 8 + 1}"))
            while ma.strangers_evicted < 1:
                await trio.sleep(0.01)
            oldest = await closed_with(links[0][0])
            assert isinstance(oldest, wire.Reject) and oldest.reason == "busy"
            assert "took your place" in oldest.detail
            assert len(ma.strangers()) == mesh.MAX_STRANGERS
            assert links[-1][1].public in {c.peer for c in ma.strangers()}
            for framed, _ in links:
                await framed.aclose()


async def test_a_silent_stranger_gets_a_short_window_and_one_that_speaks_stays() -> None:
    a = IdentityKey.generate()
    table = secrets.token_bytes(16)
    with trio.fail_after(TIMEOUT_S):
        async with no_leaks(), open_mesh(a, table, host=LOOPBACK, stranger_silent=0.3) as ma:
            ma.members = {a.public}
            silent, quiet_key = await stranger(ma.listen_port, table)
            talker, talker_key = await stranger(ma.listen_port, table)
            await talker.send(wire.Fetch(table, 0))
            refusal = await closed_with(silent)
            assert isinstance(refusal, wire.Reject) and "sent nothing within 0.3s" in refusal.detail
            down = await next_of(ma, PeerDown)
            assert down.peer == quiet_key.public and ma.connected(talker_key.public)
            for framed in (silent, talker):
                await framed.aclose()


# ---------------------------------------------------------------------------
# Handshake slots from many addresses
# ---------------------------------------------------------------------------

SLOT_ADDRESSES = 40
SLOT_SOCKETS_PER_ADDRESS = 2


async def test_stalled_handshakes_from_many_addresses_do_not_lock_out_a_seat() -> None:
    """Two sockets from each of 40 addresses send a complete Hello and stall before their
    Auth, so every slot is taken (and the hello window does not free them): an honest
    dial is not refused, it takes the oldest pending handshake's slot."""
    a, b = IdentityKey.generate(), IdentityKey.generate()
    table = secrets.token_bytes(16)
    with trio.fail_after(TIMEOUT_S):
        async with no_leaks(), open_mesh(a, table, host=LOOPBACK) as ma, open_mesh(b, table) as mb:
            stalled = []
            for i in range(SLOT_ADDRESSES * SLOT_SOCKETS_PER_ADDRESS):
                source = f"127.0.2.{i // SLOT_SOCKETS_PER_ADDRESS + 1}"
                framed = FramedStream(await _connect(ma.listen_port, source))
                await framed.receive()  # the listener's Hello
                mine, _ = raw_hello(IdentityKey.generate().public, table)
                await framed.send_frame(wire.frame(mine))
                stalled.append(framed)
            while ma.pending_handshakes < mesh.MAX_PENDING_HANDSHAKES:
                await trio.sleep(0.01)
            await mb.dial(ma.address)
            up = await next_of(ma, PeerUp)
            assert up.peer == b.public
            dropped = ma.handshakes_dropped
            assert (
                dropped >= SLOT_ADDRESSES * SLOT_SOCKETS_PER_ADDRESS - mesh.MAX_PENDING_HANDSHAKES
            )
            assert not any("busy" in f and "dropped" not in f for f in ma.handshake_failures)
            for framed in stalled:
                await framed.aclose()
    print(f"slot flood from {SLOT_ADDRESSES} addresses: {dropped} oldest handshakes dropped")


# ---------------------------------------------------------------------------
# Keepalives are metered
# ---------------------------------------------------------------------------

PING_FLOOD = 500


@contextlib.asynccontextmanager
async def _seated_peer():  # type: ignore[no-untyped-def]
    """A mesh, and a seated peer's raw link to it (handshake done, the mesh saw it come
    up): yields (mesh, the peer's framed stream, its key, the table id)."""
    a, b = IdentityKey.generate(), IdentityKey.generate()
    table = secrets.token_bytes(16)
    with trio.fail_after(TIMEOUT_S):
        async with no_leaks(), open_mesh(a, table, host=LOOPBACK) as ma:
            framed = FramedStream(await _connect(ma.listen_port))
            await handshake_dialer(framed, b, table)
            await next_of(ma, PeerUp)
            yield ma, framed, b, table
            await framed.aclose()


async def test_a_ping_flood_ends_the_link_after_a_few() -> None:
    """A seated peer (not a stranger) sends 500 pings at once: the link ends after the
    burst allowance with a clear reason, and few pongs were sent back."""
    async with _seated_peer() as (ma, framed, b, _):
        ping = wire.encode_frame(wire.Ping(1))
        sent = 0
        with contextlib.suppress(ConnectionClosed):  # reset once the listener cuts us off
            for _ in range(PING_FLOOD):
                await framed.send_frame(ping)
                sent += 1
        down = await next_of(ma, PeerDown)
        assert down.peer == b.public and down.remote_error
        assert "keepalive flood" in down.reason
        pongs = 0
        try:
            while True:
                if isinstance((await framed.receive()).message, wire.Pong):
                    pongs += 1
        except ConnectionClosed:
            pass
        assert pongs <= ma.keepalive_burst + 1


async def test_honest_keepalives_and_a_backlog_after_a_pause_are_not_a_flood() -> None:
    """The keepalive backlog of a peer we did not read for its dead time is allowed."""
    async with _seated_peer() as (ma, framed, b, table):
        backlog = int(2 * ma.keepalive_dead / ma.keepalive_interval)
        for _ in range(backlog):
            await framed.send_frame(wire.encode_frame(wire.Ping(1)))
        await framed.send(wire.Fetch(table, 1))
        got = await next_of(ma, Inbound)
        assert isinstance(got.message, wire.Fetch) and ma.connected(b.public)


# ---------------------------------------------------------------------------
# A refused Join hears why
# ---------------------------------------------------------------------------


async def test_a_refused_join_gets_its_reason_before_the_link_closes(tmp_path: Path) -> None:
    """A Join naming another identity than the one the handshake proved is refused, and the
    Reject reaches the joiner before the opener closes the link (it used to be dropped with
    the outbox)."""
    with trio.fail_after(TIMEOUT_S):
        async with no_leaks():
            opener = Node(config(tmp_path, 0, demo_steps=6, open_timeout_s=3.0))
            async with trio.open_nursery() as nursery:

                async def run_opener() -> None:
                    with contextlib.suppress(NodeError):  # nobody joins: the table closes
                        await opener.open("slave", 2, {"variant": "classic"})

                nursery.start_soon(run_opener)
                while opener.mesh is None or opener.mesh.listen_port is None:
                    await trio.sleep(0.01)
                m = opener.mesh
                framed, _ = await stranger(m.listen_port, m.table_id)
                other = IdentityKey.generate().public
                member = wire.Member("mallory", other, SealKey.generate().public, "127.0.0.1:1")
                await framed.send(wire.Join(member))
                refusal = await closed_with(framed)
                await framed.aclose()
                nursery.cancel_scope.cancel()
    assert isinstance(refusal, wire.Reject), refusal
    assert refusal.reason == "identity" and "another identity" in refusal.detail
