"""Checks remembered within one scope: work done for one record is not redone for the next.

Every seat's record of one table holds the same entries, so ``slaiga verify`` given
each seat's file would check every shuffle proof, decode every point and multiply by
every scalar once per file.  Inside :func:`remembering`, the functions of :mod:`crypto`
that are pure functions of their inputs keep what they computed, and return it when the
very same input comes again:

* :meth:`crypto.group.Point.decode`: the encodings found valid (validity is a property
  of the 32 bytes alone);
* :func:`crypto.group.mul` and :func:`crypto.group.base_mul`: products by scalar and point;
* :func:`crypto.identity.verify_signature`: the (key, SHA-512 of the message, signature)
  triples that verified (a digest, so a long message is not kept);
* :func:`crypto.shuffle_proof_tw_batch.verify_shuffles_batch`: the shuffle statements
  (piles, key, proof and context, compared whole) whose proof passed.

Only successes are kept: a check that failed is done again, and fails again, each time
it is asked.  So a scope changes no verdict, only how often the work is done.  (A batch
check draws fresh random weights, so a false statement passes it with probability at
most ``1/L`` whether or not it is remembered.)

The scope lives in a :class:`contextvars.ContextVar`: a thread of a
:class:`concurrent.futures.ThreadPoolExecutor`, which starts with an empty context, never
sees it (but ``trio.to_thread.run_sync`` and ``asyncio.to_thread`` run their function in
a copy of the caller's context, so such a thread shares the caller's memory; its sets and
dicts stay whole under the GIL, and a lost item is only work done again), and outside a
scope every function computes afresh, as the operation counts of
:data:`crypto.group.COUNTERS` assume (a remembered result is not counted again).  Each
kind of memory holds at most its limit (:data:`LIMIT`; :data:`SHUFFLE_LIMIT` shuffle
statements, which are large) and starts over when full, so a long scope costs bounded
memory: about 40 MB of products, 15 MB of points and signatures, 150 MB of statements
(about 35 KB each for 52 cards) at most.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

LIMIT = 1 << 17
"""Items each kind of memory but shuffle statements holds before it starts over."""

SHUFFLE_LIMIT = 1 << 12
"""Shuffle statements remembered before that memory starts over."""


class Memory:
    """What one :func:`remembering` scope has computed (see the module docstring)."""

    __slots__ = ("points", "products", "signatures", "shuffles")

    def __init__(self) -> None:
        self.points: set[bytes] = set()
        self.products: dict[tuple[int, bytes | None], Any] = {}
        self.signatures: set[tuple[bytes, bytes, bytes]] = set()
        self.shuffles: set[Any] = set()

    def keep(self, store: set[Any] | dict[Any, Any], key: Any, value: Any = None) -> None:
        """Remember ``key`` (with ``value`` in a dict); a full store starts over."""
        if len(store) >= (SHUFFLE_LIMIT if store is self.shuffles else LIMIT):
            store.clear()
        if isinstance(store, dict):
            store[key] = value
        else:
            store.add(key)


_SCOPE: ContextVar[Memory | None] = ContextVar("slaiga_crypto_memory", default=None)


def current() -> Memory | None:
    """The memory of the innermost :func:`remembering` scope, or ``None`` outside one."""
    return _SCOPE.get()


@contextmanager
def remembering() -> Iterator[Memory]:
    """Within this block, checks and products of :mod:`crypto` are done once per input."""
    memory = Memory()
    token = _SCOPE.set(memory)
    try:
        yield memory
    finally:
        _SCOPE.reset(token)
