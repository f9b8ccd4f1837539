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
:mod:`crypto.shuffle_proof_cc` (reference) prove them.  Secret randomness comes
from a :class:`crypto.nonces.NonceStream`, hedged on the statement (and
witness) and fresh randomness from :mod:`secrets`; test vectors pin it with
``insecure_test_seed``, which never repeats a witness across two decks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from crypto.elgamal import Ciphertext, encode_pile
from crypto.errors import DeckMismatch, InvalidEncoding, InvalidProof
from crypto.group import Point, add, base_mul, check_scalar, mul, scalar_to_bytes
from crypto.nonces import NonceStream
from crypto.transcript import Context

MAX_CARDS = 1024
"""Largest deck a shuffle (or a shuffle proof) accepts; bounds work done on input."""

_WITNESS_LABEL = "shuffle.witness"


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


def random_permutation(n: int, stream: NonceStream | None = None) -> tuple[int, ...]:
    """A uniform permutation of ``range(n)`` (Fisher-Yates) from ``stream`` (default: fresh)."""
    stream = stream or NonceStream(_WITNESS_LABEL)
    perm = list(range(n))
    for i in range(n - 1, 0, -1):
        j = stream.below(i + 1)
        perm[i], perm[j] = perm[j], perm[i]
    return tuple(perm)


def random_witness(n: int, stream: NonceStream | None = None) -> ShuffleWitness:
    """A secret permutation and re-randomisers for ``n`` cards from ``stream`` (default:
    fresh randomness)."""
    stream = stream or NonceStream(_WITNESS_LABEL)
    perm = random_permutation(n, stream)
    return ShuffleWitness(perm, tuple(stream() for _ in range(n)))


def prover_nonces(
    label: str,
    inputs: Sequence[Ciphertext],
    outputs: Sequence[Ciphertext],
    joint_key: Point,
    witness: ShuffleWitness,
    context: Context,
    *,
    insecure_test_seed: bytes | None,
) -> NonceStream:
    """A shuffle prover's nonces, hedged on the whole statement and the witness
    (:mod:`crypto.nonces`): a repeated seed never repeats them for another shuffle."""
    secret = b"".join(i.to_bytes(2, "little") for i in witness.permutation) + b"".join(
        scalar_to_bytes(k) for k in witness.rerandomisers
    )
    public = (context.encode(), joint_key.data, encode_pile(inputs), encode_pile(outputs))
    return NonceStream(
        label, public=public, secret=(secret,), insecure_test_seed=insecure_test_seed
    )


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
    deck: Sequence[Ciphertext], joint_key: Point, *, insecure_test_seed: bytes | None = None
) -> tuple[tuple[Ciphertext, ...], ShuffleWitness]:
    """Shuffle ``deck`` with fresh secret randomness; return the new deck and its witness.

    The witness is hedged on the deck and key (:mod:`crypto.nonces`), so even
    ``insecure_test_seed`` (tests only) repeats it only for the very same deck.
    """
    stream = NonceStream(
        _WITNESS_LABEL,
        public=(joint_key.data, encode_pile(deck)),
        insecure_test_seed=insecure_test_seed,
    )
    witness = random_witness(len(deck), stream)
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
