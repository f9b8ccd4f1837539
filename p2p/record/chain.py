"""The signed, hash-chained record of a table, as a sans-I/O object.

Format (documented so that others can write verifiers):

* Step 0, the genesis, is the table manifest's canonical bytes plus every
  seat's Ed25519 signature over ``b"slaiga/v1/manifest" + manifest_bytes``
  (:mod:`p2p.table.forming`).  ``hash(0) = SHA-256(b"slaiga/v1/genesis" + manifest_bytes)``.
* Every later entry is an :class:`p2p.wire.Entry` (table id, sender seat,
  step number, ``prev`` hash, body whose tag is the entry's *kind*), encoded
  canonically, and signed by the sender over
  ``b"slaiga/v1/entry" + entry_bytes``; the pair travels as
  :class:`p2p.wire.Signed`.
* Step ``k`` holds one entry from each seat the rule owed at ``k`` (one actor,
  or several concurrent responders).  Every entry of step ``k`` has
  ``prev = hash(k-1)``.  When all have arrived,
  ``hash(k) = SHA-256(b"slaiga/v1/step" + u64(k) + hash(k-1) +
  concat over seats in ascending order of (u8(seat) + SHA-256(entry_bytes)))``.
  Sorting by seat gives concurrent responders a deterministic chain position
  with no leader (see :mod:`p2p.record.order`).

:class:`Record` accepts signed entries in any order: future steps are held,
duplicates ignored, and every violation is raised as a specific
:class:`CheatDetected` naming the seat (forged signature, impersonation, out of turn,
replay, broken chain, equivocation, invalid move).  An entry of another table
is checked for first and is never evidence about this one
(:class:`p2p.errors.ForeignEntry`, blamed on nobody who signed it).
Equivocation keeps both signed envelopes as evidence in :attr:`Record.evidence`.

**The absence lane** (issue 21, ``p2p/RECORD_FORMAT.md`` §12).  Under a rule that lets
seats leave (:class:`p2p.record.order.AbsenceRule`), a seat may sign, at the current
step and besides the entry it owes, one *lane* entry: ``absent`` naming seats it holds
gone, or ``present`` naming seats whose entries it holds.  The step closes *by absence*
when every remaining seat but the named ones signed ``absent`` naming the same seats:
its hash covers those entries alone, the named seats are out from that step on, and
every other entry of that step is moot (ignored, nobody blamed), as is anything a
removed seat signs from then on.  A seat that signed ``absent`` at a step does not close
it as usual (its *lock*) until some remaining seat signed ``present`` there; one lane
entry per seat and step (two different ones are equivocation), so a step closes either
by absence or as usual, never both, at every honest peer and in ``slaiga verify``,
which replays lane entries before the others of their step.
"""

from __future__ import annotations

import enum
import hashlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import msgpack

from crypto.errors import CryptoError
from crypto.identity import IdentityKey, verify_signature
from p2p.errors import (
    BrokenChain,
    CheatDetected,
    Equivocation,
    FoldFailed,
    ForeignEntry,
    ForgedSignature,
    Impersonation,
    LocalProtocolError,
    MalformedEntry,
    OutOfTurn,
    P2PError,
    RemoteProtocolError,
    Replay,
)
from p2p.record.order import ABSENT_KIND, LANE_KINDS, PRESENT_KIND, Owed, Rule, StepView
from p2p.table.forming import Manifest, genesis_hash, open_genesis
from p2p.wire import TABLE_ID_BYTES, Body, Entry, Genesis, Signed, decode_body, encode_body

ENTRY_SIGN_DOMAIN = b"slaiga/v1/entry"
STEP_HASH_DOMAIN = b"slaiga/v1/step"
MAX_STEPS_AHEAD = 1024
"""Entries further ahead than this are not held (they are fetched when their step comes)."""
MAX_HELD_PER_SEAT = 256
MAX_LATE_LANE_PER_SEAT = 8
MAX_LANE_ROUNDS = 16
"""Lane rounds per step (p2p/RECORD_FORMAT.md §12): a lane entry of round
``MAX_LANE_ROUNDS`` or later is an invalid move by its signer.  An honest seat signs in
round ``r`` only once round ``r - 1`` is dead, which takes a seat silent past the absence
limit and back again each time; without a bound one seat could sign thousands of
``present`` entries at one step, each kept, relayed and scanned per round."""
"""``absent`` entries of steps we closed as usual kept per signing seat (a lost seat
that comes back: :meth:`Record._late_absent`); more are moot."""
"""Future entries held per signing seat; more are not held (fetched later)."""
MAX_HELD_BYTES_PER_SEAT = 4 << 20
"""Bytes of future entries held per signing seat (a seat cannot make us hold more)."""
MAX_HELD_ENTRY_BYTES = 256 << 10
"""A future entry larger than this is not held at all (it is fetched when its step comes);
the largest honest entry, a 104-card shuffle with its proof, is about 30 KiB."""


def entry_signing_input(entry_bytes: bytes) -> bytes:
    return ENTRY_SIGN_DOMAIN + entry_bytes


def _envelope_header(raw: bytes) -> tuple[int | None, bytes | None]:
    """The ``seat`` and ``table_id`` an entry's bytes claim, read leniently (the body may
    not decode at all); ``None`` for whatever cannot be read."""
    try:
        value = msgpack.unpackb(raw, raw=False, strict_map_key=False, max_bin_len=len(raw))
    except Exception:  # any msgpack failure: nothing can be read
        return None, None
    if not (isinstance(value, list) and len(value) == 2 and isinstance(value[1], dict)):
        return None, None
    seat, table_id = value[1].get("seat"), value[1].get("table_id")
    return (
        seat if type(seat) is int else None,
        # an id of another length is no table's id (a changed length byte reads a few
        # bytes more or less of the entry): unreadable, not another table's
        table_id if type(table_id) is bytes and len(table_id) == TABLE_ID_BYTES else None,
    )


def _slot_bytes(slot: _Slot) -> int:
    return len(slot.signed.entry) + len(slot.signed.signature)


def entry_hash(entry_bytes: bytes) -> bytes:
    return hashlib.sha256(entry_bytes).digest()


def step_hash(number: int, prev: bytes, contributions: dict[int, bytes]) -> bytes:
    """Hash of a completed step from its seat -> entry bytes (order-independent)."""
    h = hashlib.sha256(STEP_HASH_DOMAIN + number.to_bytes(8, "big") + prev)
    for seat in sorted(contributions):
        h.update(seat.to_bytes(1, "big") + entry_hash(contributions[seat]))
    return h.digest()


class Status(enum.Enum):
    ACCEPTED = "accepted"  # the entry (and maybe held ones after it) joined the record
    HELD = "held"  # for a future step; kept until its step is current
    DUPLICATE = "duplicate"  # we already had exactly these entry bytes; ignored
    TOO_FAR = "too_far"  # too far ahead to hold; fetch it again later
    MOOT = "moot"  # a lane entry, or an entry of a step closed by absence: ignored, no blame


@dataclass(frozen=True, slots=True)
class Accepted:
    """An entry that joined the record: persist ``signed`` before acting on it."""

    step: int
    seat: int
    entry: Entry
    signed: Signed


@dataclass(frozen=True, slots=True)
class Offer:
    """Result of :meth:`Record.offer`.

    ``accepted`` lists every entry that joined the record as a consequence, in
    the order they joined (the offered one first, then released held ones).
    ``completed`` lists the steps completed.  ``cheats`` lists violations found
    in *held* entries released by this offer (a violation in the offered entry
    itself is raised instead).  ``refused`` pairs each such violation in a released
    held entry with that entry's signed envelope: the evidence a peer must keep, as it
    keeps an offered entry that is refused (a verdict found when a step completes has
    no pair: its entries joined the record).
    """

    status: Status
    accepted: tuple[Accepted, ...] = ()
    completed: tuple[StepView, ...] = ()
    cheats: tuple[CheatDetected, ...] = ()
    refused: tuple[tuple[CheatDetected, Signed], ...] = ()


@dataclass(frozen=True, slots=True)
class _Slot:
    entry: Entry
    signed: Signed


class Record:
    """One table's record: genesis, completed steps, the step in progress, held entries.

    ``rule_factory`` builds the ordering rule from the verified manifest
    (e.g. ``lambda m: FormingRule(m, then=DemoRule.factory(300))``).
    """

    def __init__(self, genesis: Genesis, rule_factory: Callable[[Manifest], Rule]) -> None:
        self.genesis = genesis
        self.manifest = open_genesis(genesis)
        self.table_id = self.manifest.table_id
        self.keys = tuple(m.identity for m in self.manifest.seats)
        self._rule_factory = rule_factory
        self.rule = rule_factory(self.manifest)
        self.hashes: list[bytes] = [genesis_hash(genesis)]  # hashes[k] = hash of step k
        self._hash_index: dict[bytes, int] = {self.hashes[0]: 0}
        self.steps: list[dict[int, _Slot]] = [{}]  # steps[k] seat -> slot; steps[0] = genesis
        self._pending: dict[int, _Slot] = {}
        self._broken: dict[int, _Slot] = {}
        """Seat -> its entry for the current step that chained to an unknown hash (a fork
        we cannot follow, or a deviation): a second, different entry from it for this
        step is equivocation, with both as evidence."""
        self._held: dict[int, dict[int, _Slot]] = {}
        self._held_count = 0
        self._held_bytes = 0
        self._held_by_seat: dict[int, tuple[int, int]] = {}  # seat -> (entries, bytes)
        self._owed: Owed | None = self.rule.owed()
        self.evidence: list[CheatDetected] = []
        self.verdict: CheatDetected | None = None
        """A violation the rule found when a step completed (e.g. a move the rules refuse
        once its cards are revealed); the record ends there."""
        self._late: list[CheatDetected] = []
        self.failure: FoldFailed | None = None
        """Set when our own code failed while folding a completed step (never a peer's
        fault: see :class:`p2p.errors.FoldFailed`); the record ends there, intact."""
        # signature -> entry bytes of every envelope already verified and kept (accepted or
        # held): a byte-identical copy (relayed, fetched, resent) skips the Ed25519 check
        self._verified: dict[bytes, bytes] = {}
        self._lane: dict[tuple[int, int], _Slot] = {}
        """(round, seat) -> its lane entry (``absent`` / ``present``) for the current step."""
        self._closed_round: dict[int, int] = {}
        """Step closed by absence -> the lane round that closed it."""
        self.removed: dict[int, int] = {}
        """Slot -> the step that closed by absence naming it (it is out from there on)."""
        self.closed_by_absence: dict[int, frozenset[int]] = {}
        """Step -> the slots it removed."""
        self._me: int | None = None
        self._closing_round = 0
        self._late_lane: dict[tuple[int, int, int], _Slot] = {}
        """(step, round, seat) -> an ``absent`` entry of a step we closed as usual."""
        self._past_lane: dict[int, dict[tuple[int, int], _Slot]] = {}
        """Step closed as usual -> the lane entries ((round, seat) -> slot) it held then: a
        late ``absent`` that differs from one of them is equivocation (:meth:`_late_absent`)."""
        self.refolded: list[int] = []
        """Steps we had closed as usual and refolded as closed by absence (a lost seat
        that comes back: :meth:`_late_absent`)."""
        self.defer_held = False
        """When set, an offer (or our own entry) that completes a step stops there: the
        entries held for the new step stay held, and the caller takes them with
        :meth:`take_held`, checks their proofs ahead (in worker threads:
        p2p/net/offload.py) and offers them again.  Unset, they are taken at once, their
        checks made by the offer itself."""
        self.unanswered: dict[int, list[tuple[int, frozenset[int], int]]] = {}
        """Step closed as usual -> the ``absent`` lane entries it held (signer, named slots,
        round): a live peer answers them with ``present`` (p2p/table/session/lane.py) and pops
        them."""

    # -- queries --------------------------------------------------------

    @property
    def step(self) -> int:
        """The step number currently being filled (completed steps are ``1..step-1``)."""
        return len(self.hashes)

    @property
    def head(self) -> bytes:
        """Hash of the last completed step."""
        return self.hashes[-1]

    @property
    def finished(self) -> bool:
        """The protocol ran to its end, or a verdict ended it (not a failure of ours)."""
        return self._owed is None and self.failure is None

    @property
    def owed(self) -> Owed | None:
        """What the current step needs (``None`` when the protocol has finished)."""
        return self._owed

    def waiting_on(self) -> frozenset[int]:
        """Seats that owe an entry for the current step and have not sent it."""
        if self._owed is None:
            return frozenset()
        return frozenset(s for s in self._owed.wants if s not in self._pending)

    def owes(self, seat: int) -> frozenset[str]:
        """Kinds ``seat`` may send now (empty if it owes nothing at the current step)."""
        if self._owed is None or seat in self._pending:
            return frozenset()
        return self._owed.wants.get(seat, frozenset())

    def signed_from(self, step: int) -> list[Signed]:
        """Every accepted envelope at steps >= ``step`` (for :class:`p2p.wire.Fetch` replies),
        in canonical order: by step, then seat; the partial current step last."""
        out = []
        for k in range(max(step, 1), len(self.steps)):
            out.extend(self.steps[k][s].signed for s in sorted(self.steps[k]))
        if step <= self.step:
            out.extend(self._pending[s].signed for s in sorted(self._pending))
        return out

    def entries(self) -> Iterator[Entry]:
        """All accepted entries of completed steps in canonical order."""
        for k in range(1, len(self.steps)):
            for s in sorted(self.steps[k]):
                yield self.steps[k][s].entry

    def holds(self, signed: Signed) -> bool:
        """Whether these very envelope bytes joined the record (accepted, not just held)."""
        return self._verified.get(signed.signature) == signed.entry

    def pending_seats(self) -> frozenset[int]:
        """Seats whose entry for the current step we hold."""
        return frozenset(self._pending)

    def lane_named(self, round_: int) -> list[tuple[int, frozenset[int], str]]:
        """The current step's lane entries of ``round_``: (signer, named slots, kind)."""
        return [
            (seat, frozenset(s.entry.body.seats), s.entry.kind)  # type: ignore[attr-defined]
            for (r, seat), s in sorted(self._lane.items())
            if r == round_
        ]

    def lane_round(self) -> int:
        """The lane round seats sign in now: the first that is not dead (p2p/RECORD_FORMAT.md
        §12: a round is dead once no set of its ``absent`` entries can still complete)."""
        r = 0
        while self._round_dead(r):
            r += 1
        return r

    def signed_lane(self, seat: int, round_: int) -> bool:
        return (round_, seat) in self._lane

    def sign_past_lane(self, key: IdentityKey, seat: int, step: int, body: Body) -> Signed | None:
        """Sign a lane entry for a step that closed as usual (``present``, answering an
        ``absent`` that came after we closed it): moot here, it frees the seat that
        signed ``absent`` there.  ``None`` if that step is not such a step."""
        if not 0 < step < self.step or step in self.closed_by_absence:
            return None
        if body.TAG != PRESENT_KIND or key.public != self.keys[seat]:
            return None
        entry = Entry(self.table_id, seat, step, self.hashes[step - 1], body)
        raw = encode_body(entry)
        return Signed(raw, key.sign(entry_signing_input(raw)))

    def held_ready(self) -> bool:
        """Are entries held for the current step, left for :meth:`take_held`?"""
        return self._owed is not None and self.failure is None and self.step in self._held

    def take_held(self) -> list[Signed]:
        """The entries held for the current step, in the order an offer takes them, no
        longer held: offer each again (:attr:`defer_held`)."""
        if not self.held_ready():
            return []
        return [slot.signed for slot in self._release()]

    def held_count(self) -> int:
        return self._held_count

    def held_bytes(self) -> int:
        """Bytes of the signed envelopes held for future steps (bounded per seat)."""
        return self._held_bytes

    # -- own entries ----------------------------------------------------

    def sign(self, key: IdentityKey, seat: int, body: Body) -> Offer:
        """Build, sign and accept our own entry for the current step.

        Persist ``offer.accepted[0].signed`` (durably) before sending it: a
        peer that forgot what it signed could sign something else for the same
        step after a restart, and that would be equivocation.
        """
        if not 0 <= seat < len(self.keys) or key.public != self.keys[seat]:
            raise LocalProtocolError(f"key {key.fingerprint} is not seat {seat}'s identity")
        self._me = seat
        kinds = self.owes(seat)
        if body.TAG in LANE_KINDS and seat not in self.removed:
            kinds = kinds | LANE_KINDS
        if body.TAG not in kinds:
            raise LocalProtocolError(
                f"seat {seat} may not send {body.TAG!r} at step {self.step}"
                f" (owes {sorted(kinds) or 'nothing'})"
            )
        entry = Entry(self.table_id, seat, self.step, self.head, body)
        raw = encode_body(entry)
        signed = Signed(raw, key.sign(entry_signing_input(raw)))
        try:
            return self._offer_decoded(entry, signed)
        except CheatDetected as exc:
            raise LocalProtocolError(f"our own entry was refused: {exc}") from exc

    # -- received entries -----------------------------------------------

    def offer(self, signed: Signed) -> Offer:
        """Take a signed envelope from anyone (live or relayed); see :class:`Offer`.

        Raises a :class:`CheatDetected` subclass naming the seat for rule
        violations, :class:`MalformedEntry` naming the signer for validly
        signed bytes that do not decode, and :class:`RemoteProtocolError` for
        undecodable bytes that no seat signed (the relaying peer's junk).
        """
        try:
            entry = decode_body(signed.entry, Entry)
        except RemoteProtocolError as exc:
            raise self._blame_undecodable(signed, exc) from None
        assert isinstance(entry, Entry)
        if self._verified.get(signed.signature) == signed.entry:
            # the very same bytes passed every check in _authenticate before
            return self._offer_decoded(entry, signed)
        self._authenticate(entry, signed)
        offer = self._offer_decoded(entry, signed)
        return offer

    def _blame_undecodable(self, signed: Signed, problem: RemoteProtocolError) -> P2PError:
        """The error for entry bytes that do not decode: :class:`MalformedEntry` naming the
        seat whose key verifies the signature (the seat the envelope header claims is tried
        first, then every other), else ``problem`` itself."""
        claimed, table_id = _envelope_header(signed.entry)
        if table_id is not None and table_id != self.table_id:
            # bound to another table: no evidence about this one, and no key of ours is
            # tried on it (keys outlive tables: see ForeignEntry).  Bytes with no readable
            # table id are no entry of any table: an honest peer never signs such bytes
            # under the entry domain, so their signer is convicted below.
            return ForeignEntry(table_id, self.table_id)
        msg = entry_signing_input(signed.entry)
        order = sorted(range(len(self.keys)), key=lambda s: s != claimed)
        for seat in order:
            try:
                verify_signature(self.keys[seat], msg, signed.signature)
            except CryptoError:
                continue
            evidence = (signed.entry, signed.signature)
            exc = MalformedEntry(seat, f"signed an entry that does not decode: {problem}", evidence)
            self.evidence.append(exc)
            return exc
        return problem

    def _authenticate(self, entry: Entry, signed: Signed) -> None:
        if entry.table_id != self.table_id:
            # checked first: an entry signed at another table is no evidence about this
            # one, whoever signed it (players who met before hold each other's entries)
            raise ForeignEntry(entry.table_id, self.table_id)
        seat = entry.seat
        msg = entry_signing_input(signed.entry)
        if seat < len(self.keys):
            try:
                verify_signature(self.keys[seat], msg, signed.signature)
                return
            except CryptoError:
                pass
        # not the claimed seat's signature (or a seat this table does not have): a seat
        # whose key verifies it signed an entry claiming another seat
        for other, key in enumerate(self.keys):
            if other == seat:
                continue
            try:
                verify_signature(key, msg, signed.signature)
            except CryptoError:
                continue
            raise Impersonation(
                other, f"signed an entry claiming to be seat {seat}", (signed.entry,)
            ) from None
        if seat >= len(self.keys):
            # no key of this table signed it: junk, the relaying link's fault
            raise RemoteProtocolError(f"entry from seat {seat}, table has {len(self.keys)} seats")
        raise ForgedSignature(
            seat, "entry signature does not verify under this seat's key", (signed.entry,)
        )

    def _offer_decoded(self, entry: Entry, signed: Signed) -> Offer:
        step = entry.step
        slot = _Slot(entry, signed)
        if step == 0:
            raise OutOfTurn(entry.seat, "step 0 is the genesis", (signed.entry,))
        gone_at = self.removed.get(entry.seat)
        if gone_at is not None and step >= gone_at:
            return Offer(Status.MOOT)  # a seat that is out: what it says now is no turn
        if step < self.step and (entry.kind in LANE_KINDS or step in self.closed_by_absence):
            prior = self.steps[step].get(entry.seat) if step in self.closed_by_absence else None
            if prior is not None and prior.signed.entry == signed.entry:
                return Offer(Status.DUPLICATE)
            if (
                prior is not None
                and entry.kind in LANE_KINDS
                and entry.body.round == self._closed_round.get(step)  # type: ignore[attr-defined]
            ):
                return self._same_or_equivocation(prior, slot)  # two lane entries: raises
            if entry.kind == ABSENT_KIND and step not in self.closed_by_absence:
                return self._late_absent(slot)
            # a lane entry of a step that closed as usual, or any other entry of a step that
            # closed by absence: it changes nothing, and blames nobody
            return Offer(Status.MOOT)
        if step < self.step:
            prior = self.steps[step].get(entry.seat)
            if prior is None:
                if entry.prev != self.hashes[step - 1]:
                    # not our chain: a fork we cannot follow, not a turn we can judge
                    j = self._hash_index.get(entry.prev)
                    if j is not None:
                        raise Replay(
                            entry.seat,
                            f"entry for step {step} chains to step {j}, not {step - 1}",
                            (signed.entry,),
                        )
                    raise BrokenChain(
                        entry.seat,
                        f"entry for step {step} chains to an unknown hash",
                        (signed.entry,),
                    )
                raise OutOfTurn(
                    entry.seat,
                    f"sent {entry.kind!r} for step {step}, which it did not owe",
                    (signed.entry,),
                )
            return self._same_or_equivocation(prior, slot)
        if step > self.step:
            return self._hold(slot)
        first = self._take(slot)
        if first is None:
            return Offer(Status.DUPLICATE)
        accepted = [first]
        completed: list[StepView] = []
        cheats: list[CheatDetected] = []
        refused: list[tuple[CheatDetected, Signed]] = []
        # entries held for this step that the caller has not offered again yet
        # (defer_held) are taken now, as they would have been when the step came
        release = self.held_ready()
        while True:
            if release:
                for held in self._release():
                    try:
                        got = self._take(held)
                    except CheatDetected as exc:
                        cheats.append(exc)
                        refused.append((exc, held.signed))
                        continue
                    if got is not None:
                        accepted.append(got)
            how = self._closing()
            if how is None:
                break
            completed.append(self._complete() if how is True else self._complete_absent(how))
            if self.failure is not None:
                break
            if self.verdict is not None:
                cheats.extend(self._late)
                self._late.clear()
                break
            if self.defer_held and self.held_ready():
                break  # the caller checks them ahead and offers them again (take_held)
            release = True
        return Offer(
            Status.ACCEPTED, tuple(accepted), tuple(completed), tuple(cheats), tuple(refused)
        )

    def took(self, entry_bytes: bytes) -> bool:
        """Whether an entry of exactly these bytes joined the record (a completed step's,
        or the current step's)."""
        try:
            entry = decode_body(entry_bytes, Entry)
        except RemoteProtocolError:
            return False
        k, seat = entry.step, entry.seat  # type: ignore[attr-defined]
        if 0 < k < len(self.steps):
            slot = self.steps[k].get(seat)
        elif k == self.step:
            slot = self._pending.get(seat)
        else:
            return False
        return slot is not None and slot.signed.entry == entry_bytes

    # -- a lost seat that comes back (p2p/RECORD_FORMAT.md §12) -------------------

    def _late_absent(self, slot: _Slot) -> Offer:
        """An ``absent`` entry of a step ``k`` that we closed as usual.

        Moot (§12), unless it completes, with the ones kept before, a round of ``k``
        naming one seat, signed by every other seat still at the table at ``k``.  Then
        the table closed ``k`` by absence and we alone did not: we are (or follow) the
        seat it names, which signed its entry for ``k`` and was stopped before that entry
        left its machine (``kill -9`` between its fsync and its send).  No other seat
        closed ``k`` as usual (each signed ``absent`` there, §12's lock), so we refold:
        our record from ``k`` on becomes the table's, and our own late entry is moot.
        Naming one seat only, and with every other seat's signature: the seats that
        could remove that seat at any step anyway, never a smaller group rewriting a
        step that closed as usual.  Never when a signer's lane entry of that round that
        we held differs (equivocation), when a signer has an entry of a later step here
        (it closed ``k`` as usual: not locked), or after a verdict (a conviction stays)."""
        entry = slot.entry
        k, seat, r = entry.step, entry.seat, entry.body.round  # type: ignore[attr-defined]
        named = frozenset(entry.body.seats)  # type: ignore[attr-defined]
        if entry.prev != self.hashes[k - 1] or self.failure is not None:
            return Offer(Status.MOOT)
        if self.verdict is not None:
            return Offer(Status.MOOT)  # a conviction is never folded away
        # a lane entry of that round we held when we closed it (it died here: some seat
        # signed something else in it) or kept since: a different one is equivocation
        prior = self._past_lane.get(k, {}).get((r, seat)) or self._late_lane.get((k, r, seat))
        if prior is not None:
            return self._same_or_equivocation(prior, slot)  # two lane entries: raises
        if sum(1 for _, _, s in self._late_lane if s == seat) >= MAX_LATE_LANE_PER_SEAT:
            return Offer(Status.MOOT)
        self._late_lane[(k, r, seat)] = slot
        at_table = [s for s in range(len(self.keys)) if self.removed.get(s, k) >= k]
        if len(named) != 1 or not named <= set(at_table):
            return Offer(Status.MOOT)
        lane = []
        for s in at_table:
            if s in named:
                continue
            got = self._late_lane.get((k, r, s))
            if got is None or got.entry.kind != ABSENT_KIND:
                return Offer(Status.MOOT)
            if frozenset(got.entry.body.seats) != named:  # type: ignore[attr-defined]
                return Offer(Status.MOOT)
            lane.append(got)
        # a signer with an entry of a later step here closed k as usual, so it was not
        # locked in that round (§12): the round is no table's, whoever lied in it
        signers = {got.entry.seat for got in lane}
        for j in range(k + 1, len(self.steps)):
            if not signers.isdisjoint(self.steps[j]):
                return Offer(Status.MOOT)
        if not signers.isdisjoint(self._pending):
            return Offer(Status.MOOT)
        return self._refold(k, lane)

    def _refold(self, k: int, lane: list[_Slot]) -> Offer:
        """Fold our steps ``1 .. k-1`` again into a fresh rule, close ``k`` by absence
        with ``lane``, and take the table's later entries we hold (held, or refused at the
        current step as chained elsewhere); the result replaces this record."""
        fresh = Record(self.genesis, self._rule_factory)
        fresh._me = self._me
        fresh._verified = dict(self._verified)
        later = sorted(
            [*(s for at in self._held.values() for s in at.values()), *self._broken.values()],
            key=lambda s: s.entry.step,
        )
        accepted: list[Accepted] = []
        completed: list[StepView] = []
        try:
            for j in range(1, k):
                for s in sorted(self.steps[j]):
                    fresh.offer(self.steps[j][s].signed)
            if fresh.step != k or fresh.failure is not None or fresh.verdict is not None:
                return Offer(Status.MOOT)  # cannot happen: these steps folded before
            for s in lane:
                got = fresh.offer(s.signed)
                accepted.extend(got.accepted)
                completed.extend(got.completed)
        except (CheatDetected, RemoteProtocolError):
            return Offer(Status.MOOT)  # the rule refuses that round here: it stays moot
        if k not in fresh.closed_by_absence:
            return Offer(Status.MOOT)
        cheats: list[CheatDetected] = []
        refused: list[tuple[CheatDetected, Signed]] = []
        for s in later:
            try:
                got = fresh.offer(s.signed)
            except (CheatDetected, RemoteProtocolError):
                continue  # our own fork's, or not chained yet: fetched again if needed
            accepted.extend(got.accepted)
            completed.extend(got.completed)
            cheats.extend(got.cheats)
            refused.extend(got.refused)
        fresh.evidence = self.evidence
        fresh._late_lane = self._late_lane
        fresh._past_lane = {
            **{j: at for j, at in self._past_lane.items() if j < k},
            **fresh._past_lane,
        }
        fresh.refolded = [*self.refolded, k]
        vars(self).update(vars(fresh))
        return Offer(
            Status.ACCEPTED, tuple(accepted), tuple(completed), tuple(cheats), tuple(refused)
        )

    def _same_or_equivocation(self, prior: _Slot, slot: _Slot) -> Offer:
        if prior.signed.entry == slot.signed.entry:
            return Offer(Status.DUPLICATE)
        exc = Equivocation(
            slot.entry.seat,
            f"two different signed entries for step {slot.entry.step}",
            (prior.signed.entry, prior.signed.signature, slot.signed.entry, slot.signed.signature),
        )
        self.evidence.append(exc)
        raise exc

    def _hold(self, slot: _Slot) -> Offer:
        """Keep an authenticated entry for a future step, within the signer's budget.

        Its signer is checked (``offer`` authenticated it) and its size is
        checked here; what it chains to cannot be checked until its step, so
        each seat may make us hold at most :data:`MAX_HELD_PER_SEAT` entries
        and :data:`MAX_HELD_BYTES_PER_SEAT` bytes.  Past that, or too far
        ahead, the entry is not held (``TOO_FAR``: fetched when its step comes).
        """
        step, seat = slot.entry.step, slot.entry.seat
        if self._owed is None:
            # our record has ended; a later step's chain cannot be checked (it may be another
            # fork's), so it is no evidence: not held
            return Offer(Status.TOO_FAR)
        at = self._held.get(step, {})
        key = (  # a lane entry beside the owed one, one per lane round
            seat + 256 * (1 + slot.entry.body.round)  # type: ignore[attr-defined]
            if slot.entry.kind in LANE_KINDS
            else seat
        )
        if key in at:
            return self._same_or_equivocation(at[key], slot)
        size = _slot_bytes(slot)
        count, held = self._held_by_seat.get(seat, (0, 0))
        if (
            step - self.step > MAX_STEPS_AHEAD
            or size > MAX_HELD_ENTRY_BYTES
            or count >= MAX_HELD_PER_SEAT
            or held + size > MAX_HELD_BYTES_PER_SEAT
        ):
            return Offer(Status.TOO_FAR)
        self._held.setdefault(step, {})[key] = slot
        self._held_by_seat[seat] = (count + 1, held + size)
        self._held_count += 1
        self._held_bytes += size
        return Offer(Status.HELD)

    def _release(self) -> list[_Slot]:
        at = self._held.pop(self.step, {})
        self._held_count -= len(at)
        for slot in at.values():
            seat = slot.entry.seat
            size = _slot_bytes(slot)
            count, held = self._held_by_seat[seat]
            if count == 1:
                del self._held_by_seat[seat]
            else:
                self._held_by_seat[seat] = (count - 1, held - size)
            self._held_bytes -= size
        return [at[s] for s in sorted(at)]

    def _closing(self) -> bool | frozenset[int] | None:
        """How the current step closes now: ``True`` as usual, the named slots by
        absence, ``None`` not yet."""
        if self._owed is None:
            return None
        named = self._absence_named()
        if named is not None:
            return named
        if self._owed.seats != self._pending.keys():
            return None
        # our lock: we signed that seats are gone in a lane round that can still complete;
        # we close as usual only once it cannot (a remaining seat signed something else in
        # it: ``present``, or ``absent`` naming other seats)
        # a record with no seat of its own (a spectator, a verifier) waits for every round
        # that can still complete: it follows the seats, whichever way the step closes
        me = self._me
        for (r, seat), slot in self._lane.items():
            mine = me is None or seat == me
            if mine and slot.entry.kind == ABSENT_KIND and not self._round_dead(r):
                return None
        return True

    def _remaining(self, named: frozenset[int]) -> list[int]:
        return [s for s in range(len(self.keys)) if s not in self.removed and s not in named]

    def _round_sets(self, r: int) -> list[frozenset[int]]:
        return sorted(
            {
                frozenset(s.entry.body.seats)  # type: ignore[attr-defined]
                for (rr, _), s in self._lane.items()
                if rr == r and s.entry.kind == ABSENT_KIND
            },
            key=sorted,
        )

    def _can_complete(self, r: int, named: frozenset[int]) -> bool | None:
        """``True`` if round ``r`` completes with ``named``, ``False`` if it never can,
        ``None`` if it still may."""
        missing = False
        for s in self._remaining(named):
            got = self._lane.get((r, s))
            if got is None:
                missing = True
            elif got.entry.kind != ABSENT_KIND or frozenset(got.entry.body.seats) != named:
                return False
        return None if missing else True

    def _round_dead(self, r: int) -> bool:
        """No set named in round ``r`` can complete any more (a round with no ``absent``
        entry is dead once it holds any lane entry, and open while it holds none)."""
        if not any(rr == r for rr, _ in self._lane):
            return False
        return all(self._can_complete(r, named) is False for named in self._round_sets(r))

    def _absence_named(self) -> frozenset[int] | None:
        """The slots named gone at the current step by every other remaining seat (in one
        lane round, under one set)."""
        if not self._lane:  # no lane entry at this step (the usual case): nobody named
            return None
        for r in sorted({rr for rr, _ in self._lane}):
            for named in self._round_sets(r):
                if self._can_complete(r, named) is True:
                    self._closing_round = r
                    return named
        return None

    def _take_lane(self, slot: _Slot) -> Accepted | None:
        """A lane entry for the current step (already chained to our head)."""
        entry, signed = slot.entry, slot.signed
        seat = entry.seat
        key = (entry.body.round, seat)  # type: ignore[attr-defined]
        prior = self._lane.get(key)
        if prior is not None:
            self._same_or_equivocation(prior, slot)  # raises unless identical
            return None
        if entry.body.round >= MAX_LANE_ROUNDS:  # type: ignore[attr-defined]
            raise OutOfTurn(
                seat,
                f"sent {entry.kind!r} in lane round {entry.body.round} of step "  # type: ignore[attr-defined]
                f"{entry.step}: a step has at most {MAX_LANE_ROUNDS} lane rounds",
                (signed.entry,),
            )
        check = getattr(self.rule, "check_absent", None)
        if check is None:
            raise OutOfTurn(
                seat,
                f"sent {entry.kind!r} at step {entry.step}: nobody can leave this table",
                (signed.entry,),
            )
        check(seat, frozenset(entry.body.seats), entry.kind)
        self._lane[key] = slot
        self._verified[signed.signature] = signed.entry
        return Accepted(entry.step, seat, entry, signed)

    def _take(self, slot: _Slot) -> Accepted | None:
        """Add an authenticated entry for the current step; ``None`` if a duplicate."""
        entry, signed = slot.entry, slot.signed
        seat = entry.seat
        if seat in self.removed:
            return None  # held from before its removal: moot
        prior = (
            self._lane.get((entry.body.round, seat))  # type: ignore[attr-defined]
            if entry.kind in LANE_KINDS
            else self._pending.get(seat) or self._broken.get(seat)
        )
        if prior is not None:
            self._same_or_equivocation(prior, slot)  # raises unless identical
            return None
        # the chain first: on another fork (a seat showed two versions of a step to
        # different peers) an honest seat may owe something else, or nothing, here; only
        # an entry that chains to our own head can be judged by our turn rule
        if entry.prev != self.head:
            j = self._hash_index.get(entry.prev)
            if j is not None:
                raise Replay(
                    seat,
                    f"entry for step {entry.step} chains to step {j}, not {entry.step - 1}",
                    (signed.entry,),
                )
            # kept (one per seat and step): an honest seat that saw another fork never signs
            # a second entry for this step, so if this seat does, the two are equivocation
            if entry.kind not in LANE_KINDS:
                self._broken.setdefault(seat, slot)
            raise BrokenChain(
                seat, f"entry for step {entry.step} chains to an unknown hash", (signed.entry,)
            )
        owed = self._owed
        if owed is None:
            raise OutOfTurn(seat, f"step {entry.step} after the protocol finished", (signed.entry,))
        if entry.kind in LANE_KINDS:
            return self._take_lane(slot)
        kinds = owed.wants.get(seat)
        if kinds is None:
            raise OutOfTurn(
                seat, f"spoke at step {entry.step}, owed by {owed.describe()}", (signed.entry,)
            )
        if entry.kind not in kinds:
            raise OutOfTurn(
                seat,
                f"sent {entry.kind!r} at step {entry.step}, owes {'/'.join(sorted(kinds))}",
                (signed.entry,),
            )
        try:
            self.rule.check(seat, entry.body)
        except P2PError:
            raise
        except Exception as exc:  # noqa: BLE001 - a rule's bug, not the signer's fault
            raise FoldFailed(
                f"this program failed while checking seat {seat}'s entry for step"
                f" {entry.step} ({type(exc).__name__}: {exc}); nothing was accepted"
            ) from exc
        self._pending[seat] = slot
        # a byte-identical copy of an accepted entry (relayed, fetched, resent) skips the
        # Ed25519 check; held entries are not remembered (a bogus one is dropped at its step)
        self._verified[signed.signature] = signed.entry
        return Accepted(entry.step, seat, entry, signed)

    def _complete_absent(self, named: frozenset[int]) -> StepView:
        """Close the current step by absence: its hash covers the ``absent`` entries."""
        number = self.step
        r = self._closing_round
        lane = {
            seat: slot
            for (rr, seat), slot in self._lane.items()
            if rr == r and slot.entry.kind == ABSENT_KIND
        }
        self._closed_round[number] = r
        for s in named:
            self.removed[s] = number
        self.closed_by_absence[number] = named
        return self._complete(lane, named)

    def _complete(
        self, slots: dict[int, _Slot] | None = None, named: frozenset[int] | None = None
    ) -> StepView:
        number = self.step
        slots = self._pending if slots is None else slots
        contributions = {s: slots[s].signed.entry for s in slots}
        h = step_hash(number, self.head, contributions)
        view = StepView(number, h, tuple(slots[s].entry for s in sorted(slots)))
        self.steps.append(dict(sorted(slots.items())))
        self.hashes.append(h)
        self._hash_index[h] = number
        if named is None:
            absent = [
                (seat, frozenset(s.entry.body.seats), r)  # type: ignore[attr-defined]
                for (r, seat), s in sorted(self._lane.items())
                if s.entry.kind == ABSENT_KIND
            ]
            mine = {r for r, seat in self._lane if seat == self._me}
            absent = [a for a in absent if a[2] not in mine]  # a round we spoke in: done
            if absent:
                self.unanswered[number] = absent
            if self._lane:
                self._past_lane[number] = self._lane
        self._pending = {}
        self._broken = {}
        self._lane = {}
        try:
            if named is None:
                self.rule.advance(view)
            else:
                self.rule.advance_absent(view, named)  # type: ignore[attr-defined]
        except CheatDetected as exc:
            # the completed step stays in the record; the evidence is the culprit's own
            # signed entry at the step where it deviated (a lie shown by a later reveal
            # names its action's step), else the completed step itself
            if exc.step is not None and not exc.evidence:
                slot = self.steps[exc.step].get(exc.seat) if 0 < exc.step <= number else None
                if slot is not None:
                    exc.evidence = (slot.signed.entry,)
            self.verdict = exc
            self.evidence.append(exc)
            self._late.append(exc)
            self._owed = None
            return view
        except Exception as exc:  # noqa: BLE001 - anything else is a bug of ours, not a peer's
            # every entry stays in the record; the table cannot go on here
            self.failure = FoldFailed(
                f"this program failed while folding step {number}"
                f" ({type(exc).__name__}: {exc}); the record file is intact"
            )
            self.failure.__cause__ = exc
            self._owed = None
            return view
        self._owed = self.rule.owed()
        return view
