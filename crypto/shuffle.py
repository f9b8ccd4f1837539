"""Shuffle with remask: permute a deck of ElGamal ciphertexts and re-encrypt each card.

A *re-encryption shuffle* (Sako and Kilian, "Receipt-free mix-type voting
scheme", EUROCRYPT 1995; Terelius and Wikstrom, "Proofs of restricted
shuffles", AFRICACRYPT 2010) maps a list of ciphertexts ``e_0 .. e_{n-1}`` to

    e'_i = e_{pi(i)} + Enc(0; rho_i) = (c1 + rho_i*G, c2 + rho_i*PK)

for a secret permutation ``pi`` and secret re-randomisers ``rho_i``.  Without
the secrets nobody can link an output card to an input card, yet the multiset
of plaintexts is unchanged.  Each seat of a table shuffles the deck once, so
the final order is unknown unless all seats collude.

This module applies shuffles; :mod:`crypto.shuffle_proof_tw` (production) and
:mod:`crypto.shuffle_proof_cc` (reference) prove them.  Everything that draws
randomness takes an optional ``seed`` so test vectors can pin the output; with
no seed the randomness comes from :mod:`secrets`.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Sequence
from dataclasses import dataclass

from crypto.elgamal import Ciphertext
from crypto.errors import DeckMismatch, InvalidEncoding, InvalidProof
from crypto.group import WIDE_SCALAR_BYTES, Point, add, base_mul, check_scalar, mul, random_scalar

MAX_CARDS = 1024
"""Largest deck a shuffle (or a shuffle proof) accepts; bounds work done on input."""

_SEED_DOMAIN = b"slaiga/v1/shuffle/seeded-randomness"
_MIN_SEED_BYTES = 16


class ScalarStream:
    """A source of uniform non-zero scalars: :mod:`secrets`, or a seed for vectors.

    With a seed, scalar ``j`` under ``label`` is SHA-512 of a domain tag, the
    seed, the label and ``j``, reduced mod L (the same 64-bytes-reduced rule
    as :func:`crypto.group.random_scalar`).  Labels keep the streams of
    different purposes independent.
    """

    __slots__ = ("_seed", "_label", "_count")

    def __init__(self, seed: bytes | None, label: bytes) -> None:
        if seed is not None and (type(seed) is not bytes or len(seed) < _MIN_SEED_BYTES):
            raise InvalidEncoding(f"seed must be at least {_MIN_SEED_BYTES} bytes")
        self._seed = seed
        self._label = label
        self._count = 0

    def __call__(self) -> int:
        if self._seed is None:
            return random_scalar()
        while True:
            j = self._count
            self._count += 1
            digest = _seeded_bytes(self._seed, self._label, j, WIDE_SCALAR_BYTES)
            try:
                return random_scalar(digest)
            except InvalidEncoding:  # reduced to zero: probability 2**-252, skip it
                continue

    def below(self, bound: int) -> int:
        """A uniform integer in ``[0, bound)`` (rejection sampling, no modulo bias)."""
        if bound <= 0:
            raise InvalidEncoding("bound must be positive")
        if self._seed is None:
            return secrets.randbelow(bound)
        nbytes = (bound.bit_length() + 7) // 8 + 8
        limit = (256**nbytes // bound) * bound
        while True:
            j = self._count
            self._count += 1
            x = int.from_bytes(_seeded_bytes(self._seed, self._label, j, nbytes), "little")
            if x < limit:
                return x % bound


def _seeded_bytes(seed: bytes, label: bytes, j: int, nbytes: int) -> bytes:
    h = hashlib.sha512()
    for part in (_SEED_DOMAIN, seed, label):
        h.update(len(part).to_bytes(8, "little") + part)
    h.update(j.to_bytes(8, "little"))
    return h.digest()[:nbytes]


def check_permutation(permutation: Sequence[int], n: int, what: str = "permutation") -> None:
    """Raise :class:`InvalidEncoding` unless ``permutation`` is a permutation of ``range(n)``."""
    if len(permutation) != n:
        raise DeckMismatch(f"{what} has {len(permutation)} entries, expected {n}")
    seen = bytearray(n)
    for x in permutation:
        if type(x) is not int or not 0 <= x < n:
            raise InvalidEncoding(f"{what} entry {x!r} out of range [0, {n})")
        if seen[x]:
            raise InvalidEncoding(f"{what} repeats entry {x}")
        seen[x] = 1


@dataclass(frozen=True, slots=True)
class ShuffleWitness:
    """The secret of one shuffle: ``output[i] = input[permutation[i]] + Enc(0; rerandomisers[i])``."""

    permutation: tuple[int, ...]
    rerandomisers: tuple[int, ...]

    def __post_init__(self) -> None:
        n = len(self.permutation)
        if not 0 < n <= MAX_CARDS:
            raise DeckMismatch(f"shuffle size {n} outside 1..{MAX_CARDS}")
        check_permutation(self.permutation, n)
        if len(self.rerandomisers) != n:
            raise DeckMismatch(f"{len(self.rerandomisers)} re-randomisers for {n} cards")
        for i, rho in enumerate(self.rerandomisers):
            check_scalar(rho, nonzero=True, what=f"re-randomiser {i}")

    @property
    def size(self) -> int:
        return len(self.permutation)


def random_permutation(n: int, seed: bytes | None = None) -> tuple[int, ...]:
    """A uniform permutation of ``range(n)`` (Fisher-Yates), from ``secrets`` or a seed."""
    stream = ScalarStream(seed, b"permutation")
    perm = list(range(n))
    for i in range(n - 1, 0, -1):
        j = stream.below(i + 1)
        perm[i], perm[j] = perm[j], perm[i]
    return tuple(perm)


def random_witness(n: int, seed: bytes | None = None) -> ShuffleWitness:
    """A fresh secret permutation and re-randomisers for a deck of ``n`` cards."""
    stream = ScalarStream(seed, b"rerandomisers")
    return ShuffleWitness(random_permutation(n, seed), tuple(stream() for _ in range(n)))


def remask_with(ct: Ciphertext, joint_key: Point, rho: int) -> Ciphertext:
    """``ct + Enc(0; rho)``: one base and one variable-base multiplication, two additions."""
    return Ciphertext(add(ct.c1, base_mul(rho)), add(ct.c2, mul(rho, joint_key)))


def apply_shuffle(
    deck: Sequence[Ciphertext], joint_key: Point, witness: ShuffleWitness
) -> tuple[Ciphertext, ...]:
    """Permute and remask ``deck`` as ``witness`` says (explicit-randomness variant)."""
    if len(deck) != witness.size:
        raise DeckMismatch(f"witness is for {witness.size} cards, deck has {len(deck)}")
    return tuple(
        remask_with(deck[j], joint_key, rho)
        for j, rho in zip(witness.permutation, witness.rerandomisers, strict=True)
    )


def shuffle_deck(
    deck: Sequence[Ciphertext], joint_key: Point, seed: bytes | None = None
) -> tuple[tuple[Ciphertext, ...], ShuffleWitness]:
    """Shuffle ``deck`` with fresh secret randomness; return the new deck and its witness."""
    witness = random_witness(len(deck), seed)
    return apply_shuffle(deck, joint_key, witness), witness


def check_shuffle_statement(
    inputs: Sequence[Ciphertext], outputs: Sequence[Ciphertext], joint_key: Point
) -> None:
    """Checks every shuffle verifier makes before looking at a proof.

    * both decks have the same size in ``1..MAX_CARDS`` (else :class:`DeckMismatch`);
    * every element is a :class:`Ciphertext` of validated points;
    * no output card equals an input card, and no two output cards are equal.

    The last rule matters: ``Enc(0; 0)`` is a legal re-encryption, so an
    algebraic shuffle proof alone accepts a card passed through *unremasked*,
    which would let everyone link it across the shuffle.  Honest outputs
    collide with probability about ``n**2 / L``.
    """
    n = len(inputs)
    if len(outputs) != n:
        raise DeckMismatch(f"shuffle has {n} input cards but {len(outputs)} output cards")
    if not 0 < n <= MAX_CARDS:
        raise DeckMismatch(f"shuffle size {n} outside 1..{MAX_CARDS}")
    if not isinstance(joint_key, Point):
        raise InvalidEncoding("joint key must be a Point")
    for name, deck in (("input", inputs), ("output", outputs)):
        for i, ct in enumerate(deck):
            if not isinstance(ct, Ciphertext):
                raise InvalidEncoding(f"{name} card {i} is not a Ciphertext")
    seen_in = {ct.c1.data for ct in inputs}
    seen_out: set[bytes] = set()
    for i, ct in enumerate(outputs):
        if ct.c1.data in seen_in:
            raise InvalidProof(f"shuffle output card {i} is an input card left unremasked")
        if ct.c1.data in seen_out:
            raise InvalidProof(f"shuffle output card {i} repeats an earlier output card")
        seen_out.add(ct.c1.data)
