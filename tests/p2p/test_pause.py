"""A peer stopped (SIGSTOP) mid-table for longer than the stall limit names no one.

Three ``cli.net`` processes on loopback run the demo protocol; one joiner is
stopped for longer than both the stall limit and the keepalive's dead time,
then continued.  Meanwhile the others rightly see it silent.  The stopped
peer must notice that it was away (its heartbeat came late), count that time
against no seat, re-fetch, and carry on: it reports no stall and names no
seat abandoned, and every peer finishes with the same record.  A silence
monitor unit test pins the ``pause`` rule itself.
"""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest

from p2p.errors import TableAbandoned
from p2p.silence import SilenceMonitor, Stalled
from tests.p2p._nethelpers import LOOPBACK
from tests.p2p._procs import CliPeers
from tests.p2p.test_resume import _free_port, _open_table

STEPS = 300
PACE_MS = 10
STALL_AFTER_MS = 1000
MAX_WAIT_MS = 30_000
PAUSE_S = 7.0
"""Longer than the stall limit and than the keepalive's dead time (5 s): links drop too."""
STOP_AFTER_BYTES = 8_000
DEADLINE_S = 120


def _events(stderr: str) -> list[dict]:
    out = []
    for line in stderr.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict) and "event" in event:
            out.append(event)
    return out


def test_a_stopped_peer_blames_no_one_and_the_table_goes_on(tmp_path: Path) -> None:
    port = _free_port()
    common = [
        "--demo-steps",
        str(STEPS),
        "--demo-pace-ms",
        str(PACE_MS),
        "--json",
        "--events",
        "--linger",
        "20",
        "--stall-after-ms",
        str(STALL_AFTER_MS),
        "--max-wait-ms",
        str(MAX_WAIT_MS),
    ]
    with CliPeers() as peers:
        opener = _open_table(peers, tmp_path, port, common)
        joiners = [
            peers.start(
                "join", "--peer", f"{LOOPBACK}:{port}", "--state-dir", str(tmp_path / x), *common
            )
            for x in ("b", "c")
        ]
        victim = joiners[0]
        tables = tmp_path / "b" / "tables"
        deadline = time.monotonic() + DEADLINE_S
        while time.monotonic() < deadline:
            files = list(tables.glob("*.rec")) if tables.exists() else []
            if files and files[0].stat().st_size > STOP_AFTER_BYTES:
                break
            time.sleep(0.005)
        else:
            pytest.fail("the table never got under way")
        os.kill(victim.pid, signal.SIGSTOP)
        time.sleep(PAUSE_S)
        os.kill(victim.pid, signal.SIGCONT)
        outs, logs = [], []
        for p in (opener, *joiners):
            out, err = p.communicate(timeout=DEADLINE_S)
            assert p.returncode == 0, err
            outs.append(json.loads(out))
            logs.append(_events(err))
    victim_out, victim_log = outs[1], logs[1]
    kinds = [e["event"] for e in victim_log]
    assert "away" in kinds, kinds  # it noticed that it had been stopped
    assert "stalled" not in kinds and "abandoned" not in kinds, victim_log
    assert not victim_out.get("stalls") and not victim_out.get("cheats")
    # the others saw the stopped seat go silent, and it came back
    victim_slot = victim_out["my_slot"]
    assert any(victim_slot in o.get("stalls", []) for o in (outs[0], outs[2]))
    assert len({o["record_head"] for o in outs}) == 1
    assert all(o["finished"] and o["record_steps"] == STEPS + 2 for o in outs)


def test_time_away_counts_against_no_one() -> None:
    m = SilenceMonitor(stall_after=5, max_wait=20)
    assert m.update(0.0, 3, frozenset({1, 2})) == []
    m.pause(12.0)  # we were stopped from t=1 to t=13
    assert m.update(13.0, 3, frozenset({1, 2})) == []  # silent 1 s of our time, not 13
    events = m.update(17.5, 3, frozenset({1, 2}))
    assert [e.seat for e in events if isinstance(e, Stalled)] == [1, 2]
    with pytest.raises(TableAbandoned):
        m.update(32.5, 3, frozenset({1}))
