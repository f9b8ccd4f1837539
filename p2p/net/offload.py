"""Proofs made and checked off the Trio event loop, in worker threads.

The record fold (:meth:`p2p.record.chain.Record.offer` -> the rule's checks) is
synchronous and runs on the event loop; a 52-card shuffle proof takes tens of
milliseconds to make or check, a 104-card one twice that, and nothing else runs
on the loop meanwhile (keepalives, other peers' frames).  So the node asks the
game rule for *jobs* (:meth:`p2p.table.game_rule.GameRule.prework` and ``premake``):

* before offering a received shuffle or tokens entry of the step the record is
  at, its signature and proof are checked by a job in a worker thread;
* before producing our own shuffle, the shuffle and its proof are made by a job
  in a worker thread.

A job touches only values captured when it was made (immutable points, bytes),
never the :class:`~p2p.record.chain.Record` or the rule; what it returns is called on
the event loop to keep the result, and the fold uses a kept result only for the
very same body and statement.  So the record is only ever touched from the
event-loop thread.  libsodium releases the GIL while it multiplies, so a job
uses the second core.  A job that fails keeps nothing: the fold checks the entry
itself and names the fault exactly as without this module.
"""

from __future__ import annotations

from typing import Any

import trio

from crypto.identity import verify_signature
from p2p.errors import RemoteProtocolError
from p2p.record.chain import entry_signing_input
from p2p.wire import Entry, Signed, decode_body


class Offload:
    """Runs a node's jobs; remembers which are under way or were tried."""

    def __init__(self) -> None:
        self._running: set[tuple[int, int]] = set()
        self._premade_for: int | None = None

    def wants_premake(self, rule: Any) -> bool:
        """Is there our own entry to make ahead, not tried yet at this step?"""
        return rule is not None and self._premade_for != rule.step_no and rule.premake() is not None

    async def premake(self, rule: Any) -> bool:
        """Make our own entry for the current step in a worker thread; ``True`` if a job ran."""
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
        if where in self._running:
            return  # a copy of the same entry (relayed) is being checked already
        job = rule.prework(entry.seat, entry.step, entry.body)
        if job is None:
            return
        key, raw, sig = keys[entry.seat], signed.entry, signed.signature

        def checked() -> Any:
            verify_signature(key, entry_signing_input(raw), sig)  # no unsigned work
            return job()

        self._running.add(where)
        try:
            keep = await trio.to_thread.run_sync(checked)
        except Exception:  # noqa: BLE001 - the fold checks it again and names the fault
            return
        finally:
            self._running.discard(where)
        keep()
