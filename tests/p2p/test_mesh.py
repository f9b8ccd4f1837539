"""The Trio mesh over real loopback TCP: handshake, framing, keepalive, redial, refusals.

127.0.0.1 and port 0 only; every test has a ``fail_after`` and checks that no
task or thread is left behind.  Misbehaving peers are real sockets speaking
hand-built frames, not mocks.
"""

from __future__ import annotations

import contextlib
import functools
import secrets
import socket

import pytest
import trio

from crypto.errors import CryptoError
from crypto.identity import IdentityKey
from crypto.seal import SealKey
from p2p import wire
from p2p.errors import ConnectionClosed, HandshakeFailed, Rejected
from p2p.net.mesh import (
    FramedStream,
    Inbound,
    PeerDown,
    PeerUp,
    format_address,
    open_for_seat,
    open_mesh,
    parse_address,
    seal_for_seat,
)
from tests.p2p._nethelpers import LOOPBACK, no_leaks, raw_hello

TIMEOUT_S = 15


@contextlib.asynccontextmanager
async def listener_and_dialer(a, b, table, **kw):
    """``a``'s mesh listening on loopback and ``b``'s (which dials it), both on ``table``,
    inside :func:`no_leaks`; ``kw`` (keepalive settings) goes to both."""
    async with (
        no_leaks(),
        open_mesh(a, table, host=LOOPBACK, **kw) as ma,
        open_mesh(b, table, **kw) as mb,
    ):
        yield ma, mb


async def raw_dial(mesh):
    """Open a bare framed connection to ``mesh``'s listener; returns it and the listener's
    Hello as received (message and raw bytes), for tests that play the dialer's side of
    the handshake by hand."""
    framed = FramedStream(await trio.open_tcp_stream(LOOPBACK, mesh.listen_port))
    return framed, await framed.receive()


async def next_of(mesh, cls):
    while True:
        event = await mesh.inbox.receive()
        if isinstance(event, cls):
            return event


def test_parse_address() -> None:
    assert parse_address("127.0.0.1:5000") == ("127.0.0.1", 5000)
    assert format_address("10.0.0.1", 1) == "10.0.0.1:1"
    for bad in ("nohost", "127.0.0.1:", ":80", "h:0", "h:99999", "h:x"):
        with pytest.raises(ValueError, match="host:port"):
            parse_address(bad)


async def test_handshake_and_messages_both_ways() -> None:
    a, b = IdentityKey.generate(), IdentityKey.generate()
    table = secrets.token_bytes(16)
    with trio.fail_after(TIMEOUT_S):
        async with (
            no_leaks(),
            open_mesh(a, table, host=LOOPBACK) as ma,
            open_mesh(b, None, host=LOOPBACK) as mb,
        ):
            conn = await mb.dial(ma.address, expect_identity=a.public)
            assert mb.table_id == table  # adopted from the listener's Hello
            assert conn.peer == a.public
            up = await next_of(ma, PeerUp)
            assert up.peer == b.public and not up.dialed
            for i in range(50):
                mb.send_nowait(a.public, wire.Fetch(table, i))
            got = [await next_of(ma, Inbound) for _ in range(50)]
            assert [g.message.from_step for g in got] == list(range(50))
            assert all(g.peer == b.public for g in got)
            assert got[0].raw == wire.encode_body(wire.Fetch(table, 0))
            assert ma.broadcast(wire.Fetch(table, 7)) == 1
            back = await next_of(mb, Inbound)
            assert back.peer == a.public and back.message.from_step == 7


async def test_frames_queued_together_leave_in_one_write() -> None:
    """Frames queued for a link before its writer runs go out in one write (each with its
    own MAC, in order): an entry and what follows it wake the peer once, not once each."""
    a, b = IdentityKey.generate(), IdentityKey.generate()
    table = secrets.token_bytes(16)
    with trio.fail_after(TIMEOUT_S):
        async with listener_and_dialer(a, b, table) as (ma, mb):
            await mb.dial(ma.address, expect_identity=a.public)
            await next_of(ma, PeerUp)
            before = mb.writes
            for i in range(20):  # no checkpoint between them: all queued at once
                mb.send_nowait(a.public, wire.Fetch(table, i))
            got = [await next_of(ma, Inbound) for _ in range(20)]
            assert [g.message.from_step for g in got] == list(range(20))
            assert mb.writes - before <= 2  # one (a keepalive ping may take a second)


class _WriterSteps(trio.abc.Instrument):
    """Counts the steps of every link writer task (each a trip through the scheduler)."""

    def __init__(self) -> None:
        self.steps = 0

    def before_task_step(self, task: trio.lowlevel.Task) -> None:
        if task.coro.cr_code.co_name == "_writer":
            self.steps += 1


async def test_a_write_costs_its_writer_one_trip_through_the_scheduler() -> None:
    """A link's writer wakes for what is queued, writes it and waits again: one step per
    write, not a second one after each write the kernel took at once (issue 19)."""
    a, b = IdentityKey.generate(), IdentityKey.generate()
    table = secrets.token_bytes(16)
    with trio.fail_after(TIMEOUT_S):
        async with listener_and_dialer(a, b, table, keepalive_interval=60.0) as (ma, mb):
            await mb.dial(ma.address, expect_identity=a.public)
            await next_of(ma, PeerUp)
            await trio.sleep(0.05)  # the handshake's and link-up's writes are done
            counter = _WriterSteps()
            trio.lowlevel.add_instrument(counter)
            try:
                before = ma.writes + mb.writes
                for i in range(20):  # one frame at a time, each read before the next
                    mb.send_nowait(a.public, wire.Fetch(table, i))
                    assert (await next_of(ma, Inbound)).message.from_step == i
                writes = ma.writes + mb.writes - before
            finally:
                trio.lowlevel.remove_instrument(counter)
            assert writes == 20
            assert counter.steps <= writes + 1, (counter.steps, writes)


async def test_frames_larger_than_the_kernel_takes_at_once_arrive_whole_in_order() -> None:
    """A write the kernel takes only part of waits for room and sends the rest: with a
    tiny send buffer, a burst of large frames arrives whole and in order."""
    a, b = IdentityKey.generate(), IdentityKey.generate()
    table = secrets.token_bytes(16)
    with trio.fail_after(TIMEOUT_S):
        async with listener_and_dialer(a, b, table) as (ma, mb):
            conn = await mb.dial(ma.address, expect_identity=a.public)
            await next_of(ma, PeerUp)
            conn.framed.stream.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
            blobs = [bytes([i]) * 200_000 for i in range(12)]  # 2.4 MB in one burst
            for blob in blobs:
                mb.send_nowait(a.public, wire.Signed(blob, bytes(64)))
            got = [await next_of(ma, Inbound) for _ in blobs]
            assert [g.message.entry for g in got] == blobs
            assert conn.framed.send_waits > 0  # the kernel did make the writer wait


async def test_version_mismatch_is_refused_by_listener() -> None:
    a, b = IdentityKey.generate(), IdentityKey.generate()
    table = secrets.token_bytes(16)
    with trio.fail_after(TIMEOUT_S):
        async with no_leaks(), open_mesh(a, table, host=LOOPBACK) as ma:
            framed, hello = await raw_dial(ma)
            assert isinstance(hello.message, wire.Hello)
            raw, _ = raw_hello(b.public, table, version=wire.HANDSHAKE_VERSION + 1)
            await framed.send_frame(wire.frame(raw))
            reply = (await framed.receive()).message
            assert isinstance(reply, wire.Reject) and reply.reason == "version"
            assert "version mismatch" in reply.detail
            await framed.aclose()


async def test_version_mismatch_is_refused_by_dialer() -> None:
    """A listener speaking another protocol version: the dialer names the mismatch."""
    other = IdentityKey.generate()
    with trio.fail_after(TIMEOUT_S):
        async with no_leaks(), trio.open_nursery() as nursery:

            async def old_peer(stream: trio.SocketStream) -> None:
                framed = FramedStream(stream)
                raw, _ = raw_hello(other.public, bytes(16), version=wire.HANDSHAKE_VERSION + 5)
                await framed.send_frame(wire.frame(raw))
                with pytest.raises(ConnectionClosed):
                    while True:
                        await framed.receive()
                await framed.aclose()

            listeners = await nursery.start(
                functools.partial(trio.serve_tcp, old_peer, 0, host=LOOPBACK)
            )
            port = listeners[0].socket.getsockname()[1]
            async with open_mesh(IdentityKey.generate()) as mb:
                with pytest.raises(HandshakeFailed) as info:
                    await mb.dial(format_address(LOOPBACK, port))
                assert info.value.kind == "version"
            nursery.cancel_scope.cancel()


async def test_wrong_table_and_full_table_are_refused() -> None:
    a, b = IdentityKey.generate(), IdentityKey.generate()
    table = secrets.token_bytes(16)
    with trio.fail_after(TIMEOUT_S):
        async with (
            no_leaks(),
            open_mesh(a, table, host=LOOPBACK) as ma,
            open_mesh(b, secrets.token_bytes(16)) as mb,
        ):
            with pytest.raises(HandshakeFailed) as gone:
                await mb.dial(ma.address)
            assert gone.value.kind == "gone"
            mb.table_id = table
            ma.admit = lambda peer: ("full", "all 2 seats are taken")
            with pytest.raises(Rejected) as full:
                await mb.dial(ma.address)
            assert full.value.kind == "full" and "seats" in full.value.detail
            assert not ma.connections


async def test_impersonation_and_replayed_auth_fail() -> None:
    """Claiming another key, or replaying an Auth captured from an earlier handshake, fails."""
    a, victim, mallory = IdentityKey.generate(), IdentityKey.generate(), IdentityKey.generate()
    table = secrets.token_bytes(16)
    with trio.fail_after(TIMEOUT_S):
        async with no_leaks(), open_mesh(a, table, host=LOOPBACK) as ma:
            # 1. Record an honest handshake by the victim (raw, to capture its Auth frame).
            framed, hello_a = await raw_dial(ma)
            v_hello, _ = raw_hello(victim.public, table)
            await framed.send_frame(wire.frame(v_hello))
            captured = wire.Auth(victim.sign(wire.auth_transcript(v_hello, hello_a.raw)))
            await framed.send(captured)
            assert isinstance((await framed.receive()).message, wire.Auth)
            await framed.aclose()

            # 2. Mallory replays the victim's Hello and captured Auth on a new connection.
            framed, _ = await raw_dial(ma)  # fresh listener nonce and ephemeral
            await framed.send_frame(wire.frame(v_hello))
            await framed.send(captured)
            reply = (await framed.receive()).message
            assert isinstance(reply, wire.Reject) and reply.reason == "identity"
            await framed.aclose()

            # 3. Mallory claims the victim's key and signs with her own.
            framed, hello_a = await raw_dial(ma)
            m_hello, _ = raw_hello(victim.public, table)
            await framed.send_frame(wire.frame(m_hello))
            await framed.send(wire.Auth(mallory.sign(wire.auth_transcript(m_hello, hello_a.raw))))
            reply = (await framed.receive()).message
            assert isinstance(reply, wire.Reject) and reply.reason == "identity"
            await framed.aclose()
            assert sum("signature invalid" in f for f in ma.handshake_failures) == 2


async def test_dialer_checks_expected_identity() -> None:
    a, b = IdentityKey.generate(), IdentityKey.generate()
    table = secrets.token_bytes(16)
    with trio.fail_after(TIMEOUT_S):
        async with listener_and_dialer(a, b, table) as (ma, mb):
            with pytest.raises(HandshakeFailed) as info:
                await mb.dial(ma.address, expect_identity=IdentityKey.generate().public)
            assert info.value.kind == "identity"
            with pytest.raises(HandshakeFailed, match="announced"):
                await mb.dial(ma.address, expect_fingerprint="00" * 8)


async def test_junk_after_handshake_closes_with_remote_error() -> None:
    a, b = IdentityKey.generate(), IdentityKey.generate()
    table = secrets.token_bytes(16)
    with trio.fail_after(TIMEOUT_S):
        async with listener_and_dialer(a, b, table) as (ma, mb):
            conn = await mb.dial(ma.address)
            await next_of(ma, PeerUp)
            await conn.framed.send_frame(wire.frame(b"\xc1not msgpack"))
            down = await next_of(ma, PeerDown)
            assert down.peer == b.public and down.remote_error
            assert "bad frame" in down.reason


async def test_keepalive_detects_a_silent_peer() -> None:
    """A peer that completes the handshake and then never sends a byte is dropped."""
    a, b = IdentityKey.generate(), IdentityKey.generate()
    table = secrets.token_bytes(16)
    with trio.fail_after(TIMEOUT_S):
        async with (
            no_leaks(),
            open_mesh(a, table, host=LOOPBACK, keepalive_interval=0.1, keepalive_dead=0.5) as ma,
        ):
            framed, hello = await raw_dial(ma)
            mine, _ = raw_hello(b.public, table)
            await framed.send_frame(wire.frame(mine))
            await framed.send(wire.Auth(b.sign(wire.auth_transcript(mine, hello.raw))))
            await next_of(ma, PeerUp)
            down = await next_of(ma, PeerDown)  # we never answer the pings
            assert "keepalive" in down.reason
            await framed.aclose()


async def test_keepalive_keeps_an_idle_link_up() -> None:
    a, b = IdentityKey.generate(), IdentityKey.generate()
    table = secrets.token_bytes(16)
    with trio.fail_after(TIMEOUT_S):
        async with listener_and_dialer(
            a, b, table, keepalive_interval=0.05, keepalive_dead=0.3
        ) as (ma, mb):
            await mb.dial(ma.address)
            await trio.sleep(1.0)  # > 3 x the dead time, idle except pings
            assert ma.connected(b.public) and mb.connected(a.public)


async def test_redial_with_backoff_after_peer_restart() -> None:
    a, b = IdentityKey.generate(), IdentityKey.generate()
    table = secrets.token_bytes(16)
    with trio.fail_after(TIMEOUT_S):
        async with no_leaks(), open_mesh(b, table) as mb:
            async with open_mesh(a, table, host=LOOPBACK) as ma:
                port = ma.listen_port
                mb.keep_connected(a.public, ma.address)
                await mb.wait_connected({a.public})
            # a is gone; b keeps trying with backoff
            await next_of(mb, PeerDown)
            await trio.sleep(0.3)
            assert not mb.connected(a.public)
            async with open_mesh(a, table, host=LOOPBACK, port=port) as ma2:
                await mb.wait_connected({a.public})
                await next_of(ma2, PeerUp)
                mb.send_nowait(a.public, wire.Fetch(table, 3))
                got = await next_of(ma2, Inbound)
                assert got.message.from_step == 3
            assert len(mb.handshake_failures) >= 1  # refused dials while a was down


async def test_newer_connection_replaces_older() -> None:
    a, b = IdentityKey.generate(), IdentityKey.generate()
    table = secrets.token_bytes(16)
    with trio.fail_after(TIMEOUT_S):
        async with listener_and_dialer(a, b, table) as (ma, mb):
            first = await mb.dial(ma.address)
            second = await mb.dial(ma.address)
            with trio.fail_after(2):
                await first.closed.wait()
            assert mb.connections[a.public] is second
            assert "replaced" in first.close_reason


def test_sealed_payload_only_opens_for_its_seat() -> None:
    table = secrets.token_bytes(16)
    bob, eve = SealKey.generate(), SealKey.generate()
    body = seal_for_seat(table, 12, 0, 1, bob.public, b"your card is 7")
    decoded = wire.decode_body(wire.encode_body(body), wire.Body)
    assert open_for_seat(table, 12, 0, decoded, bob) == b"your card is 7"
    with pytest.raises(CryptoError):
        open_for_seat(table, 12, 0, decoded, eve)
    with pytest.raises(CryptoError):
        open_for_seat(table, 13, 0, decoded, bob)  # moved to another step
    with pytest.raises(CryptoError):
        open_for_seat(table, 12, 2, decoded, bob)  # claimed by another sender


async def test_injected_altered_or_replayed_frames_drop_the_link_not_the_peer() -> None:
    """An on-path host between two peers (a TCP relay on loopback) injects a frame, flips a
    bit, or replays a frame after the handshake: the link's MACs refuse each, the listener
    drops the link with a remote error, delivers nothing forged, and keeps serving."""
    a, b = IdentityKey.generate(), IdentityKey.generate()
    table = secrets.token_bytes(16)
    mode: dict[str, str | None] = {"now": None}

    async def relay(src: trio.SocketStream, dst: trio.SocketStream, meddle: bool) -> None:
        with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
            while data := await src.receive_some(65536):
                how, mode["now"] = (mode["now"], None) if meddle else (None, mode["now"])
                if how == "inject":
                    data = wire.encode_frame(wire.Fetch(table, 99)) + data
                elif how == "tamper":
                    data = data[:-1] + bytes([data[-1] ^ 0x01])
                elif how == "replay":
                    data = data + data
                await dst.send_all(data)
        await dst.aclose()

    async def proxy(port: int, client: trio.SocketStream) -> None:
        server = await trio.open_tcp_stream(LOOPBACK, port)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(relay, client, server, True)  # dialer -> listener: meddled
            nursery.start_soon(relay, server, client, False)

    with trio.fail_after(TIMEOUT_S):
        async with listener_and_dialer(a, b, table) as (ma, mb), trio.open_nursery() as nursery:
            listeners = await nursery.start(
                functools.partial(trio.serve_tcp, functools.partial(proxy, ma.listen_port), 0)
            )
            via = format_address(LOOPBACK, listeners[0].socket.getsockname()[1])
            for how in ("inject", "tamper", "replay"):
                await mb.dial(via)
                assert (await next_of(ma, PeerUp)).peer == b.public
                mode["now"] = how
                mb.send_nowait(a.public, wire.Fetch(table, 1))
                delivered = []
                while True:
                    event = await ma.inbox.receive()
                    if isinstance(event, PeerDown):
                        break
                    delivered.append(event.message)
                assert event.remote_error and "authentication failed" in event.reason, how
                assert wire.Fetch(table, 99) not in delivered
                assert delivered == ([wire.Fetch(table, 1)] if how == "replay" else [])
            conn = await mb.dial(ma.address)  # the listener still serves honest peers
            await next_of(ma, PeerUp)
            assert conn.peer == a.public
            nursery.cancel_scope.cancel()


async def test_peers_on_two_forks_of_a_table_refuse_each_other() -> None:
    """Two genesis hashes for one table id are two signed manifests: the hello carries the
    genesis hash, so such peers refuse each other with a clear ``fork``; once formed, a
    listener also refuses a peer that holds no genesis."""
    a, b = IdentityKey.generate(), IdentityKey.generate()
    table = secrets.token_bytes(16)
    with trio.fail_after(TIMEOUT_S):
        async with listener_and_dialer(a, b, table) as (ma, mb):
            ma.genesis, mb.genesis = b"\x01" * 32, b"\x02" * 32
            with pytest.raises(HandshakeFailed) as info:
                await mb.dial(ma.address)
            assert info.value.kind == "fork" and "two different manifests" in info.value.detail
            mb.genesis = b""
            with pytest.raises(Rejected) as late:
                await mb.dial(ma.address)
            assert late.value.kind == "fork" and "already formed" in late.value.detail
            mb.genesis = ma.genesis
            await mb.dial(ma.address)
            assert ma.connected(b.public) or await next_of(ma, PeerUp)


async def test_once_formed_only_the_seats_hosts_get_a_handshake() -> None:
    """After forming, a host that holds no seat is refused (``stranger``) before it costs a
    handshake slot; a seat still gets in, because a dial leaves from the address its mesh
    listens on (the host it put in the manifest)."""
    a, b, c = IdentityKey.generate(), IdentityKey.generate(), IdentityKey.generate()
    table = secrets.token_bytes(16)
    with trio.fail_after(TIMEOUT_S):
        async with (
            no_leaks(),
            open_mesh(a, table, host=LOOPBACK) as ma,
            open_mesh(b, table, host="127.0.0.2") as mb,
            open_mesh(c, table, host="127.0.0.3") as mc,
        ):
            ma.seat_hosts_only([ma.address, mb.address])
            with pytest.raises(Rejected) as refused:
                await mc.dial(ma.address)
            assert refused.value.kind == "stranger" and "127.0.0.3" in refused.value.detail
            assert ma.pending_handshakes == 0
            await mb.dial(ma.address)
            assert (await next_of(ma, PeerUp)).peer == b.public
