"""Persistence of the record: an append-only file of checksummed frames.

File layout::

    MAGIC (16 bytes)
    frame*      where frame = u32 big-endian payload length
                            + 8-byte BLAKE2b-64 checksum of the payload
                            + payload (canonical msgpack body)

The first frame's payload is the :class:`p2p.wire.Genesis`; every later one is
a :class:`p2p.wire.Signed` envelope, exactly as accepted by the record, in
acceptance order (within a round of concurrent responders that order may
differ between peers; :class:`p2p.record.Record` restores the canonical order
when the file is replayed into it).

Crash safety.  An entry is appended *before* the peer acts on it.  A crash can
leave only the last frame incomplete (short header, short payload, or payload
bytes that were never written and fail the checksum); :func:`load` detects
such a torn tail, reports it, and :meth:`RecordFile.open` truncates it away
before appending again, so it is never misread.  Damage anywhere *before* the
last frame is not a torn write and raises :class:`CorruptRecordFile`.

Durability policy.  Every append is written and flushed to the OS, which
survives a killed process.  ``fsync`` (survives power loss) costs a disk round
trip, so it is done when asked: the node must pass ``sync=True`` for its *own*
entries before sending them (forgetting a signed entry and signing a
different one after a reboot would be equivocation) and may call
:meth:`RecordFile.sync` at step boundaries; other seats' entries lost to a
power cut are simply fetched again from the peers.
"""

from __future__ import annotations

import hashlib
import os
import struct
from dataclasses import dataclass
from pathlib import Path

from p2p.errors import CorruptRecordFile, RemoteProtocolError
from p2p.wire import MAX_FRAME_BYTES, Genesis, Signed, decode_body, encode_body

MAGIC = b"SLAIGA-RECORD-1\n"
FRAME_HEADER = struct.Struct(">I8s")
CHECKSUM_BYTES = 8


def _checksum(payload: bytes) -> bytes:
    return hashlib.blake2b(payload, digest_size=CHECKSUM_BYTES).digest()


def _frame(payload: bytes) -> bytes:
    return FRAME_HEADER.pack(len(payload), _checksum(payload)) + payload


@dataclass(frozen=True, slots=True)
class Loaded:
    """What :func:`load` found: the genesis, the envelopes, and how much torn tail follows."""

    genesis: Genesis
    entries: tuple[Signed, ...]
    good_bytes: int  # length of the valid prefix of the file
    torn_bytes: int  # bytes after it belonging to a torn last frame (0 if none)


def load(path: str | os.PathLike[str]) -> Loaded:
    """Read a record file; detect (but do not remove) a torn last frame."""
    data = Path(path).read_bytes()
    if data[: len(MAGIC)] != MAGIC:
        raise CorruptRecordFile(f"{path}: not a slaiga record file (bad magic)")
    pos = len(MAGIC)
    payloads: list[bytes] = []
    torn = 0
    while pos < len(data):
        if len(data) - pos < FRAME_HEADER.size:
            torn = len(data) - pos
            break
        length, check = FRAME_HEADER.unpack_from(data, pos)
        start = pos + FRAME_HEADER.size
        end = start + length
        if end > len(data):
            torn = len(data) - pos  # payload never fully written
            break
        payload = data[start:end]
        if length == 0 or length > MAX_FRAME_BYTES or _checksum(payload) != check:
            if end == len(data):
                torn = len(data) - pos  # last frame, written partly: a torn write
                break
            raise CorruptRecordFile(f"{path}: bad frame at offset {pos} followed by more data")
        payloads.append(payload)
        pos = end
    if not payloads:
        raise CorruptRecordFile(f"{path}: no complete genesis frame")
    try:
        genesis = decode_body(payloads[0], Genesis)
        entries = tuple(decode_body(p, Signed) for p in payloads[1:])
    except RemoteProtocolError as exc:
        raise CorruptRecordFile(f"{path}: checksummed frame does not decode: {exc}") from None
    assert isinstance(genesis, Genesis)
    return Loaded(genesis, entries, pos, torn)  # type: ignore[arg-type]


def _fsync_dir(path: Path) -> None:
    fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class RecordFile:
    """An open record file for appending; use :meth:`create` or :meth:`open`."""

    __slots__ = ("path", "_f")

    def __init__(self, path: Path, f) -> None:  # type: ignore[no-untyped-def]
        self.path = path
        self._f = f

    @classmethod
    def create(cls, path: str | os.PathLike[str], genesis: Genesis) -> RecordFile:
        """Start a new file holding the genesis (fsynced); refuses to overwrite."""
        p = Path(path)
        f = open(p, "xb")  # noqa: SIM115 - owned by the RecordFile, closed in close()
        f.write(MAGIC + _frame(encode_body(genesis)))
        f.flush()
        os.fsync(f.fileno())
        _fsync_dir(p)
        return cls(p, f)

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> tuple[RecordFile, Loaded]:
        """Reopen after a restart: load, cut off a torn tail, and position for appends."""
        p = Path(path)
        loaded = load(p)
        f = open(p, "r+b")  # noqa: SIM115 - owned by the RecordFile
        if loaded.torn_bytes:
            f.truncate(loaded.good_bytes)
            os.fsync(f.fileno())
        f.seek(loaded.good_bytes)
        return cls(p, f), loaded

    def append(self, signed: Signed, sync: bool = False) -> None:
        """Write and flush one accepted envelope; ``sync=True`` also fsyncs (own entries)."""
        self._f.write(_frame(encode_body(signed)))
        self._f.flush()
        if sync:
            os.fsync(self._f.fileno())

    def sync(self) -> None:
        """fsync everything appended so far (call at step boundaries)."""
        self._f.flush()
        os.fsync(self._f.fileno())

    def close(self) -> None:
        if not self._f.closed:
            self._f.flush()
            self._f.close()

    def __enter__(self) -> RecordFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
