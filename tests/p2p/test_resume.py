"""Crash and resume with real processes: SIGKILL a peer mid-protocol, tear its file, restart it.

The restarted peer reloads its record file (the torn last frame is dropped by
the store), listens on its manifest address again, reconnects and fetches
what it missed; every peer must end with the same record.
"""

from __future__ import annotations

import socket
import time
from pathlib import Path

from tests.p2p._nethelpers import LOOPBACK
from tests.p2p._procs import CliPeers

STEPS = 400
KILL_AFTER_BYTES = 20_000
DEADLINE_S = 90


def _free_port() -> int:
    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        return s.getsockname()[1]


def _open_table(peers: CliPeers, tmp_path: Path, port: int, common: list[str]):
    """Seat 'a' opens a 3-seat table on ``port`` (no zeroconf) and is given time to listen."""
    opener = peers.start(
        "open",
        "slaiga",
        "--seats",
        "3",
        "--no-announce",
        "--port",
        str(port),
        "--state-dir",
        str(tmp_path / "a"),
        *common,
    )
    time.sleep(0.5)
    return opener


def test_kill_truncate_and_resume(tmp_path: Path) -> None:
    port = _free_port()
    common = ["--demo-steps", str(STEPS), "--json", "--linger", "20", "--stall-after-ms", "300"]
    with CliPeers() as peers:
        opener = _open_table(peers, tmp_path, port, common)
        joiners = [
            peers.start(
                "join", "--peer", f"{LOOPBACK}:{port}", "--state-dir", str(tmp_path / x), *common
            )
            for x in ("b", "c")
        ]
        victim_dir = tmp_path / "b" / "tables"
        deadline = time.monotonic() + DEADLINE_S
        record: Path | None = None
        while time.monotonic() < deadline:
            files = list(victim_dir.glob("*.rec")) if victim_dir.exists() else []
            if files and files[0].stat().st_size > KILL_AFTER_BYTES:
                record = files[0]
                break
            time.sleep(0.005)
        assert record is not None, "the victim never got far enough"
        joiners[0].kill()
        joiners[0].wait()
        size = record.stat().st_size
        with open(record, "r+b") as f:  # tear the last frame
            f.truncate(size - 5)
        table_id = record.stem
        time.sleep(1.0)  # long enough for the others to mark the seat stalled
        restarted = peers.start("resume", table_id, "--state-dir", str(tmp_path / "b"), *common)
        outs = peers.results([opener, joiners[1], restarted], timeout=DEADLINE_S)
    assert len({o["record_head"] for o in outs}) == 1
    assert all(o["record_steps"] == STEPS + 2 and o["finished"] for o in outs)
    # the two that stayed up noticed the silence of the killed seat
    assert any("stalls" in o for o in outs[:2])


def test_crash_between_commit_and_reveal_reveals_the_same_commitment(tmp_path: Path) -> None:
    """A seat killed after its seat-order commitment but before its opening comes back,
    re-derives the same opening from its identity key, and the table forms with no cheat."""
    from p2p.errors import UnreadableRecord
    from p2p.record.verify import verify_record_file

    port = _free_port()
    common = ["--demo-steps", "20", "--json", "--linger", "20", "--stall-after-ms", "300"]
    with CliPeers() as peers:
        opener = _open_table(peers, tmp_path, port, common)
        victim = peers.start(
            "join",
            "--peer",
            f"{LOOPBACK}:{port}",
            "--state-dir",
            str(tmp_path / "b"),
            "--demo-pace-ms",
            "1500",
            *common,
        )
        other = peers.start(
            "join", "--peer", f"{LOOPBACK}:{port}", "--state-dir", str(tmp_path / "c"), *common
        )
        tables = tmp_path / "b" / "tables"
        deadline = time.monotonic() + DEADLINE_S
        record: Path | None = None
        while record is None and time.monotonic() < deadline:
            for path in tables.glob("*.rec") if tables.exists() else ():
                try:
                    steps = verify_record_file(path).steps
                except UnreadableRecord:  # caught before the peer wrote the file's header
                    continue
                if steps >= 1:  # every commitment is in, ours too
                    record = path
            time.sleep(0.01)
        assert record is not None, "the commit round never completed"
        victim.kill()
        victim.wait()
        before = verify_record_file(record)
        assert before.ok and not before.seat_order_known  # killed before its opening
        restarted = peers.start("resume", record.stem, "--state-dir", str(tmp_path / "b"), *common)
        outs = peers.results([opener, other, restarted], timeout=DEADLINE_S)
    assert len({o["record_head"] for o in outs}) == 1
    assert all(o["finished"] and "cheats" not in o for o in outs)
    assert verify_record_file(record).ok
