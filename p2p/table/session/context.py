"""What every topic of a table session shares (:mod:`p2p.table.session`).

One :class:`Context` per session: the record and who we are at it, the queue of
effects every topic appends to (in order, so the shell carries them out as they were
decided), how events name a player, and how the table ended (a conviction, a vote,
an absent or aborting seat), which several topics ask before they act.
"""

from __future__ import annotations

from typing import Any

from crypto.identity import IdentityKey
from p2p import wire
from p2p.errors import RemoteProtocolError
from p2p.record.chain import Record
from p2p.table.effects import Broadcast, Effect, SendEach, Tell
from p2p.table.events import NodeEvent
from p2p.table.forming import FormingRule, Manifest
from p2p.table.game_rule import GameProtocol
from p2p.table.results import CheatReport


def seat_order(record: Record | None) -> tuple[int, ...]:
    """Slots in the drawn seat order (empty before it is drawn)."""
    if record is not None and isinstance(record.rule, FormingRule):
        return record.rule.seat_order or ()
    return ()


def who(manifest: Manifest | None, order: tuple[int, ...], slot: int | None) -> dict[str, Any]:
    """How events name the player in ``slot``: ``name``, ``seat`` (its place in the
    seat order, from 0, like the results; ``None`` before the draw) and ``slot``."""
    if slot is None or manifest is None or not 0 <= slot < manifest.n_seats:
        return {"name": "a peer not yet seated", "seat": None, "slot": slot}
    seat = order.index(slot) if slot in order else None
    return {"name": manifest.seats[slot].name, "seat": seat, "slot": slot}


def entry_step(signed: wire.Signed) -> int:
    """The step an envelope's entry claims (0 when it does not decode)."""
    try:
        entry = wire.decode_body(signed.entry, wire.Entry)
    except RemoteProtocolError:
        return 0
    return entry.step  # type: ignore[attr-defined]


class Context:
    """The record, our seat, the effect queue and the table's ending, shared by topics."""

    def __init__(self, record: Record, identity: IdentityKey, my_seat: int) -> None:
        self.record = record
        self.manifest: Manifest = record.manifest
        self.seat_keys: frozenset[bytes] = frozenset(m.identity for m in self.manifest.seats)
        """Every seat's identity key (the manifest's; made once, asked per entry)."""
        self.identity = identity
        self.my_seat = my_seat
        self.out: list[Effect] = []
        self.convicted: CheatReport | None = None
        """The proven cheat that ended the game (``None``: nobody convicted)."""
        self.ended_by_vote: int | None = None
        """The vanished slot every other seat voted to end the table for."""
        self.absent: int | None = None
        """The slot whose silence abandoned the table (``None``: it was not abandoned)."""
        self.aborted: int | None = None
        """The proven equivocator whose fork stalled the table (``None``: none)."""

    def drain(self) -> list[Effect]:
        """The effects queued so far, in order (the queue is emptied in place)."""
        out = list(self.out)
        self.out.clear()
        return out

    def ended(self) -> bool:
        return self.convicted is not None or self.ended_by_vote is not None

    def is_game(self) -> bool:
        return isinstance(self.manifest.protocol, GameProtocol)

    # -- naming ----------------------------------------------------------

    def seat_order(self) -> tuple[int, ...]:
        return seat_order(self.record)

    def who(self, slot: int | None) -> dict[str, Any]:
        return who(self.manifest, self.seat_order(), slot)

    def culprit(self, slot: int) -> dict[str, Any]:
        w = self.who(slot)
        return {"name": w["name"], "culprit": w["seat"], "culprit_slot": slot}

    def slot_of(self, peer: bytes) -> int | None:
        return self.manifest.seat_of(peer)

    def key(self, slot: int) -> bytes:
        return self.manifest.seats[slot].identity

    # -- effects every topic uses ------------------------------------------

    def ask_everyone(self, back: int = 0) -> None:
        """Ask every linked seat for the entries from our current step on (``back``: from
        that many completed steps before it too)."""
        step = max(1, self.record.step - back)
        self.out.append(SendEach(wire.Fetch(self.manifest.table_id, step)))

    def ask_before_blame(self) -> None:
        """The re-fetch before anyone is named silent asks for our last completed step too:
        a seat that sent two versions of it, each leading to another next mover, leaves two
        groups of seats each waiting on the other, and only the other group's version,
        seen beside ours, convicts it (of equivocation) instead of naming a silent seat."""
        self.ask_everyone(back=1)

    def pass_on(self, msg: wire.Message, via: int, signer: int) -> None:
        """Relay a signed message (a vote, a notice) to every linked seat but the link it
        came from and its signer."""
        self.out.append(Broadcast(msg, frozenset({self.key(via), self.key(signer)})))

    def tell(self, event: NodeEvent) -> None:
        """Report ``event``, and say it to the person at this seat too."""
        self.out.append(event)
        self.out.append(Tell(event.describe()))
