"""``slaiga bench table``: whole games over loopback peer processes against the same
protocol code run in one process.

For each game, 4 seats of heuristic bots: ``wall_s`` is the game's time over
real ``cli.net`` peer processes on loopback (from the table being formed to the
record being complete, as the opener saw it: process start and forming are
not counted), ``inprocess_s`` the time of a game of the
same game and options with every seat's protocol code in this process
(``p2p.table.local_table``: same proofs and checks, no sockets), the median per entry of 3 such games in the bench's
process (the first also imports the game's modules, which the peers do before their
table forms).  Cards and dice are
secret randomness, so the two are different deals of the same game: ``ratio``
compares the time per record entry (``ratio_raw`` the plain times).
``action_ms_median``/``action_ms_p90``: from the step before an action to the
end of everything that action caused (reveals, proofs), for actions whose cycle
needs no shuffle; ``first_decision_s``: from the table being formed to the
first decision being owed (``first_decision_cpu_s``: the CPU seconds, every thread,
that all the seats' processes used in that time, from their ``--events`` lines; divided
by the machine's ``cores`` it is the least that time can be here, since every seat
checks every other seat's shuffle); ``next_deal_s``: in a game of several deals (Slave is
played as a match of two), from the last action of a deal to the first decision of
the next one being owed (the worst deal; ``next_deal_s_all`` each of them, ``None``
for a game of one deal).  ``loop_block_ms_max``/``loop_block_ms_p99``: how late a
watchdog task in each peer's Trio loop woke (p2p/net/loopwatch.py, a 10 ms sleep again
and again) while the game ran, over the samples of every peer
(``..._per_peer``: each peer's own); a long proof or check on the loop shows as a
late wake.  On a loaded machine the OS scheduler adds to it.  Peers make and check
shuffle proofs and tokens in worker threads (p2p/net/offload.py); ``--offload both``
plays each game first with them on the event loop and reports those figures under
``on_loop``.  With ``--spectators N`` (default 2) each game is played twice, without
spectators and with N ``slaiga watch`` processes following it: ``action_ms_median`` is the
figure with spectators, ``action_ms_median_no_spectators`` without, and
``action_ms_ratio_spectators`` their ratio (target: at most 1.10);
``spectator_lag_ms_median`` (and ``_p90``) is, over every record step, the time from the
first seat completing it (the signer completes it as it signs) to a spectator completing
it (checked, on its screen), from the peers' ``CLOCK_MONOTONIC`` (one clock per machine).
On this one machine the spectators' checking (every proof of every seat) competes with the
seats for the same cores, which a LAN, where each spectator has a machine of its own, does
not: ``--spectator-priority low`` runs them as ``slaiga watch --priority low`` does, at a
lower CPU priority, to see what the seats pay for their links alone (the spectators' lag
then grows when the cores are busy).
Under ``survive`` (unless ``--no-survive``), for each game the cost of the ``survive``
option (issue 21): ``key_round`` the key round's time and bytes without and with the
escrow (in one process), and ``loss`` a table of peer processes where one is killed for
good: ``limit_to_decision_s`` from the absence limit to the next decision.  With
spectators, ``no_spectators`` holds the main figures of the game played without them.
``targets`` (and ``no_spectators.targets``): each of issue 19's targets set for the
game, with its figure, its bound and whether this run met it.  All figures from one run
on this machine.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench import help_text
from engine.words.names import BOT_NAMES
from p2p.net.loopwatch import summarize
from p2p.table import local_table
from p2p.table.seat import game_of

GAMES = ("slave", "slajens", "slaiga", "honest-slaiga", "aight-of-spaides")
OPTIONS = {"slave": {"games": 2}, "slajens": {"rounds": 5}}
LOOPBACK = "127.0.0.1"
ON_LOOP_KEYS = (
    "wall_s",
    "entries",
    "first_decision_s",
    "next_deal_s",
    "action_ms_median",
    "action_ms_p90",
    "loop_block_ms_max",
    "loop_block_ms_p99",
)


def _peer(args: list[str], env: dict[str, str]) -> tuple[subprocess.Popen, list[str]]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "cli.net", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    lines: list[str] = []

    def read() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line)

    threading.Thread(target=read, daemon=True).start()
    return proc, lines


def _watcher(
    address: str, env: dict[str, str], priority: str = "normal"
) -> tuple[subprocess.Popen, list[str]]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "cli", "watch", "--peer", address, "--json", "--trace"]
        + ["--priority", priority],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    lines: list[str] = []

    def read() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line)

    threading.Thread(target=read, daemon=True).start()
    return proc, lines


def _events(lines: list[str]) -> list[dict[str, Any]]:
    """The ``--events`` objects among a peer's stderr lines (keys sorted: never rely on
    which comes first)."""
    return [json.loads(x) for x in lines if x.startswith("{")]


def _step_times(events: list[dict[str, Any]]) -> dict[int, float]:
    """When one peer completed each record step, from its :func:`_events`."""
    return {e["step"]: e["t"] for e in events if e.get("event") == "step"}


def _cpu_to_step(events: list[dict[str, Any]], step: int) -> float | None:
    """The CPU seconds (every thread) one peer used from the table being meshed to its
    completing record step ``step``, from its :func:`_events` (``None`` if they do not say)."""
    start = end = None
    for e in events:
        if e.get("event") == "meshed" and start is None:
            start = e.get("cpu")
        elif e.get("event") == "step" and e.get("step") == step and end is None:
            end = e.get("cpu")
    return None if start is None or end is None else end - start


def peer_name(i: int) -> str:
    """Peer ``i``'s name (the opener is 0): every peer its own, so the players (and the
    report's ``left``) tell them apart."""
    names = ("Ann", *BOT_NAMES)
    return names[i] if i < len(names) else f"Peer {i + 1}"


def _start_opener(game, seats, opts, common, tmp, env):  # noqa: ANN001, ANN202
    """Start the opener peer and wait (60 s at most) for the address it listens on."""
    opener, lines = _peer(
        ["open", game, "--seats", str(seats), "--no-announce", "--trace-steps", *opts, *common]
        + ["--state-dir", str(tmp / "p0"), "--name", peer_name(0)],
        env,
    )
    address = None
    deadline = time.monotonic() + 60
    while address is None and time.monotonic() < deadline:
        for line in list(lines):
            if '"event": "listening"' in line:
                address = json.loads(line)["address"]
        time.sleep(0.02)
    if address is None:
        opener.kill()
        raise RuntimeError("the opener did not listen")
    return opener, lines, address


def _seat_dir(tmp: Path, i: int) -> list[str]:
    """Joiner ``i``'s state folder and name."""
    return ["--state-dir", str(tmp / f"p{i}"), "--name", peer_name(i)]


def network_game(
    game: str,
    seats: int,
    tmp: Path,
    offload: bool = True,
    spectators: int | None = None,
    priority: str = "normal",
) -> dict[str, Any]:
    """One game over peer processes, every seat tracing its steps (their times, and CPU
    for :func:`_cpu_to_step`); with ``spectators``, that many ``slaiga watch`` processes
    follow the table."""
    env = dict(os.environ, SLAIGA_INTERFACE=LOOPBACK, SLAIGA_LOOPBACK_ONLY="1")
    opts = [f"--option={k}={v}" for k, v in OPTIONS.get(game, {}).items()]
    common = ["--bot", "heuristic", "--json", "--events", "--linger", "5", "--loop-watch"]
    common.append("--trace-steps")
    if not offload:
        common.append("--no-offload")
    opener, lines, address = _start_opener(game, seats, opts, common, tmp, env)
    watchers = [_watcher(address, env, priority) for _ in range(spectators or 0)]
    # the spectators are up (they wait in the lobby for the table to form) before the
    # joiners start: a slow start at low priority must not make them miss a short game
    deadline = time.monotonic() + 120
    while watchers and time.monotonic() < deadline:
        if all(any("waiting for players" in x for x in ls) for _, ls in watchers):
            break
        time.sleep(0.05)
    joiners = [
        _peer(["join", "--peer", address, *common, *_seat_dir(tmp, i)], env)
        for i in range(1, seats)
    ]
    results = []
    for proc in [opener, *(p for p, _ in joiners)]:
        assert proc.stdout is not None
        out = proc.stdout.read()  # stderr is read by the thread started in _peer
        proc.wait(timeout=1800)
        results.append(json.loads(out.strip().splitlines()[-1]))
    peer_events = [_events(ls) for ls in [lines, *(ls for _, ls in joiners)]]
    events = peer_events[0]  # the opener's
    formed = next(e["t"] for e in events if e["event"] == "meshed")
    finished = next(e["t"] for e in events if e["event"] == "finished")
    step_events = [e for e in events if e["event"] == "step"]
    steps = [(e["t"], e["kind"]) for e in step_events]
    first_action = next(i for i, (_, k) in enumerate(steps) if k == "action")
    first_decision = steps[first_action - 1][0] - formed
    decision_step = step_events[first_action - 1]["step"]
    cpu = [_cpu_to_step(evs, decision_step) for evs in peer_events]
    latencies = []
    cycle_start, cycle_kinds = None, []
    for i, (t, kind) in enumerate(steps):
        if kind == "action":
            if cycle_start is not None and "shuffle" not in cycle_kinds:
                latencies.append((steps[i - 1][0] - cycle_start) * 1000)
            cycle_start = steps[i - 1][0] if i else t
            cycle_kinds = []
        cycle_kinds.append(kind)
    next_deal = next_deal_times(steps)
    heads = {r["record_head"] for r in results}
    watches = [e["samples"] for evs in peer_events for e in evs if e.get("event") == "loop_watch"]
    per_peer = [summarize(samples, formed, finished) for samples in watches]
    lag: dict[str, Any] = {}
    if spectators:
        signed: dict[int, float] = {}
        for evs in peer_events:
            for step, t in _step_times(evs).items():
                signed[step] = min(t, signed.get(step, t))
        lags = []
        for proc, wlines in watchers:
            proc.wait(timeout=600)
            out = proc.stdout.read() if proc.stdout is not None else ""
            result = json.loads(out.strip().splitlines()[-1])
            if result.get("record_head") not in heads:
                raise RuntimeError(f"a spectator disagrees with the seats: {result}")
            trace = next(json.loads(x) for x in wlines if x.startswith('{"watch_trace"'))
            lags += [(t - signed[s]) * 1000 for s, t in trace["watch_trace"] if s in signed]
        lag = {
            "spectators": spectators,
            "spectator_lag_ms_median": statistics.median(lags) if lags else None,
            "spectator_lag_ms_p90": statistics.quantiles(lags, n=10)[-1] if len(lags) > 9 else None,
        }
    pooled = summarize([s for samples in watches for s in samples], formed, finished)
    return {
        "loop_block_ms_max": pooled["loop_block_ms_max"],
        "loop_block_ms_p99": pooled["loop_block_ms_p99"],
        "loop_block_ms_max_per_peer": [p["loop_block_ms_max"] for p in per_peer],
        "loop_block_ms_p99_per_peer": [p["loop_block_ms_p99"] for p in per_peer],
        "wall_s": finished - formed,
        "entries": results[0]["entries"],
        "agree": len(heads) == 1,
        "first_decision_s": first_decision,
        "first_decision_cpu_s": None if None in cpu else sum(cpu),  # type: ignore[arg-type]
        "next_deal_s": max(next_deal) if next_deal else None,
        "next_deal_s_all": next_deal,
        "action_ms_median": statistics.median(latencies) if latencies else None,
        "action_ms_p90": statistics.quantiles(latencies, n=10)[-1] if len(latencies) > 9 else None,
        "actions": len(latencies),
        **lag,
    }


NO_SPECTATOR_KEYS = (
    "wall_s",
    "first_decision_s",
    "first_decision_cpu_s",
    "next_deal_s",
    "action_ms_median",
    "action_ms_p90",
    "loop_block_ms_max",
    "loop_block_ms_p99",
)
TARGETS: dict[str, tuple[float, tuple[str, ...]]] = {
    "first_decision_s": (0.5, ("slave", "slaiga", "aight-of-spaides")),
    "next_deal_s": (0.3, ("slave",)),
    "action_ms_p90": (20.0, GAMES),
    "ratio": (1.5, ("slajens",)),
    "loop_block_ms_p99": (20.0, GAMES),
    "loop_block_ms_max": (100.0, GAMES),
}
"""Issue 19's targets for a table of 4 seats: each figure's upper bound and the games it
is set for (the first decision for the card games with a shuffled deal, the next deal
for the game of several deals, the per-entry ratio for the dice game)."""


def targets(game: str, row: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """For each of issue 19's targets set for ``game``: the figure, its bound, and whether
    this run met it (``met`` is ``None`` for a figure the run has none of)."""
    out = {}
    for key, (bound, games) in TARGETS.items():
        if game in games:
            value = row.get(key)
            out[key] = {
                "value": value,
                "at_most": bound,
                "met": None if value is None else value <= bound,
            }
    return out


def next_deal_times(steps: list[tuple[float, str]]) -> list[float]:
    """For each deal after the first (a deal starts with a shuffle after an action): the
    seconds from the step of the last action before it to the step after which the next
    action (the first decision of the new deal) was owed."""
    out: list[float] = []
    last_action: float | None = None
    shuffled = False
    for i, (t, kind) in enumerate(steps):
        if kind == "action":
            if shuffled and last_action is not None:
                out.append(steps[i - 1][0] - last_action)
            shuffled = False
            last_action = t
        elif kind == "shuffle":
            shuffled = True
    return out


INPROCESS_RUNS = 3
"""In-process games per game; the baseline is the median of their times per entry."""


def inprocess_game(game: str, seats: int, runs: int = INPROCESS_RUNS) -> dict[str, Any]:
    """The in-process baseline: ``runs`` games in this process, and the one of median time
    per entry (``inprocess_s`` its time, ``inprocess_entries`` its entries,
    ``inprocess_ms_per_entry_runs`` each game's).  The first game in this process also pays
    for importing and compiling the game's modules, which the peers do before their table
    forms (their ``wall_s`` starts there), and a single game of a fraction of a second is
    at the mercy of whatever else the machine runs: the median of a few is the figure."""
    played = []
    for _ in range(max(1, runs)):
        t = time.perf_counter()
        table = local_table.new_table(game, seats, OPTIONS.get(game))
        local_table.run(table)
        elapsed = time.perf_counter() - t
        entries = sum(1 for _ in table.records[0].signed_from(1))
        played.append((elapsed / max(1, entries), elapsed, entries))
    per_entry, elapsed, entries = sorted(played)[(len(played) - 1) // 2]
    return {
        "inprocess_s": elapsed,
        "inprocess_entries": entries,
        "inprocess_ms_per_entry_runs": [round(p * 1000, 4) for p, _, _ in played],
    }


def escrow_key_round(game: str, seats: int, repeats: int = 7) -> dict[str, Any]:
    """The key round with and without ``survive`` in one process (every seat's protocol
    code, as :func:`inprocess_game`): seconds until every seat's record holds the joint key
    (and, with the option, the escrow checked by every receiver; the median of
    ``repeats`` runs, taken in turns), and the bytes signed."""
    out: dict[str, Any] = {}
    for survive, repeat in [(s, r) for r in range(repeats) for s in (False, True)]:
        opts = {**OPTIONS.get(game, {}), "survive": survive}
        table = local_table.new_table(game, seats, opts)
        t0 = time.perf_counter()
        took: dict[str, float] = {}

        def keyed(
            t: local_table.LocalTable,
            survive: bool = survive,
            took: dict[str, float] = took,
            t0: float = t0,
        ) -> None:
            if "s" in took:
                return
            games = [game_of(r) for r in t.records]
            if all(g is not None and g.joint is not None for g in games) and (
                not survive or all(g.escrow_ready for g in games)  # type: ignore[union-attr]
            ):
                took["s"] = time.perf_counter() - t0
                raise _KeyRoundDone

        with contextlib.suppress(_KeyRoundDone):
            local_table.run(table, on_entry=keyed)
        size = sum(len(s.entry) + len(s.signature) for s in table.log)
        row = out.setdefault("escrow" if survive else "plain", {"runs": [], "bytes": size})
        row["runs"].append(took["s"])
        if repeat == repeats - 1:
            row["s"] = statistics.median(row.pop("runs"))
    out["extra_s"] = out["escrow"]["s"] - out["plain"]["s"]
    out["ratio"] = out["escrow"]["s"] / out["plain"]["s"]
    out["extra_bytes"] = out["escrow"]["bytes"] - out["plain"]["bytes"]
    return out


class _KeyRoundDone(Exception):
    pass


def loss_game(game: str, seats: int, tmp: Path, absent_after: int = 1) -> dict[str, Any]:
    """Peers with ``survive`` on; one joiner is killed (``SIGKILL``) once a few actions
    are in, and never comes back.  ``limit_to_decision_s``: at the opener, from signing
    ``absent`` (the moment its absence limit passed) to the next decision being owed
    (the step before the next ``action`` step); ``kill_to_decision_s`` from the kill."""
    env = dict(os.environ, SLAIGA_INTERFACE=LOOPBACK, SLAIGA_LOOPBACK_ONLY="1")
    options = {**OPTIONS.get(game, {}), "survive": "on", "absent_after": absent_after}
    opts = [f"--option={k}={v}" for k, v in options.items()]
    common = ["--bot", "heuristic", "--json", "--events", "--linger", "5"]
    opener, lines, address = _start_opener(game, seats, opts, common, tmp, env)
    joiners = [
        _peer(["join", "--peer", address, *common, *_seat_dir(tmp, i)], env)
        for i in range(1, seats)
    ]
    victim = joiners[-1][0]
    deadline = time.monotonic() + 300
    while sum('"kind": "action"' in x for x in list(lines)) < 3:
        if time.monotonic() > deadline or opener.poll() is not None:
            opener.kill()
            for p, _ in joiners:
                p.kill()
            raise RuntimeError("the game never got going: " + "".join(lines[-5:]))
        time.sleep(0.01)
    killed = time.monotonic()  # the peers' event times are this clock too
    victim.kill()
    victim.wait()
    results = []
    for proc in [opener, *(p for p, _ in joiners[:-1])]:
        assert proc.stdout is not None
        out = proc.stdout.read()
        proc.wait(timeout=1800)
        results.append(json.loads(out.strip().splitlines()[-1]))
    events = _events(lines)
    named = next((e["t"] for e in events if e["event"] == "named_absent"), None)
    steps = [(e["t"], e["kind"]) for e in events if e["event"] == "step"]
    after = [i for i, (t, k) in enumerate(steps) if named and t >= named and k == "action"]
    decision = steps[after[0] - 1][0] if after else None
    heads = {r["record_head"] for r in results}
    return {
        "absent_after_s": absent_after,
        "limit_to_decision_s": (decision - named) if decision and named else None,
        "kill_to_decision_s": (decision - killed) if decision is not None else None,
        "agree": len(heads) == 1,
        "killed": peer_name(seats - 1),
        "left": [p["name"] for p in results[0].get("left", [])],
    }


def _rounded(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, 4)
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    return value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="slaiga bench table", description=help_text(__doc__))
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--games", nargs="*", default=list(GAMES), choices=GAMES)
    parser.add_argument("--seats", type=int, default=4)
    parser.add_argument(
        "--offload",
        choices=("on", "off", "both"),
        default="on",
        help="proofs made and checked in worker threads (on), on the event loop (off), or "
        "both: each game is played first with off, reported under 'on_loop', then with on",
    )
    parser.add_argument(
        "--no-survive",
        dest="survive",
        action="store_false",
        help="leave out the cost of the survive option (reported under 'survive': the "
        "escrow's extra time in the key round, in process, and over peer processes with one "
        "killed for good, the time from the absence limit to the next decision)",
    )
    parser.add_argument(
        "--spectators",
        type=int,
        default=2,
        help="play each game also with this many `slaiga watch` spectators (default 2; 0: "
        "play it once, without)",
    )
    parser.add_argument(
        "--spectator-priority",
        choices=("low", "normal"),
        default="normal",
        help="the spectators' CPU priority (`slaiga watch --priority`; default normal: their "
        "proof checks compete with the seats for this one machine's cores, which a LAN, "
        "where each has its own machine, does not see; low: they take what the seats leave)",
    )
    parser.add_argument(
        "--state-root",
        default=None,
        help="directory for the peers' state directories (default: the system's temporary "
        "directory); e.g. a tmpfs to see what the record files' fsyncs cost",
    )
    args = parser.parse_args(argv)
    report: dict[str, Any] = {}
    for game in args.games:
        if not args.json:
            print(f"{game}: playing over {args.seats} peer processes…", file=sys.stderr)
        before: dict[str, Any] | None = None
        if args.offload == "both":
            with tempfile.TemporaryDirectory(prefix="slaiga-bench-", dir=args.state_root) as tmp:
                before = network_game(game, args.seats, Path(tmp), offload=False)
        offload = args.offload != "off"
        alone: dict[str, Any] | None = None
        if args.spectators > 0:
            with tempfile.TemporaryDirectory(prefix="slaiga-bench-", dir=args.state_root) as tmp:
                alone = network_game(game, args.seats, Path(tmp), offload, spectators=0)
        with tempfile.TemporaryDirectory(prefix="slaiga-bench-", dir=args.state_root) as tmp:
            net = network_game(
                game,
                args.seats,
                Path(tmp),
                offload,
                args.spectators or None,
                args.spectator_priority,
            )
        local = inprocess_game(game, args.seats)
        per_net = net["wall_s"] / max(1, net["entries"])
        per_local = local["inprocess_s"] / max(1, local["inprocess_entries"])
        row = {**net, **local, "ratio": per_net / per_local}
        row["ratio_raw"] = net["wall_s"] / local["inprocess_s"]
        row["cores"] = os.cpu_count()
        if before is not None:
            row["on_loop"] = {k: before[k] for k in ON_LOOP_KEYS}
        if alone is not None:
            row["action_ms_median_no_spectators"] = alone["action_ms_median"]
            row["wall_s_no_spectators"] = alone["wall_s"]
            per_alone = alone["wall_s"] / max(1, alone["entries"])
            row["no_spectators"] = {
                **{k: alone[k] for k in NO_SPECTATOR_KEYS},
                "ratio": per_alone / per_local,
            }
            if alone["action_ms_median"] and net["action_ms_median"]:
                row["action_ms_ratio_spectators"] = (
                    net["action_ms_median"] / alone["action_ms_median"]
                )
        row["targets"] = targets(game, row)
        if "no_spectators" in row:
            row["no_spectators"]["targets"] = targets(game, row["no_spectators"])
        report[game] = _rounded(row)
        if not args.json:
            r = report[game]
            print(
                f"{game:18} wall {r['wall_s']:.2f}s  in-process {r['inprocess_s']:.2f}s"
                f"  ratio/entry {r['ratio']:.2f}  action median {r['action_ms_median']} ms"
                f"  p90 {r['action_ms_p90']} ms  first decision {r['first_decision_s']:.2f}s"
                f"  next deal {r['next_deal_s']}s"
                f"  loop blocked max {r['loop_block_ms_max']} ms p99 {r['loop_block_ms_p99']} ms"
            )
            if "spectator_lag_ms_median" in r:
                print(
                    f"{'':18} {r['spectators']} spectators: lag median"
                    f" {r['spectator_lag_ms_median']} ms, action median"
                    f" {r['action_ms_median']} ms vs {r.get('action_ms_median_no_spectators')} ms"
                    " without"
                )
            if "on_loop" in r:
                print(f"{'':18} with proofs on the event loop: {r['on_loop']}")
    if args.survive:
        surv: dict[str, Any] = {}
        for game in args.games:
            with tempfile.TemporaryDirectory(prefix="slaiga-bench-", dir=args.state_root) as tmp:
                row = {
                    "key_round": escrow_key_round(game, args.seats),
                    "loss": loss_game(game, args.seats, Path(tmp)),
                }
            surv[game] = _rounded(row)
            if not args.json:
                k, loss = surv[game]["key_round"], surv[game]["loss"]
                print(
                    f"{game:18} survive: key round {k['plain']['s']:.3f}s -> "
                    f"{k['escrow']['s']:.3f}s (x{k['ratio']:.2f}, +{k['extra_bytes']} bytes)"
                    f"  absence limit to next decision {loss['limit_to_decision_s']}s"
                )
        report["survive"] = surv
    if args.json:
        print(json.dumps(report, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
