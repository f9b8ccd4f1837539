"""Tests for crypto.identity (Ed25519) and crypto.seal (X25519 + HKDF + ChaCha20-Poly1305)."""

from __future__ import annotations

import pytest

from crypto.errors import InvalidEncoding, InvalidProof, InvalidSignature
from crypto.identity import IdentityKey, fingerprint, verify_signature
from crypto.seal import SealKey, open_sealed, seal, seal_with


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
    a = seal_with(r.public, b"x", b"c", bytes([9]) * 32)
    assert a == seal_with(r.public, b"x", b"c", bytes([9]) * 32)
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
