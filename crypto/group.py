"""The prime-order subgroup of edwards25519, through libsodium (PyNaCl bindings).

Every protocol in :mod:`crypto` works in the subgroup of prime order
``L = 2**252 + 27742317777372353535851937790883648493`` of the twisted Edwards
curve edwards25519.  Operations come from libsodium:

* ``crypto_scalarmult_ed25519_noclamp`` / ``..._base_noclamp`` -- scalar
  multiplication *without clamping*.  Clamping would silently change the
  scalar (clear low bits, set bit 254) and break the algebra of ElGamal and of
  every Sigma protocol, so it is never used.
* ``crypto_core_ed25519_add`` / ``sub`` -- point addition.  These do *not*
  validate their inputs beyond decoding, so every point that comes from outside
  goes through :meth:`Point.decode` first.
* ``crypto_core_ed25519_from_uniform`` -- Elligator 2 map followed by cofactor
  clearing, used by :func:`hash_to_point`.
* ``crypto_core_ed25519_is_valid_point`` -- rejects non-canonical encodings,
  points off the curve, the small-order points and points with a torsion
  component (it multiplies by ``L`` and compares with the identity).

Scalars are plain Python ``int`` in ``[0, L)``; arithmetic on them is done with
``%  L`` in Python, which costs nanoseconds next to a scalar multiplication.

Points produced internally from valid points (sums, multiples, hashes) are
trusted and not re-validated: the subgroup is closed under these operations.
The one exception is the identity, which is never a valid card, mask or key; an
operation whose result is the identity raises :class:`InvalidPoint`.

``COUNTERS`` counts variable-base multiplications, base multiplications,
additions (including subtractions), full point decodings and hash-to-group
calls, so tests can assert operation counts and benchmarks can compute
op-count lower bounds.  Measured unit costs on the development machine:
mul ~ 95 us, base_mul ~ 18 us, add ~ 14 us (libsodium decompresses both
inputs), decode ~ 44 us, hash_to_point ~ 60 us.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable
from dataclasses import dataclass

import nacl.bindings as _sodium
import nacl.exceptions as _nacl_exc

from crypto import memo
from crypto.errors import InvalidEncoding, InvalidPoint, InvalidScalar, check_bytes

L = 2**252 + 27742317777372353535851937790883648493
"""Order of the prime-order subgroup of edwards25519."""

FIELD_P = 2**255 - 19
"""The prime of the base field."""

POINT_BYTES = 32
SCALAR_BYTES = 32
WIDE_SCALAR_BYTES = 64
"""Random scalars are drawn as 64 bytes and reduced mod L (bias < 2**-250)."""

_Y_MASK = (1 << 255) - 1
_SIGN_BIT = 1 << 255
IDENTITY_BYTES = (1).to_bytes(POINT_BYTES, "little")
_HASH_TO_POINT_DST = b"slaiga/v1/hash-to-point"

SMALL_ORDER_ENCODINGS = tuple(
    bytes.fromhex(h)
    for h in (
        "0100000000000000000000000000000000000000000000000000000000000000",  # order 1
        "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",  # order 2
        "0000000000000000000000000000000000000000000000000000000000000000",  # order 4
        "0000000000000000000000000000000000000000000000000000000000000080",  # order 4
        "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",  # order 8
        "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85",  # order 8
        "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",  # order 8
        "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa",  # order 8
    )
)
"""The canonical encodings of the eight points of small order (the torsion subgroup)."""


class OpCounters:
    """Counts of group operations since the last :meth:`reset`.

    ``add`` counts additions and subtractions; ``decode`` counts full
    validations of outside points; ``hash_to_point`` counts hash-to-group calls
    (each of which internally costs two Elligator maps and one addition, not
    counted again under ``add``).
    """

    __slots__ = ("mul", "base_mul", "add", "decode", "hash_to_point")

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.mul = 0
        self.base_mul = 0
        self.add = 0
        self.decode = 0
        self.hash_to_point = 0

    def snapshot(self) -> dict[str, int]:
        return {name: getattr(self, name) for name in self.__slots__}

    def __repr__(self) -> str:
        return f"OpCounters({self.snapshot()})"


COUNTERS = OpCounters()


def _y_and_sign(data: bytes) -> tuple[int, int]:
    n = int.from_bytes(data, "little")
    return n & _Y_MASK, n >> 255


_SMALL_ORDER_Y = frozenset(_y_and_sign(e)[0] for e in SMALL_ORDER_ENCODINGS)


def weak_encoding(b: bytes) -> str | None:
    """Why the 32-byte encoding ``b`` is non-canonical (``y >= p``) or encodes a point of
    small order (its ``y`` is one of theirs), or ``None``.

    It compares integers only, no curve arithmetic, so it is cheap enough for
    every signature's ``R``; a full check is :meth:`Point.decode`.
    """
    y, _ = _y_and_sign(b)
    if y >= FIELD_P:
        return "encoding is not canonical (y >= p)"
    if y in _SMALL_ORDER_Y:
        return "point has small order"
    return None


@dataclass(frozen=True, slots=True)
class Point:
    """An element of the prime-order subgroup, held as its 32-byte canonical encoding.

    The constructor validates fully (the same checks as :meth:`decode`), so a
    ``Point`` built by hand from outside bytes is always a valid subgroup
    element.  Results of group operations on valid points are wrapped without
    re-validation by the private :meth:`_trusted` (the subgroup is closed under
    them); only the identity is checked there.
    """

    data: bytes

    def __post_init__(self) -> None:
        data = check_bytes("point", self.data, POINT_BYTES, InvalidPoint)
        if not _sodium.crypto_core_ed25519_is_valid_point(data):
            raise InvalidPoint(_diagnose_invalid(data))
        object.__setattr__(self, "data", data)

    @classmethod
    def decode(cls, b: bytes) -> Point:
        """Validate an encoding received from outside; raise :class:`InvalidPoint`.

        Checks, in order, with a specific message for each: type and length,
        canonical y (< p), canonical sign (x = 0 must have sign bit 0), not the
        identity, on the curve, not of small order, no torsion component
        (i.e. in the subgroup of order L).
        """
        b = check_bytes("point", b, POINT_BYTES, InvalidPoint)
        memory = memo.current()
        if memory is not None and b in memory.points:
            return cls._trusted(b)  # found valid before in this scope (crypto.memo)
        COUNTERS.decode += 1
        if _sodium.crypto_core_ed25519_is_valid_point(b):
            if memory is not None:
                memory.keep(memory.points, b)
            return cls._trusted(b)
        raise InvalidPoint(_diagnose_invalid(b))

    @classmethod
    def _trusted(cls, data: bytes) -> Point:
        """Wrap the output of a group operation on valid points (never outside bytes)."""
        if data == IDENTITY_BYTES:
            raise InvalidPoint("operation produced the identity")
        p = object.__new__(cls)
        object.__setattr__(p, "data", data)
        return p

    def __bytes__(self) -> bytes:
        return self.data

    def __repr__(self) -> str:
        return f"Point({self.data.hex()[:16]}...)"


def _diagnose_invalid(b: bytes) -> str:
    """Say precisely why libsodium rejected ``b`` (only on the error path)."""
    y, sign = _y_and_sign(b)
    if y >= FIELD_P:
        return "point encoding is not canonical (y >= p)"
    if y == 1 and sign == 0:
        return "point is the identity"
    if y in (1, FIELD_P - 1) and sign == 1:
        return "point encoding is not canonical (x = 0 with sign bit set)"
    try:
        p2 = _sodium.crypto_core_ed25519_add(b, b)
        p4 = _sodium.crypto_core_ed25519_add(p2, p2)
        p8 = _sodium.crypto_core_ed25519_add(p4, p4)
    except _nacl_exc.CryptoError:
        return "point is not on the curve"
    if y == 1 or p8 == IDENTITY_BYTES:
        return "point has small order"
    return "point is not in the prime-order subgroup (has a torsion component)"


def _point_bytes(data: bytes) -> Point:
    """Wrap a result of an internal operation; the identity is rejected."""
    return Point._trusted(data)


G = Point._trusted(
    _sodium.crypto_scalarmult_ed25519_base_noclamp((1).to_bytes(SCALAR_BYTES, "little"))
)
"""The standard edwards25519 base point (generator of the subgroup of order L)."""


def scalar_from_bytes(b: bytes, *, nonzero: bool = False) -> int:
    """Decode a 32-byte little-endian scalar; it must be < L (and != 0 if ``nonzero``)."""
    b = check_bytes("scalar", b, SCALAR_BYTES, InvalidScalar)
    k = int.from_bytes(b, "little")
    if k >= L:
        raise InvalidScalar("scalar is not reduced (>= L)")
    if nonzero and k == 0:
        raise InvalidScalar("scalar is zero")
    return k


def scalar_to_bytes(k: int) -> bytes:
    """Encode a scalar in ``[0, L)`` as 32 bytes little-endian."""
    check_scalar(k)
    return k.to_bytes(SCALAR_BYTES, "little")


def check_scalar(k: int, *, nonzero: bool = False, what: str = "scalar") -> int:
    """Raise :class:`InvalidScalar` unless ``k`` is an int in range; return it."""
    if type(k) is not int:
        raise InvalidScalar(f"{what} must be int, got {type(k).__name__}")
    if not 0 <= k < L:
        raise InvalidScalar(f"{what} out of range [0, L)")
    if nonzero and k == 0:
        raise InvalidScalar(f"{what} is zero")
    return k


def random_scalar(rng_bytes: bytes | None = None) -> int:
    """A uniform non-zero scalar: 64 bytes (from ``secrets`` unless given) reduced mod L.

    With explicit ``rng_bytes`` (exactly 64 bytes, for pinned test vectors) a
    result of zero raises :class:`InvalidScalar` instead of retrying.
    """
    if rng_bytes is None:
        while True:
            k = int.from_bytes(secrets.token_bytes(WIDE_SCALAR_BYTES), "little") % L
            if k:
                return k
    if type(rng_bytes) is not bytes or len(rng_bytes) != WIDE_SCALAR_BYTES:
        raise InvalidEncoding(f"randomness must be {WIDE_SCALAR_BYTES} bytes")
    k = int.from_bytes(rng_bytes, "little") % L
    if k == 0:
        raise InvalidScalar("random scalar reduced to zero")
    return k


def mul(k: int, p: Point) -> Point:
    """``k * p`` for ``k`` in ``[1, L)``; one variable-base multiplication (none when a
    :func:`crypto.memo.remembering` scope already has this product)."""
    if type(k) is not int or not 0 < k < L:
        raise InvalidScalar("multiplier must be an int in [1, L)")
    memory = memo.current()
    if memory is not None:
        known = memory.products.get((k, p.data))
        if known is not None:
            return known
    COUNTERS.mul += 1
    try:
        product = Point._trusted(
            _sodium.crypto_scalarmult_ed25519_noclamp(k.to_bytes(32, "little"), p.data)
        )
    except _nacl_exc.CryptoError as exc:
        raise InvalidPoint("scalar multiplication failed (invalid input point)") from exc
    if memory is not None:
        memory.keep(memory.products, (k, p.data), product)
    return product


def base_mul(k: int) -> Point:
    """``k * G`` for ``k`` in ``[1, L)``; one fixed-base multiplication (none when a
    :func:`crypto.memo.remembering` scope already has it)."""
    if type(k) is not int or not 0 < k < L:
        raise InvalidScalar("multiplier must be an int in [1, L)")
    memory = memo.current()
    if memory is not None:
        known = memory.products.get((k, None))
        if known is not None:
            return known
    COUNTERS.base_mul += 1
    product = Point._trusted(
        _sodium.crypto_scalarmult_ed25519_base_noclamp(k.to_bytes(32, "little"))
    )
    if memory is not None:
        memory.keep(memory.products, (k, None), product)
    return product


def add(p: Point, q: Point) -> Point:
    """``p + q``; raises :class:`InvalidPoint` if the sum is the identity."""
    COUNTERS.add += 1
    return _point_bytes(_sodium.crypto_core_ed25519_add(p.data, q.data))


def sub(p: Point, q: Point) -> Point:
    """``p - q``; raises :class:`InvalidPoint` if the difference is the identity."""
    COUNTERS.add += 1
    return _point_bytes(_sodium.crypto_core_ed25519_sub(p.data, q.data))


def sum_points(points: Iterable[Point]) -> Point:
    """Sum of a non-empty sequence of points (n - 1 additions)."""
    it = iter(points)
    try:
        acc = next(it)
    except StopIteration:
        raise InvalidEncoding("sum of no points") from None
    for p in it:
        acc = add(acc, p)
    return acc


def _length_prefixed(parts: Iterable[bytes]) -> bytes:
    out = bytearray()
    for part in parts:
        if type(part) is not bytes:
            raise InvalidEncoding("hash_to_point parts must be bytes")
        out += len(part).to_bytes(8, "little")
        out += part
    return bytes(out)


def hash_to_point(domain: bytes, *parts: bytes) -> Point:
    """Hash to a subgroup element with unknown discrete log to every other one.

    SHA-512 over a length-prefixed, domain-separated encoding; the two 32-byte
    halves are each mapped with Elligator 2 (``from_uniform``, which also
    clears the cofactor) and the images are added.  Summing two maps makes the
    output distribution statistically close to uniform, unlike a single map.
    Generators are never formed as ``x * G``, so nobody knows a relation
    between them.
    """
    digest = hashlib.sha512(_length_prefixed((_HASH_TO_POINT_DST, domain, *parts))).digest()
    COUNTERS.hash_to_point += 1
    u0 = _sodium.crypto_core_ed25519_from_uniform(digest[:32])
    u1 = _sodium.crypto_core_ed25519_from_uniform(digest[32:])
    return _point_bytes(_sodium.crypto_core_ed25519_add(u0, u1))
