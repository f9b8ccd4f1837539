"""``slaiga bench table`` runs a real game over peer processes and reports every figure."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest


def test_bench_table_reports_the_figures():
    env = dict(os.environ, SLAIGA_INTERFACE="127.0.0.1", SLAIGA_LOOPBACK_ONLY="1")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "cli",
            "bench",
            "table",
            "--games",
            "slajens",
            "--spectators",
            "0",
            "--json",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    row = json.loads(proc.stdout)["slajens"]
    for key in ("wall_s", "inprocess_s", "ratio", "action_ms_median", "action_ms_p90"):
        assert row[key] is not None and row[key] > 0, (key, row)
    assert row["first_decision_s"] >= 0
    # the in-process baseline: the game of median time per entry of 3 played in one process
    runs = row["inprocess_ms_per_entry_runs"]
    assert len(runs) == 3, row
    per_entry = row["inprocess_s"] / row["inprocess_entries"] * 1000
    assert abs(per_entry - sorted(runs)[1]) < 0.01, (per_entry, runs)
    # the CPU every seat's process used until then, summed (each counted from its own
    # events: the key round at least, so more than nothing)
    assert row["first_decision_cpu_s"] > 0 and row["cores"] == os.cpu_count()
    assert row["agree"] is True
    # every peer's loop watchdog reported, and its figures are consistent
    assert len(row["loop_block_ms_max_per_peer"]) == 4
    assert all(m is not None for m in row["loop_block_ms_max_per_peer"])
    assert 0 <= row["loop_block_ms_p99"] <= row["loop_block_ms_max"]
    # issue 19's targets set for a dice game, each with its figure and verdict
    assert set(row["targets"]) == {
        "action_ms_p90",
        "ratio",
        "loop_block_ms_p99",
        "loop_block_ms_max",
    }
    for key, t in row["targets"].items():
        assert t["value"] == row[key] and t["met"] == (t["value"] <= t["at_most"]), (key, t)
    # the survive option's cost: the escrow in the key round, and a peer lost for good
    surv = json.loads(proc.stdout)["survive"]["slajens"]
    key = surv["key_round"]
    assert key["escrow"]["bytes"] > key["plain"]["bytes"] and key["escrow"]["s"] > 0, key
    loss = surv["loss"]
    assert loss["agree"] and len(loss["left"]) == 1, loss
    assert loss["left"] == [loss["killed"]] == ["Dan"], loss  # each peer its own name
    assert loss["limit_to_decision_s"] is not None and loss["limit_to_decision_s"] >= 0, loss


def test_next_deal_is_timed_from_the_last_action_to_the_next_decision():
    from bench.table import next_deal_times

    steps = [
        (0.0, "key"),
        (1.0, "shuffle"),
        (1.5, "tokens"),
        (2.0, "action"),  # first deal: not a next deal
        (3.0, "action"),  # the deal's last action
        (3.2, "shuffle"),
        (3.6, "tokens"),  # the first decision of deal 2 is owed from here
        (4.0, "action"),
        (5.0, "action"),
    ]
    assert next_deal_times(steps) == [3.6 - 3.0]
    assert next_deal_times(steps[:5]) == []


def test_event_lines_are_read_whatever_key_comes_first():
    """Every ``--events`` line carries its process's CPU time (``cpu``, which sorts before
    ``event``): the bench finds the steps, their times and the CPU used by the keys."""
    from bench.table import _cpu_to_step, _events, _step_times

    lines = [
        "slaiga: a line that is not an event\n",
        '{"connected": 3, "cpu": 0.5, "event": "meshed", "of": 3, "t": 10.0}\n',
        '{"cpu": 0.6, "event": "step", "kind": "key", "step": 3, "t": 10.1}\n',
        '{"cpu": 0.9, "event": "step", "kind": "tokens", "step": 8, "t": 10.5}\n',
    ]
    events = _events(lines)
    assert _step_times(events) == {3: 10.1, 8: 10.5}
    assert _cpu_to_step(events, 8) == pytest.approx(0.4)
    assert _cpu_to_step(events, 9) is None  # never reached
    assert _cpu_to_step(_events(lines[2:]), 8) is None  # no meshed event: nothing to count from
