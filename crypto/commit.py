"""Hash commitments and commit-reveal joint randomness among n seats.

A commitment is ``SHA-256(DST || len(context) || context || nonce || len(value) || value)``
with a fresh 256-bit secret nonce: hiding because the nonce is uniform and
secret, binding because SHA-256 is collision resistant.  The context (table,
game, step, seat) is hashed in so a commitment cannot be copied from another
seat or game.  (Note a seat must not simply copy another's commitment: the
seat's own identity belongs in ``context``.)

Joint randomness (the classic commit-then-reveal coin flip): every seat commits
to a random value, then every seat reveals; each reveal is checked against its
own commitment *individually*, so a bad or missing reveal is blamed on its
seat.  The seed is a hash over all reveals sorted by seat, and it is unbiased
as long as at least one seat was honest and nobody could see others' values
before committing.  Values drawn from the seed use rejection sampling, never
``% n`` on raw bytes, so dice and permutations are exactly uniform.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Mapping, Sequence
from typing import TypeVar

from crypto.errors import CommitmentMismatch, InvalidEncoding, check_bytes

NONCE_BYTES = 32
COMMITMENT_BYTES = 32
SEED_BYTES = 64
DIE_SIDES = 6
_COMMIT_DST = b"slaiga/v1/commit"
_SEED_DST = b"slaiga/v1/joint-random/seed"
_STREAM_DST = b"slaiga/v1/joint-random/stream"
_LEN_BYTES = 8

T = TypeVar("T")


def _lp(b: bytes) -> bytes:
    return len(b).to_bytes(_LEN_BYTES, "little") + b


def _digest(value: bytes, context: bytes, nonce: bytes) -> bytes:
    return hashlib.sha256(_COMMIT_DST + _lp(context) + nonce + _lp(value)).digest()


def commit(value: bytes, context: bytes, nonce: bytes | None = None) -> tuple[bytes, bytes]:
    """Commit to ``value``; return ``(commitment, nonce)``. Keep the nonce secret until reveal."""
    value = check_bytes("value", value)
    context = check_bytes("context", context)
    if nonce is None:
        nonce = secrets.token_bytes(NONCE_BYTES)
    nonce = check_bytes("nonce", nonce)
    if len(nonce) != NONCE_BYTES:
        raise InvalidEncoding(f"nonce must be {NONCE_BYTES} bytes")
    return _digest(value, context, nonce), nonce


def check_commitment(
    commitment: bytes, value: bytes, nonce: bytes, context: bytes, seat: int | None = None
) -> None:
    """Raise :class:`CommitmentMismatch` (carrying ``seat``) unless the reveal opens the commitment."""
    who = "" if seat is None else f" of seat {seat}"
    for what, b in (("commitment", commitment), ("value", value), ("nonce", nonce)):
        if not isinstance(b, bytes | bytearray | memoryview):
            raise CommitmentMismatch(f"{what}{who} is not bytes", seat)
    context = check_bytes("context", context)
    if len(commitment) != COMMITMENT_BYTES:
        raise CommitmentMismatch(f"commitment{who} has wrong length", seat)
    if len(nonce) != NONCE_BYTES:
        raise CommitmentMismatch(f"revealed nonce{who} has wrong length", seat)
    if not secrets.compare_digest(_digest(bytes(value), context, bytes(nonce)), bytes(commitment)):
        raise CommitmentMismatch(f"revealed value{who} does not match its commitment", seat)


def missing_reveals(commitments: Mapping[int, bytes], reveals: Mapping[int, object]) -> list[int]:
    """Seats that committed but did not reveal, sorted."""
    return sorted(seat for seat in commitments if seat not in reveals)


def bad_reveals(
    commitments: Mapping[int, bytes],
    reveals: Mapping[int, tuple[bytes, bytes]],
    context_for_seat: Mapping[int, bytes],
) -> list[int]:
    """Seats whose reveal ``(value, nonce)`` is missing, unexpected or wrong, sorted.

    Every reveal is checked individually against the seat's own commitment and
    context, so blame is exact.
    """
    bad = set(missing_reveals(commitments, reveals))
    bad.update(seat for seat in reveals if seat not in commitments)
    for seat, commitment in commitments.items():
        if seat in reveals:
            value, nonce = reveals[seat]
            try:
                check_commitment(commitment, value, nonce, context_for_seat[seat], seat)
            except CommitmentMismatch:
                bad.add(seat)
    return sorted(bad)


def check_reveals(
    commitments: Mapping[int, bytes],
    reveals: Mapping[int, tuple[bytes, bytes]],
    context_for_seat: Mapping[int, bytes],
) -> None:
    """Raise :class:`CommitmentMismatch` naming the lowest seat in :func:`bad_reveals`."""
    bad = bad_reveals(commitments, reveals, context_for_seat)
    if bad:
        seat = bad[0]
        reason = "did not reveal" if seat not in reveals else "revealed a bad value"
        raise CommitmentMismatch(f"seat {seat} {reason} (all bad seats: {bad})", seat)


class JointStream:
    """A deterministic stream of unbiased values from a jointly generated seed.

    Bytes come from SHA-512 in counter mode over the seed.  Integers below
    ``n`` are drawn by rejection sampling on the minimal number of bits.
    """

    __slots__ = ("seed", "_counter", "_buf")

    def __init__(self, seed: bytes) -> None:
        seed = check_bytes("seed", seed)
        if len(seed) != SEED_BYTES:
            raise InvalidEncoding(f"seed must be {SEED_BYTES} bytes")
        self.seed = seed
        self._counter = 0
        self._buf = b""

    @classmethod
    def from_reveals(cls, context: bytes, reveals: Mapping[int, bytes]) -> JointStream:
        """Combine already-checked revealed values (seat -> value), sorted by seat."""
        context = check_bytes("context", context)
        if not reveals:
            raise InvalidEncoding("joint randomness needs at least one reveal")
        h = hashlib.sha512(_SEED_DST + _lp(context) + len(reveals).to_bytes(_LEN_BYTES, "little"))
        for seat in sorted(reveals):
            if type(seat) is not int or seat < 0:
                raise InvalidEncoding("seats must be non-negative ints")
            h.update(
                seat.to_bytes(_LEN_BYTES, "little") + _lp(check_bytes("reveal", reveals[seat]))
            )
        return cls(h.digest())

    def random_bytes(self, n: int) -> bytes:
        while len(self._buf) < n:
            block = hashlib.sha512(
                _STREAM_DST + self.seed + self._counter.to_bytes(_LEN_BYTES, "little")
            ).digest()
            self._counter += 1
            self._buf += block
        out, self._buf = self._buf[:n], self._buf[n:]
        return out

    def below(self, n: int) -> int:
        """Uniform integer in ``[0, n)`` by rejection sampling."""
        if type(n) is not int or n < 1:
            raise InvalidEncoding("bound must be a positive int")
        if n == 1:
            return 0
        bits = (n - 1).bit_length()
        nbytes = (bits + 7) // 8
        mask = (1 << bits) - 1
        while True:
            x = int.from_bytes(self.random_bytes(nbytes), "little") & mask
            if x < n:
                return x

    def die(self) -> int:
        """One fair six-sided die, 1..6."""
        return self.below(DIE_SIDES) + 1

    def dice(self, k: int) -> list[int]:
        return [self.die() for _ in range(k)]

    def permutation(self, n: int) -> list[int]:
        """Uniform permutation of ``range(n)`` (Fisher-Yates)."""
        perm = list(range(n))
        for i in range(n - 1, 0, -1):
            j = self.below(i + 1)
            perm[i], perm[j] = perm[j], perm[i]
        return perm

    def choice(self, seq: Sequence[T]) -> T:
        """A blind pick: uniform element of a non-empty sequence."""
        if not seq:
            raise InvalidEncoding("cannot choose from an empty sequence")
        return seq[self.below(len(seq))]
