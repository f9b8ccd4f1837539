"""Persistence of the record: an append-only file of checksummed frames.

File layout (format 2; RECORD_FORMAT.md section 1)::

    MAGIC (16 bytes)  "SLAIGA-RECORD-2\n"
    frame*      where frame = u32 big-endian payload length
                            + 8-byte BLAKE2b-64 checksum of the payload
                            + 4-byte BLAKE2b-32 checksum of the 12 bytes before it
                            + payload (canonical msgpack body)

The first frame's payload is the :class:`p2p.wire.Genesis`; every later one is
a :class:`p2p.wire.Signed` envelope, exactly as accepted by the record, in
acceptance order (within a round of concurrent responders that order may
differ between peers; :class:`p2p.record.chain.Record` restores the canonical order
when the file is replayed into it).  A table ended by vote (``p2p.table.endvote``)
adds two more payload kinds, in the same framing (RECORD_FORMAT.md §10): an
``end_vote`` frame holds our own vote, written (fsynced) before it is sent, and
a closing ``end_votes`` frame, the last of the file, holds every remaining
seat's vote.  A ``seat_notice`` frame holds a signed notice that a player left (a
bot plays the seat) or is back (``p2p.table.notice``, RECORD_FORMAT.md §11).  Files
without votes or notices are byte for byte what they always were.

Crash safety.  An entry is appended *before* the peer acts on it.  A crash can
leave only the last frame incomplete, and the header checksum lets the reader
tell that from damage: the last frame is *torn* only if its header is cut
short, or its (checksummed) header is intact and its payload runs past the end
of the file or ends exactly there with a bad payload checksum, or everything
from the frame on is zero bytes (space a crash allocated but never wrote).
:func:`load` reports such a torn tail and :meth:`RecordFile.open` truncates it
away before appending again.  Anything else (a header whose checksum fails
with data after it, a bad payload followed by more frames) is damage, not a
torn write: it raises :class:`CorruptRecordFile` and nothing is cut.  In
format 1 the length was not covered by any checksum, so one flipped bit in a
middle frame's length made the rest of the file look like a torn tail, and
resuming cut away fsynced entries; format 1 files are still read, but a
format-1 file that looks torn is refused, and one is never resumed.

Durability policy.  Every append is written and flushed to the OS, which
survives a killed process.  ``fsync`` (survives power loss; for appends,
``fdatasync`` where there is one: :func:`sync_data`) costs a disk round
trip, so it is done when asked: the node must pass ``sync=True`` for its *own*
entries before sending them (forgetting a signed entry and signing a
different one after a reboot would be equivocation) and may call
:meth:`RecordFile.sync` at step boundaries; other seats' entries lost to a
power cut are simply fetched again from the peers.  The one exception is an
own entry whose body is *re-derived*, not drawn (:data:`REDERIVED_KINDS`): a
reboot that lost it makes the very same bytes again, so it leaves without an
fsync (:func:`needs_sync`); the next entry that does need one makes it durable too.
The node's record loop appends such an entry without ``sync``, then fsyncs with
:meth:`RecordFile.fsync_written` in a worker thread before it sends anything
(p2p/net/durable.py): the same rule, with the loop free while the disk works.
"""

from __future__ import annotations

import hashlib
import os
import struct
from dataclasses import dataclass
from pathlib import Path

from p2p.errors import CorruptRecordFile, RemoteProtocolError
from p2p.wire import (
    MAX_FRAME_BYTES,
    EndVote,
    EndVotes,
    Genesis,
    Message,
    SeatNotice,
    Signed,
    decode_body,
    encode_body,
)

MAGIC = b"SLAIGA-RECORD-2\n"
MAGIC_V1 = b"SLAIGA-RECORD-1\n"
"""Format 1: no header checksum; read (never resumed), and refused if it looks torn."""
FORMAT_VERSION = 2
CHECKSUM_BYTES = 8
HEADER_CHECK_BYTES = 4
FRAME_HEADER = struct.Struct(">I8s4s")
"""Format 2: length, payload checksum, header checksum."""
FRAME_HEADER_V1 = struct.Struct(">I8s")


def _checksum(payload: bytes) -> bytes:
    return hashlib.blake2b(payload, digest_size=CHECKSUM_BYTES).digest()


def _header_check(length: int, checksum: bytes) -> bytes:
    return hashlib.blake2b(
        length.to_bytes(4, "big") + checksum, digest_size=HEADER_CHECK_BYTES
    ).digest()


def _frame(payload: bytes) -> bytes:
    check = _checksum(payload)
    return FRAME_HEADER.pack(len(payload), check, _header_check(len(payload), check)) + payload


@dataclass(frozen=True, slots=True)
class Loaded:
    """What :func:`load` found: the genesis, the envelopes, and how much torn tail follows."""

    genesis: Genesis
    entries: tuple[Signed, ...]
    good_bytes: int  # length of the valid prefix of the file
    torn_bytes: int  # bytes after it belonging to a torn last frame (0 if none)
    version: int = FORMAT_VERSION
    votes: tuple[EndVote, ...] = ()
    """End votes the file holds (``end_vote`` frames and the closing frame's), in order."""
    closed: bool = False
    """The file ends with a closing ``end_votes`` frame (the table was ended by vote)."""
    notices: tuple[SeatNotice, ...] = ()
    """Seat notices the file holds (a player left or is back; RECORD_FORMAT.md §11)."""


def _frames_v2(path: object, data: bytes) -> tuple[list[bytes], int, int]:
    """Payloads of a format-2 file, the end of the good prefix and the torn bytes."""
    pos = len(MAGIC)
    payloads: list[bytes] = []
    while pos < len(data):
        rest = len(data) - pos
        if rest < FRAME_HEADER.size:
            return payloads, pos, rest  # the header itself was cut short
        length, check, hcheck = FRAME_HEADER.unpack_from(data, pos)
        if hcheck != _header_check(length, check):
            if not any(data[pos:]):
                return payloads, pos, rest  # allocated by a crash, never written
            raise CorruptRecordFile(
                f"{path}: the file is damaged at byte {pos}: the length of the step stored"
                f" there was changed ({rest} bytes from there to the end); damaged, not cut short"
            )
        if not 0 < length <= MAX_FRAME_BYTES:
            raise CorruptRecordFile(
                f"{path}: the file is damaged at byte {pos}: a step cannot be {length} bytes long"
            )
        start = pos + FRAME_HEADER.size
        end = start + length
        if end > len(data):
            return payloads, pos, rest  # an intact header whose payload was never written
        payload = data[start:end]
        if _checksum(payload) != check:
            if end == len(data):
                return payloads, pos, rest  # the last frame, written partly
            raise CorruptRecordFile(_changed(path, pos))
        payloads.append(payload)
        pos = end
    return payloads, pos, 0


def _changed(path: object, pos: int) -> CorruptRecordFile:
    return CorruptRecordFile(
        f"{path}: the file is damaged at byte {pos}: the step stored there was changed,"
        " and more follows it"
    )


def _frames_v1(path: object, data: bytes) -> list[bytes]:
    """Payloads of a format-1 file; one that looks torn is refused (see the docstring)."""
    pos = len(MAGIC_V1)
    payloads: list[bytes] = []
    while pos < len(data):
        if len(data) - pos < FRAME_HEADER_V1.size:
            raise _v1_torn(path, pos)
        length, check = FRAME_HEADER_V1.unpack_from(data, pos)
        end = pos + FRAME_HEADER_V1.size + length
        if end > len(data):
            raise _v1_torn(path, pos)
        payload = data[pos + FRAME_HEADER_V1.size : end]
        if length == 0 or length > MAX_FRAME_BYTES or _checksum(payload) != check:
            if end == len(data):
                raise _v1_torn(path, pos)
            raise CorruptRecordFile(_changed(path, pos))
        payloads.append(payload)
        pos = end
    return payloads


def _v1_torn(path: object, pos: int) -> CorruptRecordFile:
    return CorruptRecordFile(
        f"{path}: this old-format record is damaged or cut short at byte {pos}; the old"
        " format cannot tell a last write cut short from damage in the middle of the file,"
        " so it is not read"
    )


def load(path: str | os.PathLike[str]) -> Loaded:
    """Read a record file; detect (but do not remove) a torn last frame.

    Raises :class:`CorruptRecordFile` for damage anywhere else, before anything
    is changed.
    """
    data = Path(path).read_bytes()
    head = data[: len(MAGIC)]
    torn = 0
    if head == MAGIC:
        version = FORMAT_VERSION
        payloads, good, torn = _frames_v2(path, data)
    elif head == MAGIC_V1:
        version = 1
        payloads, good = _frames_v1(path, data), len(data)
    else:
        raise CorruptRecordFile(f"{path}: this is not a Slaiga record file")
    if not payloads:
        raise CorruptRecordFile(
            f"{path}: the file is cut short before the table's opening step was written"
        )
    entries: list[Signed] = []
    votes: list[EndVote] = []
    notices: list[SeatNotice] = []
    closed = False
    try:
        genesis = decode_body(payloads[0], Genesis)
        for i, p in enumerate(payloads[1:], start=1):
            frame = decode_body(p, Signed if version == 1 else Message)
            if closed:
                raise CorruptRecordFile(
                    f"{path}: the file is damaged: more follows the votes that ended the table"
                )
            if isinstance(frame, Signed):
                entries.append(frame)
            elif isinstance(frame, EndVote):
                votes.append(frame)
            elif isinstance(frame, SeatNotice):
                notices.append(frame)
            elif isinstance(frame, EndVotes):
                votes.extend(frame.votes)
                closed = True
            else:
                raise CorruptRecordFile(
                    f"{path}: the file is damaged: its part {i} is not a step of the game"
                    f" ({frame.TAG})"
                )
    except RemoteProtocolError:
        raise CorruptRecordFile(
            f"{path}: the file is damaged: a step in it cannot be read"
        ) from None
    assert isinstance(genesis, Genesis)
    return Loaded(
        genesis, tuple(entries), good, torn, version, tuple(votes), closed, tuple(notices)
    )


REDERIVED_KINDS = frozenset({"commit", "reveal", "dice", "final"})
"""Kinds of our own entries whose body is a function of what survives a crash and of
the record before it, never of fresh randomness: the seat-order commitment and its
opening (a deterministic Ed25519 signature by our identity key, p2p/table/forming.py),
a dice commitment and its opening (derived from the table secret and the step,
``GameRule._dice_secret``), and the final result (the game's outcome).  Ed25519
signatures are deterministic, so after a crash that lost such an entry from our file
we sign the very same envelope for that step again: no second entry for one step,
hence no equivocation, and it needs no fsync before it is sent.  Shuffles, tokens,
proofs, key shares and decisions draw fresh randomness (or a player's choice), so
they are fsynced before they leave.  tests/p2p/test_durability.py checks that each of
these kinds is made again byte for byte."""


def needs_sync(kind: str) -> bool:
    """Must our own entry of ``kind`` be fsynced before it is sent?"""
    return kind not in REDERIVED_KINDS


def sync_data(fd: int) -> None:
    """Make what was written to the record file durable: ``fdatasync`` where the system has
    it, else ``fsync``.  The file is only ever appended to, and ``fdatasync`` writes the
    data and the metadata needed to read it back (its new length); it leaves out the
    times, which no reader uses, and on this machine's ext4 costs about half of an
    ``fsync`` (issue 19: the fsync of an own entry is on the table's critical path)."""
    getattr(os, "fdatasync", os.fsync)(fd)


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
        if loaded.version != FORMAT_VERSION:
            raise CorruptRecordFile(
                f"{p}: a format-{loaded.version} record cannot be resumed (this version writes"
                f" format {FORMAT_VERSION}); it can still be checked with slaiga verify"
            )
        f = open(p, "r+b")  # noqa: SIM115 - owned by the RecordFile
        if loaded.torn_bytes:
            f.truncate(loaded.good_bytes)
            os.fsync(f.fileno())
        f.seek(loaded.good_bytes)
        return cls(p, f), loaded

    def append(
        self, signed: Signed, sync: bool = False, raw: bytes | None = None, flush: bool = True
    ) -> None:
        """Write and flush one accepted envelope; ``sync=True`` also fsyncs (own entries).

        ``raw``: the envelope's canonical body bytes, if the caller holds them (a received
        message, which :func:`p2p.wire.decode_body` checked is canonical): written as they
        are, instead of encoding the envelope again (the same bytes).  ``flush=False``
        leaves it in the file's buffer for a later :meth:`flush` (or ``sync``), which hands
        every entry appended so far to the OS in order with one write."""
        self._f.write(_frame(raw if raw is not None else encode_body(signed)))
        if sync:
            self._f.flush()
            sync_data(self._f.fileno())
        elif flush:
            self._f.flush()

    def append_vote(self, vote: EndVote) -> None:
        """Write and fsync our own end vote (before it is sent: voting is final)."""
        self._f.write(_frame(encode_body(vote)))
        self.sync()

    def append_notice(self, notice: SeatNotice) -> None:
        """Write and fsync a seat notice (ours before it is sent; others' as they come)."""
        self._f.write(_frame(encode_body(notice)))
        self.sync()

    def close_with_votes(self, votes: EndVotes) -> None:
        """Write and fsync the closing frame: every remaining seat's end vote."""
        self._f.write(_frame(encode_body(votes)))
        self.sync()

    def sync(self) -> None:
        """fsync everything appended so far (call at step boundaries; :func:`sync_data`)."""
        self._f.flush()
        sync_data(self._f.fileno())

    def flush(self) -> None:
        """Hand everything appended so far to the OS (appends already do)."""
        self._f.flush()

    def fsync_written(self) -> None:
        """fsync what was handed to the OS (after :meth:`flush`); safe to call from a
        worker thread while the event loop appends more (which it then does not cover);
        :func:`sync_data`."""
        sync_data(self._f.fileno())

    def close(self) -> None:
        if not self._f.closed:
            self._f.flush()
            self._f.close()

    def __enter__(self) -> RecordFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
