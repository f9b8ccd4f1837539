"""A peer stopped (SIGSTOP) mid-game for longer than the stall limit names no one.

Three ``cli.net`` processes on loopback play a real game of Slaiga with bots;
once the deal is under way one joiner is stopped for longer than both the
stall limit and the keepalive's dead time (so every link to it drops), then
continued.  Meanwhile the others rightly see it silent.  The stopped peer
must notice that it was away (its heartbeat came late), count that time
against no seat, re-fetch, and carry on: it reports no stall, nobody names
any seat, and every peer finishes the same game with the same record, each
file passing ``slaiga verify``.  A silence monitor unit test pins the
``pause`` rule itself.
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
from tests.p2p._faults import check_same_finished_game, entries_in, named
from tests.p2p._games import GameTable

SEATS = 3
VICTIM = 1
STALL_AFTER_MS = 1000
MAX_WAIT_MS = 15_000
KEEPALIVE_DEAD_S = 2.0
PAUSE_S = 4.0
"""Longer than the stall limit and than the keepalive's dead time (links drop too), shorter
than the table's maximum wait (past it the stopped seat would rightly be named)."""
STOP_AT_ENTRIES = 30
"""Stop the victim once its record holds this many entries: the shuffles are done."""
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


def test_a_stopped_peer_blames_no_one_and_the_game_goes_on(tmp_path: Path) -> None:
    extra = [
        "--bot-think-ms",
        "25",
        "--linger",
        "20",
        "--stall-after-ms",
        str(STALL_AFTER_MS),
        "--decide-stall-ms",
        str(STALL_AFTER_MS),
        "--max-wait-ms",
        str(MAX_WAIT_MS),
        "--decide-max-ms",
        str(MAX_WAIT_MS),
        "--keepalive",
        "0.25",
        "--keepalive-dead",
        str(KEEPALIVE_DEAD_S),
    ]
    with GameTable(tmp_path, "slaiga", SEATS, {"max_turns": 20}, extra=extra) as table:
        table.start()
        victim = table.peers[VICTIM].proc
        tables = table.state_dir(VICTIM) / "tables"
        deadline = time.monotonic() + DEADLINE_S
        while entries_in(tables) < STOP_AT_ENTRIES:
            if time.monotonic() > deadline or victim.poll() is not None:
                pytest.fail("the game never got under way:\n" + "".join(table.peers[0].err_lines))
            time.sleep(0.01)
        os.kill(victim.pid, signal.SIGSTOP)
        try:
            time.sleep(PAUSE_S)
        finally:
            os.kill(victim.pid, signal.SIGCONT)
        outs = table.finish(timeout=DEADLINE_S)
    for out in outs:
        assert out.returncode == 0, out.stderr[-3000:]
        assert out.result is not None
    logs = [_events(o.stderr) for o in outs]
    victim_log = logs[VICTIM]
    victim_slot = next(e["slot"] for e in victim_log if e["event"] == "formed")
    kinds = [e["event"] for e in victim_log]
    assert "away" in kinds, kinds  # it noticed that it had been stopped
    assert "stalled" not in kinds, victim_log  # and counted that time against no one
    for log in logs:
        assert named(log) == [], log
    # the others saw the stopped seat go silent and lost their links to it; it came back
    others = [log for i, log in enumerate(logs) if i != VICTIM]
    for log in others:
        assert any(e["event"] == "peer_down" and e["slot"] == victim_slot for e in log), log
    assert any(
        e["event"] == "stalled" and e["seat"] == victim_slot for log in others for e in log
    ), others
    check_same_finished_game([o.result for o in outs], SEATS)


def test_time_away_counts_against_no_one() -> None:
    m = SilenceMonitor(stall_after=5, max_wait=20)
    assert m.update(0.0, 3, frozenset({1, 2})) == []
    m.pause(12.0)  # we were stopped from t=1 to t=13
    assert m.update(13.0, 3, frozenset({1, 2})) == []  # silent 1 s of our time, not 13
    events = m.update(17.5, 3, frozenset({1, 2}))
    assert [e.seat for e in events if isinstance(e, Stalled)] == [1, 2]
    with pytest.raises(TableAbandoned):
        m.update(32.5, 3, frozenset({1}))
