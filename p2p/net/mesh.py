"""Trio TCP mesh between the seats of one table: authenticated, framed, kept alive, bounded.

A thin Trio shell around the sans-I/O wire (the trio-websocket pattern):
per connection one reader task feeds :class:`p2p.wire.FrameDecoder`, one
writer task drains the outbox, a lock serialises writes to the socket,
keepalive pings detect dead links, and every transport failure becomes one
:class:`ConnectionClosed`.

**Memory is bounded in bytes, not items.**  Each connection's outbox holds
at most :data:`OUTBOX_BYTES`; a peer that does not read past that is too
slow and is dropped (``send_nowait``), or makes an awaiting sender wait
(``send``, for replies sent off the node's main loop).  Everything the
connections deliver goes into one inbox shared by the mesh, in which each
peer may hold at most :data:`INBOX_BYTES_PER_PEER`: past that its reader
stops reading, so TCP pushes back on that peer alone and the others go on.
:meth:`Mesh.bytes_held` sums what the mesh holds (outboxes, inbox, decoder
buffers), which the hostile-client tests assert.  A frame is read into one
buffer of its announced length (:class:`p2p.wire.FrameDecoder`), never a
buffer grown read by read.

**Strangers** (a peer that dialled us and proved a key but has not joined,
see :attr:`Mesh.members`) cost little, however many keys they make up: frames
of at most :data:`STRANGER_MAX_FRAME` (a larger length prefix cuts the link
before any body is read, and a stranger's reads stop at the end of its
current frame), :data:`STRANGER_BYTES` in all, one inbox budget shared by
all strangers, at most :data:`MAX_STRANGERS` at once and
:data:`MAX_STRANGERS_PER_ADDRESS` per address (a newcomer is never refused:
the oldest stranger makes room), :data:`STRANGER_SILENT_S` to say anything
and :data:`STRANGER_JOIN_S` to join.  Broadcasts skip them.

**Keepalives are metered**: a link may send a few pings and pongs a second
(:data:`KEEPALIVES_PER_INTERVAL`, after a burst of :data:`KEEPALIVE_BURST`);
more ends the link, and a stranger's count against its allowance.  A link
closed on purpose (:meth:`Mesh.refuse`, :meth:`Mesh.disconnect`) stops
reading and sends what is queued, a ``Reject`` say, before it closes.

Handshake (SIGMA with ephemeral Diffie-Hellman; H. Krawczyk, "SIGMA: the
'SIGn-and-MAc' approach to authenticated Diffie-Hellman", CRYPTO 2003, in the
sign-the-transcript form of TLS 1.3):

1. the listener sends ``Hello(version, table_id, identity, nonce_L, eph_L,
   genesis_L)``;
2. the dialer checks version, table id and genesis, answers with its own
   ``Hello`` and ``Auth(sig_D)`` over ``auth_transcript(hello_D, hello_L)``
   (both hellos' exact bytes, its own first);
3. the listener checks ``sig_D`` and answers ``Auth(sig_L)`` over the mirrored
   transcript; the dialer checks it.

Fresh nonces and ephemerals make a recorded handshake useless later (replay),
the table id and both keys in the transcript stop a relay to another table or
peer, and the signer-first order stops reflection.  Both sides then derive
one key per direction from the X25519 secret of the two ephemerals
(:mod:`crypto.session`), and every later frame carries a MAC over a frame
counter: an injected, altered, replayed or reordered frame breaks the link
(the peer sees a remote error and drops it, never crashes).  The genesis
hash in the hello makes two peers on different forks of one table refuse
each other (``Reject("fork")``) instead of trading entries that cannot chain.
A refusal (table full or gone, version mismatch, identity failure, busy) is
sent as a ``Reject`` frame so the other side can print a clear reason.

**Handshake slots** are bounded in total (:data:`MAX_PENDING_HANDSHAKES`)
and per remote address (:data:`MAX_HANDSHAKES_PER_ADDRESS`), so one host
that opens stalled sockets cannot lock the seats out; when all slots are
taken, the oldest pending handshake is dropped for the newcomer, and a
connection that has not sent a complete ``Hello`` within
:data:`HELLO_WITHIN_S` loses its slot, so stalled sockets from many
addresses cannot lock the seats out either.  Once the table is
formed (:meth:`Mesh.seat_hosts_only`), a connection from a host that holds no
seat in the manifest is refused (``Reject("stranger")``) before it costs a
handshake slot.  So that this never locks out an honest seat on a machine
with several addresses, every dial leaves from the address the mesh listens
on: the source address of a seat's connection is the host of the address it
put in the manifest.

Who dials whom is decided by the caller (the node: a later joiner dials the
earlier members), so a pair never races two connections; if a peer comes
back with a new connection anyway, the newer one replaces the older.
Persistent peers are redialled with capped exponential backoff for as long
as the mesh runs: a seat of a live table is never given up on.
"""

from __future__ import annotations

import collections
import contextlib
import functools
import ipaddress
import itertools
import math
import os
import secrets
import socket
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field

import trio

from crypto.errors import CryptoError
from crypto.identity import IdentityKey, fingerprint, verify_signature
from crypto.seal import SealKey, open_sealed, seal
from crypto.session import Ephemeral, FrameMac, link_keys
from p2p import wire
from p2p.errors import (
    ConnectionClosed,
    HandshakeFailed,
    MeshError,
    Rejected,
    RemoteProtocolError,
)
from p2p.wire.events import Inbound, MeshEvent, PeerDown, PeerUp

RECV_CHUNK = 65536
HANDSHAKE_TIMEOUT_S = 5.0
CONNECT_TIMEOUT_S = 3.0
KEEPALIVE_INTERVAL_S = 1.0
"""Send a ping after this long without sending anything."""
KEEPALIVE_DEAD_S = 5.0
"""Close a connection after this long without receiving anything."""
OUTBOX_BYTES = 8 << 20
"""Bytes queued per connection before the peer counts as too slow (``send_nowait`` drops it)."""
WRITE_BATCH_BYTES = 256 << 10
"""A writer sends the frames queued for a link together, up to about this many bytes in
one write."""
OUTBOX_FRAMES = 8192
"""Frames queued per connection, the same limit counted in frames (keepalives are tiny)."""
INBOX_BYTES_PER_PEER = 4 << 20
"""Bytes one peer may hold in the shared inbox before its reader stops reading."""
INBOX_CONTROL_EVENTS = 4096
"""Connection events (up, down) queued for the node; more are dropped."""
BACKOFF_START_S = 0.05
BACKOFF_CAP_S = 2.0
DRAIN_TIMEOUT_S = 2.0
"""On a normal close, how long queued frames may take to go out before links are cut."""
MAX_PENDING_HANDSHAKES = 32
"""Unauthenticated incoming connections handled at once; more are refused as ``busy``.

Each lives at most ``HANDSHAKE_TIMEOUT_S``, so a client that opens connections
and stalls (or sends junk) costs us a bounded number of tasks and buffers, and
the seats can get in again as soon as the stalled ones time out."""
MAX_HANDSHAKES_PER_ADDRESS = wire.MAX_SEATS
"""Unauthenticated incoming connections from one remote address at once (``busy`` past it):
one host that floods stalled sockets leaves the other half of the slots to everyone else.
As many as a table has seats, since every seat of a table on one machine (tests, a
demo) dials from the same address at once."""
HANDSHAKE_MAX_FRAME = 4096
"""Largest frame accepted before a handshake completes (a hello is a few hundred bytes), so a
stalled stranger holds at most this much of our memory."""
REFUSE_TIMEOUT_S = 1.0
"""How long a ``Reject`` frame (or what else is queued when we close a link) may take to go
out before the connection is dropped anyway."""
HELLO_WITHIN_S = 1.0
"""How long an incoming connection may take to send its complete ``Hello`` (after ours went
out); an honest peer answers in milliseconds, a stalled socket loses its slot."""
STRANGER_MAX_FRAME = 4096
"""Largest frame a stranger (a peer that proved a key but has not joined) may send: a
``Join`` is under 1 KiB.  A larger length prefix cuts the link before any body is read."""
STRANGER_BYTES = 32 << 10
"""Bytes one stranger may send in all (keepalives included) before it joins; past that it
is refused and cut off."""
STRANGERS_INBOX_BYTES = 256 << 10
"""What all strangers together may hold in the inbox at once: one budget shared by every
non-member, however many keys they make up."""
MAX_STRANGERS = 32
"""Strangers connected at once; a newcomer past it takes the place of the oldest."""
MAX_STRANGERS_PER_ADDRESS = wire.MAX_SEATS - 1
"""Strangers from one address at once (a newcomer past it takes the place of that address's
oldest): as many as the other seats of a table on one machine, so one host holds at most
about half of the lobby."""
STRANGER_SILENT_S = 2.0
"""How long a stranger may stay silent (no message but keepalives) after its handshake; an
honest joiner sends its ``Join`` at once."""
STRANGER_JOIN_S = 10.0
"""How long a stranger may stay a stranger at all (the lobby's own deadline is the same,
:data:`p2p.table.lobby.JOIN_WITHIN_S`; this one also holds once the lobby has closed)."""
KEEPALIVES_PER_INTERVAL = 4.0
"""Keepalive frames (pings and pongs) a link may send per keepalive interval of ours, on
average (4 a second by default; an honest peer sends about 2).  More ends the link."""
KEEPALIVE_BURST = 16
"""Keepalive frames a link may send at once before the rate applies: a backlog of pings
read in one go after we were away is not a flood."""
SPECTATOR_OUTBOX_BYTES = 1 << 20
"""Bytes queued for one spectator before it counts as too slow and is cut off (a seat's
outbox holds :data:`OUTBOX_BYTES`): a spectator that does not read costs a seat this much."""
SPECTATOR_SNDBUF = 64 << 10
"""The kernel send buffer of a spectator's socket, so that one that never reads fills its
outbox (and is cut off) after about a megabyte, not after the kernel's autotuned buffers."""
SPECTATOR_BYTES_PER_S = 4096.0
"""Bytes a second a spectator may send on average (it sends only ``Fetch`` and keepalives:
a few hundred bytes a second); more ends its link."""
SPECTATOR_BURST_BYTES = 32 << 10
"""Bytes a spectator may send at once before :data:`SPECTATOR_BYTES_PER_S` applies."""
NO_GENESIS = b""

ADDRESS_SEP = ":"


def parse_address(text: str) -> tuple[str, int]:
    """``host:port`` -> (host, port); raises ValueError with a clear message."""
    host, sep, port_text = text.rpartition(ADDRESS_SEP)
    if not sep or not host or not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise ValueError(f"peer address {text!r} is not host:port")
    return host.strip("[]"), int(port_text)


def _host_key(host: str) -> str:
    """One spelling per host, so that ``::1`` and ``0:0::1`` compare equal."""
    try:
        return ipaddress.ip_address(host).compressed
    except ValueError:
        return host.lower()


def format_address(host: str, port: int) -> str:
    return f"{host}{ADDRESS_SEP}{port}"


# ---------------------------------------------------------------------------
# Framed stream: the decoder wrapped around a Trio stream
# ---------------------------------------------------------------------------


class FramedStream:
    """A Trio stream plus a FrameDecoder: ``receive()`` one message, ``send_frame()``.

    After :meth:`authenticate` every frame sent carries a MAC and every frame
    received must carry one (see :mod:`crypto.session`).
    """

    def __init__(self, stream: trio.abc.Stream) -> None:
        self.stream = stream
        self._socket = stream.socket if isinstance(stream, trio.SocketStream) else None
        """The stream's Trio socket, read and written directly (``recv``, ``send``): the
        stream's own methods add a context manager and checks per call that a link with
        one reader and one writer (under :attr:`send_lock`) does not need."""
        self.decoder = wire.FrameDecoder(HANDSHAKE_MAX_FRAME)
        self.frame_limit: Callable[[], int] = _handshake_frame_limit
        """The largest frame body accepted, asked again at every length prefix (a stranger
        that joins gets the full limit from its next frame on)."""
        self._send_mac: FrameMac | None = None
        self.send_lock = trio.Lock()
        self.last_received = trio.current_time()
        self.last_sent = trio.current_time()
        self.bytes_in = 0
        self.bytes_out = 0
        self.send_waits = 0
        """Writes that found the kernel's send buffer full and waited for room."""

    def authenticate(self, send_key: bytes, receive_key: bytes) -> None:
        """Switch both directions to authenticated frames (at a frame boundary)."""
        self._send_mac = FrameMac(send_key)
        self.decoder.authenticate(FrameMac(receive_key))
        self.frame_limit = _member_frame_limit

    async def receive(self) -> wire.Decoded:
        """Next message; raises ConnectionClosed on EOF, transport error or bad bytes.

        Under a small frame limit (a handshake, a stranger) it reads no more than the
        current frame needs, so such a link holds at most one small frame of ours.
        """
        while True:
            limit = self.frame_limit()
            self.decoder.max_frame = limit
            try:
                decoded = self.decoder.next()
            except RemoteProtocolError as exc:
                raise ConnectionClosed(f"bad frame: {exc}", remote_error=True) from exc
            if decoded is not None:
                return decoded
            size = RECV_CHUNK if limit >= RECV_CHUNK else min(RECV_CHUNK, self.decoder.wanted())
            sock = self._socket
            try:
                if sock is None:
                    data = await self.stream.receive_some(size)
                else:
                    data = await self._recv(sock.fileno(), size)
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
                raise ConnectionClosed(f"receive failed: {exc!r}") from exc
            if not data:
                raise ConnectionClosed("peer closed the connection")
            self.last_received = trio.current_time()
            self.bytes_in += len(data)
            self.decoder.push(data)

    @staticmethod
    async def _recv(fd: int, size: int) -> bytes:
        """Read what the socket holds (at most ``size`` bytes), waiting until it holds
        something; a checkpoint either way, as Trio's ``recv`` (a read that waited parked,
        and one that did not yields), without the context manager Trio's adds per call
        (issue 19)."""
        try:
            data = os.read(fd, size)
        except BlockingIOError:
            while True:
                await trio.lowlevel.wait_readable(fd)
                try:
                    return os.read(fd, size)
                except BlockingIOError:
                    continue
        await trio.lowlevel.checkpoint()
        return data

    async def send_frame(self, data: bytes) -> None:
        """Write one encoded frame under the send lock (adding its MAC once authenticated);
        ConnectionClosed on failure."""
        await self.send_frames((data,))

    async def send_frames(self, frames: tuple[bytes, ...] | list[bytes]) -> None:
        """Write encoded frames, in order, with one write to the socket (each gets its MAC,
        in order, once authenticated); ConnectionClosed on failure."""
        lock = self.send_lock
        try:
            # uncontended (a link's writer is its one sender once it runs): no trip through
            # the scheduler for the lock; the write below is a checkpoint of its own
            lock.acquire_nowait()
        except trio.WouldBlock:
            await lock.acquire()
        try:
            mac = self._send_mac
            if mac is not None:
                frames = [wire.authenticated_frame(mac, f) for f in frames]
            data = frames[0] if len(frames) == 1 else b"".join(frames)
            try:
                await self._send_all(data)
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
                raise ConnectionClosed(f"send failed: {exc!r}") from exc
        finally:
            lock.release()
        self.last_sent = trio.current_time()
        self.bytes_out += len(data)

    async def _send_all(self, data: bytes) -> None:
        """Write all of ``data`` (under the send lock).

        A write the kernel takes at once is made without a trip through the scheduler
        (Trio's ``send`` yields after every successful write; the link's writer yields
        at its next ``get`` anyway, and waits for room only when the kernel's buffer is
        full: one trip per write fewer, issue 19)."""
        sock = self._socket
        if sock is None:
            await self.stream.send_all(data)
            return
        fd = sock.fileno()
        sent = 0
        with memoryview(data) as view:
            while sent < len(data):
                try:
                    sent += os.write(fd, view[sent:] if sent else data)
                except BlockingIOError:
                    self.send_waits += 1
                    await trio.lowlevel.wait_writable(fd)

    async def send(self, msg: wire.Message) -> None:
        await self.send_frame(wire.encode_frame(msg))

    async def aclose(self) -> None:
        with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            await self.stream.aclose()


def _handshake_frame_limit() -> int:
    return HANDSHAKE_MAX_FRAME


def _member_frame_limit() -> int:
    return wire.MAX_FRAME_BYTES


# ---------------------------------------------------------------------------
# Handshake
# ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PeerInfo:
    """What a handshake proved about the other side."""

    identity: bytes
    table_id: bytes
    dialed: bool
    genesis: bytes = NO_GENESIS


def _reject_of(decoded: wire.Decoded) -> Rejected | None:
    msg = decoded.message
    if isinstance(msg, wire.Reject):
        return Rejected(msg.reason, msg.detail or msg.reason)
    return None


async def _expect(framed: FramedStream, cls: type[wire.Message]) -> wire.Decoded:
    decoded = await framed.receive()
    rejected = _reject_of(decoded)
    if rejected is not None:
        raise rejected
    if not isinstance(decoded.message, cls):
        raise HandshakeFailed(
            "identity", f"expected {cls.TAG!r} during handshake, got {decoded.message.TAG!r}"
        )
    return decoded


async def _refuse(framed: FramedStream, kind: str, detail: str) -> HandshakeFailed:
    with contextlib.suppress(ConnectionClosed, trio.TooSlowError):
        with trio.fail_after(REFUSE_TIMEOUT_S):
            await framed.send(wire.Reject(kind, detail[: wire.MAX_REASON_LEN]))
    return HandshakeFailed(kind, detail)


def _check_version(version: int) -> str | None:
    if version != wire.HANDSHAKE_VERSION:
        return (
            f"version mismatch: peer speaks link protocol {version},"
            f" we speak {wire.HANDSHAKE_VERSION}"
        )
    return None


def genesis_problem(ours: bytes, theirs: bytes, *, listening: bool) -> str | None:
    """Why two peers' genesis hashes keep them apart, or ``None``.

    Two different genesis hashes are two forks of one table.  A formed
    listener also refuses a peer without one: every seat has the genesis
    before it dials after forming, and the lobby is closed by then.
    """
    if ours and theirs and ours != theirs:
        return (
            f"fork: peer holds genesis {theirs.hex()[:16]}, we hold {ours.hex()[:16]}"
            " (two different manifests were signed for this table)"
        )
    if listening and ours and not theirs:
        return "the table is already formed (peer holds no genesis)"
    return None


def _hello(identity: IdentityKey, table_id: bytes, eph: Ephemeral, genesis: bytes) -> bytes:
    nonce = secrets.token_bytes(wire.NONCE_BYTES)
    return wire.encode_body(
        wire.Hello(wire.HANDSHAKE_VERSION, table_id, identity.public, nonce, eph.public, genesis)
    )


def _start_session(
    framed: FramedStream,
    eph: Ephemeral,
    peer_eph: bytes,
    hello_l: bytes,
    hello_d: bytes,
    *,
    listener: bool,
) -> None:
    d2l, l2d = link_keys(eph.shared(peer_eph), wire.session_transcript(hello_l, hello_d))
    if listener:
        framed.authenticate(send_key=l2d, receive_key=d2l)
    else:
        framed.authenticate(send_key=d2l, receive_key=l2d)


async def handshake_listener(
    framed: FramedStream,
    identity: IdentityKey,
    table_id: bytes,
    admit: Callable[[bytes], tuple[str, str] | None],
    genesis: bytes = NO_GENESIS,
    hello_within: float = math.inf,
    watchers: bool = False,
) -> PeerInfo:
    """Listener side: Hello first, then verify the dialer's Auth, then our Auth.

    ``admit(peer_key)`` returns ``None`` to accept or ``(reason, detail)`` to
    refuse (table full, not a member) after the peer has proved its key.  The
    dialer's complete Hello must arrive within ``hello_within`` seconds of ours.  With
    ``watchers`` (a formed table that lets spectators watch) a dialer that holds no genesis
    may connect; it is a stranger until it is admitted as a spectator.
    """
    eph = Ephemeral()
    mine_raw = _hello(identity, table_id, eph, genesis)
    await framed.send_frame(wire.frame(mine_raw))
    decoded = None
    with trio.move_on_after(hello_within):
        decoded = await _expect(framed, wire.Hello)
    if decoded is None:
        raise await _refuse(framed, "busy", f"no complete hello within {hello_within:g}s")
    hello = decoded.message
    assert isinstance(hello, wire.Hello)
    problem = _check_version(hello.version)
    if problem:
        raise await _refuse(framed, "version", problem)
    if hello.table_id != table_id:
        raise await _refuse(framed, "gone", f"no table {hello.table_id.hex()} here")
    if hello.identity == identity.public:
        raise await _refuse(framed, "identity", "peer presented our own identity key")
    fork = genesis_problem(genesis, hello.genesis, listening=not watchers)
    if fork:
        raise await _refuse(framed, "fork", fork)
    auth = (await _expect(framed, wire.Auth)).message
    assert isinstance(auth, wire.Auth)
    transcript = wire.auth_transcript(decoded.raw, mine_raw)
    try:
        verify_signature(hello.identity, transcript, auth.signature)
    except CryptoError as exc:
        raise await _refuse(framed, "identity", f"handshake signature invalid: {exc}") from exc
    refusal = admit(hello.identity)
    if refusal is not None:
        raise await _refuse(framed, *refusal)
    await framed.send(wire.Auth(identity.sign(wire.auth_transcript(mine_raw, decoded.raw))))
    _start_session(framed, eph, hello.ephemeral, mine_raw, decoded.raw, listener=True)
    return PeerInfo(hello.identity, table_id, dialed=False, genesis=hello.genesis)


async def handshake_dialer(
    framed: FramedStream,
    identity: IdentityKey,
    table_id: bytes | None,
    expect_identity: bytes | None = None,
    expect_fingerprint: str | None = None,
    genesis: bytes = NO_GENESIS,
) -> PeerInfo:
    """Dialer side.  ``table_id=None`` adopts the listener's table (``--peer`` joins)."""
    decoded = await _expect(framed, wire.Hello)
    hello = decoded.message
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
    if expect_fingerprint is not None and fingerprint(hello.identity) != expect_fingerprint:
        raise await _refuse(framed, "identity", "peer key does not match the announced one")
    if hello.identity == identity.public:
        raise await _refuse(framed, "identity", "peer presented our own identity key")
    fork = genesis_problem(genesis, hello.genesis, listening=False)
    if fork:
        raise await _refuse(framed, "fork", fork)
    table = hello.table_id
    eph = Ephemeral()
    mine_raw = _hello(identity, table, eph, genesis)
    await framed.send_frame(wire.frame(mine_raw))
    await framed.send(wire.Auth(identity.sign(wire.auth_transcript(mine_raw, decoded.raw))))
    auth = (await _expect(framed, wire.Auth)).message
    assert isinstance(auth, wire.Auth)
    theirs = wire.auth_transcript(decoded.raw, mine_raw)
    try:
        verify_signature(hello.identity, theirs, auth.signature)
    except CryptoError as exc:
        raise HandshakeFailed("identity", f"listener's handshake signature invalid: {exc}") from exc
    _start_session(framed, eph, hello.ephemeral, decoded.raw, mine_raw, listener=False)
    return PeerInfo(hello.identity, table, dialed=True, genesis=hello.genesis)


# ---------------------------------------------------------------------------
# Byte-bounded queues
# ---------------------------------------------------------------------------


class ByteQueue:
    """A FIFO bounded in bytes and in items.

    :meth:`put_nowait` refuses what does not fit; :meth:`put` waits for room
    (an item larger than the whole budget still goes into an empty queue, so
    nothing legal can wait forever).  :meth:`get` raises
    :class:`trio.EndOfChannel` once the queue is closed and empty.
    """

    def __init__(self, max_bytes: int, max_items: int) -> None:
        self.max_bytes = max_bytes
        self.max_items = max_items
        self.bytes = 0
        self._items: collections.deque[tuple[object, int]] = collections.deque()
        self._closed = False
        self._getters = trio.lowlevel.ParkingLot()
        self._putters = trio.lowlevel.ParkingLot()

    def __len__(self) -> int:
        return len(self._items)

    def _fits(self, size: int) -> bool:
        if not self._items:
            return True
        return self.bytes + size <= self.max_bytes and len(self._items) < self.max_items

    def put_nowait(self, item: object, size: int) -> bool:
        if self._closed:
            raise trio.ClosedResourceError("queue closed")
        if not self._fits(size):
            return False
        self._items.append((item, size))
        self.bytes += size
        self._getters.unpark()
        return True

    async def put(self, item: object, size: int) -> None:
        await trio.lowlevel.checkpoint_if_cancelled()
        while not self._closed and not self._fits(size):
            await self._putters.park()
        if not self.put_nowait(item, size):  # pragma: no cover - _fits was just true
            raise AssertionError("queue has room")
        await trio.lowlevel.cancel_shielded_checkpoint()

    def get_nowait(self) -> object:
        if not self._items:
            if self._closed:
                raise trio.EndOfChannel
            raise trio.WouldBlock
        item, size = self._items.popleft()
        self.bytes -= size
        self._putters.unpark_all()
        return item

    async def get(self) -> object:
        """The next item; a checkpoint either way (parking is one: a get that waited does
        not yield a second time, which would cost a writer one more trip through the
        scheduler per frame)."""
        if self._items or self._closed:
            await trio.lowlevel.checkpoint_if_cancelled()
            item = self.get_nowait()
            await trio.lowlevel.cancel_shielded_checkpoint()
            return item
        while not self._items and not self._closed:
            await self._getters.park()
        return self.get_nowait()

    def close(self) -> None:
        self._closed = True
        self._getters.unpark_all()
        self._putters.unpark_all()


# ---------------------------------------------------------------------------
# Connections and the mesh
# ---------------------------------------------------------------------------


class Inbox:
    """What the connections deliver to the node: messages in arrival order, each peer
    holding at most ``per_peer_bytes`` at once, plus a bounded count of connection events.

    Messages from strangers (peers that have not joined) share one budget,
    ``stranger_bytes`` for all of them together, so that keys made up by the
    dozen do not each get a member's share.

    The node reads it like a Trio receive channel (``receive``, ``receive_nowait``).
    """

    def __init__(
        self, per_peer_bytes: int, control_events: int, stranger_bytes: int = STRANGERS_INBOX_BYTES
    ) -> None:
        self.per_peer_bytes = per_peer_bytes
        self.control_events = control_events
        self.stranger_bytes = stranger_bytes
        self.strangers_held = 0
        """Bytes held by strangers' messages (all strangers together)."""
        self._items: collections.deque[tuple[MeshEvent, bool]] = collections.deque()
        self._held: dict[bytes, int] = {}
        self._controls = 0
        self.bytes = 0
        self._getters = trio.lowlevel.ParkingLot()
        self._room: dict[bytes, trio.lowlevel.ParkingLot] = {}
        self._stranger_room = trio.lowlevel.ParkingLot()

    def __len__(self) -> int:
        return len(self._items)

    def held_by(self, peer: bytes) -> int:
        return self._held.get(peer, 0)

    async def put(self, event: Inbound, stranger: bool = False) -> None:
        """Queue a message; waits while its peer already holds its share, or (``stranger``)
        while the strangers together hold theirs (backpressure)."""
        size = event.size
        peer = event.peer
        while stranger and self.strangers_held and self.strangers_held + size > self.stranger_bytes:
            await self._stranger_room.park()
        while self._held.get(peer, 0) and self._held[peer] + size > self.per_peer_bytes:
            await self._room.setdefault(peer, trio.lowlevel.ParkingLot()).park()
        self._held[peer] = self._held.get(peer, 0) + size
        self.bytes += size
        if stranger:
            self.strangers_held += size
        self._items.append((event, stranger))
        self._getters.unpark()

    def post(self, event: PeerUp | PeerDown) -> None:
        """Queue a connection event; dropped past ``control_events`` queued."""
        if self._controls >= self.control_events:
            return
        self._controls += 1
        self._items.append((event, False))
        self._getters.unpark()

    def queued_up(self) -> set[bytes]:
        """The peers whose link-up (:class:`PeerUp`) is queued, not yet received."""
        return {e.peer for e, _ in self._items if isinstance(e, PeerUp)}

    def drain(self, first: MeshEvent) -> list[MeshEvent]:
        """``first`` and whatever else is queued already, in order (a batch)."""
        batch = [first]
        while self._items:
            batch.append(self.receive_nowait())
        return batch

    def receive_nowait(self) -> MeshEvent:
        if not self._items:
            raise trio.WouldBlock
        event, stranger = self._items.popleft()
        if isinstance(event, Inbound):
            left = self._held[event.peer] - event.size
            self.bytes -= event.size
            if stranger:
                self.strangers_held -= event.size
                self._stranger_room.unpark_all()
            if left:
                self._held[event.peer] = left
            else:
                del self._held[event.peer]
            lot = self._room.get(event.peer)
            if lot is not None:
                lot.unpark_all()
                if not lot:
                    del self._room[event.peer]
        else:
            self._controls -= 1
        return event

    async def receive(self) -> MeshEvent:
        """The next event; a checkpoint either way (a receive that waited parked, which is
        one, and does not yield again)."""
        if self._items:
            await trio.lowlevel.checkpoint_if_cancelled()
            event = self.receive_nowait()
            await trio.lowlevel.cancel_shielded_checkpoint()
            return event
        while not self._items:
            await self._getters.park()
        return self.receive_nowait()


_conn_ids = itertools.count(1)


class Connection:
    """One authenticated connection; its tasks run in the mesh's nursery."""

    def __init__(self, mesh: Mesh, framed: FramedStream, info: PeerInfo) -> None:
        self.id = next(_conn_ids)
        self.mesh = mesh
        self.framed = framed
        self.peer = info.identity
        self.dialed = info.dialed
        self.hello_genesis = info.genesis
        """The genesis hash the other side's hello named (empty: its table is not formed)."""
        self.outbox = ByteQueue(mesh.outbox_bytes, OUTBOX_FRAMES)
        self._cancel = trio.CancelScope()
        self._reading = trio.CancelScope()
        self._flush_deadline: float | None = None
        self.closed = trio.Event()
        self.close_reason = ""
        self._ping_nonce = 0
        self.spoke = False
        """Whether the peer has sent a message other than a keepalive."""
        self.keepalives = 0
        self._spectator_tokens = float(SPECTATOR_BURST_BYTES)
        self._spectator_at = trio.current_time()
        self._spectator_counted = 0
        self._keepalive_tokens = float(mesh.keepalive_burst)
        self._keepalive_at = trio.current_time()
        framed.frame_limit = self._frame_limit
        self.own_from: int | None = None
        """The mark (:meth:`Mesh.broadcast_raw`) of the first of our own entries queued on
        this link: every later one went on it too, in order, so a fetch answered on this
        link leaves them out (p2p/net/fetch.py)."""

    @property
    def stranger(self) -> bool:
        """A peer that connected to us and has not joined (see :attr:`Mesh.members`)."""
        if self.dialed:
            return False  # a peer we dialled is trusted (asked per frame: cheapest first)
        members = self.mesh.members
        return (
            members is not None and self.peer not in members and self.peer not in self.mesh.watchers
        )

    @property
    def spectator(self) -> bool:
        """A peer that dialled us and was admitted to watch (see :attr:`Mesh.watchers`)."""
        return not self.dialed and self.peer in self.mesh.watchers

    def _frame_limit(self) -> int:
        if self.dialed:
            return wire.MAX_FRAME_BYTES  # neither a stranger nor a spectator
        small = self.stranger or self.spectator
        return STRANGER_MAX_FRAME if small else wire.MAX_FRAME_BYTES

    @property
    def bytes_held(self) -> int:
        """Queued outgoing bytes plus bytes received but not yet decoded."""
        return self.outbox.bytes + self.framed.decoder.buffered

    def send_nowait(self, frame_bytes: bytes) -> bool:
        """Queue a frame; a full outbox means the peer cannot keep up: drop the link."""
        if self.closed.is_set():
            return False
        try:
            queued = self.outbox.put_nowait(frame_bytes, len(frame_bytes))
        except trio.ClosedResourceError:
            return False
        if not queued:
            self.abort(
                f"outbox overflow ({self.outbox.bytes} bytes in {len(self.outbox)} frames):"
                " peer too slow"
            )
        return queued

    async def send(self, msg: wire.Message) -> None:
        """Queue a message, waiting for room in the outbox (backpressure)."""
        frame_bytes = wire.encode_frame(msg)
        try:
            await self.outbox.put(frame_bytes, len(frame_bytes))
        except trio.ClosedResourceError as exc:
            raise ConnectionClosed(self.close_reason or "connection closed", self.peer) from exc

    def finish_sending(self, reason: str = "closed locally") -> None:
        """Close gracefully: the writer sends what is queued, then the connection ends."""
        if not self.close_reason:
            self.close_reason = reason
        self.outbox.close()

    def abort(self, reason: str) -> None:
        if not self.close_reason:
            self.close_reason = reason
        self._cancel.cancel()

    def close_after_sending(self, reason: str) -> None:
        """Stop reading, send what is queued (a ``Reject``, say), then close; a peer that does
        not take it within :data:`REFUSE_TIMEOUT_S` is cut off anyway."""
        if not self.close_reason:
            self.close_reason = reason
        if self._flush_deadline is None:
            self._flush_deadline = trio.current_time() + REFUSE_TIMEOUT_S
        self.outbox.close()
        self._reading.cancel()

    def refuse(self, kind: str, detail: str) -> None:
        """Tell the peer why (a ``Reject`` frame), then close (see :meth:`close_after_sending`)."""
        detail = detail[: wire.MAX_REASON_LEN]
        with contextlib.suppress(trio.ClosedResourceError):
            frame_bytes = wire.encode_frame(wire.Reject(kind, detail))
            self.outbox.put_nowait(frame_bytes, len(frame_bytes))
        self.close_after_sending(f"{kind}: {detail}")

    async def run(self) -> None:
        """Reader, writer and keepalive; ends (and reports PeerDown) when any fails."""
        remote_error = False
        try:
            with self._cancel:
                try:
                    async with trio.open_nursery() as nursery:
                        nursery.start_soon(self._writer)
                        await self._read_side()
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
            self.outbox.close()
            self.closed.set()
            with trio.CancelScope(shield=True):
                await self.framed.aclose()
            self.mesh._connection_ended(self, self.close_reason or "closed", remote_error)

    async def _read_side(self) -> None:
        """Reader and keepalive, until the link ends or :meth:`close_after_sending` stops
        them; then the writer gets until the flush deadline to send what is queued."""
        with self._reading:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._keepalive)
                if self.stranger:
                    nursery.start_soon(self._stranger_window)
                await self._reader()
        assert self._flush_deadline is not None
        await trio.sleep_until(self._flush_deadline)
        raise ConnectionClosed(self.close_reason, self.peer)

    async def _stranger_window(self) -> None:
        """A stranger that says nothing is cut after a short window, and one that does not
        join after a longer one."""
        start = trio.current_time()
        await trio.sleep(self.mesh.stranger_silent)
        if self.stranger and not self.spoke:
            self.mesh.strangers_cut += 1
            self.refuse("busy", f"sent nothing within {self.mesh.stranger_silent:g}s of connecting")
            return
        await trio.sleep_until(start + STRANGER_JOIN_S)
        if self.stranger:
            self.mesh.strangers_cut += 1
            self.refuse("busy", f"did not join within {STRANGER_JOIN_S:g}s")

    def _meter_keepalive(self) -> None:
        """Pings and pongs are cheap to send and cost us a decode and a reply each: a few a
        second are allowed, more end the link (a token bucket)."""
        now = trio.current_time()
        rate = self.mesh.keepalive_rate
        tokens = self._keepalive_tokens + (now - self._keepalive_at) * rate
        self._keepalive_tokens = min(float(self.mesh.keepalive_burst), tokens)
        self._keepalive_at = now
        self.keepalives += 1
        if self._keepalive_tokens < 1:
            raise ConnectionClosed(
                f"keepalive flood: more than {rate:g} pings a second", self.peer, remote_error=True
            )
        self._keepalive_tokens -= 1

    def _meter_spectator(self) -> None:
        """A spectator sends a few small requests: its bytes are metered by a token bucket
        (:data:`SPECTATOR_BYTES_PER_S`, burst :data:`SPECTATOR_BURST_BYTES`); more ends the
        link."""
        now = trio.current_time()
        tokens = self._spectator_tokens + (now - self._spectator_at) * SPECTATOR_BYTES_PER_S
        self._spectator_tokens = min(float(SPECTATOR_BURST_BYTES), tokens)
        self._spectator_at = now
        self._spectator_tokens -= self.framed.bytes_in - self._spectator_counted
        self._spectator_counted = self.framed.bytes_in
        if self._spectator_tokens < 0:
            self.mesh.watchers_cut += 1
            raise ConnectionClosed(
                f"spectator flood: more than {SPECTATOR_BYTES_PER_S:g} bytes a second",
                self.peer,
                remote_error=True,
            )

    def make_spectator(self) -> None:
        """Admitted to watch: its own budgets from now on (a small outbox and kernel send
        buffer, metered bytes in; see :data:`SPECTATOR_OUTBOX_BYTES`)."""
        self.outbox.max_bytes = SPECTATOR_OUTBOX_BYTES
        self._spectator_counted = self.framed.bytes_in
        self._spectator_at = trio.current_time()
        setsockopt = getattr(self.framed.stream, "setsockopt", None)
        if setsockopt is not None:
            with contextlib.suppress(OSError):
                setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SPECTATOR_SNDBUF)

    async def _reader(self) -> None:
        while True:
            decoded = await self.framed.receive()
            msg = decoded.message
            spectator = self.spectator
            if spectator:
                self._meter_spectator()
            stranger = self.stranger
            if stranger and self.framed.bytes_in > STRANGER_BYTES:
                self.mesh.strangers_cut += 1
                self.refuse("busy", f"sent {self.framed.bytes_in} bytes without joining")
                return
            if isinstance(msg, wire.Ping | wire.Pong):
                self._meter_keepalive()
                if isinstance(msg, wire.Ping):
                    self.send_nowait(wire.encode_frame(wire.Pong(msg.nonce)))
                continue
            self.spoke = True
            self.mesh.stats_received += 1
            shared = stranger or spectator  # one inbox budget for all who hold no seat
            await self.mesh.inbox.put(Inbound(self.peer, msg, decoded.raw), shared)

    async def _writer(self) -> None:
        """Send what the outbox holds: every frame queued by the time the writer runs goes
        out in one write (up to :data:`WRITE_BATCH_BYTES`), so an entry and what follows
        it (our next entry, a relay) cost the peer one wake-up, not one each (issue 19)."""
        while True:
            try:
                frame_bytes = await self.outbox.get()
            except trio.EndOfChannel:
                raise ConnectionClosed(self.close_reason or "closed locally", self.peer) from None
            assert isinstance(frame_bytes, bytes)
            frames = [frame_bytes]
            size = len(frame_bytes)
            while size < WRITE_BATCH_BYTES:
                try:
                    more = self.outbox.get_nowait()
                except (trio.WouldBlock, trio.EndOfChannel):
                    break  # a closed outbox ends the writer at its next get()
                assert isinstance(more, bytes)
                frames.append(more)
                size += len(more)
            await self.framed.send_frames(frames)
            self.mesh.writes += 1

    async def _keepalive(self) -> None:
        interval = self.mesh.keepalive_interval
        while True:
            before = trio.current_time()
            await trio.sleep(interval / 2)
            now = trio.current_time()
            if now - before > interval / 2 + self.mesh.keepalive_dead / 2:
                # we were away (stopped, suspended, starved): what the peer sent meanwhile
                # is still unread, so it gets a fresh window instead of the blame
                self.framed.last_received = now
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
        max_handshakes_per_address: int = MAX_HANDSHAKES_PER_ADDRESS,
        outbox_bytes: int = OUTBOX_BYTES,
        inbox_bytes_per_peer: int = INBOX_BYTES_PER_PEER,
        hello_timeout: float = HELLO_WITHIN_S,
        stranger_silent: float = STRANGER_SILENT_S,
    ) -> None:
        self._nursery = nursery
        self.handshake_timeout = handshake_timeout
        self.hello_timeout = hello_timeout
        self.max_pending_handshakes = max_pending_handshakes
        self.max_handshakes_per_address = max_handshakes_per_address
        self.pending_handshakes = 0
        self.handshakes_dropped = 0
        """Pending handshakes dropped to make room for a newer connection."""
        self._pending_by_address: dict[str, int] = {}
        self._handshaking: dict[FramedStream, trio.CancelScope] = {}
        """Pending handshakes, oldest first."""
        self.stranger_silent = stranger_silent
        self.members: set[bytes] | frozenset[bytes] | None = None
        """Who may send full-size frames over a connection they opened: ``None`` (the
        default) trusts every authenticated peer; a set (the lobby, then the manifest's
        seats) makes every other peer that dials us a *stranger*: frames of at most
        :data:`STRANGER_MAX_FRAME`, :data:`STRANGER_BYTES` in all, one inbox budget shared
        by all strangers, :data:`MAX_STRANGERS` at once (:data:`MAX_STRANGERS_PER_ADDRESS`
        per address), the oldest making room for a newcomer, and
        :data:`STRANGER_SILENT_S` to say something.  Peers we dialled are trusted."""
        self._strangers: dict[Connection, str] = {}
        """Connected strangers, oldest first, with their address."""
        self.strangers_evicted = 0
        self.strangers_cut = 0
        self.keepalive_rate = max(
            KEEPALIVES_PER_INTERVAL, KEEPALIVES_PER_INTERVAL / keepalive_interval
        )
        """Keepalive frames a second a link may send on average (:data:`KEEPALIVES_PER_INTERVAL`
        per interval of ours, and at least that many a second)."""
        self.keepalive_burst = max(
            KEEPALIVE_BURST, math.ceil(2 * keepalive_dead / keepalive_interval)
        )
        self.identity = identity
        self.table_id = table_id
        self.genesis = NO_GENESIS
        """The genesis hash of our record once formed: sent in every hello, and a peer
        holding another one is refused (see :func:`genesis_problem`)."""
        self.keepalive_interval = keepalive_interval
        self.keepalive_dead = keepalive_dead
        self.outbox_bytes = outbox_bytes
        self.connections: dict[bytes, Connection] = {}
        self.inbox = Inbox(inbox_bytes_per_peer, INBOX_CONTROL_EVENTS)
        self.admit: Callable[[bytes], tuple[str, str] | None] = lambda _peer: None
        self.listen_port: int | None = None
        self.listen_host: str | None = None
        self._persistent: dict[bytes, _Persistent] = {}
        self._changed = trio.Event()
        self.stats_received = 0
        self.writes = 0
        """Socket writes made by the connections' writers (each may carry several frames)."""
        self.handshake_failures: collections.deque[str] = collections.deque(
            maxlen=HANDSHAKE_FAILURES_KEPT
        )
        self.handshake_failure_count = 0
        self.closing = False
        self.seat_hosts: frozenset[str] | None = None
        """The hosts of the manifest's seats once the table is formed; ``None`` before."""
        self.watch_slots = 0
        """Spectators the table lets watch (the manifest's ``spectators``); with any, a
        formed table takes handshakes from any host (strangers until admitted)."""
        self.watchers: set[bytes] = set()
        """Peers admitted to watch (:meth:`admit_spectator`): not strangers, but small
        frames, metered bytes in, a small outbox (:data:`SPECTATOR_OUTBOX_BYTES`)."""
        self.watchers_cut = 0

    def open_to_watchers(self, slots: int) -> None:
        """Let up to ``slots`` spectators watch (0: none, and only seats' hosts connect)."""
        self.watch_slots = slots

    def admit_spectator(self, peer: bytes) -> bool:
        """``peer`` (a stranger that dialled us) may watch: it leaves the strangers and gets
        a spectator's budgets.  ``False`` if it is not connected."""
        conn = self.connections.get(peer)
        if conn is None or conn.dialed or conn.closed.is_set():
            return False
        self.watchers.add(peer)
        self._strangers.pop(conn, None)
        conn.make_spectator()
        return True

    def spectators(self) -> list[bytes]:
        """The spectators linked to us now."""
        return [p for p, c in self.connections.items() if c.spectator]

    def seat_hosts_only(self, addresses: list[str]) -> None:
        """From now on, refuse incoming connections from any host but these seats'."""
        self.seat_hosts = frozenset(_host_key(parse_address(a)[0]) for a in addresses)

    def bytes_held(self) -> int:
        """Bytes held by the mesh's own queues and buffers (inbox, outboxes, decoders)."""
        held = self.inbox.bytes + sum(c.bytes_held for c in self.connections.values())
        return held + sum(f.decoder.buffered for f in self._handshaking)

    def strangers(self) -> list[Connection]:
        """The strangers connected now, oldest first (see :attr:`members`)."""
        for conn in [c for c in self._strangers if c.closed.is_set() or not c.stranger]:
            del self._strangers[conn]
        return list(self._strangers)

    def _welcome_stranger(self, conn: Connection, address: str) -> None:
        """Make room for a new stranger: past the per-address or the total cap, the oldest
        stranger (of that address, or of all) is refused and closed, never the newcomer."""
        waiting = self.strangers()
        same = [c for c in waiting if self._strangers[c] == address]
        if len(same) >= MAX_STRANGERS_PER_ADDRESS:
            self._evict(same[0], f"{len(same)} connections from {address} are waiting to join")
        elif len(waiting) >= MAX_STRANGERS:
            self._evict(waiting[0], f"{len(waiting)} connections are waiting to join")
        self._strangers[conn] = address

    def _evict(self, conn: Connection, why: str) -> None:
        del self._strangers[conn]
        self.strangers_evicted += 1
        conn.refuse("busy", f"{why}; a newer one took your place")

    def _failed(self, what: str) -> None:
        self.handshake_failure_count += 1
        self.handshake_failures.append(what)

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

    def _slot_refusal(self, address: str) -> str | None:
        if self.max_pending_handshakes <= 0:
            return "this peer takes no handshakes"
        if self._pending_by_address.get(address, 0) >= self.max_handshakes_per_address:
            return f"{self.max_handshakes_per_address} handshakes from {address} in progress"
        return None

    def _free_a_slot(self) -> None:
        """All handshake slots are taken: drop the oldest pending handshake."""
        oldest = next(iter(self._handshaking))
        self._handshaking[oldest].cancel()
        del self._handshaking[oldest]
        self.handshakes_dropped += 1

    async def _handle_incoming(self, stream: trio.SocketStream) -> None:
        """Authenticate one incoming connection (bounded in time, in number and per
        address), then run it.

        Whatever the other end sends or withholds (junk, a huge length
        prefix, half a frame, nothing at all) ends here as a recorded
        handshake failure and a closed socket; it never reaches the node.
        """
        framed = FramedStream(stream)
        try:
            address = str(stream.socket.getpeername()[0])
        except OSError:
            await framed.aclose()
            return
        if (
            self.seat_hosts is not None
            and not self.watch_slots
            and _host_key(address) not in self.seat_hosts
        ):
            failure = await _refuse(framed, "stranger", f"{address} holds no seat at this table")
            self._failed(str(failure))
            await framed.aclose()
            return
        busy = self._slot_refusal(address)
        if busy is not None:
            failure = await _refuse(framed, "busy", busy)
            self._failed(str(failure))
            await framed.aclose()
            return
        if len(self._handshaking) >= self.max_pending_handshakes:
            self._free_a_slot()
        self.pending_handshakes += 1
        self._pending_by_address[address] = self._pending_by_address.get(address, 0) + 1
        scope = self._handshaking[framed] = trio.CancelScope()
        info = None
        try:
            if self.table_id is None:
                raise await _refuse(framed, "gone", "this peer has not joined a table yet")
            with scope, trio.fail_after(self.handshake_timeout):
                info = await handshake_listener(
                    framed,
                    self.identity,
                    self.table_id,
                    self.admit,
                    self.genesis,
                    self.hello_timeout,
                    watchers=self.watch_slots > 0 and bool(self.genesis),
                )
        except (HandshakeFailed, ConnectionClosed) as exc:
            self._failed(str(exc) or type(exc).__name__)
            await framed.aclose()
            return
        except trio.TooSlowError:
            self._failed(f"handshake timed out after {self.handshake_timeout:g}s")
            await framed.aclose()
            return
        finally:
            self._handshaking.pop(framed, None)
            self.pending_handshakes -= 1
            left = self._pending_by_address[address] - 1
            if left:
                self._pending_by_address[address] = left
            else:
                del self._pending_by_address[address]
        if info is None:  # dropped for a newer connection (all slots were taken)
            failure = await _refuse(framed, "busy", "all handshake slots are taken")
            self._failed(f"dropped, the oldest pending handshake: {failure}")
            await framed.aclose()
            return
        conn = self._adopt(framed, info)
        if conn.stranger:
            self._welcome_stranger(conn, _host_key(address))
        await conn.run()

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
        source = self.listen_host if self.listen_host not in (None, "", "0.0.0.0", "::") else None
        try:
            with trio.fail_after(CONNECT_TIMEOUT_S):
                stream = await trio.open_tcp_stream(host, port, local_address=source)
        except (OSError, trio.TooSlowError) as exc:
            raise ConnectionClosed(f"cannot connect to {address}: {_unreachable(exc)}") from exc
        framed = FramedStream(stream)
        try:
            with trio.fail_after(self.handshake_timeout):
                info = await handshake_dialer(
                    framed,
                    self.identity,
                    self.table_id,
                    expect_identity,
                    expect_fingerprint,
                    self.genesis,
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
        """Dial ``peer`` now and again after every outage, with capped backoff, for as long
        as the mesh runs (a seat of a live table is never given up on)."""
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
            while not self.closing:
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
                    self._failed(str(exc))
                    exponent = min(failures, 32)  # no float overflow after a long outage
                    delay = min(BACKOFF_CAP_S, BACKOFF_START_S * math.pow(2, exponent))
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
        self.inbox.post(PeerUp(info.identity, info.dialed))
        self._notify()
        return conn

    def _connection_ended(self, conn: Connection, reason: str, remote_error: bool) -> None:
        if self.connections.get(conn.peer) is conn:
            del self.connections[conn.peer]
            self.watchers.discard(conn.peer)
            self.inbox.post(PeerDown(conn.peer, reason, remote_error))
            self._notify()

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

    def broadcast_raw(
        self, body_bytes: bytes, peers: list[bytes] | None = None, mark: int | None = None
    ) -> int:
        """Send exact body bytes (e.g. a signed entry) to ``peers`` (default: every connected
        peer but strangers); returns how many got it queued.  ``mark`` (our own entries,
        numbered in the order they leave): each link that queued it and had none yet
        records it as its :attr:`Connection.own_from`."""
        frame_bytes = wire.frame(body_bytes)
        if peers is None:  # everyone but strangers: they get nothing of the table's
            targets = [p for p, c in self.connections.items() if not c.stranger]
        else:
            targets = peers
        queued = 0
        for p in targets:
            conn = self.connections.get(p)
            if conn is not None and conn.send_nowait(frame_bytes):
                queued += 1
                if mark is not None and conn.own_from is None:
                    conn.own_from = mark
        return queued

    def broadcast(
        self, msg: wire.Message, peers: list[bytes] | None = None, mark: int | None = None
    ) -> int:
        return self.broadcast_raw(wire.encode_body(msg), peers, mark)

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
        """Close the link to ``peer`` after sending what is queued for it (a ``Reject``, say),
        cut off after :data:`REFUSE_TIMEOUT_S` if it does not read."""
        conn = self.connections.get(peer)
        if conn is not None:
            conn.close_after_sending(reason)

    def refuse(self, peer: bytes, kind: str, detail: str) -> None:
        """Send ``peer`` a ``Reject(kind, detail)``, then close the link (as :meth:`disconnect`)."""
        conn = self.connections.get(peer)
        if conn is not None:
            conn.refuse(kind, detail)


HANDSHAKE_FAILURES_KEPT = 1024
"""The most recent handshake failures kept for reports (a flood cannot grow the list)."""


@contextlib.asynccontextmanager
async def open_mesh(
    identity: IdentityKey,
    table_id: bytes | None = None,
    *,
    host: str | None = None,
    port: int = 0,
    **options: float,
) -> AsyncIterator[Mesh]:
    """Run a mesh (listening on ``host:port`` if a host is given); closes every link on exit.

    ``options`` are :class:`Mesh`'s keyword settings (keepalive, handshake and
    queue limits).  An error raised by the body comes out as itself, not
    wrapped in an exception group, so callers can catch ``HandshakeFailed``
    and friends.
    """
    with unwrap_single_error():
        async with trio.open_nursery() as nursery:
            mesh = Mesh(nursery, identity, table_id, **options)  # type: ignore[arg-type]
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


def cannot_reach(address: str, exc: ConnectionClosed) -> str:
    """ "cannot reach the table at ADDRESS: why", naming the address once (a failed dial's
    own reason names it too, for the mesh's log)."""
    why = exc.reason.replace(f"cannot connect to {address}: ", "", 1)
    why = why.replace(f"handshake with {address} timed out", "no handshake in time", 1)
    return f"cannot reach the table at {address}: {why}"


def _unreachable(exc: BaseException) -> str:
    """Why a dial failed, in words a player can act on (not an exception's repr)."""
    if isinstance(exc, trio.TooSlowError):
        return f"no answer within {CONNECT_TIMEOUT_S:g} s"
    tried = getattr(exc.__cause__, "exceptions", None) or (exc,)
    if all(isinstance(e, ConnectionRefusedError) for e in tried):
        return "nothing listens there (is the table still open, and the address right?)"
    first = tried[0]
    return getattr(first, "strerror", None) or str(first) or type(first).__name__


def _leaves(group: BaseExceptionGroup) -> list[BaseException]:
    out: list[BaseException] = []
    for exc in group.exceptions:
        if isinstance(exc, BaseExceptionGroup):
            out.extend(_leaves(exc))
        else:
            out.append(exc)
    return out


@contextlib.asynccontextmanager
async def open_task_nursery() -> AsyncIterator[trio.Nursery]:
    """A nursery for background tasks: cancelled when the block ends (however it ends), an
    error coming out as itself rather than wrapped in an exception group."""
    with unwrap_single_error():
        async with trio.open_nursery() as nursery:
            try:
                yield nursery
            finally:
                nursery.cancel_scope.cancel()


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
