"""``slaiga resume`` of a seat a bot plays since its person left: the bot is stopped
(only the process the hand-over noted, and only while it holds the state folder), so the
person plays on and the others hear "Bob is back" (the whole flow was checked under tmux;
the notice itself is tested in tests/p2p/test_notice.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from cli import state
from cli.net import bot_pid_path, take_back

TABLE = "ab" * 16


def _sleeper() -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])


def _note(folder: Path, pid: int, holder: int) -> None:
    (folder / "tables").mkdir(parents=True)
    bot_pid_path(folder, TABLE).write_text(f"{pid}\n")
    (folder / state.LOCK_NAME).write_text(f"{holder}\n")


def test_the_bot_that_holds_the_folder_is_stopped(tmp_path: Path) -> None:
    bot = _sleeper()
    try:
        _note(tmp_path, bot.pid, bot.pid)
        assert take_back(tmp_path, TABLE)
        assert bot.wait(timeout=10) != 0  # stopped by the signal
        assert not bot_pid_path(tmp_path, TABLE).exists()
        assert not take_back(tmp_path, TABLE)  # nothing noted any more
    finally:
        bot.kill()
        bot.wait()


def test_a_process_that_does_not_hold_the_folder_is_left_alone(tmp_path: Path) -> None:
    bot = _sleeper()
    try:
        _note(tmp_path, bot.pid, bot.pid + 1)  # the folder is another process's now
        assert not take_back(tmp_path, TABLE)
        assert bot.poll() is None
    finally:
        bot.kill()
        bot.wait()
