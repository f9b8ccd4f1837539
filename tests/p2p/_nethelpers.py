"""Shared hygiene checks for the network tests: no leaked threads or Trio tasks.

Every network test wraps its body in :func:`no_leaks`, which records the live
threads first and, at the end, checks that no Trio task besides the test's own
chain of ancestors is still running and that every thread started during the
test has been joined (waiting a short, bounded grace period for threads that
are in the middle of exiting).
"""

from __future__ import annotations

import contextlib
import re
import secrets
import threading
import time
from collections.abc import AsyncIterator

import trio

from crypto.session import Ephemeral
from p2p import wire

THREAD_GRACE_S = 3.0
LOOPBACK = "127.0.0.1"


def _all_tasks() -> set[trio.lowlevel.Task]:
    root = trio.lowlevel.current_root_task()
    found: set[trio.lowlevel.Task] = set()
    stack = [root]
    while stack:
        task = stack.pop()
        found.add(task)
        for nursery in task.child_nurseries:
            stack.extend(nursery.child_tasks)
    return found


def _ancestors() -> set[trio.lowlevel.Task]:
    chain: set[trio.lowlevel.Task] = set()
    task: trio.lowlevel.Task | None = trio.lowlevel.current_task()
    while task is not None:
        chain.add(task)
        nursery = task.parent_nursery
        task = nursery.parent_task if nursery is not None else None
    return chain


def stray_tasks(baseline: set[trio.lowlevel.Task]) -> set[trio.lowlevel.Task]:
    return _all_tasks() - _ancestors() - baseline


IDLE_TRIO_WORKER = re.compile(r"Trio thread \d+")
"""The name Trio gives a worker of its thread cache while it waits for a job (it takes the
job's name while running one): an idle cached worker is no leak (``trio.to_thread``, as the
node's proof offload uses it, keeps a few for reuse, and they end on their own)."""


def new_threads(before: set[threading.Thread]) -> list[threading.Thread]:
    deadline = time.monotonic() + THREAD_GRACE_S
    while True:
        extra = [
            t
            for t in threading.enumerate()
            if t not in before and t.is_alive() and not IDLE_TRIO_WORKER.fullmatch(t.name)
        ]
        if not extra or time.monotonic() > deadline:
            return extra
        time.sleep(0.02)


@contextlib.asynccontextmanager
async def no_leaks() -> AsyncIterator[None]:
    """Assert that the body leaves no Trio task and no thread behind."""
    threads_before = set(threading.enumerate())
    tasks_before = _all_tasks() - _ancestors()
    yield
    await trio.lowlevel.checkpoint()
    strays = stray_tasks(tasks_before)
    assert not strays, f"tasks left running: {sorted(t.name for t in strays)}"
    leaked = new_threads(threads_before)
    assert not leaked, f"threads left running: {[t.name for t in leaked]}"


def assert_no_new_threads(before: set[threading.Thread]) -> None:
    leaked = new_threads(before)
    assert not leaked, f"threads left running: {[t.name for t in leaked]}"


def raw_hello(
    identity: bytes,
    table: bytes,
    *,
    version: int = wire.HANDSHAKE_VERSION,
    genesis: bytes = b"",
    ephemeral: Ephemeral | None = None,
) -> tuple[bytes, Ephemeral]:
    """The exact body bytes of a dialer's Hello built by hand, and its ephemeral key (tests
    that play one side of the handshake sign ``wire.auth_transcript`` over these bytes)."""
    eph = ephemeral or Ephemeral()
    hello = wire.Hello(version, table, identity, secrets.token_bytes(32), eph.public, genesis)
    return wire.encode_body(hello), eph
