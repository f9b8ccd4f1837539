"""CI run of ``slaiga bench fuzz`` (bench/fuzz.py) at a small count, as a real subprocess.

Random, mutated, truncated and byte-at-a-time frames go to the frame decoder,
the record and a live node on loopback; no input may raise anything but the
remote-protocol error (expected: 0 unexpected), and the node must survive and
finish a table afterwards.  The full run (``--frames 100000``) is the bench.
"""

from __future__ import annotations

import json
import subprocess
import sys

from tests.p2p._procs import loopback_env

FRAMES = 4000
LIVE = 80
RUN_TIMEOUT_S = 300


def test_fuzz_finds_nothing_and_the_node_survives() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "cli", "bench", "fuzz", "--json"]
        + ["--frames", str(FRAMES), "--live", str(LIVE), "--seed", "11"],
        capture_output=True,
        text=True,
        env=loopback_env(),
        timeout=RUN_TIMEOUT_S,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = json.loads(proc.stdout)
    assert out["unexpected"] == 0, out
    assert out["decoder"]["inputs"] == FRAMES and out["decoder"]["byte_at_a_time"] > 0
    assert out["decoder"]["refused"] > 0 and out["decoder"]["accepted"] > 0
    assert out["record"]["inputs"] > 0 and out["record"]["unexpected"] == 0
    live = out["live_node"]
    assert live["inputs"] == LIVE and live["node_alive"] and live["table_finished"]
    assert out["frames"] >= FRAMES + LIVE
