"""The linger: how a table's record run ends for this peer.

A finished peer says so (:class:`Finished`, with its head) and waits up to
:data:`LINGER_S` for every other seat to say it too, judging every head claim unlike
ours first (:mod:`.heads`); chain breaks still unexplained then are blamed
(:mod:`.blame`).  A table ended early (a conviction, a vote) lingers at most
:data:`ENDED_LINGER_S`, so that the evidence or votes we relayed arrive.  Either way,
a spectator still linked to us then is given up to :data:`SPECTATOR_GRACE_S` more to
fetch the end of the record (p2p/net/watch_server.py): a watcher leaves as soon as it
has the result or the verdict, so a table nobody watches ends no later.
"""

from __future__ import annotations

from p2p.errors import TableAbandoned
from p2p.table.effects import Broadcast
from p2p.table.events import EndedEarly, LingerTimeout, RecordFinished, SeatFinished
from p2p.table.session.blame import Blame
from p2p.table.session.context import Context
from p2p.table.session.heads import Heads
from p2p.table.session.links import Connectivity
from p2p.table.session.messages import Finished

LINGER_S = 10.0
"""How long a finished peer waits for the others to say they finished too."""
ENDED_LINGER_S = 2.0
"""At most this long a table ended early lingers, so that the evidence we relayed arrives."""
SPECTATOR_GRACE_S = 10.0
"""Once the linger is over, at most this much longer we serve spectators still linked to
us (one that fell behind on a loaded machine fetches the last steps or the evidence)."""


class Linger:
    """Who said they finished, and how long we still wait."""

    def __init__(
        self, ctx: Context, links: Connectivity, heads: Heads, blame: Blame, linger_s: float
    ) -> None:
        self.ctx = ctx
        self.links = links
        self.heads = heads
        self.blame = blame
        self.linger_s = linger_s
        self.finished_peers: dict[int, bytes] = {}
        """The head each seat said its finished record has."""
        self._ended_at: float | None = None
        self._announced = False
        self.until: float | None = None
        """When the linger after our record finished ends (``None``: not finished)."""
        self.done_at: float | None = None
        """When the linger ended (``None``: still lingering, or still playing)."""

    def spectators_until(self, now: float, watching: int) -> float | None:
        """The linger is over (:attr:`done_at`): until when we still serve the ``watching``
        spectators linked to us (``None``: nobody watches, or their grace is over)."""
        assert self.done_at is not None
        until = self.done_at + SPECTATOR_GRACE_S
        return until if watching > 0 and now < until else None

    def finished_msg(self) -> Finished:
        rec = self.ctx.record
        return Finished(self.ctx.manifest.table_id, rec.step, rec.head)

    def heard(self, via: int, msg: Finished) -> None:
        """The seat in ``via`` says its record is finished, at ``msg.head``."""
        self.finished_peers[via] = msg.head
        self.ctx.out.append(SeatFinished(**self.ctx.who(via), step=msg.step))

    def _ended_linger(self) -> float:
        return min(self.linger_s, ENDED_LINGER_S)

    def after_end(self, now: float) -> bool:
        """The table ended early: linger a moment so the evidence we relayed reaches every
        seat; ``True`` once that is over.  Raises :class:`TableAbandoned` then when the
        vote ended it."""
        ctx = self.ctx
        if self._ended_at is None:
            self._ended_at = now
            if ctx.convicted is not None:
                ctx.out.append(EndedEarly(**ctx.culprit(ctx.convicted.culprit)))
            elif ctx.ended_by_vote is None:
                ctx.out.append(EndedEarly(name=None, culprit=None, culprit_slot=None))
        if now < self._ended_at + self._ended_linger():
            return False
        if ctx.ended_by_vote is not None:
            gone = ctx.ended_by_vote
            waited = now - self.links.unlinked_since.get(gone, now)
            raise TableAbandoned(gone, waited, ctx.who(gone)["name"], by_vote=True)
        return True

    def ended_until(self) -> float | None:
        """When the linger after an early end is over (``None``: the table did not end
        early)."""
        return None if self._ended_at is None else self._ended_at + self._ended_linger()

    def finish(self, now: float) -> bool:
        """Our record is finished: say so once, then wait for every other seat to say it
        too (a head unlike ours is compared entry by entry before anything is said);
        ``True`` once done waiting."""
        ctx = self.ctx
        rec = ctx.record
        # a seat that left for good is waited for too: its machine may come back and
        # follow to the end (it fetches what it missed from us)
        others = ctx.manifest.n_seats - 1
        if not self._announced:
            self._announced = True
            self.until = now + self.linger_s
            ctx.out.append(Broadcast(self.finished_msg()))
            ctx.out.append(RecordFinished(steps=rec.step - 1, head=rec.head.hex()))
        settled = self.heads.settle(self.finished_peers)
        if len(self.finished_peers) >= others and settled:
            self.blame.blame_suspects()
            return True
        assert self.until is not None
        if now >= self.until:
            ctx.out.append(LingerTimeout(missing=others - len(self.finished_peers)))
            self.blame.blame_suspects()
            return True
        return False
