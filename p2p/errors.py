"""Every error the p2p layer raises, grouped by who is to blame.

One root, :class:`P2PError`, and three families under it:

* :class:`PeerError`: something that came from (or failed to come from)
  another peer is wrong, and nothing is *proven*: junk bytes on the wire
  (:class:`RemoteProtocolError`), a connection that ended, a handshake that
  did not authenticate, an unusable lobby advertisement, a seat that stayed
  silent.  The peer or the network between us is at fault; no seat is
  convicted.
* :class:`CheatDetected`: a verification failure.  A seat sent *well-formed*,
  validly signed data that breaks the rules of the table.  The error names the
  seat and carries the signed evidence (the exact signed envelope bytes), so
  that any third party can re-check the accusation offline.
* :class:`LocalError`: our side is at fault: a bug in this program (building a
  message that breaks its schema, appending out of turn), a bad command line
  or configuration, an unusable environment (no such interface, zeroconf not
  running), or a damaged file on our own disk.

The split between local and remote protocol errors follows the one h11 makes.
A bad frame or bad message always raises :class:`RemoteProtocolError` and
nothing else, so a connection handler needs exactly one ``except`` clause for
junk.
"""

from __future__ import annotations


class P2PError(Exception):
    """Root of every error the p2p layer raises on purpose."""


class SchemaError(P2PError, ValueError):
    """A value broke a wire field spec (internal to :mod:`p2p.wire`).

    Never escapes the wire layer: encoding turns it into
    :class:`LocalProtocolError` (we built the value) and decoding into
    :class:`RemoteProtocolError` (a peer sent it).
    """


# ---------------------------------------------------------------------------
# A peer is at fault (nothing proven)
# ---------------------------------------------------------------------------


class PeerError(P2PError):
    """Base of failures caused by another peer or the network; no seat is convicted."""


class RemoteProtocolError(PeerError):
    """A peer sent bytes that are not a valid frame or message.

    This is the single error raised for junk on the wire: bad framing,
    oversized frames, invalid msgpack, unknown message types, missing or
    extra fields, wrong field types, oversize values, non-canonical encodings.
    The sender is to blame, but since the bytes are not a signed entry
    nothing can be proven to a third party.
    """


class ForeignEntry(RemoteProtocolError):
    """A signed entry that names another table than ours.

    Identity keys outlive tables, so players who met before hold each other's
    entries from earlier tables.  Such an entry says nothing about this table:
    its signature is never checked against our seats, it is never kept as
    evidence, and its signer is never blamed.  Only the peer that sent it here
    is at fault (an honest peer relays only entries of this table), and that
    cannot be proven to anyone else.
    """

    def __init__(self, table_id: bytes | None, ours: bytes) -> None:
        self.table_id = table_id
        named = table_id.hex()[:16] if table_id is not None else "no readable table"
        super().__init__(f"an entry of another table ({named}), not of {ours.hex()[:16]}")


class BadVote(RemoteProtocolError):
    """A received end vote (``wire.EndVote``) that does not hold: another table, a step or
    head that is not the record's, a signer who is no remaining seat, a signature that does
    not verify, or a seat voted out that does not owe the step.  It is refused and proves
    nothing (a vote convicts no one); the message says which check failed."""


class BadNotice(RemoteProtocolError):
    """A received seat notice (``wire.SeatNotice``: a player left, or is back) that does not
    hold: another table, a seat the table does not have, a signature that does not verify,
    or a second, different notice of one seat under one number.  It is refused and blames
    only the link that carried it; the message says which check failed."""


class InvalidGenesis(RemoteProtocolError):
    """A table manifest or its signatures are malformed or do not verify.

    Raised while forming a table or loading a record; whoever supplied the
    manifest (the opener, or the file) is to blame.
    """


class ConnectionClosed(PeerError):
    """The single error for a connection that ended: EOF, reset, timeout or junk.

    Raised by the mesh's framed streams.  ``peer`` is the peer's identity key
    when known; ``reason`` says what happened; ``remote_error`` is set when the
    peer sent invalid bytes (then the peer is to blame, otherwise the network
    or the peer's going away).
    """

    def __init__(self, reason: str, peer: bytes | None = None, remote_error: bool = False):
        super().__init__(reason)
        self.reason = reason
        self.peer = peer
        self.remote_error = remote_error


class HandshakeFailed(PeerError):
    """The mesh handshake did not authenticate the other side.

    ``kind`` is one of ``wire.REJECT_REASONS`` and ``detail`` says what was
    wrong; the other side (wrong table, wrong key, bad proof) is to blame.
    """

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind = kind
        self.detail = detail


class Rejected(HandshakeFailed):
    """The other side refused us with a ``Reject`` frame (full, gone, version, identity)."""


class InvalidAdvert(PeerError):
    """A lobby TXT record that does not describe a Slaiga table; the message names the field.

    Raised by :mod:`p2p.net.discovery` when parsing or building an advertisement;
    the lobby skips such adverts, so a bad neighbour cannot hide good tables.
    """


class TableAbandoned(PeerError):
    """A seat owed a message and stayed silent past the maximum wait.

    Raised by the node's silence handling; the silent seat is named but not
    convicted (silence proves nothing: it may be the network).
    """

    def __init__(
        self, seat: int, waited: float, name: str | None = None, *, by_vote: bool = False
    ) -> None:
        who = name if name is not None else f"the player in slot {seat}"
        if by_vote:
            text = f"table ended by vote: {who} vanished, and every other player voted to stop"
        else:
            text = f"table abandoned: {who} silent for {waited:.1f}s"
        super().__init__(text)
        self.by_vote = by_vote
        """The players who remain ended it by a signed vote (nobody convicted)."""
        self.seat = seat
        """The silent seat's slot (the record's numbering)."""
        self.waited = waited
        self.name = name
        """The silent player's name (the node adds it)."""
        self.result: object = None
        """The node's ``TableResult`` once the table has ended (``absent`` set)."""


# ---------------------------------------------------------------------------
# A seat provably broke the rules (verification failures)
# ---------------------------------------------------------------------------


class CheatDetected(P2PError):
    """A seat provably broke the table's rules.

    Raised by the record and the table rules when a signed entry fails
    verification.  ``seat`` is the culprit (for a forged signature it is the
    seat the entry *claims* to come from; the relaying connection is then at
    fault, and the caller, which knows the connection, should name it).
    ``evidence`` is a tuple of signed envelope bytes that demonstrate the
    misbehaviour.
    """

    def __init__(
        self,
        seat: int,
        reason: str,
        evidence: tuple[bytes, ...] = (),
        step: int | None = None,
    ) -> None:
        super().__init__(f"seat {seat}: {reason}")
        self.seat = seat
        self.reason = reason
        self.evidence = tuple(evidence)
        self.step = step
        """The record step of the entry that deviated, when it is known and earlier than
        the step where the deviation came to light (a lie shown by a later reveal); the
        record then keeps that seat's entry of that step as the evidence."""


class ForgedSignature(CheatDetected):
    """An entry's signature does not verify under the claimed seat's key."""


class Impersonation(CheatDetected):
    """An entry or handshake claims a seat whose identity key it does not hold."""


class OutOfTurn(CheatDetected):
    """A seat spoke when the ordering rule did not owe a message from it, or sent the wrong kind."""


class Replay(CheatDetected):
    """A validly signed old entry was resent for a different step or chain position."""


class BrokenChain(CheatDetected):
    """An entry's previous-step hash does not match our record."""


class InvalidMove(CheatDetected):
    """An in-turn, well-signed entry whose content breaks the protocol (bad reveal, bad count)."""


class MalformedEntry(CheatDetected):
    """A seat validly signed entry bytes that do not decode as an entry of this protocol.

    Its signature proves who sent the body, so the signer is convicted;
    ``evidence`` is the signed envelope ``(entry bytes, signature)``.
    """


class Equivocation(CheatDetected):
    """Two different validly signed entries from one seat for the same step.

    ``evidence`` holds both signed envelopes.
    """


# ---------------------------------------------------------------------------
# Our side is at fault (a bug, the command line, the environment, our disk)
# ---------------------------------------------------------------------------


class LocalError(P2PError):
    """Base of failures on our side: a bug, bad usage or configuration, the environment, a file."""


class FoldFailed(LocalError):
    """Our own code failed while folding a completed step (a bug on our side, never a
    peer's fault): the record keeps every entry, and the table cannot go on here."""


class LocalProtocolError(LocalError):
    """We tried to do something the protocol forbids (a bug on our side).

    Raised when encoding a message that breaks its schema, or appending to the
    record out of turn or with a key the table does not know.
    """


class NodeError(LocalError):
    """A table could not be opened, joined, formed or resumed; the message says why.

    Raised by :mod:`p2p.net.node` for a bad game, seat count or option, a table
    that is not found or is full, or a record that cannot be resumed; the
    caller (usually the command line) decides how to report it.
    """


class MeshError(LocalError):
    """The mesh was used in a way it does not support (e.g. asked its address before listening)."""


class DiscoveryError(LocalError):
    """Zeroconf cannot serve the lobby: it is not running, does not answer, or fails to start.

    Also raised for using an announcement that was already withdrawn.
    """


class InterfaceError(DiscoveryError):
    """The requested network interface does not exist or has no usable IPv4 address."""


class UnreadableRecord(LocalError):
    """The input cannot be read as a record file at all (missing, unreadable, not one).

    Raised by :mod:`p2p.record.verify`; whoever named the file is to blame.
    """


class CorruptRecordFile(LocalError):
    """A record file is damaged somewhere other than a torn last frame.

    Raised when loading a record file from disk.  A torn last frame (a crash
    mid-write) is repaired silently; anything else is this error.
    """


class NetworkGuardError(LocalError, PermissionError):
    """A socket operation aimed off this machine was refused in loopback-only mode.

    Raised by :mod:`p2p.net.netguard`'s audit hook; the code (or library default)
    that tried to reach a real interface is to blame.  It is a
    ``PermissionError`` so networking code handles it like any other refused
    socket operation.
    """
