"""``slaiga watch`` checks every proof of every seat: with ``--priority low`` it lowers its
CPU priority so that, on a machine where a player also plays, the player's game comes
first; by default it runs as any program does."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest

from cli.watch import WATCH_NICENESS


def _niceness(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[16])  # field 19: nice


@pytest.mark.parametrize(("extra", "raised_by"), [(("--priority", "low"), WATCH_NICENESS), ((), 0)])
def test_a_watch_runs_at_low_priority_when_told(extra, raised_by):
    if not os.path.exists(f"/proc/{os.getpid()}/stat"):
        pytest.skip("needs /proc")
    own = os.nice(0)
    env = dict(os.environ, SLAIGA_INTERFACE="127.0.0.1", SLAIGA_LOOPBACK_ONLY="1")
    with socket.create_server(("127.0.0.1", 0)) as server:  # a "seat" that never answers
        server.settimeout(30)
        port = server.getsockname()[1]
        proc = subprocess.Popen(
            [sys.executable, "-m", "cli", "watch", "--peer", f"127.0.0.1:{port}", "--json"]
            + list(extra),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        try:
            conn, _ = server.accept()  # the watch has started watching: its priority is set
            with conn:
                assert _niceness(proc.pid) == min(19, own + raised_by)
        finally:
            proc.kill()
            proc.wait(timeout=10)
