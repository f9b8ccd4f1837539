"""``slaiga play GAME`` without a terminal: a bot takes your seat at a real table of bot
peer processes on loopback, and the record it leaves verifies."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.p2p._games import verify_json


def test_play_watched_networked_game(tmp_path):
    env = dict(os.environ, SLAIGA_INTERFACE="127.0.0.1", SLAIGA_LOOPBACK_ONLY="1")
    proc = subprocess.run(
        [sys.executable, "-m", "cli", "play", "slave", "--json", "--seats", "4"]
        + ["--option", "games=1", "--state-dir", str(tmp_path / "me")],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["finished"] and result["culprit"] is None
    assert sorted(result["ranking"]) == [0, 1, 2, 3]
    code, report = verify_json(result["record"])
    assert code == 0 and report["ranking"] == result["ranking"], report
    # the bot peers kept their own identities and records, and were reaped
    bots = sorted(p.name for p in (tmp_path / "me" / "bots").iterdir())
    assert bots == ["bot0", "bot1", "bot2"]
