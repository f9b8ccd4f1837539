"""Tests for crypto.identity (Ed25519) and crypto.seal (X25519 + HKDF + ChaCha20-Poly1305)."""

from __future__ import annotations

import nacl.bindings as sodium
import pytest

from crypto.errors import InvalidEncoding, InvalidPoint, InvalidProof, InvalidSignature
from crypto.group import FIELD_P, SMALL_ORDER_ENCODINGS, G, L, add, base_mul
from crypto.identity import IdentityKey, check_identity_key, fingerprint, verify_signature
from crypto.seal import SealKey, _seal_from_parts, open_sealed, seal
from tests.crypto._helpers import SMALL_ORDER

IDENTITY_KEY = bytes([1]) + bytes(31)
UNIVERSAL_FORGERY = bytes([1]) + bytes(31) + bytes(32)
"""``R = 01 00..00`` (the identity), ``S = 0``: valid for every message under the identity key."""


def test_sign_verify():
    k = IdentityKey.generate()
    sig = k.sign(b"hello")
    assert len(sig) == 64 and len(k.public) == 32
    verify_signature(k.public, b"hello", sig)
    with pytest.raises(InvalidSignature):
        verify_signature(k.public, b"hellO", sig)
    for i in range(64):
        bad = bytearray(sig)
        bad[i] ^= 1
        with pytest.raises(InvalidSignature):
            verify_signature(k.public, b"hello", bytes(bad))
    other = IdentityKey.generate()
    with pytest.raises(InvalidSignature):
        verify_signature(other.public, b"hello", sig)


def test_identity_roundtrip_and_fingerprint():
    k = IdentityKey.from_private_bytes(bytes(range(32)))
    k2 = IdentityKey.from_private_bytes(k.private_bytes())
    assert k2.public == k.public
    assert k.fingerprint == fingerprint(k.public) and len(k.fingerprint) == 16
    assert IdentityKey.generate().fingerprint != k.fingerprint


def test_identity_bad_inputs():
    k = IdentityKey.generate()
    with pytest.raises(InvalidEncoding):
        verify_signature(k.public[:31], b"m", k.sign(b"m"))
    with pytest.raises(InvalidEncoding):
        verify_signature(k.public, b"m", k.sign(b"m")[:63])
    with pytest.raises(InvalidEncoding):
        IdentityKey.from_private_bytes(b"\0" * 31)
    with pytest.raises(InvalidEncoding):
        k.sign("text")  # type: ignore[arg-type]
    with pytest.raises(InvalidEncoding):
        fingerprint(b"\0" * 5)


def test_seal_roundtrip_and_binding():
    r = SealKey.generate()
    s = seal(r.public, b"secret token", b"ctx-1")
    assert open_sealed(r, s, b"ctx-1") == b"secret token"
    assert seal(r.public, b"secret token", b"ctx-1") != s  # fresh ephemeral
    with pytest.raises(InvalidProof, match="context"):
        open_sealed(r, s, b"ctx-2")
    with pytest.raises(InvalidProof):
        open_sealed(SealKey.generate(), s, b"ctx-1")
    for i in range(1, len(s)):
        bad = bytearray(s)
        bad[i] ^= 0x40
        with pytest.raises((InvalidProof, InvalidEncoding)):
            open_sealed(r, bytes(bad), b"ctx-1")


def test_seal_explicit_randomness_and_bad_inputs():
    r = SealKey.from_private_bytes(bytes([7]) * 32)
    a = _seal_from_parts(r.public, b"x", b"c", bytes([9]) * 32)
    assert a == _seal_from_parts(r.public, b"x", b"c", bytes([9]) * 32)
    assert open_sealed(r, a, b"c") == b"x"
    assert SealKey.from_private_bytes(r.private_bytes()).public == r.public
    with pytest.raises(InvalidEncoding, match="too short"):
        open_sealed(r, a[:40], b"c")
    with pytest.raises(InvalidEncoding, match="version"):
        open_sealed(r, b"\x02" + a[1:], b"c")
    with pytest.raises(InvalidEncoding, match="small order"):
        seal(bytes(32), b"x", b"c")
    with pytest.raises(InvalidEncoding):
        seal(r.public[:31], b"x", b"c")
    with pytest.raises(InvalidEncoding, match="small order"):
        open_sealed(r, b"\x01" + bytes(32) + a[33:], b"c")


def test_small_order_identity_keys_are_refused_everywhere():
    assert sorted(SMALL_ORDER) == sorted(SMALL_ORDER_ENCODINGS)
    for key in SMALL_ORDER:
        with pytest.raises(InvalidPoint, match="identity key refused"):
            check_identity_key(key)
        for sig in (UNIVERSAL_FORGERY, IdentityKey.generate().sign(b"m")):
            with pytest.raises(InvalidPoint, match="identity key refused"):
                verify_signature(key, b"m", sig)
    # the forgery of the issue: key 01 00..00, R = 01 00..00, S = 0, any message
    for msg in (b"", b"pay seat 3", bytes(1000)):
        with pytest.raises(InvalidEncoding):
            verify_signature(IDENTITY_KEY, msg, UNIVERSAL_FORGERY)


def test_non_canonical_and_mixed_order_identity_keys_are_refused():
    k = IdentityKey.generate()
    sig = k.sign(b"m")
    non_canonical = [(y + FIELD_P).to_bytes(32, "little") for y in (0, 1, 2, 18)]
    non_canonical.append(bytes.fromhex("01" + "00" * 30 + "80"))  # x = 0 with the sign bit
    mixed = add(G, base_mul(5)).data  # a fine key...
    torsioned = sodium.crypto_core_ed25519_add(mixed, SMALL_ORDER[4])  # ...plus torsion
    for key in [*non_canonical, torsioned]:
        with pytest.raises(InvalidPoint):
            verify_signature(key, b"m", sig)
    check_identity_key(k.public)  # an honest key passes


def test_signatures_with_a_small_order_or_non_canonical_r_are_refused():
    k = IdentityKey.generate()
    sig = k.sign(b"m")
    for r in [*SMALL_ORDER, (FIELD_P + 3).to_bytes(32, "little")]:
        with pytest.raises(InvalidSignature, match="R refused"):
            verify_signature(k.public, b"m", r + sig[32:])


def test_a_malleated_s_is_refused():
    """``S + L`` verifies the same equation as ``S``; only the canonical ``S`` is a
    signature (RFC 8032 5.1.7), whichever library checks it (libsodium here)."""
    k = IdentityKey.generate()
    for msg in (b"m", bytes(300)):
        sig = k.sign(msg)
        s = int.from_bytes(sig[32:], "little")
        for big in (s + L, s + 2 * L):
            if big < 2**256:
                with pytest.raises(InvalidSignature):
                    verify_signature(k.public, msg, sig[:32] + big.to_bytes(32, "little"))
        verify_signature(k.public, msg, sig)


def test_repeated_randomness_never_makes_a_two_time_pad():
    """The ephemeral key is hashed from the randomness and the message: the same random
    bytes for two plaintexts give two keys, so XOR of ciphertexts reveals nothing."""
    r = SealKey.generate()
    same = bytes([9]) * 32
    p1, p2 = b"token of seat 1!", b"token of seat 2?"
    a = _seal_from_parts(r.public, p1, b"c", same)
    b = _seal_from_parts(r.public, p2, b"c", same)
    assert a[1:33] != b[1:33]  # different ephemeral keys
    body_a, body_b = a[33 : 33 + len(p1)], b[33 : 33 + len(p2)]
    assert bytes(x ^ y for x, y in zip(body_a, body_b, strict=True)) != bytes(
        x ^ y for x, y in zip(p1, p2, strict=True)
    )
    assert open_sealed(r, a, b"c") == p1 and open_sealed(r, b, b"c") == p2


def test_openable_box_opens_for_its_receiver_and_with_its_one_time_key():
    from crypto.seal import (
        open_openable,
        open_with_shown_key,
        openable_ephemeral,
        openable_key,
        openable_size,
        seal_openable,
        shown_key_public,
    )

    receiver = SealKey.generate()
    secret = bytes(range(64))
    box = seal_openable(receiver.public, b"gift" * 10, b"ctx", secret)
    eph = openable_key(secret, b"ctx")
    assert len(box) == openable_size(40)
    assert openable_ephemeral(box) == shown_key_public(eph)
    assert open_openable(receiver, box, b"ctx") == b"gift" * 10
    assert open_with_shown_key(eph, receiver.public, box, b"ctx") == b"gift" * 10
    # one key per context: boxes for two contexts never share a one-time key
    other = seal_openable(receiver.public, b"gift" * 10, b"ctx2", secret)
    assert openable_ephemeral(other) != openable_ephemeral(box)
    assert openable_key(secret, b"ctx2") != eph
    with pytest.raises(InvalidEncoding):
        openable_key(b"short", b"ctx")
    # two boxes under one one-time key never share a nonce (no two-time pad)
    again = seal_openable(receiver.public, b"gift" * 10, b"ctx", secret)
    assert again[33:45] != box[33:45]
    # tamper each part: version, one-time key, nonce, ciphertext, tag; context; key shown
    for pos in (0, 1, 33, 45, len(box) - 1):
        bad = bytearray(box)
        bad[pos] ^= 0x40
        with pytest.raises((InvalidProof, InvalidEncoding)):
            open_openable(receiver, bytes(bad), b"ctx")
        with pytest.raises((InvalidProof, InvalidEncoding)):
            open_with_shown_key(eph, receiver.public, bytes(bad), b"ctx")
    with pytest.raises(InvalidProof):
        open_with_shown_key(eph, receiver.public, box, b"other")
    with pytest.raises(InvalidProof, match="one-time key"):
        open_with_shown_key(bytes(range(1, 33)), receiver.public, box, b"ctx")
    with pytest.raises(InvalidProof):
        open_openable(SealKey.generate(), box, b"ctx")
    with pytest.raises(InvalidEncoding):
        open_openable(receiver, seal(receiver.public, b"x", b"ctx"), b"ctx")  # not openable


def test_a_key_is_checked_strictly_once_and_a_refused_one_every_time(monkeypatch):
    """A table verifies thousands of signatures by a few keys: the strict key check (on
    the curve, in the subgroup) runs once per key; a refused key is refused every time."""
    import crypto.identity as identity

    calls: list[bytes] = []
    real = identity._key_problem

    def counted(public: bytes):  # type: ignore[no-untyped-def]
        calls.append(public)
        return real(public)

    monkeypatch.setattr(identity, "_key_problem", counted)
    k = IdentityKey.generate()
    for i in range(10):
        msg = b"entry %d" % i
        verify_signature(k.public, msg, k.sign(msg))
    assert calls.count(k.public) <= 1
    small_order = SMALL_ORDER_ENCODINGS[0]
    for _ in range(3):
        with pytest.raises(InvalidEncoding):
            verify_signature(small_order, b"x", bytes(64))
    assert calls.count(small_order) == 3
