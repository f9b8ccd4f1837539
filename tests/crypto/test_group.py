"""Tests for crypto.group: validation of outside points and scalars, ops, counters."""

from __future__ import annotations

import dataclasses

import nacl.bindings as sodium
import pytest

from crypto.errors import InvalidEncoding, InvalidPoint, InvalidScalar
from crypto.group import (
    COUNTERS,
    FIELD_P,
    IDENTITY_BYTES,
    G,
    L,
    Point,
    add,
    base_mul,
    hash_to_point,
    mul,
    random_scalar,
    scalar_from_bytes,
    scalar_to_bytes,
    sub,
    sum_points,
)
from tests.crypto._helpers import SMALL_ORDER

D = (-121665 * pow(121666, -1, FIELD_P)) % FIELD_P


def _on_curve_y(y: int) -> bool:
    num = (y * y - 1) % FIELD_P
    den = (D * y * y + 1) % FIELD_P
    x2 = num * pow(den, -1, FIELD_P) % FIELD_P
    return x2 == 0 or pow(x2, (FIELD_P - 1) // 2, FIELD_P) == 1


def test_small_order_points_rejected():
    for enc in SMALL_ORDER:
        with pytest.raises(InvalidPoint):
            Point.decode(enc)
    with pytest.raises(InvalidPoint, match="identity"):
        Point.decode(IDENTITY_BYTES)
    with pytest.raises(InvalidPoint, match="small order"):
        Point.decode(SMALL_ORDER[4])


def test_small_order_list_is_really_small_order():
    for enc in SMALL_ORDER[1:]:
        p = enc
        for _ in range(3):
            p = sodium.crypto_core_ed25519_add(p, p)
        assert p == IDENTITY_BYTES


def test_torsion_component_rejected():
    for t in SMALL_ORDER[1:]:
        mixed = sodium.crypto_core_ed25519_add(G.data, t)
        with pytest.raises(InvalidPoint, match="prime-order subgroup"):
            Point.decode(mixed)


def test_non_canonical_rejected():
    # y + p for a small y still fits in 255 bits: non-canonical encoding.
    for y in range(19):
        enc = (y + FIELD_P).to_bytes(32, "little")
        with pytest.raises(InvalidPoint, match="not canonical"):
            Point.decode(enc)
    # identity with the x sign bit set
    with pytest.raises(InvalidPoint, match="not canonical"):
        Point.decode(bytes.fromhex("01" + "00" * 30 + "80"))
    # a valid point with the sign bit flipped is a different valid point or invalid,
    # never equal to the original
    g_flip = bytearray(G.data)
    g_flip[31] ^= 0x80
    assert Point.decode(bytes(g_flip)) != G


def test_not_on_curve_rejected():
    ys = [y for y in range(2, 200) if not _on_curve_y(y)]
    assert ys
    for y in ys[:5]:
        with pytest.raises(InvalidPoint, match="not on the curve"):
            Point.decode(y.to_bytes(32, "little"))


def test_wrong_lengths_and_types():
    for bad in (b"", G.data[:31], G.data + b"\0"):
        with pytest.raises(InvalidPoint, match="32 bytes"):
            Point.decode(bad)
    with pytest.raises(InvalidPoint):
        Point.decode("00" * 32)  # type: ignore[arg-type]
    with pytest.raises(InvalidPoint):
        Point(b"\0" * 31)


def test_identity_is_never_a_point():
    """Not even a hand-built Point can be the identity (never a card, mask, key or token)."""
    with pytest.raises(InvalidPoint, match="identity"):
        Point(IDENTITY_BYTES)
    with pytest.raises(InvalidPoint, match="identity"):
        Point.decode(IDENTITY_BYTES)


def test_the_point_constructor_validates_like_decode():
    """A Point built by hand from outside bytes is never invalid (the constructor used to
    check the length and the identity only)."""
    torsioned = sodium.crypto_core_ed25519_add(G.data, SMALL_ORDER[4])
    not_canonical = (5 + FIELD_P).to_bytes(32, "little")
    for bad in [*SMALL_ORDER, torsioned, not_canonical]:
        with pytest.raises(InvalidPoint):
            Point(bad)
    assert Point(G.data) == G
    with pytest.raises(InvalidPoint):
        dataclasses.replace(G, data=SMALL_ORDER[5])


def test_valid_points_roundtrip():
    for k in (1, 2, 12345, L - 1):
        p = base_mul(k)
        assert Point.decode(p.data) == p
        assert bytes(p) == p.data
    assert Point.decode(bytearray(G.data)) == G


def test_scalars():
    assert scalar_from_bytes(scalar_to_bytes(L - 1)) == L - 1
    assert scalar_from_bytes(b"\0" * 32) == 0
    with pytest.raises(InvalidScalar, match="zero"):
        scalar_from_bytes(b"\0" * 32, nonzero=True)
    for bad in (L, L + 1, 2**256 - 1):
        with pytest.raises(InvalidScalar, match=">= L"):
            scalar_from_bytes(bad.to_bytes(32, "little"))
    for bad in (b"", b"\1" * 31, b"\1" * 33):
        with pytest.raises(InvalidScalar, match="32 bytes"):
            scalar_from_bytes(bad)
    with pytest.raises(InvalidScalar):
        scalar_to_bytes(L)
    with pytest.raises(InvalidScalar):
        scalar_to_bytes(-1)


def test_random_scalar():
    seen = {random_scalar() for _ in range(20)}
    assert len(seen) == 20 and all(0 < k < L for k in seen)
    assert random_scalar(b"\x07" * 64) == int.from_bytes(b"\x07" * 64, "little") % L
    with pytest.raises(InvalidScalar, match="zero"):
        random_scalar(L.to_bytes(64, "little"))
    with pytest.raises(InvalidEncoding):
        random_scalar(b"\0" * 32)


def test_arithmetic():
    a, b = 1234567, 7654321
    assert add(base_mul(a), base_mul(b)) == base_mul(a + b)
    assert sub(base_mul(a), base_mul(b)) == base_mul((a - b) % L)
    assert mul(b, base_mul(a)) == base_mul(a * b % L)
    assert mul(1, G) == G
    assert mul(L - 1, G) == base_mul(L - 1)
    assert sum_points([G, G, G]) == base_mul(3)
    with pytest.raises(InvalidPoint, match="identity"):
        sub(G, G)
    for bad in (0, L, -1):
        with pytest.raises(InvalidScalar):
            mul(bad, G)
        with pytest.raises(InvalidScalar):
            base_mul(bad)
    with pytest.raises(InvalidEncoding):
        sum_points([])


def test_hash_to_point():
    p = hash_to_point(b"test", b"a", b"b")
    assert Point.decode(p.data) == p
    assert p == hash_to_point(b"test", b"a", b"b")
    # length prefixing: moving a byte between parts changes the point
    assert p != hash_to_point(b"test", b"ab", b"")
    assert p != hash_to_point(b"tes", b"ta", b"b")
    assert p != hash_to_point(b"other", b"a", b"b")
    assert len({hash_to_point(b"deck", i.to_bytes(2, "little")) for i in range(100)}) == 100


def test_counters():
    COUNTERS.reset()
    x = base_mul(5)
    y = mul(7, x)
    add(x, y)
    sub(y, x)
    Point.decode(y.data)
    hash_to_point(b"t")
    assert COUNTERS.snapshot() == {
        "mul": 1,
        "base_mul": 1,
        "add": 2,
        "decode": 1,
        "hash_to_point": 1,
    }
    COUNTERS.reset()
    assert set(COUNTERS.snapshot().values()) == {0}
