"""Hostile raw TCP clients against real meshes and a running table (loopback only).

Each client speaks bytes, not our API: junk, a 4 GiB length prefix, a frame
that is not a handshake message, half a frame followed by EOF, a connection
that stalls before authenticating, and a flood of stalled connections.  The
listener must close each with a specific, recorded reason, never crash, and
keep serving honest peers: a whole table forms and finishes with identical
records while the attacks go on.
"""

from __future__ import annotations

import secrets
from pathlib import Path

import msgpack
import pytest
import trio

from crypto.identity import IdentityKey
from crypto.session import Ephemeral
from p2p import wire
from p2p.errors import NodeError, Rejected
from p2p.net.mesh import FramedStream, PeerUp, open_mesh
from p2p.net.node import Node
from tests.p2p._nethelpers import LOOPBACK, no_leaks
from tests.p2p._tables import config

TIMEOUT_S = 20
SHORT_HANDSHAKE_S = 0.3
DEMO_STEPS = 40
READ_CHUNK = 65536


async def _read_until_closed(stream: trio.SocketStream) -> bytes:
    """Everything the other side sends until it closes the connection."""
    got = b""
    while True:
        try:
            data = await stream.receive_some(READ_CHUNK)
        except trio.BrokenResourceError:
            return got  # reset by the peer: closed as well
        if not data:
            return got
        got += data


async def _attack(port: int, payload: bytes, *, eof: bool = False) -> bytes:
    """Connect, send ``payload`` (then EOF if asked), return what came back until closed."""
    stream = await trio.open_tcp_stream(LOOPBACK, port)
    try:
        await stream.send_all(payload)
        if eof:
            await stream.send_eof()
        return await _read_until_closed(stream)
    finally:
        await stream.aclose()


HUGE_PREFIX = (2**32 - 1).to_bytes(4, "big") + b"x" * 16
HALF_FRAME = (100).to_bytes(4, "big") + b"\x92"
NOT_A_HANDSHAKE = wire.encode_frame(wire.Ping(7))


async def _junk_attacks(port: int, junk_len: int) -> None:
    """One connection each: ``junk_len`` random bytes, a frame prefix far over the size
    limit, a well-formed frame that is not a Hello, and half a frame followed by EOF."""
    for payload, eof in [
        (secrets.token_bytes(junk_len), False),
        (HUGE_PREFIX, False),
        (NOT_A_HANDSHAKE, False),
        (HALF_FRAME, True),
    ]:
        await _attack(port, payload, eof=eof)


async def test_junk_clients_get_specific_failures_and_honest_peer_still_connects() -> None:
    a, b = IdentityKey.generate(), IdentityKey.generate()
    table = secrets.token_bytes(16)
    with trio.fail_after(TIMEOUT_S):
        async with no_leaks(), open_mesh(a, table, host=LOOPBACK) as ma:
            port = ma.listen_port
            assert port is not None
            await _junk_attacks(port, junk_len=4096)
            failures = "\n".join(ma.handshake_failures)
            assert failures.count("bad frame") == 2, failures  # junk, then the huge prefix
            assert "exceeds" in failures or "length" in failures
            assert "expected 'hello' during handshake, got 'ping'" in failures
            assert "peer closed the connection" in failures  # half a frame, then EOF
            assert len(ma.handshake_failures) == 4
            async with open_mesh(b, table) as mb:
                await mb.dial(ma.address)
                up = await ma.inbox.receive()
                assert isinstance(up, PeerUp) and up.peer == b.public


async def test_stalled_handshakes_make_room_for_a_newcomer_and_time_out() -> None:
    """Two stalled handshakes take both slots: a third connection is not refused but takes
    the slot of the oldest (which is told ``busy`` and closed), the other stalled one is cut
    for sending no hello in time, and the seats get in."""
    a, b = IdentityKey.generate(), IdentityKey.generate()
    table = secrets.token_bytes(16)
    with trio.fail_after(TIMEOUT_S):
        async with (
            no_leaks(),
            open_mesh(
                a,
                table,
                host=LOOPBACK,
                hello_timeout=SHORT_HANDSHAKE_S,
                max_pending_handshakes=2,
            ) as ma,
        ):
            port = ma.listen_port
            assert port is not None
            stalled = []
            for _ in range(2):  # the listener speaks first; we read its Hello, then stall
                framed = FramedStream(await trio.open_tcp_stream(LOOPBACK, port))
                assert isinstance((await framed.receive()).message, wire.Hello)
                stalled.append(framed)
            while ma.pending_handshakes < 2:
                await trio.sleep(0.01)
            # a third unauthenticated connection finds the slots full: the oldest makes room
            newcomer = FramedStream(await trio.open_tcp_stream(LOOPBACK, port))
            assert isinstance((await newcomer.receive()).message, wire.Hello)
            refusal = (await stalled[0].receive()).message
            assert isinstance(refusal, wire.Reject) and refusal.reason == "busy"
            assert ma.handshakes_dropped == 1
            # the others are cut when the hello window runs out
            for framed in [*stalled[1:], newcomer]:
                await _read_until_closed(framed.stream)
            for framed in [*stalled, newcomer]:
                await framed.aclose()
            failures = list(ma.handshake_failures)
            assert sum("no complete hello" in f for f in failures) == 2, failures
            assert sum("oldest pending handshake" in f for f in failures) == 1, failures
            assert ma.pending_handshakes == 0
            async with open_mesh(b, table) as mb:  # and the seats can get in again
                await mb.dial(ma.address)


async def test_dialer_gets_busy_as_a_clear_rejection() -> None:
    a, b = IdentityKey.generate(), IdentityKey.generate()
    table = secrets.token_bytes(16)
    with trio.fail_after(TIMEOUT_S):
        async with (
            no_leaks(),
            open_mesh(a, table, host=LOOPBACK, max_pending_handshakes=0) as ma,
            open_mesh(b, table) as mb,
        ):
            try:
                await mb.dial(ma.address)
            except Rejected as exc:
                assert exc.kind == "busy"
            else:
                raise AssertionError("a full handshake queue must refuse the dialer")


IDENTITY_KEY = bytes([1]) + bytes(31)
UNIVERSAL_FORGERY = bytes([1]) + bytes(31) + bytes(32)


def _raw_hello(table_id: bytes, identity: bytes) -> bytes:
    """A Hello frame built from raw msgpack, as an attacker would (our own constructor
    refuses a small-order key)."""
    fields = {
        "version": wire.HANDSHAKE_VERSION,
        "table_id": table_id,
        "identity": identity,
        "nonce": secrets.token_bytes(wire.NONCE_BYTES),
        "ephemeral": Ephemeral().public,
        "genesis": b"",
    }
    return wire.frame(msgpack.packb(["hello", fields], use_bin_type=True))


async def test_a_small_order_identity_cannot_pass_the_handshake() -> None:
    """With key 01 00..00 the signature R = 01 00..00, S = 0 verifies for any transcript,
    so without the strict key check anyone could log in under that identity."""
    a = IdentityKey.generate()
    table = secrets.token_bytes(16)
    with trio.fail_after(TIMEOUT_S):
        async with no_leaks(), open_mesh(a, table, host=LOOPBACK) as ma:
            assert ma.listen_port is not None
            stream = await trio.open_tcp_stream(LOOPBACK, ma.listen_port)
            framed = FramedStream(stream)
            assert isinstance((await framed.receive()).message, wire.Hello)
            await stream.send_all(
                _raw_hello(table, IDENTITY_KEY) + wire.encode_frame(wire.Auth(UNIVERSAL_FORGERY))
            )
            await _read_until_closed(stream)
            await stream.aclose()
            assert IDENTITY_KEY not in ma.connections
            assert any("identity key refused" in f for f in ma.handshake_failures)
            with pytest.raises(trio.WouldBlock):
                ma.inbox.receive_nowait()  # no PeerUp ever reached the node


async def test_table_forms_and_finishes_under_attack(tmp_path: Path) -> None:
    """Junk and stalled clients hit the opener in the lobby and during the record."""
    n = 3
    results: dict[int, object] = {}
    stalled: list[trio.SocketStream] = []
    with trio.fail_after(TIMEOUT_S):
        async with no_leaks():
            opener = Node(config(tmp_path, 0, demo_steps=DEMO_STEPS, demo_pace_ms=2))

            async def hit(port: int) -> None:
                await _junk_attacks(port, junk_len=2048)
                stalled.append(await trio.open_tcp_stream(LOOPBACK, port))

            async with trio.open_nursery() as nursery:

                async def run_opener() -> None:
                    results[0] = await opener.open("slave", n, {"variant": "classic"})

                nursery.start_soon(run_opener)
                while opener.mesh is None or opener.mesh.listen_port is None:
                    await trio.sleep(0.01)
                port, address = opener.mesh.listen_port, opener.mesh.address
                await hit(port)  # in the lobby, before anyone joined
                for i in range(1, n):

                    async def run_joiner(i: int = i) -> None:
                        node = Node(config(tmp_path, i, demo_steps=DEMO_STEPS, demo_pace_ms=2))
                        results[i] = await node.join(peer=address)

                    nursery.start_soon(run_joiner)
                while opener.record is None or opener.record.step < 4:
                    await trio.sleep(0.01)
                await hit(port)  # while the record runs
            for stream in stalled:
                await _read_until_closed(stream)  # closed when the opener left
                await stream.aclose()
    heads = {r.record.head for r in results.values()}
    assert len(heads) == 1 and all(r.record.finished for r in results.values())
    assert not any(r.cheats for r in results.values())
    assert opener.mesh is not None and len(opener.mesh.handshake_failures) >= 8


async def test_an_open_table_nobody_joins_closes_itself(tmp_path: Path) -> None:
    with trio.fail_after(TIMEOUT_S):
        async with no_leaks():
            node = Node(config(tmp_path, 0, open_timeout_s=0.2))
            with pytest.raises(NodeError, match="only 1 of 4 seats were taken within 0.2s"):
                await node.open("slave", 4, {})
