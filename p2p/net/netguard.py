"""Loopback-only mode: refuse, inside this process, any socket traffic off the machine.

Tests and experiments may talk only to loopback (``127.0.0.0/8``, ``::1``) or
to addresses inside network namespaces the test created itself.  Setting the
interface to ``127.0.0.1`` is the first line of defence; this module is the
second, so that a forgotten option or a library default (zeroconf's "all
interfaces", a unicast mDNS answer sent back through the wildcard listen
socket, a name lookup) cannot reach the host's real network.

It uses a Python audit hook (PEP 578), which sees every ``socket.connect``,
``socket.sendto``, ``socket.sendmsg``, ``socket.bind`` and
``socket.getaddrinfo`` call of any thread of this interpreter, zeroconf's
asyncio thread included, *before* the system call is made.  A refused call
raises :class:`NetworkGuardError` (a ``PermissionError``, so networking code
handles it like any other refused socket operation) and is recorded in
:data:`violations`, so a test can also fail on violations that the code under
test swallowed.

What is allowed while the guard is armed:

* ``connect``/``sendto``/``sendmsg`` to a loopback address; to a multicast
  group only from a socket whose outgoing multicast interface is loopback
  (``IP_MULTICAST_IF`` = 127.x, or ``IPV6_MULTICAST_IF`` = the ``lo`` index);
* ``bind`` to loopback or to the wildcard address (zeroconf's listen socket
  binds ``0.0.0.0:5353``; binding sends nothing);
* name lookups of IP literals and of ``localhost`` only (any other name would
  send a DNS query to the host's resolver);
* every non-IP socket family (Unix sockets, netlink).

Audit hooks cannot be removed, so :func:`arm` installs the hook once and
:func:`disarm` only makes it let everything through again.  Processes started
by a test get the mode through the environment (:data:`ENV_LOOPBACK_ONLY`);
``cli.net`` arms it at start-up when it is set.
"""

from __future__ import annotations

import ipaddress
import os
import socket
import sys
import threading
from typing import Any

from p2p.errors import NetworkGuardError

ENV_LOOPBACK_ONLY = "SLAIGA_LOOPBACK_ONLY"
"""Set to ``1`` to run a process in loopback-only mode (tests set it for their children)."""

LOCALHOST_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})
WILDCARD_HOSTS = frozenset({"", "0.0.0.0", "::"})
_GUARDED_EVENTS = frozenset(
    {"socket.connect", "socket.sendto", "socket.sendmsg", "socket.bind", "socket.getaddrinfo"}
)
_IP_FAMILIES = (socket.AF_INET, socket.AF_INET6)
_IN_ADDR_BYTES = 4


_state = threading.Lock()
_installed = False
_armed = False
violations: list[str] = []
"""Every refusal since the process started (tests compare its length before and after)."""


def _ip(host: Any) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    if not isinstance(host, str):
        return None
    try:
        return ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return None


def _is_loopback(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped.is_loopback
    return ip.is_loopback


def multicast_interface_is_loopback(sock: socket.socket) -> bool:
    """Whether multicast sent on ``sock`` leaves through the loopback interface only."""
    if sock.family == socket.AF_INET:
        raw = sock.getsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, _IN_ADDR_BYTES)
        return ipaddress.IPv4Address(raw).is_loopback
    index = sock.getsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_IF)
    try:
        return index != 0 and socket.if_indextoname(index) == "lo"
    except OSError:
        return False


def refusal(
    operation: str, host: Any, *, multicast_on_loopback: bool = False, binding: bool = False
) -> str | None:
    """Why sending/connecting/binding to ``host`` is refused (``None``: allowed).

    Pure decision, separate from the hook so that tests can check every case
    without putting a packet on any wire.
    """
    if binding and (host in WILDCARD_HOSTS or host == b""):
        return None
    ip = _ip(host)
    if ip is None:
        if isinstance(host, str) and host.lower().rstrip(".") in LOCALHOST_NAMES:
            return None
        return f"{operation} to {host!r}: not a loopback address (loopback-only mode)"
    if _is_loopback(ip):
        return None
    if ip.is_multicast and not binding:
        if multicast_on_loopback:
            return None
        return (
            f"{operation} to multicast group {ip}: the socket's multicast interface"
            " is not loopback (loopback-only mode)"
        )
    return f"{operation} to {ip}: not a loopback address (loopback-only mode)"


def _check(event: str, args: tuple[Any, ...]) -> str | None:
    if event == "socket.getaddrinfo":
        host = args[0]
        if host is None:
            return None  # passive lookup of the wildcard address
        return refusal("name lookup", host, binding=True)
    sock, address = args[0], args[1]
    if not isinstance(sock, socket.socket) or sock.family not in _IP_FAMILIES:
        return None
    if address is None:  # sendmsg on a connected socket: checked at connect
        return None
    if not isinstance(address, tuple) or not address:
        return None
    host = address[0]
    if event == "socket.bind":
        return refusal("bind", host, binding=True)
    on_loopback = False
    ip = _ip(host)
    if ip is not None and ip.is_multicast:
        try:
            on_loopback = multicast_interface_is_loopback(sock)
        except OSError:
            on_loopback = False
    return refusal(event.removeprefix("socket."), host, multicast_on_loopback=on_loopback)


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if not _armed or event not in _GUARDED_EVENTS:
        return
    problem = _check(event, args)
    if problem is not None:
        violations.append(problem)
        raise NetworkGuardError(problem)


def arm() -> None:
    """Refuse off-machine traffic from now on (installs the audit hook on first use)."""
    global _installed, _armed
    with _state:
        if not _installed:
            sys.addaudithook(_hook)
            _installed = True
        _armed = True


def disarm() -> None:
    """Let traffic through again (the hook stays installed but does nothing)."""
    global _armed
    _armed = False


def armed() -> bool:
    return _armed


def arm_from_environment() -> bool:
    """Arm the guard if ``$SLAIGA_LOOPBACK_ONLY`` asks for it; returns whether it is armed."""
    if os.environ.get(ENV_LOOPBACK_ONLY, "") not in ("", "0"):
        arm()
    return _armed
