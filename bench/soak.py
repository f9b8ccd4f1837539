"""``slaiga bench soak``: many networked bot games back to back, watching for leaks.

Each seat is ONE long-lived peer process on loopback that plays every game of
the run in turn (``slave``, ``slajens``, ``slaiga``, ``honest-slaiga``,
``aight-of-spaides``, again and again), each game a fresh table: a new
``p2p.net.node.Node`` forms it (the opener announces it over zeroconf bound to
loopback; the others dial the opener's port), plays it with heuristic bots
and closes everything before the next.  After each game every peer samples
its own process after a garbage collection:

- ``rss_kib``: resident memory (``VmRSS``);
- ``fds``: open file descriptors (``/proc/self/fd``);
- ``threads``: operating-system threads (``Threads`` in ``/proc/self/status``), less
  Trio's cache of worker threads (proof checks run there; Trio bounds the cache and an
  idle worker exits by itself, so a second one seen after a busy game is no leak);
- ``tasks``: Trio tasks alive in the process (walked from the root task).

Leaks show as growth that keeps going once the process has warmed up, so the
report compares each peer's figures at game ``--baseline`` to its last game:
``growth`` is the relative change of the worst peer, and the run passes when
every growth is below ``--max-growth`` (10 %).  The baseline is game 20, or
half the run when the run is shorter than 40 games (:func:`baseline_for`); a
baseline at or after the last game would compare a game with itself (always
0 % growth), so it is refused, and the report names both games compared.  Every record
file of every peer is verified offline (``p2p.record.verify``) while the run goes
on; all peers of a game must agree on its ranking, state hash and record head.

The run is bounded: each game has a deadline, joiners try a bounded number of
times to reach the opener, and the whole run stops when a peer fails.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import queue
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

GAMES = ("slave", "slajens", "slaiga", "honest-slaiga", "aight-of-spaides")
OPTIONS: dict[str, dict[str, Any]] = {
    "slave": {"games": 1},
    "slajens": {"rounds": 3},
    "slaiga": {"max_turns": 24},
    "honest-slaiga": {"max_turns": 24},
    "aight-of-spaides": {"max_turns": 24},
}
"""Short tables, so that a run of hundreds of games takes minutes, not hours."""
LOOPBACK = "127.0.0.1"
METRICS = ("rss_kib", "fds", "threads", "tasks")
GAME_DEADLINE_S = 600.0
DIAL_TRIES = 300
DIAL_PAUSE_S = 0.1
WAIT_FOR_OPENER_S = 120.0


# ---------------------------------------------------------------------------
# One peer process
# ---------------------------------------------------------------------------


def _status_field(name: str) -> int:
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith(name + ":"):
                return int(line.split()[1])
    return -1


def trio_tasks() -> int:
    """Trio tasks alive in this run, counted from the root task down."""
    import trio

    count, todo = 0, [trio.lowlevel.current_root_task()]
    while todo:
        task = todo.pop()
        if task is None:
            continue
        count += 1
        for nursery in task.child_nurseries:
            todo.extend(nursery.child_tasks)
    return count


def _trio_workers() -> int:
    """Threads of Trio's worker cache (``trio.to_thread``), by the name Trio gives them."""
    return sum(t.name.startswith("Trio thread ") for t in threading.enumerate())


def sample() -> dict[str, int]:
    """This process's resources after a full garbage collection."""
    gc.collect()
    return {
        "rss_kib": _status_field("VmRSS"),
        "fds": len(os.listdir("/proc/self/fd")),
        "threads": _status_field("Threads") - _trio_workers(),
        "tasks": trio_tasks(),
    }


def _lines(path: Path) -> int:
    try:
        return path.read_text(encoding="utf-8").count("\n")
    except FileNotFoundError:
        return 0


async def _wait_for_opener(done_file: Path, games_done: int) -> None:
    """A joiner starts game ``i`` only once the opener has finished game ``i - 1``
    (so it cannot dial the previous table while that one lingers)."""
    import trio

    with trio.fail_after(WAIT_FOR_OPENER_S):
        while _lines(done_file) < games_done:
            await trio.sleep(0.05)


async def _play_one(index: int, args: argparse.Namespace) -> dict[str, Any]:
    import trio

    from engine import registry
    from engine.options import resolve_options
    from p2p.errors import P2PError
    from p2p.net.node import Node, NodeConfig

    game = GAMES[index % len(GAMES)]
    opener = args.seat == 0
    cfg = NodeConfig(
        name=f"soak-{args.seat}",
        state_dir=Path(args.state_dir),
        host=LOOPBACK,
        port=args.port if opener else 0,
        interface=LOOPBACK,
        use_discovery=opener,
        linger_s=args.linger,
    )
    with trio.fail_after(GAME_DEADLINE_S):
        if opener:
            options = resolve_options(registry.get(game).game_class.OPTIONS, OPTIONS.get(game, {}))
            result = await Node(cfg).open(game, args.seats, options)
        else:
            await _wait_for_opener(Path(args.opener_out), index)
            for attempt in range(DIAL_TRIES):
                try:
                    result = await Node(cfg).join(peer=f"{LOOPBACK}:{args.port}")
                    break
                except (P2PError, OSError):
                    if attempt == DIAL_TRIES - 1:
                        raise
                    await trio.sleep(DIAL_PAUSE_S)
    summary = result.game_summary()
    if summary["game"] != game:
        raise RuntimeError(f"game {index}: joined a {summary['game']} table, expected {game}")
    return {"index": index, **summary, **sample()}


def peer_main(args: argparse.Namespace) -> int:
    import trio

    from p2p.net import netguard

    netguard.arm_from_environment()
    out = Path(args.out)

    async def run() -> None:
        for index in range(args.games):
            row = await _play_one(index, args)
            with out.open("a", encoding="utf-8") as f:
                f.write(json.dumps(row, sort_keys=True) + "\n")

    trio.run(run)
    return 0


# ---------------------------------------------------------------------------
# The run: spawn the peers, verify as records arrive, report
# ---------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        return int(s.getsockname()[1])


def _rows(path: Path) -> list[dict[str, Any]]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    return [json.loads(line) for line in text.splitlines() if line.strip()]


DEFAULT_BASELINE = 20


def baseline_for(games: int, baseline: int | None) -> int:
    """The game the last one is compared with: ``baseline`` when given, else game 20, or
    half the run for a run shorter than 40 games.  Raises ``ValueError`` when there is
    nothing to compare (fewer than 2 games, or a baseline at or after the last game)."""
    if games < 2:
        raise ValueError(f"--games {games}: a soak needs at least 2 games to compare")
    if baseline is None:
        return min(DEFAULT_BASELINE, games // 2)
    if not 1 <= baseline < games:
        raise ValueError(
            f"--baseline {baseline} must be a game before the last (1 to {games - 1} for"
            f" --games {games}): comparing the last game with itself always shows 0% growth"
        )
    return baseline


def growth(rows: list[dict[str, Any]], baseline: int) -> dict[str, dict[str, float]]:
    """Each metric at game ``baseline`` (1-based), at the last game, and the change."""
    first, last = rows[min(baseline, len(rows)) - 1], rows[-1]
    out = {}
    for m in METRICS:
        a, b = first[m], last[m]
        out[m] = {"at_baseline": a, "last": b, "growth": (b - a) / a if a else 0.0}
    return out


class _Verifier:
    """Verifies record files on a worker thread while the games go on."""

    def __init__(self) -> None:
        self.todo: queue.Queue[tuple[int, int, str, dict[str, Any]] | None] = queue.Queue()
        self.problems: list[str] = []
        self.verified = 0
        self.thread = threading.Thread(target=self._work, daemon=True)
        self.thread.start()

    def _work(self) -> None:
        from crypto.memo import remembering

        # the seats' files of one game share their entries: a proof is checked once in all
        # of them (crypto.memo, as `slaiga verify` given several files; verdicts are
        # unchanged), in a scope of that game's alone, so a long soak keeps nothing more
        item = self.todo.get()
        while item is not None:
            game = item[0]
            with remembering():
                while item is not None and item[0] == game:
                    self._check(*item)
                    item = self.todo.get()

    def _check(self, index: int, seat: int, path: str, row: dict[str, Any]) -> None:
        from p2p.record.verify import verify_record_file

        report = verify_record_file(path)
        if not report.ok:
            self.problems.append(f"game {index} seat {seat}: {report.failure}")
        elif report.head != row["record_head"] or not report.finished:
            self.problems.append(f"game {index} seat {seat}: record does not match result")
        elif list(report.ranking or ()) != row["ranking"]:
            self.problems.append(f"game {index} seat {seat}: ranking differs on replay")
        self.verified += 1

    def finish(self) -> None:
        self.todo.put(None)
        self.thread.join()


def _check_game(index: int, rows: list[dict[str, Any]]) -> list[str]:
    problems = []
    for key in ("table_id", "ranking", "state_hash", "record_head"):
        if len({repr(r[key]) for r in rows}) != 1:
            problems.append(f"game {index}: peers disagree on {key}")
    for r in rows:
        if not r["finished"] or r["culprit"] is not None:
            problems.append(f"game {index} seat {r['seat']}: unfinished or convicted")
    return problems


def run(args: argparse.Namespace) -> dict[str, Any]:
    tmp = Path(tempfile.mkdtemp(prefix="slaiga-soak-"))
    port = _free_port()
    env = dict(os.environ, SLAIGA_INTERFACE=LOOPBACK, SLAIGA_LOOPBACK_ONLY="1")
    outs = [tmp / f"peer{s}.jsonl" for s in range(args.seats)]
    procs = []
    for seat in range(args.seats):
        cmd = [sys.executable, "-m", "bench.soak", "--peer-seat", str(seat)]
        cmd += ["--port", str(port), "--games", str(args.games), "--seats", str(args.seats)]
        cmd += ["--state-dir", str(tmp / f"state{seat}"), "--out", str(outs[seat])]
        cmd += ["--opener-out", str(outs[0]), "--linger", str(args.linger)]
        log = open(tmp / f"peer{seat}.log", "w", encoding="utf-8")  # noqa: SIM115
        procs.append((subprocess.Popen(cmd, stdout=log, stderr=log, env=env), log))
    verifier = _Verifier()
    checked = 0
    problems: list[str] = []
    started = time.monotonic()
    deadline = started + GAME_DEADLINE_S * max(1, args.games)
    try:
        while checked < args.games and time.monotonic() < deadline:
            rows = [_rows(p) for p in outs]
            while checked < args.games and all(len(r) > checked for r in rows):
                game_rows = [r[checked] for r in rows]
                problems += _check_game(checked, game_rows)
                for seat, row in enumerate(game_rows):
                    verifier.todo.put((checked, seat, row["record"], row))
                checked += 1
                if not args.json:
                    spent = time.monotonic() - started
                    print(
                        f"game {checked}/{args.games} ({game_rows[0]['game']}) agreed;"
                        f" {spent:.0f}s; rss {[r['rss_kib'] // 1024 for r in game_rows]} MiB",
                        file=sys.stderr,
                    )
            failed = [p for p, _ in procs if p.poll() not in (None, 0)]
            if failed:
                problems.append("a peer process failed; see its log in " + str(tmp))
                break
            time.sleep(0.2)
        else:
            if checked < args.games:
                problems.append("the run ran out of time")
    finally:
        for p, log in procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
            log.close()
        verifier.finish()
    problems += verifier.problems
    peers = [_rows(p) for p in outs]
    report: dict[str, Any] = {
        "games": checked,
        "seats": args.seats,
        "verified_records": verifier.verified,
        "seconds": round(time.monotonic() - started, 1),
        "baseline_game": min(args.baseline, checked),
        "last_game": checked,
        "max_growth": args.max_growth,
        "problems": problems,
        "logs": str(tmp),
    }
    if checked:
        per_peer = [growth(rows[:checked], args.baseline) for rows in peers]
        report["peers"] = per_peer
        report["worst_growth"] = {m: max(p[m]["growth"] for p in per_peer) for m in METRICS}
        for m, g in report["worst_growth"].items():
            if g > args.max_growth:
                problems.append(f"{m} grew {g:.1%} from game {report['baseline_game']} to the last")
    report["ok"] = not problems
    if report["ok"] and not args.keep:
        shutil.rmtree(tmp, ignore_errors=True)
        report["logs"] = None
    return report


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="slaiga bench soak",
        description="Play many networked bot games back to back on loopback and watch each "
        "peer process for growing memory, file descriptors, threads and Trio tasks.",
    )
    p.add_argument("--games", type=int, default=200, help="games to play (default 200)")
    p.add_argument("--seats", type=int, default=4, help="peer processes, 4 to 6 (default 4)")
    p.add_argument(
        "--baseline",
        type=int,
        default=None,
        help=f"compare the last game to this one, which must come before it (default"
        f" {DEFAULT_BASELINE}, or half the run when --games is below {2 * DEFAULT_BASELINE})",
    )
    p.add_argument(
        "--max-growth", type=float, default=0.10, help="allowed growth, 0.10 = 10%% (default)"
    )
    p.add_argument(
        "--keep",
        action="store_true",
        help="keep the peers' records and logs (they are kept anyway when the run fails)",
    )
    p.add_argument("--linger", type=float, default=0.5, help=argparse.SUPPRESS)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    # the peer process's own arguments (internal)
    p.add_argument("--peer-seat", dest="seat", type=int, default=None, help=argparse.SUPPRESS)
    p.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    p.add_argument("--state-dir", default=None, help=argparse.SUPPRESS)
    p.add_argument("--out", default=None, help=argparse.SUPPRESS)
    p.add_argument("--opener-out", default=None, help=argparse.SUPPRESS)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.seat is not None:
        return peer_main(args)
    if not 4 <= args.seats <= 6:
        print("slaiga bench soak: --seats must be 4 to 6 (every game is played)", file=sys.stderr)
        return 2
    try:
        args.baseline = baseline_for(args.games, args.baseline)
    except ValueError as exc:
        print(f"slaiga bench soak: {exc}", file=sys.stderr)
        return 2
    report = run(args)
    if args.json:
        print(json.dumps(report, sort_keys=True))
    else:
        print(f"compared game {report['baseline_game']} with game {report['last_game']}")
        for m, g in report.get("worst_growth", {}).items():
            print(f"{m:8} worst growth from game {report['baseline_game']}: {g:+.1%}")
        print(f"{report['games']} games, {report['verified_records']} records verified")
        for problem in report["problems"]:
            print("problem:", problem)
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
