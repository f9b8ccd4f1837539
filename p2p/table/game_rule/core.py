"""What every sub-protocol of the game rule speaks: a step's :class:`Need`, work ahead
of the fold (:data:`Job`), the flow type, and our seat's secrets (:class:`SeatKeys`,
:class:`Mine`).

A sub-protocol is a generator (:data:`Flow`) over the :class:`p2p.table.game_rule.GameRule`
it runs in: it yields one :class:`Need` per record step and gets back every seat's
parsed entry for it, and it returns its answer to the obligation it discharges.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Annotated, Any

from crypto.dleq import PROOF_BYTES
from crypto.errors import InvalidEncoding
from crypto.group import POINT_BYTES, Point, random_scalar
from crypto.identity import IdentityKey
from crypto.seal import SealKey
from engine.game import Event, Game
from p2p.wire import MAX_SEATS, Body, Bytes, Seq, UInt

KEY_DOMAIN = b"slaiga/v1/game/key-share"

Proof64 = Annotated[bytes, Bytes(size=PROOF_BYTES)]
Point32 = Annotated[bytes, Bytes(size=POINT_BYTES)]
SeatList = Annotated[tuple[int, ...], Seq(UInt(max=MAX_SEATS - 1), max_len=MAX_SEATS)]


@dataclass(slots=True)
class Need:
    """What the current step needs: entries of ``kind`` from engine seats ``seats``.

    ``check(seat, body)`` validates one entry and returns its parsed value;
    ``make()`` builds our own entry (live peers only).  ``pre(seat, body)`` and
    ``premake()``, when set, return jobs (:data:`Job`) that do the expensive part of
    ``check`` or ``make`` ahead of the fold (see :meth:`GameRule.prework`).
    """

    kind: str
    seats: tuple[int, ...]
    check: Callable[[int, Any], Any]
    what: str
    make: Callable[[], Body] | None = None
    parsed: dict[int, Any] = field(default_factory=dict)
    pre: Callable[[int, Any], Job] | None = None
    premake: Callable[[], Job] | None = None
    cards: dict[int, tuple[int, ...]] | None = None
    """For a ``tokens`` step: the cards each seat owes its token for (so the remaining
    seats can act for a seat that is gone)."""


class Waived(Exception):
    """Thrown into a sub-protocol whose step is owed only by seats that are gone: what
    it waited for will never come (docs/design.md, "Surviving a lost player")."""


Job = Callable[[], Callable[[], None]]
"""Work ahead of the fold: calling it does the expensive, pure part (it touches only
values captured when the job was made, so it may run in a worker thread); what it
returns is called back on the event loop to keep the result for the fold."""


Flow = Generator[Need, dict[int, Any], Any]
"""A sub-protocol: yields a :class:`Need` per record step, is sent back the parsed
entries of every seat it named, and returns its answer."""


@dataclass(slots=True)
class SeatKeys:
    """What a live peer brings to its seat: identity (to sign sealed payloads), seal key
    (to open them), the per-table secret, and who decides its actions."""

    slot: int
    identity: IdentityKey
    seal: SealKey
    table_secret: bytes
    cheat: Any = None
    """Test hook (tests/p2p/cheaters.py): an object whose methods may replace this
    seat's honest contributions; ``None`` is honest."""


def derive(secret: bytes, domain: bytes, *parts: int) -> bytes:
    """64 bytes for ``domain`` and ``parts`` from the per-table secret (what must survive
    a crash: the key share, dice values, gift box keys)."""
    h = hashlib.sha512(domain + len(secret).to_bytes(2, "big") + secret)
    for p in parts:
        h.update(p.to_bytes(8, "big"))
    return h.digest()


class Mine:
    """The seat's private half: secret share, learnt card indices, own engine."""

    def __init__(self, keys: SeatKeys, seat: int, engine: Game) -> None:
        self.keys = keys
        self.seat = seat
        self.engine = engine
        self.secret = random_scalar(derive(keys.table_secret, KEY_DOMAIN))
        self.known: dict[int, int] = {}  # handle -> crypto index
        self.events: list[Event] = []
        self.verdict: Body | None = None  # our verdict on a gift sealed to us
        self.lagging = False  # its engine refused an action the seatless one took
        self.escrow_shares: dict[int, int] = {}  # dealer engine seat -> our checked share


def decode_points(blob: bytes, count: int) -> list[Point]:
    """``count`` received tokens, 32 bytes each, every one fully validated."""
    if len(blob) != POINT_BYTES * count:
        raise InvalidEncoding(f"{count} tokens must be {POINT_BYTES * count} bytes")
    return [Point.decode(blob[i : i + POINT_BYTES]) for i in range(0, len(blob), POINT_BYTES)]
