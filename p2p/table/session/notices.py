"""A player leaves or comes back: the signed seat notices (p2p/table/notice.py).

Our player left (a bot plays our seat from now on) or is back: the notice is signed,
persisted (fsync) before it leaves, and sent to every linked seat, each of which
relays it on.  Another seat's notice is checked, kept (one per seat and number),
persisted, relayed and told; a bad one is refused with the reason, blaming only the
link (a notice proves nothing about cheating).
"""

from __future__ import annotations

from p2p import wire
from p2p.errors import BadNotice
from p2p.table.effects import Broadcast, PersistNotice
from p2p.table.events import NoticeRefused, SeatBack, SeatLeft
from p2p.table.notice import MAX_NOTICES, Notices, sign_notice
from p2p.table.session.context import Context


class SeatNotices:
    """Every seat's signed notices, and ours to sign."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.notices = Notices(ctx.manifest)
        """Every seat's signed notices: a player left (a bot plays the seat) or is back."""

    def bot_slots(self) -> frozenset[int]:
        """The slots a bot plays now, as their players' latest notices say."""
        return self.notices.bots()

    def notify(self, back: bool) -> None:
        """Sign our notice (left, or ``back``), unless our latest one says so already."""
        ctx, rec = self.ctx, self.ctx.record
        if ctx.ended():
            return
        latest = self.notices.latest(ctx.my_seat)
        if latest is not None and latest.back == back and (not back or latest.step == rec.step):
            return  # already said so (back again after a later break is news)
        number = self.notices.next_number(ctx.my_seat)
        if number >= MAX_NOTICES:
            return  # we said it often enough; the table goes on
        notice = sign_notice(
            ctx.identity, ctx.manifest.table_id, ctx.my_seat, number, rec.step, back
        )
        self.notices.add(notice)
        ctx.out.append(PersistNotice(notice))  # durable before it leaves
        ctx.out.append(Broadcast(notice))

    def take(self, notice: wire.SeatNotice, via: int) -> None:
        """A notice from the link of slot ``via`` (see the module docstring); a copy is
        ignored."""
        ctx = self.ctx
        if ctx.ended_by_vote is not None:
            return  # the record file is closed
        try:
            if notice.seat == ctx.my_seat and notice not in self.notices.all():
                raise BadNotice("a notice in our own name that is not in our record file")
            new = self.notices.add(notice)
        except BadNotice as exc:
            ctx.out.append(NoticeRefused(**ctx.who(via), reason=str(exc)))
            return
        if not new:
            return
        ctx.out.append(PersistNotice(notice))
        ctx.pass_on(notice, via, notice.seat)  # relayed like votes: not back, not to its signer
        if self.notices.is_latest(notice):  # an older one arriving late is kept, not told
            kind = SeatBack if notice.back else SeatLeft
            ctx.out.append(kind(**ctx.who(notice.seat), step=notice.step))

    def reload(self, notices: tuple[wire.SeatNotice, ...]) -> None:
        """Notices in our file on resume (each checked again; a bad one is dropped)."""
        for notice in notices:
            try:
                self.notices.add(notice)
            except BadNotice:
                continue
