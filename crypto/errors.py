"""Exceptions raised by :mod:`crypto`.

One class per kind of failure, so callers can tell a malformed input (the
sender broke the encoding rules) from a well-formed proof that does not verify
(the sender tried to cheat or made a mistake).  Verify functions never return
``False``: they return ``None`` or raise one of these, with a message naming
what failed.  :func:`check_bytes` is the one type-and-length check every
received byte string passes (points, scalars, keys, payloads).
"""

from __future__ import annotations


class CryptoError(Exception):
    """Base class of every error raised by the crypto package."""


class InvalidEncoding(CryptoError, ValueError):
    """Bytes or values with the wrong type, length or range."""


class InvalidPoint(InvalidEncoding):
    """A group element that is not canonical, not on the curve, of small order,
    outside the prime-order subgroup, or the identity."""


class InvalidScalar(InvalidEncoding):
    """A scalar that is not below the group order, or zero where zero is unsafe."""


class InvalidProof(CryptoError):
    """A zero-knowledge proof (or similar check) did not verify."""


class InvalidSignature(CryptoError):
    """An Ed25519 signature did not verify."""


class CommitmentMismatch(InvalidProof):
    """A revealed value does not match its commitment.

    ``seat`` names the seat whose reveal was wrong (``None`` when unknown).
    """

    def __init__(self, message: str, seat: int | None = None) -> None:
        super().__init__(message)
        self.seat = seat


class DeckMismatch(InvalidEncoding):
    """Lists whose sizes must agree (decks, piles, proofs) do not."""


def check_bytes(
    what: str, b: bytes, n: int | None = None, error: type[InvalidEncoding] = InvalidEncoding
) -> bytes:
    """Return ``b`` as ``bytes`` (a bytearray or memoryview is copied) or raise ``error``.

    ``error`` (an :class:`InvalidEncoding` subclass, so callers can say a bad
    point or scalar) names ``what`` and the wrong type or, when ``n`` is given,
    the wrong length.
    """
    if isinstance(b, bytearray | memoryview):
        b = bytes(b)
    if type(b) is not bytes:
        raise error(f"{what} must be bytes, got {type(b).__name__}")
    if n is not None and len(b) != n:
        raise error(f"{what} must be {n} bytes, got {len(b)}")
    return b
