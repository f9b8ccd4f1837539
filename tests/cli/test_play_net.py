"""``slaiga play GAME`` without a terminal: a bot takes your seat at a real table of bot
peer processes on loopback, and the record it leaves verifies."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.p2p._games import verify_json


def _play_with_no_terminal(*args: str, state: Path) -> subprocess.CompletedProcess:
    """``slaiga play ARGS`` as a real process on loopback, with no terminal at its input."""
    env = dict(os.environ, SLAIGA_INTERFACE="127.0.0.1", SLAIGA_LOOPBACK_ONLY="1")
    return subprocess.run(
        [sys.executable, "-m", "cli", "play", *args, "--state-dir", str(state)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def test_play_watched_networked_game(tmp_path):
    proc = _play_with_no_terminal(
        "slave", "--json", "--seats", "4", "--option", "games=1", state=tmp_path / "me"
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["finished"] and result["culprit"] is None
    assert sorted(result["ranking"]) == [0, 1, 2, 3]
    code, report = verify_json(result["record"])
    assert code == 0 and report["ranking"] == result["ranking"], report
    # the end screen counts every signature of the record, as verify and replay do (it once
    # left out the seat-order steps); the proofs it checked are the other players'
    assert result["entries"] == report["entries"], (result["entries"], report["entries"])
    assert 0 < result["proofs"] <= report["proofs"]
    # the bot peers kept their own identities and records, and were reaped
    bots = sorted(p.name for p in (tmp_path / "me" / "bots").iterdir())
    assert bots == ["bot0", "bot1", "bot2"]


def test_play_without_a_terminal_prints_the_game_move_by_move(tmp_path):
    """As the README says: with no terminal a bot plays your seat and every move is
    printed as a plain line, then the result (before the fix: one line on stderr and
    nothing more until the exit)."""
    proc = _play_with_no_terminal(
        "high-card", "--seats", "3", "--name", "Ann", state=tmp_path / "me"
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "a bot plays your seat" in proc.stderr
    lines = proc.stdout.splitlines()
    plays = [line for line in lines if " plays " in line]
    assert len(plays) == 3 * 2, proc.stdout  # every card of every hand, one line each
    assert sum(line.startswith("Ann plays ") for line in plays) == 2
    assert lines.index(plays[-1]) < next(i for i, x in enumerate(lines) if "Winner" in x)
    assert "\x1b[" not in proc.stdout  # plain lines, no terminal codes
