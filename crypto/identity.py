"""Long-term Ed25519 identity keys (RFC 8032), via ``cryptography``.

A seat is known by its Ed25519 public key; every message on the wire is signed
over its exact bytes (never a re-encoding).  ``fingerprint`` gives a short,
human-comparable name for a key.

**Strict keys.**  RFC 8032 verification as OpenSSL implements it accepts any
key that decodes, including the eight points of small order.  With the key
``01 00..00`` (the identity) the signature ``R = 01 00..00, S = 0`` verifies
for *every* message, and other small-order keys admit similar universal
forgeries.  So a received identity key must be a canonical encoding of a
point in the prime-order subgroup (:func:`check_identity_key`, the full
validation of :meth:`crypto.group.Point.decode`), and :func:`verify_signature`
enforces this itself, together with a canonical ``R`` not of small order
(Chalkias, Garillot and Nikolaenko, "Taming the many EdDSAs", SSR 2020).

**Checking a signature** is libsodium's ``crypto_sign_open`` (PyNaCl), not OpenSSL's:
on the same strict key and ``R`` both decide every signature alike (a canonical ``S``,
the cofactorless equation, ``R`` compared as bytes; libsodium also refuses a
small-order ``R`` or key itself), and libsodium takes about half the time here (57 us
against 115 us on this project's 2-core test machine).  Every peer checks every other
seat's entry, so this is most of what accepting an entry costs (issue 19).
"""

from __future__ import annotations

import functools
import hashlib

import nacl.bindings as _sodium
import nacl.exceptions as _nacl_exc
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from crypto import memo
from crypto.errors import InvalidEncoding, InvalidPoint, InvalidSignature, check_bytes
from crypto.group import Point, weak_encoding

PUBLIC_KEY_BYTES = 32
PRIVATE_KEY_BYTES = 32
SIGNATURE_BYTES = 64
FINGERPRINT_HEX_CHARS = 16
_FINGERPRINT_DST = b"slaiga/v1/fingerprint"
_KEY_CACHE = 4096
"""Distinct keys whose validation result is remembered (a table has at most 16)."""


def fingerprint(public: bytes) -> str:
    """Short hex of SHA-256 over the public key (domain-separated)."""
    public = check_bytes("public key", public, PUBLIC_KEY_BYTES)
    return hashlib.sha256(_FINGERPRINT_DST + public).hexdigest()[:FINGERPRINT_HEX_CHARS]


@functools.lru_cache(maxsize=_KEY_CACHE)
def _key_problem(public: bytes) -> str | None:
    try:
        Point.decode(public)
    except InvalidPoint as exc:
        return str(exc)
    return None


def check_identity_key(public: bytes) -> bytes:
    """Return ``public`` if it is a strict Ed25519 public key, else raise :class:`InvalidPoint`.

    Strict: 32 bytes, canonical, on the curve, in the prime-order subgroup,
    so never one of the eight small-order points (which allow universal
    forgeries, see the module docstring).  Every key received from a peer
    (handshake, join, manifest) passes here before it is trusted.
    """
    public = check_bytes("public key", public, PUBLIC_KEY_BYTES, InvalidPoint)
    problem = _key_problem(public)
    if problem is not None:
        raise InvalidPoint(f"identity key refused: {problem}")
    return public


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


_STRICT_KEYS: dict[bytes, Ed25519PublicKey] = {}
_STRICT_KEYS_MAX = 256
"""Keys that passed :func:`check_identity_key`, parsed (a table checks the same few keys
thousands of times; a key that fails is never kept)."""


def _strict_key(public: bytes) -> Ed25519PublicKey:
    if type(public) is bytes:
        key = _STRICT_KEYS.get(public)
        if key is not None:
            return key
    public = check_identity_key(public)
    try:
        key = Ed25519PublicKey.from_public_bytes(public)
    except ValueError as exc:
        raise InvalidEncoding("public key is not a valid Ed25519 key") from exc
    if len(_STRICT_KEYS) >= _STRICT_KEYS_MAX:
        _STRICT_KEYS.clear()
    _STRICT_KEYS[public] = key
    return key


def verify_signature(public: bytes, msg: bytes, sig: bytes) -> None:
    """Return ``None`` if ``sig`` is a valid signature by ``public`` on ``msg``.

    Raises :class:`InvalidEncoding` for malformed key/signature lengths,
    :class:`InvalidPoint` (an :class:`InvalidEncoding`) for a key that is not
    strict (:func:`check_identity_key`), and :class:`InvalidSignature`
    otherwise, including for an ``R`` that is non-canonical or of small order.
    """
    _strict_key(public)  # a strict key (checked once per key, then remembered)
    sig = check_bytes("signature", sig, SIGNATURE_BYTES)
    if type(msg) is not bytes:
        raise InvalidEncoding("signed message must be bytes")
    memory = memo.current()
    key = (bytes(public), hashlib.sha512(msg).digest(), sig) if memory is not None else None
    if memory is not None and key in memory.signatures:
        return  # verified before in this scope (crypto.memo)
    weak_r = weak_encoding(sig[:32])
    if weak_r is not None:
        raise InvalidSignature(f"signature R refused: {weak_r}")
    try:
        _sodium.crypto_sign_open(sig + msg, public)
    except _nacl_exc.BadSignatureError:
        raise InvalidSignature(f"signature does not verify for key {fingerprint(public)}") from None
    if memory is not None:
        memory.keep(memory.signatures, key)
