"""Several hosts: one peer per network namespace, real multicast discovery, a cut link.

Topology (everything created here, with a random suffix, and removed at the end)::

    ns slg-br-XXXX:   br0 (bridge) -- p0, p1, p2 (veth ends)
                                      |   |   |
    ns slg-pK-XXXX:                 eth0 10.213.R.(K+1)/24  (one peer process each)

The bridge lives in a namespace of its own; every veth pair is created inside
the bridge namespace with its far end born directly in a peer namespace, so
the host namespace never sees an interface, an address or a route of ours.

Each peer is a real ``python -m cli.net`` process started with ``ip netns
exec``.  The opener announces the table over zeroconf on ``eth0``; the joiners
find it by multicast DNS (no ``--peer``).  While the demonstration protocol
runs, the bridge port of one peer is set down: the others must report that
seat as stalled (``--events`` prints progress as JSON lines on stderr).  The
port comes back up, the table carries on, and every record must end with
the same head.

The test needs root (CI runs it as root).  It skips only if a network
namespace cannot be created at all, and says why.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from p2p import netguard

REPO = Path(__file__).resolve().parents[2]
PEERS = 3
DEMO_STEPS = 150
PACE_MS = 15
"""Think time per own demo entry, so the protocol is still running when the link is cut."""
STALL_AFTER_MS = 400
CUT_AFTER_BYTES = 6000
"""Cut the link once the opener's record file is this big (some 25 entries in)."""
SUBNET_PREFIX = "10.213"
IP_TIMEOUT_S = 10
STEP_TIMEOUT_S = 20
"""Bound on each phase: table announced, protocol under way, stall seen, all finished."""
POLL_S = 0.02


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["ip", *args], capture_output=True, text=True, timeout=IP_TIMEOUT_S, check=check
    )


def _probe_namespaces(suffix: str) -> None:
    """Skip (with the reason) if this machine cannot create a network namespace at all."""
    name = f"slg-probe-{suffix}"
    try:
        done = _ip("netns", "add", name, check=False)
    except (FileNotFoundError, PermissionError, subprocess.TimeoutExpired) as exc:
        pytest.skip(f"cannot create network namespaces: `ip` unusable: {exc!r}")
    if done.returncode != 0:
        pytest.skip(f"cannot create network namespaces: ip netns add: {done.stderr.strip()}")
    _ip("netns", "del", name, check=False)


@dataclass
class Topology:
    suffix: str
    subnet: int
    bridge_ns: str = ""
    peer_ns: list[str] = field(default_factory=list)
    created: list[str] = field(default_factory=list)

    def address(self, k: int) -> str:
        return f"{SUBNET_PREFIX}.{self.subnet}.{k + 1}"

    def build(self, n: int) -> None:
        self.bridge_ns = f"slg-br-{self.suffix}"
        self.peer_ns = [f"slg-p{k}-{self.suffix}" for k in range(n)]
        for ns in [self.bridge_ns, *self.peer_ns]:
            _ip("netns", "add", ns)
            self.created.append(ns)
        br = self.bridge_ns
        _ip("-n", br, "link", "set", "lo", "up")
        # no multicast snooping: mDNS must be flooded to every port like on a plain switch
        _ip("-n", br, "link", "add", "br0", "type", "bridge", "mcast_snooping", "0")
        _ip("-n", br, "link", "set", "br0", "up")
        for k, ns in enumerate(self.peer_ns):
            port = f"p{k}"
            # both ends are born inside our namespaces, never in the host's
            _ip("-n", br, "link", "add", port, "type", "veth", "peer", "name", "eth0", "netns", ns)
            _ip("-n", br, "link", "set", port, "master", "br0")
            _ip("-n", br, "link", "set", port, "up")
            _ip("-n", ns, "link", "set", "lo", "up")
            _ip("-n", ns, "addr", "add", f"{self.address(k)}/24", "dev", "eth0")
            _ip("-n", ns, "link", "set", "eth0", "up")
            _ip("-n", ns, "route", "add", "224.0.0.0/4", "dev", "eth0")

    def set_port(self, k: int, state: str) -> None:
        _ip("-n", self.bridge_ns, "link", "set", f"p{k}", state)

    def remove(self) -> list[str]:
        problems = []
        for ns in reversed(self.created):
            done = _ip("netns", "del", ns, check=False)
            if done.returncode != 0:
                problems.append(f"{ns}: {done.stderr.strip()}")
        self.created.clear()
        return problems


class Peer:
    """A ``cli.net`` process in a namespace; its stderr events are collected by a thread."""

    def __init__(self, ns: str, args: list[str]) -> None:
        env = dict(os.environ, PYTHONPATH=str(REPO), PYTHONUNBUFFERED="1")
        # deliberately outside loopback: the peer runs inside a namespace made by this test
        env.pop("SLAIGA_INTERFACE", None)
        env.pop(netguard.ENV_LOOPBACK_ONLY, None)
        self.proc = subprocess.Popen(
            ["ip", "netns", "exec", ns, sys.executable, "-m", "cli.net", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=REPO,
        )
        self.events: list[dict] = []
        self.noise: list[str] = []
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            try:
                event = json.loads(line)
            except ValueError:
                event = None
            with self._lock:
                if isinstance(event, dict) and "event" in event:
                    self.events.append(event)
                else:
                    self.noise.append(line.rstrip())

    def find(self, kind: str, **match: object) -> dict | None:
        with self._lock:
            for event in self.events:
                if event["event"] == kind and all(event.get(k) == v for k, v in match.items()):
                    return event
        return None

    def stderr_text(self) -> str:
        with self._lock:
            return "\n".join([json.dumps(e) for e in self.events] + self.noise)

    def finish(self, timeout: float) -> dict:
        # stderr belongs to the reader thread; stdout is one short JSON line
        self.proc.wait(timeout=timeout)
        assert self.proc.stdout is not None
        out = self.proc.stdout.read()
        self._reader.join(timeout=timeout)
        assert self.proc.returncode == 0, f"exit {self.proc.returncode}\n{self.stderr_text()}"
        return json.loads(out)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=IP_TIMEOUT_S)
        self._reader.join(timeout=IP_TIMEOUT_S)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def _wait(what: str, predicate, peers: list[Peer], timeout: float = STEP_TIMEOUT_S):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = predicate()
        if got:
            return got
        for p in peers:
            if p.proc.poll() is not None and p.proc.returncode != 0:
                raise AssertionError(
                    f"a peer exited early while waiting for {what}:\n{p.stderr_text()}"
                )
        time.sleep(POLL_S)
    logs = "\n---\n".join(p.stderr_text() for p in peers)
    raise AssertionError(f"timed out waiting for {what}\n{logs}")


@contextmanager
def _namespaces(n: int) -> Iterator[Topology]:
    suffix = secrets.token_hex(3)
    _probe_namespaces(suffix)
    topo = Topology(suffix, secrets.randbelow(250) + 1)
    try:
        topo.build(n)
        yield topo
    finally:
        problems = topo.remove()
        assert not problems, f"could not remove namespaces: {problems}"


def test_table_across_namespaces_survives_a_cut_link(tmp_path: Path) -> None:
    common = [
        "--interface",
        "eth0",
        "--json",
        "--events",
        "--demo-steps",
        str(DEMO_STEPS),
        "--demo-pace-ms",
        str(PACE_MS),
        "--stall-after-ms",
        str(STALL_AFTER_MS),
        "--max-wait-ms",
        "60000",
    ]
    peers: list[Peer] = []
    with _namespaces(PEERS) as topo:
        try:
            opener = Peer(
                topo.peer_ns[0],
                [
                    "open",
                    "slaiga",
                    "--seats",
                    str(PEERS),
                    "--name",
                    "n0",
                    "--state-dir",
                    str(tmp_path / "n0"),
                    *common,
                ],
            )
            peers.append(opener)
            announced = _wait("the table to be announced", lambda: opener.find("announced"), peers)
            assert announced
            listening = opener.find("listening")
            assert listening is not None
            assert listening["address"].startswith(topo.address(0) + ":")
            table_id = listening["table_id"]
            for k in range(1, PEERS):
                peers.append(
                    Peer(
                        topo.peer_ns[k],
                        [
                            "join",
                            table_id,
                            "--timeout",
                            "10",
                            "--name",
                            f"n{k}",
                            "--state-dir",
                            str(tmp_path / f"n{k}"),
                            *common,
                        ],
                    )
                )
            # the joiners found the table by multicast DNS: they dialled the opener's veth address
            for p in peers[1:]:
                connecting = _wait(
                    "a joiner to find the table", lambda p=p: p.find("connecting"), peers
                )
                assert connecting["address"].startswith(topo.address(0) + ":")
            slots = [
                _wait("the table to form", lambda p=p: p.find("formed"), peers)["slot"]
                for p in peers
            ]
            assert sorted(slots) == list(range(PEERS))

            record = tmp_path / "n0" / "tables" / f"{table_id}.rec"
            _wait(
                "the protocol to get under way",
                lambda: record.exists() and record.stat().st_size > CUT_AFTER_BYTES,
                peers,
            )
            cut = PEERS - 1
            topo.set_port(cut, "down")
            cut_slot = slots[cut]
            # every peer still on the bridge reports the cut-off seat as stalled
            for p in peers[:cut]:
                _wait(
                    f"a stall of seat {cut_slot}",
                    lambda p=p: p.find("stalled", seat=cut_slot),
                    peers,
                )
            # and the cut-off peer sees the rest of the table go silent
            _wait("the cut-off peer to see a stall", lambda: peers[cut].find("stalled"), peers)
            assert not any(p.find("finished") for p in peers), "the table finished during the cut"
            topo.set_port(cut, "up")

            results = [p.finish(STEP_TIMEOUT_S * 2) for p in peers]
        finally:
            for p in peers:
                p.kill()
    for p in peers[:cut]:
        assert p.find("recovered", seat=cut_slot) is not None, p.stderr_text()
    # every peer heard every other one confirm the end (nobody waited out its linger)
    assert not any(p.find("linger_timeout") for p in peers)
    heads = {r["record_head"] for r in results}
    assert len(heads) == 1, heads
    assert all(r["finished"] and r["record_steps"] == DEMO_STEPS + 2 for r in results)
    assert all(r["table_id"] == table_id for r in results)
    assert all(cut_slot in r.get("stalls", []) for r in results[:cut])


def _blackhole(topo: Topology, a: int, b: int, action: str) -> None:
    """Drop every packet between peers ``a`` and ``b`` only (a route in each namespace)."""
    _ip("-n", topo.peer_ns[a], "route", action, "blackhole", f"{topo.address(b)}/32")
    _ip("-n", topo.peer_ns[b], "route", action, "blackhole", f"{topo.address(a)}/32")


RELAY_STEPS = 300
RELAY_PACE_MS = 10


def test_one_cut_link_costs_no_pace_entries_are_relayed(tmp_path: Path) -> None:
    """Only the link between two peers is cut; every other link stays up.  Each end of the
    broken link gets the other's entries through the third peer, which relays what it
    accepts, so nobody waits out a stall: no peer reports one while the link is down (a
    count, not a time), and every record ends with the same head."""
    common = [
        "--interface",
        "eth0",
        "--json",
        "--events",
        "--demo-steps",
        str(RELAY_STEPS),
        "--demo-pace-ms",
        str(RELAY_PACE_MS),
        "--stall-after-ms",
        str(STALL_AFTER_MS),
        "--max-wait-ms",
        "60000",
    ]
    peers: list[Peer] = []
    with _namespaces(PEERS) as topo:
        try:
            opener = Peer(
                topo.peer_ns[0],
                ["open", "slaiga", "--seats", str(PEERS), "--no-announce"]
                + ["--state-dir", str(tmp_path / "n0"), *common],
            )
            peers.append(opener)
            listening = _wait("the opener to listen", lambda: opener.find("listening"), peers)
            for k in range(1, PEERS):
                peers.append(
                    Peer(
                        topo.peer_ns[k],
                        ["join", "--peer", listening["address"]]
                        + ["--state-dir", str(tmp_path / f"n{k}"), *common],
                    )
                )
            for p in peers:
                _wait("the table to form and mesh", lambda p=p: p.find("meshed"), peers)
            table_id = listening["table_id"]
            record = tmp_path / "n0" / "tables" / f"{table_id}.rec"
            _wait(
                "the protocol to get under way",
                lambda: record.exists() and record.stat().st_size > CUT_AFTER_BYTES,
                peers,
            )
            _blackhole(topo, 0, 1, "add")
            cut_at = len(record.read_bytes())
            _wait(
                "the table to go on during the cut",
                lambda: record.stat().st_size > cut_at + 4 * CUT_AFTER_BYTES,
                peers,
            )
            stalls_during_cut = [e for p in peers for e in p.events if e["event"] == "stalled"]
            _blackhole(topo, 0, 1, "del")
            results = [p.finish(STEP_TIMEOUT_S * 2) for p in peers]
        finally:
            for p in peers:
                p.kill()
    assert stalls_during_cut == [], stalls_during_cut
    heads = {r["record_head"] for r in results}
    assert len(heads) == 1, heads
    assert all(r["finished"] and r["record_steps"] == RELAY_STEPS + 2 for r in results)
