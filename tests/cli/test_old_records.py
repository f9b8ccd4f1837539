"""A record written by an older Slaiga: ``tests/vectors/v3-slajens.rec`` is a whole
two-seat Slajens game (one round) played by protocol version 3, the version before the
manifest's ``spectators`` field (made at the commit before 927f05f, in a temporary
worktree, by the in-process table and ``p2p.record.store.RecordFile``).  Its manifest is
signed as written, without that field, so this version cannot check it; ``slaiga verify``
and ``slaiga replay`` say so in one line, with the version that wrote it and what to do,
rather than calling the file forged or damaged."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from p2p.wire import PROTOCOL_VERSION

V3 = Path(__file__).parent.parent / "vectors" / "v3-slajens.rec"
EXIT_UNREADABLE = 2


def _slaiga(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cli", *args], capture_output=True, text=True, timeout=60
    )


def _said(line: str) -> None:
    assert "older Slaiga, protocol version 3" in line, line
    assert f"this Slaiga speaks version {PROTOCOL_VERSION}" in line, line
    assert "check it with the Slaiga that played the game" in line, line
    assert "forged" not in line and "damaged" not in line and "missing field" not in line


def test_verify_names_the_version_that_wrote_an_old_record() -> None:
    human = _slaiga("verify", str(V3))
    assert human.returncode == EXIT_UNREADABLE, human.stdout + human.stderr
    lines = human.stderr.strip().splitlines()
    assert len(lines) == 1, human.stderr  # one line, not wrapped
    _said(lines[0])
    assert not human.stdout.strip()
    machine = _slaiga("verify", "--json", str(V3))
    assert machine.returncode == EXIT_UNREADABLE
    report = json.loads(machine.stdout)
    assert report["ok"] is False and report["error_kind"] == "Unreadable"
    _said(report["error"])


def test_replay_names_the_version_that_wrote_an_old_record() -> None:
    run = _slaiga("replay", "--plain", str(V3))
    assert run.returncode == EXIT_UNREADABLE, run.stdout + run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    _said(lines[0])


V5 = Path(__file__).parent.parent / "vectors" / "v5-slajens.rec"
"""A two-seat Slajens game (one round) played by protocol version 5, the version before
shuffle proofs were bound to their shuffle round and position (made at main's commit
33b0b86 by the in-process table and ``tests.p2p._tables.write_seat_record``)."""


def test_verify_names_what_changed_after_version_5() -> None:
    human = _slaiga("verify", str(V5))
    assert human.returncode == EXIT_UNREADABLE, human.stdout + human.stderr
    lines = human.stderr.strip().splitlines()
    assert len(lines) == 1, human.stderr
    assert "older Slaiga, protocol version 5 (before shuffles were bound to their deal" in lines[0]
    assert f"this Slaiga speaks version {PROTOCOL_VERSION}" in lines[0], lines[0]
