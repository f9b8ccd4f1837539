"""Forming a table, sans-I/O: the manifest, its signatures, and the seat order.

When every seat is taken, the peers build the same :class:`Manifest` (game,
options, each seat's identity key, seal key and address, protocol version,
the random table id, the silence timeouts, and the protocol the record
follows after forming with its parameters).  Its canonical bytes
(:func:`manifest_bytes`) are signed by every seat; manifest plus all
signatures is the record's genesis (step 0, :class:`p2p.wire.Genesis`).

Seat *slots* are the manifest's list positions (the opener is slot 0, then
joiners in join order); record entries name these slots in their ``seat``
field.  The *seat order* (who sits where around the table, who plays first)
is then drawn fairly with commit-reveal joint randomness in the record itself
(:class:`FormingRule`): step 1 is a round in which every seat commits to 32
random bytes, step 2 a round in which every seat reveals them.  Each reveal is
checked against its own commitment (a mismatch is an :class:`InvalidMove`
naming the seat), and the permutation comes from
:meth:`crypto.commit.JointStream.permutation` over the seed of all reveals.
Since nobody can see another's value before committing, one honest seat makes
the order uniform.  (Blum, "Coin flipping by telephone", 1981.)
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated

from crypto.commit import JointStream, check_commitment, commit
from crypto.errors import CommitmentMismatch, CryptoError
from crypto.identity import IdentityKey, verify_signature
from p2p.errors import ForgedSignature, InvalidGenesis, InvalidMove, LocalProtocolError, OutOfTurn
from p2p.record.order import Owed, Rule, StepView
from p2p.table.demo import DemoProtocol  # noqa: F401 - registers the "demo" manifest protocol
from p2p.wire import (
    MAX_SEATS,
    PROTOCOL_VERSION,
    U32,
    Body,
    Bytes,
    Genesis,
    Hash,
    Member,
    Message,
    Name,
    Nested,
    Options,
    Seq,
    TableId,
    TableProtocol,
    Tagged,
    UInt,
    body,
    decode_body,
    encode_body,
    message,
)

MANIFEST_SIGN_DOMAIN = b"slaiga/v1/manifest"
GENESIS_HASH_DOMAIN = b"slaiga/v1/genesis"
SEAT_ORDER_DOMAIN = b"slaiga/v1/seat-order"
SEAT_ORDER_VALUE_BYTES = 32
SEAT_ORDER_SECRET_DOMAIN = b"slaiga/v1/seat-order-secret"
DEFAULT_STALL_AFTER_MS = 5_000
DEFAULT_MAX_WAIT_MS = 120_000

DEFAULT_SPECTATORS = 4
"""Spectators a table lets watch at once unless its opener says otherwise."""
MAX_SPECTATORS = 16
"""The most spectators a manifest may allow (each seat links each of them)."""

COMMIT_KIND = "commit"
REVEAL_KIND = "reveal"


@message("table_manifest")
@dataclass(frozen=True, slots=True)
class Manifest(Message):
    """Everything the seats agree on before play; seat slot = index in ``seats``.

    ``spectators`` is how many spectators may watch at once (0: none); every seat signs
    it, so the seats decide together.

    ``protocol`` says what the record holds after the seat order and with
    which parameters (e.g. :class:`p2p.table.demo.DemoProtocol`).  It is separate
    from ``options``, which are the game's own options checked against its
    rules; being signed by every seat, it lets anyone replay the record's
    turn rules from the file alone (:func:`table_rule`).
    """

    version: U32
    table_id: TableId
    game: Name
    options: Options
    seats: Annotated[tuple[Member, ...], Seq(Nested(Member), min_len=1, max_len=MAX_SEATS)]
    stall_after_ms: U32
    max_wait_ms: U32
    protocol: Annotated[TableProtocol, Tagged(TableProtocol)]
    spectators: Annotated[int, UInt(max=MAX_SPECTATORS)] = DEFAULT_SPECTATORS
    """How many spectators each seat lets watch at once (0: none); they sign nothing
    (``p2p/table/watchers.py``)."""

    def __post_init__(self) -> None:
        Message.__post_init__(self)
        problem = self.problem()
        if problem:
            raise LocalProtocolError(f"manifest: {problem}")

    def problem(self) -> str | None:
        """A reason this (schema-valid) manifest is unusable, or ``None``."""
        keys = [m.identity for m in self.seats]
        if len(set(keys)) != len(keys):
            return "two seats share one identity key"
        if self.max_wait_ms < self.stall_after_ms:
            return f"max_wait_ms {self.max_wait_ms} < stall_after_ms {self.stall_after_ms}"
        if self.stall_after_ms == 0:
            return "stall_after_ms must be positive"
        return None

    @property
    def n_seats(self) -> int:
        return len(self.seats)

    def seat_of(self, identity: bytes) -> int | None:
        """The slot whose identity key is ``identity`` (handshakes use this)."""
        for i, m in enumerate(self.seats):
            if m.identity == identity:
                return i
        return None


def new_table_id() -> bytes:
    """A fresh random table id (16 bytes from ``secrets``)."""
    return secrets.token_bytes(16)


def manifest_bytes(manifest: Manifest) -> bytes:
    """The canonical bytes every seat signs."""
    return encode_body(manifest)


def manifest_signing_input(raw: bytes) -> bytes:
    return MANIFEST_SIGN_DOMAIN + raw


def sign_manifest(key: IdentityKey, raw: bytes) -> bytes:
    """Sign exact manifest bytes (domain-separated from entry and handshake signatures)."""
    return key.sign(manifest_signing_input(raw))


def verify_manifest_signature(manifest: Manifest, raw: bytes, seat: int, signature: bytes) -> None:
    """Raise :class:`ForgedSignature` unless ``seat`` signed exactly ``raw``."""
    if not 0 <= seat < manifest.n_seats:
        raise InvalidGenesis(f"manifest signature for seat {seat} of {manifest.n_seats}")
    try:
        verify_signature(manifest.seats[seat].identity, manifest_signing_input(raw), signature)
    except CryptoError as exc:
        raise ForgedSignature(seat, f"manifest signature does not verify: {exc}", (raw,)) from None


def make_genesis(raw: bytes, signatures: Mapping[int, bytes] | Sequence[bytes]) -> Genesis:
    """Genesis from manifest bytes and every seat's signature (seat -> signature)."""
    if isinstance(signatures, Mapping):
        n = len(signatures)
        if sorted(signatures) != list(range(n)):
            raise LocalProtocolError(f"genesis needs signatures of seats 0..{n - 1}")
        signatures = [signatures[i] for i in range(n)]
    return Genesis(raw, tuple(signatures))


def open_genesis(genesis: Genesis) -> Manifest:
    """Decode and fully verify a genesis; return its manifest.

    Raises :class:`InvalidGenesis` (a :class:`RemoteProtocolError`) for a bad
    manifest or a wrong number of signatures, and :class:`ForgedSignature`
    naming the first seat whose signature fails.
    """
    try:
        manifest = decode_body(genesis.manifest, Manifest)
    except InvalidGenesis:
        raise
    except Exception as exc:  # RemoteProtocolError from the wire layer
        raise InvalidGenesis(f"manifest: {exc}") from None
    assert isinstance(manifest, Manifest)
    problem = manifest.problem()
    if problem:
        raise InvalidGenesis(f"manifest: {problem}")
    if manifest.version != PROTOCOL_VERSION:
        raise InvalidGenesis(f"manifest version {manifest.version}, we speak {PROTOCOL_VERSION}")
    if len(genesis.signatures) != manifest.n_seats:
        raise InvalidGenesis(
            f"{len(genesis.signatures)} manifest signatures for {manifest.n_seats} seats"
        )
    for seat, sig in enumerate(genesis.signatures):
        verify_manifest_signature(manifest, genesis.manifest, seat, sig)
    return manifest


def genesis_hash(genesis: Genesis) -> bytes:
    """Hash of step 0, which step 1 chains to (covers the manifest bytes)."""
    return hashlib.sha256(GENESIS_HASH_DOMAIN + genesis.manifest).digest()


# ---------------------------------------------------------------------------
# Seat order by commit-reveal
# ---------------------------------------------------------------------------


@body(COMMIT_KIND)
@dataclass(frozen=True, slots=True)
class Commit(Body):
    """A hash commitment (``crypto.commit``) to a seat's secret random value."""

    commitment: Hash


@body(REVEAL_KIND)
@dataclass(frozen=True, slots=True)
class Opening(Body):
    """The opening of a :class:`Commit`: the value and the commitment nonce.

    Sent for the seat order (step 2) and for every joint random draw of a game
    (dice); not to be confused with the engine's ``Reveal`` obligation, which
    makes cards public.
    """

    value: Annotated[bytes, Bytes(size=SEAT_ORDER_VALUE_BYTES)]
    nonce: Annotated[bytes, Bytes(size=32)]


def commit_context(table_id: bytes, seat: int) -> bytes:
    """Commitment context: binds a commitment to this table and seat (no copying)."""
    return SEAT_ORDER_DOMAIN + table_id + seat.to_bytes(1, "big")


def seat_order_commit(
    table_id: bytes, seat: int, value: bytes | None = None, *, key: IdentityKey | None = None
) -> tuple[Commit, Opening]:
    """Our commitment body now and the reveal body to send later (keep it secret till then).

    With ``key`` (our identity), value and nonce are derived from our
    deterministic Ed25519 signature over the table id, so a peer that crashes
    between commit and reveal re-derives the same reveal after a restart
    instead of having to store a secret (and cannot be tricked into
    committing twice).  Others cannot predict it without our private key.
    Without ``key`` and ``value``, fresh randomness from ``secrets`` is used.
    """
    nonce = None
    if key is not None:
        if value is not None:
            raise LocalProtocolError("pass either value or key, not both")
        secret = hashlib.sha512(key.sign(SEAT_ORDER_SECRET_DOMAIN + table_id)).digest()
        value, nonce = secret[:SEAT_ORDER_VALUE_BYTES], secret[SEAT_ORDER_VALUE_BYTES:]
    elif value is None:
        value = secrets.token_bytes(SEAT_ORDER_VALUE_BYTES)
    commitment, nonce = commit(value, commit_context(table_id, seat), nonce)
    return Commit(commitment), Opening(value, nonce)


def seat_order_from(table_id: bytes, reveals: Mapping[int, bytes]) -> tuple[int, ...]:
    """The seat order (slots around the table, first player first) from checked reveals."""
    jr = JointStream.from_reveals(SEAT_ORDER_DOMAIN + table_id, reveals)
    return tuple(jr.permutation(len(reveals)))


NextRule = Callable[[Manifest, tuple[int, ...]], Rule]


def table_rule(manifest: Manifest) -> FormingRule:
    """The whole record's rule, from the manifest alone: the seat order, then the
    manifest's protocol (the ``rule_factory`` for :class:`p2p.record.chain.Record`)."""
    return FormingRule(manifest, then=manifest.protocol.start)


SEAT_ORDER_STEP = 2
"""The record step whose entries (the reveals) draw the seat order."""


def order_at_verdict(order: tuple[int, ...], step: int | None) -> tuple[int, ...]:
    """The seat order a verdict about record step ``step`` numbers the seats by: none
    (join order) for a verdict about the draw itself, whatever a seat folded after it,
    as ``slaiga verify`` does, which stops at the verdict (p2p/record/verify.py)."""
    return () if step is not None and step <= SEAT_ORDER_STEP else order


class FormingRule:
    """Steps 1-2 of every table: commit round, reveal round; then hand over to ``then``.

    ``seat_order`` is ``None`` until the reveal round completes.
    """

    __slots__ = ("manifest", "then", "phase", "commitments", "seat_order", "next_rule")

    def __init__(self, manifest: Manifest, then: NextRule | None = None) -> None:
        self.manifest = manifest
        self.then = then
        self.phase = COMMIT_KIND
        self.commitments: dict[int, bytes] = {}
        self.seat_order: tuple[int, ...] | None = None
        self.next_rule: Rule | None = None

    def owed(self) -> Owed | None:
        if self.phase in (COMMIT_KIND, REVEAL_KIND):
            return Owed.responders(range(self.manifest.n_seats), self.phase)
        return self.next_rule.owed() if self.next_rule is not None else None

    def check(self, seat: int, body: Body) -> None:
        if self.phase == REVEAL_KIND:
            assert isinstance(body, Opening)
            try:
                check_commitment(
                    self.commitments[seat],
                    body.value,
                    body.nonce,
                    commit_context(self.manifest.table_id, seat),
                    seat,
                )
            except CommitmentMismatch as exc:
                raise InvalidMove(seat, f"seat-order reveal: {exc}") from None
        elif self.phase == "done" and self.next_rule is not None:
            self.next_rule.check(seat, body)

    def advance(self, step: StepView) -> None:
        bodies = step.by_seat()
        if self.phase == COMMIT_KIND:
            self.commitments = {s: b.commitment for s, b in bodies.items()}  # type: ignore[attr-defined]
            self.phase = REVEAL_KIND
        elif self.phase == REVEAL_KIND:
            reveals = {s: b.value for s, b in bodies.items()}  # type: ignore[attr-defined]
            self.seat_order = seat_order_from(self.manifest.table_id, reveals)
            self.phase = "done"
            if self.then is not None:
                self.next_rule = self.then(self.manifest, self.seat_order)
        elif self.next_rule is not None:
            self.next_rule.advance(step)

    def check_absent(self, seat: int, named: frozenset[int], kind: str) -> None:
        """The absence lane (issue 21) belongs to the protocol after the seat order."""
        check = getattr(self.next_rule, "check_absent", None)
        if self.phase != "done" or check is None:
            raise OutOfTurn(seat, f"sent {kind!r}: nobody can leave this table now")
        check(seat, named, kind)

    def advance_absent(self, step: StepView, named: frozenset[int]) -> None:
        self.next_rule.advance_absent(step, named)  # type: ignore[union-attr]
