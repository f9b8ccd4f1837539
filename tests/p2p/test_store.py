"""Record files: append before acting, reload to resume, torn last frames dropped."""

from __future__ import annotations

import hashlib
import os
import random
import struct

import pytest

from p2p.errors import CorruptRecordFile
from p2p.record.chain import Record
from p2p.record.store import FRAME_HEADER, FRAME_HEADER_V1, MAGIC, MAGIC_V1, RecordFile, load
from p2p.wire import encode_body
from tests.p2p._tables import Table


def finished_table(steps: int = 30) -> Table:
    t = Table(3, steps=steps, round_every=4)
    t.run(random.Random(5))
    return t


def write_all(path, t: Table, seat: int = 1) -> list:
    signed = t.records[seat].signed_from(1)
    with RecordFile.create(path, t.genesis) as f:
        for i, s in enumerate(signed):
            f.append(s, sync=(i % 10 == 0))
        f.sync()
    return signed


def resume(path, t: Table) -> Record:
    f, loaded = RecordFile.open(path)
    f.close()
    rec = Record(loaded.genesis, t.rule)
    for s in loaded.entries:
        rec.offer(s)
    return rec


def test_round_trip_and_resume(tmp_path):
    t = finished_table()
    path = tmp_path / "table.rec"
    signed = write_all(path, t)
    loaded = load(path)
    assert loaded.genesis == t.genesis
    assert list(loaded.entries) == signed
    assert loaded.torn_bytes == 0
    rec = resume(path, t)
    assert rec.head == t.records[0].head and rec.finished


def test_create_refuses_to_overwrite(tmp_path):
    t = Table(3)
    path = tmp_path / "r"
    RecordFile.create(path, t.genesis).close()
    with pytest.raises(FileExistsError):
        RecordFile.create(path, t.genesis)


def test_every_truncation_point_recovers_a_prefix(tmp_path):
    t = finished_table(steps=8)
    path = tmp_path / "full.rec"
    signed = write_all(path, t)
    data = path.read_bytes()
    genesis_end = len(MAGIC) + FRAME_HEADER.size + len(encode_body(t.genesis))
    cuts = sorted({*range(0, len(data), 13), genesis_end, len(data) - 1, len(data) - 5})
    for cut in cuts:
        p = tmp_path / f"cut{cut}.rec"
        p.write_bytes(data[:cut])
        try:
            loaded = load(p)
        except CorruptRecordFile:
            assert cut < genesis_end  # only when even the genesis frame is torn
            continue
        assert cut >= genesis_end
        n = len(loaded.entries)
        assert list(loaded.entries) == signed[:n]  # never misread
        assert loaded.good_bytes + loaded.torn_bytes == cut
        f, again = RecordFile.open(p)
        # appending after recovery continues cleanly
        for s in signed[n:]:
            f.append(s)
        f.close()
        assert list(load(p).entries) == signed
        assert load(p).torn_bytes == 0


def test_torn_last_frame_with_garbage_payload_is_dropped(tmp_path):
    t = finished_table(steps=5)
    path = tmp_path / "r"
    signed = write_all(path, t)
    data = bytearray(path.read_bytes())
    data[-3] ^= 0xFF  # last frame's bytes never made it to disk intact
    path.write_bytes(bytes(data))
    loaded = load(path)
    assert list(loaded.entries) == signed[:-1] and loaded.torn_bytes > 0
    f, _ = RecordFile.open(path)
    f.close()
    assert load(path).torn_bytes == 0


def test_damage_before_the_last_frame_is_corruption(tmp_path):
    t = finished_table(steps=5)
    path = tmp_path / "r"
    write_all(path, t)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(
        CorruptRecordFile,
        match="damaged at byte \\d+: the step stored there was changed, and more follows",
    ):
        load(path)
    bad_magic = tmp_path / "m"
    bad_magic.write_bytes(b"NOTAREC" + bytes(data[7:]))
    with pytest.raises(CorruptRecordFile, match="this is not a Slaiga record file"):
        load(bad_magic)


def test_crash_mid_protocol_then_resume_and_finish(tmp_path):
    """A peer persists what it accepts, 'crashes', reloads, and catches up by fetching."""
    t = Table(3, steps=40, round_every=5)
    rng = random.Random(11)
    path = tmp_path / "seat2.rec"
    f = RecordFile.create(path, t.genesis)
    # run honestly for a while, seat 2 persisting each accepted entry
    inbox = []
    while t.records[2].step < 20:
        for s in range(3):
            signed = t.act(s)
            if signed is None:
                continue
            for j in range(3):
                if j != s:
                    off = t.records[j].offer(signed)
                    if j == 2:
                        for a in off.accepted:
                            f.append(a.signed)
            if s == 2:
                f.append(signed, sync=True)
            inbox.append(signed)
    f.close()
    data = path.read_bytes()
    path.write_bytes(data[:-7])  # the crash tore the last frame
    rec = resume(path, t)
    assert rec.step <= t.records[2].step
    # catch up from seat 0, then finish the protocol with the resumed record
    for s in t.records[0].signed_from(rec.step):
        rec.offer(s)
    t.records[2] = rec
    t.run(rng)
    assert len({r.head for r in t.records}) == 1
    assert all(r.finished for r in t.records)


def _frame_offsets(data: bytes) -> list[int]:
    pos, out = len(MAGIC), []
    while pos < len(data):
        out.append(pos)
        (length,) = struct.unpack_from(">I", data, pos)
        pos += FRAME_HEADER.size + length
    return out


def test_a_flipped_length_header_mid_file_is_corruption_and_resume_touches_nothing(tmp_path):
    """The reported case: one bit of frame 10's length flipped.  Format 1 took the rest of
    the file for a torn tail (verify said ok, resume cut the file).  Now the header has its
    own checksum: every flip of every length bit, in several frames, is refused."""
    t = finished_table(steps=30)
    path = tmp_path / "r"
    write_all(path, t)
    data = path.read_bytes()
    offsets = _frame_offsets(data)
    assert len(offsets) > 20
    for frame in (1, 10, len(offsets) - 2):
        for bit in range(32):
            bad = bytearray(data)
            pos = offsets[frame] + bit // 8
            bad[pos] ^= 1 << (bit % 8)
            p = tmp_path / f"flip{frame}-{bit}.rec"
            p.write_bytes(bytes(bad))
            with pytest.raises(
                CorruptRecordFile, match="damaged at byte \\d+: the length of the step"
            ):
                load(p)
            with pytest.raises(CorruptRecordFile):
                RecordFile.open(p)
            assert p.read_bytes() == bytes(bad)  # nothing was cut


def test_a_zero_filled_tail_is_torn_but_zeros_before_data_are_not(tmp_path):
    t = finished_table(steps=5)
    path = tmp_path / "r"
    signed = write_all(path, t)
    data = path.read_bytes()
    path.write_bytes(data + bytes(100))  # space a crash allocated but never wrote
    loaded = load(path)
    assert list(loaded.entries) == signed and loaded.torn_bytes == 100
    last = _frame_offsets(data)[-1]
    path.write_bytes(data[:last] + bytes(len(data) - last) + data[last:])
    with pytest.raises(CorruptRecordFile, match="damaged at byte \\d+: the length of the step"):
        load(path)


def test_format_1_files_are_read_but_never_resumed_nor_guessed_torn(tmp_path):
    t = finished_table(steps=5)
    signed = t.records[1].signed_from(1)
    payloads = [encode_body(t.genesis), *(encode_body(s) for s in signed)]
    v1 = MAGIC_V1 + b"".join(
        FRAME_HEADER_V1.pack(len(p), hashlib.blake2b(p, digest_size=8).digest()) + p
        for p in payloads
    )
    path = tmp_path / "old.rec"
    path.write_bytes(v1)
    loaded = load(path)
    assert loaded.version == 1 and list(loaded.entries) == signed and loaded.torn_bytes == 0
    with pytest.raises(CorruptRecordFile, match="format-1 record cannot be resumed"):
        RecordFile.open(path)
    path.write_bytes(v1[:-3])
    with pytest.raises(
        CorruptRecordFile, match="old format cannot tell a last write cut short from damage"
    ):
        load(path)
    assert path.read_bytes() == v1[:-3]


@pytest.mark.skipif(not hasattr(os, "fdatasync"), reason="the system has no fdatasync")
def test_appended_entries_are_made_durable_with_fdatasync(tmp_path, monkeypatch):
    """The record file is only appended to: an own entry's sync (``append(sync=True)``,
    ``sync``, ``fsync_written``) is an ``fdatasync``, which writes the data and the length
    needed to read it back; the file is created with ``fsync`` of it and its folder."""
    calls: list[tuple[str, int]] = []
    real_fsync, real_datasync = os.fsync, os.fdatasync

    def spy(name, real):  # type: ignore[no-untyped-def]
        def call(fd: int) -> None:
            calls.append((name, os.fstat(fd).st_size))
            real(fd)

        return call

    monkeypatch.setattr(os, "fsync", spy("fsync", real_fsync))
    monkeypatch.setattr(os, "fdatasync", spy("fdatasync", real_datasync))
    t = finished_table(steps=8)
    signed = t.records[1].signed_from(1)
    path = tmp_path / "table.rec"
    with RecordFile.create(path, t.genesis) as f:
        assert [name for name, _ in calls] == ["fsync", "fsync"]  # the file, its folder
        del calls[:]
        f.append(signed[0], sync=True)
        f.append(signed[1], flush=True)
        f.fsync_written()
        f.append(signed[2])
        f.sync()
    size = path.stat().st_size
    assert [name for name, _ in calls] == ["fdatasync"] * 3
    assert calls[-1][1] == size  # the last one covered every byte written
    assert list(load(path).entries) == signed[:3]
