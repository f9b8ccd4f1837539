"""Zero-knowledge proofs about the cards a seat holds: OR, threshold, "all lower than".

A seat ``j`` holding masked card ``(c1, c2)`` knows its face; once every other
seat's reveal token is public, anyone can compute ``X = c2 - sum_{k != j} T_k
= M + x_j c1``.  So "my card is ``v``" is the DLEQ statement
``log_G PK_j == log_c1 (X - M_v)`` (Chaum-Pedersen 1992), and claims about
hidden cards are monotone formulas over such statements:

* "my card is in S": OR over ``v in S`` -- the Cramer-Damgard-Schoenmakers
  (CRYPTO 1994) "proofs of partial knowledge" composition;
* "at least t of these n cards are in S": a CDS *threshold* composition over the
  per-card ORs.  "Fewer than 3 of my n cards are of suit T" is "at least n-2
  are in the complement of T";
* "each of these cards is lower than v" (Slave's exchange): every card in the
  set of lower cards, an AND (threshold n of n).

Construction (CDS 1994, with Shamir sharing of challenges): a threshold node
``t`` of ``n`` gives its children the challenges ``f(1), ..., f(n)`` of a
polynomial ``f`` of degree ``n - t`` with ``f(0)`` = the node's challenge.  The
prover picks the challenges of ``n - t`` children it cannot (or need not)
answer honestly *before* seeing the root challenge and simulates them; the
remaining ``t`` challenges are then forced, so at least ``t`` children must
be true.  OR is ``t = 1`` and AND is ``t = n``.  Leaves are Chaum-Pedersen
DLEQ proofs; the root challenge comes from the Fiat-Shamir transcript over the
whole statement tree, every commitment and the context
(Fiat-Shamir 1986; Bernhard-Pereira-Warinschi 2012).

The proof is ``(c, coefficients of f per threshold node, one response per
leaf)``: ``32 * (1 + sum(n - t) + leaves)`` bytes.

Operation counts, for a statement with N leaves of which R are answered
honestly (R = number of cards the prover uses as true):

* prove: N base + (R + 2 (N - R)) mul + (N + (N - R)) add
  (each leaf first computes ``X - M_v``: 1 add; a simulated leaf's first
  commitment ``s G - e PK`` is computed as ``(s - e x) G`` because the seat
  knows its own key ``x``, see :func:`prove_composite`);
* verify: N base + 3N mul + 3N add.

For "fewer than 3 of 6 cards of suit T" in a 52-card deck: N = 6 * 39 = 234.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from crypto.deck import Deck
from crypto.dleq import lincomb_sub, times
from crypto.elgamal import Ciphertext
from crypto.errors import DeckMismatch, InvalidEncoding, InvalidPoint, InvalidProof
from crypto.group import SCALAR_BYTES, G, L, Point, check_scalar, scalar_to_bytes, sub
from crypto.reveal import unmask
from crypto.transcript import Context, Transcript

PROTOCOL = "slaiga/v1/hand-proof"
_NONCE_LABEL = "hand-proof.nonces"


# ----------------------------------------------------------------- statements


@dataclass(frozen=True, slots=True)
class Leaf:
    """DLEQ statement ``log_g xg == log_h xh``."""

    g: Point
    h: Point
    xg: Point
    xh: Point


@dataclass(frozen=True, slots=True)
class Threshold:
    """At least ``t`` of ``children`` hold."""

    t: int
    children: tuple[Leaf | Threshold, ...]

    def __post_init__(self) -> None:
        if not self.children:
            raise InvalidEncoding("threshold node without children")
        if type(self.t) is not int or not 1 <= self.t <= len(self.children):
            raise InvalidEncoding(f"threshold {self.t} not in 1..{len(self.children)}")


Node = Leaf | Threshold


@dataclass(frozen=True, slots=True)
class CompositeProof:
    """Root challenge, polynomial coefficients per threshold node (preorder) and
    one response per leaf (preorder)."""

    c: int
    coefficients: tuple[tuple[int, ...], ...]
    responses: tuple[int, ...]

    def __post_init__(self) -> None:
        check_scalar(self.c, what="root challenge")
        for cs in self.coefficients:
            for k in cs:
                check_scalar(k, what="coefficient")
        for s in self.responses:
            check_scalar(s, what="response")

    def encode(self) -> bytes:
        """Scalars only; the shape follows from the statement (see :meth:`decode`)."""
        flat = [self.c, *(k for cs in self.coefficients for k in cs), *self.responses]
        return b"".join(k.to_bytes(SCALAR_BYTES, "little") for k in flat)

    @classmethod
    def decode(cls, b: bytes, statement: Node) -> CompositeProof:
        """Decode for a known statement shape; every scalar must be < L."""
        degrees, leaves = _shape(statement)
        n = 1 + sum(degrees) + leaves
        if type(b) is not bytes or len(b) != n * SCALAR_BYTES:
            raise InvalidEncoding(f"composite proof must be {n * SCALAR_BYTES} bytes")
        ks = [
            int.from_bytes(b[i : i + SCALAR_BYTES], "little")
            for i in range(0, len(b), SCALAR_BYTES)
        ]
        pos = 1
        coeffs = []
        for d in degrees:
            coeffs.append(tuple(ks[pos : pos + d]))
            pos += d
        return cls(ks[0], tuple(coeffs), tuple(ks[pos:]))


def _shape(node: Node) -> tuple[list[int], int]:
    degrees: list[int] = []
    leaves = 0

    def walk(nd: Node) -> None:
        nonlocal leaves
        if isinstance(nd, Leaf):
            leaves += 1
            return
        degrees.append(len(nd.children) - nd.t)
        for ch in nd.children:
            walk(ch)

    walk(node)
    return degrees, leaves


def _absorb_statement(t: Transcript, node: Node) -> None:
    if isinstance(node, Leaf):
        t.append_points("leaf", (node.g, node.h, node.xg, node.xh))
        return
    t.append_int("threshold.t", node.t)
    t.append_int("threshold.n", len(node.children))
    for ch in node.children:
        _absorb_statement(t, ch)


def _poly_eval(c0: int, coeffs: Sequence[int], x: int) -> int:
    """``f(x)`` for ``f = c0 + sum(coeffs[i] x^(i+1))`` (Horner).

    ``x`` is a small child index, so the accumulator is reduced mod L only once
    at the end: it grows by ``log2(x)`` bits per step, which is far cheaper
    than a 253-bit reduction per step.
    """
    acc = 0
    for a in reversed(coeffs):
        acc = (acc + a) * x
    return (acc + c0) % L


def _interpolate(c0: int, xs: Sequence[int], ys: Sequence[int]) -> list[int]:
    """Coefficients ``a_1..a_d`` (d = len(xs)) of the degree-d polynomial with
    ``f(0) = c0`` and ``f(xs[i]) = ys[i]``.

    Lagrange interpolation in O(d^2) operations: ``P(x) = prod (x - x_m)`` is
    built once with exact integer coefficients (the nodes are small child
    indices, so no reduction is needed), each basis polynomial is ``P / (x - x_k)``
    by synthetic division, scaled by ``y_k / prod_{m != k} (x_k - x_m)``.  Only
    the scaled sums are reduced mod L, at the end.
    """
    nodes = [0, *xs]
    values = [c0, *ys]
    if len(values) != len(nodes):
        raise InvalidEncoding("interpolation needs one value per node")
    d = len(xs)
    if d == 0:
        return []
    poly = [1]  # ascending coefficients of prod (x - x_m)
    for m in nodes:
        poly = [-m * poly[0], *(poly[i - 1] - m * poly[i] for i in range(1, len(poly))), 1]
    acc = [0] * (d + 1)
    for xk, yk in zip(nodes, values, strict=True):
        denom = 1
        for xm in nodes:
            if xm != xk:
                denom *= xk - xm
        scale = yk * pow(denom % L, -1, L) % L
        q = 1  # leading coefficient of P / (x - xk)
        acc[d] += scale
        for i in range(d, 1, -1):
            q = poly[i] + xk * q
            acc[i - 1] += scale * q
    return [a % L for a in acc[1:]]


# ----------------------------------------------------------------- generic prover


def prove_composite(
    statement: Node,
    witnesses: dict[int, int],
    transcript: Transcript,
    *,
    left_secret: int | None = None,
    insecure_test_seed: bytes | None = None,
) -> CompositeProof:
    """Prove ``statement``; ``witnesses`` maps leaf preorder index -> discrete log.

    Raises :class:`InvalidProof` if the witnessed leaves do not satisfy the
    statement (a seat cannot prove a false claim).  The nodes are flattened in
    preorder, so a parent is always handled before its children.

    ``left_secret``, when given, is ``x`` with ``xg == x g`` in *every* leaf
    (true for hand proofs: the left half of each leaf is the seat's own key,
    only the right half ``X - M_v`` differs).  A simulated leaf's first
    commitment ``s g - e xg`` then equals ``(s - e x) g`` -- the same point,
    so the proof is unchanged -- at one base multiplication instead of a
    base multiplication, a multiplication and an addition.  A wrong
    ``left_secret`` only yields a proof that fails to verify.

    Nonces, simulated responses and chosen challenges are hedged
    (:mod:`crypto.nonces`) on the transcript so far, the witnesses and fresh
    randomness (``insecure_test_seed`` replaces it in tests only).
    """
    if left_secret is not None:
        check_scalar(left_secret, nonzero=True, what="left secret")
    witness_bytes = [
        i.to_bytes(8, "little") + scalar_to_bytes(witnesses[i]) for i in sorted(witnesses)
    ]
    rand = transcript.nonces(_NONCE_LABEL, *witness_bytes, insecure_test_seed=insecure_test_seed)
    nodes: list[Node] = []
    leaf_of: list[int] = []  # node -> leaf preorder index, or -1 for threshold nodes
    kids: list[list[int]] = []
    leaf_nodes: list[int] = []

    def flatten(nd: Node) -> int:
        my = len(nodes)
        nodes.append(nd)
        kids.append([])
        if isinstance(nd, Leaf):
            leaf_of.append(len(leaf_nodes))
            leaf_nodes.append(my)
        else:
            leaf_of.append(-1)
            for ch in nd.children:
                kids[my].append(flatten(ch))
        return my

    flatten(statement)
    n_leaves = len(leaf_nodes)
    sat = [False] * len(nodes)
    for my in reversed(range(len(nodes))):  # children come after their parent
        nd = nodes[my]
        if isinstance(nd, Leaf):
            sat[my] = leaf_of[my] in witnesses
        else:
            sat[my] = sum(sat[k] for k in kids[my]) >= nd.t
    if not sat[0]:
        raise InvalidProof("cannot prove a false statement")

    simulated = [False] * len(nodes)
    fixed: dict[int, int] = {}  # simulated node -> its challenge, chosen in advance
    nonces: dict[int, int] = {}
    coeffs: dict[int, list[int]] = {}
    commitments: list[Point] = [G] * (2 * n_leaves)
    responses = [0] * n_leaves

    for my, nd in enumerate(nodes):
        li = leaf_of[my]
        if isinstance(nd, Leaf):
            if simulated[my]:
                e, s = fixed[my], rand()
                responses[li] = s
                k = (s - e * left_secret) % L if left_secret is not None else 0
                commitments[2 * li] = times(k, nd.g) if k else lincomb_sub(s, nd.g, e, nd.xg)
                commitments[2 * li + 1] = lincomb_sub(s, nd.h, e, nd.xh)
            else:
                w = rand()
                nonces[li] = w
                commitments[2 * li] = times(w, nd.g)
                commitments[2 * li + 1] = times(w, nd.h)
            continue
        d = len(nd.children) - nd.t
        if simulated[my]:
            cs = [rand() for _ in range(d)]
            coeffs[my] = cs
            for i, k in enumerate(kids[my], start=1):
                simulated[k] = True
                fixed[k] = _poly_eval(fixed[my], cs, i)
            continue
        unsat = [k for k in kids[my] if not sat[k]]
        spare = [k for k in kids[my] if sat[k]]
        for k in unsat + spare[len(spare) - (d - len(unsat)) :] if d > len(unsat) else unsat:
            simulated[k] = True
            fixed[k] = rand()

    _absorb_statement(transcript, statement)
    transcript.append_points("commitments", commitments)
    challenge = {0: transcript.challenge("c")}

    for my, nd in enumerate(nodes):
        if simulated[my]:
            continue
        e = challenge[my]
        if isinstance(nd, Leaf):
            li = leaf_of[my]
            responses[li] = (nonces[li] + e * witnesses[li]) % L
            continue
        chosen = [(i, fixed[k]) for i, k in enumerate(kids[my], start=1) if simulated[k]]
        cs = _interpolate(e, [i for i, _ in chosen], [y for _, y in chosen])
        coeffs[my] = cs
        for i, k in enumerate(kids[my], start=1):
            if not simulated[k]:
                challenge[k] = _poly_eval(e, cs, i)

    return CompositeProof(
        challenge[0], tuple(tuple(coeffs[k]) for k in sorted(coeffs)), tuple(responses)
    )


def verify_composite(statement: Node, proof: CompositeProof, transcript: Transcript) -> None:
    """Raise :class:`InvalidProof` unless ``proof`` proves ``statement``."""
    if not isinstance(proof, CompositeProof):
        raise InvalidEncoding("expected a CompositeProof")
    degrees, n_leaves = _shape(statement)
    if len(proof.coefficients) != len(degrees) or any(
        len(cs) != d for cs, d in zip(proof.coefficients, degrees, strict=True)
    ):
        raise InvalidProof("composite proof has the wrong number of coefficients")
    if len(proof.responses) != n_leaves:
        raise InvalidProof("composite proof has the wrong number of responses")
    commitments: list[Point] = []
    coeff_iter = iter(proof.coefficients)
    resp_iter = iter(proof.responses)

    def walk(nd: Node, e: int) -> None:
        if isinstance(nd, Leaf):
            s = next(resp_iter)
            commitments.append(lincomb_sub(s, nd.g, e, nd.xg))
            commitments.append(lincomb_sub(s, nd.h, e, nd.xh))
            return
        coeffs = next(coeff_iter)
        for i, ch in enumerate(nd.children, start=1):
            walk(ch, _poly_eval(e, coeffs, i))

    walk(statement, proof.c)
    _absorb_statement(transcript, statement)
    transcript.append_points("commitments", commitments)
    if transcript.challenge("c") != proof.c:
        raise InvalidProof("composite proof does not verify (challenge mismatch)")


# ----------------------------------------------------------------- hand proofs


@dataclass(frozen=True, slots=True)
class HeldCard:
    """A card held by the proving seat: ``c1`` and ``x = c2 - (other seats' tokens)``."""

    c1: Point
    x: Point


def held_card(ct: Ciphertext, other_tokens: Sequence[Point]) -> HeldCard:
    """Compute ``X = c2 - sum(other tokens)`` (one add per token): an unmask without the
    holder's own token."""
    try:
        x = unmask(ct, other_tokens)
    except InvalidProof as exc:
        raise InvalidProof("held card point is the identity") from exc
    return HeldCard(ct.c1, x)


def _allowed_sorted(allowed: Collection[int], deck: Deck) -> list[int]:
    out = sorted(set(allowed))
    if not out:
        raise InvalidEncoding("allowed card set is empty")
    for i in out:
        deck.point(i)  # range check
    return out


def _statement(
    public: Point, held: Sequence[HeldCard], allowed: list[int], at_least: int, deck: Deck
) -> Threshold:
    cards = []
    for hc in held:
        leaves = []
        for v in allowed:
            try:
                y = sub(hc.x, deck.points[v])
            except InvalidPoint:
                # X == M_v would mean x_j c1 is the identity: impossible for a real card
                raise InvalidProof("held card point equals a card encoding") from None
            leaves.append(Leaf(G, hc.c1, public, y))
        cards.append(Threshold(1, tuple(leaves)))
    return Threshold(at_least, tuple(cards))


def _hand_transcript(
    context: Context,
    public: Point,
    held: Sequence[HeldCard],
    allowed: list[int],
    at_least: int,
    deck: Deck,
) -> Transcript:
    t = Transcript(PROTOCOL, context)
    t.append_point("G", G)
    t.append_point("key_share", public)
    t.append_int("deck_size", deck.size)
    t.append("allowed", b"".join(i.to_bytes(2, "little") for i in allowed))
    t.append_int("at_least", at_least)
    t.append_points("held", [p for hc in held for p in (hc.c1, hc.x)])
    return t


def _check_counts(held: Sequence[HeldCard], at_least: int) -> None:
    if not held:
        raise DeckMismatch("hand proof over no cards")
    if type(at_least) is not int or not 1 <= at_least <= len(held):
        raise InvalidEncoding(f"at_least must be in 1..{len(held)}")


def prove_cards_in_set(
    secret: int,
    public: Point,
    held: Sequence[HeldCard],
    indices: Sequence[int],
    allowed: Collection[int],
    at_least: int,
    deck: Deck,
    context: Context,
    *,
    insecure_test_seed: bytes | None = None,
) -> CompositeProof:
    """Prove "at least ``at_least`` of my ``held`` cards are in ``allowed``".

    ``indices`` are the true handles of the held cards (known to the prover).
    """
    check_scalar(secret, nonzero=True, what="secret key")
    _check_counts(held, at_least)
    if len(indices) != len(held):
        raise DeckMismatch(f"{len(indices)} indices for {len(held)} held cards")
    allowed_l = _allowed_sorted(allowed, deck)
    statement = _statement(public, held, allowed_l, at_least, deck)
    pos = {v: k for k, v in enumerate(allowed_l)}
    witnesses = {
        card * len(allowed_l) + pos[idx]: secret for card, idx in enumerate(indices) if idx in pos
    }
    t = _hand_transcript(context, public, held, allowed_l, at_least, deck)
    return prove_composite(
        statement, witnesses, t, left_secret=secret, insecure_test_seed=insecure_test_seed
    )


def verify_cards_in_set(
    public: Point,
    held: Sequence[HeldCard],
    allowed: Collection[int],
    at_least: int,
    deck: Deck,
    proof: CompositeProof,
    context: Context,
) -> None:
    """Raise :class:`InvalidProof` unless at least ``at_least`` held cards are in ``allowed``."""
    _check_counts(held, at_least)
    allowed_l = _allowed_sorted(allowed, deck)
    statement = _statement(public, held, allowed_l, at_least, deck)
    t = _hand_transcript(context, public, held, allowed_l, at_least, deck)
    try:
        verify_composite(statement, proof, t)
    except InvalidProof as exc:
        raise InvalidProof(
            f"hand proof of seat {context.seat} (at least {at_least} of {len(held)} cards "
            f"in a set of {len(allowed_l)}) does not verify: {exc}"
        ) from exc


def decode_cards_in_set_proof(
    b: bytes,
    public: Point,
    held: Sequence[HeldCard],
    allowed: Collection[int],
    at_least: int,
    deck: Deck,
) -> CompositeProof:
    """Decode a received proof for the statement :func:`verify_cards_in_set` checks
    (its length follows from the statement's shape; every scalar must be < L)."""
    _check_counts(held, at_least)
    statement = _statement(public, held, _allowed_sorted(allowed, deck), at_least, deck)
    return CompositeProof.decode(b, statement)


def prove_card_in_set(
    secret, public, held, index, allowed, deck, context, *, insecure_test_seed=None
):
    """CDS OR-proof: "my card is one of ``allowed``"."""
    return prove_cards_in_set(
        secret,
        public,
        [held],
        [index],
        allowed,
        1,
        deck,
        context,
        insecure_test_seed=insecure_test_seed,
    )


def verify_card_in_set(public, held, allowed, deck, proof, context) -> None:
    verify_cards_in_set(public, [held], allowed, 1, deck, proof, context)


def _complement(forbidden: Collection[int], deck: Deck) -> list[int]:
    bad = set(forbidden)
    return [i for i in range(deck.size) if i not in bad]


def prove_at_most_in_set(
    secret, public, held, indices, forbidden, at_most, deck, context, *, insecure_test_seed=None
):
    """Prove "at most ``at_most`` of my cards are in ``forbidden``" (e.g. fewer than 3 of
    suit T: ``forbidden`` = handles of suit T, ``at_most`` = 2), as "at least
    ``n - at_most`` are in the complement"."""
    n = len(held)
    return prove_cards_in_set(
        secret,
        public,
        held,
        indices,
        _complement(forbidden, deck),
        n - at_most,
        deck,
        context,
        insecure_test_seed=insecure_test_seed,
    )


def verify_at_most_in_set(public, held, forbidden, at_most, deck, proof, context) -> None:
    n = len(held)
    verify_cards_in_set(
        public, held, _complement(forbidden, deck), n - at_most, deck, proof, context
    )


def prove_all_in_set(
    secret, public, held, indices, allowed, deck, context, *, insecure_test_seed=None
):
    """Prove "each of these cards is in ``allowed``" (e.g. every card lower than v)."""
    return prove_cards_in_set(
        secret,
        public,
        held,
        indices,
        allowed,
        len(held),
        deck,
        context,
        insecure_test_seed=insecure_test_seed,
    )


def verify_all_in_set(public, held, allowed, deck, proof, context) -> None:
    verify_cards_in_set(public, held, allowed, len(held), deck, proof, context)
