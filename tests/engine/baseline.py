"""Stored results of ``slaiga simulate`` for every game: proof that a refactoring changed
nothing for players.

``tests/engine/baseline_hashes.json`` holds, for each configuration below (game, seed,
seat count, bots and options), the ``state_hash`` of each of its 50 games, a digest of each
game's whole JSON result (ranking, turns, actions, scores, event counts) and a digest of
the run's summary. A game's result depends only on the master seed and its own index, so
the first ``k`` games of a run are the first ``k`` of the stored 50.

    python -m tests.engine.baseline record   # overwrite the file (only on purpose)
    python -m tests.engine.baseline check    # play every configuration in full (~2 min)

``tests/engine/test_baseline.py`` checks the first games of every configuration on each
test run.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import sys
from pathlib import Path
from typing import Any

from cli.main import main as slaiga_main

PATH = Path(__file__).with_name("baseline_hashes.json")
GAMES = 50
SEEDS = (0, 1, 7)
SEATS = {
    "slaiga": (2, 4, 6),
    "honest-slaiga": (2, 4, 5),
    "aight-of-spaides": (2, 4, 7),
    "slave": (4, 5, 6),
    "slajens": (2, 4, 6),
}
# (game, seats, extra arguments): rule variants and the random bots
EXTRA = (
    ("slaiga", 3, ("--bot", "random")),
    ("slaiga", 4, ("--option", "jokers=off", "--option", "turn_up_discard=on")),
    ("honest-slaiga", 3, ("--bot", "random", "--option", "jokers=on")),
    ("aight-of-spaides", 3, ("--bot", "random")),
    ("slave", 5, ("--bot", "random", "--option", "games=2")),
    ("slajens", 4, ("--option", "sjond=on", "--option", "teams=2")),
    ("slajens", 3, ("--bot", "random", "--option", "sjond=on", "--option", "slalt_double=on")),
)


def configs() -> list[tuple[str, str, int, int, tuple[str, ...]]]:
    """Every configuration as ``(key, game, seed, seats, extra arguments)``."""
    out = []
    for game, seat_counts in SEATS.items():
        for seats in seat_counts:
            for seed in SEEDS:
                out.append((f"{game} seed={seed} seats={seats}", game, seed, seats, ()))
    for game, seats, extra in EXTRA:
        key = f"{game} seed=3 seats={seats} {' '.join(extra)}"
        out.append((key, game, 3, seats, extra))
    return out


def simulate(game: str, seed: int, seats: int, extra: tuple[str, ...], games: int) -> dict:
    """Run ``slaiga simulate ... --json`` in this process and return its JSON object."""
    argv = ["simulate", game, "--games", str(games), "--seed", str(seed), "--seats", str(seats)]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = slaiga_main([*argv, *extra, "--json"])
    if code != 0:
        raise RuntimeError(f"slaiga {' '.join(argv)} exited {code}")
    return json.loads(out.getvalue())


def digest(obj: Any) -> str:
    blob = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


def fingerprint(run: dict) -> dict[str, Any]:
    return {
        "state_hashes": [r["state_hash"] for r in run["results"]],
        "results": [digest(r) for r in run["results"]],
        "summary": digest(run["summary"]),
    }


def record() -> dict[str, Any]:
    out = {}
    for key, game, seed, seats, extra in configs():
        out[key] = fingerprint(simulate(game, seed, seats, extra, GAMES))
        print(key, out[key]["state_hashes"][0][:16], file=sys.stderr)
    return out


def load() -> dict[str, Any]:
    return json.loads(PATH.read_text(encoding="utf-8"))


def check(games: int = GAMES) -> list[str]:
    """Play the first ``games`` games of every configuration; return what differs."""
    stored, problems = load(), []
    for key, game, seed, seats, extra in configs():
        want = stored[key]
        got = fingerprint(simulate(game, seed, seats, extra, games))
        if got["state_hashes"] != want["state_hashes"][:games]:
            problems.append(f"{key}: state hashes differ")
        elif got["results"] != want["results"][:games]:
            problems.append(f"{key}: results (ranking, turns, events) differ")
        elif games == GAMES and got["summary"] != want["summary"]:
            problems.append(f"{key}: summary differs")
    return problems


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else "check"
    if what == "record":
        PATH.write_text(json.dumps(record(), indent=1) + "\n", encoding="utf-8")
    elif what == "check":
        bad = check()
        print("\n".join(bad) or f"all {len(configs())} configurations unchanged")
        sys.exit(1 if bad else 0)
    else:
        sys.exit(f"usage: python -m tests.engine.baseline [record|check]; not {what!r}")
