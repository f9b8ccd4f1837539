"""Our own entries leave the peer only once they are on disk (docs/design.md, "Durability").

Our own entries (the seat's driver, :class:`p2p.table.seat.SeatDriver`) are fsynced
before they are sent, so a restart can never sign something else for the same step
(equivocation); received ones are written before the record loop waits again, and
before any own entry after them leaves (its ``fsync`` flushes them first, in order), one
write to the OS for a batch of them (:meth:`Durable.flush`).  The record loop
does not wait for the disk itself: an own entry it signs is written at once, and what
it would send from then on is held back until one ``fsync``, in a worker thread, has
made every entry written so far durable (one ``fsync`` for a burst of entries;
:meth:`Durable.settle`); a fetch answered meanwhile leaves such an entry out
(:meth:`Durable.leaving`).  What leaves the peer, and in what order, is what an
``fsync`` on the loop would have sent.

:class:`Durable` carries out the session's writes to the record file
(:data:`WRITES`) for :class:`p2p.net.node.Node`, and lets its sends (:data:`SENDS`)
go, or holds them, in order.  Outside the record loop (a person's decision in its
own task, a vote, a notice) the ``fsync`` is made where the entry is written, and it
releases whatever was held.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import trio

from p2p import wire
from p2p.record.store import RecordFile
from p2p.table import effects

INLINE_FSYNC_S = 0.0005
INLINE_AFTER = 8
"""An ``fsync`` of our own entries is made in a worker thread unless the last
:data:`INLINE_AFTER` ones each took under :data:`INLINE_FSYNC_S` (a tmpfs: handing it to a
thread would cost more than it blocks the loop); one slow one sends it back to a thread."""


def _timed(fn: Any) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


SENDS = (effects.Broadcast, effects.Send, effects.SendEach, effects.SendOwn, effects.Serve)
"""Effects that send something: held back while an own entry written before them is not
yet durable (:meth:`Durable.send`)."""

WRITES = (
    effects.Persist,
    effects.Sync,
    effects.PersistVote,
    effects.PersistNotice,
    effects.CloseWithVotes,
)
"""Effects that write the record file (:meth:`Durable.write`)."""


class Durable:
    """The record file's writes, and the sends held back behind own entries not yet on
    disk.  ``store`` gives the node's record file (``None`` before there is one);
    ``send`` carries out one of :data:`SENDS` on the mesh."""

    def __init__(
        self, store: Callable[[], RecordFile | None], send: Callable[[effects.Effect], None]
    ) -> None:
        self._store = store
        self._send = send
        self.loop_task: Any = None
        """The record loop's task: an own entry it persists is fsynced off the loop."""
        self._written = 0
        """Own entries written by the record loop that must be fsynced before they leave."""
        self._synced = 0
        """How many of those an ``fsync`` has made durable."""
        self._held: list[tuple[int, effects.Effect]] = []
        """Sends held back until the write they follow is durable (``_written`` then),
        in order."""
        self._undurable: set[bytes] = set()
        """Signatures of our own entries written but not yet fsynced (no fetch answer
        carries them)."""
        self.fsyncs = 0
        """``fsync`` calls made for our own entries (tests count them)."""
        self._fast_fsyncs = 0
        """How many such ``fsync`` calls in a row took under :data:`INLINE_FSYNC_S`."""
        self._unflushed = False
        """Entries of other seats the record loop appended that are still in the file's
        buffer (:meth:`flush`)."""
        self.flushes = 0
        """Writes of such entries to the OS (:meth:`flush`; tests count them)."""

    def write(self, fx: effects.Effect, received: tuple[wire.Signed, bytes] | None) -> None:
        """Carry out one of :data:`WRITES`.  ``received`` is the entry being handed to the
        session and its bytes as received (canonical: :func:`p2p.wire.decode_body` checked
        it): a ``Persist`` of that entry writes them as they are, not encoded again.

        An own entry persisted by the record loop is written, not yet fsynced: every send
        after it is held until :meth:`settle` has made it durable (elsewhere, and for the
        other durable writes, the ``fsync`` is made here and releases what was held)."""
        store = self._store()
        if isinstance(fx, effects.Persist):
            assert store is not None
            raw = received[1] if received is not None and received[0] is fx.signed else None
            if fx.sync and self._in_loop():
                # written; flushed and fsynced (off the loop) by settle() before sends
                store.append(fx.signed, flush=False)
                self._written += 1
                self._undurable.add(fx.signed.signature)
            elif not fx.sync and self._in_loop():
                # another seat's entry: handed to the OS with the rest of the batch, before
                # the loop waits (flush) or fsyncs (settle), one write for them all
                store.append(fx.signed, raw=raw, flush=False)
                self._unflushed = True
            else:
                store.append(fx.signed, sync=fx.sync, raw=raw)
                if fx.sync:
                    self.durable()
        elif isinstance(fx, effects.Sync):
            if store is not None:
                store.sync()
                self.durable()
        elif isinstance(fx, effects.PersistVote):
            assert store is not None
            store.append_vote(fx.vote)
            self.durable()
        elif isinstance(fx, effects.PersistNotice):
            assert store is not None
            store.append_notice(fx.notice)
            self.durable()
        elif isinstance(fx, effects.CloseWithVotes):
            assert store is not None
            store.close_with_votes(fx.votes)
            self.durable()

    def send(self, fx: effects.Effect) -> None:
        """One of :data:`SENDS`: sent now, or held behind an own entry not yet durable."""
        if self._written > self._synced:
            self._held.append((self._written, fx))
        else:
            self._send(fx)

    def leaving(self, entries: list[wire.Signed]) -> list[wire.Signed]:
        """``entries`` as a fetch answer may carry them: our own entries leave only once
        they are on disk."""
        if self._undurable:
            entries = [e for e in entries if e.signature not in self._undurable]
        return entries

    def _in_loop(self) -> bool:
        """Is the record loop's task the one running (it settles before it waits)?"""
        return self.loop_task is not None and trio.lowlevel.current_task() is self.loop_task

    def durable(self) -> None:
        """An ``fsync`` just made everything written durable: send what was held."""
        self._synced = self._written
        self._release()

    def _release(self) -> None:
        """Send, in order, the held sends whose write is durable now."""
        held = self._held
        n = 0
        while n < len(held) and held[n][0] <= self._synced:
            n += 1
        if n:
            ready, self._held = held[:n], held[n:]
            for _, fx in ready:
                self._send(fx)
        if self._synced >= self._written:
            self._undurable.clear()

    def flush(self) -> None:
        """Hand the entries the record loop appended to the OS (one write for a batch):
        the loop calls it before it waits for the next message, so what it took is in the
        file whenever it is idle (an fsync of our own entries flushes them first, in
        order: see :meth:`settle`)."""
        if self._unflushed:
            self._unflushed = False
            store = self._store()
            if store is not None:
                store.flush()
                self.flushes += 1

    async def settle(self) -> None:
        """Make the own entries the record loop wrote durable with one ``fsync`` in a
        worker thread (the loop runs on meanwhile: keepalives, frames, the watchdog), then
        send what was held behind them.  No checkpoint when nothing waits."""
        if self._written <= self._synced:
            return
        store = self._store()
        assert store is not None
        target = self._written
        store.flush()  # ours and the entries before them, in order
        self._unflushed = False
        if self._fast_fsyncs < INLINE_AFTER:
            took = await trio.to_thread.run_sync(_timed, store.fsync_written)
        else:  # a disk this fast (a tmpfs): the hand-off to a thread would cost more
            took = _timed(store.fsync_written)
        self._fast_fsyncs = self._fast_fsyncs + 1 if took < INLINE_FSYNC_S else 0
        self.fsyncs += 1
        self._synced = max(self._synced, target)
        self._release()

    def settle_now(self) -> None:
        """:meth:`settle` on the loop (the record loop ends: nothing may stay held)."""
        store = self._store()
        if self._written > self._synced and store is not None:
            store.sync()
            self.fsyncs += 1
        self.flush()
        self.durable()
