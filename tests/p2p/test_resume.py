"""Crash and resume with real processes: SIGKILL a peer mid-protocol, tear its file, restart it.

The restarted peer reloads its record file (the torn last frame is dropped by
the store), listens on its manifest address again, reconnects and fetches
what it missed; every peer must end with the same record.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from tests.p2p._nethelpers import LOOPBACK

STEPS = 400
KILL_AFTER_BYTES = 20_000
DEADLINE_S = 90


def _free_port() -> int:
    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        return s.getsockname()[1]


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "cli.net", *args]


def test_kill_truncate_and_resume(tmp_path: Path) -> None:
    env = dict(os.environ, SLAIGA_INTERFACE=LOOPBACK)
    port = _free_port()
    common = ["--demo-steps", str(STEPS), "--json", "--linger", "20", "--stall-after-ms", "300"]
    opts = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "env": env, "text": True}
    procs: list[subprocess.Popen] = []
    try:
        opener = subprocess.Popen(
            _cli(
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
            ),
            **opts,
        )
        procs.append(opener)
        time.sleep(0.5)
        joiners = [
            subprocess.Popen(
                _cli(
                    "join",
                    "--peer",
                    f"{LOOPBACK}:{port}",
                    "--state-dir",
                    str(tmp_path / x),
                    *common,
                ),
                **opts,
            )
            for x in ("b", "c")
        ]
        procs.extend(joiners)
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
        restarted = subprocess.Popen(
            _cli("resume", table_id, "--state-dir", str(tmp_path / "b"), *common), **opts
        )
        procs.append(restarted)
        outs = []
        for p in (opener, joiners[1], restarted):
            out, err = p.communicate(timeout=DEADLINE_S)
            assert p.returncode == 0, err
            outs.append(json.loads(out))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    assert len({o["record_head"] for o in outs}) == 1
    assert all(o["record_steps"] == STEPS + 2 and o["finished"] for o in outs)
    # the two that stayed up noticed the silence of the killed seat
    assert any("stalls" in o for o in outs[:2])
