"""Proofs made and checked off the Trio event loop, in worker threads.

The record fold (:meth:`p2p.record.chain.Record.offer` -> the rule's checks) is
synchronous and runs on the event loop; a 52-card shuffle proof takes tens of
milliseconds to make or check, a 104-card one twice that, and nothing else runs
on the loop meanwhile (keepalives, other peers' frames).  So the node asks the
game rule for *jobs* (:meth:`p2p.table.game_rule.GameRule.prework` and ``premake``):

* before offering a received tokens entry, or the last shuffle of a round (checked
  in one batch with the round's earlier shuffles, which are only decoded ahead), or
  a Slave gift sealed to us, of the step the record is at, its signature and proof
  are checked by a job in a worker thread;
* before producing our own shuffle (and, if it is the round's last, checking the
  round's earlier ones), reveal tokens or Slave gift, they are made by a job in a
  worker thread;
* an entry that arrived before its step (held by the record) is checked the same way
  when its step comes: the record loop sets ``Record.defer_held``, so the offer that
  completes a step stops before taking the new step's held entries; the node takes
  them (``TableSession.take_held``), checks them here side by side and offers them
  again (``Node._offer_held``).  Before, their proofs were checked by that offer, on
  the loop (a seat that is behind holds most of a round's tokens and proofs);
* entries that arrived together (a round of concurrent responders: every seat's
  reveal tokens) are checked by jobs running side by side (:meth:`Offload.prework_many`),
  so a machine with two cores checks two at once; an entry checked already is not
  checked again when it is offered.

Work that no step waits for yet runs in one background thread of its own
(:attr:`Offload.background`, given to the game rule as ``GameRule.background``): our
next shuffle's pile-independent half, and most of the check of a round's earlier
shuffles while the later seats shuffle (:mod:`p2p.table.game_rule.shuffle`).  When it is idle, a shuffle job lends it half of
its multiplications (a part not started when the job wants it back is computed by the
job itself, so no job waits for work queued there).  It runs at the same CPU priority
as the rest: a lower one let a loaded machine starve it for seconds while the round's
last step waited for it (longer than a survive table's absence limit).

A job touches only values captured when it was made (immutable points, bytes),
never the :class:`~p2p.record.chain.Record` or the rule; what it returns is called on
the event loop to keep the result, and the fold uses a kept result only for the
very same body and statement.  So the record is only ever touched from the
event-loop thread.  libsodium releases the GIL while it multiplies, so a job
uses the second core.  A job that fails keeps nothing: the fold checks the entry
itself and names the fault exactly as without this module.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import trio

from crypto.identity import verify_signature
from p2p.errors import RemoteProtocolError
from p2p.record.chain import entry_signing_input
from p2p.wire import Entry, Signed, decode_body

CHECKS_AHEAD_NICENESS = 10
"""How much lower the CPU priority of the thread checking proposals ahead is."""


def _lower_priority() -> None:
    """The proposal checker's initializer: on Linux, where ``setpriority`` on a thread id
    changes that thread alone, lower its priority by :data:`CHECKS_AHEAD_NICENESS`;
    elsewhere it runs at the usual priority."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), CHECKS_AHEAD_NICENESS)


class Offload:
    """Runs a node's jobs; remembers which are under way or were tried."""

    def __init__(self) -> None:
        self.background = ThreadPoolExecutor(max_workers=1, thread_name_prefix="slaiga-background")
        """Work no step waits for yet (see the module docstring)."""
        self.ahead = ThreadPoolExecutor(max_workers=1, thread_name_prefix="slaiga-ahead")
        """The next deal's shuffles, made and decoded off the record while this deal is
        played (p2p/table/game_rule/shuffle.py): a thread of their own, so that the round's
        own background work never queues behind them, at the usual CPU priority, since
        each seat's shuffle waits for the one before it (niced, a busy machine starved
        that chain: the next deal then waited for its steps' shuffles)."""
        self.ahead_checks = ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="slaiga-ahead-checks", initializer=_lower_priority
        )
        """The checks of the other seats' proposals: three quarters of the work ahead at
        four seats, and nothing waits for them until the round begins (one not made by
        then is made at its step), so they run at a lower CPU priority and leave the cores
        to the deal being played."""
        self._running: set[tuple[int, int]] = set()
        self._checked: set[tuple[int, int]] = set()
        """(seat, step) of entries whose job ran and kept its result."""
        self._premade_for: int | None = None
        self.jobs_run = 0
        """Check jobs run (a count for tests)."""

    def close(self) -> None:
        """Let the background thread end once its job (if any) is done; jobs not started
        are dropped.  Called when the table's mesh closes: a node or a spectator that
        ends leaves no thread behind."""
        for pool in self._pools():
            pool.shutdown(wait=False, cancel_futures=True)

    async def aclose(self) -> None:
        """:meth:`close`, then wait (in a worker thread, shielded) for the job that runs
        (a shuffle prepared for a next deal that never came, say): a table that ends leaves
        no thread behind, even for the moment that job takes."""
        self.close()
        with trio.CancelScope(shield=True):
            for pool in self._pools():
                await trio.to_thread.run_sync(pool.shutdown)

    def _pools(self) -> tuple[ThreadPoolExecutor, ...]:
        return (self.background, self.ahead, self.ahead_checks)

    def attach(self, rule: Any) -> None:
        """Give ``rule`` (a game rule) our background executor, once."""
        if rule is not None and getattr(rule, "background", False) is None:
            rule.background = self.background

    def wants_premake(self, rule: Any) -> bool:
        """Is there our own entry to make ahead, not tried yet at this step?"""
        self.attach(rule)
        return rule is not None and self._premade_for != rule.step_no and rule.premake() is not None

    async def premake(self, rule: Any) -> bool:
        """Make our own entry for the current step in a worker thread; ``True`` if a job ran."""
        self.attach(rule)
        if rule is None or self._premade_for == rule.step_no:
            return False
        job = rule.premake()
        if job is None:
            return False
        self._premade_for = rule.step_no
        try:
            keep = await trio.to_thread.run_sync(job)
        except Exception:  # noqa: BLE001 - produce() makes it again on the loop and reports
            return True
        keep()
        return True

    async def prework(self, rule: Any, signed: Signed, table_id: bytes, keys: Any) -> None:
        """Check the signature and proof of ``signed`` in a worker thread, if its step is
        the one the record is at and its proof is one the rule can check ahead."""
        self.attach(rule)
        need = rule.need if rule is not None else None
        if need is None or need.pre is None:
            return  # nothing to check ahead at this step: do not even decode
        try:
            entry = decode_body(signed.entry, Entry)
        except RemoteProtocolError:
            return  # the fold names whoever signed it
        assert isinstance(entry, Entry)
        if entry.table_id != table_id or not 0 <= entry.seat < len(keys):
            return
        where = (entry.seat, entry.step)
        if where in self._running or where in self._checked:
            return  # a copy of the same entry (relayed) is being checked, or was
        job = rule.prework(entry.seat, entry.step, entry.body)
        if job is None:
            return
        key, raw, sig = keys[entry.seat], signed.entry, signed.signature

        def checked() -> Any:
            verify_signature(key, entry_signing_input(raw), sig)  # no unsigned work
            return job()

        self._running.add(where)
        self.jobs_run += 1
        try:
            keep = await trio.to_thread.run_sync(checked)
        except Exception:  # noqa: BLE001 - the fold checks it again and names the fault
            return
        finally:
            self._running.discard(where)
        keep()
        self._checked = {w for w in self._checked if w[1] >= entry.step}
        self._checked.add(where)

    async def prework_many(
        self, rule: Any, signed: list[Signed], table_id: bytes, keys: Any
    ) -> None:
        """:meth:`prework` for entries that arrived together, their jobs side by side."""
        need = rule.need if rule is not None else None
        if need is None or need.pre is None:
            return  # nothing to check ahead at this step (no task, no checkpoint)
        if len(signed) == 1:
            await self.prework(rule, signed[0], table_id, keys)
            return
        async with trio.open_nursery() as nursery:
            for one in signed:
                nursery.start_soon(self.prework, rule, one, table_id, keys)
