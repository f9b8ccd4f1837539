"""Offline verification of a saved record file: ``slaiga verify`` without the command line.

Anyone holding a record file can check it with no network and no key but the
ones the file itself carries.  :func:`verify_record_file` reads the file
(:mod:`p2p.record.store`: checksums, torn tail), opens the genesis (every seat's
manifest signature) and replays every envelope through a fresh sans-I/O
:class:`p2p.record.chain.Record` built from that genesis with the turn rules the
signed manifest names (:func:`p2p.table.forming.table_rule`).  So the verifier runs
the very checks a live peer runs: each signature under the claimed seat's
key, the table id, whose turn it is and which kind is owed, the hash chain,
the seat-order commitments, the protocol's moves, and equivocation.

Envelopes are replayed in canonical order (by step, then seat, file order
breaking ties): the file's order within a round of concurrent responders
depends on arrival at the peer that wrote it (``p2p/RECORD_FORMAT.md`` §1), and the
earliest violation is the one reported.  The first violation ends the check;
:class:`Failure` says what it is, at which step, which seat the entry names,
and which seat (if any) it *proves* cheated: an entry signed by the seat it
names, or by another seat's key (impersonation), convicts its signer, and so
do validly signed entry bytes that do not decode (a malformed entry); a
signature that no seat's key verifies, or a gap in the file, convicts no
seat, only the file.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgpack

from crypto.identity import fingerprint
from p2p.errors import (
    BrokenChain,
    CheatDetected,
    CorruptRecordFile,
    Equivocation,
    FoldFailed,
    ForeignEntry,
    ForgedSignature,
    Impersonation,
    InvalidGenesis,
    InvalidMove,
    MalformedEntry,
    P2PError,
    RemoteProtocolError,
    UnreadableRecord,
)
from p2p.record.chain import Record, Status
from p2p.record.order import LANE_KINDS
from p2p.record.store import MAGIC, MAGIC_V1, load
from p2p.table.endvote import tally
from p2p.table.forming import FormingRule, Manifest, table_rule
from p2p.table.game_rule import GameProtocol
from p2p.table.notice import problems as notice_problems
from p2p.table.seat import game_of
from p2p.wire import PROTOCOL_VERSION, EndVote, Entry, Signed, decode_body

Who = Callable[[int | None], str]
"""A seat slot in player words (its player's name): failure messages never show slots."""

UNFINISHED = "Unfinished"
"""Failure kind: a game record that stops before every seat signed the end."""
GAP = "Gap"
"""Failure kind: entries for later steps follow a step that never completed."""
CORRUPT = "CorruptRecordFile"
MALFORMED_ENTRY = "MalformedEntry"
FOREIGN = "ForeignEntry"
"""Failure kind: a frame holds an entry of another table (a spliced file; nobody blamed)."""
FOLD_FAILED = "FoldFailed"
"""Failure kind: this program failed while folding a step (our bug; nobody blamed)."""
ENDED_BY_VOTE = "EndedByVote"
"""Failure kind: an unfinished game that every seat but the vanished one voted to end (the
full set of valid votes for the record's last head; nobody blamed)."""
PARTIAL_VOTE = "PartialVote"
"""Failure kind: an unfinished game with valid end votes, but not from every other seat."""
BAD_VOTE = "BadVote"
"""Failure kind: the file holds an end vote that does not hold for its record."""
BAD_NOTICE = "BadNotice"
"""Failure kind: the file holds a seat notice (a player left, or is back) that does not hold
(another table's, a seat the table lacks, a signature that does not verify, two different
notices of one seat under one number); nobody is blamed."""


@dataclass(frozen=True, slots=True)
class Envelope:
    """One signed envelope of the file and the frame that held it (1 = first after genesis)."""

    frame: int
    entry: bytes
    signature: bytes

    def to_json(self) -> dict[str, Any]:
        return {"frame": self.frame, "entry": self.entry.hex(), "signature": self.signature.hex()}


@dataclass(frozen=True, slots=True)
class Failure:
    """Why a record does not verify.

    ``kind`` is the error class name (``ForgedSignature``, ``Equivocation``,
    ``OutOfTurn``, ``BrokenChain``, ``Replay``, ``InvalidMove``,
    ``Impersonation``, ``InvalidGenesis``, :data:`GAP`, :data:`CORRUPT`,
    :data:`MALFORMED_ENTRY`, :data:`FOREIGN`, :data:`FOLD_FAILED`).  ``seat`` is the slot the
    failing entry names; ``culprit`` the slot proven to have cheated, or
    ``None`` when the evidence convicts no seat (a signature no seat's key
    verifies, a gap, a damaged file).  ``evidence`` holds the signed
    envelopes involved: two for equivocation, so anyone can re-check it.
    """

    kind: str
    message: str
    culprit: int | None = None
    seat: int | None = None
    step: int | None = None
    evidence: tuple[Envelope, ...] = ()
    detail: str | None = None
    """The technical reason behind ``message`` (for ``--json``), when it says more."""


@dataclass(frozen=True, slots=True)
class SeatInfo:
    """A seat as the record shows it: its place in the seat order, its slot, who it is."""

    position: int | None  # 1-based place in the drawn seat order (None: not drawn)
    slot: int
    name: str
    fingerprint: str

    def to_json(self) -> dict[str, Any]:
        return {
            "position": self.position,
            "slot": self.slot,
            "name": self.name,
            "fingerprint": self.fingerprint,
        }


@dataclass(frozen=True, slots=True)
class CaveatInfo:
    """A check that only one seat could make, so the record cannot show it was made
    honestly: a sealed gift accepted by its receiver alone (``p2p.table.game_rule.Caveat``).
    ``seat`` (the giver) and ``checked_by`` are slots."""

    kind: str
    step: int
    seat: int
    checked_by: int
    message: str


@dataclass(frozen=True, slots=True)
class OpenedInfo:
    """A record whose hands were opened after the game (the ``open_hands`` option,
    ``p2p.table.game_rule.open``): each deal's hands by engine seat (card codes), and
    each gift its receiver alone had checked, now checked by anyone (``public_checks``:
    messages in player words)."""

    deals: tuple[dict[str, Any], ...]
    public_checks: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "deals": [
                {
                    "step": d["step"],
                    "hands": {str(s): cards for s, cards in d["hands"].items()},
                    "deck": d["deck"],
                }
                for d in self.deals
            ],
            "public_checks": list(self.public_checks),
        }


@dataclass(frozen=True, slots=True)
class NoticeInfo:
    """A valid signed seat notice of the file (``p2p.table.notice``): the player in slot
    ``slot`` left and a bot played the seat from then on (``back`` false), or is back;
    its ``number`` among that seat's notices, signed at record step ``step``."""

    slot: int
    number: int
    step: int
    back: bool

    @property
    def what(self) -> str:
        return "back" if self.back else "left"


@dataclass(frozen=True, slots=True)
class VerifyReport:
    """What :func:`verify_record_file` found.  ``ok`` iff ``failure`` is ``None``.

    ``seats`` is in seat order when the record got as far as drawing it
    (``seat_order_known``), else in slot order.  ``steps`` counts completed
    steps and ``head`` is the hash of the last; ``finished`` says whether the
    protocol owes nothing more; otherwise ``waiting_on`` names the slots that
    owe the next step.  ``torn_bytes`` is the torn last frame dropped (0:
    none); ``duplicates`` counts byte-identical repeated envelopes.
    """

    path: str
    table_id: str | None = None
    game: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    protocol: dict[str, Any] | None = None
    seats: tuple[SeatInfo, ...] = ()
    seat_order_known: bool = False
    steps: int = 0
    head: str | None = None
    finished: bool = False
    waiting_on: tuple[int, ...] = ()
    pending: int = 0
    entries: int = 0
    proofs: int = 0
    """Proofs checked while replaying (every seat's), counted as ``slaiga replay`` and the
    end screen count them."""
    duplicates: int = 0
    torn_bytes: int = 0
    failure: Failure | None = None
    is_game: bool = False
    seat_order: tuple[int, ...] | None = None
    ranking: tuple[int, ...] | None = None
    """A game's agreed ranking in engine seats (seat-order positions from 0)."""
    game_result: dict[str, Any] | None = None
    ended_by_vote: int | None = None
    """The vanished slot every other seat validly voted to end the table for."""
    caveats: tuple[CaveatInfo, ...] = ()
    absent: tuple[int, ...] = ()
    """Slots that left for good (a step closed by absence named them): absent, no cheat."""
    abandoned: bool = False
    """Two seats left: nobody can act for both, and the table ended there, unfinished."""
    """Checks only one seat made (listed whether or not the record verifies)."""
    notices: tuple[NoticeInfo, ...] = ()
    """The valid signed notices that a player left (a bot played on) or is back."""
    opened: OpenedInfo | None = None
    """With the ``open_hands`` option, once every seat opened its key: every hand."""

    def engine_seat(self, slot: int | None) -> int | None:
        """A slot as an engine seat (its place in the seat order, from 0)."""
        if slot is None or not self.seat_order or slot not in self.seat_order:
            return slot
        return self.seat_order.index(slot)

    @property
    def ok(self) -> bool:
        return self.failure is None

    def seat_name(self, slot: int | None) -> str | None:
        for s in self.seats:
            if s.slot == slot:
                return s.name
        return None

    def to_json(self) -> dict[str, Any]:
        """One JSON-ready object (what ``slaiga verify --json`` prints)."""
        f = self.failure
        culprit = f.culprit if f is not None else None
        by_slot = {s.slot: s for s in self.seats}
        return {
            "ok": self.ok,
            "file": self.path,
            "table_id": self.table_id,
            "game": self.game,
            "options": self.options,
            "protocol": self.protocol,
            "seats": [s.to_json() for s in self.seats],
            "seat_order_known": self.seat_order_known,
            "steps": self.steps,
            "head": self.head,
            "finished": self.finished,
            "waiting_on": list(self.waiting_on),
            "pending": self.pending,
            "entries": self.entries,
            "proofs": self.proofs,
            "duplicates": self.duplicates,
            "torn_bytes": self.torn_bytes,
            "error": f.message if f is not None else None,
            "error_kind": f.kind if f is not None else None,
            "error_detail": f.detail if f is not None else None,
            "culprit": self.engine_seat(culprit) if self.is_game else culprit,
            "culprit_slot": culprit,
            "ranking": list(self.ranking) if self.ranking is not None else None,
            "scores": list(self.game_result["scores"]) if self.game_result else None,
            "state_hash": self.game_result["state_hash"] if self.game_result else None,
            "culprit_name": by_slot[culprit].name if culprit in by_slot else None,
            "culprit_fingerprint": by_slot[culprit].fingerprint if culprit in by_slot else None,
            "seat": f.seat if f is not None else None,
            "step": f.step if f is not None else None,
            "evidence": [e.to_json() for e in f.evidence] if f is not None else [],
            "ended_by_vote": (
                {
                    "seat": self.engine_seat(self.ended_by_vote),
                    "slot": self.ended_by_vote,
                    "name": self.seat_name(self.ended_by_vote),
                }
                if self.ended_by_vote is not None
                else None
            ),
            "absent": [
                {"seat": self.engine_seat(s), "slot": s, "name": self.seat_name(s)}
                for s in self.absent
            ],
            "abandoned": self.abandoned,
            "caveats": [
                {
                    "kind": c.kind,
                    "step": c.step,
                    "seat": self.engine_seat(c.seat),
                    "seat_slot": c.seat,
                    "checked_by": self.engine_seat(c.checked_by),
                    "checked_by_slot": c.checked_by,
                    "message": c.message,
                }
                for c in self.caveats
            ],
            "notices": [
                {
                    "what": n.what,
                    "seat": self.engine_seat(n.slot),
                    "slot": n.slot,
                    "name": self.seat_name(n.slot),
                    "number": n.number,
                    "step": n.step,
                }
                for n in self.notices
            ],
            "opened": self.opened.to_json() if self.opened is not None else None,
        }


def _jsonable(value: Any) -> Any:
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, (tuple, list)):
        return [_jsonable(v) for v in value]
    return value


def _protocol_json(manifest: Manifest) -> dict[str, Any]:
    p = manifest.protocol
    return {"kind": p.TAG, **{name: _jsonable(getattr(p, name)) for name, _ in p.FIELDS}}


def _seats(manifest: Manifest, order: tuple[int, ...] | None) -> tuple[SeatInfo, ...]:
    slots = order if order else tuple(range(manifest.n_seats))
    return tuple(
        SeatInfo(
            i + 1 if order else None,
            slot,
            manifest.seats[slot].name,
            fingerprint(manifest.seats[slot].identity),
        )
        for i, slot in enumerate(slots)
    )


def _describe_manifest(
    path: str, manifest: Manifest, order: tuple[int, ...] | None = None, **kw: Any
) -> VerifyReport:
    """A report on the table ``manifest`` describes (seats listed in ``order`` when the
    seat order is known); ``kw`` are the record's own fields."""
    return VerifyReport(
        path=path,
        table_id=manifest.table_id.hex(),
        game=manifest.game,
        options=dict(manifest.options),
        protocol=_protocol_json(manifest),
        seats=_seats(manifest, order),
        **kw,
    )


def player_names(manifest: Manifest) -> Who:
    """Players by name; a name two seats share gets its key's fingerprint, as the seat
    table of ``slaiga verify`` shows it."""
    names = [s.name for s in manifest.seats]

    def who(slot: int | None) -> str:
        if slot is None or not 0 <= slot < len(names):
            return "a player not at this table"
        name = names[slot]
        if names.count(name) > 1:
            return f"{name} (key {fingerprint(manifest.seats[slot].identity)[:8]})"
        return name

    return who


def signature_at(frame: int) -> str:
    """Where a signed step sits in the file, in words: "the 23rd signature in the file"."""
    n = frame % 100
    suffix = "th" if 10 <= n <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(frame % 10, "th")
    return f"the {frame}{suffix} signature in the file"


_SEAT = re.compile(r"\bseat (\d+)\b")


def _in_player_words(reason: str, who: Who) -> str:
    """A record-level reason (p2p/record/chain.py names seats by slot and speaks of
    entries) in the words ``slaiga verify`` uses: players by name, and steps."""
    text = _SEAT.sub(lambda m: who(int(m.group(1))), reason)
    for old, new in (("entry for step", "step"), ("an entry", "a step"), ("entries", "steps")):
        text = text.replace(old, new)
    return text


OLD_PROTOCOLS = {
    3: "before a table said how many spectators may watch",
    4: "before the shorter proof that a player does not hold a card",
    5: "before shuffles were bound to their deal instead of their record step",
}
"""What changed after each older protocol version, in a player's words (``Manifest``)."""


def other_version(genesis: Any) -> str | None:
    """One line when ``genesis`` was written by a Slaiga of another protocol version (which
    version, and what to do), else ``None``.  A manifest's fields are signed as they were
    written, and an older one lacks fields this version needs (the version 3 manifest has
    no ``spectators``; a version 4 record's inequality proofs have another form), so this
    version cannot check such a record."""
    try:
        tag, fields = msgpack.unpackb(genesis.manifest, raw=False, strict_map_key=False)
        version = fields["version"]
    except Exception:  # noqa: BLE001 - not a manifest we can read: the full check says why
        return None
    if tag != "table_manifest" or type(version) is not int or version == PROTOCOL_VERSION:
        return None
    if version < PROTOCOL_VERSION:
        since = OLD_PROTOCOLS.get(version)
        what = f" ({since})" if since else ""
        return (
            f"written by an older Slaiga, protocol version {version}{what}; this Slaiga speaks"
            f" version {PROTOCOL_VERSION} and cannot check it: check it with the Slaiga that"
            " played the game"
        )
    return (
        f"written by a newer Slaiga, protocol version {version}; this Slaiga speaks version"
        f" {PROTOCOL_VERSION}: update Slaiga to check it"
    )


def not_a_file(path: str | os.PathLike[str]) -> str | None:
    """What ``path`` is when it is not a regular file ("a named pipe"), else ``None``.

    A named pipe or a device given as a record or a table secret would block the reader
    (or never end), so commands refuse them before opening them."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None  # opening it says why it cannot be read
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a device"


def _read(path: Path) -> None:
    """Raise :class:`UnreadableRecord` unless ``path`` is a readable file with our magic."""
    if (what := not_a_file(path)) is not None:
        raise UnreadableRecord(f"{path} is {what}, not a record file")
    try:
        with open(path, "rb") as f:
            head = f.read(len(MAGIC))
    except OSError as exc:
        raise UnreadableRecord(f"cannot read {path}: {exc.strerror or exc}") from None
    if head not in (MAGIC, MAGIC_V1):
        raise UnreadableRecord(f"{path}: this is not a Slaiga record file")


def cheat_failure(
    exc: CheatDetected,
    env: Envelope,
    entry: Entry,
    frames: dict[bytes, int],
    who: Who,
    order: tuple[int, ...] | None = None,
) -> Failure:
    """Turn a violation found by the record into a :class:`Failure` naming step and seats
    (``order``: the drawn seat order, when the record got that far)."""
    evidence: tuple[Envelope, ...] = (env,)
    if isinstance(exc, Equivocation):
        first, first_sig = exc.evidence[0], exc.evidence[1]
        evidence = (Envelope(frames.get(first, 0), first, first_sig), env)
    if isinstance(exc, ForgedSignature):
        culprit = None  # no key of this table signed it: the file is forged, not the seat
        message = (
            f"forged signature: step {entry.step} claims to come from {who(entry.seat)},"
            " but no player of this table signed it"
        )
    elif isinstance(exc, Impersonation):
        culprit = exc.seat  # the signer: its key verifies an entry claiming another seat
        message = (
            f"impersonation at step {entry.step}: {who(exc.seat)} signed it as {who(entry.seat)}"
        )
    elif isinstance(exc, Equivocation):
        culprit = exc.seat
        message = (
            f"equivocation: {who(exc.seat)} signed two different versions of step {entry.step}"
        )
    elif isinstance(exc, BrokenChain):
        # an entry that chains to a hash the file does not hold: either its seat signed
        # a wrong chain or an earlier entry in the file was replaced (even by its own
        # signer, with another valid entry), and the file cannot tell which; live peers
        # never convict on a broken chain either (they fetch, and find any equivocation)
        culprit = None
        message = (
            f"the file does not chain: step {entry.step} of {who(entry.seat)} follows a step"
            " this file does not hold (a step was changed or left out; nobody is blamed)"
        )
    else:
        culprit = exc.seat
        # a game's own reason keeps its words; the record's name seats by slot
        reason = exc.reason if isinstance(exc, InvalidMove) else _in_player_words(exc.reason, who)
        message = cheat_sentence(type(exc).__name__, exc.reason, exc.seat, entry.step, who, order)
        return Failure(
            type(exc).__name__, message, culprit, entry.seat, entry.step, evidence, reason
        )
    return Failure(type(exc).__name__, message, culprit, entry.seat, entry.step, evidence)


# What a step of each kind was, in player words ("Bob's <thing> at step 12 ...").
_THINGS = {
    "action": "move",
    "tokens": "proof for the cards they revealed",
    "remask": "proof for the card they hid again",
    "shuffle": "shuffle",
    "bad shuffle": "shuffle",
    "key": "key",
    "commit": "sealed dice roll",
    "dice": "dice roll",
    "dice reveal": "dice roll",
    "proof": "proof about their hand",
    "sealed-proof": "sealed card",
    "verdict": "answer about a sealed card",
    "unseal": "unsealed card",
    "final": "end-of-game signature",
    "seat-order reveal": "draw of the seat order",
    "escrow": "escrow of their key",
    "escrow-check": "answer about an escrow share",
    "escrow-open": "opened escrow share",
    "token-shares": "token shares for a player who left",
    "open": "opened key",
    "open-share": "shown escrow share of a key",
}
_PREFIX = re.compile(r"^(?P<what>[a-z][a-z -]*?)(?: at step \d+)?: ")
_CHECK_FAILS = ("does not verify", "challenge mismatch", "does not match its commitment")


def drawn_order(record: Record) -> tuple[int, ...] | None:
    """The seat order the record drew (slots in seat order), ``None`` before the draw."""
    rule = record.rule
    return rule.seat_order if isinstance(rule, FormingRule) else None


def seated(who: Who, order: tuple[int, ...] | None) -> Who:
    """A slot as a cheat sentence names it: "Bob (seat 2)", the seat counted from 1 in
    the drawn seat order (just the name before the order is drawn)."""

    def name(slot: int | None) -> str:
        if order and slot in order:
            return f"{who(slot)} (seat {order.index(slot) + 1})"
        return who(slot)

    return name


def by_seat(who: Who, order: tuple[int, ...] | None) -> Callable[[int], str]:
    """A seat of the seat order (from 0, as the game's engine counts) in player words:
    "Cat (seat 2)"."""

    def name(seat: int) -> str:
        if order and 0 <= seat < len(order):
            return f"{who(order[seat])} (seat {seat + 1})"
        return f"seat {seat + 1}, which nobody holds"

    return name


def cheat_sentence(
    kind: str,
    reason: str,
    culprit: int | None,
    step: int | None,
    who: Who,
    order: tuple[int, ...] | None,
) -> str:
    """A proven cheat in the words ``slaiga verify`` uses, from what a live table knows:
    the error ``kind``, the record's ``reason`` (slots in a record-level reason, engine
    seats in a move's), the culprit's slot, the step of its evidence, the players by
    slot (``who``) and the drawn seat order.  The live table's cheat line, its result
    and ``slaiga verify`` all say a cheat with this."""
    if kind != "InvalidMove":
        reason = _in_player_words(reason, who)
    return plain_cheat(kind, reason, seated(who, order)(culprit), step, by_seat(who, order))


def plain_cheat(
    kind: str,
    reason: str,
    name: str,
    step: int | None,
    seat_name: Callable[[int], str] | None = None,
) -> str:
    """A proven cheat as one sentence in player words, the step named once: "Bob (seat 2)'s
    proof for the cards they revealed at step 12 does not check out (kind: InvalidMove)".
    ``name`` is the culprit as the sentence names them; ``seat_name`` names a seat of the
    seat order (from 0) that a move names.  The technical reason stays in ``--json``
    (``error_kind`` and ``detail``)."""
    what, problem = "move", reason
    m = _PREFIX.match(reason)
    if m is not None and m.group("what") in _THINGS:
        what, problem = m.group("what"), reason[m.end() :]
    thing = _THINGS.get(what, what)
    at = f" at step {step}" if step is not None else ""
    if kind == "OutOfTurn":
        owed = re.search(r"owed by (.+)$", problem)
        return f"{name} spoke out of turn{at}" + (
            f"; it was owed by {owed.group(1)} (kind: {kind})" if owed else f" (kind: {kind})"
        )
    if kind == "Replay":
        back = re.search(r"chains to step (\d+), not (\d+)", problem)
        where = f": it follows step {back.group(1)}, not step {back.group(2)}" if back else ""
        return f"{name} sent an old step again{at}{where} (kind: {kind})"
    if any(w in problem for w in _CHECK_FAILS):
        said = "does not check out"
    elif (moved := re.match(r"action names seat (\d+), sent by seat \d+", problem)) is not None:
        seat = int(moved.group(1))
        other = seat_name(seat) if seat_name is not None else f"seat {seat + 1}"
        said = f"is made in the name of {other}, not their own"
    elif problem.startswith("illegal action: "):
        said = "breaks the rules: " + _no_repr(problem[len("illegal action: ") :])
    elif problem.startswith("false claim, shown by the reveal: "):
        said = "was a false claim, shown when the cards were revealed: " + _no_repr(
            problem[len("false claim, shown by the reveal: ") :]
        )
    else:
        said = "is not allowed: " + _no_repr(problem)
    return f"{name}'s {thing}{at} {said} (kind: {kind})"


def _no_repr(text: str) -> str:
    """Drop a trailing engine repr such as " (Play(seat=1, ...))" from a reason."""
    return re.sub(r" \(\w+\(.*\)\)$", "", text)


def undecodable_failure(
    record: Record, env: Envelope, problem: RemoteProtocolError, who: Who
) -> Failure:
    """A frame whose entry bytes do not decode: the seat whose key verifies its signature
    signed a malformed body and is convicted (the envelope is the evidence); bytes that no
    seat signed convict only the file."""
    try:
        record.offer(Signed(env.entry, env.signature))
    except MalformedEntry as exc:
        message = (
            f"{who(exc.seat)} signed a step that cannot be read ({signature_at(env.frame)}):"
            f" {problem}"
        )
        return Failure(type(exc).__name__, message, exc.seat, exc.seat, None, (env,))
    except ForeignEntry as exc:
        return foreign_failure(env, exc)
    except P2PError:
        pass
    message = (
        f"a step that cannot be read, and that no player signed ({signature_at(env.frame)}):"
        f" {problem}"
    )
    return Failure(MALFORMED_ENTRY, message, None, None, None, (env,))


def foreign_failure(env: Envelope, exc: ForeignEntry) -> Failure:
    """A frame holding an entry of another table: the file was spliced from another
    table's record; nobody at this table signed it for this table, so nobody is named."""
    message = (
        f"{signature_at(env.frame)}: {str(exc).replace('an entry', 'a step')}; this file holds"
        " a step spliced in from another table's record, which is no evidence about this one"
        " (nobody is blamed)"
    )
    return Failure(FOREIGN, message, None, None, None, (env,))


def malformed_failure(env: Envelope, entry: Entry, exc: RemoteProtocolError) -> Failure:
    """A signed entry whose body does not read as its step's body: its signer is named."""
    message = f"step {entry.step} ({signature_at(env.frame)}): {exc}"
    return Failure(MALFORMED_ENTRY, message, None, entry.seat, entry.step, (env,))


def _other_version(
    record: Record,
    env: Envelope,
    entry: Entry,
    envelopes: list[tuple[Envelope, Entry]],
    frames: dict[bytes, int],
    who: Who,
) -> Failure | None:
    """Equivocation, if the record takes another entry of this seat for this step (taken
    before, or later in the file: the version that chains may come second)."""
    for other, e in envelopes:
        if (e.seat, e.step) != (entry.seat, entry.step) or other.entry == env.entry:
            continue
        signed = Signed(other.entry, other.signature)
        if not record.holds(signed):
            try:
                record.offer(signed)
            except Equivocation as exc:
                # the record kept the first version's (seat, step), whatever its chain
                if exc.seat == entry.seat:
                    return cheat_failure(exc, other, e, frames, who, drawn_order(record))
                continue
            except P2PError:
                continue
        if record.holds(signed):
            message = (
                f"equivocation: {who(entry.seat)} signed two different versions of step"
                f" {entry.step}"
            )
            return Failure(
                "Equivocation", message, entry.seat, entry.seat, entry.step, (other, env)
            )
    return None


def _locate_evidence(
    exc: CheatDetected, envelopes: list[tuple[Envelope, Entry]]
) -> tuple[Envelope, Entry] | None:
    """The envelope a violation in a released held entry is about (by its evidence bytes)."""
    if exc.evidence:
        for env, entry in envelopes:
            if env.entry == exc.evidence[-2 if isinstance(exc, Equivocation) else 0]:
                return env, entry
    return None


def verify_record_file(path: str | os.PathLike[str]) -> VerifyReport:
    """Verify a record file offline; see the module docstring.

    Returns a report whether or not the record verifies (``report.ok``);
    raises :class:`UnreadableRecord` only when the input is not a record
    file that can be read at all.
    """
    p = Path(path)
    name = str(path)
    _read(p)
    try:
        loaded = load(p)
    except CorruptRecordFile as exc:
        return VerifyReport(path=name, failure=Failure(CORRUPT, str(exc)))
    except OSError as exc:
        raise UnreadableRecord(f"cannot read {p}: {exc.strerror or exc}") from None
    other = other_version(loaded.genesis)
    if other is not None:
        raise UnreadableRecord(f"{p}: {other}")
    try:
        record = Record(loaded.genesis, table_rule)
    except ForgedSignature as exc:
        manifest = decode_body(loaded.genesis.manifest, Manifest)
        assert isinstance(manifest, Manifest)
        failure = Failure(
            "ForgedSignature",
            f"forged start: {player_names(manifest)(exc.seat)}'s signature on the table's terms"
            " does not verify",
            None,
            exc.seat,
            0,
        )
        return _describe_manifest(name, manifest, torn_bytes=loaded.torn_bytes, failure=failure)
    except InvalidGenesis as exc:
        return VerifyReport(
            path=name,
            torn_bytes=loaded.torn_bytes,
            failure=Failure("InvalidGenesis", f"invalid genesis: {exc}", step=0),
        )
    manifest = record.manifest
    who = player_names(manifest)
    base = {"torn_bytes": loaded.torn_bytes, "entries": len(loaded.entries)}

    envelopes: list[tuple[Envelope, Entry]] = []
    undecodable: Failure | None = None
    for i, signed in enumerate(loaded.entries, start=1):
        env = Envelope(i, signed.entry, signed.signature)
        try:
            entry = decode_body(signed.entry, Entry)
        except RemoteProtocolError as exc:
            # judged at once; the rest is still replayed, so the seat order is known and
            # the culprit is named in it like every other verdict
            undecodable = undecodable or undecodable_failure(record, env, exc, who)
            continue
        assert isinstance(entry, Entry)
        envelopes.append((env, entry))
    frames = {env.entry: env.frame for env, _ in reversed(envelopes)}  # first frame wins
    # within a step, the absence lane first (p2p/RECORD_FORMAT.md §12): a step that a full
    # set of ``absent`` entries closed is closed by absence, whatever else the file holds
    canonical = sorted(
        envelopes,
        key=lambda pair: (
            pair[1].step,
            pair[1].kind not in LANE_KINDS,
            pair[1].seat,
            pair[0].frame,
        ),
    )

    failure: Failure | None = None
    duplicates = unchained = 0
    # an entry that does not chain where the canonical order puts it may chain to a head
    # the file reaches later (an entry for a closed step, signed on the step after it):
    # it is judged again once the rest is folded, as a live seat judged it on arrival
    unchaining: list[tuple[Envelope, Entry, BrokenChain]] = []
    for env, entry in canonical:
        try:
            offer = record.offer(Signed(env.entry, env.signature))
        except BrokenChain as exc:
            # two signed entries of one seat for one step are equivocation whichever chain
            # each names (as live: p2p/record/chain.py); else the file does not chain
            failure = _other_version(record, env, entry, envelopes, frames, who)
            if failure is not None:
                break
            if entry.prev not in record.hashes:
                unchaining.append((env, entry, exc))
                continue
            failure = cheat_failure(exc, env, entry, frames, who, drawn_order(record))
            break
        except CheatDetected as exc:
            failure = cheat_failure(exc, env, entry, frames, who, drawn_order(record))
            break
        except ForeignEntry as exc:
            failure = foreign_failure(env, exc)
            break
        except FoldFailed as exc:
            failure = Failure(FOLD_FAILED, str(exc), None, entry.seat, entry.step, (env,))
            break
        except RemoteProtocolError as exc:
            failure = malformed_failure(env, entry, exc)
            break
        if offer.status is Status.DUPLICATE:
            duplicates += 1
        elif offer.status is Status.TOO_FAR:
            unchained += 1
        if offer.cheats:
            exc = offer.cheats[0]
            found = _locate_evidence(exc, envelopes) or (env, entry)
            failure = cheat_failure(exc, *found, frames, who, drawn_order(record))
            break
        if record.failure is not None:
            break  # our own fold failed (reported below): later entries cannot be judged
    for env, entry, first in unchaining if failure is None and record.failure is None else ():
        verdict: CheatDetected = first  # unless judged now: the file does not chain
        signed = Signed(env.entry, env.signature)
        try:
            record.offer(signed)
        except CheatDetected as exc:
            if not isinstance(exc, BrokenChain):
                verdict = exc
        except P2PError:
            pass
        else:
            if record.holds(signed):
                continue  # it chains now, and is taken
        failure = cheat_failure(verdict, env, entry, frames, who, drawn_order(record))
        break
    if undecodable is not None:
        failure = undecodable  # the first frame that does not decode is the verdict
    if failure is None and record.failure is not None:
        failure = Failure(FOLD_FAILED, str(record.failure), None, None, record.step - 1)
    if failure is None and (record.held_count() or unchained):
        later = record.held_count() + unchained
        owing = sorted(record.waiting_on())
        failure = Failure(
            GAP,
            f"gap: step {record.step} never completed (nothing from"
            f" {' and '.join(map(who, owing))}), yet the file holds {later}"
            f" signature{'' if later == 1 else 's'} of later steps",
            None,
            None,
            record.step,
        )

    rule = record.rule
    order = rule.seat_order if isinstance(rule, FormingRule) else None
    game = game_of(record)
    is_game = isinstance(manifest.protocol, GameProtocol)
    if failure is None and is_game and not record.finished:
        owing = sorted(record.waiting_on())
        end = (
            "every player signed the result, but the hands were never opened: silent, not a cheat"
            if game is not None and game.done
            else "nobody signed its end"
        )
        failure = Failure(
            UNFINISHED,
            f"unfinished: the game stops at step {record.step}, still owed by"
            f" {' and '.join(map(who, owing))}; {end}",
            None,
            None,
            record.step,
        )
    ended_by_vote = None
    if loaded.votes and (failure is None or failure.kind == UNFINISHED):
        failure = _vote_failure(manifest, loaded.votes, record)
        if failure.kind == ENDED_BY_VOTE:
            ended_by_vote = failure.seat
    good_notices, bad_notices = notice_problems(manifest, loaded.notices)
    if bad_notices and (failure is None or failure.kind in (UNFINISHED, ENDED_BY_VOTE)):
        failure = Failure(
            BAD_NOTICE,
            f"the file holds a notice that does not hold: {'; '.join(bad_notices)}"
            " (a notice proves nothing about cheating; nobody is blamed)",
        )
    result = game.result() if game is not None and game.done else None
    seats = _seats(manifest, order)
    opened = _opened(game, seats) if game is not None and game.opened is not None else None
    caveats = (
        tuple(_caveat(c, seats) for c in game.caveats)
        if game is not None and opened is None
        else ()
    )
    return _describe_manifest(
        name,
        manifest,
        order,
        seat_order_known=order is not None,
        steps=record.step - 1,
        head=record.head.hex(),
        finished=record.finished,
        waiting_on=tuple(sorted(record.waiting_on())),
        pending=sum(1 for _ in record.signed_from(record.step)),
        duplicates=duplicates,
        failure=failure,
        is_game=is_game,
        seat_order=order,
        ranking=tuple(result["ranking"]) if result is not None else None,
        game_result=result,
        ended_by_vote=ended_by_vote,
        caveats=caveats,
        proofs=game.proofs_checked if game is not None else 0,
        absent=tuple(sorted(record.removed)),
        abandoned=bool(game is not None and game.abandoned),
        notices=tuple(NoticeInfo(n.seat, n.number, n.step, n.back) for n in good_notices),
        opened=opened,
        **base,
    )


def _vote_failure(manifest: Manifest, votes: tuple[EndVote, ...], record: Record) -> Failure:
    """What the end votes in a file say about its record (p2p/table/endvote.py): ended by vote
    only with a valid vote of every seat but the absent one for the record's last head."""
    count = tally(manifest, votes, record.step, record.head, record.waiting_on())

    who = player_names(manifest)

    def names(slots: tuple[int, ...]) -> str:
        return ", ".join(map(who, slots)) or "nobody"

    if count.problems:
        return Failure(
            BAD_VOTE,
            f"the record stops at step {record.step} and holds an end vote that does not"
            f" hold: {'; '.join(count.problems)} (a vote convicts no one)",
            None,
            None,
            record.step,
        )
    assert count.absent is not None
    absent = who(count.absent)
    if count.ended:
        return Failure(
            ENDED_BY_VOTE,
            f"ended by vote: {absent} vanished owing step {record.step}; every other player"
            f" signed a vote to stop there ({names(count.voters)}); nobody is blamed",
            None,
            count.absent,
            record.step,
        )
    return Failure(
        PARTIAL_VOTE,
        f"unfinished: the game stops at step {record.step}, owed by {absent}; only"
        f" {names(count.voters)} voted to end it, not {names(count.missing)}",
        None,
        count.absent,
        record.step,
    )


def _seat_words(seats: tuple[SeatInfo, ...]) -> Callable[[int], str]:
    by_slot = {s.slot: s for s in seats}

    def who(slot: int) -> str:
        s = by_slot.get(slot)
        if s is None:
            return "a player not at this table"
        return f"seat {s.position if s.position is not None else slot + 1} ({s.name})"

    return who


def _opened(game: Any, seats: tuple[SeatInfo, ...]) -> OpenedInfo:
    """What an opened record shows (p2p.table.game_rule.open): every deal's hands, and
    each gift that only its receiver checked during the game, checked again by anyone."""
    from p2p.table.game_rule.open import opened_hands

    who = _seat_words(seats)
    checks = []
    for c in game.gift_checks:
        gave = " ".join(str(f) for f in c.given)
        if c.ok:
            checks.append(
                f"the gift sealed at step {c.step} by {who(c.seat)} ({gave}), which only"
                f" {who(c.checked_by)} could check during the game, is checked by anyone now"
                " that the hands are open: the cards given were the giver's highest"
            )
        else:
            checks.append(
                f"the gift sealed at step {c.step} by {who(c.seat)} ({gave}) was not the"
                f" giver's highest, yet {who(c.checked_by)} accepted it alone"
            )
    return OpenedInfo(tuple(opened_hands(game)), tuple(checks))


def _caveat(c: Any, seats: tuple[SeatInfo, ...]) -> CaveatInfo:
    """A :class:`p2p.table.game_rule.Caveat` in player words (seats counted from 1)."""
    who = _seat_words(seats)

    message = (
        f"the gift sealed at step {c.step} by {who(c.seat)} was checked by its receiver"
        f" alone, {who(c.checked_by)}, who accepted it: the record cannot show that the"
        " cards given were the giver's highest"
    )
    return CaveatInfo(c.kind, c.step, c.seat, c.checked_by, message)
