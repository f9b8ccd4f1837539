"""A shuffle and its commitment-form proof made in two halves: the part that does not
depend on the pile, while the seat waits its turn, and the rest once the pile is in.

The proof is :class:`crypto.shuffle_proof_tw_batch.TWCommitmentProof`, unchanged on
the wire and checked by the same verifier; only the prover's order of work differs.
In the notation of Haenni, Locher, Koenig and Dubuis, "Pseudo-code algorithms for
verifiable re-encryption mix-nets" (FC 2017, GenShuffleProof), a shuffle of ``N``
cards under the joint key ``PK`` costs ``6N`` variable-base and ``4N + 4`` fixed-base
multiplications.  These do not depend on the input pile ``e``:

* the witness: the permutation ``pi`` and the re-randomisers ``rho_i``;
* the re-masking terms ``rho_i G`` and ``rho_i PK`` (``N`` of each);
* the permutation commitments ``c_{pi(i)} = r_{pi(i)} G + h_i``;
* every prover nonce, and the commitments ``t1 = w1 G``, ``t2 = w2 G`` and
  ``t3 = w3 G + sum w'_i h_i``.

:func:`prepare_shuffle` computes them (``2N`` variable-base and ``2N + 3`` fixed-base
multiplications).  :func:`finish_shuffle` then does what needs the pile: the outputs
(``e'_i = e_{pi(i)} + (rho_i G, rho_i PK)``, additions only), the challenges ``u``
(which must hash the outputs, else a prover who knew them could fit a false output to
them), the commitment chain ``c^``, ``t41``, ``t42`` and ``t^`` (``4N`` variable-base
and ``2N + 1`` fixed-base multiplications), and the responses.

**One use only.**  The nonces of a prepared shuffle answer one challenge: two
proofs from the same nonces on two piles give the challenge differences, hence the
permutation.  So a :class:`PreparedShuffle` is consumed by :func:`finish_shuffle`
(taking its one use is a single ``list.pop``, atomic even between threads), and a
second call raises :class:`crypto.errors.InvalidEncoding`.

**Randomness.**  The pile is not known when the witness and nonces are drawn, so
they are hedged (:mod:`crypto.nonces`) on the context (table, game, step, seat),
the joint key, the card count and fresh randomness, and the nonces also on the
witness; a repeated ``insecure_test_seed`` (tests only) repeats them only for the
same context, where the step is never shuffled twice.

**Prepared before the step is known.**  Nothing of the prepared half depends on the
context either: the context is hashed into the challenges only, by
:func:`finish_shuffle`, after every commitment is fixed, exactly as when it is known
from the start (the Fiat-Shamir challenge still binds the whole statement: context,
key, both piles and every commitment).  So a seat may prepare its *next* deal's
shuffle while the current deal is played, before that shuffle's step is known:
:func:`prepare_shuffle` with ``context=None`` (its nonces are then hedged on the key,
the card count and fresh randomness), and :func:`finish_shuffle` given the context.
Its nonces still answer one challenge only (the one use above).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from crypto.elgamal import Ciphertext
from crypto.errors import DeckMismatch, InvalidEncoding
from crypto.group import Point, add, base_mul, mul, scalar_to_bytes
from crypto.nonces import NonceStream
from crypto.shuffle import MAX_CARDS, ShuffleWitness, random_witness
from crypto.shuffle_proof_tw import (
    Aside,
    _lincomb,
    _responses,
    _statement_transcript,
    generators,
    pile_commitments,
)
from crypto.shuffle_proof_tw_batch import TWCommitmentProof
from crypto.transcript import Context

_WITNESS_LABEL = "shuffle.prepared.witness"
_NONCE_LABEL = "tw-prover.prepared"
_UNKNOWN_STEP = b"slaiga/v1/shuffle.prepared/step-not-known-yet"
_EARLY = b"slaiga/v1/shuffle.prepared/before-the-joint-key"


@dataclass(slots=True)
class PreparedShuffle:
    """Everything of one seat's shuffle that does not depend on the input pile (secret:
    never leaves the seat).  Consumed by :func:`finish_shuffle`, once."""

    size: int
    joint_key: Point
    context: Context | None
    """The step's context, or ``None``: prepared before the step was known (given to
    :func:`finish_shuffle`)."""
    witness: ShuffleWitness
    masks: tuple[tuple[Point, Point], ...]
    """``(rho_i G, rho_i PK)`` for output position ``i``."""
    r: tuple[int, ...]
    permutation_commitments: tuple[Point, ...]
    r_hat: tuple[int, ...]
    w: tuple[int, int, int, int]
    w_hat: tuple[int, ...]
    w_prime: tuple[int, ...]
    t123: tuple[Point, Point, Point]
    _use: list[bool] = field(default_factory=lambda: [True], repr=False)

    def take(self) -> None:
        """Mark it used; raise :class:`InvalidEncoding` if it was used already."""
        try:
            self._use.pop()
        except IndexError:
            raise InvalidEncoding("a prepared shuffle is used once only (its nonces)") from None

    @property
    def used(self) -> bool:
        return not self._use


@dataclass(slots=True)
class EarlyShuffle:
    """The part of a prepared shuffle that needs neither the pile nor the joint key (secret:
    never leaves the seat): the witness, ``rho_i G``, the permutation commitments, every
    nonce and ``t1, t2, t3``.  :func:`prepare_shuffle` completes it, once, with the key."""

    size: int
    witness: ShuffleWitness
    blinds: tuple[Point, ...]
    """``rho_i G`` for output position ``i``."""
    r: tuple[int, ...]
    permutation_commitments: tuple[Point, ...]
    r_hat: tuple[int, ...]
    w: tuple[int, int, int, int]
    w_hat: tuple[int, ...]
    w_prime: tuple[int, ...]
    t123: tuple[Point, Point, Point]
    _use: list[bool] = field(default_factory=lambda: [True], repr=False)


def prepare_early(n: int, where: bytes, *, insecure_test_seed: bytes | None = None) -> EarlyShuffle:
    """What a shuffle of ``n`` cards needs before the joint key is known: ``N`` variable-base
    and ``2N + 3`` fixed-base multiplications, so that :func:`prepare_shuffle` has only
    ``rho_i PK`` left (``N``).  A table's first deal is shuffled right after its key round:
    each seat computes this while the seat order and the keys are being drawn.  ``where``
    (the table and the seat, say) is hashed into its hedged randomness in place of the
    context and the key, which are not known yet (see the module docstring)."""
    if type(n) is not int or not 0 < n <= MAX_CARDS:
        raise DeckMismatch(f"shuffle size {n} outside 1..{MAX_CARDS}")
    if type(where) is not bytes:
        raise InvalidEncoding("prepare_early needs bytes saying where the shuffle is made")
    public = (_EARLY, where, n.to_bytes(2, "little"))
    return _early(n, public, insecure_test_seed)


def _early(n: int, public: tuple[bytes, ...], seed: bytes | None) -> EarlyShuffle:
    witness = random_witness(n, NonceStream(_WITNESS_LABEL, public=public, insecure_test_seed=seed))
    secret = b"".join(i.to_bytes(2, "little") for i in witness.permutation) + b"".join(
        scalar_to_bytes(k) for k in witness.rerandomisers
    )
    rand = NonceStream(_NONCE_LABEL, public=public, secret=(secret,), insecure_test_seed=seed)
    blinds = tuple(base_mul(rho) for rho in witness.rerandomisers)
    _, hs = generators(n)
    r = tuple(rand() for _ in range(n))
    commitments: list[Point | None] = [None] * n
    for i, j in enumerate(witness.permutation):
        commitments[j] = add(base_mul(r[j]), hs[i])
    c = tuple(p for p in commitments if p is not None)
    r_hat = tuple(rand() for _ in range(n))
    w = (rand(), rand(), rand(), rand())
    w_hat = tuple(rand() for _ in range(n))
    w_prime = tuple(rand() for _ in range(n))
    t1 = base_mul(w[0])
    t2 = base_mul(w[1])
    t3 = _lincomb(zip(w_prime, hs, strict=True), w[2])
    return EarlyShuffle(n, witness, blinds, r, c, r_hat, w, w_hat, w_prime, (t1, t2, t3))


def prepare_shuffle(
    n: int,
    joint_key: Point,
    context: Context | None,
    *,
    early: EarlyShuffle | None = None,
    insecure_test_seed: bytes | None = None,
) -> PreparedShuffle:
    """The pile-independent half of a shuffle of ``n`` cards under ``joint_key``:
    ``2N`` variable-base and ``2N + 3`` fixed-base multiplications, or ``N`` and none
    when ``early`` (:func:`prepare_early`, for ``n`` cards) did the rest; ``early`` is
    used up (its nonces answer one challenge only: a second use raises).
    ``context=None``: for a step not known yet (see the module docstring)."""
    if type(n) is not int or not 0 < n <= MAX_CARDS:
        raise DeckMismatch(f"shuffle size {n} outside 1..{MAX_CARDS}")
    if not isinstance(joint_key, Point) or not (context is None or isinstance(context, Context)):
        raise InvalidEncoding("prepare_shuffle needs a Point joint key and a Context or None")
    if early is None:
        where = context.encode() if context is not None else _UNKNOWN_STEP
        early = _early(n, (where, joint_key.data, n.to_bytes(2, "little")), insecure_test_seed)
    elif not isinstance(early, EarlyShuffle) or early.size != n:
        raise DeckMismatch(f"an early half for {getattr(early, 'size', '?')} cards, not {n}")
    else:
        try:
            early._use.pop()
        except IndexError:
            raise InvalidEncoding("an early half is used once only (its nonces)") from None
    masks = tuple(
        (g, mul(rho, joint_key))
        for g, rho in zip(early.blinds, early.witness.rerandomisers, strict=True)
    )
    return PreparedShuffle(
        n,
        joint_key,
        context,
        early.witness,
        masks,
        early.r,
        early.permutation_commitments,
        early.r_hat,
        early.w,
        early.w_hat,
        early.w_prime,
        early.t123,
    )


def finish_shuffle(
    prepared: PreparedShuffle,
    inputs: Sequence[Ciphertext],
    context: Context | None = None,
    aside: Aside | None = None,
) -> tuple[tuple[Ciphertext, ...], TWCommitmentProof]:
    """The shuffled pile and its proof: ``4N`` variable-base and ``2N + 1`` fixed-base
    multiplications.  Consumes ``prepared`` (a second call raises).  ``context``: the
    step's, required if ``prepared`` was made without one, else it must be the same.
    With ``aside`` (:data:`crypto.shuffle_proof_tw.Aside`), half of the multiplications
    are computed by a second thread beside the others (the same ones)."""
    n = prepared.size
    inputs = tuple(inputs)
    if len(inputs) != n:
        raise DeckMismatch(f"prepared for {n} cards, the pile has {len(inputs)}")
    if context is not None and not isinstance(context, Context):
        raise InvalidEncoding("finish_shuffle needs a Context")
    if prepared.context is not None and context is not None and context != prepared.context:
        raise InvalidEncoding("the shuffle was prepared for another step")
    ctx = context if context is not None else prepared.context
    if ctx is None:
        raise InvalidEncoding("a shuffle prepared before its step needs the step's context")
    for i, ct in enumerate(inputs):
        if not isinstance(ct, Ciphertext):
            raise InvalidEncoding(f"input card {i} is not a Ciphertext")
    prepared.take()
    pk, perm = prepared.joint_key, prepared.witness.permutation
    outputs = tuple(
        Ciphertext(add(inputs[j].c1, g), add(inputs[j].c2, p))
        for j, (g, p) in zip(perm, prepared.masks, strict=True)
    )
    h, _ = generators(n)
    c = prepared.permutation_commitments
    tr = _statement_transcript(ctx, pk, inputs, outputs, c)
    u = tr.challenges("u", n)
    u_perm = [u[j] for j in perm]
    r_hat = prepared.r_hat
    w_hat, w_prime = prepared.w_hat, prepared.w_prime
    chain, ts, t_hat, ch = pile_commitments(
        tr, h, pk, outputs, u_perm, r_hat, prepared.w[3], w_hat, w_prime, prepared.t123, aside
    )
    proof = TWCommitmentProof(
        permutation_commitments=c,
        chain_commitments=tuple(chain),
        t=ts,
        t_hat=t_hat,
        **_responses(
            ch,
            prepared.w,
            w_hat,
            w_prime,
            r=prepared.r,
            r_hat=r_hat,
            u=u,
            u_perm=u_perm,
            rerandomisers=prepared.witness.rerandomisers,
        ),
    )
    return outputs, proof
