"""``slaiga bench flood``: keyless strangers flood a real opener, whose memory is read from /proc.

The opener is a ``slaiga open`` child process (``python -m cli.net open``) on
loopback, in its lobby.  For ``--seconds`` the bench, in this process, runs

* ``--strangers`` strangers, each with a fresh identity key (keys are free),
  that pass the handshake, never join, and push frames of the largest size
  the wire allows (1 MiB) until they are cut off, then come back with a new
  key; and
* ``--pingers`` strangers that send keepalive pings as fast as they can, and
  come back with a new key when cut off.

Then an honest player joins and the table must form and finish.  The same
opener is also run for the same time with no flood (the control run).  The
figures are the opener's resident memory (``VmRSS`` sampled, and ``VmHWM``,
the kernel's own peak) and CPU time, both runs, and their difference: the
flood may cost at most :data:`RSS_MARGIN_MIB` of resident memory over the
control run (exit status 1 otherwise).  Everything stays on 127.0.0.1.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio

from bench import help_text
from crypto.identity import IdentityKey
from p2p import wire
from p2p.errors import ConnectionClosed, HandshakeFailed
from p2p.net import netguard
from p2p.net.mesh import open_mesh
from p2p.net.node import Node, NodeConfig

DEFAULT_SECONDS = 60.0
DEFAULT_STRANGERS = 24
DEFAULT_PINGERS = 4
RSS_MARGIN_MIB = 64.0
"""How much more resident memory the flood may cost the opener than the control run."""
LOOPBACK = "127.0.0.1"
DEMO_STEPS = 6
SAMPLE_S = 0.05
START_TIMEOUT_S = 30.0
JOIN_TIMEOUT_S = 60.0
RETRY_S = 0.02
"""A stranger refused at the handshake waits this long before it tries again."""
PING_BATCH = 64
"""Pings a pinger queues between two checkpoints."""
BIG_BODY = wire.MAX_FRAME_BYTES - 256
"""The signed blob's size: its frame is just under the 1 MiB limit."""
MiB = 1 << 20


def _status(pid: int) -> dict[str, int]:
    """``VmRSS`` and ``VmHWM`` of ``pid`` in bytes (empty once it has exited)."""
    out: dict[str, int] = {}
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return out
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            out[key] = int(value.split()[0]) * 1024
    return out


def rss(pid: int) -> int:
    """Resident memory of ``pid`` in bytes (0 once it has exited)."""
    return _status(pid).get("VmRSS", 0)


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time of ``pid`` so far."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Opener:
    """A ``slaiga open`` child on loopback, waiting for one player, with its stderr watched."""

    def __init__(self, workdir: Path, open_timeout: float) -> None:
        cmd = [
            sys.executable,
            "-m",
            "cli.net",
            "open",
            "slaiga",
            "--seats",
            "2",
            "--no-announce",
            "--demo-steps",
            str(DEMO_STEPS),
            "--name",
            "opener",
            "--interface",
            LOOPBACK,
            "--state-dir",
            str(workdir / "opener"),
            "--open-timeout",
            f"{open_timeout:g}",
            "--events",
            "--json",
        ]
        env = dict(os.environ, SLAIGA_INTERFACE=LOOPBACK)
        env[netguard.ENV_LOOPBACK_ONLY] = "1"
        self.proc = subprocess.Popen(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True
        )
        self.err: list[str] = []
        self.out: list[str] = []
        self._threads = [
            threading.Thread(target=self._read, args=(pipe, lines), daemon=True)
            for pipe, lines in ((self.proc.stderr, self.err), (self.proc.stdout, self.out))
        ]
        for t in self._threads:
            t.start()

    @staticmethod
    def _read(pipe: Any, lines: list[str]) -> None:
        for line in pipe:
            lines.append(line)

    def address(self) -> str:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline and self.proc.poll() is None:
            for line in list(self.err):
                if '"event": "listening"' in line:
                    return str(json.loads(line)["address"])
            time.sleep(0.05)
        self.kill()
        raise RuntimeError("the opener never listened:\n" + "".join(self.err))

    def finish(self, timeout: float) -> dict[str, Any] | None:
        """Wait for the opener to exit; its JSON result, or ``None`` if it failed."""
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
        for t in self._threads:
            t.join(timeout=5)
        if self.proc.returncode != 0:
            return None
        for line in self.out:
            if line.startswith("{"):
                return dict(json.loads(line))
        return None

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


@dataclass
class FloodStats:
    connected: int = 0
    refused: int = 0
    frames: int = 0
    pings: int = 0
    cut: list[str] = field(default_factory=list)


async def _stranger(address: str, stop_at: float, stats: FloodStats, pinger: bool) -> None:
    """Again and again with a fresh key: pass the handshake, never join, push 1 MiB frames
    (or pings) until cut off or the flood ends."""
    big = wire.Signed(b"\x5a" * BIG_BODY, bytes(wire.SIGNATURE_BYTES))
    ping = wire.encode_frame(wire.Ping(1))
    while trio.current_time() < stop_at:
        with trio.move_on_at(stop_at):
            async with open_mesh(IdentityKey.generate(), None) as m:
                try:
                    conn = await m.dial(address)
                except (HandshakeFailed, ConnectionClosed):
                    stats.refused += 1
                    await trio.sleep(RETRY_S)
                    continue
                stats.connected += 1
                try:
                    while not conn.closed.is_set():
                        if pinger:
                            for _ in range(PING_BATCH):
                                conn.send_nowait(ping)
                            stats.pings += PING_BATCH
                            await trio.sleep(0)
                        else:
                            await conn.send(big)
                            stats.frames += 1
                except ConnectionClosed:
                    pass
                await conn.closed.wait()
                if len(stats.cut) < 100:
                    stats.cut.append(conn.close_reason)


async def _measure(
    opener: Opener, address: str, seconds: float, strangers: int, pingers: int, workdir: Path
) -> dict[str, Any]:
    pid = opener.proc.pid
    before = rss(pid)
    cpu_before = cpu_seconds(pid)
    stats = FloodStats()
    peak = before
    stop_at = trio.current_time() + seconds
    async with trio.open_nursery() as nursery:
        for i in range(strangers + pingers):
            nursery.start_soon(_stranger, address, stop_at, stats, i >= strangers)
        while trio.current_time() < stop_at:
            peak = max(peak, rss(pid))
            await trio.sleep(SAMPLE_S)
    peak = max(peak, rss(pid))
    cpu = cpu_seconds(pid) - cpu_before
    hwm = _status(pid).get("VmHWM", 0)
    after = rss(pid)
    joiner = Node(
        NodeConfig(
            name="honest",
            state_dir=workdir / "honest",
            use_discovery=False,
            interface=LOOPBACK,
            linger_s=1.0,
        )
    )
    with trio.fail_after(JOIN_TIMEOUT_S):
        result = await joiner.join(peer=address)
    cut_kinds: dict[str, int] = {}
    for reason in stats.cut:
        kind = reason.split(":")[0][:40]
        cut_kinds[kind] = cut_kinds.get(kind, 0) + 1
    return {
        "rss_before_mib": round(before / MiB, 1),
        "rss_peak_mib": round(peak / MiB, 1),
        "rss_after_mib": round(after / MiB, 1),
        "vm_hwm_mib": round(hwm / MiB, 1),
        "cpu_s": round(cpu, 2),
        "stranger_links": stats.connected,
        "refused_at_handshake": stats.refused,
        "big_frames_queued": stats.frames,
        "pings_queued": stats.pings,
        "how_links_ended": cut_kinds,
        "honest_join_finished": bool(result.record.finished),
    }


def measure(
    seconds: float, strangers: int, pingers: int, workdir: Path | None = None
) -> dict[str, Any]:
    """One opener, ``seconds`` of flood (none if both counts are 0), then an honest join."""
    with tempfile.TemporaryDirectory(prefix="slaiga-flood-") as tmp:
        work = workdir or Path(tmp)
        opener = Opener(work, open_timeout=seconds + START_TIMEOUT_S + JOIN_TIMEOUT_S)
        try:
            address = opener.address()
            out = trio.run(_measure, opener, address, seconds, strangers, pingers, work)
            result = opener.finish(JOIN_TIMEOUT_S)
        finally:
            opener.kill()
        out["opener_finished"] = bool(result and result.get("finished"))
        if result is None:
            out["opener_stderr"] = "".join(opener.err[-20:])
        return out


def run(
    seconds: float = DEFAULT_SECONDS,
    strangers: int = DEFAULT_STRANGERS,
    pingers: int = DEFAULT_PINGERS,
) -> dict[str, Any]:
    control = measure(seconds, 0, 0)
    flood = measure(seconds, strangers, pingers)
    growth = flood["rss_peak_mib"] - control["rss_peak_mib"]
    hwm_growth = flood["vm_hwm_mib"] - control["vm_hwm_mib"]
    ok = (
        max(growth, hwm_growth) <= RSS_MARGIN_MIB
        and flood["honest_join_finished"]
        and flood["opener_finished"]
    )
    return {
        "seconds": seconds,
        "strangers": strangers,
        "pingers": pingers,
        "control": control,
        "flood": flood,
        "rss_growth_mib": round(growth, 1),
        "vm_hwm_growth_mib": round(hwm_growth, 1),
        "margin_mib": RSS_MARGIN_MIB,
        "ok": ok,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="slaiga bench flood", description=help_text(__doc__, True)
    )
    parser.add_argument("--seconds", type=float, default=DEFAULT_SECONDS, help="flood duration")
    parser.add_argument("--strangers", type=int, default=DEFAULT_STRANGERS, help="1 MiB pushers")
    parser.add_argument("--pingers", type=int, default=DEFAULT_PINGERS, help="ping flooders")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    netguard.arm()  # loopback only, whatever the environment says
    if args.seconds <= 0 or args.strangers < 0 or args.pingers < 0:
        parser.error("--seconds must be > 0, --strangers and --pingers >= 0")
    if not args.json:
        print(
            f"flood: control run, then {args.strangers} strangers and {args.pingers} pingers"
            f" for {args.seconds:g}s each...",
            file=sys.stderr,
        )
    result = run(args.seconds, args.strangers, args.pingers)
    if args.json:
        print(json.dumps(result, sort_keys=True))
    else:
        for name in ("control", "flood"):
            r = result[name]
            print(
                f"{name}: RSS {r['rss_before_mib']} -> peak {r['rss_peak_mib']} MiB"
                f" (VmHWM {r['vm_hwm_mib']} MiB), after {r['rss_after_mib']} MiB,"
                f" CPU {r['cpu_s']}s, honest join finished: {r['honest_join_finished']}"
            )
        f = result["flood"]
        print(
            f"flood: {f['stranger_links']} stranger links, {f['refused_at_handshake']} refused,"
            f" {f['big_frames_queued']} x 1 MiB and {f['pings_queued']} pings queued;"
            f" links ended: {f['how_links_ended']}"
        )
        print(
            f"RSS growth over control: {result['rss_growth_mib']} MiB peak,"
            f" {result['vm_hwm_growth_mib']} MiB VmHWM (margin {RSS_MARGIN_MIB:g} MiB):"
            f" {'ok' if result['ok'] else 'FAILED'}"
        )
    return 0 if result["ok"] else 1
