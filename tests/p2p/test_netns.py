"""Several hosts: one peer per network namespace, real multicast discovery, a real game
(three bots playing Slaiga) through a partition and through one cut link.

Topology (everything created here, with a random suffix, and removed at the end)::

    ns slg-br-XXXX:   br0 (bridge) -- p0, p1, p2 (veth ends)
                                      |   |   |
    ns slg-pK-XXXX:                 eth0 10.213.R.(K+1)/24  (one peer process each)

The bridge lives in a namespace of its own; every veth pair is created inside
the bridge namespace with its far end born directly in a peer namespace, so
the host namespace never sees an interface, an address or a route of ours.

Each peer is a real ``python -m cli.net`` process started with ``ip netns
exec``, its seat played by the heuristic bot.  ``--events`` prints progress
as JSON lines on stderr, ``--json`` the game's result on stdout.

* *Partition*: the opener announces the table over zeroconf on ``eth0`` and
  the joiners find it by multicast DNS (no ``--peer``).  Mid-game the bridge
  port of one peer is set down until every link of it has dropped (short
  keepalives) and the others report its seat as stalled; the port comes back
  up, the links are redialled, the game finishes with the same record, state
  and ranking everywhere, and nobody is named.
* *One cut link*: only the route between two peers is blackholed mid-game.
  Each end gets the other's entries through the third peer, which relays what
  it accepts, so the game plays on with no stall while the link is down.

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

from p2p.net import netguard
from tests.p2p._faults import check_same_finished_game, entries_in, named

REPO = Path(__file__).resolve().parents[2]
PEERS = 3
GAME = ["slaiga", "--seats", str(PEERS), "--option", "max_turns=60"]
THINK_MS = 100
"""Each bot thinks this long per decision, so that the game is still running through both
faults however fast the machine is (the faults wait on events and entry counts, and a game
that ends first fails the test)."""
STALL_AFTER_MS = 1500
"""Roomy, so that while one link is down only a missing relay (not a slow machine) makes a
seat wait this long; for machine steps and decisions alike."""
KEEPALIVE = ["--keepalive", "0.2", "--keepalive-dead", "1.5"]
"""A link that hears nothing for 1.5 s is dropped, so each cut drops the links it cuts and
healing needs real redials."""
CUT_AT_ENTRIES = 30
"""Cut the first link once the opener's record holds this many entries: keys and the
shuffles are done, and the deal and the play are under way."""
RELAY_ENTRIES = 40
"""Entries the game must add while the one link is down and both its ends know it."""
SUBNET_PREFIX = "10.213"
IP_TIMEOUT_S = 10
STEP_TIMEOUT_S = 30
"""Bound on each phase: table announced, game under way, stall seen, all finished."""
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

    def find(self, kind: str, since: int = 0, **match: object) -> dict | None:
        """The first ``kind`` event matching ``match`` among events ``since`` onwards."""
        with self._lock:
            for event in self.events[since:]:
                if event["event"] == kind and all(event.get(k) == v for k, v in match.items()):
                    return event
        return None

    def mark(self) -> int:
        """How many events have come so far (for ``find(..., since=)``)."""
        with self._lock:
            return len(self.events)

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


COMMON = [
    "--interface",
    "eth0",
    "--json",
    "--events",
    "--bot",
    "heuristic",
    "--bot-think-ms",
    str(THINK_MS),
    "--stall-after-ms",
    str(STALL_AFTER_MS),
    "--decide-stall-ms",
    str(STALL_AFTER_MS),
    "--max-wait-ms",
    "60000",
    "--decide-max-ms",
    "60000",
    "--linger",
    "15",
    *KEEPALIVE,
]
"""The options of every peer: events on stderr, the result on stdout, a thinking bot."""


def _under_way(tables: Path, at_least: int, peers: list[Peer]) -> int:
    """Wait until the record under ``tables`` holds ``at_least`` entries; return the count."""
    return _wait(
        f"{at_least} entries in the record",
        lambda: (n := entries_in(tables)) >= at_least and n,
        peers,
    )


def _blackhole(topo: Topology, a: int, b: int, action: str) -> None:
    """Drop every packet between peers ``a`` and ``b`` only (a route in each namespace)."""
    _ip("-n", topo.peer_ns[a], "route", action, "blackhole", f"{topo.address(b)}/32")
    _ip("-n", topo.peer_ns[b], "route", action, "blackhole", f"{topo.address(a)}/32")


def _start_table(topo: Topology, tmp_path: Path, peers: list[Peer]) -> list[int]:
    """The opener announces a table on its ``eth0``; the joiners find it by multicast DNS.
    Returns each peer's slot once all are seated and meshed."""
    opener = Peer(
        topo.peer_ns[0],
        ["open", *GAME, "--name", "n0", "--state-dir", str(tmp_path / "n0"), *COMMON],
    )
    peers.append(opener)
    listening = _wait("the opener to listen", lambda: opener.find("listening"), peers)
    assert listening["address"].startswith(topo.address(0) + ":")
    for k in range(1, PEERS):
        peers.append(
            Peer(
                topo.peer_ns[k],
                ["join", listening["table_id"], "--timeout", "10", "--name", f"n{k}"]
                + ["--state-dir", str(tmp_path / f"n{k}"), *COMMON],
            )
        )
    # the joiners found the table by multicast DNS: they dialled the opener's veth address
    for p in peers[1:]:
        connecting = _wait("a joiner to find the table", lambda p=p: p.find("connecting"), peers)
        assert connecting["address"].startswith(topo.address(0) + ":")
    assert opener.find("announced"), opener.stderr_text()
    for p in peers:
        _wait("the table to form and mesh", lambda p=p: p.find("meshed"), peers)
    slots = [p.find("formed")["slot"] for p in peers]  # type: ignore[index]
    assert sorted(slots) == list(range(PEERS))
    return slots


def _cut_one_link(topo: Topology, tables: Path, slots: list[int], peers: list[Peer]) -> None:
    """Blackhole the link between peers 0 and 1 only, and heal it.  Each end of the broken
    link gets the other's entries through peer 2, which relays what it accepts, so nobody
    waits out a stall: no peer reports one while the link is down (a count, not a time)."""
    marks = [p.mark() for p in peers]
    _blackhole(topo, 0, 1, "add")
    # both ends of the cut link find out (their keepalive drops it) ...
    for a, b in ((0, 1), (1, 0)):
        _wait(
            f"peer {a} to lose peer {b}",
            lambda a=a, b=b: peers[a].find("peer_down", marks[a], slot=slots[b]),
            peers,
        )
    # ... and the game goes on through the third peer
    _under_way(tables, entries_in(tables) + RELAY_ENTRIES, peers)
    during = [p.find("stalled", n) for p, n in zip(peers, marks, strict=True)]
    assert during == [None] * PEERS, during
    healed = peers[0].mark()
    _blackhole(topo, 0, 1, "del")
    _wait(
        "peers 0 and 1 to redial",
        lambda: peers[0].find("peer_up", healed, slot=slots[1]),
        peers,
    )


def _partition(topo: Topology, cut: int, slots: list[int], peers: list[Peer]) -> list[int]:
    """Set peer ``cut``'s bridge port down until it has lost every link and the others report
    its seat stalled (and it theirs), then bring it back up.  Returns each peer's event
    count when the cut began."""
    cut_slot = slots[cut]
    marks = [p.mark() for p in peers]
    topo.set_port(cut, "down")
    for k in range(PEERS):
        if k == cut:
            continue
        # every peer still on the bridge reports the cut-off seat as stalled
        _wait(
            f"a stall of seat {cut_slot}",
            lambda k=k: peers[k].find("stalled", marks[k], slot=cut_slot),
            peers,
        )
        # and the cut-off peer loses its link to every one of them
        _wait(
            f"the cut-off peer to lose seat {slots[k]}",
            lambda k=k: peers[cut].find("peer_down", marks[cut], slot=slots[k]),
            peers,
        )
    _wait(
        "the cut-off peer to see a stall",
        lambda: peers[cut].find("stalled", marks[cut]),
        peers,
    )
    assert not any(p.find("finished") for p in peers), "the game finished during the cut"
    topo.set_port(cut, "up")
    return marks


def test_a_game_across_namespaces_survives_a_cut_link_and_a_partition(tmp_path: Path) -> None:
    """One game, two faults in turn: one link cut (relayed around), then one peer cut off
    from the table (partition).  The game finishes with the same record, state and ranking
    on every peer, each record file verifies, and nobody is named."""
    peers: list[Peer] = []
    with _namespaces(PEERS) as topo:
        try:
            slots = _start_table(topo, tmp_path, peers)
            tables = tmp_path / "n0" / "tables"
            _under_way(tables, CUT_AT_ENTRIES, peers)
            _cut_one_link(topo, tables, slots, peers)
            cut = PEERS - 1
            marks = _partition(topo, cut, slots, peers)
            results = [p.finish(STEP_TIMEOUT_S * 2) for p in peers]
        finally:
            for p in peers:
                p.kill()
    for p in peers:
        assert named(p.events) == [], p.stderr_text()
        # every peer heard every other one confirm the end (nobody waited out its linger)
        assert not p.find("linger_timeout"), p.stderr_text()
    for k in range(PEERS):
        if k != cut:
            assert peers[k].find("recovered", marks[k], slot=slots[cut]), peers[k].stderr_text()
    check_same_finished_game(results, PEERS)
