"""Answering ``Fetch`` requests off the node's main loop, rate-limited, in bounded pieces.

A ``Fetch`` is about 40 bytes and asks for every entry from a step on.
Answered inline, it let one peer that never reads its replies stall the main
loop of its neighbour (which waited for room in that peer's outbox), again
and again, and made one small request cost the whole record.  Here:

* **Bounded pieces.**  One request is answered with one ``Fetched`` of at
  most :data:`REPLY_BYTES` (``more`` says whether entries are left); the
  asker asks again from where it got to.
* **Off the main loop.**  Each asking peer gets a task of its own with a
  queue of one request (a newer request replaces an older one, unless the
  older asks from an earlier step: it asks for more, and the entries a
  forked or returning seat fetches from step 1 must not give way to its
  routine ask from its own step); the task
  waits for room in that peer's outbox, and a peer that takes longer than
  :data:`REPLY_TIMEOUT_S` to read one piece is disconnected.
* **Rate-limited.**  A token bucket per peer (:data:`RATE_PER_S`, burst
  :data:`BURST`); requests beyond it are dropped and counted.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass

import trio

from p2p import wire
from p2p.errors import ConnectionClosed
from p2p.net.mesh import Mesh, open_task_nursery

REPLY_BYTES = 512 << 10
"""Signed-entry bytes in one reply (one ``Fetched`` frame)."""
REPLY_TIMEOUT_S = 5.0
"""How long one reply may wait for room in the asker's outbox before the asker is cut off."""
RATE_PER_S = 8.0
"""Requests per second answered per peer, on average."""
BURST = 16
"""Requests a peer may make at once before the rate applies."""
ENTRY_OVERHEAD = 32
"""Framing bytes counted per entry in a reply (msgpack headers)."""


def reply_piece(table_id: bytes, entries: Sequence[wire.Signed]) -> wire.Fetched:
    """The first piece of an answer: entries up to :data:`REPLY_BYTES` (at least one) and
    whether any are left."""
    taken: list[wire.Signed] = []
    size = 0
    for signed in entries:
        n = len(signed.entry) + len(signed.signature) + ENTRY_OVERHEAD
        if taken and (size + n > REPLY_BYTES or len(taken) == wire.MAX_FETCH_ENTRIES):
            break
        taken.append(signed)
        size += n
    return wire.Fetched(table_id, tuple(taken), more=len(taken) < len(entries))


@dataclass(slots=True)
class _Bucket:
    tokens: float
    at: float

    def take(self, now: float) -> bool:
        self.tokens = min(BURST, self.tokens + (now - self.at) * RATE_PER_S)
        self.at = now
        if self.tokens < 1:
            return False
        self.tokens -= 1
        return True


class FetchServer:
    """Serves ``Fetch`` requests of each peer in a task of its own (see the module docstring).

    ``entries_from(step)`` returns the signed envelopes to offer from ``step``
    on (the node's record); ``on_drop(peer, reason)`` reports a peer cut off.
    """

    def __init__(
        self,
        nursery: trio.Nursery,
        mesh: Mesh,
        entries_from: Callable[[int], Sequence[wire.Signed]],
        on_drop: Callable[[bytes, str], None] = lambda peer, reason: None,
        leave_out: Callable[[bytes, wire.Signed], bool] | None = None,
    ) -> None:
        self._nursery = nursery
        self._mesh = mesh
        self._entries_from = entries_from
        self._leave_out = leave_out
        """``leave_out(peer, signed)``: the peer has that entry already, or it is queued for
        it ahead of our reply on the same link (our own entries sent since the link came
        up): a reply does not carry it again (a healthy table sends each entry once per
        link, issue 19)."""
        self.left_out = 0
        """Entries left out of replies by ``leave_out`` (tests count them)."""
        self._on_drop = on_drop
        self._wanted: dict[bytes, wire.Fetch] = {}
        self._serving: set[bytes] = set()
        self._buckets: dict[bytes, _Bucket] = {}
        self.limited = 0
        """Requests dropped by the rate limit."""
        self.answered = 0

    def request(self, peer: bytes, fetch: wire.Fetch) -> None:
        """Queue ``fetch`` from ``peer`` (replacing one not yet answered that asks from the
        same or a later step), if its rate allows."""
        now = trio.current_time()
        bucket = self._buckets.setdefault(peer, _Bucket(BURST, now))
        if not bucket.take(now):
            self.limited += 1
            return
        old = self._wanted.get(peer)
        if old is None or fetch.from_step <= old.from_step:
            self._wanted[peer] = fetch
        if peer not in self._serving:
            self._serving.add(peer)
            self._nursery.start_soon(self._serve, peer)

    def forget(self, peer: bytes) -> None:
        self._wanted.pop(peer, None)
        self._buckets.pop(peer, None)

    @property
    def queued(self) -> int:
        return len(self._wanted)

    async def _serve(self, peer: bytes) -> None:
        try:
            while (fetch := self._wanted.pop(peer, None)) is not None:
                entries = self._entries_from(fetch.from_step)
                leave_out = self._leave_out
                if leave_out is not None and entries:
                    kept = [s for s in entries if not leave_out(peer, s)]
                    self.left_out += len(entries) - len(kept)
                    entries = kept
                if not entries:
                    continue
                piece = reply_piece(fetch.table_id, entries)
                with trio.move_on_after(REPLY_TIMEOUT_S) as scope:
                    try:
                        await self._mesh.send(peer, piece)
                    except ConnectionClosed:
                        self.forget(peer)
                        return
                if scope.cancelled_caught:
                    self.forget(peer)
                    self._mesh.disconnect(peer, "does not read the records it fetches")
                    self._on_drop(peer, "fetch replies not read")
                    return
                self.answered += 1
        finally:
            self._serving.discard(peer)


@contextlib.asynccontextmanager
async def open_fetch_server(
    mesh: Mesh,
    entries_from: Callable[[int], Sequence[wire.Signed]],
    on_drop: Callable[[bytes, str], None] = lambda peer, reason: None,
) -> AsyncIterator[FetchServer]:
    """A :class:`FetchServer` whose tasks end when the block does (errors come out as
    themselves, not wrapped in an exception group)."""
    async with open_task_nursery() as nursery:
        yield FetchServer(nursery, mesh, entries_from, on_drop)
