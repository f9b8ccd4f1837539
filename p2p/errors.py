"""Errors of the p2p layer, each one saying who is at fault.

Modelled on the split h11 uses: a base :class:`ProtocolError`, with
:class:`LocalProtocolError` when *we* tried to do something invalid (build a
message that breaks its schema, append out of turn) and
:class:`RemoteProtocolError` when bytes from a peer are malformed.  A bad frame
or bad message always raises :class:`RemoteProtocolError` and nothing else, so
a connection handler needs exactly one ``except`` clause for junk.

A peer that sends *well-formed* data that breaks the rules of the table in a
way that can be pinned on a seat raises :class:`CheatDetected`.  It names the
seat and carries the signed evidence (the exact signed envelope bytes), so
that any third party can re-check the accusation offline.
"""

from __future__ import annotations


class ProtocolError(Exception):
    """Base of every p2p protocol error."""


class LocalProtocolError(ProtocolError):
    """We tried to do something the protocol forbids (a bug on our side)."""


class RemoteProtocolError(ProtocolError):
    """A peer sent bytes that are not a valid frame or message.

    This is the single error raised for junk on the wire: bad framing,
    oversized frames, invalid msgpack, unknown message types, missing or
    extra fields, wrong field types, oversize values, non-canonical encodings.
    """


class CheatDetected(ProtocolError):
    """A seat provably broke the table's rules.

    ``seat`` is the culprit (for a forged signature it is the seat the entry
    *claims* to come from; the relaying connection is then at fault, and the
    caller, which knows the connection, should name it).  ``evidence`` is a
    tuple of signed envelope bytes that demonstrate the misbehaviour.
    """

    def __init__(self, seat: int, reason: str, evidence: tuple[bytes, ...] = ()) -> None:
        super().__init__(f"seat {seat}: {reason}")
        self.seat = seat
        self.reason = reason
        self.evidence = tuple(evidence)


class ForgedSignature(CheatDetected):
    """An entry's signature does not verify under the claimed seat's key."""


class WrongTable(CheatDetected):
    """An entry names another table id than ours (cross-table replay)."""


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


class InvalidGenesis(RemoteProtocolError):
    """A table manifest or its signatures are malformed or do not verify."""


class CorruptRecordFile(ProtocolError):
    """A record file is damaged somewhere other than a torn last frame."""


class TableAbandoned(ProtocolError):
    """A seat owed a message and stayed silent past the maximum wait."""

    def __init__(self, seat: int, waited: float) -> None:
        super().__init__(f"table abandoned: seat {seat} silent for {waited:.1f}s")
        self.seat = seat
        self.waited = waited
