"""``python -m cli.net`` peers as real child processes, for the multi-process table tests.

Every child is told to use loopback (``$SLAIGA_INTERFACE``); :class:`CliPeers` kills
whatever is still running when its block ends, so a failing test leaves no peer behind.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

from tests.p2p._nethelpers import LOOPBACK

RUN_TIMEOUT_S = 30


def cli_net(*args: str) -> list[str]:
    """The command line of a ``cli.net`` child with ``args``."""
    return [sys.executable, "-m", "cli.net", *args]


def loopback_env() -> dict[str, str]:
    """This process's environment with ``$SLAIGA_INTERFACE`` set to loopback."""
    return dict(os.environ, SLAIGA_INTERFACE=LOOPBACK)


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    """Run one ``cli.net`` command to its end (bounded by ``RUN_TIMEOUT_S``)."""
    return subprocess.run(
        cli_net(*args), capture_output=True, env=loopback_env(), text=True, timeout=RUN_TIMEOUT_S
    )


class CliPeers:
    """Long-running ``cli.net`` peers started with :meth:`start`; on leaving the ``with``
    block every one still running is killed and reaped."""

    def __init__(self) -> None:
        self.procs: list[subprocess.Popen[str]] = []

    def start(self, *args: str) -> subprocess.Popen[str]:
        proc = subprocess.Popen(
            cli_net(*args),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=loopback_env(),
            text=True,
        )
        self.procs.append(proc)
        return proc

    @staticmethod
    def results(procs: list[subprocess.Popen[str]], timeout: float) -> list[dict[str, Any]]:
        """Wait for each of ``procs``; each must exit 0 (its stderr is the failure message)
        and print one JSON summary, returned in order."""
        outs = []
        for p in procs:
            out, err = p.communicate(timeout=timeout)
            assert p.returncode == 0, err
            outs.append(json.loads(out))
        return outs

    def __enter__(self) -> CliPeers:
        return self

    def __exit__(self, *exc: object) -> None:
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()
