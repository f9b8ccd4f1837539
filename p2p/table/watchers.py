"""Who may watch a formed table, and what a spectator may send: sans-I/O.

The signed manifest says how many spectators each seat lets watch at once
(:attr:`p2p.table.forming.Manifest.spectators`, 0 = none), so the seats decide
together.  A spectator connects to a seat like any stranger (the mesh's stranger
limits hold until it is admitted: small frames, a small byte allowance, a short
window to speak, :mod:`p2p.net.mesh`), then sends one :class:`p2p.wire.Watch`.
:class:`WatchGate` judges every message a non-seat sends once the record runs:

* a ``Watch`` for this table, while fewer than ``spectators`` watch through this
  seat, admits it (:attr:`Decision.WELCOME`: the node sends the genesis, relays
  every accepted entry to it from then on, and tells its player who is watching);
  past the limit, or at a table that lets nobody watch, it is refused (``full``);
* a spectator may then send ``Fetch`` for this table (served by the rate-limited
  fetch server, in bounded pieces) and keepalives, nothing else: an entry, a
  vote or any other message cuts it off at once (:attr:`Decision.CUT`).  The
  mesh meters its bytes and its outbox on top (its own budgets, below the seats').

A spectator is never part of the record: it signs nothing, owes nothing, so the
silence rules never name it, and nothing it sends is ever offered to the record.
The node feeds messages in and carries out the decisions.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from crypto.identity import fingerprint
from p2p import wire


class Decision(enum.Enum):
    WELCOME = "welcome"  # a Watch we take: admit the spectator, send it the genesis
    SERVE = "serve"  # a spectator's Fetch: hand it to the fetch server
    IGNORE = "ignore"  # harmless (a second Watch, a Fetch for another table)
    REFUSE = "refuse"  # tell it why (``reason``, ``detail``), then close
    CUT = "cut"  # a spectator (or a stranger) sent what it may not: close the link


@dataclass(frozen=True, slots=True)
class Verdict:
    decision: Decision
    reason: str = ""
    detail: str = ""


@dataclass(slots=True)
class WatchGate:
    """One seat's spectators: ``slots`` from the manifest, ``watching`` peer -> name."""

    table_id: bytes
    slots: int
    watching: dict[bytes, str] = field(default_factory=dict)
    refused: int = 0
    cut: int = 0

    def judge(self, peer: bytes, message: wire.Message) -> Verdict:
        """What to do with ``message`` from ``peer``, which holds no seat."""
        if peer in self.watching:
            if isinstance(message, wire.Fetch):
                if message.table_id != self.table_id:
                    return Verdict(Decision.IGNORE)
                return Verdict(Decision.SERVE)
            if isinstance(message, wire.Watch):
                return Verdict(Decision.IGNORE)
            self.cut += 1
            return Verdict(
                Decision.CUT, "busy", f"a spectator sends no {message.TAG!r} (it signs nothing)"
            )
        if isinstance(message, wire.Join):
            self.refused += 1
            return Verdict(
                Decision.REFUSE,
                "full",
                "every seat is taken and the game has started (slaiga watch follows it)",
            )
        if not isinstance(message, wire.Watch):
            self.cut += 1
            return Verdict(Decision.CUT, "stranger", f"{message.TAG!r} from a peer with no seat")
        if message.table_id != self.table_id:
            self.refused += 1
            return Verdict(Decision.REFUSE, "gone", f"no table {message.table_id.hex()} here")
        if self.slots == 0:
            self.refused += 1
            return Verdict(Decision.REFUSE, "full", "the players let nobody watch this table")
        if len(self.watching) >= self.slots:
            self.refused += 1
            return Verdict(
                Decision.REFUSE,
                "full",
                f"{len(self.watching)} spectators already watch through this player"
                f" (the table allows {self.slots})",
            )
        self.watching[peer] = message.name
        return Verdict(Decision.WELCOME)

    def gone(self, peer: bytes) -> str | None:
        """A link ended: the spectator's name if it was one (no longer counted)."""
        return self.watching.pop(peer, None)

    def describe(self, peer: bytes) -> dict[str, str | int]:
        """How events name a spectator: its given ``name``, key ``fingerprint`` and the
        number ``watching`` now."""
        return {
            "name": self.watching.get(peer, "a spectator"),
            "fingerprint": fingerprint(peer),
            "watching": len(self.watching),
        }
