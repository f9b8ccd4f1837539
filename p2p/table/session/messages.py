"""The session's own messages between seats: "my record is finished", "these are my links".

Neither is signed or written to the record; each is a hint a seat acts on
(:mod:`p2p.table.session.linger`, :mod:`p2p.table.session.links`).
"""

from __future__ import annotations

from dataclasses import dataclass

from p2p import wire
from p2p.table.game_rule import SeatList
from p2p.wire import Hash, Step, TableId


@wire.message("finished")
@dataclass(frozen=True, slots=True)
class Finished(wire.Message):
    """Sent when a peer's record is complete; peers linger until all have said it."""

    table_id: TableId
    step: Step
    head: Hash


@wire.message("links")
@dataclass(frozen=True, slots=True)
class Links(wire.Message):
    """The slots a peer holds a link to now, sent to every linked seat when that changes.

    Unsigned, so only a hint: it lets each peer tell a player whose machine is gone
    (no link to anyone) from one who is merely thinking, and say so by name."""

    table_id: TableId
    slots: SeatList
