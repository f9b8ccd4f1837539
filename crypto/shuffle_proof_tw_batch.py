"""Terelius-Wikstrom shuffle proofs in commitment form, verified in batches.

:mod:`crypto.shuffle_proof_tw` sends proofs in *challenge form*: the verifier
recomputes every prover commitment ``t`` (one multiplication per term) and
checks the hash.  That cannot be batched, since each ``t`` must be hashed.
This module sends the same proof in *commitment form*: the ``t`` values go on
the wire and the challenge is recomputed by hashing them.  The same
transcript gives the same challenge, so the two forms are two encodings of
one proof.  Each verification equation (Haenni, Locher, Koenig and Dubuis,
FC 2017, CheckShuffleProof) then has the shape ``sum(a_k P_k) = 0``.  The
equations of several proofs can be checked at once.

**Batch verification.**  The verifier draws an independent uniform weight
``beta_e`` for every equation ``E_e``, from :mod:`secrets`, after it has
received every proof.  It then checks the single equation
``sum_e beta_e E_e = 0``.  This is the random-linear-combination ("small
exponents") test of Bellare, Garay and Rabin, "Fast batch verification for
modular exponentiation and digital signatures", EUROCRYPT 1998, here with
full-size weights.

*Soundness.*  Every point is in the subgroup of prime order ``L``: outside
points are validated by ``Point.decode``, and sums and multiples stay in the
subgroup.  Suppose some equation is false, so ``E_e`` is a non-identity
point.  Fix all the other weights.  Then ``beta_e E_e`` takes each value of
the subgroup exactly once as ``beta_e`` runs over ``Z_L``.  So the combined
sum is the identity for at most one of the ``L`` values of ``beta_e``, and a
batch holding a false equation passes with probability at most ``1/L``.
Each proof's Fiat-Shamir challenge is still recomputed from its own
transcript, so the argument for each proof alone is unchanged.

The prime order matters.  With a cofactor, a small-order component can
survive the combination with probability 1/8.  See Chalkias, Garillot and
Nikolaenko, "Taming the many EdDSAs", SSR 2020.

The weights must be unpredictable to the provers: with known weights two
false equations can be made to cancel.  So :func:`verify_shuffles_batch`
takes no seed at all; the weights come from fresh randomness every time
(tests that need fixed weights call the private ``_verify_batch``).

**Why it is cheaper.**  libsodium has no multi-scalar multiplication, so the
cost is one multiplication per *distinct* point with a non-zero combined
coefficient.  Terms on the same point merge:

* the generators ``h, h_i``, shared by all proofs;
* the joint key;
* a pile that is the output of one shuffle and the input of the next;
* each chain commitment ``c^_i``, used by two equations;
* every ``G`` term, merged into one base multiplication.

For ``k`` proofs of ``N`` cards touching ``p`` distinct piles, the cost is
about ``(3N + 5) k + N + 2 + 2N p`` multiplications and one base multiplication.
The challenge form costs ``(8N + 4) k`` multiplications and ``(N + 4) k``
base multiplications.  For three consecutive shuffles (``p = 4``) that is
about ``18N`` against ``24N``.  In exchange the receiver decodes ``N + 5``
more points per proof.

If a batch fails, each proof is checked alone (a batch of one), so the
error names the proof and the seat that made it.

:class:`RunningBatch` is the same batch for statements that come one by one (a
shuffle round): each point is multiplied as soon as no statement to come can name
it, so most of the work is done as the statements arrive.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from crypto import memo
from crypto.elgamal import Ciphertext
from crypto.errors import DeckMismatch, InvalidEncoding, InvalidPoint, InvalidProof
from crypto.group import (
    L,
    Point,
    add,
    base_mul,
    mul,
)
from crypto.nonces import NonceStream
from crypto.shuffle import ShuffleWitness, check_shuffle_statement
from crypto.shuffle_proof_tw import (
    Aside,
    _final_challenge,
    _statement_transcript,
    _wire_size,
    check_proof_fields,
    decode_wire,
    encode_wire,
    generators,
    prove_shuffle_with_commitments,
    run_aside,
)
from crypto.transcript import Context

_ENCODING_VERSION = 2  # version 1 is the challenge form of crypto.shuffle_proof_tw
_T_POINTS = 5  # t1, t2, t3, t41, t42
_FIXED_SCALARS = 4  # s1, s2, s3, s4
_WEIGHT_LABEL = "tw-batch.weights"


def _counts(n: int) -> tuple[int, int]:
    """Points and scalars on the wire for ``n`` cards (commitment form)."""
    return 3 * n + _T_POINTS, 2 * n + _FIXED_SCALARS


def proof_size(n: int) -> int:
    """Encoded size of a commitment-form proof: ``3N + 5`` points and ``2N + 4`` scalars."""
    return _wire_size(*_counts(n))


@dataclass(frozen=True, slots=True)
class TWCommitmentProof:
    """A Terelius-Wikstrom shuffle proof in commitment form.

    The fields are those of :class:`crypto.shuffle_proof_tw.TWShuffleProof`,
    but the challenge is replaced by the prover's commitments
    ``t = (t1, t2, t3, t41, t42)`` and ``t_hat = (t^_1 .. t^_N)``.
    """

    permutation_commitments: tuple[Point, ...]
    chain_commitments: tuple[Point, ...]
    t: tuple[Point, ...]
    t_hat: tuple[Point, ...]
    s1: int
    s2: int
    s3: int
    s4: int
    s_hat: tuple[int, ...]
    s_prime: tuple[int, ...]

    def __post_init__(self) -> None:
        check_proof_fields(
            self,
            per_card=("chain_commitments", "t_hat", "s_hat", "s_prime"),
            fixed_points={"t": _T_POINTS},
            point_fields=("permutation_commitments", "chain_commitments", "t", "t_hat"),
            scalars=("s1", "s2", "s3", "s4"),
            scalar_lists=("s_hat", "s_prime"),
        )

    @property
    def size(self) -> int:
        return len(self.permutation_commitments)

    def encode(self) -> bytes:
        """Wire form: version 2, u16 N, c_1..c_N, c^_1..c^_N, t1..t42, t^_1..t^_N,
        s1..s4, s^_1..s^_N, s'_1..s'_N."""
        return encode_wire(
            _ENCODING_VERSION,
            self.size,
            self.permutation_commitments + self.chain_commitments + self.t + self.t_hat,
            (self.s1, self.s2, self.s3, self.s4, *self.s_hat, *self.s_prime),
        )

    @classmethod
    def decode(cls, data: bytes, expected_size: int | None = None) -> TWCommitmentProof:
        """Parse and fully validate a received proof (every point and scalar)."""
        n, points, scalars = decode_wire(data, _ENCODING_VERSION, expected_size, _counts)
        f = _FIXED_SCALARS
        return cls(
            permutation_commitments=tuple(points[:n]),
            chain_commitments=tuple(points[n : 2 * n]),
            t=tuple(points[2 * n : 2 * n + _T_POINTS]),
            t_hat=tuple(points[2 * n + _T_POINTS :]),
            s1=scalars[0],
            s2=scalars[1],
            s3=scalars[2],
            s4=scalars[3],
            s_hat=tuple(scalars[f : f + n]),
            s_prime=tuple(scalars[f + n :]),
        )


@dataclass(frozen=True, slots=True)
class ShuffleStatement:
    """One shuffle to verify: ``outputs`` is claimed to be a shuffle of ``inputs``."""

    inputs: tuple[Ciphertext, ...]
    outputs: tuple[Ciphertext, ...]
    joint_key: Point
    proof: TWCommitmentProof
    context: Context


def prove_shuffle_batchable(
    inputs: Sequence[Ciphertext],
    outputs: Sequence[Ciphertext],
    joint_key: Point,
    witness: ShuffleWitness,
    context: Context,
    *,
    insecure_test_seed: bytes | None = None,
) -> TWCommitmentProof:
    """GenShuffleProof, sent in commitment form (same cost as the challenge form); its
    randomness is hedged (:mod:`crypto.nonces`), ``insecure_test_seed`` for tests only."""
    p, t, t_hat = prove_shuffle_with_commitments(
        inputs, outputs, joint_key, witness, context, insecure_test_seed=insecure_test_seed
    )
    return TWCommitmentProof(
        permutation_commitments=p.permutation_commitments,
        chain_commitments=p.chain_commitments,
        t=t,
        t_hat=t_hat,
        s1=p.s1,
        s2=p.s2,
        s3=p.s3,
        s4=p.s4,
        s_hat=p.s_hat,
        s_prime=p.s_prime,
    )


class _Combination:
    """``g G + sum(coef_P P)``, with the coefficients of equal points merged."""

    __slots__ = ("g", "terms", "sum")

    def __init__(self) -> None:
        self.g = 0
        self.terms: dict[bytes, list] = {}
        self.sum: Point | None = None
        """``sum(coef_P P)`` over the terms multiplied so far (:meth:`flush`)."""

    def add(self, p: Point, k: int) -> None:
        entry = self.terms.get(p.data)
        if entry is None:
            self.terms[p.data] = [p, k]
        else:
            entry[1] += k

    def flush(self, keep: frozenset[bytes] = frozenset(), aside: Aside | None = None) -> None:
        """Multiply every term but those on the points ``keep`` (encodings) into
        :attr:`sum`, and drop them: a point whose coefficient is complete (no equation
        to come names it) costs its multiplication now.  With ``aside``, a second
        thread computes the first half of them beside the second; either way each
        term costs one multiplication and one addition (the first none)."""
        terms = []
        for data in [d for d in self.terms if d not in keep]:
            p, k = self.terms.pop(data)
            k %= L
            if k:
                terms.append((k, p))
        half = len(terms) // 2 if aside is not None and len(terms) >= _SPLIT_AT else 0
        first = run_aside(aside if half else None, lambda: _sum_of(terms[:half]))
        acc = _sum_of(terms[half:])
        for part in (first(), self.sum):
            if part is not None:
                acc = part if acc is None else add(part, acc)
        self.sum = acc

    def is_identity(self, aside: Aside | None = None) -> bool:
        """Whether the combination is the identity: ``sum(coef_P P) == -g G`` (every
        term multiplied now, see :meth:`flush`).

        The identity itself is never a :class:`Point`, so the ``G`` term is
        compared instead of added.
        """
        self.flush(aside=aside)
        acc = self.sum
        neg_g = -self.g % L
        if acc is None or neg_g == 0:
            return acc is None and neg_g == 0
        return acc == base_mul(neg_g)


_SPLIT_AT = 64
"""Terms from which a batch is worth splitting over two threads (a proof of one card
has about 20)."""


def _sum_of(terms: Sequence[tuple[int, Point]]) -> Point | None:
    """``sum(k P)`` over ``terms``: one multiplication each (``None`` for no terms)."""
    acc: Point | None = None
    for k, p in terms:
        q = mul(k, p)
        acc = q if acc is None else add(acc, q)
    return acc


def _absorb(comb: _Combination, st: ShuffleStatement, weights: NonceStream) -> None:
    """Add ``beta_e E_e`` for every verification equation of one proof to ``comb``."""
    inputs, outputs, joint_key, proof = st.inputs, st.outputs, st.joint_key, st.proof
    check_shuffle_statement(inputs, outputs, joint_key)
    n = len(inputs)
    if not isinstance(proof, TWCommitmentProof):
        raise InvalidEncoding("shuffle proof must be a TWCommitmentProof")
    if proof.size != n:
        raise DeckMismatch(f"shuffle proof is for {proof.size} cards, shuffle has {n}")
    h, hs = generators(n)
    c = proof.permutation_commitments
    chain = proof.chain_commitments
    tr = _statement_transcript(st.context, joint_key, inputs, outputs, c)
    u = tr.challenges("u", n)
    ch = _final_challenge(tr, chain, proof.t, proof.t_hat)
    t1, t2, t3, t41, t42 = proof.t
    s_prime = proof.s_prime
    b1, b2, b3, b41, b42 = (weights() for _ in range(_T_POINTS))
    u_prod = 1
    for x in u:
        u_prod = u_prod * x % L
    # E1: s1 G - ch (sum c_j - sum h_i) - t1 = 0
    comb.g += b1 * proof.s1
    comb.add(t1, -b1)
    # E2: s2 G - ch c^_N + ch (prod u) h - t2 = 0
    comb.g += b2 * proof.s2
    comb.add(chain[-1], -b2 * ch)
    comb.add(h, b2 * ch * u_prod)
    comb.add(t2, -b2)
    # E3: s3 G + sum s'_i h_i - ch sum u_j c_j - t3 = 0   (merged with E1's c_j, h_i)
    comb.g += b3 * proof.s3
    comb.add(t3, -b3)
    for j in range(n):
        comb.add(c[j], -ch * (b1 + b3 * u[j]))
        comb.add(hs[j], b1 * ch + b3 * s_prime[j])
    # E41: sum s'_i e'_i.c1 - s4 G - ch sum u_j e_j.c1 - t41 = 0
    # E42: sum s'_i e'_i.c2 - s4 PK - ch sum u_j e_j.c2 - t42 = 0
    comb.g -= b41 * proof.s4
    comb.add(joint_key, -b42 * proof.s4)
    comb.add(t41, -b41)
    comb.add(t42, -b42)
    for i in range(n):
        out, inp = outputs[i], inputs[i]
        comb.add(out.c1, b41 * s_prime[i])
        comb.add(out.c2, b42 * s_prime[i])
        cu = ch * u[i]
        comb.add(inp.c1, -b41 * cu)
        comb.add(inp.c2, -b42 * cu)
    # E^_i: s^_i G + s'_i c^_{i-1} - ch c^_i - t^_i = 0   (c^_0 = h)
    for i in range(n):
        gamma = weights()
        comb.g += gamma * proof.s_hat[i]
        comb.add(chain[i - 1] if i else h, gamma * s_prime[i])
        comb.add(chain[i], -gamma * ch)
        comb.add(proof.t_hat[i], -gamma)


def _check(
    statements: Sequence[ShuffleStatement], weights: NonceStream, aside: Aside | None = None
) -> bool:
    comb = _Combination()
    for st in statements:
        _absorb(comb, st, weights)
    try:
        return comb.is_identity(aside)
    except InvalidPoint:  # a partial sum hit the identity: never for honest proofs
        return False


def verify_shuffles_batch(
    statements: Sequence[ShuffleStatement], *, aside: Aside | None = None
) -> None:
    """CheckShuffleProof for every statement at once; raise :class:`InvalidProof` if any fails.

    Malformed statements raise :class:`DeckMismatch` or :class:`InvalidEncoding`
    before any arithmetic.  The weights are fresh random scalars, unknown to
    the provers.  With ``aside`` (:data:`crypto.shuffle_proof_tw.Aside`), a second
    thread computes half of the batch's multiplications.
    """
    _verify_batch(statements, NonceStream(_WEIGHT_LABEL), aside)


def _verify_batch(
    statements: Sequence[ShuffleStatement], weights: NonceStream, aside: Aside | None = None
) -> None:
    """:func:`verify_shuffles_batch` with the weights drawn from ``weights`` (tests only:
    weights a prover can predict let a forged batch pass)."""
    statements = list(statements)
    if not statements:
        raise DeckMismatch("batch of no shuffle proofs")
    for st in statements:
        if not isinstance(st, ShuffleStatement):
            raise InvalidEncoding("batch entries must be ShuffleStatements")
    memory = memo.current()
    if memory is not None and not all(_hashable(st) for st in statements):
        memory = None  # hashed only within a scope: a live peer's check pays nothing for it
    # (index in the caller's batch, statement): an error counts proofs as the caller does
    todo = list(enumerate(statements))
    if memory is not None:  # within crypto.memo.remembering: a statement passed is not redone
        todo = [(k, st) for k, st in todo if st not in memory.shuffles]
        if not todo:
            return
    if _check([st for _, st in todo], weights, aside):
        if memory is not None:
            for _, st in todo:
                memory.keep(memory.shuffles, st)
        return
    if len(statements) > 1:
        for k, st in todo:
            if not _check([st], weights):
                raise InvalidProof(
                    f"shuffle proof {k} of the batch (seat {st.context.seat}) does not verify"
                )
    raise InvalidProof(
        f"shuffle proof (seat {statements[0].context.seat}) does not verify"
        if len(statements) == 1
        else "shuffle proof batch does not verify"
    )


class RunningBatch:
    """:func:`verify_shuffles_batch` for statements that come one by one (a shuffle round:
    each seat shuffles the previous seat's output), with the work spread over their
    arrival.

    :meth:`add` absorbs a statement's equations, each with a fresh secret weight drawn
    then (after its proof is fixed: the weights are never shown to anybody, so a later
    prover knows them no better than an earlier one), and at once multiplies every
    point no later statement can name: all but the commitment generators and the joint
    key, which every statement names, and the statement's output pile, the next one's
    input.  :meth:`verify` multiplies the rest and compares.  The sum is the very one
    the batch computes, only in another order, so the verdict and its soundness are the
    batch's (a false statement passes with probability at most ``1/L``), and so is the
    cost: about ``5N`` multiplications a statement as it comes, ``3N`` more at the end
    (for the last pile and the generators), where checking each alone costs ``8N + 7``.

    Not thread-safe: its caller runs one :meth:`add` or :meth:`verify` at a time (a
    background thread adds in arrival order; the job ending the round waits for those
    adds before it adds the rest).  Outside :func:`crypto.memo.remembering` only (it
    remembers nothing).
    """

    def __init__(self) -> None:
        self._comb = _Combination()
        self._weights = NonceStream(_WEIGHT_LABEL)
        self.statements: list[ShuffleStatement] = []
        self._broken = False
        """A partial sum was the identity (never for honest proofs): the batch fails."""
        self._verified = False

    def add(
        self, statement: ShuffleStatement, *, more: bool = True, aside: Aside | None = None
    ) -> None:
        """Absorb ``statement``; ``more=False`` when no later statement of this batch
        takes its outputs as inputs (their terms are then multiplied now too).  A
        malformed statement raises :class:`DeckMismatch` or :class:`InvalidEncoding`
        (and leaves the batch unusable: check the statements afresh)."""
        if not isinstance(statement, ShuffleStatement):
            raise InvalidEncoding("batch entries must be ShuffleStatements")
        if self._verified:
            raise InvalidEncoding("a running batch takes no statement once verified")
        _absorb(self._comb, statement, self._weights)
        self.statements.append(statement)
        h, hs = generators(len(statement.inputs))
        keep = {h.data, statement.joint_key.data, *(p.data for p in hs)}
        if more:
            keep.update(x.data for ct in statement.outputs for x in (ct.c1, ct.c2))
        try:
            self._comb.flush(frozenset(keep), aside)
        except InvalidPoint:  # a partial sum hit the identity: never for honest proofs
            self._broken = True

    def verify(self, aside: Aside | None = None) -> None:
        """Raise :class:`InvalidProof` unless every statement added is true (naming the
        first false one, checked alone, if the batch fails).  Once only: it consumes the
        sum (a second call raises :class:`InvalidEncoding`)."""
        statements = self.statements
        if not statements:
            raise DeckMismatch("batch of no shuffle proofs")
        if self._verified:
            raise InvalidEncoding("a running batch is verified once only")
        self._verified = True
        ok = False
        if not self._broken:
            try:
                ok = self._comb.is_identity(aside)
            except InvalidPoint:
                ok = False
        if ok:
            return
        if len(statements) > 1:
            for k, st in enumerate(statements):
                if not _check([st], NonceStream(_WEIGHT_LABEL)):
                    raise InvalidProof(
                        f"shuffle proof {k} of the batch (seat {st.context.seat}) does not verify"
                    )
        raise InvalidProof(
            f"shuffle proof (seat {statements[0].context.seat}) does not verify"
            if len(statements) == 1
            else "shuffle proof batch does not verify"
        )


def _hashable(statement: ShuffleStatement) -> bool:
    """Whether ``statement`` can be remembered (its piles are tuples, as they should be)."""
    try:
        hash(statement)
    except TypeError:
        return False
    return True


def verify_shuffle_commitment(
    inputs: Sequence[Ciphertext],
    outputs: Sequence[Ciphertext],
    joint_key: Point,
    proof: TWCommitmentProof,
    context: Context,
) -> None:
    """Verify one commitment-form proof (a batch of one)."""
    verify_shuffles_batch(
        [ShuffleStatement(tuple(inputs), tuple(outputs), joint_key, proof, context)]
    )
