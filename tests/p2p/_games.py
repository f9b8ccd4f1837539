"""Whole game tables of real peer processes on loopback, for the networked-play tests.

:class:`GameTable` starts one ``cli.net open`` peer and ``seats - 1`` ``cli.net
join`` peers (each with its own state folder, identity, key share and
``PYTHONHASHSEED``), all with ``--bot`` so that no terminal is needed; a seat
may instead run the test-only cheating peer (:mod:`tests.p2p.cheat_peer`).
Every child is killed and reaped when the ``with`` block ends.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest

from tests.p2p._nethelpers import LOOPBACK

ADDRESS_TIMEOUT_S = 30.0
T = TypeVar("T")


@dataclass
class PeerOutcome:
    seat_slot: int
    returncode: int
    result: dict[str, Any] | None
    stderr: str


class _Peer:
    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True
        )
        self.err_lines: list[str] = []
        self.out_lines: list[str] = []
        # one reader thread per pipe: stderr is watched while the peer runs, and nothing
        # else may read it (``communicate`` would take lines away from ``err_lines``)
        self._readers = [
            threading.Thread(target=self._read, args=(pipe, lines), daemon=True)
            for pipe, lines in (
                (self.proc.stderr, self.err_lines),
                (self.proc.stdout, self.out_lines),
            )
        ]
        for t in self._readers:
            t.start()

    @staticmethod
    def _read(pipe, lines: list[str]) -> None:  # type: ignore[no-untyped-def]
        for line in pipe:
            lines.append(line)

    def address(self, timeout: float) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in list(self.err_lines):
                if '"event": "listening"' in line:
                    return json.loads(line)["address"]
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        raise AssertionError("the opener never listened:\n" + "".join(self.err_lines))

    def finish(self, timeout: float) -> PeerOutcome:
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for t in self._readers:
            t.join(timeout=5)
        result = None
        for line in self.out_lines:
            line = line.strip()
            if line.startswith("{"):
                result = json.loads(line)
        return PeerOutcome(-1, self.proc.returncode, result, "".join(self.err_lines))

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


class GameTable:
    """One table of peer processes; use as a context manager."""

    def __init__(
        self,
        tmp: Path,
        game: str,
        seats: int,
        options: dict[str, Any] | None = None,
        cheats: dict[int, str] | None = None,
        bots: dict[int, str] | None = None,
        extra: list[str] | None = None,
        extra_for: dict[int, list[str]] | None = None,
        announce: bool = False,
    ) -> None:
        self.tmp = tmp
        self.game = game
        self.seats = seats
        self.options = options or {}
        self.cheats = cheats or {}
        self.bots = bots or {}
        self.extra = extra or []
        self.extra_for = extra_for or {}
        """More options for one peer, after ``extra`` (so they win)."""
        self.peers: list[_Peer] = []
        self.announce = announce
        """Announce the table over zeroconf (on loopback) as well; joiners still use --peer."""

    def state_dir(self, i: int) -> Path:
        return self.tmp / f"peer{i}"

    def _cmd(self, i: int, args: list[str]) -> list[str]:
        if i in self.cheats:
            return [sys.executable, "-m", "tests.p2p.cheat_peer", self.cheats[i], *args]
        return [sys.executable, "-m", "cli.net", *args]

    def _env(self, i: int) -> dict[str, str]:
        return dict(
            os.environ,
            SLAIGA_INTERFACE=LOOPBACK,
            SLAIGA_LOOPBACK_ONLY="1",
            PYTHONHASHSEED=str(101 + i),
        )

    def _common(self, i: int) -> list[str]:
        return [
            "--json",
            "--events",
            "--bot",
            self.bots.get(i, "heuristic"),
            "--name",
            f"p{i}",
            "--state-dir",
            str(self.state_dir(i)),
            *self.extra,
            *self.extra_for.get(i, []),
        ]

    def start(self) -> GameTable:
        opts = [f"--option={k}={v}" for k, v in self.options.items()]
        announce = [] if self.announce else ["--no-announce"]
        args = ["open", self.game, "--seats", str(self.seats), *announce, *opts]
        self.peers.append(_Peer(self._cmd(0, args + self._common(0)), self._env(0)))
        address = self.peers[0].address(ADDRESS_TIMEOUT_S)
        for i in range(1, self.seats):
            args = ["join", "--peer", address, *self._common(i)]
            self.peers.append(_Peer(self._cmd(i, args), self._env(i)))
        return self

    def start_peer(self, i: int, args: list[str]) -> None:
        """(Re)start peer ``i`` with a whole command line after ``cli.net``."""
        self.peers[i] = _Peer(self._cmd(i, args + self._common(i)), self._env(i))

    def finish(self, timeout: float = 300.0) -> list[PeerOutcome]:
        deadline = time.monotonic() + timeout
        outs = []
        for i, p in enumerate(self.peers):
            out = p.finish(max(1.0, deadline - time.monotonic()))
            out.seat_slot = i
            outs.append(out)
        return outs

    def __enter__(self) -> GameTable:
        return self

    def __exit__(self, *exc: object) -> None:
        for p in self.peers:
            p.kill()


VERIFY_TIMEOUT_S = 300


def verify_json(path: str) -> tuple[int, dict[str, Any]]:
    """Run ``slaiga verify --json`` on a record file as a real subprocess."""
    ((code, report),) = verify_all_json([path])
    return code, report


def verify_all_json(paths: list[str]) -> list[tuple[int, dict[str, Any]]]:
    """``slaiga verify --json`` on the record files, in one real subprocess (they are the
    seats' records of one table: a proof checked in one is not checked again); the exit
    code and report of each, in order (the exit code is the process's when one file is
    given, else the one that file's verdict gives on its own)."""
    proc = subprocess.run(
        [sys.executable, "-m", "cli", "verify", "--json", *paths],
        capture_output=True,
        text=True,
        timeout=VERIFY_TIMEOUT_S,
    )
    lines = proc.stdout.splitlines()
    assert len(lines) == len(paths), (proc.returncode, proc.stdout, proc.stderr)
    reports = [json.loads(line) for line in lines]
    if len(paths) == 1:
        return [(proc.returncode, reports[0])]
    assert [r.pop("record") for r in reports] == list(paths), reports
    found = [(verify_exit_code(r), r) for r in reports]
    assert proc.returncode == max(code for code, _ in found), (proc.returncode, found)
    return found


def verify_exit_code(report: dict[str, Any]) -> int:
    """The exit status ``slaiga verify`` gives a file with this JSON report alone."""
    if report.get("error_kind") in ("Unreadable", "InternalError"):
        return 2
    if report["ok"]:
        return 0
    return 4 if report.get("culprit") is not None else 1


TABLES_AT_ONCE = 2
"""Tables a family of parametrised tests plays side by side (see :func:`tables_side_by_side`):
one table of peer processes takes turns (a seat proves, the others wait, then check), so it
leaves much of a second core idle; two at once fill it."""


def tables_side_by_side(
    request: pytest.FixtureRequest, param: str, play: Callable[[Any], T]
) -> dict[Any, concurrent.futures.Future[T]]:
    """For a module-scoped fixture: ``play(value)`` for every value of the parameter
    ``param`` among the tests of this module selected in this session, at most
    :data:`TABLES_AT_ONCE` at a time, in the background. Each test then waits for its own
    value's future only (and so fails with its own table's error, at its own turn); the
    caller shuts the pool down (waiting for it) when the module ends."""
    values: list[Any] = []
    for item in request.session.items:
        spec = getattr(item, "callspec", None)
        if getattr(item, "module", None) is request.module and param in getattr(spec, "params", {}):
            values.append(spec.params[param])  # type: ignore[union-attr]
    values = list(dict.fromkeys(values))
    pool = concurrent.futures.ThreadPoolExecutor(TABLES_AT_ONCE, thread_name_prefix="table")
    request.addfinalizer(lambda: pool.shutdown(wait=True, cancel_futures=True))
    return {value: pool.submit(play, value) for value in values}
