"""A player leaves (a bot now plays the seat) or comes back: a signed seat notice.

Sans-I/O: what a notice signs, how one is made and checked (docs/design.md, "Leaving
is told to everyone"; p2p/RECORD_FORMAT.md §11).  A notice is a
:class:`p2p.wire.SeatNotice`: seat ``seat`` signs, with its identity key,

    ``b"slaiga/v1/notice" || table_id || u8(seat) || u32be(number) || u64be(step) || u8(back)``

saying "my player left and a bot plays my seat from now on" (``back`` false) or "my
player is back" (``back`` true), as the seat's ``number``-th notice at this table
(from 0), while the record was at step ``step``.  Notices are told to every player,
kept in every record file and shown by ``slaiga verify``; they are not record entries,
so they never change the game's fold or the record's turn order, and they prove
nothing about cheating.  The number orders one seat's notices (a player may leave and
come back at one step); one seat's two different notices under one number are refused.
"""

from __future__ import annotations

from collections.abc import Iterable

from crypto.errors import CryptoError
from crypto.identity import IdentityKey, verify_signature
from p2p.errors import BadNotice
from p2p.table.forming import Manifest
from p2p.wire import SeatNotice

NOTICE_DOMAIN = b"slaiga/v1/notice"
MAX_NOTICES = 64
"""Notices one seat may sign at one table (numbers 0 to 63): a player leaves and comes
back a few times at most, and a peer that signs more cannot grow the others' files."""


def notice_message(table_id: bytes, seat: int, number: int, step: int, back: bool) -> bytes:
    """The exact bytes a notice's signature covers."""
    return (
        NOTICE_DOMAIN
        + table_id
        + bytes([seat])
        + number.to_bytes(4, "big")
        + step.to_bytes(8, "big")
        + bytes([int(back)])
    )


def sign_notice(
    identity: IdentityKey, table_id: bytes, seat: int, number: int, step: int, back: bool
) -> SeatNotice:
    """Our seat's (``seat``) ``number``-th notice: left (``back`` false) or back."""
    signature = identity.sign(notice_message(table_id, seat, number, step, back))
    return SeatNotice(table_id, seat, number, step, back, signature)


def what(notice: SeatNotice) -> str:
    return "is back" if notice.back else "left"


def check_notice(manifest: Manifest, notice: SeatNotice) -> None:
    """Raise :class:`BadNotice` saying which check fails; ``None`` if ``notice`` holds:
    this table's id, a seat of the table, and that seat's signature."""
    if notice.table_id != manifest.table_id:
        raise BadNotice(
            f"a notice of another table ({notice.table_id.hex()[:16]}), not of this one"
            f" ({manifest.table_id.hex()[:16]}): replayed from an earlier game"
        )
    n = manifest.n_seats
    if notice.seat >= n:
        raise BadNotice(f"a notice for seat {notice.seat + 1}; the table has {n} seats")
    name = manifest.seats[notice.seat].name
    if notice.number >= MAX_NOTICES:
        raise BadNotice(
            f"{name}'s notice number {notice.number + 1}: a seat signs at most {MAX_NOTICES}"
        )
    message = notice_message(notice.table_id, notice.seat, notice.number, notice.step, notice.back)
    try:
        verify_signature(manifest.seats[notice.seat].identity, message, notice.signature)
    except CryptoError:
        raise BadNotice(
            f"a notice that {name} {what(notice)}, but {name}'s key did not sign it"
            " (forged or changed on the way)"
        ) from None


class Notices:
    """The notices one table holds, at most one per (seat, number), and what they say.

    :meth:`add` checks a notice and says whether it is new; the latest notice of a
    seat (highest number) says whether a bot plays it now."""

    def __init__(self, manifest: Manifest) -> None:
        self.manifest = manifest
        self.by_seat: dict[int, dict[int, SeatNotice]] = {}

    def add(self, notice: SeatNotice) -> bool:
        """Check and keep ``notice``; ``True`` if new, ``False`` for a copy.  Raises
        :class:`BadNotice` for one that does not hold, or a seat's second, different
        notice under one number."""
        check_notice(self.manifest, notice)
        mine = self.by_seat.setdefault(notice.seat, {})
        known = mine.get(notice.number)
        if known == notice:
            return False
        if known is not None:
            name = self.manifest.seats[notice.seat].name
            raise BadNotice(
                f"{name} already signed notice number {notice.number + 1} ({name}"
                f" {what(known)}); a second, different one is refused"
            )
        mine[notice.number] = notice
        return True

    def latest(self, seat: int) -> SeatNotice | None:
        mine = self.by_seat.get(seat)
        return mine[max(mine)] if mine else None

    def is_latest(self, notice: SeatNotice) -> bool:
        return self.latest(notice.seat) == notice

    def bots(self) -> frozenset[int]:
        """The slots whose latest notice says a bot plays them now."""
        return frozenset(s for s in self.by_seat if not self.latest(s).back)  # type: ignore[union-attr]

    def next_number(self, seat: int) -> int:
        mine = self.by_seat.get(seat)
        return max(mine) + 1 if mine else 0

    def all(self) -> list[SeatNotice]:
        return [n for s in sorted(self.by_seat) for _, n in sorted(self.by_seat[s].items())]


def problems(
    manifest: Manifest, notices: Iterable[SeatNotice]
) -> tuple[list[SeatNotice], list[str]]:
    """The notices of a record file that hold (byte copies once), in seat and number
    order, and why the others do not (``slaiga verify``)."""
    held = Notices(manifest)
    bad: list[str] = []
    for notice in notices:
        try:
            held.add(notice)
        except BadNotice as exc:
            bad.append(str(exc))
    return held.all(), bad


__all__ = [
    "MAX_NOTICES",
    "NOTICE_DOMAIN",
    "Notices",
    "check_notice",
    "notice_message",
    "problems",
    "sign_notice",
    "what",
]
