"""A spectator's side of a table, sans-I/O: follow the signed record, check everything, sign
nothing.

A :class:`Spectator` holds a *seatless* :class:`p2p.record.chain.Record`, built from the
genesis with the turn rules the signed manifest names (:func:`p2p.table.forming.table_rule`),
exactly as ``slaiga verify`` builds it (:mod:`p2p.record.verify`).  So every entry it is
given goes through the very checks a seat runs: the table id, the signature under the
claimed seat's key, the hash chain, whose turn it is and which kind is owed, and the
game's own checks (every shuffle, token, remask, hand proof, dice opening and action;
RECORD_FORMAT.md §4, §9).  It has no seat: no key share, no seal key, no table secret, so
its engine learns only the faces the rules make public, and it holds nothing that opens a
hidden card (``tests/p2p/test_spectator.py`` checks that at every point of whole games).
It signs nothing, so it is never part of the record and never blamed for silence.

Entries may arrive in any order the record accepts (future steps are held), relayed or
fetched; a follower that starts mid-game offers the record so far, then follows
(:meth:`Spectator.offer_all`).  Each :meth:`Spectator.offer` returns an :class:`Update`:
the steps it completed, the public events they brought, and, when the entry is refused,
the :class:`p2p.record.verify.Failure` that ``slaiga verify`` would report for it (the
same kind, culprit slot, step and evidence).  A refusal that proves a seat cheated is the
spectator's *verdict*: the first one ends the game for it, as it does for the seats.  A
forged signature (no seat's key signed it) or an entry of another table blames only the
link that carried it, and a broken chain is a fork to look into (the node fetches the
whole record of the seat and the link), never a verdict by itself; the caller decides
(``Update.junk``, ``Update.suspect``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from engine.game import Event, Game
from p2p.errors import (
    BrokenChain,
    CheatDetected,
    Equivocation,
    FoldFailed,
    ForeignEntry,
    ForgedSignature,
    RemoteProtocolError,
)
from p2p.record.chain import Offer, Record, Status
from p2p.record.verify import (
    Envelope,
    Failure,
    cheat_failure,
    drawn_order,
    foreign_failure,
    malformed_failure,
    player_names,
    undecodable_failure,
)
from p2p.table.forming import FormingRule, Manifest, table_rule
from p2p.table.game_rule import GameRule
from p2p.table.game_rule.open import opened_hands
from p2p.table.seat import game_of
from p2p.wire import Entry, Genesis, Signed, decode_body


@dataclass(frozen=True, slots=True)
class Update:
    """What one offered envelope did to the spectator's record.

    ``status`` is the record's (``None`` when the entry was refused or ignored);
    ``accepted`` counts the entries that joined (the offered one and held ones it
    released); ``completed`` lists the record steps completed; ``events`` the public
    events those steps brought.  ``failure`` is what ``slaiga verify`` reports for a
    refused entry; ``verdict`` is that failure when it proves a seat cheated (the
    spectator's verdict, the first one only); ``suspect`` is the slot whose entry chains
    to a hash we do not know (a fork: fetch the whole record from it and from the link);
    ``junk`` says why an entry no seat of this table answers for was dropped.
    """

    status: Status | None = None
    accepted: int = 0
    completed: tuple[int, ...] = ()
    events: tuple[Event, ...] = ()
    failure: Failure | None = None
    verdict: Failure | None = None
    suspect: int | None = None
    junk: str | None = None


def proves_cheat(failure: Failure) -> bool:
    """Whether a refusal convicts a seat live: signed by a seat of this table (its culprit),
    and not a broken chain, which a fork of a split view explains (RECORD_FORMAT.md §4)."""
    return failure.culprit is not None and failure.kind != BrokenChain.__name__


class Spectator:
    """Follow one table's record with no seat; see the module docstring."""

    def __init__(self, genesis: Genesis) -> None:
        self.record = Record(genesis, table_rule)
        self.manifest: Manifest = self.record.manifest
        self.who = player_names(self.manifest)  # verdicts name players, as verify does
        self.verdict: Failure | None = None
        """The first proven cheat (culprit slot, step, signed evidence); the game ends there."""
        self.entries = 0
        """Entries that passed every check and joined the record."""
        self._arrived: dict[bytes, int] = {}  # entry bytes -> arrival number (first wins)
        self._signatures: dict[bytes, bytes] = {}  # entry bytes -> its signature
        self._arrivals = 0

    # ---- what the spectator knows -------------------------------------------------------

    @property
    def game(self) -> GameRule | None:
        """The seatless game rule, once the seat order is drawn."""
        return game_of(self.record)

    @property
    def engine(self) -> Game | None:
        """The table's seatless engine: it knows only the faces the rules made public."""
        game = self.game
        return game.engine if game is not None else None

    @property
    def seat_order(self) -> tuple[int, ...] | None:
        rule = self.record.rule
        return rule.seat_order if isinstance(rule, FormingRule) else None

    @property
    def proofs(self) -> int:
        """Proofs this spectator checked itself (every seat's, none trusted)."""
        game = self.game
        return game.proofs_checked if game is not None else 0

    @property
    def step(self) -> int:
        return self.record.step

    @property
    def head(self) -> bytes:
        return self.record.head

    @property
    def finished(self) -> bool:
        """The game ran to its end, or a proven cheat ended it."""
        return self.verdict is not None or self.record.finished

    @property
    def failure(self) -> FoldFailed | None:
        """Our own code failed folding a step (a bug of ours, nobody blamed)."""
        return self.record.failure

    def result(self) -> dict | None:
        """The agreed result (ranking in engine seats, state hash, scores), once over."""
        game = self.game
        return game.result() if game is not None and game.done else None

    def opened_hands(self) -> list[dict]:
        """Every deal's hands once the seats opened their keys after the game (a table with
        the ``open_hands`` option, :mod:`p2p.table.game_rule.open`); ``[]`` before that or
        without the option, when the spectator can read no hidden card."""
        game = self.game
        return opened_hands(game) if game is not None else []

    def status_line(self) -> str:
        """ "N signatures and N proofs checked, no cheat" (or the culprit, by name)."""
        entries = f"{self.entries} signature{'' if self.entries == 1 else 's'}"
        proofs = f"{self.proofs} proof{'' if self.proofs == 1 else 's'}"
        if self.verdict is not None and self.verdict.culprit is not None:
            name = self.manifest.seats[self.verdict.culprit].name
            return f"{entries} and {proofs} checked, cheat proven: {name}"
        return f"{entries} and {proofs} checked, no cheat"

    # ---- following ----------------------------------------------------------------------

    def offer_all(self, envelopes: Iterable[Signed]) -> list[Update]:
        """Offer each envelope in turn (the record so far, for a spectator that starts
        mid-game); stops at the first verdict."""
        out = []
        for signed in envelopes:
            out.append(self.offer(signed))
            if self.verdict is not None:
                break
        return out

    def offer(self, signed: Signed, frame: int | None = None) -> Update:
        """Check one signed envelope, from anyone, in any order; see :class:`Update`.

        ``frame`` numbers the envelope in a record file (a replay); live envelopes are
        numbered by arrival.  Once a verdict is reached, or our own fold failed, nothing
        more is taken (a convicted table ends, and more from its cheater is no news)."""
        if self.verdict is not None or self.record.failure is not None:
            return Update()
        self._arrivals += 1
        env = Envelope(
            frame if frame is not None else self._arrivals, signed.entry, signed.signature
        )
        self._arrived.setdefault(signed.entry, env.frame)
        try:
            entry = decode_body(signed.entry, Entry)
        except RemoteProtocolError as exc:
            return self._refused(undecodable_failure(self.record, env, exc, self.who))
        assert isinstance(entry, Entry)
        try:
            offer = self.record.offer(signed)
        except ForgedSignature as exc:
            return self._refused(
                cheat_failure(exc, env, entry, self._arrived, self.who, drawn_order(self.record)),
                junk=str(exc),
            )
        except BrokenChain as exc:
            failure = cheat_failure(
                exc, env, entry, self._arrived, self.who, drawn_order(self.record)
            )
            return Update(failure=failure, suspect=exc.seat)
        except CheatDetected as exc:
            return self._refused(
                cheat_failure(exc, env, entry, self._arrived, self.who, drawn_order(self.record))
            )
        except ForeignEntry as exc:
            return self._refused(foreign_failure(env, exc), junk=str(exc))
        except FoldFailed as exc:
            # a rule's bug while checking: ours, nobody blamed; nothing was accepted
            return Update(failure=Failure(FoldFailed.__name__, str(exc), None, entry.seat))
        except RemoteProtocolError as exc:
            return self._refused(malformed_failure(env, entry, exc), junk=str(exc))
        return self._taken(offer)

    def _taken(self, offer: Offer) -> Update:
        for a in offer.accepted:
            self._signatures[a.signed.entry] = a.signed.signature
        self.entries += len(offer.accepted)
        game = self.game
        events = [e for e in game.take_events() if e.audience is None] if game else []
        failure = verdict = None
        if offer.cheats:
            exc = offer.cheats[0]
            failure = self._late_failure(exc, offer)
            if proves_cheat(failure):
                self.verdict = verdict = failure
        return Update(
            offer.status,
            len(offer.accepted),
            tuple(s.number for s in offer.completed),
            tuple(events),
            failure,
            verdict,
        )

    def _late_failure(self, exc: CheatDetected, offer: Offer) -> Failure:
        """A violation found when a step completed, or in a held entry this offer released:
        its evidence is the culprit's signed entry (the step where it deviated)."""
        for refused, signed in offer.refused:
            if refused is exc:
                return self._failure_of(exc, signed)
        if isinstance(exc, Equivocation):  # (first, its signature, second, its signature)
            return self._failure_of(exc, Signed(exc.evidence[-2], exc.evidence[-1]))
        if exc.evidence:
            sig = self._signatures.get(exc.evidence[0])
            if sig is not None:
                return self._failure_of(exc, Signed(exc.evidence[0], sig))
        last = offer.accepted[-1].signed if offer.accepted else None
        if last is None:  # pragma: no cover - a completed step always accepted an entry
            return Failure(type(exc).__name__, str(exc), exc.seat, exc.seat)
        return self._failure_of(exc, last)

    def _failure_of(self, exc: CheatDetected, signed: Signed) -> Failure:
        entry = decode_body(signed.entry, Entry)
        assert isinstance(entry, Entry)
        frame = self._arrived.get(signed.entry, self._arrivals)
        return cheat_failure(
            exc,
            Envelope(frame, signed.entry, signed.signature),
            entry,
            self._arrived,
            self.who,
            drawn_order(self.record),
        )

    def _refused(self, failure: Failure, junk: str | None = None) -> Update:
        if junk is None and proves_cheat(failure):
            self.verdict = failure
            return Update(failure=failure, verdict=failure)
        return Update(failure=failure, junk=junk)
