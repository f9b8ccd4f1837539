"""``slaiga watch`` at tables of real peer processes on loopback (issue 20).

Three tables, played two at a time in the background and shared by the tests:

* **Slave**, announced over zeroconf, four bot seats: two spectators from the start (one
  by ``--peer``, one by table id over zeroconf), a third that joins mid-game, and three
  hostile spectators (one floods, one never reads, one sends an entry);
* **Slaiga**, four bot seats and two spectators;
* **Slave with a cheating seat** (a cheat of the catalogue, tests/p2p/cheaters.py) and two
  spectators.

Every spectator prints ``--json`` at the end: it must reach the seats' ranking, state
hash and record head, or name the cheater with the seats' seat and ``verify``'s step,
exiting 4.  The seats must tell their players who is watching, cut every hostile
spectator off within its budget, and play on to the same result.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Any

import pytest

from tests.p2p._games import GameTable, PeerOutcome, tables_side_by_side, verify_json
from tests.p2p._nethelpers import LOOPBACK

SEATS = 4
SPECTATORS = 8
WATCH_TIMEOUT_S = 400
MID_GAME_STEP = 40
"""The mid-game spectator starts once the opener completed this step (a two-game Slave
record has about 170)."""
CHEAT = "token"
CHEAT_SLOT = 1
EXIT_CHEATER = 4
HOSTILE = ("flood", "deaf", "entries")


@dataclass
class WatchOutcome:
    name: str
    returncode: int
    result: dict[str, Any] | None
    stderr: str


class _Proc:
    def __init__(self, args: list[str], name: str) -> None:
        env = dict(os.environ, SLAIGA_INTERFACE=LOOPBACK, SLAIGA_LOOPBACK_ONLY="1")
        self.name = name
        self.proc = subprocess.Popen(
            args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True
        )

    def finish(self, timeout: float) -> tuple[int, str, str]:
        try:
            out, err = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, err = self.proc.communicate()
        return self.proc.returncode, out, err


def watcher(name: str, *args: str) -> _Proc:
    cmd = [sys.executable, "-m", "cli", "watch", "--json", "--name", name, "--timeout", "10"]
    return _Proc([*cmd, *args], name)


def finish_watcher(p: _Proc) -> WatchOutcome:
    code, out, err = p.finish(WATCH_TIMEOUT_S)
    lines = [x for x in out.splitlines() if x.startswith("{")]
    return WatchOutcome(p.name, code, json.loads(lines[-1]) if lines else None, err)


def events(peer: Any) -> list[dict[str, Any]]:
    """The JSON event lines a peer has written so far."""
    found = []
    for line in list(peer.err_lines):
        if line.startswith("{"):
            found.append(json.loads(line))
    return found


def wait_for_step(peer: Any, step: int, timeout: float = 300.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(e["event"] == "step" and e["step"] >= step for e in events(peer)):
            return
        if peer.proc.poll() is not None:
            raise AssertionError("the opener ended early:\n" + "".join(peer.err_lines)[-3000:])
        time.sleep(0.1)
    raise AssertionError(f"the opener never reached step {step}")


@dataclass
class Watched:
    seats: list[PeerOutcome]
    watchers: list[WatchOutcome]
    opener_events: list[dict[str, Any]]
    hostile: list[dict[str, Any]]
    verified: tuple[int, dict[str, Any]] | None = None


def play(tmp, game: str, options: dict, cheat: bool = False, busy: bool = False) -> Watched:
    """One watched table (see the module docstring); ``busy`` adds the zeroconf, mid-game
    and hostile spectators."""
    table = GameTable(
        tmp,
        game,
        SEATS,
        options,
        cheats={CHEAT_SLOT: CHEAT} if cheat else None,
        extra=["--linger", "2"],
        extra_for={0: ["--spectators", str(SPECTATORS), "--trace-steps"]},
        announce=busy,
    )
    hostile: list[dict[str, Any]] = []
    with table:
        table.start()
        opener = table.peers[0]
        address = opener.address(30)
        table_id = next(e["table_id"] for e in events(opener) if e["event"] == "listening")
        # started before the table forms: they wait for it, then catch up
        procs = [watcher("w1", "--peer", address), watcher("w2", "--peer", address)]
        if busy:
            procs[1] = watcher("w2", table_id)  # by table id, over zeroconf
            wait_for_step(opener, 3)
            bad = _Proc([sys.executable, "-m", "tests.p2p.hostile_watcher", address, *HOSTILE], "")
            wait_for_step(opener, MID_GAME_STEP)
            procs.append(watcher("w3", "--peer", address))
        if cheat:
            # the honest seats and the spectators end within seconds of the conviction;
            # the cheater is not told (its peers just leave) and would wait out the
            # table's silence limit (120 s) before it gives up: nothing here is about
            # it, so it is killed when the table ends (as in test_cheats_procs.py)
            seats = []
            for slot, peer in enumerate(table.peers):
                if slot != CHEAT_SLOT:
                    seats.append(peer.finish(timeout=600))
                    seats[-1].seat_slot = slot
        else:
            seats = table.finish(timeout=600)
        watchers = [finish_watcher(p) for p in procs]
        if busy:
            code, out, err = bad.finish(120)
            assert code == 0, err
            hostile = [json.loads(x) for x in out.splitlines() if x.startswith("{")]
        played = Watched(seats, watchers, events(opener), hostile)
    if cheat:
        honest = next(o for o in seats if o.seat_slot != CHEAT_SLOT)
        played.verified = verify_json(honest.result["record"])
    return played


@pytest.fixture(scope="module")
def tables(request, tmp_path_factory):
    root = tmp_path_factory.mktemp("watch")
    plays = {
        "slave": lambda: play(root / "slave", "slave", {"games": 2}, busy=True),
        "slaiga": lambda: play(root / "slaiga", "slaiga", {"max_turns": 60}),
        "cheat": lambda: play(root / "cheat", "slave", {"games": 1}, cheat=True),
    }
    return tables_side_by_side(request, "table", lambda name: plays[name]())


def agree(played: Watched) -> dict[str, Any]:
    for out in played.seats:
        assert out.returncode == 0, out.stderr[-3000:]
    results = [o.result for o in played.seats]
    for key in ("ranking", "state_hash", "record_head"):
        assert len({repr(r[key]) for r in results}) == 1, (key, results)
    seat = results[0]
    for w in played.watchers:
        assert w.returncode == 0, (w.name, w.stderr[-3000:])
        assert w.result is not None
        for key in ("ranking", "state_hash", "record_head", "table_id", "seats"):
            assert w.result[key] == seat[key], (w.name, key)
        assert w.result["finished"] and w.result["culprit"] is None
        # it checked every proof itself: more than any seat, which trusts its own
        assert w.result["proofs"] >= seat["proofs"] > 0
    return seat


@pytest.mark.parametrize("table", ["slave", "slaiga"])
def test_spectators_agree_with_the_seats(tables, table):
    played = tables[table].result()
    agree(played)
    joined = {e["name"] for e in played.opener_events if e["event"] == "spectator_joined"}
    assert {"w1", "w2"} <= joined  # the players are told who is watching


@pytest.mark.parametrize("table", ["slave"])
def test_a_spectator_that_joins_mid_game_catches_up(tables, table):
    played = tables[table].result()
    agree(played)
    w3 = next(w for w in played.watchers if w.name == "w3")
    assert w3.result is not None and w3.result["steps"] > MID_GAME_STEP
    kinds = [(e["event"], e.get("name"), e.get("step")) for e in played.opener_events]
    joined = kinds.index(("spectator_joined", "w3", None))
    steps_before = [step for event, _, step in kinds[:joined] if event == "step"]
    assert max(steps_before) >= MID_GAME_STEP  # it came in mid-game, and caught up


@pytest.mark.parametrize("table", ["slave"])
def test_hostile_spectators_are_cut_off_and_the_table_plays_on(tables, table):
    played = tables[table].result()
    agree(played)  # the seats finished the game, and so did the honest spectators
    by_kind = {h["kind"]: h for h in played.hostile}
    assert set(by_kind) == set(HOSTILE), played.hostile
    for h in by_kind.values():
        assert h["linked"] and h["cut"], h
    left = {e["name"]: e["reason"] for e in played.opener_events if e["event"] == "spectator_left"}
    assert set(HOSTILE) <= set(left), left
    assert "flood" in left["flood"]
    assert "sends no 'signed'" in left["entries"]
    # the flood was cut within its budget (32 KiB burst, a few KiB a second), far short
    # of the frames it would have sent
    assert by_kind["flood"]["sent"] < 256 << 10, by_kind["flood"]


@pytest.mark.parametrize("table", ["cheat"])
def test_spectators_name_a_cheat_with_the_seats_seat_and_step(tables, table):
    played = tables[table].result()
    honest = [o for o in played.seats if o.seat_slot != CHEAT_SLOT]
    culprits = set()
    for out in honest:
        assert out.returncode == EXIT_CHEATER, out.stderr[-3000:]
        culprits.add(out.result["culprit"])
    assert len(culprits) == 1
    assert played.verified is not None
    code, report = played.verified
    assert code == EXIT_CHEATER and report["culprit"] in culprits  # verify exits 4 on a cheat
    for w in played.watchers:
        assert w.returncode == EXIT_CHEATER, (w.name, w.stderr[-3000:])
        assert w.result is not None
        assert w.result["culprit"] in culprits
        assert w.result["culprit_name"] == f"p{CHEAT_SLOT}"
        assert w.result["cheat"]["step"] == report["step"], (w.result, report)
