"""Network safety for every p2p test: loopback only, enforced, not just configured.

Each test runs with ``$SLAIGA_INTERFACE=127.0.0.1`` (so a Node, a lobby or a
``python -m cli.net`` child that is not told an interface still uses
loopback, never zeroconf's "all interfaces" default) and with
``$SLAIGA_LOOPBACK_ONLY=1`` (children arm :mod:`p2p.net.netguard` themselves).
In this process the guard is armed for the duration of the test: any
connect, send, bind or name lookup aimed off the machine is refused before it
happens, and a test that caused one fails even if the code swallowed the
error.  Tests that run peers inside network namespaces they create remove both
variables from those children's environment deliberately (see test_netns.py).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from p2p.net import netguard
from p2p.net.discovery import ENV_INTERFACE
from tests.p2p._nethelpers import LOOPBACK


@pytest.fixture(autouse=True)
def loopback_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv(ENV_INTERFACE, LOOPBACK)
    monkeypatch.setenv(netguard.ENV_LOOPBACK_ONLY, "1")
    seen = len(netguard.violations)
    netguard.arm()
    try:
        yield
    finally:
        netguard.disarm()
    new = netguard.violations[seen:]
    assert not new, f"the test tried to leave loopback: {new}"
