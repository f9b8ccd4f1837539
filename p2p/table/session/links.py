"""Who holds a link to whom, and the relay and the requests that follow from it.

Every seat tells the seats it is linked to whom it holds a link to (:class:`Links`,
on every change).  From that the session knows which seats no one we hear from holds
a link to, and since when (a machine most likely gone: :mod:`.vanished`, :mod:`.lane`),
and to whom an entry must be passed on (p2p/table/relay.py: only to the seats that
told us they hold no link to its author).  A late step is asked for from every linked
seat (:class:`p2p.table.relay.Nudge`), since a link may be down unnoticed.
"""

from __future__ import annotations

from p2p.record.chain import Offer
from p2p.table.effects import Broadcast, Send
from p2p.table.relay import Nudge, relay_to
from p2p.table.session.context import Context
from p2p.table.session.messages import Links


class Connectivity:
    """Our links, each seat's last word on its own, and what we relay because of them."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.linked: frozenset[int] = frozenset()
        """The slots we hold a link to, as of the last link event or tick."""
        self.links: dict[int, frozenset[int]] = {}
        """The slots each seat last said it holds a link to (:class:`Links`)."""
        self.unlinked_since: dict[int, float] = {}
        """Slots nobody we hear from holds a link to, and since when."""
        self.nudge = Nudge()
        """When to ask the linked seats for a late step's entries (p2p/table/relay.py)."""
        self.relayed = 0
        """Others' entries we passed on, counted once per seat sent to (tests count them)."""

    def tell(self, linked: frozenset[int]) -> None:
        """Tell every linked seat whom we hold a link to (on every change of our links)."""
        self.linked = linked
        self.ctx.out.append(Broadcast(Links(self.ctx.manifest.table_id, tuple(sorted(linked)))))

    def heard(self, via: int, msg: Links) -> None:
        """The seat in ``via`` told us whom it holds a link to."""
        self.links[via] = frozenset(msg.slots)

    def track(self, now: float, linked: frozenset[int]) -> None:
        """Which seats no one we hear from holds a link to (we included), and since when.

        While we hold no link at all it may be us who are cut off, so nobody is
        judged then (the clocks start again when a link is back)."""
        if not linked:
            self.unlinked_since.clear()
            return
        heard = set(linked)
        for slot in linked:
            heard |= self.links.get(slot, frozenset())
        for slot in range(self.ctx.manifest.n_seats):
            if slot == self.ctx.my_seat or slot in heard:
                self.unlinked_since.pop(slot, None)
            else:
                self.unlinked_since.setdefault(slot, now)

    def relay(self, offer: Offer, via: int | None) -> None:
        """Pass entries we accepted on only to the seats that told us they hold no link to
        their author (p2p/table/relay.py): a healthy table sends each entry once per link,
        and the two ends of a broken link get each other's entries through the others
        once it is known down (before that, the late step is asked for: :meth:`nudged`).
        A copy that arrives twice is a duplicate, checked by its bytes alone
        (p2p/record/chain.py)."""
        ctx = self.ctx
        seats = ctx.seat_keys
        for acc in offer.accepted:
            if acc.seat == ctx.my_seat:
                continue
            for slot in relay_to(acc.seat, via, ctx.my_seat, self.linked, self.links):
                self.relayed += 1
                ctx.out.append(Send(ctx.key(slot), acc.signed))
            # our spectators follow the table through us alone (p2p/net/watch_server.py):
            # every entry goes on to them, and to no seat
            ctx.out.append(Broadcast(acc.signed, seats))

    def nudged(self, now: float, linked: frozenset[int]) -> float | None:
        """Ask the linked seats for our step's entries when it is late (a link may be
        down unnoticed); returns when to look again (``None``: not waiting)."""
        ctx, rec = self.ctx, self.ctx.record
        self.linked = linked
        waiting = not rec.finished and bool(rec.waiting_on() - {ctx.my_seat})
        if self.nudge.due(now, rec.step, waiting):
            ctx.ask_everyone()
        return self.nudge.deadline()
