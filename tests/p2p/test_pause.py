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
from p2p.table.silence import SilenceMonitor, Stalled
from tests.p2p._faults import check_same_finished_game, entries_in, named
from tests.p2p._games import GameTable

SEATS = 3
VICTIM = 1
STALL_AFTER_MS = 1000
DECIDE_STALL_MS = 2000
MAX_WAIT_MS = 15_000
KEEPALIVE_DEAD_S = 1.0
PAUSE_S = 5.0
"""Longer than the stall limits and than the keepalive's dead time (every link to the victim
drops), shorter than the table's maximum wait (past it the stopped seat would rightly be
named) ..."""
PAUSE_MAX_S = 10.0
"""... and longer while no other peer has yet reported the stopped seat stalled (on a loaded
machine the slow seat's move and the steps before the victim's turn take longer), up to
this, still well short of the maximum wait."""
STOP_AT_ENTRIES = 30
"""Stop the victim once its record holds this many entries (the shuffles are done) ..."""
SLOW = 2
SLOW_THINK_MS = 1500
QUIET_S = 0.3
"""... and has not grown for this long: the table waits on the slow thinker at seat
``SLOW``.  So the victim is stopped while it is itself waiting on another seat, and that
seat's move comes only after every link to the stopped victim has dropped: on waking, the
victim holds no entry and no link, and a peer that counted its own time away as the
others' silence would report the slow seat stalled at once."""
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


def _peer_events(peer) -> list[dict]:
    return _events("".join(list(peer.err_lines)))


def _stalled(log: list[dict], slot: int) -> bool:
    return any(e["event"] == "stalled" and e["slot"] == slot for e in log)


def test_a_stopped_peer_blames_no_one_and_the_game_goes_on(tmp_path: Path) -> None:
    extra = [
        "--bot-think-ms",
        "25",
        "--linger",
        "20",
        "--stall-after-ms",
        str(STALL_AFTER_MS),
        "--decide-stall-ms",
        str(DECIDE_STALL_MS),
        "--max-wait-ms",
        str(MAX_WAIT_MS),
        "--decide-max-ms",
        str(MAX_WAIT_MS),
        "--keepalive",
        "0.2",
        "--keepalive-dead",
        str(KEEPALIVE_DEAD_S),
    ]
    slow = {SLOW: ["--bot-think-ms", str(SLOW_THINK_MS)]}
    with GameTable(
        tmp_path, "slaiga", SEATS, {"max_turns": 6}, extra=extra, extra_for=slow
    ) as table:
        table.start()
        victim = table.peers[VICTIM].proc
        tables = table.state_dir(VICTIM) / "tables"
        deadline = time.monotonic() + DEADLINE_S
        seen, since = 0, time.monotonic()
        while seen < STOP_AT_ENTRIES or time.monotonic() - since < QUIET_S:
            if time.monotonic() > deadline or victim.poll() is not None:
                pytest.fail("the game never got under way:\n" + "".join(table.peers[0].err_lines))
            if (n := entries_in(tables)) != seen:
                seen, since = n, time.monotonic()
            time.sleep(0.01)
        victim_slot = next(
            e["slot"] for e in _peer_events(table.peers[VICTIM]) if e["event"] == "formed"
        )
        os.kill(victim.pid, signal.SIGSTOP)
        stopped_at = time.monotonic()
        try:
            time.sleep(PAUSE_S)
            while time.monotonic() - stopped_at < PAUSE_MAX_S and not any(
                _stalled(_peer_events(p), victim_slot)
                for i, p in enumerate(table.peers)
                if i != VICTIM
            ):
                time.sleep(0.05)
        finally:
            os.kill(victim.pid, signal.SIGCONT)
        outs = table.finish(timeout=DEADLINE_S)
    for out in outs:
        assert out.returncode == 0, out.stderr[-3000:]
        assert out.result is not None
    logs = [_events(o.stderr) for o in outs]
    victim_log = logs[VICTIM]
    # it noticed that it had been stopped
    away = [e for e in victim_log if e["event"] == "away" and e["t"] > stopped_at]
    assert any(e["seconds"] >= PAUSE_S * 0.9 for e in away), victim_log
    # and counted that time against no one: whatever stall it reports on waking (a loaded
    # machine may be slow to reconnect) leaves out the time it was away
    woke_to = [e for e in victim_log if e["event"] == "stalled" and e["t"] > stopped_at]
    assert all(e["silent_for"] < PAUSE_S for e in woke_to), woke_to
    for log in logs:
        assert named(log) == [], log
    # the others saw the stopped seat go silent and lost their links to it; it came back
    others = [log for i, log in enumerate(logs) if i != VICTIM]
    for log in others:
        assert any(e["event"] == "peer_down" and e["slot"] == victim_slot for e in log), log
    assert any(_stalled(log, victim_slot) for log in others), others
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
