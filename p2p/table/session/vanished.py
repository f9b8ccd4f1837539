"""A vanished player: one who owes a decision and whom no one holds a link to.

A person may think for the whole decision limit, but a player whose machine is gone
(no link to anyone, as far as we hear, for the machine steps' limit) is said by name
well before that, and ours is asked whether to end the table (:mod:`.votes`).  Ending
the table early is the remaining players' call (a signed vote, docs/design.md); until
then the table waits, as the manifest says.
"""

from __future__ import annotations

import math

from p2p.table.events import Vanished
from p2p.table.session.context import Context
from p2p.table.session.links import Connectivity
from p2p.table.session.votes import EndVotes
from p2p.table.silence import SilenceMonitor


class Vanishing:
    """Who was said to have vanished, at which step."""

    def __init__(
        self, ctx: Context, links: Connectivity, monitor: SilenceMonitor, votes: EndVotes
    ) -> None:
        self.ctx = ctx
        self.links = links
        self.monitor = monitor
        self.votes = votes
        self._told: set[tuple[int, int]] = set()

    def tell(self, now: float, linked: frozenset[int]) -> float | None:
        """Say by name which player owing a decision has had no link to anyone for the
        machine steps' limit, and ask ours whether to end the table; returns when to look
        again (``None``: no need)."""
        ctx, rec, monitor = self.ctx, self.ctx.record, self.monitor
        self.links.track(now, linked)
        limit = ctx.manifest.max_wait_ms / 1000
        if monitor.max_wait <= limit:
            return None  # a machine step: the table gives up at this limit anyway
        wake: float | None = None
        for slot in sorted(rec.waiting_on()):
            since = self.links.unlinked_since.get(slot)
            if since is None or (slot, rec.step) in self._told:
                continue
            if now - since < limit:
                wake = min(wake or math.inf, since + limit)
                continue
            self._told.add((slot, rec.step))
            silent = monitor.silent_for(slot, now) or 0.0
            ctx.tell(  # the person at this seat hears it too
                Vanished(
                    **ctx.who(slot),
                    step=rec.step,
                    silent_for=round(now - since, 1),
                    gives_up_in=round(max(0.0, monitor.max_wait - silent), 1),
                )
            )
            self.votes.ask(slot, now - since)
        return wake
