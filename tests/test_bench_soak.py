"""``slaiga bench soak``, short: long-lived peer processes play every game in turn over
loopback; every record verifies and no peer's descriptors, threads or Trio tasks grow."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from bench import soak


def test_a_short_soak_verifies_every_record_and_leaks_nothing():
    env = dict(os.environ, SLAIGA_INTERFACE="127.0.0.1", SLAIGA_LOOPBACK_ONLY="1")
    games = len(soak.GAMES) + 1  # every game once, then the first again in warm processes
    proc = subprocess.run(
        [sys.executable, "-m", "cli", "bench", "soak", "--games", str(games)]
        + ["--baseline", "2", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
    report = json.loads(proc.stdout)
    assert proc.returncode == 0 and report["ok"], report
    assert report["games"] == games
    assert (report["baseline_game"], report["last_game"]) == (2, games)
    assert report["verified_records"] == games * report["seats"]
    for peer in report["peers"]:
        # descriptors and tasks are exact counts: a leak of one per game shows at once
        assert peer["fds"]["last"] <= peer["fds"]["at_baseline"], peer
        assert peer["tasks"]["last"] <= peer["tasks"]["at_baseline"], peer
        assert peer["rss_kib"]["growth"] < report["max_growth"], peer


def test_growth_compares_the_baseline_game_with_the_last():
    rows = [
        {"rss_kib": 100, "fds": 10, "threads": 4, "tasks": 3},
        {"rss_kib": 200, "fds": 12, "threads": 4, "tasks": 3},
        {"rss_kib": 210, "fds": 12, "threads": 5, "tasks": 3},
    ]
    g = soak.growth(rows, baseline=2)
    assert g["rss_kib"] == {"at_baseline": 200, "last": 210, "growth": 0.05}
    assert g["threads"]["growth"] == 0.25
    assert soak.growth(rows, baseline=50)["fds"]["at_baseline"] == 12  # clamped to the last


def test_bad_arguments_are_refused_plainly():
    proc = subprocess.run(
        [sys.executable, "-m", "cli", "bench", "soak", "--seats", "3"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert "--seats must be 4 to 6" in proc.stderr


def test_the_baseline_comes_before_the_last_game():
    """``--games 10`` once compared game 10 with itself (the baseline was game 20, clamped)
    and always reported 0.0% growth (issue 22): a short run now compares with half the
    run, and a baseline at or after the last game is refused."""
    assert soak.baseline_for(200, None) == 20
    assert soak.baseline_for(10, None) == 5
    assert soak.baseline_for(3, None) == 1
    assert soak.baseline_for(10, 9) == 9
    for games, baseline in ((10, 10), (10, 20), (1, None), (10, 0)):
        with pytest.raises(ValueError, match="--"):
            soak.baseline_for(games, baseline)
    proc = subprocess.run(
        [sys.executable, "-m", "cli", "bench", "soak", "--games", "10", "--baseline", "20"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert "--baseline 20 must be a game before the last" in proc.stderr
