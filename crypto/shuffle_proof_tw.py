"""Terelius-Wikstrom proof of a re-encryption shuffle (the production shuffle proof).

References:

* B. Terelius and D. Wikstrom, "Proofs of restricted shuffles", AFRICACRYPT
  2010 -- the permutation-matrix commitment idea: commit to the permutation
  column by column, then prove that the committed matrix has exactly one 1 in
  every row and column by two polynomial identities evaluated at random
  points.
* D. Wikstrom, "A commitment-consistent proof of a shuffle", ACISP 2009 --
  the commitment-consistent proof this one builds on.
* R. Haenni, P. Locher, R. Koenig and E. Dubuis, "Pseudo-code algorithms for
  verifiable re-encryption mix-nets", FC 2017 (Voting workshop) -- the
  condensed algorithms that CHVote calls GenShuffleProof and
  CheckShuffleProof.  This module follows their structure step by step.

Adaptation to this project: the group is the prime-order subgroup of
edwards25519 written additively (their ``g^x`` is our ``x*G``, their products
are our sums), ciphertexts are ``(c1, c2) = (r*G, M + r*PK)``, and the
independent generators ``h, h_1 .. h_N`` come from
:func:`crypto.group.hash_to_point`, never as ``x*G``.  The Fiat-Shamir
transcript binds the whole statement -- context, joint key, generators, every
input and output card and every commitment -- before each challenge.

The proof is *challenge-form*: it carries the challenge ``c`` instead of the
prover's commitments ``t``; the verifier recomputes every ``t`` from the
responses and checks that hashing them gives back ``c``.  This is the same
proof system with a smaller proof, and it spares the verifier decoding
(validating) ``N + 5`` points.

Cost (the only expensive operations are scalar multiplications): the prover
does ``5N`` variable-base and ``3N + 4`` fixed-base multiplications; the
verifier ``8N + 4`` variable-base and ``N + 4`` fixed-base ones, computing each
multi-scalar sum directly with combined coefficients (e.g.
``sum(-c*u_i * c_i)`` instead of ``-c * sum(u_i * c_i)``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from crypto.elgamal import Ciphertext
from crypto.errors import DeckMismatch, InvalidEncoding, InvalidPoint, InvalidProof
from crypto.group import (
    POINT_BYTES,
    SCALAR_BYTES,
    L,
    Point,
    add,
    base_mul,
    check_scalar,
    hash_to_point,
    mul,
    scalar_from_bytes,
    sub,
)
from crypto.shuffle import (
    MAX_CARDS,
    ShuffleWitness,
    check_shuffle_statement,
    prover_nonces,
)
from crypto.transcript import Context, Transcript

PROTOCOL = "slaiga/shuffle/terelius-wikstrom/v1"
_GENERATOR_DOMAIN = b"slaiga/v1/shuffle-tw/generator"
_ENCODING_VERSION = 1
_HEADER_BYTES = 3  # version byte + u16 card count
_FIXED_SCALARS = 5  # challenge, s1, s2, s3, s4


@functools.cache
def _generator(index: int) -> Point:
    """Generator ``index`` (0 is ``h``, ``1..N`` are ``h_1..h_N``); independent of N."""
    return hash_to_point(_GENERATOR_DOMAIN, index.to_bytes(8, "little"))


@functools.cache
def generators(n: int) -> tuple[Point, tuple[Point, ...]]:
    """``(h, (h_1, .., h_n))``: commitment generators with unknown discrete logs.

    Cached: they depend only on ``n`` and a fixed domain tag, and deriving
    them costs one hash-to-group each.
    """
    if not 0 < n <= MAX_CARDS:
        raise DeckMismatch(f"shuffle size {n} outside 1..{MAX_CARDS}")
    return _generator(0), tuple(_generator(i) for i in range(1, n + 1))


@functools.cache
def _generator_sum(n: int) -> Point:
    _, hs = generators(n)
    acc = hs[0]
    for p in hs[1:]:
        acc = add(acc, p)
    return acc


Aside = Callable[[Callable[[], Any]], Callable[[], Any]]
"""How a caller lends a second thread to a long computation, which then computes one part
of it beside the other: ``aside(fn)`` starts ``fn`` elsewhere (or not at all) and returns
a function that gives ``fn()``'s result (or raises its exception), computing it there and
then if it had not started.  :mod:`crypto` starts no thread itself (``p2p.net.offload``
gives one); without ``aside`` every part is computed in the caller's thread, in the same
operations, so the operation counts are the same either way."""


def run_aside(aside: Aside | None, fn: Callable[[], Any]) -> Callable[[], Any]:
    """``fn`` started through ``aside``, or left to be computed when its result is asked."""
    return aside(fn) if aside is not None else fn


def _wire_size(points: int, scalars: int) -> int:
    return _HEADER_BYTES + points * POINT_BYTES + scalars * SCALAR_BYTES


def _counts(n: int) -> tuple[int, int]:
    """Points and scalars on the wire for ``n`` cards (challenge form)."""
    return 2 * n, 2 * n + _FIXED_SCALARS


def proof_size(n: int) -> int:
    """Encoded size in bytes of a proof for ``n`` cards: ``2N`` points and ``2N + 5`` scalars."""
    return _wire_size(*_counts(n))


def check_proof_fields(
    proof: Any,
    per_card: Sequence[str],
    fixed_points: Mapping[str, int],
    point_fields: Sequence[str],
    scalars: Sequence[str],
    scalar_lists: Sequence[str],
) -> None:
    """Field checks shared by both Terelius-Wikstrom proof forms.

    In order: card count in ``1..MAX_CARDS`` (from ``permutation_commitments``),
    one entry per card in each ``per_card`` field, the fixed number of points in
    each ``fixed_points`` field, :class:`Point` entries in ``point_fields``,
    reduced scalars in ``scalars`` and in every entry of ``scalar_lists``.
    """
    n = len(proof.permutation_commitments)
    if not 0 < n <= MAX_CARDS:
        raise DeckMismatch(f"shuffle proof size {n} outside 1..{MAX_CARDS}")
    for name in per_card:
        if len(getattr(proof, name)) != n:
            raise DeckMismatch(f"shuffle proof {name} has {len(getattr(proof, name))} != {n}")
    for name, count in fixed_points.items():
        if len(getattr(proof, name)) != count:
            raise DeckMismatch(f"shuffle proof needs {count} {name} commitments")
    for name in point_fields:
        for p in getattr(proof, name):
            if not isinstance(p, Point):
                raise InvalidEncoding(f"shuffle proof {name} must hold Points")
    for name in scalars:
        check_scalar(getattr(proof, name), what=f"shuffle proof {name}")
    for name in scalar_lists:
        for k in getattr(proof, name):
            check_scalar(k, what=f"shuffle proof {name} entry")


def encode_wire(version: int, n: int, points: Iterable[Point], scalars: Iterable[int]) -> bytes:
    """The layout of both proof forms: version byte, u16 card count, points, scalars."""
    out = bytearray((version,))
    out += n.to_bytes(2, "little")
    for p in points:
        out += p.data
    for k in scalars:
        out += k.to_bytes(SCALAR_BYTES, "little")
    return bytes(out)


def decode_wire(
    data: bytes,
    version: int,
    expected_size: int | None,
    counts: Callable[[int], tuple[int, int]],
) -> tuple[int, list[Point], list[int]]:
    """Parse and fully validate the layout of :func:`encode_wire`.

    ``counts(n)`` gives how many points and scalars a proof for ``n`` cards
    carries.  Returns ``(n, points, scalars)``.  Raises :class:`InvalidEncoding`
    (wrong type, version or length), :class:`DeckMismatch` (card count outside
    ``1..MAX_CARDS`` or other than ``expected_size``), :class:`InvalidPoint`
    (any point not a valid subgroup element) or :class:`InvalidScalar` (any
    scalar ``>= L``).
    """
    if type(data) is not bytes:
        raise InvalidEncoding("shuffle proof must be bytes")
    if len(data) < _HEADER_BYTES:
        raise InvalidEncoding("shuffle proof too short for its header")
    if data[0] != version:
        raise InvalidEncoding(f"shuffle proof version {data[0]} is not {version}")
    n = int.from_bytes(data[1:3], "little")
    if not 0 < n <= MAX_CARDS:
        raise DeckMismatch(f"shuffle proof size {n} outside 1..{MAX_CARDS}")
    if expected_size is not None and n != expected_size:
        raise DeckMismatch(f"shuffle proof is for {n} cards, expected {expected_size}")
    n_points, n_scalars = counts(n)
    size = _wire_size(n_points, n_scalars)
    if len(data) != size:
        raise InvalidEncoding(f"shuffle proof for {n} cards must be {size} bytes, got {len(data)}")
    pos = _HEADER_BYTES
    points = []
    for _ in range(n_points):
        points.append(Point.decode(data[pos : pos + POINT_BYTES]))
        pos += POINT_BYTES
    scalars = []
    for _ in range(n_scalars):
        scalars.append(scalar_from_bytes(data[pos : pos + SCALAR_BYTES]))
        pos += SCALAR_BYTES
    return n, points, scalars


@dataclass(frozen=True, slots=True)
class TWShuffleProof:
    """A Terelius-Wikstrom shuffle proof in challenge form.

    Fields (notation of Haenni et al.):

    * ``permutation_commitments`` -- ``c_j = r_j*G + h_i`` where ``j = pi(i)``;
    * ``chain_commitments`` -- ``c^_i = r^_i*G + u'_i * c^_{i-1}``, ``c^_0 = h``;
    * ``challenge`` -- ``c``, the Fiat-Shamir hash of statement and commitments;
    * ``s1 .. s4`` -- responses for ``r_bar``, ``r^``, ``r~`` and ``r'``;
    * ``s_hat`` -- responses ``s^_i`` for the chain randomness;
    * ``s_prime`` -- responses ``s'_i`` for the permuted challenges ``u'_i``.
    """

    permutation_commitments: tuple[Point, ...]
    chain_commitments: tuple[Point, ...]
    challenge: int
    s1: int
    s2: int
    s3: int
    s4: int
    s_hat: tuple[int, ...]
    s_prime: tuple[int, ...]

    def __post_init__(self) -> None:
        check_proof_fields(
            self,
            per_card=("chain_commitments", "s_hat", "s_prime"),
            fixed_points={},
            point_fields=("permutation_commitments", "chain_commitments"),
            scalars=("challenge", "s1", "s2", "s3", "s4"),
            scalar_lists=("s_hat", "s_prime"),
        )

    @property
    def size(self) -> int:
        """Number of cards the proof is about."""
        return len(self.permutation_commitments)

    def encode(self) -> bytes:
        """Wire form: version, u16 N, c_1..c_N, c^_1..c^_N, c, s1..s4, s^_1..s^_N, s'_1..s'_N."""
        return encode_wire(
            _ENCODING_VERSION,
            self.size,
            self.permutation_commitments + self.chain_commitments,
            (self.challenge, self.s1, self.s2, self.s3, self.s4, *self.s_hat, *self.s_prime),
        )

    @classmethod
    def decode(cls, data: bytes, expected_size: int | None = None) -> TWShuffleProof:
        """Parse and fully validate a received proof (see :func:`decode_wire`)."""
        n, points, scalars = decode_wire(data, _ENCODING_VERSION, expected_size, _counts)
        f = _FIXED_SCALARS
        return cls(
            permutation_commitments=tuple(points[:n]),
            chain_commitments=tuple(points[n:]),
            challenge=scalars[0],
            s1=scalars[1],
            s2=scalars[2],
            s3=scalars[3],
            s4=scalars[4],
            s_hat=tuple(scalars[f : f + n]),
            s_prime=tuple(scalars[f + n :]),
        )


def _lincomb(terms: Iterable[tuple[int, Point]], base_scalar: int = 0) -> Point:
    """``base_scalar*G + sum(k*P)``: one multiplication per non-zero term, then additions.

    libsodium offers no multi-scalar multiplication, and its point addition
    (which decompresses both inputs) costs about a sixth of a multiplication,
    so Straus/Pippenger built from additions would be slower than this.
    """
    acc: Point | None = base_mul(base_scalar) if base_scalar else None
    for k, p in terms:
        if k:
            q = mul(k, p)
            acc = q if acc is None else add(acc, q)
    if acc is None:
        raise InvalidPoint("linear combination with all-zero coefficients")
    return acc


def _statement_transcript(
    context: Context,
    joint_key: Point,
    inputs: Sequence[Ciphertext],
    outputs: Sequence[Ciphertext],
    permutation_commitments: Sequence[Point],
) -> Transcript:
    n = len(inputs)
    h, hs = generators(n)
    tr = Transcript(PROTOCOL, context)
    tr.append_int("cards", n)
    tr.append_point("joint_key", joint_key)
    tr.append_point("h", h)
    tr.append_points("h_i", hs)
    tr.append_points("input_c1", (ct.c1 for ct in inputs))
    tr.append_points("input_c2", (ct.c2 for ct in inputs))
    tr.append_points("output_c1", (ct.c1 for ct in outputs))
    tr.append_points("output_c2", (ct.c2 for ct in outputs))
    tr.append_points("permutation_commitments", permutation_commitments)
    return tr


def _final_challenge(
    tr: Transcript,
    chain: Sequence[Point],
    t: Sequence[Point],
    t_hat: Sequence[Point],
) -> int:
    tr.append_points("chain_commitments", chain)
    tr.append_points("t", t)
    tr.append_points("t_hat", t_hat)
    return tr.challenge("c")


def prove_shuffle(
    inputs: Sequence[Ciphertext],
    outputs: Sequence[Ciphertext],
    joint_key: Point,
    witness: ShuffleWitness,
    context: Context,
    *,
    insecure_test_seed: bytes | None = None,
) -> TWShuffleProof:
    """GenShuffleProof: prove ``outputs[i] = inputs[pi(i)] + Enc(0; rho_i)``.

    The prover's randomness is hedged on the statement, the witness and fresh
    randomness (:mod:`crypto.nonces`); ``insecure_test_seed`` replaces the
    fresh randomness for test vectors.  The prover trusts its own witness: a
    wrong witness yields a proof that does not verify.
    """
    return prove_shuffle_with_commitments(
        inputs, outputs, joint_key, witness, context, insecure_test_seed=insecure_test_seed
    )[0]


def prove_shuffle_with_commitments(
    inputs: Sequence[Ciphertext],
    outputs: Sequence[Ciphertext],
    joint_key: Point,
    witness: ShuffleWitness,
    context: Context,
    *,
    insecure_test_seed: bytes | None = None,
) -> tuple[TWShuffleProof, tuple[Point, ...], tuple[Point, ...]]:
    """:func:`prove_shuffle`, also returning the prover's commitments ``(t1, t2, t3, t41,
    t42)`` and ``t^_1..t^_N`` that the challenge form leaves out (for the
    commitment form of :mod:`crypto.shuffle_proof_tw_batch`)."""
    n = len(inputs)
    if len(outputs) != n or witness.size != n:
        raise DeckMismatch(
            f"shuffle of {n} input cards, {len(outputs)} outputs, witness for {witness.size}"
        )
    h, hs = generators(n)
    rand = prover_nonces(
        "tw-prover",
        inputs,
        outputs,
        joint_key,
        witness,
        context,
        insecure_test_seed=insecure_test_seed,
    )
    perm = witness.permutation

    # Permutation commitment: c_{pi(i)} = r_{pi(i)} G + h_i (columns of the matrix).
    r = [rand() for _ in range(n)]
    commitments: list[Point | None] = [None] * n
    for i, j in enumerate(perm):
        commitments[j] = add(base_mul(r[j]), hs[i])
    c = tuple(p for p in commitments if p is not None)

    tr = _statement_transcript(context, joint_key, inputs, outputs, c)
    u = tr.challenges("u", n)
    u_perm = [u[j] for j in perm]

    r_hat = [rand() for _ in range(n)]
    w1, w2, w3, w4 = rand(), rand(), rand(), rand()
    w_hat = [rand() for _ in range(n)]
    w_prime = [rand() for _ in range(n)]
    t123 = (base_mul(w1), base_mul(w2), _lincomb(zip(w_prime, hs, strict=True), w3))
    chain, ts, t_hat, ch = pile_commitments(
        tr, h, joint_key, outputs, u_perm, r_hat, w4, w_hat, w_prime, t123
    )
    proof = TWShuffleProof(
        permutation_commitments=c,
        chain_commitments=tuple(chain),
        challenge=ch,
        **_responses(
            ch,
            (w1, w2, w3, w4),
            w_hat,
            w_prime,
            r=r,
            r_hat=r_hat,
            u=u,
            u_perm=u_perm,
            rerandomisers=witness.rerandomisers,
        ),
    )
    return proof, ts, t_hat


def pile_commitments(
    tr: Transcript,
    h: Point,
    joint_key: Point,
    outputs: Sequence[Ciphertext],
    u_perm: Sequence[int],
    r_hat: Sequence[int],
    w4: int,
    w_hat: Sequence[int],
    w_prime: Sequence[int],
    t123: tuple[Point, Point, Point],
    aside: Aside | None = None,
) -> tuple[list[Point], tuple[Point, ...], tuple[Point, ...], int]:
    """The prover's commitments that need the output pile and the challenges ``u``
    (GenShuffleProof, Haenni et al. FC 2017): the commitment chain
    ``c^_i = r^_i G + u'_i c^_{i-1}`` (``c^_0 = h``), ``t41``, ``t42`` and ``t^``, then
    the challenge over all of them.  Returns (chain, t, t^, challenge).  With ``aside``,
    ``t41`` and ``t42`` (``2N + 1`` multiplications) are computed beside the chain and
    ``t^`` (``2N``)."""
    n = len(u_perm)

    def t4() -> tuple[Point, Point]:
        c1s, c2s = (ct.c1 for ct in outputs), (ct.c2 for ct in outputs)
        t41 = sub(_lincomb(zip(w_prime, c1s, strict=True)), base_mul(w4))
        t42 = sub(_lincomb(zip(w_prime, c2s, strict=True)), mul(w4, joint_key))
        return t41, t42

    t4_result = run_aside(aside, t4)
    chain: list[Point] = []
    prev = h
    for i in range(n):
        prev = add(base_mul(r_hat[i]), mul(u_perm[i], prev))
        chain.append(prev)
    t_hat = tuple(
        add(base_mul(w_hat[i]), mul(w_prime[i], chain[i - 1] if i else h)) for i in range(n)
    )
    t41, t42 = t4_result()
    ts = (*t123, t41, t42)
    return chain, ts, t_hat, _final_challenge(tr, chain, ts, t_hat)


def _responses(
    ch: int,
    w: Sequence[int],
    w_hat: Sequence[int],
    w_prime: Sequence[int],
    *,
    r: Sequence[int],
    r_hat: Sequence[int],
    u: Sequence[int],
    u_perm: Sequence[int],
    rerandomisers: Sequence[int],
) -> dict[str, Any]:
    """The prover's responses to challenge ``ch`` (GenShuffleProof, Haenni et al. FC 2017).

    ``w = (w1, w2, w3, w4)``, ``w_hat`` and ``w_prime`` are the nonces; ``r`` the
    permutation-commitment randomness, ``r_hat`` the chain's, ``u`` the challenges and
    ``u_perm`` them permuted, ``rerandomisers`` the shuffle's. Returns the fields
    ``s1``..``s4``, ``s_hat`` and ``s_prime`` of both proof forms.
    """
    n = len(u_perm)
    # v_i = u'_{i+1} * .. * u'_n (v_n = 1), so that c^_n = (sum r^_i v_i) G + (prod u) h.
    v = [0] * n
    acc = 1
    for i in range(n - 1, -1, -1):
        v[i] = acc
        acc = acc * u_perm[i] % L
    r_bar = sum(r) % L
    r_hat_sum = sum(a * b for a, b in zip(r_hat, v, strict=True)) % L
    r_tilde = sum(a * b for a, b in zip(r, u, strict=True)) % L
    r_prime = sum(a * b for a, b in zip(rerandomisers, u_perm, strict=True)) % L
    w1, w2, w3, w4 = w
    return {
        "s1": (w1 + ch * r_bar) % L,
        "s2": (w2 + ch * r_hat_sum) % L,
        "s3": (w3 + ch * r_tilde) % L,
        "s4": (w4 + ch * r_prime) % L,
        "s_hat": tuple((w_hat[i] + ch * r_hat[i]) % L for i in range(n)),
        "s_prime": tuple((w_prime[i] + ch * u_perm[i]) % L for i in range(n)),
    }


def verify_shuffle(
    inputs: Sequence[Ciphertext],
    outputs: Sequence[Ciphertext],
    joint_key: Point,
    proof: TWShuffleProof,
    context: Context,
) -> None:
    """CheckShuffleProof: return ``None`` if ``proof`` shows ``outputs`` shuffle ``inputs``.

    Raises :class:`DeckMismatch` for inconsistent sizes and
    :class:`InvalidProof` (naming the check) otherwise.
    """
    check_shuffle_statement(inputs, outputs, joint_key)
    n = len(inputs)
    if not isinstance(proof, TWShuffleProof):
        raise InvalidEncoding("shuffle proof must be a TWShuffleProof")
    if proof.size != n:
        raise DeckMismatch(f"shuffle proof is for {proof.size} cards, shuffle has {n}")
    h, hs = generators(n)
    c = proof.permutation_commitments
    chain = proof.chain_commitments
    tr = _statement_transcript(context, joint_key, inputs, outputs, c)
    u = tr.challenges("u", n)
    ch = proof.challenge
    neg_ch = (L - ch) % L
    s_prime = proof.s_prime
    try:
        # t1' = s1 G - c (sum c_j - sum h_i)
        c_bar = c[0]
        for p in c[1:]:
            c_bar = add(c_bar, p)
        c_bar = sub(c_bar, _generator_sum(n))
        t1 = _lincomb([(neg_ch, c_bar)], proof.s1)
        # t2' = s2 G - c (c^_N - (prod u) h)
        u_prod = 1
        for x in u:
            u_prod = u_prod * x % L
        t2 = _lincomb([(neg_ch, chain[-1]), (ch * u_prod % L, h)], proof.s2)
        # t3' = s3 G + sum s'_i h_i - c sum u_j c_j
        neg_cu = [neg_ch * x % L for x in u]
        t3 = _lincomb([*zip(neg_cu, c, strict=True), *zip(s_prime, hs, strict=True)], proof.s3)
        # t4' = sum s'_i e'_i - Enc(0; s4) - c sum u_j e_j, component-wise
        t41 = _lincomb(
            [
                *zip(s_prime, (ct.c1 for ct in outputs), strict=True),
                *zip(neg_cu, (ct.c1 for ct in inputs), strict=True),
            ],
            (L - proof.s4) % L,
        )
        t42 = _lincomb(
            [
                *zip(s_prime, (ct.c2 for ct in outputs), strict=True),
                *zip(neg_cu, (ct.c2 for ct in inputs), strict=True),
                ((L - proof.s4) % L, joint_key),
            ]
        )
        # t^_i' = s^_i G + s'_i c^_{i-1} - c c^_i
        t_hat = [
            _lincomb([(s_prime[i], chain[i - 1] if i else h), (neg_ch, chain[i])], proof.s_hat[i])
            for i in range(n)
        ]
    except InvalidPoint as exc:
        raise InvalidProof(f"shuffle proof: degenerate recomputed commitment ({exc})") from exc
    expected = _final_challenge(tr, chain, (t1, t2, t3, t41, t42), t_hat)
    if expected != ch:
        raise InvalidProof("shuffle proof: Fiat-Shamir challenge does not match the commitments")
