"""Loopback-only mode: the guard that keeps every p2p test off the host's real network.

No test here puts a packet on a non-loopback wire even if the guard were
broken: decisions are checked through the pure :func:`refusal`, and the live
hook is exercised with UDP ``connect`` (which sends nothing) and with binds.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest
import trio

from p2p.errors import InterfaceError, NetworkGuardError
from p2p.net import netguard
from p2p.net.discovery import ENV_INTERFACE, open_lobby, resolve_interface
from tests.p2p._nethelpers import LOOPBACK, no_leaks

TIMEOUT_S = 10
TEST_NET = "192.0.2.1"
"""RFC 5737 documentation address: never routed anywhere, and the guard refuses it first."""


def test_every_p2p_test_runs_loopback_only() -> None:
    assert netguard.armed()
    assert os.environ[ENV_INTERFACE] == LOOPBACK
    assert os.environ[netguard.ENV_LOOPBACK_ONLY] == "1"


@pytest.mark.parametrize(
    ("host", "allowed"),
    [
        ("127.0.0.1", True),
        ("127.3.4.5", True),
        ("::1", True),
        ("::ffff:127.0.0.1", True),
        ("localhost", True),
        (TEST_NET, False),
        ("10.0.0.1", False),
        ("2001:db8::1", False),
        ("::ffff:192.0.2.1", False),
        ("example.org", False),
        ("0.0.0.0", False),
    ],
)
def test_refusal_decisions(host: str, allowed: bool) -> None:
    problem = netguard.refusal("connect", host)
    assert (problem is None) is allowed, problem
    if not allowed:
        assert "loopback-only" in problem


def test_multicast_only_through_loopback() -> None:
    assert netguard.refusal("sendto", "224.0.0.251", multicast_on_loopback=True) is None
    problem = netguard.refusal("sendto", "224.0.0.251", multicast_on_loopback=False)
    assert problem is not None and "multicast interface is not loopback" in problem


def test_bind_allows_loopback_and_wildcard_only() -> None:
    for host in ("", "0.0.0.0", "::", "127.0.0.1", "::1"):
        assert netguard.refusal("bind", host, binding=True) is None
    assert netguard.refusal("bind", TEST_NET, binding=True) is not None


def test_live_hook_refuses_and_records(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = len(netguard.violations)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        # a UDP connect only sets the default destination: nothing is sent either way
        with pytest.raises(NetworkGuardError, match="192.0.2.1"):
            sock.connect((TEST_NET, 9))
        sock.connect((LOOPBACK, 9))
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton(LOOPBACK))
        assert netguard.multicast_interface_is_loopback(sock)
    with pytest.raises(NetworkGuardError):
        socket.getaddrinfo("example.org", 80)
    assert len(netguard.violations) == seen + 2
    # the refusals were deliberate: keep them out of the per-test violation check
    del netguard.violations[seen:]


def test_discovery_refuses_non_loopback_interfaces(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(InterfaceError, match="loopback-only mode"):
        resolve_interface("all")
    monkeypatch.delenv(ENV_INTERFACE)  # a test that forgets the interface gets an error,
    with pytest.raises(InterfaceError, match="loopback-only mode"):  # never "all interfaces"
        resolve_interface(None)
    assert resolve_interface("lo").addresses == (LOOPBACK,)


async def test_lobby_without_interface_uses_loopback() -> None:
    with trio.fail_after(TIMEOUT_S):
        async with no_leaks(), open_lobby() as lobby:
            assert lobby.spec.addresses == (LOOPBACK,)
            assert lobby.spec.bind == [LOOPBACK]


def test_cli_child_inherits_loopback_only_mode() -> None:
    """A ``cli.net`` child told to use every interface refuses, before opening a socket."""
    done = subprocess.run(
        [sys.executable, "-m", "cli.net", "lobby", "--interface", "all", "--json"],
        capture_output=True,
        text=True,
        timeout=30,
        env=dict(os.environ),
    )
    assert done.returncode != 0
    assert "loopback-only mode" in done.stdout
