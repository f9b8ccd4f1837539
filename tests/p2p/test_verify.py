"""Offline verification of real record files (p2p.record.verify, ``slaiga verify``).

The files come from a real 3-seat table run over loopback TCP in one Trio run;
each test copies one and damages it the way a cheat or a crash would, then
checks the specific verdict: what failed, at which step, and which seat (if
any) is proven at fault.  The command line runs as a real subprocess.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import struct
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import msgpack
import pytest
import trio

from crypto.identity import IdentityKey
from p2p.errors import UnreadableRecord
from p2p.net import netguard
from p2p.net.state import load_identity
from p2p.record.chain import entry_signing_input
from p2p.record.store import FRAME_HEADER, MAGIC, _frame, load
from p2p.record.verify import CORRUPT, GAP, VerifyReport, verify_record_file
from p2p.table.demo import Count
from p2p.table.forming import Commit
from p2p.table.results import TableResult
from p2p.wire import Body, Entry, Signed, decode_body, encode_body
from tests.p2p._nethelpers import no_leaks
from tests.p2p._tables import run_table

TIMEOUT_S = 60
SEATS = 3
DEMO_STEPS = 25
ROUND_EVERY = 10  # the demo default, which run_table leaves alone
TOTAL_STEPS = 2 + DEMO_STEPS
REPO = Path(__file__).resolve().parents[2]
CLI_TIMEOUT_S = 60


@dataclass(frozen=True)
class Played:
    results: list[TableResult]
    keys: list[IdentityKey]  # keys[slot]

    @property
    def file(self) -> Path:
        path = self.results[0].record_file
        assert path is not None
        return path


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Played]:
    """One real table over loopback, shared by every test (each damages its own copy)."""
    tmp = tmp_path_factory.mktemp("table")

    async def play() -> list[TableResult]:
        with trio.fail_after(TIMEOUT_S):
            async with no_leaks():
                return await run_table(tmp, SEATS, steps=DEMO_STEPS)

    seen = len(netguard.violations)
    netguard.arm()
    try:
        results = trio.run(play)
    finally:
        netguard.disarm()
    assert not netguard.violations[seen:], "the table tried to leave loopback"
    # keys by slot (joiners take their slots in arrival order, not in p1, p2 order)
    by_public = {k.public: k for k in (load_identity(tmp / f"p{i}")[0] for i in range(SEATS))}
    keys = [by_public[m.identity] for m in results[0].manifest.seats]
    yield Played(results, keys)


# -- file surgery ---------------------------------------------------------------


def read_payloads(path: Path) -> list[bytes]:
    """Every frame's payload: the genesis first, then the signed envelopes."""
    data, pos, out = path.read_bytes(), len(MAGIC), []
    header = FRAME_HEADER.size
    while pos < len(data):
        (length,) = struct.unpack_from(">I", data, pos)
        out.append(data[pos + header : pos + header + length])
        pos += header + length
    return out


def write_payloads(path: Path, payloads: list[bytes]) -> None:
    path.write_bytes(MAGIC + b"".join(_frame(p) for p in payloads))


def envelopes(path: Path) -> list[tuple[Signed, Entry]]:
    out = []
    for signed in load(path).entries:
        entry = decode_body(signed.entry, Entry)
        assert isinstance(entry, Entry)
        out.append((signed, entry))
    return out


def craft(entry: Entry, key: IdentityKey, **changes: object) -> bytes:
    """A new signed envelope payload: ``entry`` with ``changes``, signed with ``key``."""
    fields = {
        "table_id": entry.table_id,
        "seat": entry.seat,
        "step": entry.step,
        "prev": entry.prev,
        "body": entry.body,
    }
    fields.update(changes)
    raw = encode_body(Entry(**fields))  # type: ignore[arg-type]
    return encode_body(Signed(raw, key.sign(entry_signing_input(raw))))


def copy(played: Played, tmp_path: Path) -> Path:
    dest = tmp_path / "record.rec"
    shutil.copyfile(played.file, dest)
    return dest


def find(path: Path, kind: str, nth: int = 0) -> tuple[int, Signed, Entry]:
    """The ``nth`` entry of ``kind``: its frame index (1 = first envelope), envelope and entry."""
    hits = [(i, *env) for i, env in enumerate(envelopes(path), start=1) if env[1].kind == kind]
    return hits[nth]


def remove_entry(path: Path, kind: str, nth: int) -> tuple[Entry, VerifyReport]:
    """Delete the ``nth`` entry of ``kind`` from the record at ``path``; returns the removed
    entry and the verdict on what is left."""
    payloads = read_payloads(path)
    i, _, entry = find(path, kind, nth)
    del payloads[i]
    write_payloads(path, payloads)
    return entry, verify_record_file(path)


def replace_frame(path: Path, i: int, payload: bytes) -> VerifyReport:
    """Put ``payload`` in frame ``i`` of the record at ``path`` (checksum made to match) and
    verify the result."""
    payloads = read_payloads(path)
    payloads[i] = payload
    write_payloads(path, payloads)
    return verify_record_file(path)


def failed(report: VerifyReport, kind: str) -> None:
    assert not report.ok, "the damaged record verified"
    assert report.failure is not None and report.failure.kind == kind, report.failure


# -- the honest record ------------------------------------------------------------


def test_every_honest_copy_verifies_with_the_peers_head(played: Played) -> None:
    heads = set()
    for r in played.results:
        assert r.record_file is not None and r.record is not None
        report = verify_record_file(r.record_file)
        assert report.ok, report.failure
        assert report.finished and report.steps == TOTAL_STEPS
        assert report.head == r.record.head.hex()
        assert report.table_id == r.manifest.table_id.hex()
        assert report.game == r.manifest.game == "slave"
        assert report.options == dict(r.manifest.options)
        assert report.protocol == {"kind": "demo", "steps": DEMO_STEPS, "round_every": ROUND_EVERY}
        assert report.seat_order_known
        assert tuple(s.slot for s in report.seats) == r.seat_order
        assert [s.position for s in report.seats] == [1, 2, 3]
        summary = r.summary()["seats"]
        assert [(s.name, s.fingerprint) for s in report.seats] == [
            (s["name"], s["fingerprint"]) for s in summary
        ]
        assert report.torn_bytes == 0 and report.duplicates == 0 and report.waiting_on == ()
        heads.add(report.head)
    assert len(heads) == 1


# -- forged, removed, extra and conflicting entries ----------------------------------


def test_flipped_signature_byte_is_a_forged_signature(played: Played, tmp_path: Path) -> None:
    path = copy(played, tmp_path)
    i, signed, entry = find(path, "count", 5)
    sig = bytearray(signed.signature)
    sig[17] ^= 0x40
    # checksums made to match: only the signature is wrong
    report = replace_frame(path, i, encode_body(Signed(signed.entry, bytes(sig))))
    failed(report, "ForgedSignature")
    f = report.failure
    assert f is not None
    assert (f.seat, f.step) == (entry.seat, entry.step)
    assert f.culprit is None  # no key verifies it: the file is forged, no seat is convicted
    assert f.evidence[0].frame == i and f.evidence[0].signature == bytes(sig)
    assert report.steps == entry.step - 1  # everything before it checked out


def test_a_flipped_length_header_is_a_corrupt_file_not_a_short_record(
    played: Played, tmp_path: Path
) -> None:
    """Frame 10's length with one high bit flipped: format 1 read the rest of the file as a
    torn tail and reported ``ok, steps: 3``."""
    path = copy(played, tmp_path)
    data = bytearray(path.read_bytes())
    pos = len(MAGIC)
    for _ in range(10):
        (length,) = struct.unpack_from(">I", data, pos)
        pos += FRAME_HEADER.size + length
    data[pos + 1] ^= 0x10
    path.write_bytes(bytes(data))
    report = verify_record_file(path)
    failed(report, CORRUPT)
    assert report.failure is not None and "damaged at byte" in report.failure.message
    assert "the length of the step stored there was changed" in report.failure.message


def test_a_signed_entry_that_does_not_decode_convicts_its_signer(
    played: Played, tmp_path: Path
) -> None:
    path = copy(played, tmp_path)
    i, signed, entry = find(path, "count", 3)
    raw = msgpack.packb(
        [
            "entry",
            {
                "table_id": entry.table_id,
                "seat": entry.seat,
                "step": entry.step,
                "prev": entry.prev,
                "body": ["count", {"value": -1}],
            },
        ],
        use_bin_type=True,
    )
    sig = played.keys[entry.seat].sign(entry_signing_input(raw))
    report = replace_frame(path, i, encode_body(Signed(raw, sig)))
    failed(report, "MalformedEntry")
    f = report.failure
    assert f is not None and f.culprit == entry.seat and f.seat == entry.seat
    assert f.evidence[0].entry == raw and f.evidence[0].signature == sig
    assert report.to_json()["culprit_name"] is not None
    # the same bytes under a signature no seat's key verifies: the file, not a seat
    outsider = IdentityKey.generate().sign(entry_signing_input(raw))
    report = replace_frame(path, i, encode_body(Signed(raw, outsider)))
    failed(report, "MalformedEntry")
    assert report.failure is not None and report.failure.culprit is None


def test_flipped_byte_without_a_matching_checksum_is_a_corrupt_file(
    played: Played, tmp_path: Path
) -> None:
    path = copy(played, tmp_path)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01  # inside some middle frame: its checksum now fails
    path.write_bytes(bytes(data))
    report = verify_record_file(path)
    failed(report, CORRUPT)
    assert (
        report.failure is not None
        and "the step stored there was changed, and more follows it" in (report.failure.message)
    )


def test_entry_removed_from_the_middle_is_a_gap(played: Played, tmp_path: Path) -> None:
    entry, report = remove_entry(copy(played, tmp_path), "count", 7)
    failed(report, GAP)
    assert report.failure is not None and report.failure.step == entry.step
    assert report.failure.culprit is None
    assert report.waiting_on == (entry.seat,)
    assert report.steps == entry.step - 1


def test_echo_removed_from_a_round_is_a_gap_naming_the_silent_seat(
    played: Played, tmp_path: Path
) -> None:
    entry, report = remove_entry(copy(played, tmp_path), "echo", 1)
    failed(report, GAP)
    assert report.failure is not None and report.failure.step == entry.step
    assert report.waiting_on == (entry.seat,)
    assert report.pending == SEATS - 1  # the other responders' entries of that round
    # the silent seat by its player's name, not its slot; steps, not entries
    name = played.results[0].manifest.seats[entry.seat].name
    message = report.failure.message
    assert f"nothing from {name})" in message and "signatures of later steps" in message
    assert "slot" not in message and "entr" not in message and "seat(s)" not in message


def test_last_entry_removed_is_a_valid_unfinished_record(played: Played, tmp_path: Path) -> None:
    path = copy(played, tmp_path)
    payloads = read_payloads(path)
    _, last = envelopes(path)[-1]
    write_payloads(path, payloads[:-1])
    report = verify_record_file(path)
    assert report.ok and not report.finished
    assert last.seat in report.waiting_on


def test_forged_extra_entry_is_caught(played: Played, tmp_path: Path) -> None:
    path = copy(played, tmp_path)
    payloads = read_payloads(path)
    _, last = envelopes(path)[-1]
    intruder = IdentityKey.generate()  # not a key of this table
    payloads.append(craft(last, intruder, step=last.step + 1, body=Count(DEMO_STEPS)))
    write_payloads(path, payloads)
    report = verify_record_file(path)
    failed(report, "ForgedSignature")
    f = report.failure
    assert f is not None and (f.seat, f.step, f.culprit) == (last.seat, last.step + 1, None)


def test_extra_entry_signed_by_its_seat_after_the_end_is_out_of_turn(
    played: Played, tmp_path: Path
) -> None:
    path = copy(played, tmp_path)
    payloads = read_payloads(path)
    _, last = envelopes(path)[-1]
    seat = (last.seat + 1) % SEATS
    head = bytes.fromhex(
        verify_record_file(path).head
    )  # chained to the end: only the turn is wrong
    payloads.append(
        craft(last, played.keys[seat], seat=seat, step=last.step + 1, prev=head, body=Count(10**6))
    )
    write_payloads(path, payloads)
    report = verify_record_file(path)
    failed(report, "OutOfTurn")
    f = report.failure
    assert f is not None and (f.culprit, f.seat, f.step) == (seat, seat, last.step + 1)
    assert report.finished and report.steps == TOTAL_STEPS


def test_entry_signed_with_another_seats_key_is_impersonation(
    played: Played, tmp_path: Path
) -> None:
    path = copy(played, tmp_path)
    i, _, entry = find(path, "count", 3)
    signer = (entry.seat + 1) % SEATS
    forged = craft(entry, played.keys[signer])  # same entry, the wrong seat's key
    report = replace_frame(path, i, forged)
    failed(report, "Impersonation")
    f = report.failure
    assert f is not None and (f.culprit, f.seat, f.step) == (signer, entry.seat, entry.step)


@pytest.mark.parametrize("impersonated", [False, True])
def test_an_entry_spliced_from_another_table_names_no_one(
    played: Played, tmp_path: Path, impersonated: bool
) -> None:
    """A seat's entry signed at another table (same keys, another table id) is no
    evidence about this one: the file is reported as spliced, with no culprit, even when
    the entry claims another seat than its signer's."""
    path = copy(played, tmp_path)
    i, _, entry = find(path, "count", 3)
    signer = (entry.seat + 1) % SEATS if impersonated else entry.seat
    foreign = craft(entry, played.keys[signer], table_id=bytes(16))
    report = replace_frame(path, i, foreign)
    failed(report, "ForeignEntry")
    f = report.failure
    assert f is not None and f.culprit is None
    assert "another table" in f.message


def test_entry_chained_to_an_unknown_hash_is_a_broken_chain(played: Played, tmp_path: Path) -> None:
    path = copy(played, tmp_path)
    i, _, entry = find(path, "count", 4)
    report = replace_frame(
        path, i, craft(entry, played.keys[entry.seat], prev=hashlib.sha256(b"elsewhere").digest())
    )
    failed(report, "BrokenChain")
    f = report.failure
    # the file does not chain: whose entry was changed cannot be told (see below)
    assert f is not None and f.culprit is None and (f.seat, f.step) == (entry.seat, entry.step)


def test_a_file_that_does_not_chain_names_nobody(played: Played, tmp_path: Path) -> None:
    """An earlier entry replaced by another entry its own signer signed (a fresh
    commitment: valid at its step) makes the next step's entries chain to a hash the
    file no longer holds.  The first of them is an honest seat's, so naming its seat
    would frame it: a broken chain in a file is a file that does not chain, with no
    culprit (live peers never convict on a broken chain: they fetch and find the
    equivocation, if any)."""
    path = copy(played, tmp_path)
    steps = {}
    for i, (_, entry) in enumerate(envelopes(path), start=1):
        if entry.kind == "commit":
            steps[entry.seat] = (i, entry)
    victim = max(steps)  # not the first seat of the next step
    i, entry = steps[victim]
    fresh = Commit(hashlib.sha256(b"another value").digest())
    report = replace_frame(path, i, craft(entry, played.keys[victim], body=fresh))
    failed(report, "BrokenChain")
    f = report.failure
    assert f is not None and f.culprit is None, f
    assert f.step == entry.step + 1 and f.seat != victim, f
    assert "does not chain" in f.message
    assert report.to_json()["culprit_name"] is None


def test_a_second_version_on_another_chain_is_equivocation(played: Played, tmp_path: Path) -> None:
    """Found by bench adversary: a seat's entry for a step, and kept as evidence a second
    version of it chaining to an unknown hash.  Live peers convicted the seat of
    equivocation; verify, meeting the second version after the first, saw only a broken
    chain.  Two signed entries of one seat for one step are equivocation whichever
    chain each names."""
    for chaining_first in (True, False):
        path = copy(played, tmp_path)
        i, signed, entry = find(path, "count", 4)
        key = played.keys[entry.seat]
        other = craft(entry, key, prev=hashlib.sha256(b"elsewhere").digest())
        payloads = read_payloads(path)
        if chaining_first:
            payloads.append(other)
        else:  # the version that chains is kept after the one that does not
            real = payloads.pop(i)
            payloads += [other, real]
        write_payloads(path, payloads)
        report = verify_record_file(path)
        failed(report, "Equivocation")
        f = report.failure
        assert f is not None and (f.culprit, f.step) == (entry.seat, entry.step), f
        assert {e.entry for e in f.evidence} == {signed.entry, decode_body(other, Signed).entry}


def test_entry_chained_to_an_older_step_is_a_replay(played: Played, tmp_path: Path) -> None:
    path = copy(played, tmp_path)
    i, _, entry = find(path, "count", 8)
    _, _, early = find(path, "count", 0)  # chains to hash(2)
    report = replace_frame(path, i, craft(entry, played.keys[entry.seat], prev=early.prev))
    failed(report, "Replay")
    f = report.failure
    assert f is not None and (f.culprit, f.step) == (entry.seat, entry.step)
    assert f.message.endswith(
        f"sent an old step again at step {entry.step}: it follows step 2,"
        f" not step {entry.step - 1} (kind: Replay)"
    ), f.message


def test_wrong_count_signed_by_the_actor_is_an_invalid_move(played: Played, tmp_path: Path) -> None:
    path = copy(played, tmp_path)
    i, _, entry = find(path, "count", 2)
    assert isinstance(entry.body, Count)
    report = replace_frame(
        path, i, craft(entry, played.keys[entry.seat], body=Count(entry.body.value + 1))
    )
    failed(report, "InvalidMove")
    f = report.failure
    assert f is not None and (f.culprit, f.step) == (entry.seat, entry.step)


def _splice_conflict(played: Played, path: Path, kind: str, nth: int, body: Body, before: bool):
    payloads = read_payloads(path)
    i, honest, entry = find(path, kind, nth)
    conflict = craft(entry, played.keys[entry.seat], body=body)
    payloads.insert(i if before else i + 1, conflict)
    write_payloads(path, payloads)
    return honest, entry, decode_body(conflict, Signed)


@pytest.mark.parametrize("before", [False, True], ids=["after", "before"])
def test_two_commitments_from_one_seat_are_equivocation_with_both_envelopes(
    played: Played, tmp_path: Path, before: bool
) -> None:
    path = copy(played, tmp_path)
    honest, entry, conflict = _splice_conflict(
        played, path, "commit", 1, Commit(hashlib.sha256(b"another mind").digest()), before
    )
    report = verify_record_file(path)
    failed(report, "Equivocation")
    f = report.failure
    assert f is not None and (f.culprit, f.seat, f.step) == (entry.seat, entry.seat, 1)
    got = {(e.entry, e.signature) for e in f.evidence}
    assert got == {(honest.entry, honest.signature), (conflict.entry, conflict.signature)}
    assert sorted(e.frame for e in f.evidence) == [2, 3]  # both frames named, both in the file


def test_second_count_for_a_completed_step_is_equivocation(played: Played, tmp_path: Path) -> None:
    path = copy(played, tmp_path)
    honest, entry, conflict = _splice_conflict(played, path, "count", 6, Count(999), False)
    report = verify_record_file(path)
    failed(report, "Equivocation")
    f = report.failure
    assert f is not None and (f.culprit, f.step) == (entry.seat, entry.step)
    assert [e.entry for e in f.evidence] == [honest.entry, conflict.entry]


def test_duplicate_frames_are_ignored(played: Played, tmp_path: Path) -> None:
    path = copy(played, tmp_path)
    payloads = read_payloads(path)
    write_payloads(path, payloads + payloads[5:8])
    report = verify_record_file(path)
    assert report.ok and report.finished and report.duplicates == 3


# -- crashes, damaged files, unreadable input -----------------------------------------


def test_torn_tail_is_dropped_and_reported(played: Played, tmp_path: Path) -> None:
    path = copy(played, tmp_path)
    whole = path.read_bytes()
    last = read_payloads(path)[-1]
    path.write_bytes(whole[: len(whole) - len(last) // 2])  # the last frame half written
    report = verify_record_file(path)
    assert report.ok, report.failure
    assert report.torn_bytes == FRAME_HEADER.size + len(last) - len(last) // 2
    assert not report.finished and report.steps == TOTAL_STEPS - 1
    # a torn frame *after* a complete record: still the same head
    path.write_bytes(whole + _frame(last)[:7])
    full = verify_record_file(path)
    assert full.ok and full.finished and full.torn_bytes == 7
    assert full.head == played.results[0].record.head.hex()  # type: ignore[union-attr]
    proc = _cli(path)  # said in player words: no frame, entry or head
    assert proc.returncode == 0 and "the last signature was only half written" in proc.stdout
    for word in ("frame", "entr", "head", "slot"):
        assert word not in proc.stdout.lower(), (word, proc.stdout)


def test_forged_manifest_signature_names_the_seat(played: Played, tmp_path: Path) -> None:
    path = copy(played, tmp_path)
    payloads = read_payloads(path)
    genesis = load(path).genesis
    sigs = list(genesis.signatures)
    sigs[2] = bytes([sigs[2][0] ^ 1]) + sigs[2][1:]
    payloads[0] = encode_body(type(genesis)(genesis.manifest, tuple(sigs)))
    write_payloads(path, payloads)
    report = verify_record_file(path)
    failed(report, "ForgedSignature")
    f = report.failure
    assert f is not None and (f.seat, f.step, f.culprit) == (2, 0, None)
    assert report.table_id == played.results[0].manifest.table_id.hex()


def test_unreadable_inputs_raise(tmp_path: Path) -> None:
    with pytest.raises(UnreadableRecord, match="cannot read"):
        verify_record_file(tmp_path / "missing.rec")
    (tmp_path / "notes.txt").write_text("hello, this is not a record\n")
    with pytest.raises(UnreadableRecord, match="this is not a Slaiga record file"):
        verify_record_file(tmp_path / "notes.txt")
    (tmp_path / "empty.rec").write_bytes(MAGIC)
    failed(verify_record_file(tmp_path / "empty.rec"), CORRUPT)


# -- the command line, as a real subprocess -------------------------------------------


def _cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cli.verify", "verify", *map(str, args)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT_S,
        check=False,
    )


def test_cli_json_for_an_honest_record(played: Played) -> None:
    proc = _cli(played.file, "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    r = played.results[0]
    assert out["ok"] is True and out["error"] is None and out["culprit"] is None
    assert out["table_id"] == r.manifest.table_id.hex() and out["game"] == "slave"
    assert out["steps"] == TOTAL_STEPS and out["finished"] is True
    assert out["head"] == r.record.head.hex()  # type: ignore[union-attr]
    assert [s["fingerprint"] for s in out["seats"]] == [
        s["fingerprint"] for s in r.summary()["seats"]
    ]


def test_cli_human_output(played: Played, tmp_path: Path) -> None:
    proc = _cli(played.file)
    assert proc.returncode == 0, proc.stderr
    assert f"record verified: {TOTAL_STEPS} steps, the last one's hash " in proc.stdout
    assert played.results[0].record.head.hex() in proc.stdout  # type: ignore[union-attr]
    outputs = [proc.stdout]
    path = copy(played, tmp_path)
    _, entry, _ = _splice_conflict(played, path, "count", 6, Count(999), False)
    proc = _cli(path)
    assert proc.returncode == 4  # a proven cheat: the exit status replay and a live table give
    assert "FAILS verification" in proc.stdout and "equivocation" in proc.stdout
    # named as in the seat table above it: seat counted from 1, and name
    seat = played.results[0].seat_order.index(entry.seat) + 1
    name = played.results[0].manifest.seats[entry.seat].name
    assert f"culprit: seat {seat} ({name})" in proc.stdout
    assert f"equivocation: {name} signed two different versions of step {entry.step}" in (
        proc.stdout
    )
    assert "evidence: the " in proc.stdout and " signature in the file, " in proc.stdout
    outputs.append(proc.stdout)
    # player words on every line a player reads: no slots, no head, one word for steps
    for out in outputs:
        lower = out.lower()
        for word in ("slot", "head", "entry", "entries", "frame"):
            assert word not in lower, (word, out)


def test_cli_json_names_the_equivocator(played: Played, tmp_path: Path) -> None:
    path = copy(played, tmp_path)
    honest, entry, conflict = _splice_conflict(played, path, "count", 6, Count(999), False)
    proc = _cli(path, "--json")
    assert proc.returncode == 4, proc.stderr  # a proven cheat, as replay and a live table say
    out = json.loads(proc.stdout)
    assert out["ok"] is False and out["error_kind"] == "Equivocation"
    assert out["culprit"] == entry.seat and out["step"] == entry.step
    assert out["culprit_name"] == played.results[0].manifest.seats[entry.seat].name
    assert {e["signature"] for e in out["evidence"]} == {
        honest.signature.hex(),
        conflict.signature.hex(),
    }


def test_cli_exit_2_for_unreadable_input_and_usage(tmp_path: Path) -> None:
    proc = _cli(tmp_path / "missing.rec", "--json")
    assert proc.returncode == 2
    out = json.loads(proc.stdout)
    assert out["ok"] is False and "cannot read" in out["error"]
    proc = subprocess.run(
        [sys.executable, "-m", "cli.verify", "verify"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT_S,
        check=False,
    )
    assert proc.returncode == 2 and "RECORD-FILE" in proc.stderr


def test_slaiga_verify_through_the_main_command(played: Played) -> None:
    """``python -m cli verify``: the real ``slaiga`` entry point."""
    proc = subprocess.run(
        [sys.executable, "-m", "cli", "verify", str(played.file), "--json"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT_S,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["steps"] == TOTAL_STEPS
