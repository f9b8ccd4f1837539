"""Ending the table by a signed vote (p2p/table/endvote.py; docs/design.md).

When the player owing a step has vanished (:mod:`.vanished`), ours is asked whether
to end the table.  Our vote is signed, persisted (fsync) before it leaves, and final:
we sign no further entry at this table.  Each other seat's first validly signed vote
is kept, relayed and counted; with ours and every other remaining seat's for our very
step and head, the votes close the record file and the table ends, nobody convicted.
A bad vote is refused with the reason and convicts no one.
"""

from __future__ import annotations

from p2p import wire
from p2p.errors import BadVote, NodeError
from p2p.table.effects import AskEnd, Broadcast, CloseWithVotes, PersistVote, Wake
from p2p.table.endvote import check_vote, sign_vote, tally
from p2p.table.events import EndedByVote, VoteCast, VoteRefused
from p2p.table.session.context import Context
from p2p.table.session.links import Connectivity


class EndVotes:
    """Our end vote, the others', and their count."""

    def __init__(self, ctx: Context, links: Connectivity) -> None:
        self.ctx = ctx
        self.links = links
        self.mine: wire.EndVote | None = None
        """Our own end vote once signed: final, we sign no further entry at this table."""
        self.others: dict[int, wire.EndVote] = {}
        """The first validly signed end vote of each other seat."""
        self._asked: set[tuple[int, int]] = set()

    def all(self) -> list[wire.EndVote]:
        votes = list(self.others.values())
        if self.mine is not None:
            votes.append(self.mine)
        return votes

    def ask(self, slot: int, silent_for: float) -> None:
        """The player owing the step vanished: ask ours (once per slot and step) whether
        to end the table."""
        ctx = self.ctx
        key = (slot, ctx.record.step)
        if key in self._asked or self.mine is not None or ctx.ended():
            return
        self._asked.add(key)
        ctx.out.append(AskEnd(slot, ctx.record.step, silent_for))

    def problem(self, slot: int, now: float) -> str | None:
        """Why we may not vote now to end the table for ``slot`` (``None``: we may)."""
        ctx, rec, manifest = self.ctx, self.ctx.record, self.ctx.manifest
        if ctx.ended() or rec.finished:
            return "the table has ended"
        if self.mine is not None:
            return "you already voted"
        if not 0 <= slot < manifest.n_seats or slot == ctx.my_seat:
            return "that is not another player of this table"
        name = ctx.who(slot)["name"]
        if slot not in rec.waiting_on():
            return f"{name} does not owe step {rec.step}"
        since = self.links.unlinked_since.get(slot)
        limit = manifest.max_wait_ms / 1000
        if since is None or now - since < limit:
            return f"{name} has not been without a link to anyone for {limit:g}s"
        return None

    def vote(self, slot: int, now: float) -> str | None:
        """Our player votes to end the table for ``slot``: signed, persisted (fsync) and
        sent; returns why not (``None``: voted)."""
        problem = self.problem(slot, now)
        if problem is not None:
            return problem
        ctx, rec = self.ctx, self.ctx.record
        vote = sign_vote(ctx.identity, ctx.manifest.table_id, ctx.my_seat, rec.step, rec.head, slot)
        ctx.out.append(PersistVote(vote))  # durable before it leaves: a restart still voted
        self.mine = vote
        ctx.out.append(Broadcast(vote))
        self._cast(vote)
        self._tally()
        return None

    def take(self, vote: wire.EndVote, via: int) -> None:
        """A vote from the link of slot ``via``: checked, kept (one per seat), relayed
        and counted.  A bad one is refused with the reason; it convicts no one."""
        ctx, rec, manifest = self.ctx, self.ctx.record, self.ctx.manifest
        if ctx.ended_by_vote is not None or vote == self.mine:
            return
        try:
            check_vote(manifest, vote)
            if vote.seat == ctx.my_seat:
                raise BadVote("a vote in our own name that we never sent")
            if vote.step <= rec.step:  # not ahead of us: it must be for exactly our record
                check_vote(manifest, vote, step=rec.step, head=rec.head, owing=rec.waiting_on())
            known = self.others.get(vote.seat)
            if known is not None and known != vote:
                raise BadVote(f"{ctx.who(vote.seat)['name']} already voted; a second vote")
        except BadVote as exc:
            ctx.out.append(VoteRefused(**ctx.who(via), reason=str(exc)))
            return
        if vote.seat in self.others:
            return  # a copy
        self.others[vote.seat] = vote
        ctx.pass_on(vote, via, vote.seat)  # relayed like entries: not back, not to its voter
        self._cast(vote)
        self._tally()

    def _cast(self, vote: wire.EndVote) -> None:
        same = [
            v
            for v in self.all()
            if (v.step, v.head, v.absent) == (vote.step, vote.head, vote.absent)
        ]
        ctx = self.ctx
        ctx.out.append(
            VoteCast(
                voter=ctx.who(vote.seat)["name"],
                voter_slot=vote.seat,
                **ctx.who(vote.absent),
                step=vote.step,
                votes=len(same),
                needed=ctx.manifest.n_seats - 1,
            )
        )

    def _tally(self) -> None:
        """With our vote and every other remaining seat's for our very step and head, write
        them as the record file's closing frame and end the table (nobody convicted)."""
        ctx, mine, rec = self.ctx, self.mine, self.ctx.record
        if mine is None or ctx.ended_by_vote is not None:
            return
        key = (mine.step, mine.head, mine.absent)
        votes = {v.seat: v for v in self.all() if (v.step, v.head, v.absent) == key}
        count = tally(ctx.manifest, votes.values(), rec.step, rec.head, rec.waiting_on())
        if not count.ended:
            return
        ctx.out.append(CloseWithVotes(wire.EndVotes(tuple(votes[s] for s in count.voters))))
        ctx.ended_by_vote = ctx.absent = mine.absent
        ctx.out.append(EndedByVote(**ctx.who(mine.absent), step=mine.step))
        ctx.out.append(Wake())

    def reload(self, votes: tuple[wire.EndVote, ...], closed: bool) -> None:
        """Votes in our file on resume: our own stays final (we sign nothing more)."""
        manifest = self.ctx.manifest
        if closed:
            raise NodeError(
                f"table {manifest.table_id.hex()} was ended by vote; there is nothing to"
                " resume (slaiga verify shows its record)"
            )
        for vote in votes:
            try:
                check_vote(manifest, vote)
            except BadVote:
                continue
            if vote.seat == self.ctx.my_seat:
                self.mine = vote
            else:
                self.others.setdefault(vote.seat, vote)
