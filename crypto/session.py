"""Session keys for one authenticated link, and a MAC on every frame sent over it.

The handshake (``p2p/net/mesh.py``) is SIGMA-style (H. Krawczyk, "SIGMA: the
'SIGn-and-MAc' approach to authenticated Diffie-Hellman", CRYPTO 2003), in the
form TLS 1.3 also uses: each side sends a fresh X25519 ephemeral key in its
hello, and each signs, with its long-term Ed25519 identity, a transcript that
holds both hellos (both identities, both ephemeral keys, both nonces).  The
Diffie-Hellman secret of the two ephemerals is then known to exactly the two
signers, and :func:`link_keys` turns it into one key per direction with
HKDF-SHA256 (RFC 5869), salted with a hash of the transcript.

Every frame after the handshake carries ``HMAC-SHA256(key, u64be(counter) ||
body)`` cut to :data:`TAG_BYTES` bytes (RFC 2104; truncation as in RFC 4868).
The counter starts at 0 in each direction and counts frames, so an injected,
altered, dropped, replayed or reordered frame fails the check.  A link whose
check failed is dropped: its counters can no longer be trusted.
"""

from __future__ import annotations

import hashlib
import hmac

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from crypto.errors import InvalidEncoding, InvalidProof, check_bytes

KEY_BYTES = 32
TAG_BYTES = 16
COUNTER_BYTES = 8
_HKDF_INFO_D2L = b"slaiga/v1/link/dialer-to-listener"
_HKDF_INFO_L2D = b"slaiga/v1/link/listener-to-dialer"
_SALT_DST = b"slaiga/v1/link/transcript"
_MAX_COUNTER = 2**64 - 1


class Ephemeral:
    """A fresh X25519 key for one handshake (never stored, never reused)."""

    __slots__ = ("_key", "public")

    def __init__(self) -> None:
        self._key = X25519PrivateKey.generate()
        self.public: bytes = self._key.public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw
        )

    def shared(self, peer_public: bytes) -> bytes:
        """The Diffie-Hellman secret with ``peer_public``; a small-order key raises."""
        peer_public = check_bytes("peer ephemeral key", peer_public, KEY_BYTES)
        try:
            return self._key.exchange(X25519PublicKey.from_public_bytes(peer_public))
        except ValueError as exc:  # all-zero shared secret
            raise InvalidEncoding("peer ephemeral key has small order") from exc


def link_keys(shared: bytes, transcript: bytes) -> tuple[bytes, bytes]:
    """``(dialer-to-listener key, listener-to-dialer key)`` for a handshake transcript."""
    shared = check_bytes("shared secret", shared, KEY_BYTES)
    salt = hashlib.sha256(_SALT_DST + transcript).digest()
    out = []
    for info in (_HKDF_INFO_D2L, _HKDF_INFO_L2D):
        kdf = HKDF(algorithm=hashes.SHA256(), length=KEY_BYTES, salt=salt, info=info)
        out.append(kdf.derive(shared))
    return out[0], out[1]


class FrameMac:
    """One direction of a link: tags (or checks) frame bodies in order."""

    __slots__ = ("_key", "counter")

    def __init__(self, key: bytes) -> None:
        self._key = check_bytes("link key", key, KEY_BYTES)
        self.counter = 0

    def _next(self, body: bytes) -> bytes:
        if self.counter >= _MAX_COUNTER:
            raise InvalidEncoding("link frame counter exhausted")
        msg = self.counter.to_bytes(COUNTER_BYTES, "big") + body
        self.counter += 1
        return hmac.digest(self._key, msg, "sha256")[:TAG_BYTES]

    def tag(self, body: bytes) -> bytes:
        """The tag of the next frame sent."""
        return self._next(body)

    def check(self, body: bytes, tag: bytes) -> None:
        """Raise :class:`InvalidProof` unless ``tag`` is right for the next frame received."""
        if not hmac.compare_digest(self._next(body), tag):
            raise InvalidProof(f"frame {self.counter - 1} of the link failed authentication")
