"""Proofs that held cards are *not* any of a list of cards: a blinded comparison.

A seat ``s`` holding masked card ``(C1, C2)`` (with every other seat's reveal
token public) lets anyone compute ``X = C2 - sum_{j != s} T_j``.  The other
tokens were each proven to be ``x_j C1`` (:mod:`crypto.reveal`), so whatever
the ciphertext, ``X = M + x C1`` where ``M`` is the card inside and ``x =
log_G PK`` is the seat's key share.  The claim "none of my cards ``i = 1..n``
is any of the forbidden encodings ``M_v`` for ``v`` in the list ``F = (v_1 ..
v_f)``" is ``M_i != M_{v_j}`` for every pair.

**The proof.**  The prover draws one secret scalar ``r != 0`` and publishes
the *blinded* cards

    P_j = r M_{v_j}    for every forbidden entry j = 1..f,
    Q_i = r M_i        for every held card i = 1..n,

then proves, with one Sigma protocol for the witness ``(r, alpha = r x)``, the
``f + n + 1`` linear relations

    P_j      = r M_{v_j}                (j = 1..f)
    Q_i      = r X_i - alpha C1_i       (i = 1..n)
    identity = alpha G - r PK.

The verifier checks those, and that no ``Q_i`` equals any ``P_j``.  Points are
compared by their encodings, which :meth:`~crypto.group.Point.decode` makes
canonical, so that check is a set lookup and costs no group operation.

This is the blinding of the plaintext equivalence test of Jakobsson and Juels
("Mix and match: secure function evaluation via ciphertexts", ASIACRYPT 2000):
raised to a secret random power, two different plaintexts stay different and
equal ones stay equal, and nothing else about them is left.  The proof of the
relations is a Schnorr-type AND composition under one challenge (Cramer,
Damgard and Schoenmakers, CRYPTO 1994).  The version before this one proved
each (card, forbidden) pair apart with the inequality of discrete logarithms of
Camenisch and Shoup (CRYPTO 2003, section 5), a fresh ``r`` per pair: ``4 n f``
multiplications to check, where this proof needs ``2 f + 3 n + 1``.

*Soundness* (special soundness).  From two accepting transcripts with the same
commitments and challenges ``c != c'`` one extracts ``r = (s_r - s_r') / (c -
c')`` and ``alpha = (s_a - s_a') / (c - c')`` satisfying every relation.  The
group has prime order, so ``PK = x G`` for some ``x``, and the last relation
gives ``alpha = r x``.  No ``P_j`` is the identity (decoding refuses it), so
``r != 0``.  Then ``Q_i = r (X_i - x C1_i) = r M_i`` with ``M_i`` the card
inside, and ``Q_i != P_j`` means ``r M_i != r M_{v_j}``, so ``M_i != M_{v_j}``.
The last relation is what ties ``alpha`` to *this* seat's key: without it any
``Q_i`` could be explained.

*Zero knowledge* (honest verifier, computational).  The ``P_j`` are distributed
exactly as ``r' M_{v_j}`` for a simulator's own ``r'``; the ``Q_i`` are ``r``
times cards the verifier does not know, among the non-forbidden encodings.
Telling ``Q_i = r M_a`` from ``Q_i = r M_b`` given the pairs ``(M_v, r M_v)`` is
deciding whether ``(M_v, r M_v, M_a, Q_i)`` is a Diffie-Hellman tuple, which is
hard under the DDH assumption in this group: the deck's encodings are hashed to
the group (:mod:`crypto.deck`), so no discrete logarithm between them is known.
So a simulator may draw the ``Q_i`` at random (distinct, and not among the
``P_j``) and simulate the Sigma transcript for its challenge as usual.  What
the proof shows besides the claim: ``n`` and ``f``, and that the ``n`` cards
are distinct (they are: distinct handles have distinct encodings, also in a
104-card deck).  A fresh ``r`` per proof keeps two proofs unlinkable (DDH
again).  Where the previous version was perfectly zero knowledge, this one
rests on DDH, like the ElGamal masking of every card already does.

The Fiat-Shamir challenge (Fiat-Shamir 1986) hashes the whole statement --
``G``, ``PK``, deck size, forbidden handles and their encodings, every ``(C1,
X)`` -- then every ``P_j`` and ``Q_i``, then every commitment, with the
:class:`~crypto.transcript.Context` (table, game, step, seat), following
Bernhard, Pereira and Warinschi (ASIACRYPT 2012).

A padded list (:func:`prove_none_of`'s ``pad_to``) repeats one forbidden
handle; each entry is proven and checked as its own relation, so the work is
the same for every list of that length.

Operation counts for ``n`` cards and ``f`` forbidden entries:

* prove: ``2f + 3n`` mul + 1 base (``P``: f; ``Q``: n; ``T``: f; ``U``: 2n; ``W``: 1 base);
* verify: ``2f + 3n + 1`` mul + 1 base + ``f + 2n + 1`` add, and ``f + n`` point decodings;
* proof size ``32 (f + n) + 96`` bytes.

Slave's sealed gift of two cards over eleven others (``f = 52 - 11 = 41`` after
padding: p2p/RECORD_FORMAT.md §9, `HighestGiven`) takes 116 multiplications to
check here, against 1,804 (and 451 base multiplications) with a proof per pair.
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
)
from crypto.hand_proofs import HeldCard
from crypto.transcript import Context, Transcript

PROTOCOL = "slaiga/v2/card-inequality"
_NONCE_LABEL = "card-inequality.nonces"
_SCALARS = 3  # c, s_r, s_alpha


def proof_size(cards: int, forbidden: int) -> int:
    """Bytes of a proof about ``cards`` held cards and ``forbidden`` list entries."""
    return POINT_BYTES * (cards + forbidden) + _SCALARS * SCALAR_BYTES


@dataclass(frozen=True, slots=True)
class InequalityProof:
    """The blinded forbidden cards ``P``, the blinded held cards ``Q``, the challenge
    ``c`` and the two responses ``s_r``, ``s_alpha``."""

    ps: tuple[Point, ...]
    qs: tuple[Point, ...]
    c: int
    s_r: int
    s_alpha: int

    def __post_init__(self) -> None:
        for name, pts in (("P", self.ps), ("Q", self.qs)):
            if not isinstance(pts, tuple) or not all(isinstance(p, Point) for p in pts):
                raise InvalidEncoding(f"inequality proof: {name} values must be a tuple of Points")
            if not pts:
                raise InvalidEncoding(f"inequality proof without {name} values")
        check_scalar(self.c, what="inequality challenge")
        check_scalar(self.s_r, what="inequality response s_r")
        check_scalar(self.s_alpha, what="inequality response s_alpha")

    def encode(self) -> bytes:
        """``P_1 .. P_f || Q_1 .. Q_n || c || s_r || s_alpha`` (32 bytes each)."""
        return b"".join(
            (
                *(p.data for p in self.ps),
                *(q.data for q in self.qs),
                *(scalar_to_bytes(k) for k in (self.c, self.s_r, self.s_alpha)),
            )
        )

    @classmethod
    def decode(cls, b: bytes, cards: int, forbidden: int) -> InequalityProof:
        """Decode a proof about ``cards`` held cards and ``forbidden`` list entries: every
        point fully validated (canonical, in the subgroup, not the identity), every
        scalar reduced."""
        for what, k in (("held card", cards), ("forbidden entry", forbidden)):
            if type(k) is not int or k < 1:
                raise InvalidEncoding(f"inequality proof needs at least one {what}")
        size = proof_size(cards, forbidden)
        if type(b) is not bytes or len(b) != size:
            raise InvalidEncoding(f"inequality proof must be {size} bytes")
        pts = [
            Point.decode(b[i : i + POINT_BYTES])
            for i in range(0, POINT_BYTES * (cards + forbidden), POINT_BYTES)
        ]
        pos = POINT_BYTES * (cards + forbidden)
        c, s_r, s_alpha = (
            scalar_from_bytes(b[pos + k * SCALAR_BYTES : pos + (k + 1) * SCALAR_BYTES])
            for k in range(_SCALARS)
        )
        return cls(tuple(pts[:forbidden]), tuple(pts[forbidden:]), c, s_r, s_alpha)


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


def _statement_transcript(
    context: Context, public: Point, held: Sequence[HeldCard], forbidden: list[int], deck: Deck
) -> Transcript:
    """Everything the proof is about, in order: generator, key share, deck, forbidden
    handles and their encodings, every held card (the prover's nonces are bound to it)."""
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
    honest prover's commitment is not (it re-draws in that ~1/L case)."""
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
    to ``pad_to`` entries by repeating it, so the proof has ``pad_to`` forbidden
    entries whatever the size of ``forbidden``: neither the proof's size nor the
    work to make or check it tells how many handles are forbidden (a repeated
    entry is computed again, not looked up).  A repeated entry is just another
    true relation, so soundness is unchanged; the verifier must pad the same way.

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
    r = rand()  # never zero
    ps = [mul(r, deck.points[v]) for v in bad]
    qs = [mul(r, deck.points[idx]) for idx in indices]
    t.append_points("P", ps)
    t.append_points("Q", qs)
    while True:  # re-draw in the ~1/L case of an identity commitment
        k_r, k_a = rand(), rand()
        try:
            ts = [mul(k_r, deck.points[v]) for v in bad]
            # U_i = k_r X_i - k_a C1_i = k_r M_i + (k_r x - k_a) C1_i
            w = (k_r * secret - k_a) % L
            us = [
                add(mul(k_r, deck.points[idx]), mul(w, hc.c1))
                for idx, hc in zip(indices, held, strict=True)
            ]
            # W = k_a G - k_r PK = (k_a - k_r x) G
            big_w = base_mul((L - w) % L)
        except InvalidPoint:
            continue
        break
    t.append_points("T", ts)
    t.append_points("U", us)
    t.append_point("W", big_w)
    c = t.challenge("c")
    s_r = (k_r + c * r) % L
    s_alpha = (k_a + c * r * secret) % L  # alpha = r x
    return InequalityProof(tuple(ps), tuple(qs), c, s_r, s_alpha)


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
    if len(proof.ps) != len(bad) or len(proof.qs) != len(held):
        raise InvalidProof(
            f"inequality proof is about {len(proof.qs)} cards and {len(proof.ps)} forbidden"
            f" entries, the statement about {len(held)} and {len(bad)}"
        )
    blinded_forbidden = {p.data for p in proof.ps}
    for pos, q in enumerate(proof.qs):
        if q.data in blinded_forbidden:
            raise InvalidProof(
                f"inequality proof of seat {context.seat}: held card {pos} is a forbidden card"
            )
    c, s_r, s_a = proof.c, proof.s_r, proof.s_alpha
    neg_c = (L - c) % L
    ts = [
        _lincomb(((s_r, deck.points[v]), (neg_c, p)), f"commitment T of forbidden entry {j}")
        for j, (v, p) in enumerate(zip(bad, proof.ps, strict=True))
    ]
    us = [
        _lincomb(((s_r, hc.x), ((L - s_a) % L, hc.c1), (neg_c, q)), f"commitment U of card {i}")
        for i, (hc, q) in enumerate(zip(held, proof.qs, strict=True))
    ]
    big_w = _lincomb(((s_a, G), ((L - s_r) % L, public)), "commitment W")
    t = _statement_transcript(context, public, held, bad, deck)
    t.append_points("P", proof.ps)
    t.append_points("Q", proof.qs)
    t.append_points("T", ts)
    t.append_points("U", us)
    t.append_point("W", big_w)
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
