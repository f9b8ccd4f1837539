"""Payloads sealed to one receiver: X25519 + HKDF-SHA256 + ChaCha20-Poly1305.

Used for things only one seat may read, such as a private reveal token or a
hand shown to one player.  Ephemeral-static Diffie-Hellman (as in ECIES/HPKE
base mode): the sender makes a one-time X25519 key, derives a one-time AEAD key
with HKDF from the shared secret and both public keys, and encrypts.  The
ephemeral key is hashed from fresh randomness *and* the receiver, context and
plaintext (hedged, like the nonces of crypto/nonces.py), so even a repeated
random value never encrypts two different messages under one AEAD key; so
the all-zero nonce is safe.

The caller's ``context`` (table, game, step, sender, ...) goes into the AEAD
associated data, so a sealed payload cannot be replayed in another place.

Wire format: ``version (1) || ephemeral public key (32) || ciphertext || tag (16)``.

*Openable boxes* (:func:`seal_openable`, version 2) let the sender later prove
what it sealed: the sender picks the one-time X25519 key itself (the caller
derives it from a secret that survives a crash), and may reveal it; anyone
then opens the box exactly as the receiver does (:func:`open_with_ephemeral`),
since both sides compute the same shared secret.  As the sender might have to
re-seal with the same one-time key (two different plaintexts under one AEAD
key), such a box carries a fresh hedged 12-byte nonce:
``version (2) || ephemeral public key (32) || nonce (12) || ciphertext || tag (16)``.
"""

from __future__ import annotations

import functools
import hashlib
import secrets

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from crypto.errors import InvalidEncoding, InvalidPoint, InvalidProof, check_bytes

SEAL_VERSION = 1
OPENABLE_VERSION = 2
KEY_BYTES = 32
NONCE_BYTES = 12
NONCE = bytes(NONCE_BYTES)
TAG_BYTES = 16
HEADER_BYTES = 1 + KEY_BYTES
_HKDF_INFO = b"slaiga/v1/seal/key"
_AD_DST = b"slaiga/v1/seal/ad"
_EPHEMERAL_DST = b"slaiga/v1/seal/ephemeral"
_NONCE_DST = b"slaiga/v1/seal/nonce"


_PROBE_KEY = X25519PrivateKey.from_private_bytes(bytes(range(1, KEY_BYTES + 1)))
"""A fixed private key to test received keys with: any clamped scalar is a multiple of 8,
so its product with a point of small order (on the curve or its twist) is zero."""


@functools.lru_cache(maxsize=4096)
def _seal_key_small(public: bytes) -> bool:
    try:
        _PROBE_KEY.exchange(X25519PublicKey.from_public_bytes(public))
    except ValueError:
        return True
    return False


def check_seal_key(public: bytes) -> bytes:
    """Return ``public`` unless it is not 32 bytes or has small order (raise :class:`InvalidPoint`).

    Sealing to a small-order key gives an all-zero shared secret, so a seat that
    publishes one could make every sender fail; received seal keys are checked
    before they are trusted.
    """
    public = check_bytes("seal key", public, KEY_BYTES, InvalidPoint)
    if _seal_key_small(public):
        raise InvalidPoint("seal key refused: X25519 key of small order")
    return public


def _raw_public(key: X25519PrivateKey) -> bytes:
    return key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


class SealKey:
    """A receiver's static X25519 key."""

    __slots__ = ("_key", "public")

    def __init__(self, key: X25519PrivateKey) -> None:
        self._key = key
        self.public: bytes = _raw_public(key)

    @classmethod
    def generate(cls) -> SealKey:
        return cls(X25519PrivateKey.generate())

    @classmethod
    def from_private_bytes(cls, b: bytes) -> SealKey:
        return cls(X25519PrivateKey.from_private_bytes(check_bytes("seal key", b, KEY_BYTES)))

    def private_bytes(self) -> bytes:
        return self._key.private_bytes(
            serialization.Encoding.Raw,
            serialization.PrivateFormat.Raw,
            serialization.NoEncryption(),
        )


def _aead_key_and_ad(
    secret_key: X25519PrivateKey, peer_public: bytes, eph_pub: bytes, recv_pub: bytes, ctx: bytes
) -> tuple[ChaCha20Poly1305, bytes]:
    try:
        shared = secret_key.exchange(X25519PublicKey.from_public_bytes(peer_public))
    except ValueError as exc:  # all-zero shared secret: small-order public key
        raise InvalidEncoding("X25519 public key has small order") from exc
    okm = HKDF(
        algorithm=hashes.SHA256(),
        length=KEY_BYTES,
        salt=eph_pub + recv_pub,
        info=_HKDF_INFO,
    ).derive(shared)
    ad = _AD_DST + len(ctx).to_bytes(8, "little") + ctx + eph_pub + recv_pub
    return ChaCha20Poly1305(okm), ad


def _ephemeral(
    receiver_public: bytes, plaintext: bytes, context: bytes, randomness: bytes
) -> X25519PrivateKey:
    """The ephemeral key, hedged (crypto/nonces.py): hashed from the randomness, the
    receiver, the context and the plaintext, so a repeated random value (or test seed)
    repeats the key only for the very same message, never a two-time pad."""
    h = hashlib.sha512(_EPHEMERAL_DST)
    for part in (randomness, receiver_public, context, plaintext):
        h.update(len(part).to_bytes(8, "little") + part)
    return X25519PrivateKey.from_private_bytes(h.digest()[:KEY_BYTES])


def _seal_from_parts(
    receiver_public: bytes, plaintext: bytes, context: bytes, randomness: bytes
) -> bytes:
    """:func:`seal` with explicit randomness (private: for pinned test vectors only)."""
    receiver_public = check_bytes("receiver public key", receiver_public, KEY_BYTES)
    plaintext = check_bytes("plaintext", plaintext)
    context = check_bytes("context", context)
    randomness = check_bytes("randomness", randomness, KEY_BYTES)
    eph = _ephemeral(receiver_public, plaintext, context, randomness)
    eph_pub = _raw_public(eph)
    aead, ad = _aead_key_and_ad(eph, receiver_public, eph_pub, receiver_public, context)
    return bytes([SEAL_VERSION]) + eph_pub + aead.encrypt(NONCE, plaintext, ad)


def seal(receiver_public: bytes, plaintext: bytes, context: bytes) -> bytes:
    """Encrypt ``plaintext`` so only the holder of ``receiver_public`` can read it."""
    return _seal_from_parts(receiver_public, plaintext, context, secrets.token_bytes(KEY_BYTES))


def open_sealed(key: SealKey, sealed: bytes, context: bytes) -> bytes:
    """Decrypt a sealed payload; raise :class:`InvalidProof` if it does not authenticate.

    Authentication fails for a wrong receiver, a wrong ``context`` or any
    modified byte.  Malformed input raises :class:`InvalidEncoding`.
    """
    sealed = check_bytes("sealed payload", sealed)
    context = check_bytes("context", context)
    if len(sealed) < HEADER_BYTES + TAG_BYTES:
        raise InvalidEncoding("sealed payload too short")
    if sealed[0] != SEAL_VERSION:
        raise InvalidEncoding(f"unknown seal version {sealed[0]}")
    eph_pub = sealed[1:HEADER_BYTES]
    aead, ad = _aead_key_and_ad(key._key, eph_pub, eph_pub, key.public, context)
    try:
        return aead.decrypt(NONCE, sealed[HEADER_BYTES:], ad)
    except InvalidTag:
        raise InvalidProof(
            "sealed payload failed authentication (wrong receiver, context or data)"
        ) from None


# ---------------------------------------------------------------- openable boxes


_OPENABLE_KEY_DST = b"slaiga/seal/openable-key/v1"


def openable_key(secret: bytes, context: bytes) -> bytes:
    """The one-time private key of the openable box sealed for ``context``, derived from
    the sender's ``secret`` (at least 32 bytes).  One key per context, so no two boxes
    share a key; the sender derives it again after a crash, and may show it."""
    secret = check_bytes("secret", secret)
    if len(secret) < KEY_BYTES:
        raise InvalidEncoding(f"an openable box's secret must be at least {KEY_BYTES} bytes")
    context = check_bytes("context", context)
    h = hashlib.sha512(_OPENABLE_KEY_DST)
    for part in (secret, context):
        h.update(len(part).to_bytes(8, "little") + part)
    return h.digest()[:KEY_BYTES]


def shown_key_public(shown_key: bytes) -> bytes:
    """The X25519 public key of a shown one-time private key (32 bytes)."""
    shown_key = check_bytes("shown key", shown_key, KEY_BYTES)
    return _raw_public(X25519PrivateKey.from_private_bytes(shown_key))


def openable_size(plaintext_bytes: int) -> int:
    """Bytes of an openable box of a ``plaintext_bytes`` plaintext."""
    return 1 + KEY_BYTES + NONCE_BYTES + plaintext_bytes + TAG_BYTES


def seal_openable(receiver_public: bytes, plaintext: bytes, context: bytes, secret: bytes) -> bytes:
    """Seal like :func:`seal`, under the one-time key :func:`openable_key` derives from
    ``secret`` for this ``context``, which the sender may later show so that anyone can
    open the box."""
    return _seal_with_key(receiver_public, plaintext, context, openable_key(secret, context))


def _seal_with_key(receiver_public: bytes, plaintext: bytes, context: bytes, key: bytes) -> bytes:
    receiver_public = check_bytes("receiver public key", receiver_public, KEY_BYTES)
    plaintext = check_bytes("plaintext", plaintext)
    context = check_bytes("context", context)
    eph = X25519PrivateKey.from_private_bytes(check_bytes("one-time key", key, KEY_BYTES))
    eph_pub = _raw_public(eph)
    h = hashlib.sha512(_NONCE_DST)
    for part in (secrets.token_bytes(KEY_BYTES), context, plaintext):
        h.update(len(part).to_bytes(8, "little") + part)
    nonce = h.digest()[:NONCE_BYTES]
    aead, ad = _aead_key_and_ad(eph, receiver_public, eph_pub, receiver_public, context)
    return bytes([OPENABLE_VERSION]) + eph_pub + nonce + aead.encrypt(nonce, plaintext, ad)


def _openable_parts(sealed: bytes) -> tuple[bytes, bytes, bytes]:
    sealed = check_bytes("sealed payload", sealed)
    if len(sealed) < openable_size(0):
        raise InvalidEncoding("sealed payload too short")
    if sealed[0] != OPENABLE_VERSION:
        raise InvalidEncoding(f"expected an openable box (version 2), got version {sealed[0]}")
    pos = 1 + KEY_BYTES
    return sealed[1:pos], sealed[pos : pos + NONCE_BYTES], sealed[pos + NONCE_BYTES :]


def openable_ephemeral(sealed: bytes) -> bytes:
    """The one-time public key an openable box names."""
    return _openable_parts(sealed)[0]


def _decrypt(aead: ChaCha20Poly1305, nonce: bytes, body: bytes, ad: bytes) -> bytes:
    try:
        return aead.decrypt(nonce, body, ad)
    except InvalidTag:
        raise InvalidProof(
            "sealed payload failed authentication (wrong receiver, context or data)"
        ) from None


def open_openable(key: SealKey, sealed: bytes, context: bytes) -> bytes:
    """The receiver opens an openable box (as :func:`open_sealed`)."""
    context = check_bytes("context", context)
    eph_pub, nonce, body = _openable_parts(sealed)
    aead, ad = _aead_key_and_ad(key._key, eph_pub, eph_pub, key.public, context)
    return _decrypt(aead, nonce, body, ad)


def open_with_shown_key(
    shown_key: bytes, receiver_public: bytes, sealed: bytes, context: bytes
) -> bytes:
    """Anyone opens an openable box with its revealed one-time key: the very bytes its
    receiver reads.  Raise :class:`InvalidProof` if the key is not the box's or the box
    does not authenticate, :class:`InvalidEncoding` if it is malformed."""
    receiver_public = check_seal_key(receiver_public)
    context = check_bytes("context", context)
    eph_pub, nonce, body = _openable_parts(sealed)
    if shown_key_public(shown_key) != eph_pub:
        raise InvalidProof("the revealed one-time key is not the one the box names")
    eph = X25519PrivateKey.from_private_bytes(shown_key)
    aead, ad = _aead_key_and_ad(eph, receiver_public, eph_pub, receiver_public, context)
    return _decrypt(aead, nonce, body, ad)
