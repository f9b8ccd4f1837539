"""``slaiga simulate`` through a real subprocess, for every game."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from engine import registry

ROOT = Path(__file__).resolve().parents[2]


def slaiga(*args: str, check: bool = True, **env: str) -> subprocess.CompletedProcess:
    """``slaiga ARGS`` as a real process with no terminal at its input (``env``: more
    environment variables)."""
    proc = subprocess.run(
        [sys.executable, "-m", "cli", *args],
        cwd=ROOT,
        env=dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="120", **env),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=240,
    )
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def slaiga_side_by_side(*commands: list[str]) -> list[str]:
    """Run several ``slaiga`` commands at once (real subprocesses); the stdout of each,
    which must have exited 0."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="120")
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "cli", *args],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for args in commands
    ]
    try:
        outs = []
        for proc in procs:
            out, err = proc.communicate(timeout=240)
            assert proc.returncode == 0, err
            outs.append(out)
        return outs
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


@pytest.mark.parametrize("game", registry.names())
def test_json_output_is_deterministic(game):
    """Two runs with one seed agree, a third with another seed differs (all three at once:
    separate processes, so nothing is shared between them but the command line)."""
    run = ["simulate", game, "--games", "3", "--json", "--seed"]
    a, b, c = map(json.loads, slaiga_side_by_side(run + ["11"], run + ["11"], run + ["12"]))
    assert a["results"] == b["results"]
    assert a["game"] == game and a["games"] == 3 and a["seed"] == 11
    assert len(a["results"]) == 3
    for r in a["results"]:
        assert set(r) >= {"ranking", "turns", "state_hash"}
        assert len(r["state_hash"]) == 64
        if not r["draw"]:
            assert sorted(r["ranking"]) == list(range(a["seats"]))
    assert c["results"] != a["results"]


def test_verbose_shows_moves_with_suit_symbols():
    out = slaiga("simulate", "slave", "--games", "1", "--verbose").stdout
    assert any(s in out for s in "♣♦♥♠")
    assert "average turns" in out


def test_bot_per_seat_and_summary():
    out = slaiga(
        "simulate",
        "slajens",
        "--seats",
        "2",
        "--bot",
        "heuristic",
        "--bot",
        "random",
        "--games",
        "20",
    ).stdout
    assert "heuristic bots first" in out and "random bots first" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["simulate", "slave", "--option", "nonsense=1"], "unknown option 'nonsense'"),
        (["simulate", "slave", "--option", "games=zero"], "option 'games': bad value"),
        (["simulate", "slave", "--seats", "9"], "needs 4-6 seats"),
        (["simulate", "no-such-game"], "unknown game 'no-such-game'"),
        (["simulate", "slave", "--bot", "genius"], "unknown bot 'genius'"),
        (
            ["simulate", "slave", "--seats", "4", "--bot", "random", "--bot", "random"],
            "once per seat",
        ),
    ],
)
def test_bad_input_is_a_clear_error(args, message):
    proc = slaiga(*args, check=False)
    assert proc.returncode == 2
    assert message in proc.stderr.replace("\n", " ")


def test_play_without_a_terminal_is_watched_to_the_end():
    """With stdin not a terminal, a bot plays your seat and the game is printed in words."""
    args = ["play", "slajens", "--local", "--seats", "2", "--seed", "3", "--option", "rounds=2"]
    proc = slaiga(*args, USER="Ann")
    assert (
        "Ann rolls " in proc.stdout
        and "(roll 1 of 3)" in proc.stdout
        and "Bob scores" in proc.stdout
    )
    assert "Game over: Slåjens" in proc.stdout and "Ann (you)" in proc.stdout
    as_json = slaiga(*args, "--json", USER="Ann")
    summary = json.loads(as_json.stdout)
    assert {
        "table_id",
        "game",
        "seat",
        "ranking",
        "state_hash",
        "record_head",
        "record",
        "culprit",
    } <= set(summary)
    assert summary["game"] == "slajens" and sorted(summary["ranking"]) == [0, 1]


def test_options_lists_games_and_defaults():
    games = json.loads(slaiga("options", "--json").stdout)
    assert [g["game"] for g in games] == registry.names()
    slave = json.loads(slaiga("options", "slave", "--json").stdout)
    assert slave["seats"] == {"min": 4, "max": 6, "default": 5}
    assert {"name": "games", "default": 5}.items() <= {
        k: v for o in slave["options"] if o["name"] == "games" for k, v in o.items()
    }.items()
    assert "games" in slaiga("options", "slave").stdout
    bad = slaiga("options", "chess", check=False)
    assert bad.returncode == 2 and "unknown game 'chess'" in bad.stderr
