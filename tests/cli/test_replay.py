"""``slaiga replay RECORD-FILE`` as a real subprocess, in plain mode (no terminal), on record
files of games played with every seat's real protocol code (issue 20).

The arrow-key replay at a terminal is in tests/cli/test_tmux.py.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from cli.replay import ReplayError, read_secret
from p2p.record.chain import Record
from p2p.record.store import RecordFile
from p2p.record.verify import signature_at
from p2p.table import local_table
from p2p.table.seat import SeatDriver, SeatKeys, rule_factory
from tests.cli._replays import names_in_order, played_record, ranking_names
from tests.p2p.cheaters import Cheater

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT_S = 120


def slaiga(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cli", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONPATH": str(ROOT)},
    )


@pytest.fixture(scope="module")
def slaiga_game(tmp_path_factory: pytest.TempPathFactory):
    folder = tmp_path_factory.mktemp("slaiga")
    return played_record(folder, "slaiga", 3, {"max_turns": 30})


def _steps(out: str) -> list[int]:
    return [int(m[1]) for m in re.finditer(r"^step (\d+): ", out, re.M)]


def test_plain_replay_prints_every_step_and_the_same_end_as_verify(slaiga_game) -> None:
    path, table = slaiga_game
    run = slaiga("replay", str(path), "--plain")
    assert run.returncode == 0, run.stderr
    out = run.stdout
    verified = json.loads(slaiga("verify", str(path), "--json").stdout)
    # every step of the game, in order, once (the seat order's two steps come before)
    assert _steps(out) == list(range(3, verified["steps"] + 1))
    assert "public view" in out.splitlines()[0]
    order = ", ".join(f"{i}. {n}" for i, n in enumerate(names_in_order(table), 1))
    assert f"seats in the drawn order: {order}" in out
    # the end: the seats' ranking, and what was checked
    # (a draw lists the players as they stand, without places)
    ranked = re.findall(r"^\s+(?:\d+(?:st|nd|rd|th)\s+)?(seat\d)\s*(?:\d+)?\s*$", out, re.M)
    assert ranked == ranking_names(table)
    # replay and verify count the same things: every signature, every seat's proofs
    counted = f"{verified['entries']} signatures and {verified['proofs']} proofs checked"
    assert f"{counted}, no cheat." in out and verified["proofs"] > 0
    assert f"{counted} in {verified['steps']} steps" in slaiga("verify", str(path)).stdout
    # the public view shows no hand, only what the rules made public
    assert "hand:" not in out


def test_a_seat_view_from_its_table_secret_and_a_secret_that_does_not_fit(slaiga_game) -> None:
    path, table = slaiga_game
    first = table.records[0].rule.seat_order[0]  # slot of seat 1 in the drawn order
    name = names_in_order(table)[0]

    def as_seat_1(secret_of: int):  # type: ignore[no-untyped-def]
        secret = str(path.parent / f"{secret_of}.secret")
        return slaiga("replay", str(path), "--plain", "--seat", "1", "--secret", secret)

    run = as_seat_1(first)
    assert run.returncode == 0, run.stderr
    assert f"{name}'s hand: " in run.stdout
    # its hand after the deal shows faces (the public view shows none)
    hands = re.findall(rf"^  {re.escape(name)}'s hand: (.*)$", run.stdout, re.M)
    assert any("▒▒" not in h and h != "no cards" for h in hands), hands
    other = next(s for s in range(3) if s != first)
    bad = as_seat_1(other)
    assert bad.returncode == 2
    assert f"is not {name}'s table secret at this table" in bad.stderr
    assert "Traceback" not in bad.stderr
    # the right seal key with another table secret: its key share gives it away
    mixed = path.parent / "mixed.secret"
    mixed.write_bytes(bytes(32) + (path.parent / f"{first}.secret").read_bytes()[32:])
    bad = slaiga("replay", str(path), "--plain", "--seat", "1", "--secret", str(mixed))
    assert bad.returncode == 2, bad.stdout
    assert "its key share is not the one they published" in bad.stderr
    usage = slaiga("replay", str(path), "--seat", "1")
    assert usage.returncode == 2 and "--seat needs --secret" in usage.stderr


def test_replay_stops_where_a_cheat_is_proven_and_shows_the_evidence(tmp_path: Path) -> None:
    """A seat forges a reveal token (the catalogue's ``token``): the replay stops at that
    step, names the seat as ``slaiga verify`` does and shows the signed evidence."""
    cheat_slot = 1
    path, table = played_record(
        tmp_path, "slave", 4, {"games": 1}, cheats={cheat_slot: Cheater("token")}, slot=0
    )
    checked = slaiga("verify", str(path), "--json")
    assert checked.returncode == 4, checked.stderr  # verify and replay agree: a proven cheat
    verified = json.loads(checked.stdout)
    assert verified["culprit_slot"] == cheat_slot
    run = slaiga("replay", str(path), "--plain")
    assert run.returncode == 4, run.stderr  # a player caught cheating (cli.args.EXIT_STATUS)
    out = run.stdout
    name = table.records[0].manifest.seats[cheat_slot].name
    seat = verified["culprit"] + 1
    assert f"Cheating proven at step {verified['step']}: {name} (seat {seat})" in out
    # the reason and the evidence in verify's words: no error class, no "frame"
    assert verified["error"] in out and "\nInvalidMove: " not in out
    # one plain sentence, the step once; the technical reason stays in --json
    assert verified["error"] == (
        f"{name} (seat {seat})'s proof for the cards they revealed at step {verified['step']}"
        " does not check out (kind: InvalidMove)"
    )
    assert verified["error_kind"] == "InvalidMove" and "DLEQ" in verified["error_detail"]
    human = slaiga("verify", str(path))
    assert human.returncode == 4, human.stderr
    assert verified["error"] in human.stdout and "DLEQ" not in human.stdout
    assert human.stdout.count(f"step {verified['step']}") == 1, human.stdout
    frame = verified["evidence"][0]["frame"]
    where = signature_at(frame)
    assert f"evidence: {where}, {verified['evidence'][0]['signature'][:32]}" in out
    assert "frame" not in out
    assert _steps(out)[-1] < verified["step"]  # nothing after the cheat is shown


def test_help_and_unreadable_files(tmp_path: Path) -> None:
    run = slaiga("replay", "--help")
    assert run.returncode == 0
    flat = " ".join(run.stdout.split())
    for words in ("--seat N", "--secret FILE", "--plain", "Home and End", "PgDn", "q to quit"):
        assert words in flat, words
    junk = tmp_path / "junk.rec"
    junk.write_bytes(b"not a record")
    bad = slaiga("replay", str(junk))
    assert bad.returncode == 2 and "this is not a Slaiga record file" in bad.stderr
    missing = slaiga("replay", str(tmp_path / "none.rec"))
    assert missing.returncode == 2 and "cannot read" in missing.stderr


HOSTILE_NAMES = ["[/bold]", "A\x1b[2Jnn", "[red]Eve", "Bob\u202e"]


def test_names_chosen_by_players_are_shown_as_text_by_verify_and_replay(tmp_path: Path) -> None:
    """A player's name is text the player chose: "[/bold]" once made ``slaiga verify`` end in
    a traceback (read as rich markup), and an escape sequence in a name went to the terminal.
    Both commands show such names as they are, with control characters as "?"."""
    genesis, ids, seals = local_table.game_genesis("slajens", 4, {"rounds": 1}, names=HOSTILE_NAMES)
    drivers = [
        SeatDriver(
            Record(genesis, rule_factory(SeatKeys(s, ids[s], seals[s], bytes([s + 1]) * 32))),
            ids[s],
            s,
        )
        for s in range(4)
    ]
    table = local_table.run(local_table.LocalTable(genesis, drivers))
    path = tmp_path / "names.rec"
    with RecordFile.create(path, genesis) as store:
        for signed in table.records[0].signed_from(1):
            store.append(signed)
    for run in (slaiga("verify", str(path)), slaiga("replay", "--plain", str(path))):
        assert run.returncode == 0, run.stderr
        assert "Traceback" not in run.stderr
        assert "\x1b" not in run.stdout and "\u202e" not in run.stdout
        assert "[/bold]" in run.stdout and "[red]Eve" in run.stdout and "A?[2Jnn" in run.stdout
    # the table's options as `slaiga options` writes them
    assert "sjond=off" in slaiga("verify", str(path)).stdout


def test_a_table_secret_is_read_only_as_far_as_a_secret_goes(tmp_path: Path) -> None:
    """--secret /dev/zero once read without end; a file longer than a secret is refused
    after 65 bytes, whatever its size."""
    big = tmp_path / "big.secret"
    with open(big, "wb") as f:
        f.truncate(50_000_000)  # sparse: no disk used
    with pytest.raises(ReplayError, match="is not a table secret \\(more than 64 bytes\\)"):
        read_secret(big, None, 0)
    short = tmp_path / "short.secret"
    short.write_bytes(b"x")
    with pytest.raises(ReplayError, match="\\(1 byte, not 64\\)"):
        read_secret(short, None, 0)


def test_a_named_pipe_is_refused_as_record_and_as_secret(slaiga_game, tmp_path: Path) -> None:
    """A FIFO given as the record or as --secret once left verify and replay waiting for
    a writer forever; it is refused before it is opened, in one line."""
    path, _ = slaiga_game
    fifo = tmp_path / "pipe.rec"
    os.mkfifo(fifo)
    for run in (
        slaiga("verify", str(fifo)),
        slaiga("verify", str(fifo), "--json"),
        slaiga("replay", "--plain", str(fifo)),
        slaiga("replay", str(path), "--plain", "--seat", "1", "--secret", str(fifo)),
    ):
        assert run.returncode == 2, (run.stdout, run.stderr)
        said = " ".join((run.stderr or json.loads(run.stdout)["error"]).split())
        assert "is a named pipe, not a" in said and said.count("error:") <= 1, said
        assert "Traceback" not in run.stderr
