"""What one peer's run at a table came to: :class:`TableResult` and :class:`CheatReport`."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from crypto.identity import fingerprint
from p2p.record.chain import Record
from p2p.table.forming import Manifest
from p2p.table.silence import Recovered, Stalled


@dataclass(frozen=True, slots=True)
class CheatReport:
    """A rejected or detected cheat: who is to blame and what the record said."""

    culprit: int
    kind: str
    reason: str
    via_peer: int | None
    step: int | None = None
    """The record step of the signed entry that proves it (:func:`evidence_step`)."""


def evidence_step(exc: Any, record: Any = None) -> int | None:
    """The record step a proven cheat is about, as ``slaiga verify`` names it: the step of
    the deviating entry (a lie shown by a later reveal: its action's step), else the step
    of the signed entry that is its evidence, else the step its reason names (a rule's
    refusal names the step it was checking: "action at step 55: ..."), else the step of
    ``record`` it came up at: the step whose completion showed it, or the step being filled
    whose entry was refused."""
    if getattr(exc, "step", None) is not None:
        return int(exc.step)
    from p2p.wire import Entry, decode_body

    for raw in getattr(exc, "evidence", ())[:1]:
        try:
            entry = decode_body(raw, Entry)
        except Exception:  # noqa: BLE001 - evidence that does not decode names no step
            break
        if isinstance(entry, Entry):
            return entry.step
    named = _STEP_NAMED.search(str(getattr(exc, "reason", "")))
    if named is not None:
        return int(named.group(1))
    if record is None:
        return None
    # the record's verdict came as a step completed (its fold stops there): that step;
    # else an entry of the step being filled was refused (a dice value that does not open)
    return record.step - 1 if getattr(record, "verdict", None) is exc else record.step


_STEP_NAMED = re.compile(r"\b(?:at|for) step (\d+)\b")


@dataclass(slots=True)
class TableResult:
    manifest: Manifest
    my_seat: int
    seat_order: tuple[int, ...]
    record: Record | None
    record_file: Path | None
    cheats: list[CheatReport] = field(default_factory=list)
    stalls: list[Stalled] = field(default_factory=list)
    recoveries: list[Recovered] = field(default_factory=list)
    peers_finished: set[int] = field(default_factory=set)
    divergent: list[int] = field(default_factory=list)
    aborted: int | None = None
    """The seat whose proven equivocation ended the table early (``None``: it did not)."""
    absent: int | None = None
    """The slot whose silence abandoned the table (``None``: it was not abandoned)."""
    ended_by_vote: int | None = None
    """The vanished slot for which every other seat voted to end the table (``None``: no
    such vote); ``absent`` is then that slot too, and nobody is convicted."""
    convicted: CheatReport | None = None
    """The proven cheat that ended the game (its signed entry is in our record file)."""
    game: dict[str, Any] | None = None
    """The game's agreed result once played (``GameRule.result``), engine seats."""
    entries: int = 0
    proofs: int = 0
    left: list[int] = field(default_factory=list)
    """Slots that left for good (the absence lane removed them): absent, not cheats."""
    left_abandoned: bool = False
    """Two seats left: the table ended there, unfinished, naming both."""

    @property
    def names(self) -> list[str]:
        """Seat names in engine-seat order (seat order), or manifest order before it."""
        order = self.seat_order or tuple(range(self.manifest.n_seats))
        return [self.manifest.seats[s].name for s in order]

    def engine_seat(self, slot: int | None) -> int | None:
        if slot is None or not self.seat_order:
            return slot
        return self.seat_order.index(slot)

    def _culprit(self, slot: int) -> dict[str, Any]:
        return {
            "culprit": self.engine_seat(slot) if slot in self.seat_order else None,
            "culprit_slot": slot,
            "name": self.manifest.seats[slot].name,
        }

    def cheat_words(self, cheat: CheatReport) -> str:
        """A proven cheat in the words of the live table's cheat line and ``slaiga verify``:
        who (name, seat counted from 1), what they did and at which step."""
        from p2p.record.verify import cheat_sentence, player_names

        who = player_names(self.manifest)
        return cheat_sentence(
            cheat.kind, cheat.reason, cheat.culprit, cheat.step, who, self.seat_order or None
        )

    def player(self, slot: int | None) -> dict[str, Any] | None:
        """A player as the results name it: ``seat`` (place in the seat order, from 0;
        ``None`` before the draw), ``slot`` (join order) and ``name``."""
        if slot is None:
            return None
        seat = self.seat_order.index(slot) if slot in self.seat_order else None
        return {"seat": seat, "slot": slot, "name": self.manifest.seats[slot].name}

    def game_summary(self) -> dict[str, Any]:
        """The final object of ``slaiga open/join/resume/play --json``."""
        culprit = self.convicted.culprit if self.convicted is not None else self.aborted
        out: dict[str, Any] = {
            "table_id": self.manifest.table_id.hex(),
            "game": self.manifest.game,
            "options": dict(self.manifest.options),
            "seat": self.engine_seat(self.my_seat),
            "seats": self.names,
            "ranking": list(self.game["ranking"]) if self.game else [],
            "scores": list(self.game.get("scores", [])) if self.game else [],
            "draw": bool(self.game.get("draw")) if self.game else False,
            "state_hash": self.game["state_hash"] if self.game else None,
            "record_head": self.record.head.hex() if self.record is not None else None,
            "record": str(self.record_file) if self.record_file is not None else None,
            "culprit": self.engine_seat(culprit),
            "culprit_name": self.manifest.seats[culprit].name if culprit is not None else None,
            "absent": self.player(self.absent),
            "ended_by_vote": self.player(self.ended_by_vote),
            "finished": bool(self.game) and self.convicted is None and self.absent is None,
            "entries": self.entries,
            "proofs": self.proofs,
            "left": [self.player(s) for s in self.left],
            "left_abandoned": self.left_abandoned,
            "removed_me": self.my_seat in self.left,
        }
        if self.convicted is not None:
            c = self.convicted
            out["cheat"] = {
                "kind": c.kind,
                "reason": c.reason,
                "step": c.step,
                "said": self.cheat_words(c),
            }
        return out

    def summary(self) -> dict[str, Any]:
        """The agreed manifest in seat order (what ``slaiga open/join --json`` prints)."""
        seats = []
        for slot in self.seat_order:
            member = self.manifest.seats[slot]
            seats.append(
                {
                    "name": member.name,
                    "fingerprint": fingerprint(member.identity),
                    "slot": slot,
                    "address": member.address,
                }
            )
        out: dict[str, Any] = {
            "table_id": self.manifest.table_id.hex(),
            "game": self.manifest.game,
            "options": dict(self.manifest.options),
            "seats": seats,
            "my_slot": self.my_seat,
        }
        if self.record is not None:
            out["record_steps"] = self.record.step - 1
            out["record_head"] = self.record.head.hex()
            out["finished"] = self.record.finished
        # players as everywhere else: culprit/seat in the seat order, *_slot, name
        if self.cheats:
            out["cheats"] = [
                {**self._culprit(c.culprit), "kind": c.kind, "reason": c.reason}
                for c in self.cheats
            ]
        if self.stalls:
            out["stalls"] = [self.player(s.seat) for s in self.stalls]
        if self.aborted is not None:
            out["aborted"] = {**self._culprit(self.aborted), "reason": "equivocation"}
        if self.absent is not None:
            out["absent"] = self.player(self.absent)
        if self.ended_by_vote is not None:
            out["ended_by_vote"] = self.player(self.ended_by_vote)
        if self.left:
            out["left"] = [self.player(s) for s in self.left]
            out["left_abandoned"] = self.left_abandoned
        return out
