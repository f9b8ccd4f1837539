"""Wire framing: length-prefixed frames, sans-I/O, with a tag after the handshake.

Sans-I/O (h11 style): nothing here touches a socket.  :func:`encode_frame`
turns a message into bytes to send, and :class:`FrameDecoder` turns received
bytes back into messages, however the stream was split or coalesced.

Frame layout::

    +----------------------+-----------------------------------+--------------+
    | length: u32 big end. | body: msgpack [tag, {field: val}] | tag (16)     |
    +----------------------+-----------------------------------+--------------+

``length`` counts body bytes and must be in ``1..MAX_FRAME_BYTES``.  The
handshake frames travel without the tag; every frame after the handshake
carries one (:class:`crypto.session.FrameMac`), ``length`` then counts body
and tag, and a frame whose tag fails breaks the stream for good.  The body is
a canonical message body (:mod:`p2p.wire.schema`).

Signatures are always checked over raw bytes that were received, never over a
re-encoding: :class:`FrameDecoder` hands out every message with its exact raw
body.
"""

from __future__ import annotations

import collections
import struct
from dataclasses import dataclass

from crypto.errors import CryptoError
from crypto.session import TAG_BYTES, FrameMac
from p2p.errors import LocalProtocolError, RemoteProtocolError
from p2p.wire.schema import MAX_FRAME_BYTES, Message, decode_body, encode_body

LENGTH_PREFIX = struct.Struct(">I")
LENGTH_PREFIX_BYTES = LENGTH_PREFIX.size


def frame(body_bytes: bytes) -> bytes:
    """Prefix raw body bytes with their length (to relay bytes without re-encoding)."""
    if not 0 < len(body_bytes) <= MAX_FRAME_BYTES:
        raise LocalProtocolError(f"frame body of {len(body_bytes)} bytes exceeds MAX_FRAME_BYTES")
    return LENGTH_PREFIX.pack(len(body_bytes)) + body_bytes


def encode_frame(msg: Message) -> bytes:
    """Length prefix + canonical body of a top-level message."""
    if not isinstance(msg, Message):
        raise LocalProtocolError(f"{type(msg).__name__} is not a top-level Message")
    return frame(encode_body(msg))


def authenticated_frame(mac: FrameMac, frame_bytes: bytes) -> bytes:
    """A plain frame (length + body) turned into an authenticated one (length + body + tag)."""
    body_bytes = frame_bytes[LENGTH_PREFIX_BYTES:]
    return LENGTH_PREFIX.pack(len(body_bytes) + TAG_BYTES) + body_bytes + mac.tag(body_bytes)


@dataclass(frozen=True, slots=True)
class Decoded:
    """A message as received, with the exact body bytes it came in (for signatures)."""

    message: Message
    raw: bytes


class FrameDecoder:
    """Sans-I/O frame decoder: ``feed(bytes) -> [Decoded, ...]``.

    Copes with frames split across reads and several frames in one read.

    Error behaviour (documented contract):

    * A frame whose length prefix is 0 or above :data:`MAX_FRAME_BYTES` raises
      :class:`RemoteProtocolError` as soon as the prefix arrives (we never
      buffer an oversized body).  The stream's framing is then lost: the
      decoder is *broken*, and every later ``feed`` raises again.  Close the
      connection.
    * A well-delimited frame whose body is bad (bad msgpack, unknown type,
      schema violation, non-canonical) is consumed and raises
      :class:`RemoteProtocolError`; the decoder stays usable and the next
      ``feed`` (even ``feed(b"")``) continues with the following frame.
    * Messages decoded before a bad frame in the same ``feed`` call are never
      lost: ``feed`` returns them and leaves the bad frame in the buffer, so
      the *next* call raises for it.  Ordering is preserved.
    * After :meth:`authenticate`, a frame whose tag fails (injected, altered,
      replayed, reordered) breaks the decoder like a bad length: the link's
      frame counters can no longer be trusted.

    :meth:`push` and :meth:`next` decode one frame at a time, so a stream can
    switch to authenticated frames exactly at a frame boundary (the handshake).

    **Memory.**  A frame's body goes into one buffer of exactly the announced
    length, allocated once its length prefix has passed the check (never a
    buffer grown read by read, which fragments the heap); bytes pushed beyond
    the current frame wait as the chunks they came in.  :meth:`wanted` says how
    many bytes finish the current prefix or frame, so a reader that asks for
    no more than that never holds more than one frame (``max_frame`` plus
    prefix and tag) per connection.
    """

    __slots__ = (
        "_head",
        "_body",
        "_filled",
        "_input",
        "_input_bytes",
        "_broken",
        "_mac",
        "_deferred",
        "max_frame",
    )

    def __init__(self, max_frame: int = MAX_FRAME_BYTES) -> None:
        self.max_frame = max_frame
        """Largest body accepted (a handshake allows far less than a record entry); checked
        when a frame's length prefix arrives, so it may change between frames."""
        self._head = bytearray()
        self._body: bytearray | None = None
        self._filled = 0
        self._input: collections.deque[memoryview] = collections.deque()
        self._input_bytes = 0
        self._broken: str | None = None
        self._mac: FrameMac | None = None
        self._deferred: RemoteProtocolError | None = None

    @property
    def buffered(self) -> int:
        """Bytes held: received but not yet consumed as whole frames, plus the space taken by
        the current frame's buffer (allocated at its full announced length)."""
        body = len(self._body) if self._body is not None else 0
        return len(self._head) + body + self._input_bytes

    @property
    def broken(self) -> bool:
        return self._broken is not None

    def wanted(self) -> int:
        """Bytes that would complete the current length prefix or frame (at least 1)."""
        if self._body is not None:
            return max(1, len(self._body) - self._filled - self._input_bytes)
        return max(1, LENGTH_PREFIX_BYTES - len(self._head) - self._input_bytes)

    def feed(self, data: bytes) -> list[Decoded]:
        self.push(data)
        if self._deferred is not None:
            exc, self._deferred = self._deferred, None
            raise exc
        out: list[Decoded] = []
        while True:
            try:
                decoded = self.next()
            except RemoteProtocolError as exc:
                if out:
                    self._deferred = exc  # report the bad frame on the next call, after these
                    return out
                raise
            if decoded is None:
                return out
            out.append(decoded)

    def push(self, data: bytes) -> None:
        """Add received bytes (decode them with :meth:`next`)."""
        if self._broken is not None:
            raise RemoteProtocolError(f"stream unusable after earlier error: {self._broken}")
        if data:
            self._input.append(memoryview(data))
            self._input_bytes += len(data)

    def authenticate(self, mac: FrameMac) -> None:
        """From the next frame on, every frame must carry a valid tag under ``mac``."""
        self._mac = mac

    def _break(self, reason: str) -> RemoteProtocolError:
        self._broken = reason
        self._head = bytearray()
        self._body = None
        self._input.clear()
        self._input_bytes = 0
        return RemoteProtocolError(reason)

    def _take(self, n: int) -> memoryview:
        """Up to ``n`` pushed bytes, from the front of the input (at least one byte)."""
        chunk = self._input[0]
        if len(chunk) <= n:
            self._input.popleft()
        else:
            self._input[0] = chunk[n:]
            chunk = chunk[:n]
        self._input_bytes -= len(chunk)
        return chunk

    def next(self) -> Decoded | None:
        """The next whole frame's message, or ``None`` until more bytes arrive.

        A bad frame raises (see the class docstring); a frame error leaves the
        pending bytes for the following frames (it is consumed).
        """
        if self._broken is not None:
            raise RemoteProtocolError(f"stream unusable after earlier error: {self._broken}")
        extra = TAG_BYTES if self._mac is not None else 0
        if self._body is None and not self._head and self._input:
            whole = self._whole_frame(extra)  # the common case: the frame is in one chunk
            if whole is not None:
                return self._finish(whole, extra)
        if self._body is None:
            while len(self._head) < LENGTH_PREFIX_BYTES and self._input_bytes:
                self._head += self._take(LENGTH_PREFIX_BYTES - len(self._head))
            if len(self._head) < LENGTH_PREFIX_BYTES:
                return None
            (length,) = LENGTH_PREFIX.unpack(self._head)
            self._check_length(length, extra)
            self._body = bytearray(length)
            self._filled = 0
        body = self._body
        view = memoryview(body)
        while self._filled < len(body) and self._input_bytes:
            chunk = self._take(len(body) - self._filled)
            view[self._filled : self._filled + len(chunk)] = chunk
            self._filled += len(chunk)
        view.release()
        if self._filled < len(body):
            return None
        self._head = bytearray()
        self._body = None
        self._filled = 0
        return self._finish(memoryview(body), extra)

    def _check_length(self, length: int, extra: int) -> None:
        if not extra < length <= self.max_frame + extra:
            raise self._break(
                f"frame length {length} outside {extra + 1}..{self.max_frame + extra}"
            )

    def _whole_frame(self, extra: int) -> memoryview | None:
        """The next frame, if the first pushed chunk holds all of it (consumed), else ``None``."""
        chunk = self._input[0]
        if len(chunk) < LENGTH_PREFIX_BYTES:
            return None
        (length,) = LENGTH_PREFIX.unpack_from(chunk)
        self._check_length(length, extra)
        end = LENGTH_PREFIX_BYTES + length
        if len(chunk) < end:
            return None
        if len(chunk) == end:
            self._input.popleft()
        else:
            self._input[0] = chunk[end:]
        self._input_bytes -= end
        return chunk[LENGTH_PREFIX_BYTES:end]

    def _finish(self, frame_view: memoryview, extra: int) -> Decoded:
        """Check the tag of a whole frame (body + tag) and decode its body."""
        if extra:
            raw = bytes(frame_view[:-extra])
            assert self._mac is not None
            try:
                self._mac.check(raw, bytes(frame_view[-extra:]))
            except CryptoError as exc:
                raise self._break(f"frame authentication failed: {exc}") from None
        else:
            raw = bytes(frame_view)
        return Decoded(decode_body(raw, Message), raw)
