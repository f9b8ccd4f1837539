"""Secret scalars for provers (nonces, re-randomisers, permutations), hedged against bad
or repeated randomness.

A Sigma-protocol nonce used twice gives the secret away: from two responses
``s = w + c x`` and ``s' = w + c' x`` anyone computes ``x = (s - s')/(c - c')``.
Shuffle re-randomisers used twice link cards across shuffles, and a shuffle
prover's nonces used twice reveal its permutation.  So a prover must never
draw the same scalars for two different statements, even when its random
source is broken or a caller passes the same seed twice.

Every :class:`NonceStream` is keyed by SHA-512 over a domain tag, a label
naming the purpose, the *public* statement the scalars serve (for a proof:
the Fiat-Shamir transcript so far, which holds the context, i.e. table,
game, step and seat), the prover's *secret* witness, and 32 bytes of fresh
randomness from :mod:`secrets`.  This is the hedged construction of Bellare
and Tackmann, "Nonce-based cryptography: retaining security when randomness
fails" (EUROCRYPT 2016), the same idea as deterministic nonces (RFC 6979,
RFC 8032 section 5.1.6) with fresh randomness added, as in Merlin's
transcript RNG.  A repeated random value, or a repeated test seed, repeats
the scalars only for the very same secret and statement, where it repeats
the whole proof and reveals nothing new.

Tests that pin outputs (vectors, replayed games) pass ``insecure_test_seed``,
which takes the place of the fresh randomness; the name says where it
belongs.  Scalars are block ``j`` = SHA-512(key || u64le(j)) reduced mod L
(bias < 2**-250), skipping zero; :meth:`NonceStream.below` uses rejection
sampling, never a biased modulo.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable

from crypto.errors import InvalidEncoding, InvalidScalar
from crypto.group import WIDE_SCALAR_BYTES, L

_DST = b"slaiga/v1/nonces"
_TEST_SEED_DST = b"slaiga/v1/nonces/insecure-test-seed"
ENTROPY_BYTES = 32
_LEN_BYTES = 8
_MAX_BELOW_BYTES = WIDE_SCALAR_BYTES - 8


def _lp(data: bytes) -> bytes:
    return len(data).to_bytes(_LEN_BYTES, "little") + data


def _parts(what: str, parts: Iterable[bytes]) -> bytes:
    out = bytearray()
    count = 0
    for part in parts:
        if type(part) is not bytes:
            raise InvalidEncoding(f"nonce {what} parts must be bytes")
        out += _lp(part)
        count += 1
    return count.to_bytes(_LEN_BYTES, "little") + bytes(out)


class NonceStream:
    """A stream of secret non-zero scalars bound to a statement, a secret and randomness."""

    __slots__ = ("_key", "_count")

    def __init__(
        self,
        label: str,
        *,
        public: Iterable[bytes] = (),
        secret: Iterable[bytes] = (),
        insecure_test_seed: bytes | None = None,
    ) -> None:
        if type(label) is not str or not label:
            raise InvalidEncoding("nonce label must be a non-empty str")
        if insecure_test_seed is None:
            entropy = secrets.token_bytes(ENTROPY_BYTES)
        elif type(insecure_test_seed) is bytes:
            entropy = hashlib.sha512(_lp(_TEST_SEED_DST) + _lp(insecure_test_seed)).digest()
        else:
            raise InvalidEncoding("insecure_test_seed must be bytes")
        h = hashlib.sha512(_lp(_DST) + _lp(label.encode()))
        h.update(_parts("public", public))
        h.update(_parts("secret", secret))
        h.update(_lp(entropy))
        self._key = h.digest()
        self._count = 0

    def _block(self) -> bytes:
        j = self._count
        self._count += 1
        return hashlib.sha512(self._key + j.to_bytes(_LEN_BYTES, "little")).digest()

    def __call__(self) -> int:
        """The next uniform scalar in ``[1, L)``."""
        while True:
            k = int.from_bytes(self._block(), "little") % L
            if k:
                return k

    def below(self, bound: int) -> int:
        """A uniform integer in ``[0, bound)`` (rejection sampling, no modulo bias)."""
        if type(bound) is not int or bound <= 0:
            raise InvalidScalar("bound must be a positive int")
        nbytes = (bound.bit_length() + 7) // 8 + 8
        if nbytes > _MAX_BELOW_BYTES:
            raise InvalidScalar(f"bound needs more than {_MAX_BELOW_BYTES} random bytes")
        limit = (256**nbytes // bound) * bound
        while True:
            x = int.from_bytes(self._block()[:nbytes], "little")
            if x < limit:
                return x % bound
