"""Trio TCP mesh between the seats of one table: authenticated, framed, kept alive.

A thin Trio shell around the sans-I/O wire (the trio-websocket pattern):
per connection one reader task feeds :class:`p2p.wire.FrameDecoder`, one
writer task drains a bounded outbox, a lock serialises writes to the socket,
keepalive pings detect dead links, and every transport failure becomes one
:class:`ConnectionClosed`.  What the connections deliver goes into one bounded
inbound channel shared by the whole mesh, so a slow consumer slows the
readers and TCP pushes back on the senders (backpressure), never unbounded
buffering.

Handshake (mutual authentication, SIGMA-style signatures over both nonces;
H. Krawczyk, "SIGMA: the 'SIGn-and-MAc' approach to authenticated
Diffie-Hellman", CRYPTO 2003 -- here without key exchange, the channel is not
encrypted, only its endpoints authenticated, since every record entry is
signed on its own):

1. the listener sends ``Hello(version, table_id, identity, nonce_L)``;
2. the dialer checks version and table id, answers with its own ``Hello`` and
   ``Auth(sig_D)`` over ``auth_transcript(table, key_D, nonce_D, key_L, nonce_L)``;
3. the listener checks ``sig_D`` and answers ``Auth(sig_L)`` over the mirrored
   transcript; the dialer checks it.

Fresh nonces on both sides make a recorded handshake useless later (replay),
the table id and both keys in the transcript stop a relay to another table or
peer, and the signer-first order stops reflection.  A refusal (table full or
gone, version mismatch, identity failure) is sent as a ``Reject`` frame so the
other side can print a clear reason.

Who dials whom is decided by the caller (the node: a later joiner dials the
earlier members), so a pair never races two connections; if a peer comes
back with a new connection anyway, the newer one replaces the older.
Persistent peers are redialled with capped exponential backoff, a bounded
number of times per outage.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import math
import secrets
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field

import trio

from crypto.errors import CryptoError
from crypto.identity import IdentityKey, verify_signature
from crypto.seal import SealKey, open_sealed, seal
from p2p import wire
from p2p.errors import RemoteProtocolError

RECV_CHUNK = 65536
HANDSHAKE_TIMEOUT_S = 5.0
CONNECT_TIMEOUT_S = 3.0
KEEPALIVE_INTERVAL_S = 1.0
"""Send a ping after this long without sending anything."""
KEEPALIVE_DEAD_S = 5.0
"""Close a connection after this long without receiving anything."""
OUTBOX_FRAMES = 4096
"""Frames queued per connection before the peer counts as too slow and is dropped."""
INBOX_ITEMS = 4096
"""Inbound items buffered for the node before readers stop reading (backpressure)."""
BACKOFF_START_S = 0.05
BACKOFF_CAP_S = 1.0
DRAIN_TIMEOUT_S = 2.0
"""On a normal close, how long queued frames may take to go out before links are cut."""
MAX_REDIALS = 120
"""Redial attempts per outage before a persistent peer is given up on (bounded loop)."""
MAX_PENDING_HANDSHAKES = 32
"""Unauthenticated incoming connections handled at once; more are refused as ``busy``.

Each lives at most ``HANDSHAKE_TIMEOUT_S``, so a client that opens connections
and stalls (or sends junk) costs us a bounded number of tasks and buffers, and
the seats can get in again as soon as the stalled ones time out."""
REFUSE_TIMEOUT_S = 1.0
"""How long a ``Reject`` frame may take to go out before the connection is dropped anyway."""

ADDRESS_SEP = ":"


class MeshError(Exception):
    """Base of mesh failures."""


class ConnectionClosed(MeshError):
    """The single error for a connection that ended: EOF, reset, timeout or junk.

    ``peer`` is the peer's identity key when known; ``reason`` says what
    happened; ``remote_error`` is set when the peer sent invalid bytes.
    """

    def __init__(self, reason: str, peer: bytes | None = None, remote_error: bool = False):
        super().__init__(reason)
        self.reason = reason
        self.peer = peer
        self.remote_error = remote_error


class HandshakeFailed(MeshError):
    """The handshake did not authenticate.  ``kind`` is one of ``wire.REJECT_REASONS``."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind = kind
        self.detail = detail


class Rejected(HandshakeFailed):
    """The other side refused us with a ``Reject`` frame (full, gone, version, identity)."""


def parse_address(text: str) -> tuple[str, int]:
    """``host:port`` -> (host, port); raises ValueError with a clear message."""
    host, sep, port_text = text.rpartition(ADDRESS_SEP)
    if not sep or not host or not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise ValueError(f"peer address {text!r} is not host:port")
    return host.strip("[]"), int(port_text)


def format_address(host: str, port: int) -> str:
    return f"{host}{ADDRESS_SEP}{port}"


# ---------------------------------------------------------------------------
# Framed stream: the decoder wrapped around a Trio stream
# ---------------------------------------------------------------------------


class FramedStream:
    """A Trio stream plus a FrameDecoder: ``receive()`` one message, ``send_frame()``."""

    def __init__(self, stream: trio.abc.Stream) -> None:
        self.stream = stream
        self.decoder = wire.FrameDecoder()
        self._pending: list[wire.Decoded] = []
        self.send_lock = trio.Lock()
        self.last_received = trio.current_time()
        self.last_sent = trio.current_time()
        self.bytes_in = 0
        self.bytes_out = 0

    async def receive(self) -> wire.Decoded:
        """Next message; raises ConnectionClosed on EOF, transport error or bad bytes."""
        while not self._pending:
            try:
                data = await self.stream.receive_some(RECV_CHUNK)
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
                raise ConnectionClosed(f"receive failed: {exc!r}") from exc
            if not data:
                raise ConnectionClosed("peer closed the connection")
            self.last_received = trio.current_time()
            self.bytes_in += len(data)
            try:
                self._pending.extend(self.decoder.feed(data))
            except RemoteProtocolError as exc:
                raise ConnectionClosed(f"bad frame: {exc}", remote_error=True) from exc
        return self._pending.pop(0)

    async def send_frame(self, data: bytes) -> None:
        """Write one encoded frame under the send lock; ConnectionClosed on failure."""
        async with self.send_lock:
            try:
                await self.stream.send_all(data)
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
                raise ConnectionClosed(f"send failed: {exc!r}") from exc
        self.last_sent = trio.current_time()
        self.bytes_out += len(data)

    async def send(self, msg: wire.Message) -> None:
        await self.send_frame(wire.encode_frame(msg))

    async def aclose(self) -> None:
        with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            await self.stream.aclose()


# ---------------------------------------------------------------------------
# Handshake
# ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PeerInfo:
    """What a handshake proved about the other side."""

    identity: bytes
    table_id: bytes
    dialed: bool


def _reject_of(decoded: wire.Decoded) -> Rejected | None:
    msg = decoded.message
    if isinstance(msg, wire.Reject):
        return Rejected(msg.reason, msg.detail or msg.reason)
    return None


async def _expect(framed: FramedStream, cls: type[wire.Message]) -> wire.Message:
    decoded = await framed.receive()
    rejected = _reject_of(decoded)
    if rejected is not None:
        raise rejected
    if not isinstance(decoded.message, cls):
        raise HandshakeFailed(
            "identity", f"expected {cls.TAG!r} during handshake, got {decoded.message.TAG!r}"
        )
    return decoded.message


async def _refuse(framed: FramedStream, kind: str, detail: str) -> HandshakeFailed:
    with contextlib.suppress(ConnectionClosed, trio.TooSlowError):
        with trio.fail_after(REFUSE_TIMEOUT_S):
            await framed.send(wire.Reject(kind, detail[: wire.MAX_REASON_LEN]))
    return HandshakeFailed(kind, detail)


def _check_version(version: int) -> str | None:
    if version != wire.PROTOCOL_VERSION:
        return f"version mismatch: peer speaks protocol {version}, we speak {wire.PROTOCOL_VERSION}"
    return None


async def handshake_listener(
    framed: FramedStream,
    identity: IdentityKey,
    table_id: bytes,
    admit: Callable[[bytes], tuple[str, str] | None],
) -> PeerInfo:
    """Listener side: Hello first, then verify the dialer's Auth, then our Auth.

    ``admit(peer_key)`` returns ``None`` to accept or ``(reason, detail)`` to
    refuse (table full, not a member) after the peer has proved its key.
    """
    nonce = secrets.token_bytes(wire.NONCE_BYTES)
    await framed.send(wire.Hello(wire.PROTOCOL_VERSION, table_id, identity.public, nonce))
    hello = await _expect(framed, wire.Hello)
    assert isinstance(hello, wire.Hello)
    problem = _check_version(hello.version)
    if problem:
        raise await _refuse(framed, "version", problem)
    if hello.table_id != table_id:
        raise await _refuse(framed, "gone", f"no table {hello.table_id.hex()} here")
    if hello.identity == identity.public:
        raise await _refuse(framed, "identity", "peer presented our own identity key")
    auth = await _expect(framed, wire.Auth)
    assert isinstance(auth, wire.Auth)
    transcript = wire.auth_transcript(table_id, hello.identity, hello.nonce, identity.public, nonce)
    try:
        verify_signature(hello.identity, transcript, auth.signature)
    except CryptoError as exc:
        raise await _refuse(framed, "identity", f"handshake signature invalid: {exc}") from exc
    refusal = admit(hello.identity)
    if refusal is not None:
        raise await _refuse(framed, *refusal)
    mine = wire.auth_transcript(table_id, identity.public, nonce, hello.identity, hello.nonce)
    await framed.send(wire.Auth(identity.sign(mine)))
    return PeerInfo(hello.identity, table_id, dialed=False)


async def handshake_dialer(
    framed: FramedStream,
    identity: IdentityKey,
    table_id: bytes | None,
    expect_identity: bytes | None = None,
    expect_fingerprint: str | None = None,
) -> PeerInfo:
    """Dialer side.  ``table_id=None`` adopts the listener's table (``--peer`` joins)."""
    hello = await _expect(framed, wire.Hello)
    assert isinstance(hello, wire.Hello)
    problem = _check_version(hello.version)
    if problem:
        raise await _refuse(framed, "version", problem)
    if table_id is not None and hello.table_id != table_id:
        raise await _refuse(
            framed, "gone", f"peer hosts table {hello.table_id.hex()}, not {table_id.hex()}"
        )
    if expect_identity is not None and hello.identity != expect_identity:
        raise await _refuse(framed, "identity", "peer is not the identity we expected")
    if expect_fingerprint is not None:
        from crypto.identity import fingerprint

        if fingerprint(hello.identity) != expect_fingerprint:
            raise await _refuse(framed, "identity", "peer key does not match the announced one")
    if hello.identity == identity.public:
        raise await _refuse(framed, "identity", "peer presented our own identity key")
    table = hello.table_id
    nonce = secrets.token_bytes(wire.NONCE_BYTES)
    await framed.send(wire.Hello(wire.PROTOCOL_VERSION, table, identity.public, nonce))
    mine = wire.auth_transcript(table, identity.public, nonce, hello.identity, hello.nonce)
    await framed.send(wire.Auth(identity.sign(mine)))
    auth = await _expect(framed, wire.Auth)
    assert isinstance(auth, wire.Auth)
    theirs = wire.auth_transcript(table, hello.identity, hello.nonce, identity.public, nonce)
    try:
        verify_signature(hello.identity, theirs, auth.signature)
    except CryptoError as exc:
        raise HandshakeFailed("identity", f"listener's handshake signature invalid: {exc}") from exc
    return PeerInfo(hello.identity, table, dialed=True)


# ---------------------------------------------------------------------------
# Connections and the mesh
# ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Inbound:
    """A message from an authenticated peer, with its exact raw body."""

    peer: bytes
    message: wire.Message
    raw: bytes


@dataclass(frozen=True, slots=True)
class PeerUp:
    peer: bytes
    dialed: bool


@dataclass(frozen=True, slots=True)
class PeerDown:
    peer: bytes
    reason: str
    remote_error: bool


MeshEvent = Inbound | PeerUp | PeerDown

_conn_ids = itertools.count(1)


class Connection:
    """One authenticated connection; its tasks run in the mesh's nursery."""

    def __init__(self, mesh: Mesh, framed: FramedStream, info: PeerInfo) -> None:
        self.id = next(_conn_ids)
        self.mesh = mesh
        self.framed = framed
        self.peer = info.identity
        self.dialed = info.dialed
        self._out_send, self._out_recv = trio.open_memory_channel[bytes](OUTBOX_FRAMES)
        self._cancel = trio.CancelScope()
        self.closed = trio.Event()
        self.close_reason = ""
        self._ping_nonce = 0

    def send_nowait(self, frame_bytes: bytes) -> bool:
        """Queue a frame; a full outbox means the peer cannot keep up: drop the link."""
        if self.closed.is_set():
            return False
        try:
            self._out_send.send_nowait(frame_bytes)
        except trio.WouldBlock:
            self.abort(f"outbox overflow ({OUTBOX_FRAMES} frames): peer too slow")
            return False
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            return False
        return True

    async def send(self, msg: wire.Message) -> None:
        """Queue a message, waiting for room in the outbox (backpressure)."""
        try:
            await self._out_send.send(wire.encode_frame(msg))
        except (trio.ClosedResourceError, trio.BrokenResourceError) as exc:
            raise ConnectionClosed(self.close_reason or "connection closed", self.peer) from exc

    def finish_sending(self, reason: str = "closed locally") -> None:
        """Close gracefully: the writer sends what is queued, then the connection ends."""
        if not self.close_reason:
            self.close_reason = reason
        self._out_send.close()

    def abort(self, reason: str) -> None:
        if not self.close_reason:
            self.close_reason = reason
        self._cancel.cancel()

    async def run(self) -> None:
        """Reader, writer and keepalive; ends (and reports PeerDown) when any fails."""
        remote_error = False
        try:
            with self._cancel:
                try:
                    async with trio.open_nursery() as nursery:
                        nursery.start_soon(self._writer)
                        nursery.start_soon(self._keepalive)
                        await self._reader()
                except BaseExceptionGroup as group:
                    closed, rest = group.split(ConnectionClosed)
                    if closed is not None:
                        first = _leaves(closed)[0]
                        assert isinstance(first, ConnectionClosed)
                        self.close_reason = self.close_reason or first.reason
                        remote_error = first.remote_error
                    if rest is not None:
                        raise rest from None  # e.g. Cancelled from an outer scope
                    assert closed is not None
                    raise _leaves(closed)[0] from None
        except ConnectionClosed as exc:
            self.close_reason = self.close_reason or exc.reason
            remote_error = exc.remote_error
        finally:
            self._out_send.close()
            self.closed.set()
            with trio.CancelScope(shield=True):
                await self.framed.aclose()
            self.mesh._connection_ended(self, self.close_reason or "closed", remote_error)

    async def _reader(self) -> None:
        while True:
            decoded = await self.framed.receive()
            msg = decoded.message
            if isinstance(msg, wire.Ping):
                self.send_nowait(wire.encode_frame(wire.Pong(msg.nonce)))
                continue
            if isinstance(msg, wire.Pong):
                continue
            self.mesh.stats_received += 1
            await self.mesh._inbox_send.send(Inbound(self.peer, msg, decoded.raw))

    async def _writer(self) -> None:
        async for frame_bytes in self._out_recv:
            await self.framed.send_frame(frame_bytes)
        raise ConnectionClosed(self.close_reason or "closed locally", self.peer)

    async def _keepalive(self) -> None:
        interval = self.mesh.keepalive_interval
        while True:
            await trio.sleep(interval / 2)
            now = trio.current_time()
            if now - self.framed.last_received > self.mesh.keepalive_dead:
                raise ConnectionClosed(
                    f"no traffic for {self.mesh.keepalive_dead:.1f}s (keepalive)", self.peer
                )
            if now - self.framed.last_sent >= interval:
                self._ping_nonce = (self._ping_nonce + 1) & wire.U32_MAX
                self.send_nowait(wire.encode_frame(wire.Ping(self._ping_nonce)))


@dataclass(slots=True)
class _Persistent:
    address: str
    task_running: bool = False
    wake: trio.Event = field(default_factory=trio.Event)


class Mesh:
    """All connections of one peer at one table.  Use :func:`open_mesh`."""

    def __init__(
        self,
        nursery: trio.Nursery,
        identity: IdentityKey,
        table_id: bytes | None,
        *,
        keepalive_interval: float = KEEPALIVE_INTERVAL_S,
        keepalive_dead: float = KEEPALIVE_DEAD_S,
        handshake_timeout: float = HANDSHAKE_TIMEOUT_S,
        max_pending_handshakes: int = MAX_PENDING_HANDSHAKES,
    ) -> None:
        self._nursery = nursery
        self.handshake_timeout = handshake_timeout
        self.max_pending_handshakes = max_pending_handshakes
        self.pending_handshakes = 0
        self.identity = identity
        self.table_id = table_id
        self.keepalive_interval = keepalive_interval
        self.keepalive_dead = keepalive_dead
        self.connections: dict[bytes, Connection] = {}
        self._inbox_send, self.inbox = trio.open_memory_channel[MeshEvent](INBOX_ITEMS)
        self.admit: Callable[[bytes], tuple[str, str] | None] = lambda _peer: None
        self.listen_port: int | None = None
        self.listen_host: str | None = None
        self._persistent: dict[bytes, _Persistent] = {}
        self._changed = trio.Event()
        self.stats_received = 0
        self.handshake_failures: list[str] = []
        self.closing = False

    # -- listening ----------------------------------------------------------

    async def listen(self, host: str, port: int = 0) -> int:
        """Accept connections on ``host:port`` (port 0: any); returns the bound port."""
        listeners = await self._nursery.start(
            functools.partial(trio.serve_tcp, self._handle_incoming, port, host=host)
        )
        self.listen_host = host
        self.listen_port = listeners[0].socket.getsockname()[1]
        return self.listen_port

    @property
    def address(self) -> str:
        if self.listen_host is None or self.listen_port is None:
            raise MeshError("mesh is not listening")
        return format_address(self.listen_host, self.listen_port)

    async def _handle_incoming(self, stream: trio.SocketStream) -> None:
        """Authenticate one incoming connection (bounded in time and in number), then run it.

        Whatever the other end sends or withholds (junk, a huge length
        prefix, half a frame, nothing at all) ends here as a recorded
        handshake failure and a closed socket; it never reaches the node.
        """
        framed = FramedStream(stream)
        if self.pending_handshakes >= self.max_pending_handshakes:
            failure = await _refuse(
                framed, "busy", f"{self.pending_handshakes} handshakes already in progress"
            )
            self.handshake_failures.append(str(failure))
            await framed.aclose()
            return
        self.pending_handshakes += 1
        try:
            if self.table_id is None:
                raise await _refuse(framed, "gone", "this peer has not joined a table yet")
            with trio.fail_after(self.handshake_timeout):
                info = await handshake_listener(framed, self.identity, self.table_id, self.admit)
        except (HandshakeFailed, ConnectionClosed) as exc:
            self.handshake_failures.append(str(exc) or type(exc).__name__)
            await framed.aclose()
            return
        except trio.TooSlowError:
            self.handshake_failures.append(f"handshake timed out after {self.handshake_timeout:g}s")
            await framed.aclose()
            return
        finally:
            self.pending_handshakes -= 1
        await self._adopt(framed, info).run()

    # -- dialing ------------------------------------------------------------

    async def dial(
        self,
        address: str,
        *,
        expect_identity: bytes | None = None,
        expect_fingerprint: str | None = None,
    ) -> Connection:
        """Connect and authenticate; adopts the listener's table id if we had none."""
        host, port = parse_address(address)
        try:
            with trio.fail_after(CONNECT_TIMEOUT_S):
                stream = await trio.open_tcp_stream(host, port)
        except (OSError, trio.TooSlowError) as exc:
            raise ConnectionClosed(f"cannot connect to {address}: {exc!r}") from exc
        framed = FramedStream(stream)
        try:
            with trio.fail_after(self.handshake_timeout):
                info = await handshake_dialer(
                    framed, self.identity, self.table_id, expect_identity, expect_fingerprint
                )
        except (HandshakeFailed, ConnectionClosed) as exc:
            await framed.aclose()
            raise exc
        except trio.TooSlowError as exc:
            await framed.aclose()
            raise ConnectionClosed(f"handshake with {address} timed out") from exc
        except BaseException:
            await framed.aclose()
            raise
        if self.table_id is None:
            self.table_id = info.table_id
        conn = self._adopt(framed, info)
        self._nursery.start_soon(conn.run)
        return conn

    def keep_connected(self, peer: bytes, address: str) -> None:
        """Dial ``peer`` now and again after every outage, with capped backoff."""
        entry = self._persistent.get(peer)
        if entry is None:
            entry = self._persistent[peer] = _Persistent(address)
        entry.address = address
        if not entry.task_running:
            entry.task_running = True
            self._nursery.start_soon(self._redial_loop, peer, entry)

    async def _redial_loop(self, peer: bytes, entry: _Persistent) -> None:
        try:
            failures = 0
            while not self.closing and failures < MAX_REDIALS:
                conn = self.connections.get(peer)
                if conn is not None:
                    await conn.closed.wait()
                    failures = 0
                    continue
                try:
                    await self.dial(entry.address, expect_identity=peer)
                    failures = 0
                except (ConnectionClosed, HandshakeFailed) as exc:
                    failures += 1
                    self.handshake_failures.append(str(exc))
                    delay = min(BACKOFF_CAP_S, BACKOFF_START_S * math.pow(2, failures))
                    await trio.sleep(delay)
        finally:
            entry.task_running = False

    # -- connection bookkeeping ---------------------------------------------

    def _adopt(self, framed: FramedStream, info: PeerInfo) -> Connection:
        conn = Connection(self, framed, info)
        old = self.connections.get(info.identity)
        if old is not None:
            old.abort("replaced by a newer connection from the same peer")
        self.connections[info.identity] = conn
        self._post(PeerUp(info.identity, info.dialed))
        self._notify()
        return conn

    def _connection_ended(self, conn: Connection, reason: str, remote_error: bool) -> None:
        if self.connections.get(conn.peer) is conn:
            del self.connections[conn.peer]
            self._post(PeerDown(conn.peer, reason, remote_error))
            self._notify()

    def _post(self, event: MeshEvent) -> None:
        with contextlib.suppress(trio.WouldBlock, trio.ClosedResourceError):
            self._inbox_send.send_nowait(event)

    def _notify(self) -> None:
        changed, self._changed = self._changed, trio.Event()
        changed.set()

    async def wait_connected(self, peers: set[bytes] | frozenset[bytes]) -> None:
        """Wait until there is a live connection to every peer in ``peers``."""
        while not peers <= self.connections.keys():
            await self._changed.wait()

    # -- sending ------------------------------------------------------------

    def connected(self, peer: bytes) -> bool:
        return peer in self.connections

    def send_frame_nowait(self, peer: bytes, frame_bytes: bytes) -> bool:
        conn = self.connections.get(peer)
        return conn.send_nowait(frame_bytes) if conn is not None else False

    def send_nowait(self, peer: bytes, msg: wire.Message) -> bool:
        """Queue ``msg`` for ``peer``; False if not connected (the record resyncs later)."""
        return self.send_frame_nowait(peer, wire.encode_frame(msg))

    async def send(self, peer: bytes, msg: wire.Message) -> None:
        conn = self.connections.get(peer)
        if conn is None:
            raise ConnectionClosed("not connected", peer)
        await conn.send(msg)

    def broadcast_raw(self, body_bytes: bytes, peers: list[bytes] | None = None) -> int:
        """Send exact body bytes (e.g. a signed entry) to peers; returns how many got it queued."""
        frame_bytes = wire.frame(body_bytes)
        targets = list(self.connections) if peers is None else peers
        return sum(self.send_frame_nowait(p, frame_bytes) for p in targets)

    def broadcast(self, msg: wire.Message, peers: list[bytes] | None = None) -> int:
        return self.broadcast_raw(wire.encode_body(msg), peers)

    async def drain(self, timeout: float = DRAIN_TIMEOUT_S) -> None:
        """Send every queued frame, then close each connection (bounded by ``timeout``).

        Used on a normal exit, so that a last message (say ``Finished``) queued
        just before leaving is not thrown away with the outbox.
        """
        self.closing = True
        conns = list(self.connections.values())
        for conn in conns:
            conn.finish_sending()
        with trio.move_on_after(timeout):
            for conn in conns:
                await conn.closed.wait()

    def disconnect(self, peer: bytes, reason: str = "closed locally") -> None:
        conn = self.connections.get(peer)
        if conn is not None:
            conn.abort(reason)


@contextlib.asynccontextmanager
async def open_mesh(
    identity: IdentityKey,
    table_id: bytes | None = None,
    *,
    host: str | None = None,
    port: int = 0,
    keepalive_interval: float = KEEPALIVE_INTERVAL_S,
    keepalive_dead: float = KEEPALIVE_DEAD_S,
    handshake_timeout: float = HANDSHAKE_TIMEOUT_S,
    max_pending_handshakes: int = MAX_PENDING_HANDSHAKES,
) -> AsyncIterator[Mesh]:
    """Run a mesh (listening on ``host:port`` if a host is given); closes every link on exit.

    An error raised by the body comes out as itself, not wrapped in an
    exception group, so callers can catch ``HandshakeFailed`` and friends.
    """
    with unwrap_single_error():
        async with trio.open_nursery() as nursery:
            mesh = Mesh(
                nursery,
                identity,
                table_id,
                keepalive_interval=keepalive_interval,
                keepalive_dead=keepalive_dead,
                handshake_timeout=handshake_timeout,
                max_pending_handshakes=max_pending_handshakes,
            )
            if host is not None:
                await mesh.listen(host, port)
            try:
                yield mesh
            except BaseException:
                mesh.closing = True
                nursery.cancel_scope.cancel()
                raise
            await mesh.drain()
            nursery.cancel_scope.cancel()


def _leaves(group: BaseExceptionGroup) -> list[BaseException]:
    out: list[BaseException] = []
    for exc in group.exceptions:
        if isinstance(exc, BaseExceptionGroup):
            out.extend(_leaves(exc))
        else:
            out.append(exc)
    return out


@contextlib.contextmanager
def unwrap_single_error() -> Iterator[None]:
    """Re-raise a nursery's exception group of exactly one error as that error."""
    try:
        yield
    except BaseExceptionGroup as group:
        leaves = _leaves(group)
        if len(leaves) == 1:
            raise leaves[0] from None
        raise


# ---------------------------------------------------------------------------
# Private payloads
# ---------------------------------------------------------------------------

SEAL_DOMAIN = b"slaiga/sealed/v1"


def seal_context(table_id: bytes, step: int, from_seat: int, to_seat: int) -> bytes:
    """Associated data binding a sealed payload to its table, step and both seats."""
    return (
        SEAL_DOMAIN
        + table_id
        + step.to_bytes(8, "big")
        + from_seat.to_bytes(1, "big")
        + to_seat.to_bytes(1, "big")
    )


def seal_for_seat(
    table_id: bytes, step: int, from_seat: int, to_seat: int, receiver_seal_key: bytes, data: bytes
) -> wire.Sealed:
    """A record body only ``to_seat`` can open (X25519 sealed box from ``crypto.seal``)."""
    ciphertext = seal(receiver_seal_key, data, seal_context(table_id, step, from_seat, to_seat))
    return wire.Sealed(to_seat, ciphertext)


def open_for_seat(
    table_id: bytes, step: int, from_seat: int, body: wire.Sealed, key: SealKey
) -> bytes:
    """Open a sealed body addressed to us; raises crypto errors if it is not ours or altered."""
    return open_sealed(key, body.ciphertext, seal_context(table_id, step, from_seat, body.to_seat))
