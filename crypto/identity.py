"""Long-term Ed25519 identity keys (RFC 8032), via ``cryptography``.

A seat is known by its Ed25519 public key; every message on the wire is signed
over its exact bytes (never a re-encoding).  ``fingerprint`` gives a short,
human-comparable name for a key.
"""

from __future__ import annotations

import hashlib

from cryptography.exceptions import InvalidSignature as _PycaInvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from crypto.errors import InvalidEncoding, InvalidSignature, check_bytes

PUBLIC_KEY_BYTES = 32
PRIVATE_KEY_BYTES = 32
SIGNATURE_BYTES = 64
FINGERPRINT_HEX_CHARS = 16
_FINGERPRINT_DST = b"slaiga/v1/fingerprint"


def fingerprint(public: bytes) -> str:
    """Short hex of SHA-256 over the public key (domain-separated)."""
    public = check_bytes("public key", public, PUBLIC_KEY_BYTES)
    return hashlib.sha256(_FINGERPRINT_DST + public).hexdigest()[:FINGERPRINT_HEX_CHARS]


class IdentityKey:
    """An Ed25519 signing key."""

    __slots__ = ("_key", "public")

    def __init__(self, key: Ed25519PrivateKey) -> None:
        self._key = key
        self.public: bytes = key.public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw
        )

    @classmethod
    def generate(cls) -> IdentityKey:
        return cls(Ed25519PrivateKey.generate())

    @classmethod
    def from_private_bytes(cls, b: bytes) -> IdentityKey:
        """From the 32-byte RFC 8032 seed (explicit randomness for vectors and key files)."""
        b = check_bytes("private key", b, PRIVATE_KEY_BYTES)
        return cls(Ed25519PrivateKey.from_private_bytes(b))

    def private_bytes(self) -> bytes:
        return self._key.private_bytes(
            serialization.Encoding.Raw,
            serialization.PrivateFormat.Raw,
            serialization.NoEncryption(),
        )

    def sign(self, msg: bytes) -> bytes:
        """64-byte Ed25519 signature over the exact bytes ``msg``."""
        if type(msg) is not bytes:
            raise InvalidEncoding("message to sign must be bytes")
        return self._key.sign(msg)

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.public)

    def __repr__(self) -> str:
        return f"IdentityKey({self.fingerprint})"


def verify_signature(public: bytes, msg: bytes, sig: bytes) -> None:
    """Return ``None`` if ``sig`` is a valid signature by ``public`` on ``msg``.

    Raises :class:`InvalidEncoding` for malformed key/signature lengths and
    :class:`InvalidSignature` otherwise.
    """
    public = check_bytes("public key", public, PUBLIC_KEY_BYTES)
    sig = check_bytes("signature", sig, SIGNATURE_BYTES)
    if type(msg) is not bytes:
        raise InvalidEncoding("signed message must be bytes")
    try:
        key = Ed25519PublicKey.from_public_bytes(public)
    except ValueError as exc:
        raise InvalidEncoding("public key is not a valid Ed25519 key") from exc
    try:
        key.verify(sig, msg)
    except _PycaInvalidSignature:
        raise InvalidSignature(f"signature does not verify for key {fingerprint(public)}") from None
