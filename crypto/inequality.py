"""Proofs that a held card is *not* a given card, at O(1) group operations per card.

A seat ``s`` holding masked card ``(C1, C2)`` (with every other seat's reveal
token public) lets anyone compute ``X = C2 - sum_{j != s} T_j``.  The other
tokens were each proven to be ``x_j C1`` (:mod:`crypto.reveal`), so whatever
the ciphertext, ``X = M + x C1`` where ``M = C2 - sum_j x_j C1`` is the card
inside and ``x = log_G PK`` is the seat's key share.  So, writing
``Y_v = X - M_v``,

    card != v   <=>   M != M_v   <=>   Y_v != x C1   <=>   log_C1 Y_v != log_G PK.

That is an *inequality of discrete logarithms*, which Camenisch and Shoup
("Practical verifiable encryption and decryption of discrete logarithms",
CRYPTO 2003, section 5, proof of inequality of discrete logs) prove in
constant size: the prover picks ``r != 0`` and publishes

    Z = r (x C1 - Y_v)          (here ``= r (M_v - M)``, computed from the known face)

and proves knowledge of ``(alpha, beta) = (r x, -r)`` with the two linear relations

    Z        = alpha C1 + beta Y_v
    identity = alpha G  + beta PK

by a Schnorr-type Sigma protocol; the verifier also checks ``Z != identity``.
This replaces the CDS OR over the other 51 faces (:mod:`crypto.hand_proofs`)
for claims like Slave's "I do not hold 3 of clubs".

Sigma protocol per leaf (one leaf = one card against one forbidden encoding):
prover picks ``k, b`` uniform non-zero, sends ``A2 = k G`` and ``A1 = k C1 -
b D`` with ``D = M_v - M`` -- these equal ``a C1 + b Y_v`` and ``a G + b PK``
for ``a = k - b x``, computed with the seat's own key to save a
multiplication -- gets ``c`` and answers ``s_a = a + c alpha``, ``s_b = b + c
beta``.  The verifier checks ``s_a C1 + s_b Y_v == A1 + c Z`` and ``s_a G +
s_b PK == A2 (+ c * identity)``.  The proof is sent as ``(Z per leaf, c, (s_a,
s_b) per leaf)``; the verifier recomputes ``A1, A2`` and the challenge.

Soundness (special soundness).  From two accepting transcripts with the same
``Z, A1, A2`` and challenges ``c != c'`` one extracts ``alpha = (s_a - s_a') /
(c - c')`` and ``beta = (s_b - s_b') / (c - c')`` with ``Z = alpha C1 + beta
Y_v`` and ``alpha G + beta PK = identity``.  The group has prime order, so
``PK = x G`` for some ``x`` and the second relation gives ``alpha = -beta x``.
Substituting, ``Z = beta (Y_v - x C1)``.  If the card *were* ``v`` then ``Y_v
= x C1`` and ``Z`` would be the identity -- which the verifier rejects (a
:class:`~crypto.group.Point` never is the identity, and :meth:`Point.decode`
refuses it).  So an accepting proof implies ``Y_v != x C1``, i.e. the card is
not ``v`` (and ``beta != 0``, so ``x = -alpha / beta`` is extracted too: the
prover knows the key share).  Note that the second relation must pin ``alpha``
to ``beta x`` for *this* ``PK``; without it any ``Z`` could be explained.

Zero knowledge (honest verifier).  When ``M != M_v``, ``Z = r (M_v - M)`` for
uniform ``r != 0`` is uniform over the non-identity elements and independent
of ``M``.  Given ``c`` and ``r``, the map ``(k, b) -> (s_a, s_b) = (k - b x +
c r x, b - c r)`` is a bijection, so the responses are uniform and ``A1, A2``
are determined by the verification equations.  A simulator therefore picks
``Z`` non-identity, ``c, s_a, s_b`` uniform and solves for ``A1, A2``: the same
distribution (up to the prover's re-draw of identity-valued commitments,
probability ~2/L).

AND composition.  "None of these n cards is any of the forbidden encodings" is
the AND of every (card, encoding) leaf under *one* challenge: an AND of Sigma
protocols with a shared challenge is a Sigma protocol, and the two-transcript
extraction above works leaf by leaf, so every leaf's inequality holds.  (A
random linear combination of the leaves' ``identity = alpha G + beta PK``
relations would *not* be sound: a true leaf's ``beta`` is free given its
``Z`` and could absorb a false leaf's error, so the relations are checked one
by one.)  The Fiat-Shamir challenge (Fiat-Shamir 1986) hashes the whole
statement -- ``G``, ``PK``, deck size, forbidden handles and their encodings,
every ``(C1, X)``, every ``Z`` -- then every commitment, with the
:class:`~crypto.transcript.Context` (table, game, step, seat), following
Bernhard-Pereira-Warinschi (ASIACRYPT 2012).

Operation counts for ``n`` cards and ``f`` forbidden encodings (``N = n f`` leaves):

* prove: 3N mul + N base + 2N add (``D``: 1 add; ``Z``: 1 mul; ``A2``: 1 base;
  ``A1``: 2 mul + 1 add);
* verify: 4N mul + N base + 4N add (``Y_v``: 1 add; ``A2``: 1 base + 1 mul + 1
  add; ``A1``: 3 mul + 2 add);
* proof size ``32 (3N + 1)`` bytes.

Against the CDS OR over the 51 other faces of a 52-card deck (51 DLEQ leaves
per card: 51 base + 153 mul + 153 add to verify, per card) this is about 38
times fewer multiplications and 51 times fewer base multiplications.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from crypto.deck import Deck
from crypto.errors import DeckMismatch, InvalidEncoding, InvalidPoint, InvalidProof
from crypto.group import (
    POINT_BYTES,
    SCALAR_BYTES,
    G,
    L,
    Point,
    add,
    base_mul,
    check_scalar,
    mul,
    scalar_from_bytes,
    scalar_to_bytes,
    sub,
)
from crypto.hand_proofs import HeldCard
from crypto.transcript import Context, Transcript

PROTOCOL = "slaiga/v1/card-inequality"
_NONCE_LABEL = "card-inequality.nonces"
LEAF_BYTES = POINT_BYTES + 2 * SCALAR_BYTES
"""Per leaf: ``Z`` and the two responses."""


def proof_size(leaves: int) -> int:
    """Bytes of a proof with ``leaves`` (card, forbidden encoding) pairs."""
    return SCALAR_BYTES + leaves * LEAF_BYTES


@dataclass(frozen=True, slots=True)
class InequalityProof:
    """``Z`` per leaf, the challenge ``c`` and ``(s_a, s_b)`` per leaf (leaves card-major)."""

    zs: tuple[Point, ...]
    c: int
    s_alpha: tuple[int, ...]
    s_beta: tuple[int, ...]

    def __post_init__(self) -> None:
        if not isinstance(self.zs, tuple) or not all(isinstance(z, Point) for z in self.zs):
            raise InvalidEncoding("inequality proof: Z values must be a tuple of Points")
        if not self.zs:
            raise InvalidEncoding("inequality proof without leaves")
        if not isinstance(self.s_alpha, tuple) or not isinstance(self.s_beta, tuple):
            raise InvalidEncoding("inequality proof: responses must be tuples")
        if not len(self.zs) == len(self.s_alpha) == len(self.s_beta):
            raise InvalidEncoding(
                f"inequality proof: {len(self.zs)} Z values, {len(self.s_alpha)} and "
                f"{len(self.s_beta)} responses"
            )
        check_scalar(self.c, what="inequality challenge")
        for s in self.s_alpha:
            check_scalar(s, what="inequality response s_alpha")
        for s in self.s_beta:
            check_scalar(s, what="inequality response s_beta")

    @property
    def leaves(self) -> int:
        return len(self.zs)

    def encode(self) -> bytes:
        """``Z_1 .. Z_N || c || s_a1 s_b1 .. s_aN s_bN`` (32 bytes each)."""
        out = bytearray()
        for z in self.zs:
            out += z.data
        out += self.c.to_bytes(SCALAR_BYTES, "little")
        for sa, sb in zip(self.s_alpha, self.s_beta, strict=True):
            out += sa.to_bytes(SCALAR_BYTES, "little") + sb.to_bytes(SCALAR_BYTES, "little")
        return bytes(out)

    @classmethod
    def decode(cls, b: bytes, leaves: int) -> InequalityProof:
        """Decode a proof of ``leaves`` leaves: every ``Z`` fully validated (canonical, in
        the subgroup, not the identity), every scalar reduced."""
        if type(leaves) is not int or leaves < 1:
            raise InvalidEncoding("inequality proof needs at least one leaf")
        if type(b) is not bytes or len(b) != proof_size(leaves):
            raise InvalidEncoding(f"inequality proof must be {proof_size(leaves)} bytes")
        zs = tuple(Point.decode(b[i * POINT_BYTES : (i + 1) * POINT_BYTES]) for i in range(leaves))
        pos = leaves * POINT_BYTES
        c = scalar_from_bytes(b[pos : pos + SCALAR_BYTES])
        pos += SCALAR_BYTES
        sa, sb = [], []
        for _ in range(leaves):
            sa.append(scalar_from_bytes(b[pos : pos + SCALAR_BYTES]))
            sb.append(scalar_from_bytes(b[pos + SCALAR_BYTES : pos + 2 * SCALAR_BYTES]))
            pos += 2 * SCALAR_BYTES
        return cls(zs, c, tuple(sa), tuple(sb))


# ----------------------------------------------------------------- statement


def _forbidden_sorted(
    forbidden: Collection[int], deck: Deck, pad_to: int = 0, pad_with: int | None = None
) -> list[int]:
    """The statement's forbidden list: the distinct handles in ascending order, then
    ``pad_with`` repeated until the list has ``pad_to`` entries (see :func:`prove_none_of`)."""
    if not isinstance(deck, Deck):
        raise InvalidEncoding("expected a Deck")
    out = sorted(set(forbidden))
    if not out:
        raise InvalidEncoding("forbidden card set is empty")
    for i in out:
        deck.point(i)  # type and range check
    if pad_with is None:
        if pad_to:
            raise InvalidEncoding("padding a forbidden set needs a filler handle")
        return out
    if type(pad_to) is not int or pad_to < len(out):
        raise InvalidEncoding(f"cannot pad {len(out)} forbidden handles to {pad_to!r}")
    if pad_with not in out:
        raise InvalidEncoding("the filler of a padded forbidden set must itself be forbidden")
    return out + [pad_with] * (pad_to - len(out))


def _check_held(public: Point, held: Sequence[HeldCard]) -> None:
    if not isinstance(public, Point):
        raise InvalidEncoding("key share must be a Point")
    if not held:
        raise DeckMismatch("inequality proof over no cards")
    for hc in held:
        if not isinstance(hc, HeldCard) or not (
            isinstance(hc.c1, Point) and isinstance(hc.x, Point)
        ):
            raise InvalidEncoding("held cards must be HeldCards of Points")


def _transcript(
    context: Context,
    public: Point,
    held: Sequence[HeldCard],
    forbidden: list[int],
    deck: Deck,
    zs: Sequence[Point],
) -> Transcript:
    """Everything the proof is about, in order: generator, key share, deck, forbidden
    handles and their encodings, every held card, every ``Z``."""
    t = _statement_transcript(context, public, held, forbidden, deck)
    t.append_points("Z", zs)
    return t


def _statement_transcript(
    context: Context, public: Point, held: Sequence[HeldCard], forbidden: list[int], deck: Deck
) -> Transcript:
    """:func:`_transcript` before the ``Z`` (the prover's nonces are bound to it)."""
    t = Transcript(PROTOCOL, context)
    t.append_point("G", G)
    t.append_point("key_share", public)
    t.append_int("deck_size", deck.size)
    t.append("forbidden", b"".join(i.to_bytes(2, "little") for i in forbidden))
    t.append_points("forbidden_points", [deck.points[v] for v in forbidden])
    t.append_points("held", [p for hc in held for p in (hc.c1, hc.x)])
    return t


def _lincomb(terms: Sequence[tuple[int, Point]], what: str) -> Point:
    """``sum k_i P_i`` skipping zero scalars (fixed-base path for ``G``); raises
    :class:`InvalidProof` if the result (or a partial sum) is the identity, which an
    honest prover's commitment is not, except with probability ~1/L."""
    acc: Point | None = None
    try:
        for k, p in terms:
            if k == 0:
                continue
            term = base_mul(k) if p == G else mul(k, p)
            acc = term if acc is None else add(acc, term)
    except InvalidPoint as exc:
        raise InvalidProof(f"recomputed {what} is the identity") from exc
    if acc is None:
        raise InvalidProof(f"recomputed {what} is the identity")
    return acc


# ----------------------------------------------------------------- prove / verify


def prove_none_of(
    secret: int,
    public: Point,
    held: Sequence[HeldCard],
    indices: Sequence[int],
    forbidden: Collection[int],
    deck: Deck,
    context: Context,
    *,
    pad_to: int = 0,
    pad_with: int | None = None,
    insecure_test_seed: bytes | None = None,
) -> InequalityProof:
    """Prove "none of my ``held`` cards is any of the handles ``forbidden``".

    With ``pad_with`` (a handle in ``forbidden``) the forbidden list is padded
    to ``pad_to`` entries by repeating it, so the proof has ``len(held) *
    pad_to`` leaves whatever the size of ``forbidden``: neither the proof's
    size nor the work to make or check it tells how many handles are
    forbidden.  A repeated leaf is just another true inequality, so soundness
    is unchanged; the verifier must pad the same way.

    ``indices`` are the true handles of the held cards (the prover knows them);
    if one of them is forbidden the claim is false and :class:`InvalidProof` is
    raised.  A wrong index (or a wrong ``secret``) only yields a proof that does
    not verify.  Every random scalar is hedged (:mod:`crypto.nonces`) on the
    statement, the secret, the true handles and fresh randomness, which
    ``insecure_test_seed`` replaces for pinned vectors only.
    """
    check_scalar(secret, nonzero=True, what="secret key")
    _check_held(public, held)
    if len(indices) != len(held):
        raise DeckMismatch(f"{len(indices)} indices for {len(held)} held cards")
    bad = _forbidden_sorted(forbidden, deck, pad_to, pad_with)
    bad_set = set(bad)
    for pos, idx in enumerate(indices):
        deck.point(idx)  # type and range check
        if idx in bad_set:
            raise InvalidProof(f"cannot prove a false statement: held card {pos} is forbidden")
    t = _statement_transcript(context, public, held, bad, deck)
    rand = t.nonces(
        _NONCE_LABEL,
        scalar_to_bytes(secret),
        b"".join(i.to_bytes(2, "little") for i in indices),
        insecure_test_seed=insecure_test_seed,
    )
    zs: list[Point] = []
    rs: list[int] = []
    ds: list[Point] = []
    for idx in indices:
        m = deck.points[idx]
        for v in bad:
            d = sub(deck.points[v], m)  # M_v - M: never the identity (distinct encodings)
            r = rand()
            zs.append(mul(r, d))
            rs.append(r)
            ds.append(d)
    t.append_points("Z", zs)
    commitments: list[Point] = []
    nonces: list[tuple[int, int]] = []
    for leaf, d in enumerate(ds):
        c1 = held[leaf // len(bad)].c1
        while True:  # re-draw in the ~1/L case of an identity commitment
            k, b = rand(), rand()
            try:
                a1 = sub(mul(k, c1), mul(b, d))  # = a C1 + b Y_v for a = k - b x
            except InvalidPoint:
                continue
            break
        commitments += (a1, base_mul(k))  # A2 = a G + b PK = k G
        nonces.append((k, b))
    t.append_points("commitments", commitments)
    c = t.challenge("c")
    s_alpha = []
    s_beta = []
    for (k, b), r in zip(nonces, rs, strict=True):
        a = (k - b * secret) % L
        s_alpha.append((a + c * r * secret) % L)  # alpha = r x
        s_beta.append((b - c * r) % L)  # beta = -r
    return InequalityProof(tuple(zs), c, tuple(s_alpha), tuple(s_beta))


def verify_none_of(
    public: Point,
    held: Sequence[HeldCard],
    forbidden: Collection[int],
    deck: Deck,
    proof: InequalityProof,
    context: Context,
    *,
    pad_to: int = 0,
    pad_with: int | None = None,
) -> None:
    """Raise :class:`InvalidProof` unless ``proof`` shows that none of the ``held`` cards
    of the seat with key share ``public`` is any handle in ``forbidden`` (padded as
    the prover's ``pad_to`` and ``pad_with``, see :func:`prove_none_of`)."""
    if not isinstance(proof, InequalityProof):
        raise InvalidEncoding("expected an InequalityProof")
    _check_held(public, held)
    bad = _forbidden_sorted(forbidden, deck, pad_to, pad_with)
    n_leaves = len(held) * len(bad)
    if proof.leaves != n_leaves:
        raise InvalidProof(
            f"inequality proof has {proof.leaves} leaves, the statement needs {n_leaves}"
        )
    commitments: list[Point] = []
    c = proof.c
    neg_c = (L - c) % L
    leaf = 0
    for pos, hc in enumerate(held):
        for v in bad:
            try:
                y = sub(hc.x, deck.points[v])
            except InvalidPoint:
                # X == M_v would mean x C1 is the identity: impossible for a real card
                raise InvalidProof(f"held card {pos} point equals a card encoding") from None
            z = proof.zs[leaf]  # a Point: never the identity
            sa, sb = proof.s_alpha[leaf], proof.s_beta[leaf]
            a1 = _lincomb(((sa, hc.c1), (sb, y), (neg_c, z)), f"commitment A1 of leaf {leaf}")
            a2 = _lincomb(((sa, G), (sb, public)), f"commitment A2 of leaf {leaf}")
            commitments += (a1, a2)
            leaf += 1
    t = _transcript(context, public, held, bad, deck, proof.zs)
    t.append_points("commitments", commitments)
    if t.challenge("c") != c:
        raise InvalidProof(
            f"inequality proof of seat {context.seat} ({len(held)} cards, none of "
            f"{len(bad)} forbidden) does not verify (challenge mismatch)"
        )


def prove_card_not(
    secret: int,
    public: Point,
    held: HeldCard,
    index: int,
    forbidden: int,
    deck: Deck,
    context: Context,
    *,
    insecure_test_seed: bytes | None = None,
) -> InequalityProof:
    """Prove "my card is not handle ``forbidden``" (one leaf)."""
    return prove_none_of(
        secret,
        public,
        [held],
        [index],
        [forbidden],
        deck,
        context,
        insecure_test_seed=insecure_test_seed,
    )


def verify_card_not(
    public: Point,
    held: HeldCard,
    forbidden: int,
    deck: Deck,
    proof: InequalityProof,
    context: Context,
) -> None:
    """Raise :class:`InvalidProof` unless the held card is not handle ``forbidden``."""
    verify_none_of(public, [held], [forbidden], deck, proof, context)
