"""Tests for crypto.inequality: "none of my cards is any of these" (a blinded comparison:
``Q_i = r M_i`` against ``P_j = r M_v``, one Sigma protocol for ``(r, r x)``)."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crypto.deck import deck_points
from crypto.elgamal import Ciphertext
from crypto.errors import DeckMismatch, InvalidEncoding, InvalidPoint, InvalidProof, InvalidScalar
from crypto.group import COUNTERS, G, L, Point, add, base_mul, mul, sub
from crypto.hand_proofs import HeldCard, held_card
from crypto.inequality import (
    InequalityProof,
    _statement_transcript,
    proof_size,
    prove_card_not,
    prove_none_of,
    verify_card_not,
    verify_none_of,
)
from crypto.keys import joint_key
from crypto.transcript import Context
from tests.crypto._helpers import held_hand, other_contexts

DECK = deck_points(52)
DECK104 = deck_points(104)
SECRETS = [1111, 2222, 3333]
PUBLICS = [base_mul(x) for x in SECRETS]
PK = joint_key(PUBLICS)
SEAT = 1
X, PUB = SECRETS[SEAT], PUBLICS[SEAT]
CTX = Context(b"table", 4, 9, SEAT)
OTHER_CONTEXTS = other_contexts(CTX)
HAND = (0, 14, 27, 40, 51)
THREE_CLUBS = 1  # any handle not in HAND


def _hand(indices, deck=DECK):
    return held_hand(indices, deck, PK, SECRETS, SEAT, first_r=5000)


HELD = _hand(HAND)


def _fails(proof, held=HELD, forbidden=(THREE_CLUBS,), ctx=CTX, public=PUB, deck=DECK, **kw):
    with pytest.raises(InvalidProof):
        verify_none_of(public, held, forbidden, deck, proof, ctx, **kw)


def test_single_card_not_v_verifies_and_round_trips():
    proof = prove_card_not(X, PUB, HELD[0], HAND[0], THREE_CLUBS, DECK, CTX)
    verify_card_not(PUB, HELD[0], THREE_CLUBS, DECK, proof, CTX)
    raw = proof.encode()
    assert len(raw) == proof_size(1, 1) == 2 * 32 + 3 * 32 == 160
    assert InequalityProof.decode(raw, 1, 1) == proof
    # the same proof says nothing about another forbidden card or another held card
    with pytest.raises(InvalidProof):
        verify_card_not(PUB, HELD[0], THREE_CLUBS + 1, DECK, proof, CTX)
    with pytest.raises(InvalidProof):
        verify_card_not(PUB, HELD[1], THREE_CLUBS, DECK, proof, CTX)


def test_hand_lacks_card_for_every_absent_face():
    proof = prove_none_of(X, PUB, HELD, HAND, {THREE_CLUBS}, DECK, CTX)
    verify_none_of(PUB, HELD, {THREE_CLUBS}, DECK, proof, CTX)
    assert (len(proof.qs), len(proof.ps)) == (len(HAND), 1)
    for v in (2, 13, 26, 50):  # other absent faces, and several at once
        p = prove_none_of(X, PUB, HELD, HAND, [v], DECK, CTX)
        verify_none_of(PUB, HELD, [v], DECK, p, CTX)
    p = prove_none_of(X, PUB, HELD, HAND, [2, 13, 26], DECK, CTX)
    verify_none_of(PUB, HELD, [26, 13, 2, 2], DECK, p, CTX)  # order and repeats do not matter
    assert len(p.ps) == 3


def test_double_deck_both_copies_of_a_face():
    hand = (0, 60, 103)
    held = _hand(hand, DECK104)
    forbidden = [1, 53]  # both copies of face 1
    proof = prove_none_of(X, PUB, held, hand, forbidden, DECK104, CTX)
    verify_none_of(PUB, held, forbidden, DECK104, proof, CTX)
    with pytest.raises(InvalidProof):  # face 8 is held as handle 60
        prove_none_of(X, PUB, held, hand, [8, 60], DECK104, CTX)
    # two copies of one face held: distinct handles, distinct encodings, distinct Q
    hand = (5, 57)
    held = _hand(hand, DECK104)
    proof = prove_none_of(X, PUB, held, hand, [1, 53], DECK104, CTX)
    verify_none_of(PUB, held, [1, 53], DECK104, proof, CTX)
    assert proof.qs[0] != proof.qs[1]


def test_false_statement_cannot_be_proved():
    for pos, idx in enumerate(HAND):
        with pytest.raises(InvalidProof, match=f"held card {pos} is forbidden"):
            prove_none_of(X, PUB, HELD, HAND, [idx], DECK, CTX)
    with pytest.raises(InvalidProof):
        prove_card_not(X, PUB, HELD[2], HAND[2], HAND[2], DECK, CTX)


def _sigma(held, forbidden, ps, qs, r, secret=X, public=PUB, k_r=777, k_a=888, ctx=CTX, alpha=None):
    """A prover that runs the Sigma protocol with witness ``(r, alpha)`` (``alpha = r
    secret`` unless given) and the nonces ``k_r, k_a`` over whatever blinded points ``ps``
    and ``qs`` it chose (an honest prover chooses ``r M``); commitments as an honest
    prover makes them."""
    alpha = r * secret if alpha is None else alpha
    t = _statement_transcript(ctx, public, held, list(forbidden), DECK)
    t.append_points("P", ps)
    t.append_points("Q", qs)
    t.append_points("T", [mul(k_r, DECK.point(v)) for v in forbidden])
    t.append_points("U", [sub(mul(k_r, hc.x), mul(k_a, hc.c1)) for hc in held])
    t.append_point("W", sub(base_mul(k_a), mul(k_r, public)))
    c = t.challenge("c")
    return InequalityProof(tuple(ps), tuple(qs), c, (k_r + c * r) % L, (k_a + c * alpha) % L)


def test_the_sigma_algebra_of_an_honest_prover_verifies():
    r = 4242
    ps = [mul(r, DECK.point(THREE_CLUBS))]
    qs = [mul(r, DECK.point(i)) for i in HAND]
    verify_none_of(PUB, HELD, [THREE_CLUBS], DECK, _sigma(HELD, [THREE_CLUBS], ps, qs, r), CTX)


def test_a_prover_that_holds_a_forbidden_card_cannot_hide_it():
    """The hand holds ``v``.  With the true witness its ``Q`` equals ``P`` (the verifier
    refuses at once); shifting ``Q``, or blinding ``P`` with another ``r``, breaks a
    relation, so the recomputed commitments do not hash to the challenge."""
    v, r = HAND[3], 4242
    honest_ps = [mul(r, DECK.point(v))]
    honest_qs = [mul(r, DECK.point(i)) for i in HAND]
    assert honest_qs[3] == honest_ps[0]
    with pytest.raises(InvalidProof, match="held card 3 is a forbidden card"):
        verify_none_of(PUB, HELD, [v], DECK, _sigma(HELD, [v], honest_ps, honest_qs, r), CTX)
    shifted = list(honest_qs)
    shifted[3] = add(shifted[3], base_mul(31337))
    _fails(_sigma(HELD, [v], honest_ps, shifted, r), forbidden=[v])
    other_r = [mul(r + 1, DECK.point(v))]
    _fails(_sigma(HELD, [v], other_r, honest_qs, r), forbidden=[v])
    # Q made with the claimed card instead of the true one (lying about the handle)
    lying = list(honest_qs)
    lying[3] = mul(r, DECK.point(THREE_CLUBS))
    _fails(_sigma(HELD, [v], honest_ps, lying, r), forbidden=[v])
    # a witness for another key: alpha = r x' does not fit this seat's key share
    _fails(_sigma(HELD, [v], honest_ps, shifted, r, secret=SECRETS[0]), forbidden=[v])
    # any alpha but r x makes every Q relation true for a Q that is not r M: only the
    # last relation (identity = alpha G - r PK) stops it
    alpha = r * X + 5
    free = [sub(mul(r, hc.x), mul(alpha, hc.c1)) for hc in HELD]
    assert free[3] != honest_ps[0]
    _fails(_sigma(HELD, [v], honest_ps, free, r, alpha=alpha), forbidden=[v])


def test_forged_proofs_of_a_false_statement_fail():
    v = HAND[3]  # the hand does hold v
    lying = list(HAND)
    lying[3] = THREE_CLUBS
    _fails(prove_none_of(X, PUB, HELD, lying, [v], DECK, CTX), forbidden=[v])
    other = prove_none_of(X, PUB, HELD, HAND, [THREE_CLUBS], DECK, CTX)
    _fails(other, forbidden=[v])
    # the P of another card, relabelled as v's
    _fails(dataclasses.replace(other, ps=(base_mul(7),)), forbidden=[v])
    # with a wrong key share the statement is about someone else's cards
    _fails(prove_none_of(SECRETS[0], PUB, HELD, HAND, [THREE_CLUBS], DECK, CTX))


def test_blinded_points_are_never_the_identity_on_the_wire():
    proof = prove_card_not(X, PUB, HELD[0], HAND[0], THREE_CLUBS, DECK, CTX)
    raw = proof.encode()
    identity = (1).to_bytes(32, "little")
    for at in (0, 32):  # P, Q
        with pytest.raises(InvalidPoint, match="identity"):
            InequalityProof.decode(raw[:at] + identity + raw[at + 32 :], 1, 1)
    with pytest.raises(InvalidPoint):
        Point(identity)  # nor in memory


def test_wrong_context_fails():
    proof = prove_none_of(X, PUB, HELD, HAND, [THREE_CLUBS], DECK, CTX)
    for other in OTHER_CONTEXTS:
        _fails(proof, ctx=other)
    verify_none_of(PUB, HELD, [THREE_CLUBS], DECK, proof, CTX)


def test_tampering_every_field():
    proof = prove_none_of(X, PUB, HELD[:3], HAND[:3], [THREE_CLUBS, 2], DECK, CTX)
    held = HELD[:3]
    verify_none_of(PUB, held, [THREE_CLUBS, 2], DECK, proof, CTX)

    def fails(p=proof, h=held, forbidden=(THREE_CLUBS, 2), public=PUB, deck=DECK):
        _fails(p, held=h, forbidden=forbidden, public=public, deck=deck)

    # proof fields: every P, every Q, the challenge, both responses
    for name in ("ps", "qs"):
        pts = getattr(proof, name)
        for i in range(len(pts)):
            moved = list(pts)
            moved[i] = add(moved[i], G)
            fails(dataclasses.replace(proof, **{name: tuple(moved)}))
        fails(dataclasses.replace(proof, **{name: pts[::-1]}))  # reordered
    for name in ("c", "s_r", "s_alpha"):
        fails(dataclasses.replace(proof, **{name: (getattr(proof, name) + 1) % L}))
    fails(dataclasses.replace(proof, ps=proof.qs[:2], qs=(*proof.ps, proof.qs[2])))
    # statement fields: key share, each held card's c1 and X, the forbidden set, the deck
    fails(public=PUBLICS[0])
    for i in range(len(held)):
        h = list(held)
        h[i] = HeldCard(add(held[i].c1, G), held[i].x)
        fails(h=h)
        h[i] = HeldCard(held[i].c1, add(held[i].x, G))
        fails(h=h)
    fails(h=held[::-1])
    fails(forbidden=(THREE_CLUBS, 3))
    # the same handles in the 54-card deck are other encodings
    fails(deck=deck_points(54))
    # a flipped bit anywhere in the wire form: rejected at decode or at verify
    raw = proof.encode()
    for pos in range(0, len(raw), 5):
        bad = bytearray(raw)
        bad[pos] ^= 1
        with pytest.raises((InvalidEncoding, InvalidProof)):
            verify_none_of(
                PUB, held, [THREE_CLUBS, 2], DECK, InequalityProof.decode(bytes(bad), 3, 2), CTX
            )


SMALL_ORDER_8 = bytes.fromhex("26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05")
NON_CANONICAL = (2**255 - 19 + 2).to_bytes(32, "little")
UNREDUCED = L.to_bytes(32, "little")


def test_invalid_points_and_scalars_rejected():
    proof = prove_none_of(X, PUB, HELD[:2], HAND[:2], [THREE_CLUBS], DECK, CTX)
    raw = proof.encode()
    assert len(raw) == proof_size(2, 1) == 3 * 32 + 3 * 32
    for at in (0, 32, 64):  # P, Q, Q
        for bad_point in (SMALL_ORDER_8, NON_CANONICAL, bytes(32), b"\xff" * 32):
            with pytest.raises(InvalidPoint):
                InequalityProof.decode(raw[:at] + bad_point + raw[at + 32 :], 2, 1)
    for off in (96, 128, 160):  # c, s_r, s_alpha
        with pytest.raises(InvalidScalar):
            InequalityProof.decode(raw[:off] + UNREDUCED + raw[off + 32 :], 2, 1)
    for bad in (raw[:-1], raw + b"\0", raw.hex()):
        with pytest.raises(InvalidEncoding):
            InequalityProof.decode(bad, 2, 1)
    for cards, forbidden in ((0, 1), (2, 0), (True, 1), (2, 2)):
        with pytest.raises(InvalidEncoding):
            InequalityProof.decode(raw, cards, forbidden)
    # read with the split of another statement of the same size: it fails that statement
    swapped = InequalityProof.decode(raw, 1, 2)
    _fails(swapped, held=HELD[:1], forbidden=[THREE_CLUBS, 2])
    # in-memory proofs are validated too
    for name in ("c", "s_r", "s_alpha"):
        with pytest.raises(InvalidScalar):
            dataclasses.replace(proof, **{name: L})
        with pytest.raises(InvalidScalar):
            dataclasses.replace(proof, **{name: -1})
    with pytest.raises(InvalidEncoding):
        dataclasses.replace(proof, qs=(proof.qs[0], proof.qs[1].data))
    with pytest.raises(InvalidEncoding):
        dataclasses.replace(proof, ps=[proof.ps[0]])
    for name in ("ps", "qs"):
        with pytest.raises(InvalidEncoding):
            dataclasses.replace(proof, **{name: ()})
    # a proof about another number of cards or forbidden entries than the statement
    with pytest.raises(InvalidProof, match="about 2 cards and 1 forbidden"):
        verify_none_of(PUB, HELD[:3], [THREE_CLUBS], DECK, proof, CTX)
    with pytest.raises(InvalidProof, match="about 2 cards and 1 forbidden"):
        verify_none_of(PUB, HELD[:2], [THREE_CLUBS, 2], DECK, proof, CTX)


def test_bad_inputs():
    with pytest.raises(DeckMismatch):
        prove_none_of(X, PUB, [], [], [THREE_CLUBS], DECK, CTX)
    with pytest.raises(DeckMismatch):
        prove_none_of(X, PUB, HELD, HAND[:2], [THREE_CLUBS], DECK, CTX)
    with pytest.raises(InvalidEncoding):
        prove_none_of(X, PUB, HELD, HAND, [], DECK, CTX)
    with pytest.raises(InvalidEncoding):
        prove_none_of(X, PUB, HELD, HAND, [52], DECK, CTX)
    with pytest.raises(InvalidEncoding):
        prove_none_of(X, PUB, HELD, (0, 14, 27, 40, 99), [THREE_CLUBS], DECK, CTX)
    with pytest.raises(InvalidScalar):
        prove_none_of(0, PUB, HELD, HAND, [THREE_CLUBS], DECK, CTX)
    with pytest.raises(InvalidScalar):
        prove_none_of(L, PUB, HELD, HAND, [THREE_CLUBS], DECK, CTX)
    proof = prove_none_of(X, PUB, HELD, HAND, [THREE_CLUBS], DECK, CTX)
    with pytest.raises(InvalidEncoding):
        verify_none_of(PUB, HELD, [THREE_CLUBS], DECK, proof.encode(), CTX)
    with pytest.raises(InvalidEncoding):
        verify_none_of(PUB.data, HELD, [THREE_CLUBS], DECK, proof, CTX)
    with pytest.raises(InvalidEncoding):
        verify_none_of(PUB, [(HELD[0].c1, HELD[0].x)], [THREE_CLUBS], DECK, proof, CTX)
    with pytest.raises(DeckMismatch):
        verify_none_of(PUB, [], [THREE_CLUBS], DECK, proof, CTX)


def test_ciphertext_not_from_the_mask_still_bound_to_its_plaintext():
    # whatever (C1, C2) is, X - x C1 is the card inside; proofs track that card
    c1 = base_mul(424242)
    c2 = add(DECK.point(9), mul(424242, PK))
    ct = Ciphertext(c1, c2)
    held = held_card(ct, [mul(SECRETS[0], c1), mul(SECRETS[2], c1)])
    assert sub(held.x, mul(X, c1)) == DECK.point(9)
    verify_card_not(PUB, held, 10, DECK, prove_card_not(X, PUB, held, 9, 10, DECK, CTX), CTX)
    with pytest.raises(InvalidProof):
        prove_card_not(X, PUB, held, 9, 9, DECK, CTX)


def test_pinned_nonces_are_deterministic_and_fresh_ones_unlinkable():
    a = prove_none_of(X, PUB, HELD, HAND, [THREE_CLUBS], DECK, CTX, insecure_test_seed=b"s")
    b = prove_none_of(X, PUB, HELD, HAND, [THREE_CLUBS], DECK, CTX, insecure_test_seed=b"s")
    assert a == b
    c = prove_none_of(X, PUB, HELD, HAND, [THREE_CLUBS], DECK, CTX)
    d = prove_none_of(X, PUB, HELD, HAND, [THREE_CLUBS], DECK, CTX)
    # a fresh r each time: no blinded point of one proof is found in the other
    assert not {p.data for p in c.ps + c.qs} & {p.data for p in d.ps + d.qs}
    verify_none_of(PUB, HELD, [THREE_CLUBS], DECK, a, CTX)


def test_op_counts():
    """Prove ``2f + 3n`` mul + 1 base, verify ``2f + 3n + 1`` mul + 1 base, decode ``f + n``
    points, for ``n`` cards and ``f`` forbidden entries: no work per (card, entry) pair,
    where a proof per pair (Camenisch-Shoup) checked ``4 n f`` multiplications."""
    n = len(HAND)
    for forbidden in ([THREE_CLUBS], [THREE_CLUBS, 2, 3, 4]):
        f = len(forbidden)
        COUNTERS.reset()
        proof = prove_none_of(X, PUB, HELD, HAND, forbidden, DECK, CTX)
        assert COUNTERS.snapshot() == {
            "mul": 2 * f + 3 * n,
            "base_mul": 1,
            "add": n,
            "decode": 0,
            "hash_to_point": 0,
        }
        COUNTERS.reset()
        verify_none_of(PUB, HELD, forbidden, DECK, proof, CTX)
        assert COUNTERS.snapshot() == {
            "mul": 2 * f + 3 * n + 1,
            "base_mul": 1,
            "add": f + 2 * n + 1,
            "decode": 0,
            "hash_to_point": 0,
        }
        COUNTERS.reset()
        InequalityProof.decode(proof.encode(), n, f)
        assert COUNTERS.snapshot()["decode"] == n + f


@settings(max_examples=15, deadline=None)
@given(
    hand=st.sets(st.integers(0, 51), min_size=1, max_size=6),
    forbidden=st.sets(st.integers(0, 51), min_size=1, max_size=6),
)
def test_a_proof_exists_exactly_when_no_held_card_is_forbidden(hand, forbidden):
    hand = tuple(sorted(hand))
    held = _hand(hand)
    if set(hand) & forbidden:
        with pytest.raises(InvalidProof):
            prove_none_of(X, PUB, held, hand, forbidden, DECK, CTX)
        return
    proof = prove_none_of(X, PUB, held, hand, forbidden, DECK, CTX)
    verify_none_of(PUB, held, forbidden, DECK, proof, CTX)
    # and it is about exactly these cards: dropping one forbidden handle or card fails
    if len(forbidden) > 1:
        _fails(proof, held=held, forbidden=sorted(forbidden)[1:])
    if len(hand) > 1:
        _fails(proof, held=held[1:], forbidden=forbidden)


# ---- padded statements (the sealed Slave gift: a size that tells nothing) ----

TOP = 51  # the filler: in every forbidden set below


@pytest.mark.parametrize("forbidden", [[TOP], [1, 2, TOP], list(range(41, 52)) + [1]])
def test_padded_proof_has_one_size_and_one_cost_whatever_the_forbidden_set(forbidden):
    hand = (3, 8, 20)
    held = _hand(hand)
    pad = 45
    COUNTERS.reset()
    proof = prove_none_of(X, PUB, held, hand, forbidden, DECK, CTX, pad_to=pad, pad_with=TOP)
    assert COUNTERS.snapshot()["mul"] == 2 * pad + 3 * len(hand)
    assert (len(proof.qs), len(proof.ps)) == (len(hand), pad)
    assert len(proof.encode()) == proof_size(len(hand), pad)
    COUNTERS.reset()
    verify_none_of(PUB, held, forbidden, DECK, proof, CTX, pad_to=pad, pad_with=TOP)
    assert COUNTERS.snapshot()["mul"] == 2 * pad + 3 * len(hand) + 1
    # the verifier must pad the very same way: any other statement fails
    for other in (
        {"pad_to": pad - 1, "pad_with": TOP},
        {"pad_to": pad + 1, "pad_with": TOP},
        {"pad_to": pad, "pad_with": min(forbidden)} if min(forbidden) != TOP else None,
    ):
        if other is None:
            continue
        _fails(proof, held=held, forbidden=forbidden, **other)
    _fails(proof, held=held, forbidden=forbidden)  # unpadded


def test_padded_proof_tamper_each_field():
    hand = (3, 8)
    held = _hand(hand)
    kw = {"pad_to": 6, "pad_with": TOP}
    proof = prove_none_of(X, PUB, held, hand, [40, TOP], DECK, CTX, **kw)
    entry = 5  # a padding entry
    bad = [
        dataclasses.replace(proof, ps=(*proof.ps[:entry], G, *proof.ps[entry + 1 :])),
        dataclasses.replace(proof, qs=(proof.qs[0], G)),
        dataclasses.replace(proof, c=(proof.c + 1) % L),
        dataclasses.replace(proof, s_r=(proof.s_r + 1) % L),
        dataclasses.replace(proof, s_alpha=(proof.s_alpha + 1) % L),
    ]
    for p in bad:
        _fails(p, held=held, forbidden=[40, TOP], **kw)
    for ctx in OTHER_CONTEXTS:
        _fails(proof, held=held, forbidden=[40, TOP], ctx=ctx, **kw)


def test_padding_arguments_are_checked():
    hand = (3,)
    held = _hand(hand)
    with pytest.raises(InvalidEncoding, match="must itself be forbidden"):
        prove_none_of(X, PUB, held, hand, [40], DECK, CTX, pad_to=4, pad_with=TOP)
    with pytest.raises(InvalidEncoding, match="cannot pad"):
        prove_none_of(X, PUB, held, hand, [40, 41, TOP], DECK, CTX, pad_to=2, pad_with=TOP)
    with pytest.raises(InvalidEncoding, match="filler"):
        prove_none_of(X, PUB, held, hand, [40], DECK, CTX, pad_to=4)
    # a held card among the forbidden: no proof, padded or not
    with pytest.raises(InvalidProof):
        prove_none_of(X, PUB, held, hand, [3, TOP], DECK, CTX, pad_to=4, pad_with=TOP)
