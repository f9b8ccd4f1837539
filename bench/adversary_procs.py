"""``slaiga bench adversary --procs``: deviating games over real peer processes on loopback.

Each game is a table of ``cli.net`` bot peers (one opener, the rest join by
address; every child on loopback only).  One seat runs the deviating peer
(:mod:`bench.adversary_peer`) with a random kind and entry; for ``twin`` the
seat is honest, and once the game runs the bench copies its state folder and
starts a second process on the copy (``resume``), so two processes run one
seat with the same keys and state.  Every honest peer's exit code and result,
and ``slaiga verify`` on its record file (a real subprocess), are checked
against the property of :mod:`bench.adversary`.  Silence limits are short
(``--max-wait-ms``) so that a silent seat ends a table within seconds.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from bench.adversary import FAILURES, GAMES, GameReport, Totals, _summary

LOOPBACK = "127.0.0.1"
KINDS = (
    "field",
    "entry",
    "raw",
    "kind",
    "replay",
    "equivocate",
    "lie",
    "withhold",
    "stop",
    "twin",
)
EXIT_OK, EXIT_ABANDONED, EXIT_CHEATER = 0, 3, 4
OPTIONS: dict[str, dict[str, Any]] = {
    "slave": {"games": 1},
    "slajens": {"rounds": 1},
    "slaiga": {"max_turns": 60},
    "honest-slaiga": {"max_turns": 60},
    "aight-of-spaides": {"max_turns": 60},
}
"""The shortest tables of each game (a process table costs seconds, most of them the
shuffles and the play after a deviation that was still legal): one deal, one round, a
turn cap; three seats wherever the game allows (Slave needs four)."""
NO_LIES = ("slajens",)
"""Games without a hidden claim to lie about (a table of these never reaches a lie)."""
OWN_ENTRIES = {"slajens": 12}
"""Fewer than the fewest entries a seat signs in such a table (measured: 13 in a
one-round Slåjens of three; 26 or more in the others): the deviation is drawn below
this, so that every table reaches it."""
OWN_ENTRIES_DEFAULT = 25
DECISIONS = {"slajens": 2}
"""The same for the decisions a twin race is drawn at (2 or more in one round of
Slåjens, 8 or more in the others)."""
DECISIONS_DEFAULT = 4
GAME_TIMEOUT_S = 240.0
MAX_WAIT_MS = 6000
DECIDE_MAX_MS = 12000
"""A seat that stops while it owes a decision is waited for this long (the default is
30 minutes: a person may think); the table's own limit, within the game's time."""
TWIN_DECIDE_MAX_MS = 30000
"""The same at a twin table: the seat's decision waits for its second process to resume
the copied state, which takes seconds on a loaded machine."""
STALL_MS = 1500
ADDRESS_TIMEOUT_S = 60.0
TWIN_LEAD_S = 90.0
"""How long the first twin waits for the second to sign its version at most."""
DEVIATOR_GRACE_S = 0.5
"""Once every honest peer exited: how long the deviator may take to exit on its own."""
POLL_S = 0.02


class _Peer:
    def __init__(self, cmd: list[str], env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True
        )
        self.out: list[str] = []
        self.err: list[str] = []
        self.threads = [
            threading.Thread(target=self._read, args=(pipe, lines), daemon=True)
            for pipe, lines in ((self.proc.stdout, self.out), (self.proc.stderr, self.err))
        ]
        for t in self.threads:
            t.start()

    @staticmethod
    def _read(pipe: Any, lines: list[str]) -> None:
        for line in pipe:
            lines.append(line)

    def event(self, name: str) -> dict[str, Any] | None:
        for line in list(self.err):
            if f'"event": "{name}"' in line:
                try:
                    return json.loads(line)
                except ValueError:
                    continue
        return None

    def wait(self, deadline: float) -> int | None:
        try:
            self.proc.wait(timeout=max(0.5, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            return None
        for t in self.threads:
            t.join(timeout=5)
        return self.proc.returncode

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def result(self) -> dict[str, Any] | None:
        for line in reversed(self.out):
            line = line.strip()
            if line.startswith("{"):
                try:
                    return json.loads(line)
                except ValueError:
                    return None
        return None


def _env(i: int) -> dict[str, str]:
    return dict(
        os.environ,
        SLAIGA_INTERFACE=LOOPBACK,
        SLAIGA_LOOPBACK_ONLY="1",
        PYTHONHASHSEED=str(101 + i),
    )


def _common(i: int, state: Path, decide_max_ms: int = DECIDE_MAX_MS) -> list[str]:
    return [
        "--json",
        "--events",
        "--bot",
        "heuristic",
        "--name",
        f"p{i}",
        "--state-dir",
        str(state),
        "--max-wait-ms",
        str(MAX_WAIT_MS),
        "--stall-after-ms",
        str(STALL_MS),
        "--decide-stall-ms",
        str(STALL_MS),
        "--decide-max-ms",
        str(decide_max_ms),
        "--linger",
        "1",
    ]


def _verify_all(paths: list[str]) -> dict[str, Any]:
    """``slaiga verify --json`` on every file in one subprocess
    (``python -m bench.adversary_peer verify``): its JSON by path."""
    paths = [p for p in paths if p]
    if not paths:
        return {}
    proc = subprocess.run(
        [sys.executable, "-m", "bench.adversary_peer", "verify", *paths],
        capture_output=True,
        text=True,
        timeout=600,
    )
    out: dict[str, Any] = {}
    for line in proc.stdout.splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            continue
        text = row.get("out", "")
        try:
            out[row["path"]] = json.loads(text)
        except ValueError:
            out[row["path"]] = {"crash": text[-400:]}
    if "Traceback" in proc.stderr:
        for p in paths:
            out.setdefault(p, {"crash": proc.stderr[-800:]})
    return out


_VERIFIED: dict[str, Any] = {}
"""Verify's JSON by file path, filled for a game's honest files at once (:func:`_judge`)."""


def _verify(path: str) -> dict[str, Any] | None:
    if path in _VERIFIED:
        return _VERIFIED.pop(path)
    proc = subprocess.run(
        [sys.executable, "-m", "cli", "verify", "--json", path],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if "Traceback" in proc.stderr:
        return {"crash": proc.stderr[-800:]}
    try:
        return json.loads(proc.stdout)
    except ValueError:
        return {"crash": proc.stdout[-400:] + proc.stderr[-400:]}


def _record_file(state: Path) -> str | None:
    files = sorted((state / "tables").glob("*.rec")) if (state / "tables").exists() else []
    if not files:
        files = sorted(state.rglob("*.rec"))
    return str(files[-1]) if files else None


def play_game(seed: int, tmp: Path, kind: str | None = None) -> GameReport:
    rng = random.Random(seed)
    game = rng.choice(GAMES)
    seats = 4 if game == "slave" else 3
    kind = kind or rng.choice(KINDS)
    if kind == "lie" and game in NO_LIES:
        game = rng.choice([g for g in GAMES if g not in NO_LIES])
        seats = 4 if game == "slave" else 3
    dev = rng.randrange(1, seats)
    if kind == "twin":
        at = rng.randrange(1, DECISIONS.get(game, DECISIONS_DEFAULT))
    else:
        at = rng.randrange(1, OWN_ENTRIES.get(game, OWN_ENTRIES_DEFAULT))
    report = GameReport(seed, game, seats, kind, "", "")
    opts = [f"--option={k}={v}" for k, v in OPTIONS.get(game, {}).items()]
    peers: list[_Peer] = []
    states = [tmp / f"g{seed}" / f"p{i}" for i in range(seats)]
    twin: _Peer | None = None
    try:
        # every peer starts at once (a start-up is mostly imports); the joiners wait for
        # the opener's address in a file (bench/adversary_join.py)
        game_dir = tmp / f"g{seed}"
        game_dir.mkdir(parents=True, exist_ok=True)
        address_file = game_dir / "address"
        go_file = game_dir / "go"
        for i in range(seats):
            if i == 0:
                args = ["open", game, "--seats", str(seats), "--no-announce", *opts]
            else:
                args = ["join"]
            args += _common(i, states[i], TWIN_DECIDE_MAX_MS if kind == "twin" else DECIDE_MAX_MS)
            if i == dev:
                what = {"kind": kind, "at": at, "seed": seed, "go": str(go_file)}
                spec = json.dumps({**what, "address": str(address_file)})
                cmd = [sys.executable, "-m", "bench.adversary_peer", spec, *args]
            elif i == 0:
                cmd = [sys.executable, "-m", "cli.net", *args]
            else:
                cmd = [sys.executable, "-m", "bench.adversary_join", str(address_file), *args]
            peers.append(_Peer(cmd, _env(i)))
        if kind == "twin":
            # the second twin starts with the table too (a start-up is seconds on a
            # loaded machine, and the table waits for the seat meanwhile); it resumes the
            # first one's copied state once the bench names the table (_start_twin)
            spec = json.dumps(
                {
                    "kind": "twin-b",
                    "at": 1,
                    "seed": seed,
                    "go": str(go_file),
                    "table": str(game_dir / "twin-table"),
                }
            )
            args = _common(dev, states[dev].parent / f"p{dev}-twin", TWIN_DECIDE_MAX_MS)
            cmd = [sys.executable, "-m", "bench.adversary_peer", "twin", spec, *args]
            twin = _Peer(cmd, _env(dev))
        listening = time.monotonic() + ADDRESS_TIMEOUT_S
        if not _until(lambda: peers[0].event("listening") is not None, peers[0], listening):
            report.outcome = "crash"
            report.failures.append("crashes")
            report.note = "the opener never listened: " + "".join(peers[0].err)[-800:]
            return report
        ready = address_file.with_suffix(".part")
        ready.write_text(peers[0].event("listening")["address"])  # type: ignore[index]
        ready.rename(address_file)
        deadline = time.monotonic() + GAME_TIMEOUT_S
        if twin is not None:
            if not _start_twin(peers[dev], twin, states[dev], deadline, game_dir):
                twin.kill()
            report.detail = "started"
        codes = {i: peers[i].wait(deadline) for i in range(seats) if i != dev}
        # the honest peers are done, and the judge reads only them and what the deviator
        # said it did (said before it did it): a deviator that still runs (its own record
        # took what it signed, and it waits for a table that is over) is stopped now
        twin_text = ""
        for p in (peers[dev], twin):
            if p is not None and p.wait(time.monotonic() + DEVIATOR_GRACE_S) is None:
                p.kill()
                p.wait(time.monotonic() + 5)
        if twin is not None:
            tail = [line.strip()[:300] for line in twin.err if line.strip()][-3:]
            twin_text = f"twin exit {twin.proc.returncode}: {' | '.join(tail)}"
        ev = peers[dev].event("deviation")
        if twin is not None:
            ev = twin.event("deviation")
            report.detail = str(ev.get("detail", "")) if ev is not None else "no chance"
            sent = all(p.event("twin_sends") for p in (peers[dev], twin))
            if report.detail in ("other action", "same action") and not sent:
                # a twin never signed and sent its own version (the table ended or moved
                # on first): one version, no race
                report.detail = "no chance"
            elif report.detail == "other action":
                report.detail = "raced"  # two different actions for one step
            elif report.detail == "same action":
                report.detail = "raced, one legal action"  # the bodies may still differ
        elif ev is not None:
            report.detail = str(ev.get("detail", "")) or "done"
        else:
            report.detail = "no chance"
        _judge(report, peers, codes, dev, kind, ev)
        if twin_text:
            report.note = (report.note + " " + twin_text).strip()
    finally:
        for p in peers:
            p.kill()
        if twin is not None:
            twin.kill()
        shutil.rmtree(tmp / f"g{seed}", ignore_errors=True)
    return report


def _start_twin(original: _Peer, twin: _Peer, state: Path, deadline: float, game_dir: Path) -> bool:
    """The twin race (see :mod:`bench.adversary_peer`): once the seat waits at its
    decision (``twin_ready``), copy its state and let the second twin (started with the
    table) resume the copy; it waits at the same decision; then let both sign their
    version of that step (each freezes before sending it: ``twin_signed``), and once both
    signed, wake both.  ``False``: the seat never got to that decision."""
    go = game_dir / "go"
    try:
        if not _until(lambda: original.event("twin_ready") is not None, original, deadline):
            return False
        rec = _record_file(state)
        if rec is None:
            return False
        shutil.copytree(state, state.parent / f"{state.name}-twin")
        named = game_dir / "twin-table.part"
        named.write_text(Path(rec).stem)
        named.rename(game_dir / "twin-table")
        until = min(deadline, time.monotonic() + TWIN_LEAD_S)
        if _until(lambda: twin.event("twin_ready") is not None, twin, until):
            go.touch()
            both = (original, twin)
            _until(lambda: all(p.event("twin_signed") for p in both), twin, until)
        return True
    finally:
        go.touch()
        for p in (original, twin):
            if p.proc.poll() is None:
                p.proc.send_signal(signal.SIGCONT)


def _until(done: Any, peer: _Peer, deadline: float) -> bool:
    """Poll ``done()`` until it holds (``True``), ``peer`` exits or ``deadline`` passes."""
    while time.monotonic() < deadline:
        if done():
            return True
        if peer.proc.poll() is not None:
            return bool(done())
        time.sleep(POLL_S)
    return False


def _judge(
    report: GameReport,
    peers: list[_Peer],
    codes: dict[int, int | None],
    dev: int,
    kind: str,
    ev: dict[str, Any] | None,
) -> None:
    outcomes = Counter()
    names = {}
    paths = []
    for i, code in codes.items():
        p = peers[i]
        if code in (EXIT_OK, EXIT_ABANDONED, EXIT_CHEATER):
            res = p.result() or {}
            state = Path(p.proc.args[p.proc.args.index("--state-dir") + 1])
            paths.append(res.get("record") or _record_file(state) or "")
    _VERIFIED.update(_verify_all(paths))
    for i, code in codes.items():
        p = peers[i]
        err = "".join(p.err)
        if code is None:
            report.failures.append("hangs")
            report.note = f"p{i} still running at the limit"
            outcomes["hang"] += 1
            continue
        if "Traceback" in err or code not in (EXIT_OK, EXIT_ABANDONED, EXIT_CHEATER):
            report.failures.append("crashes")
            report.note = f"p{i} exit {code}: {err[-600:]}"
            outcomes["crash"] += 1
            continue
        res = p.result() or {}
        if code == EXIT_CHEATER:
            seat_names = res.get("seats") or []
            culprit = res.get("culprit")
            name = (
                seat_names[culprit] if culprit is not None and culprit < len(seat_names) else None
            )
            names[i] = name
            if name != f"p{dev}":
                report.failures.append("wrong_blame")
                report.note = f"p{i} names {name}, deviator p{dev}"
            cheat_kind = (res.get("cheat") or {}).get("kind")
            if kind == "twin" and cheat_kind != "Equivocation":
                report.failures.append("split")
                report.note = f"p{i} convicts the twins of {cheat_kind}, not equivocation"
            outcomes["convicted"] += 1
            ver = _verify(res.get("record") or "")
            if ver is None or "crash" in ver:
                report.failures.append("crashes")
                report.note = f"verify crashed on p{i}'s record: {ver}"
            elif ver.get("culprit_name") != name or ver.get("culprit") != culprit:
                report.failures.append("verify_mismatch")
                report.note = (
                    f"p{i}: live {name}, verify {ver.get('culprit_name')} {ver.get('error')}"
                )
        elif code == EXIT_ABANDONED:
            outcomes["silence"] += 1
            text = (res.get("error") or "") if res else ""
            if not re.search(rf"\bp{dev}\b", text):
                # a live seat named absent (the silence limits are too short for the
                # machine), or a table given up for nobody in particular
                report.failures.append("wrong_blame")
                report.note = f"p{i} abandoned, not for the deviator p{dev}: {text}"
            rec = _record_file(Path(p.proc.args[p.proc.args.index("--state-dir") + 1]))
            if rec is not None:
                ver = _verify(rec)
                if ver is None or "crash" in ver:
                    report.failures.append("crashes")
                    report.note = f"verify crashed on p{i}'s record: {ver}"
                elif ver.get("culprit") is not None:
                    report.failures.append("verify_mismatch")
                    report.note = f"p{i} silent table, verify names {ver.get('culprit_name')}"
        else:
            outcomes["accepted_valid"] += 1
            for c in res.get("cheats", []) if res else []:
                report.note = f"p{i} reports {c}"
            ver = _verify(res.get("record") or "") if res else None
            if ver is None or "crash" in ver or not ver.get("ok"):
                report.failures.append("verify_mismatch")
                report.note = f"p{i} finished, verify: {ver and ver.get('error')}"
    if len(outcomes) > 1 and not report.failures:
        report.failures.append("split")
        report.note = f"honest peers disagree: {dict(outcomes)}"
    if len({n for n in names.values()}) > 1:
        report.failures.append("split")
    report.outcome = outcomes.most_common(1)[0][0] if outcomes else "none"
    if kind == "twin" and report.detail == "raced" and report.outcome != "convicted":
        report.failures.append("missed")  # two versions of one step, and nobody convicted
        report.note = (report.note + " twins signed two actions for one step").strip()
    if kind == "stop" and report.outcome == "convicted":
        report.failures.append("wrong_blame")  # silence named as a cheat
    report.failures = sorted(set(report.failures))


def run(games: int, seed: int, parallel: int = 1) -> dict[str, Any]:
    """``games`` deviating games, ``parallel`` tables at a time; every kind in turn, so
    that a short run still has twins among its games."""
    totals = Totals()
    raced = Counter()
    start = time.perf_counter()
    kinds = list(KINDS)
    lock = threading.Lock()

    def one(i: int, tmp: Path) -> None:
        s = seed * 1_000_003 + i
        r = play_game(s, tmp, kinds[i % len(kinds)])
        with lock:
            totals.tables += 1
            if r.detail == "no chance":
                return
            totals.add(r)
            raced[r.kind == "twin" and r.detail.startswith("raced")] += 1
            print(
                f"  game {i + 1}/{games}: {r.game} {r.kind} {r.detail} -> {r.outcome}"
                f"{' FAIL ' + ','.join(r.failures) + ' ' + r.note[:300] if r.failures else ''}",
                file=sys.stderr,
                flush=True,
            )

    with (
        tempfile.TemporaryDirectory(prefix="slaiga-adversary-procs-") as tmp,
        ThreadPoolExecutor(max_workers=max(1, parallel)) as pool,
    ):
        list(pool.map(lambda i: one(i, Path(tmp)), range(games)))
    out = _summary(totals, time.perf_counter() - start, seed, "processes", 0)
    out["twins"] = totals.deviations.get("twin", 0)
    # twin tables where both processes signed and sent their own version of one step
    out["twins_raced"] = raced[True]
    assert set(FAILURES) <= set(out)
    return out
