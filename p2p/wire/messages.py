"""Wire messages: the handshake, the lobby, keepalive, the record and fetch.

Each is a schema-checked dataclass (:mod:`p2p.wire.schema`) registered under
its tag.  Signed record entries travel as opaque ``bin`` fields
(:class:`Signed`) that are decoded only after the signature over them is
checked.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Annotated

from p2p.errors import LocalProtocolError
from p2p.wire.schema import (
    HASH_BYTES,
    MAX_FETCH_ENTRIES,
    MAX_FRAME_BYTES,
    MAX_REASON_LEN,
    MAX_SEATS,
    SIGNATURE_BYTES,
    U32,
    Address,
    Blob,
    Body,
    Bool,
    Bytes,
    Hash,
    Key,
    Message,
    Name,
    Nested,
    Nonce,
    OneOf,
    Options,
    SealPublicKey,
    Seat,
    Seq,
    Signature,
    Step,
    Str,
    Struct,
    TableId,
    Tagged,
    UInt,
    body,
    message,
    struct,
)

PROTOCOL_VERSION = 6
"""Version 6: a shuffle proof's context names the shuffle round and the shuffler's
position in it instead of the record step, and a whole-deck shuffle round starts from
the deck's public masking (so the next deal's shuffles can be made ahead, off the
record: ``ShuffleProposal``).  Version 5: the shorter proof that a player does not
hold a card.  Version 4: the table manifest says how many spectators may watch (``spectators``).
Version 3: a sealed gift is an openable box of fixed size, its ``verdict`` is only
accept or complain, and a complaint is settled by the giver's ``unseal`` entry
(``p2p/RECORD_FORMAT.md`` §9).  Version 2: the table manifest names the protocol its
record follows after forming (``Manifest.protocol``), so an offline verifier needs
nothing but the record file."""
HANDSHAKE_VERSION = 3
"""The link protocol a ``Hello`` names.  Version 3: X25519 ephemerals and the genesis
hash in the hello, both hellos signed as sent, every later frame authenticated."""

# ---------------------------------------------------------------------------
# Handshake
# ---------------------------------------------------------------------------

AUTH_DOMAIN = b"slaiga/handshake/v3"


@message("hello")
@dataclass(frozen=True, slots=True)
class Hello(Message):
    """First frame each side sends: who I am, for which table, a fresh nonce, a fresh
    X25519 ephemeral key, and the genesis hash of the record I hold (empty before the
    table is formed), so that peers on two forks of one table refuse each other."""

    version: U32
    table_id: TableId
    identity: Key
    nonce: Nonce
    ephemeral: SealPublicKey
    genesis: Annotated[bytes, OneOf((Bytes(size=0), Bytes(size=HASH_BYTES)))]


@message("auth")
@dataclass(frozen=True, slots=True)
class Auth(Message):
    """Second frame: Ed25519 signature over :func:`auth_transcript` (signer's view)."""

    signature: Signature


def auth_transcript(signer_hello: bytes, peer_hello: bytes) -> bytes:
    """What a handshake signature covers: both hellos' exact body bytes, the signer's first.

    The hellos hold both nonces (this one connection: no replay), the table
    id (no cross-table relay), both identity keys (no relay to a third
    party), both ephemeral keys (the session keys belong to the two signers)
    and both genesis hashes.  The signer's hello comes first, so the two
    sides sign different strings and a signature cannot be reflected back at
    its author.
    """
    for label, value in (("signer_hello", signer_hello), ("peer_hello", peer_hello)):
        if type(value) is not bytes or not 0 < len(value) <= MAX_FRAME_BYTES:
            raise LocalProtocolError(f"auth transcript: {label} must be hello bytes")
    return (
        AUTH_DOMAIN
        + len(signer_hello).to_bytes(4, "big")
        + signer_hello
        + len(peer_hello).to_bytes(4, "big")
        + peer_hello
    )


def session_transcript(listener_hello: bytes, dialer_hello: bytes) -> bytes:
    """The bytes the link keys are salted with (both hellos, listener first)."""
    return auth_transcript(listener_hello, dialer_hello)


# ---------------------------------------------------------------------------
# Lobby: joining a table that is still forming
# ---------------------------------------------------------------------------

REJECT_REASONS = frozenset({"full", "gone", "version", "identity", "busy", "fork", "stranger"})


@struct
@dataclass(frozen=True, slots=True)
class Member(Struct):
    """One seat's public facts, as listed in the lobby and in the manifest."""

    name: Name
    identity: Key
    seal_key: SealPublicKey
    address: Address


@message("join")
@dataclass(frozen=True, slots=True)
class Join(Message):
    """Ask to take a seat (sent after the handshake, which proved ``member.identity``)."""

    member: Annotated[Member, Nested(Member)]


@message("welcome")
@dataclass(frozen=True, slots=True)
class Welcome(Message):
    """Seat granted: the table's facts and who has joined so far (opener first)."""

    game: Name
    options: Options
    seats_total: Annotated[int, UInt(min=1, max=MAX_SEATS)]
    members: Annotated[tuple[Member, ...], Seq(Nested(Member), max_len=MAX_SEATS)]


@message("reject")
@dataclass(frozen=True, slots=True)
class Reject(Message):
    """Seat refused; ``reason`` is one of :data:`REJECT_REASONS`."""

    reason: Annotated[str, Str(choices=REJECT_REASONS)]
    detail: Annotated[str, Str(max_len=MAX_REASON_LEN)]


@message("manifest")
@dataclass(frozen=True, slots=True)
class ManifestOffer(Message):
    """The table is full: here are the exact manifest bytes everyone must sign."""

    manifest: Blob


@message("manifest_sig")
@dataclass(frozen=True, slots=True)
class ManifestSignature(Message):
    """A seat's Ed25519 signature over the exact manifest bytes."""

    table_id: TableId
    seat: Seat
    signature: Signature


@message("genesis")
@dataclass(frozen=True, slots=True)
class Genesis(Message):
    """Step 0 of the record: the manifest bytes and every seat's signature, in seat order."""

    manifest: Blob
    signatures: Annotated[tuple[bytes, ...], Seq(Bytes(size=SIGNATURE_BYTES), max_len=MAX_SEATS)]


@message("watch")
@dataclass(frozen=True, slots=True)
class Watch(Message):
    """A spectator asks a seat to let it follow the table (``p2p/table/watchers.py``): the
    seat answers with the :class:`Genesis` (or a ``Reject``), then serves ``Fetch`` and
    relays every entry it accepts.  A spectator sends nothing else but keepalives."""

    table_id: TableId
    name: Name


# ---------------------------------------------------------------------------
# Keepalive
# ---------------------------------------------------------------------------


@message("ping")
@dataclass(frozen=True, slots=True)
class Ping(Message):
    nonce: U32


@message("pong")
@dataclass(frozen=True, slots=True)
class Pong(Message):
    nonce: U32


# ---------------------------------------------------------------------------
# The record
# ---------------------------------------------------------------------------


@message("entry")
@dataclass(frozen=True, slots=True)
class Entry(Message):
    """One record entry, as signed.  Travels *encoded* inside :class:`SignedEntry`.

    ``prev`` is the hash of the chain position this entry extends (see
    ``p2p.record.chain`` for how concurrent responders share one ``prev``).  The
    entry's *kind* is the tag of its body.
    """

    table_id: TableId
    seat: Seat
    step: Step
    prev: Hash
    body: Annotated[Body, Tagged(Body)]

    @property
    def kind(self) -> str:
        return self.body.TAG


@message("signed")
@dataclass(frozen=True, slots=True)
class Signed(Message):
    """Signed envelope: exact entry bytes plus the sender's Ed25519 signature over them.

    Sent live to the other seats, relayed in :class:`Fetched`, and stored in
    record files.  The ``entry`` bytes are decoded only after the signature
    over them has been checked.
    """

    entry: Blob
    signature: Signature


@message("fetch")
@dataclass(frozen=True, slots=True)
class Fetch(Message):
    """Ask a peer for every entry it holds from ``from_step`` on (resume after a crash)."""

    table_id: TableId
    from_step: Step


@message("fetched")
@dataclass(frozen=True, slots=True)
class Fetched(Message):
    """Reply to :class:`Fetch`: a batch of signed envelopes; ``more`` if another batch follows."""

    table_id: TableId
    entries: Annotated[tuple[Signed, ...], Seq(Tagged(Signed), max_len=MAX_FETCH_ENTRIES)]
    more: Annotated[bool, Bool()]


def fetched_batches(table_id: bytes, entries: Iterable[Signed]) -> list[Fetched]:
    """Split signed envelopes into :class:`Fetched` replies that each fit in one frame."""
    budget = MAX_FRAME_BYTES - 1024  # room for the reply's own framing
    batches: list[Fetched] = []
    cur: list[Signed] = []
    size = 0
    for e in entries:
        n = len(e.entry) + len(e.signature) + 32
        if cur and (size + n > budget or len(cur) == MAX_FETCH_ENTRIES):
            batches.append(cur)  # type: ignore[arg-type]
            cur, size = [], 0
        cur.append(e)
        size += n
    batches.append(cur)  # type: ignore[arg-type]
    return [Fetched(table_id, tuple(b), more=i < len(batches) - 1) for i, b in enumerate(batches)]


# ---------------------------------------------------------------------------
# Private payloads (sealed to one seat with crypto.seal); a record entry body
# ---------------------------------------------------------------------------


@body("sealed")
@dataclass(frozen=True, slots=True)
class Sealed(Body):
    """A payload only ``to_seat`` can open; the ciphertext is bound to table/step/seats."""

    to_seat: Seat
    ciphertext: Blob


# ---------------------------------------------------------------------------
# Ending a table whose player vanished: a signed vote of the seats who remain
# ---------------------------------------------------------------------------


@message("end_vote")
@dataclass(frozen=True, slots=True)
class EndVote(Message):
    """Seat ``seat`` agrees to end the table: ``absent`` owes step ``step`` at ``head`` and
    has vanished.  ``signature`` is the voter's Ed25519 signature over
    ``b"slaiga/v1/end" + table_id + u64(step) + head + u8(absent)`` (``p2p.table.endvote``).
    Relayed like entries; a voter signs no further entry at that table."""

    table_id: TableId
    seat: Seat
    step: Step
    head: Hash
    absent: Seat
    signature: Signature


@message("end_votes")
@dataclass(frozen=True, slots=True)
class EndVotes(Message):
    """The closing frame of a record file ended by vote: every remaining seat's vote,
    by seat (RECORD_FORMAT.md §10)."""

    votes: Annotated[tuple[EndVote, ...], Seq(Tagged(EndVote), max_len=MAX_SEATS)]


# ---------------------------------------------------------------------------
# A player leaves (a bot plays the seat) or comes back: a signed notice
# ---------------------------------------------------------------------------


@message("seat_notice")
@dataclass(frozen=True, slots=True)
class SeatNotice(Message):
    """Seat ``seat`` tells the table that its player left and a bot now plays the seat
    (``back`` false) or that its player is back (``back`` true), as its ``number``-th
    notice (from 0) at this table, signed while the record was at step ``step``.
    ``signature`` is the seat's Ed25519 signature over ``b"slaiga/v1/notice" + table_id +
    u8(seat) + u32(number) + u64(step) + u8(back)`` (``p2p.table.notice``).  Relayed like
    end votes and kept in every record file; it never changes the record's steps."""

    table_id: TableId
    seat: Seat
    number: U32
    step: Step
    back: Annotated[bool, Bool()]
    signature: Signature


# ---------------------------------------------------------------------------
# Off the record: a shuffle proposed ahead (p2p/table/game_rule/shuffle.py)
# ---------------------------------------------------------------------------


@message("shuffle_proposal")
@dataclass(frozen=True, slots=True)
class ShuffleProposal(Message):
    """The sender's shuffle for position ``position`` of shuffle round ``round``, made
    while the deal before it is played: the output pile and its proof, bound to that
    round and position (never to a record step).  Not signed and never evidence: a seat
    signs it into the record at its step if it still fits, else shuffles afresh; a bad
    one is dropped.  Sent to the seats only, over their links."""

    table_id: TableId
    round: U32
    position: Seat
    pile: Blob
    proof: Blob
