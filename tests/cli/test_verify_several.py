"""``slaiga verify`` given several record files (every seat's record of one table, say), as
a real subprocess: each file gets the very report it gets alone, and the exit status is the
highest of theirs; in process, a proof found valid in one file is not checked again in the
next (``crypto.memo``), counted in scalar multiplications."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from crypto.group import COUNTERS
from crypto.memo import remembering
from p2p.record.verify import verify_record_file
from p2p.table import local_table
from tests.cli._replays import write_record

ROOT = Path(__file__).resolve().parents[2]
OLD = ROOT / "tests" / "vectors" / "v3-slajens.rec"


def slaiga(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cli", *args], capture_output=True, text=True, timeout=120
    )


@pytest.fixture(scope="module")
def records(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Each seat's record file of one three-seat game of Slaiga, and a damaged copy."""
    folder = tmp_path_factory.mktemp("several")
    table = local_table.run(local_table.new_table("slaiga", 3, {"max_turns": 12}))
    paths = [write_record(table, folder / f"seat{slot}.rec", slot) for slot in range(3)]
    damaged = folder / "damaged.rec"
    data = bytearray(paths[0].read_bytes())
    data[len(data) // 2] ^= 0x40
    damaged.write_bytes(bytes(data))
    return [*paths, damaged]


def test_each_file_gets_the_report_it_gets_alone_and_the_worst_status(records) -> None:
    files = [*records, OLD]  # three genuine files, a damaged one, one too old to read
    alone = [slaiga("verify", "--json", str(p)) for p in files]
    assert [r.returncode for r in alone] == [0, 0, 0, 1, 2]
    together = slaiga("verify", "--json", *map(str, files))
    assert together.returncode == 2  # the highest of 0, 1 and 2
    lines = together.stdout.splitlines()
    assert len(lines) == len(files), together.stdout
    for path, run, line in zip(files, alone, lines, strict=True):
        report = json.loads(line)
        assert report.pop("record") == str(path)
        assert report == json.loads(run.stdout)


def test_the_human_report_names_each_file(records) -> None:
    run = slaiga("verify", *map(str, records[:2]))
    assert run.returncode == 0, run.stderr
    heads = [line for line in run.stdout.splitlines() if line.startswith("== ")]
    assert heads == [f"== {records[0]}", f"== {records[1]}"]
    alone = slaiga("verify", str(records[1])).stdout
    assert run.stdout.split(f"== {records[1]}\n", 1)[1].strip() == alone.strip()


def test_a_proof_checked_in_one_file_is_not_checked_again_in_the_next(records) -> None:
    COUNTERS.reset()
    first = verify_record_file(records[0])
    cost = COUNTERS.mul + COUNTERS.base_mul
    assert first.ok and cost > 100
    with remembering():
        reports = [verify_record_file(p) for p in records[:3]]
        COUNTERS.reset()
        again = verify_record_file(records[1])
    assert [r.ok for r in reports] == [True, True, True] and again.ok
    assert COUNTERS.mul + COUNTERS.base_mul == 0  # the same entries: nothing done again
    assert [r.to_json() for r in reports] == [verify_record_file(p).to_json() for p in records[:3]]


def test_files_after_an_option_are_files_too(records) -> None:
    run = slaiga("verify", str(records[0]), "--json", str(records[1]))
    assert run.returncode == 0, run.stderr
    assert [json.loads(line)["record"] for line in run.stdout.splitlines()] == [
        str(records[0]),
        str(records[1]),
    ]
    wrong = slaiga("verify", str(records[0]), "--json", "--jsn")
    assert wrong.returncode == 2 and "unrecognized arguments: --jsn" in wrong.stderr
