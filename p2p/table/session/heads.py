"""Fetched records and head claims.

Replies to a ``Fetch`` come in bounded pieces (p2p/net/fetch.py): each is offered
entry by entry, and the next piece is asked for while the pieces move us on.  A
finished seat that claims another head than ours is not believed or blamed on its
word (the claim is not signed): its whole record is fetched and walked to the end,
and only signed entries that fork from ours (equivocation, a chain we do not know)
make it divergent; a record that matches ours leaves the claim a false one, and the
game stands.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from p2p import wire
from p2p.table.effects import Effect, Send
from p2p.table.events import Divergent, FalseHead, HeadClaimed
from p2p.table.session.blame import Blame
from p2p.table.session.context import Context, entry_step


class Heads:
    """Walking fetched pieces, and judging every head claim unlike ours."""

    def __init__(
        self,
        ctx: Context,
        blame: Blame,
        offer: Callable[[wire.Signed, int | None], list[Effect]],
    ) -> None:
        self.ctx = ctx
        self.blame = blame
        self.offer = offer
        """The session's offer of one signed entry (from the link of a slot)."""
        self.divergent: list[int] = []
        """Seats whose signed record forks from ours."""
        self._checks: dict[int, int] = {}
        """Seats whose claimed head differs from ours, and the step their record is fetched
        from next to compare it with ours (a head claim is a hint, not evidence)."""
        self._checked: set[int] = set()
        self._forks: set[int] = set()
        self._false: set[int] = set()

    def take_fetched(self, msg: wire.Fetched, peer: bytes, via: int) -> None:
        """Offer a fetched piece; if the peer holds more and this piece moved us on, ask it
        for the next piece.  While we compare a seat's record with ours
        (:meth:`_check_head`), its pieces are walked to the end whether or not they move
        us on."""
        ctx, rec = self.ctx, self.ctx.record
        before = rec.step, len(rec.signed_from(rec.step))
        forks = self.blame.forks()
        for signed in msg.entries:
            ctx.out.extend(self.offer(signed, via))
        if self.blame.forks() != forks and via in self._checks:
            self._forks.add(via)  # its signed entries fork from ours
        cursor = self._checks.get(via)
        if cursor is not None:
            last = max((entry_step(s) for s in msg.entries), default=cursor)
            if msg.more:
                self._checks[via] = max(last, cursor + 1)
                ctx.out.append(Send(peer, wire.Fetch(msg.table_id, self._checks[via])))
            else:
                del self._checks[via]
            return
        if msg.more and (rec.step, len(rec.signed_from(rec.step))) != before:
            ctx.out.append(Send(peer, wire.Fetch(msg.table_id, rec.step)))

    def _check_head(self, slot: int, head: bytes) -> None:
        """A finished seat claims another head than ours: fetch its whole record."""
        ctx = self.ctx
        if slot in self._checked:
            return
        self._checked.add(slot)
        self._checks[slot] = 1
        ctx.out.append(HeadClaimed(**ctx.who(slot), head=head.hex()))
        ctx.out.append(Send(ctx.key(slot), wire.Fetch(ctx.manifest.table_id, 1)))

    def settle(self, finished_peers: Mapping[int, bytes]) -> bool:
        """Judge every head claim (``finished_peers``: slot -> claimed head) that differs
        from ours; ``True`` once none is still being compared (a seat whose record forks
        from ours is then in :attr:`divergent`)."""
        ctx = self.ctx
        for slot, head in finished_peers.items():
            if head != ctx.record.head:
                self._check_head(slot, head)
        for slot in sorted(self._checked - set(self._checks)):
            if slot in self.divergent or slot in self._false:
                continue
            if slot in self._forks or self.blame.equivocations:
                self.divergent.append(slot)
                ctx.out.append(Divergent(**ctx.who(slot)))
            else:
                self._false.add(slot)
                ctx.out.append(FalseHead(**ctx.who(slot)))
        return not self._checks
