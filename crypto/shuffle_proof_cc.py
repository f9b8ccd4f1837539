"""Cut-and-choose proof of a re-encryption shuffle (the simple reference proof).

After K. Sako and J. Kilian, "Receipt-free mix-type voting scheme -- a
practical solution to the implementation of a voting booth", EUROCRYPT 1995:
to prove that ``outputs`` is a shuffle of ``inputs`` the prover, in each of
``k`` rounds, publishes a *shadow* shuffle ``D = shuffle(inputs; phi, rho)``.
The verifier flips a coin ``b``:

* ``b = 0`` -- the prover opens the shadow against the inputs: ``(phi, rho)``
  with ``D_i = inputs[phi(i)] + Enc(0; rho_i)``;
* ``b = 1`` -- the prover opens the shadow against the outputs:
  ``sigma = pi^-1 o phi`` and ``tau_i = rho_i - r_{sigma(i)}``, so that
  ``D_i = outputs[sigma(i)] + Enc(0; tau_i)``.

Each opening alone reveals a uniformly random shuffle, nothing about ``pi``.
If ``outputs`` is not a shuffle of ``inputs`` then no shadow can be opened both
ways, so a cheater survives a round with probability 1/2 and the whole proof
with ``2**-k``.  The coins come from the Fiat-Shamir transcript over the whole
statement and every shadow, so with non-interactive proofs an attacker may
grind offline: ``k = 128`` rounds (the default) keeps that at 128-bit work.

It costs ``k`` shuffles to make and ``k`` shuffles to check, about 64 times
the Terelius-Wikstrom proof of :mod:`crypto.shuffle_proof_tw`; it is kept as
an independent, easily audited cross-check of that proof.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from crypto.elgamal import Ciphertext
from crypto.errors import DeckMismatch, InvalidEncoding, InvalidPoint, InvalidProof
from crypto.group import POINT_BYTES, SCALAR_BYTES, L, Point, scalar_from_bytes
from crypto.shuffle import (
    MAX_CARDS,
    ShuffleWitness,
    apply_shuffle,
    check_permutation,
    check_shuffle_statement,
    prover_nonces,
    random_witness,
)
from crypto.transcript import Context, Transcript

PROTOCOL = "slaiga/shuffle/cut-and-choose/v1"
DEFAULT_ROUNDS = 128
"""Rounds for 128-bit soundness against offline grinding of the Fiat-Shamir coins."""
MAX_ROUNDS = 256
_ENCODING_VERSION = 1
_HEADER_BYTES = 5  # version byte, u16 card count, u16 rounds
_INDEX_BYTES = 2
_CIPHERTEXT_BYTES = 2 * POINT_BYTES


def proof_size(n: int, rounds: int = DEFAULT_ROUNDS) -> int:
    """Encoded size in bytes of a proof for ``n`` cards and ``rounds`` rounds."""
    per_round = n * (_CIPHERTEXT_BYTES + _INDEX_BYTES + SCALAR_BYTES)
    return _HEADER_BYTES + rounds * per_round


@dataclass(frozen=True, slots=True)
class CCRound:
    """One round: a shadow shuffle and its opening (against inputs or outputs, per coin)."""

    shadow: tuple[Ciphertext, ...]
    permutation: tuple[int, ...]
    rerandomisers: tuple[int, ...]

    def __post_init__(self) -> None:
        n = len(self.shadow)
        for ct in self.shadow:
            if not isinstance(ct, Ciphertext):
                raise InvalidEncoding("cut-and-choose shadow must hold Ciphertexts")
        check_permutation(self.permutation, n, "cut-and-choose opening permutation")
        if len(self.rerandomisers) != n:
            raise DeckMismatch(f"cut-and-choose opening has {len(self.rerandomisers)} != {n}")
        for k in self.rerandomisers:
            if type(k) is not int or not 0 <= k < L:
                raise InvalidEncoding("cut-and-choose opening scalar out of range")


@dataclass(frozen=True, slots=True)
class CCShuffleProof:
    """``k`` rounds of shadow shuffles with their openings."""

    rounds: tuple[CCRound, ...]

    def __post_init__(self) -> None:
        if not 0 < len(self.rounds) <= MAX_ROUNDS:
            raise InvalidEncoding(f"cut-and-choose proof needs 1..{MAX_ROUNDS} rounds")
        n = len(self.rounds[0].shadow)
        if not 0 < n <= MAX_CARDS:
            raise DeckMismatch(f"cut-and-choose proof size {n} outside 1..{MAX_CARDS}")
        for rnd in self.rounds:
            if not isinstance(rnd, CCRound):
                raise InvalidEncoding("cut-and-choose rounds must be CCRound")
            if len(rnd.shadow) != n:
                raise DeckMismatch("cut-and-choose rounds disagree on the deck size")

    @property
    def size(self) -> int:
        return len(self.rounds[0].shadow)

    def encode(self) -> bytes:
        """Wire form: version, u16 N, u16 k, then per round 2N points, N u16, N scalars."""
        out = bytearray((_ENCODING_VERSION,))
        out += self.size.to_bytes(2, "little") + len(self.rounds).to_bytes(2, "little")
        for rnd in self.rounds:
            for ct in rnd.shadow:
                out += ct.c1.data + ct.c2.data
            for x in rnd.permutation:
                out += x.to_bytes(_INDEX_BYTES, "little")
            for k in rnd.rerandomisers:
                out += k.to_bytes(SCALAR_BYTES, "little")
        return bytes(out)

    @classmethod
    def decode(cls, data: bytes, expected_size: int | None = None) -> CCShuffleProof:
        """Parse and validate every point, index and scalar of a received proof."""
        if type(data) is not bytes:
            raise InvalidEncoding("cut-and-choose proof must be bytes")
        if len(data) < _HEADER_BYTES:
            raise InvalidEncoding("cut-and-choose proof too short for its header")
        if data[0] != _ENCODING_VERSION:
            raise InvalidEncoding(f"cut-and-choose proof version {data[0]} unknown")
        n = int.from_bytes(data[1:3], "little")
        k = int.from_bytes(data[3:5], "little")
        if not 0 < n <= MAX_CARDS:
            raise DeckMismatch(f"cut-and-choose proof size {n} outside 1..{MAX_CARDS}")
        if expected_size is not None and n != expected_size:
            raise DeckMismatch(f"cut-and-choose proof is for {n} cards, expected {expected_size}")
        if not 0 < k <= MAX_ROUNDS:
            raise InvalidEncoding(f"cut-and-choose proof has {k} rounds, not 1..{MAX_ROUNDS}")
        if len(data) != proof_size(n, k):
            raise InvalidEncoding(
                f"cut-and-choose proof must be {proof_size(n, k)} bytes, got {len(data)}"
            )
        pos = _HEADER_BYTES
        rounds = []
        for _ in range(k):
            shadow = []
            for _ in range(n):
                c1 = Point.decode(data[pos : pos + POINT_BYTES])
                c2 = Point.decode(data[pos + POINT_BYTES : pos + _CIPHERTEXT_BYTES])
                shadow.append(Ciphertext(c1, c2))
                pos += _CIPHERTEXT_BYTES
            perm = []
            for _ in range(n):
                perm.append(int.from_bytes(data[pos : pos + _INDEX_BYTES], "little"))
                pos += _INDEX_BYTES
            scalars = []
            for _ in range(n):
                scalars.append(scalar_from_bytes(data[pos : pos + SCALAR_BYTES]))
                pos += SCALAR_BYTES
            rounds.append(CCRound(tuple(shadow), tuple(perm), tuple(scalars)))
        return cls(tuple(rounds))


def _coins(
    context: Context,
    joint_key: Point,
    inputs: Sequence[Ciphertext],
    outputs: Sequence[Ciphertext],
    shadows: Sequence[Sequence[Ciphertext]],
) -> list[int]:
    tr = Transcript(PROTOCOL, context)
    tr.append_int("cards", len(inputs))
    tr.append_int("rounds", len(shadows))
    tr.append_point("joint_key", joint_key)
    tr.append_points("inputs", (p for ct in inputs for p in (ct.c1, ct.c2)))
    tr.append_points("outputs", (p for ct in outputs for p in (ct.c1, ct.c2)))
    for shadow in shadows:
        tr.append_points("shadow", (p for ct in shadow for p in (ct.c1, ct.c2)))
    return [x & 1 for x in tr.challenges("coins", len(shadows))]


def prove_shuffle(
    inputs: Sequence[Ciphertext],
    outputs: Sequence[Ciphertext],
    joint_key: Point,
    witness: ShuffleWitness,
    context: Context,
    rounds: int = DEFAULT_ROUNDS,
    *,
    insecure_test_seed: bytes | None = None,
) -> CCShuffleProof:
    """Prove ``outputs[i] = inputs[pi(i)] + Enc(0; r_i)`` with ``rounds`` shadow shuffles.

    The shadow shuffles are hedged (:mod:`crypto.nonces`); ``insecure_test_seed``
    pins them for test vectors only.
    """
    n = len(inputs)
    if len(outputs) != n or witness.size != n:
        raise DeckMismatch(
            f"shuffle of {n} input cards, {len(outputs)} outputs, witness for {witness.size}"
        )
    if not 0 < rounds <= MAX_ROUNDS:
        raise InvalidEncoding(f"rounds must be in 1..{MAX_ROUNDS}")
    shadow_witnesses = []
    shadows = []
    stream = prover_nonces(
        "cc-prover",
        inputs,
        outputs,
        joint_key,
        witness,
        context,
        insecure_test_seed=insecure_test_seed,
    )
    for _ in range(rounds):
        sw = random_witness(n, stream)
        shadow_witnesses.append(sw)
        shadows.append(apply_shuffle(inputs, joint_key, sw))
    coins = _coins(context, joint_key, inputs, outputs, shadows)
    inverse = [0] * n
    for i, j in enumerate(witness.permutation):
        inverse[j] = i
    out = []
    for sw, shadow, coin in zip(shadow_witnesses, shadows, coins, strict=True):
        if coin == 0:
            out.append(CCRound(shadow, sw.permutation, sw.rerandomisers))
        else:
            sigma = tuple(inverse[j] for j in sw.permutation)
            tau = tuple(
                (rho - witness.rerandomisers[s]) % L
                for rho, s in zip(sw.rerandomisers, sigma, strict=True)
            )
            out.append(CCRound(shadow, sigma, tau))
    return CCShuffleProof(tuple(out))


def verify_shuffle(
    inputs: Sequence[Ciphertext],
    outputs: Sequence[Ciphertext],
    joint_key: Point,
    proof: CCShuffleProof,
    context: Context,
    min_rounds: int = DEFAULT_ROUNDS,
) -> None:
    """Check every round's opening against the side its coin names; raise on failure.

    ``min_rounds`` is the verifier's soundness requirement: a proof with fewer
    rounds is rejected whatever it contains.
    """
    check_shuffle_statement(inputs, outputs, joint_key)
    n = len(inputs)
    if not isinstance(proof, CCShuffleProof):
        raise InvalidEncoding("shuffle proof must be a CCShuffleProof")
    if proof.size != n:
        raise DeckMismatch(f"cut-and-choose proof is for {proof.size} cards, shuffle has {n}")
    if len(proof.rounds) < min_rounds:
        raise InvalidProof(
            f"cut-and-choose proof has {len(proof.rounds)} rounds, at least {min_rounds} required"
        )
    coins = _coins(context, joint_key, inputs, outputs, [rnd.shadow for rnd in proof.rounds])
    for j, (rnd, coin) in enumerate(zip(proof.rounds, coins, strict=True)):
        source = inputs if coin == 0 else outputs
        side = "inputs" if coin == 0 else "outputs"
        if 0 in rnd.rerandomisers:
            raise InvalidProof(f"cut-and-choose round {j}: zero re-randomiser in opening")
        try:
            expected = apply_shuffle(
                source, joint_key, ShuffleWitness(rnd.permutation, rnd.rerandomisers)
            )
        except InvalidPoint as exc:
            raise InvalidProof(f"cut-and-choose round {j}: degenerate opening ({exc})") from exc
        if expected != rnd.shadow:
            raise InvalidProof(f"cut-and-choose round {j}: shadow does not open against {side}")
