"""Ctrl-C at a LAN table (real peer processes on loopback, a real SIGINT): the person's
peer signs its "left" notice and sends it before it stops, so the others read "Bob left"
at once instead of waiting for a silent seat; a bot then plays the seat to the end (what
the notice says), and the record files keep the notice."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import pytest

from p2p.errors import P2PError
from p2p.record.store import load
from p2p.record.verify import verify_record_file
from tests.p2p._games import GameTable

PERSON = 1
"""The slot of the peer played without ``--bot`` (a person's seat; no terminal, so its
game is printed as a bot plays it) that gets the Ctrl-C."""
WAIT_S = 120.0

pytestmark = pytest.mark.process  # real peer processes (a subclass of GameTable)


class PersonAtSeat(GameTable):
    """A table whose seat ``PERSON`` runs as a person's peer (no ``--bot``)."""

    def _common(self, i: int) -> list[str]:
        args = super()._common(i)
        if i == PERSON:
            at = args.index("--bot")
            del args[at : at + 2]
        return args


def _events(lines: list[str]) -> list[dict]:
    out = []
    for line in list(lines):
        if line.startswith('{"event"') or line.startswith('{"'):
            try:
                out.append(json.loads(line))
            except ValueError:
                continue
    return [e for e in out if "event" in e]


def _entries(state: Path) -> int:
    """Signed entries in a peer's record file so far (0 before it has one)."""
    for path in (state / "tables").glob("*.rec"):
        try:
            return len(load(path).entries)
        except (OSError, P2PError):
            return 0
    return 0


def test_ctrl_c_mid_game_tells_the_others_at_once(tmp_path: Path) -> None:
    table = PersonAtSeat(
        tmp_path,
        "slajens",
        3,
        {"rounds": 2},
        extra=["--linger", "1"],
        extra_for={0: ["--bot-think-ms", "300"], 2: ["--bot-think-ms", "300"]},
    )
    with table:
        table.start()
        bob = table.peers[PERSON]
        deadline = time.monotonic() + WAIT_S
        # the game is under way: the seat order is drawn and a few steps are done
        while time.monotonic() < deadline:
            if _entries(table.state_dir(PERSON)) >= 12:
                break
            assert bob.proc.poll() is None, "".join(bob.err_lines)[-3000:]
            time.sleep(0.05)
        else:
            raise AssertionError("the game never started:\n" + "".join(bob.err_lines)[-3000:])
        bob.proc.send_signal(signal.SIGINT)
        outs = table.finish(timeout=WAIT_S)
    said = {o.seat_slot: o for o in outs}
    assert said[PERSON].returncode == 130, said[PERSON].stderr[-3000:]
    assert "To go back to this table, run:" in said[PERSON].stderr
    for slot in (0, 2):
        out = said[slot]
        assert out.returncode == 0, out.stderr[-3000:]
        events = _events(out.stderr.splitlines())
        left = [e for e in events if e["event"] == "seat_left"]
        assert [e["name"] for e in left] == [f"p{PERSON}"], events[-20:]
        # told at once: before the table ever waited on the silent seat
        kinds = [e["event"] for e in events]
        assert "stalled" not in kinds[: kinds.index("seat_left")], kinds
        assert out.result is not None and out.result["finished"], out.result
    # every record file keeps Bob's signed notice: he left (a bot played his seat)
    for slot in (0, 2):
        (path,) = (tmp_path / f"peer{slot}" / "tables").glob("*.rec")
        report = verify_record_file(path)
        assert report.ok and report.finished, report.failure
        notices = [(report.seat_name(n.slot), n.back) for n in report.notices]
        assert notices == [(f"p{PERSON}", False)], notices
