"""``slaiga replay``'s screen and its folding, in process (a scripted terminal): the keys,
the steps they reach, the end page, a record cut short (issue 20).

The real command is run in tests/cli/test_replay.py (plain) and tests/cli/test_tmux.py.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from cli.render import plain
from cli.replay import Replay, Screen, print_plain
from p2p.record.store import RecordFile, load
from tests.cli._replays import end_screen_places, played_record
from tests.cli._screens import FakeTerminal


@pytest.fixture(scope="module")
def game(tmp_path_factory: pytest.TempPathFactory):
    return played_record(tmp_path_factory.mktemp("replay"), "slaiga", 3, {"max_turns": 20})


def _step_of(frame: list) -> int | str:
    text = plain(frame)
    m = re.search(r"Replay step (\d+) of", text)
    if m:
        return int(m[1])
    return "end" if "Game over: Slaiga" in text else text


def test_keys_step_through_the_game_and_reach_its_end(game) -> None:
    path, table = game
    keys = ["right", "right", "right", "left", "pgdn", "pgdn", "pgup", "g", "4", "0", "enter"]
    keys += ["9", "9", "9", "9", "enter", "end", "left", "home", "q"]
    term = FakeTerminal(keys, keep=100)
    replay = Replay(path)
    Screen(replay, term).run()
    steps = [_step_of(f) for f in term.frames if not plain(f).startswith("Checking")]
    stops = replay.stops
    moves = [s.step for s in stops if s.step > 5 and s.move]  # PgDn and PgUp go by move
    last = stops[-1].step
    assert steps == [
        *(3, 4, 5, 6, 5, moves[0], moves[1], moves[0]),
        *(moves[0],) * 3,  # "g", "4", "0": typed, nothing moves yet
        40,
        *(40,) * 4,
        last,  # 9999 is past the end: the last step, and it says so
        "end",
        last,
        3,
    ], steps
    assert any(f"the record ends at step {last}" in plain(f) for f in term.frames)
    end = [plain(f) for f in term.frames if _step_of(f) == "end"][0]
    shown, expected = end_screen_places(end, table)
    assert shown == expected, end
    assert replay.ok and replay.done
    # from the first screen on, the title counts to the file's last step, not to the last
    # step checked so far ("step 3 of 3…")
    first = plain(next(f for f in term.frames if _step_of(f) == 3))
    assert f"Replay step 3 of {last} ·" in first, first


def test_a_record_cut_short_is_said_to_be_unfinished(game, tmp_path: Path) -> None:
    path, _ = game
    loaded = load(path)
    cut = tmp_path / "cut.rec"
    with RecordFile.create(cut, loaded.genesis) as f:
        for signed in loaded.entries[:40]:
            f.append(signed)
    replay = Replay(cut)
    out = io.StringIO()
    print_plain(replay, out)
    text = out.getvalue()
    assert replay.done and not replay.ok and replay.failure is None
    assert "the game is unfinished (nobody signed its end)" in text
    assert f"{replay.checked()} before it stopped." in text
