"""Tests for crypto.hand_proofs: CDS OR, threshold and AND proofs about held cards."""

from __future__ import annotations

import dataclasses

import pytest

from crypto.deck import deck_points
from crypto.errors import DeckMismatch, InvalidEncoding, InvalidProof
from crypto.group import COUNTERS, G, L, base_mul, hash_to_point, mul
from crypto.hand_proofs import (
    CompositeProof,
    HeldCard,
    Leaf,
    Threshold,
    _interpolate,
    _poly_eval,
    prove_all_in_set,
    prove_at_most_in_set,
    prove_card_in_set,
    prove_cards_in_set,
    prove_composite,
    verify_all_in_set,
    verify_at_most_in_set,
    verify_card_in_set,
    verify_cards_in_set,
    verify_composite,
)
from crypto.keys import joint_key
from crypto.transcript import Context, Transcript
from tests.crypto._helpers import held_hand, other_contexts

DECK = deck_points(52)
SECRETS = [101, 202, 303]
PUBLICS = [base_mul(x) for x in SECRETS]
PK = joint_key(PUBLICS)
SEAT = 1
CTX = Context(b"table", 4, 9, SEAT)
OTHER_CONTEXTS = other_contexts(CTX)
SUIT = {s: set(range(13 * s, 13 * s + 13)) for s in range(4)}  # handle = 13*suit + rank


def _hand(indices):
    return held_hand(indices, DECK, PK, SECRETS, SEAT, first_r=1000)


def test_polynomial_interpolation():
    coeffs = _interpolate(7, [1, 3, 4], [10, 20, 30])
    assert _poly_eval(7, coeffs, 0) == 7
    assert [_poly_eval(7, coeffs, x) for x in (1, 3, 4)] == [10, 20, 30]
    assert _interpolate(5, [], []) == []
    # a full-size OR node: degree 51 through f(0) and 51 of the children 1..52
    xs = [x for x in range(1, 53) if x != 17]
    ys = [(x * 0x9E3779B97F4A7C15 + 3) ** 3 % L for x in xs]
    big = _interpolate(L - 1, xs, ys)
    assert len(big) == 51
    assert _poly_eval(L - 1, big, 0) == L - 1
    assert [_poly_eval(L - 1, big, x) for x in xs] == ys


def test_or_proof_true_and_tampering():
    held = _hand([20])[0]
    allowed = SUIT[1]
    proof = prove_card_in_set(SECRETS[SEAT], PUBLICS[SEAT], held, 20, allowed, DECK, CTX)
    verify_card_in_set(PUBLICS[SEAT], held, allowed, DECK, proof, CTX)
    assert len(proof.responses) == 13
    assert CompositeProof.decode(proof.encode(), _statement_for(held, allowed, 1)) == proof
    # every single scalar tampered
    flat_fields = [("c", None)]
    flat_fields += [
        ("coefficients", (i, j)) for i, cs in enumerate(proof.coefficients) for j in range(len(cs))
    ]
    flat_fields += [("responses", i) for i in range(len(proof.responses))]
    for field, where in flat_fields:
        with pytest.raises(InvalidProof):
            verify_card_in_set(
                PUBLICS[SEAT], held, allowed, DECK, _tamper(proof, field, where), CTX
            )
    # statement tampering: other set, other key, other held points
    with pytest.raises(InvalidProof):
        verify_card_in_set(PUBLICS[SEAT], held, SUIT[1] | {0}, DECK, proof, CTX)
    with pytest.raises(InvalidProof):
        verify_card_in_set(PUBLICS[0], held, allowed, DECK, proof, CTX)
    other = hash_to_point(b"o")
    for bad in (HeldCard(other, held.x), HeldCard(held.c1, other)):
        with pytest.raises(InvalidProof):
            verify_card_in_set(PUBLICS[SEAT], bad, allowed, DECK, proof, CTX)
    for ctx in OTHER_CONTEXTS:
        with pytest.raises(InvalidProof):
            verify_card_in_set(PUBLICS[SEAT], held, allowed, DECK, proof, ctx)


def _statement_for(held, allowed, at_least):
    from crypto.hand_proofs import _statement

    return _statement(PUBLICS[SEAT], [held], sorted(allowed), at_least, DECK)


def _tamper(proof, field, where):
    if field == "c":
        return dataclasses.replace(proof, c=(proof.c + 1) % L)
    if field == "coefficients":
        i, j = where
        cs = [list(x) for x in proof.coefficients]
        cs[i][j] = (cs[i][j] + 1) % L
        return dataclasses.replace(proof, coefficients=tuple(tuple(x) for x in cs))
    rs = list(proof.responses)
    rs[where] = (rs[where] + 1) % L
    return dataclasses.replace(proof, responses=tuple(rs))


def test_or_proof_false_statement():
    held = _hand([20])[0]  # suit 1
    with pytest.raises(InvalidProof, match="false"):
        prove_card_in_set(SECRETS[SEAT], PUBLICS[SEAT], held, 20, SUIT[2], DECK, CTX)
    # lying about the index: the "proof" does not verify
    proof = prove_card_in_set(SECRETS[SEAT], PUBLICS[SEAT], held, 30, SUIT[2], DECK, CTX)
    with pytest.raises(InvalidProof):
        verify_card_in_set(PUBLICS[SEAT], held, SUIT[2], DECK, proof, CTX)
    # a valid proof for suit 1 does not pass as suit 2
    good = prove_card_in_set(SECRETS[SEAT], PUBLICS[SEAT], held, 20, SUIT[1], DECK, CTX)
    with pytest.raises(InvalidProof):
        verify_card_in_set(PUBLICS[SEAT], held, SUIT[2], DECK, good, CTX)


def test_fewer_than_three_of_suit():
    hand = [0, 1, 20, 30, 40, 50]  # two spades (suit 0)
    held = _hand(hand)
    x, pub = SECRETS[SEAT], PUBLICS[SEAT]
    proof = prove_at_most_in_set(x, pub, held, hand, SUIT[0], 2, DECK, CTX)
    verify_at_most_in_set(pub, held, SUIT[0], 2, DECK, proof, CTX)
    # at most 1 spade is false
    with pytest.raises(InvalidProof, match="false"):
        prove_at_most_in_set(x, pub, held, hand, SUIT[0], 1, DECK, CTX)
    with pytest.raises(InvalidProof):
        verify_at_most_in_set(pub, held, SUIT[0], 1, DECK, proof, CTX)
    # three spades: cannot claim fewer than 3
    hand3 = [0, 1, 2, 30, 40, 50]
    held3 = _hand(hand3)
    with pytest.raises(InvalidProof, match="false"):
        prove_at_most_in_set(x, pub, held3, hand3, SUIT[0], 2, DECK, CTX)
    # a cheater who claims indices not in spades still fails verification
    cheat = prove_at_most_in_set(x, pub, held3, [13, 14, 15, 30, 40, 50], SUIT[0], 2, DECK, CTX)
    with pytest.raises(InvalidProof):
        verify_at_most_in_set(pub, held3, SUIT[0], 2, DECK, cheat, CTX)
    # swapping the order of cards breaks the binding
    with pytest.raises(InvalidProof):
        verify_at_most_in_set(pub, held[::-1], SUIT[0], 2, DECK, proof, CTX)
    for ctx in OTHER_CONTEXTS:
        with pytest.raises(InvalidProof):
            verify_at_most_in_set(pub, held, SUIT[0], 2, DECK, proof, ctx)


def test_threshold_tampering_every_field():
    hand = [0, 20, 30]
    held = _hand(hand)
    x, pub = SECRETS[SEAT], PUBLICS[SEAT]
    allowed = SUIT[1] | SUIT[2]
    proof = prove_cards_in_set(x, pub, held, hand, allowed, 2, DECK, CTX)
    verify_cards_in_set(pub, held, allowed, 2, DECK, proof, CTX)
    assert len(proof.coefficients[0]) == 1  # degree n - t = 1 at the root
    fields = [("c", None)]
    fields += [
        ("coefficients", (i, j)) for i, cs in enumerate(proof.coefficients) for j in range(len(cs))
    ]
    fields += [("responses", i) for i in range(0, len(proof.responses), 7)]
    for field, where in fields:
        with pytest.raises(InvalidProof):
            verify_cards_in_set(pub, held, allowed, 2, DECK, _tamper(proof, field, where), CTX)
    with pytest.raises(InvalidProof):
        verify_cards_in_set(pub, held, allowed, 3, DECK, proof, CTX)
    short = dataclasses.replace(proof, responses=proof.responses[:-1])
    with pytest.raises(InvalidProof, match="responses"):
        verify_cards_in_set(pub, held, allowed, 2, DECK, short, CTX)


def test_all_lower_than():
    lower = {i for i in range(52) if i % 13 < 5}  # ranks 0..4 of every suit
    hand = [1, 15, 29]
    held = _hand(hand)
    x, pub = SECRETS[SEAT], PUBLICS[SEAT]
    proof = prove_all_in_set(x, pub, held, hand, lower, DECK, CTX)
    verify_all_in_set(pub, held, lower, DECK, proof, CTX)
    for ctx in OTHER_CONTEXTS:
        with pytest.raises(InvalidProof):
            verify_all_in_set(pub, held, lower, DECK, proof, ctx)
    with pytest.raises(InvalidProof):  # "all" is not "at least n - 1"
        verify_cards_in_set(pub, held, lower, len(held) - 1, DECK, proof, CTX)
    bad_hand = [1, 15, 30]  # 30 % 13 == 4 -> still lower; use a higher one
    bad_hand = [1, 15, 31]
    bad_held = _hand(bad_hand)
    with pytest.raises(InvalidProof, match="false"):
        prove_all_in_set(x, pub, bad_held, bad_hand, lower, DECK, CTX)
    with pytest.raises(InvalidProof):
        verify_all_in_set(pub, bad_held, lower, DECK, proof, CTX)


def test_hand_proof_bad_inputs():
    held = _hand([0, 1])
    x, pub = SECRETS[SEAT], PUBLICS[SEAT]
    with pytest.raises(DeckMismatch):
        prove_cards_in_set(x, pub, held, [0], SUIT[0], 1, DECK, CTX)
    with pytest.raises(InvalidEncoding):
        prove_cards_in_set(x, pub, held, [0, 1], SUIT[0], 3, DECK, CTX)
    with pytest.raises(InvalidEncoding):
        prove_cards_in_set(x, pub, held, [0, 1], set(), 1, DECK, CTX)
    with pytest.raises(InvalidEncoding):
        prove_cards_in_set(x, pub, held, [0, 1], {52}, 1, DECK, CTX)
    with pytest.raises(DeckMismatch):
        verify_cards_in_set(pub, [], SUIT[0], 1, DECK, None, CTX)  # type: ignore[arg-type]
    with pytest.raises(InvalidEncoding):
        Threshold(0, (Leaf(G, G, G, G),))


def test_hand_proof_op_counts_and_pinned_nonces():
    hand = [0, 20]
    held = _hand(hand)
    x, pub = SECRETS[SEAT], PUBLICS[SEAT]
    allowed = SUIT[1]  # 13 values: N = 26 leaves, R = 1 real leaf
    COUNTERS.reset()
    proof = prove_cards_in_set(x, pub, held, hand, allowed, 1, DECK, CTX, insecure_test_seed=b"s")
    n, r = 26, 1
    assert (COUNTERS.base_mul, COUNTERS.mul, COUNTERS.add) == (n, r + 2 * (n - r), n + (n - r))
    assert proof == prove_cards_in_set(
        x, pub, held, hand, allowed, 1, DECK, CTX, insecure_test_seed=b"s"
    )
    COUNTERS.reset()
    verify_cards_in_set(pub, held, allowed, 1, DECK, proof, CTX)
    assert (COUNTERS.base_mul, COUNTERS.mul, COUNTERS.add) == (n, 3 * n, 3 * n)


def test_generic_composite_nested():
    """(a AND b) OR c, with only c true; and with a, b true."""
    xs = [11, 22, 33]
    hs = [hash_to_point(b"n", bytes([i])) for i in range(3)]
    true_leaf = [Leaf(G, h, base_mul(x), mul(x, h)) for x, h in zip(xs, hs, strict=True)]
    false_leaf = [Leaf(G, h, base_mul(x), mul(x + 1, h)) for x, h in zip(xs, hs, strict=True)]
    for a, b, c, wit in (
        (false_leaf[0], false_leaf[1], true_leaf[2], {2: 33}),
        (true_leaf[0], true_leaf[1], false_leaf[2], {0: 11, 1: 22}),
    ):
        st = Threshold(1, (Threshold(2, (a, b)), c))
        proof = prove_composite(st, wit, Transcript("n", CTX))
        verify_composite(st, proof, Transcript("n", CTX))
    st = Threshold(1, (Threshold(2, (true_leaf[0], false_leaf[1])), false_leaf[2]))
    with pytest.raises(InvalidProof):
        prove_composite(st, {0: 11}, Transcript("n", CTX))
    # witness for a false leaf yields a proof that does not verify
    proof = prove_composite(st, {0: 11, 1: 22}, Transcript("n", CTX))
    with pytest.raises(InvalidProof):
        verify_composite(st, proof, Transcript("n", CTX))


def test_left_secret_shortcut_gives_the_same_proof():
    """Computing a simulated leaf's ``s G - e PK`` as ``(s - e x) G`` changes no byte of
    the proof, only its cost; a wrong left secret yields a proof that fails."""
    from crypto.hand_proofs import _hand_transcript, _statement

    hand = [0, 20, 30]
    held = _hand(hand)
    x, pub = SECRETS[SEAT], PUBLICS[SEAT]
    allowed = sorted(SUIT[1] | SUIT[2])
    st = _statement(pub, held, allowed, 2, DECK)
    wit = {1 * len(allowed) + allowed.index(20): x, 2 * len(allowed) + allowed.index(30): x}

    def tr():
        return _hand_transcript(CTX, pub, held, allowed, 2, DECK)

    plain = prove_composite(st, wit, tr(), insecure_test_seed=b"z")
    fast = prove_composite(st, wit, tr(), insecure_test_seed=b"z", left_secret=x)
    assert plain == fast
    verify_composite(st, fast, tr())
    wrong = prove_composite(st, wit, tr(), insecure_test_seed=b"z", left_secret=x + 1)
    with pytest.raises(InvalidProof):
        verify_composite(st, wrong, tr())
