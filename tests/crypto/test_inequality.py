"""Tests for crypto.inequality: "my card is not v" (Camenisch-Shoup inequality of discrete logs)."""

from __future__ import annotations

import dataclasses

import pytest

from crypto.deck import deck_points
from crypto.elgamal import Ciphertext
from crypto.errors import DeckMismatch, InvalidEncoding, InvalidPoint, InvalidProof, InvalidScalar
from crypto.group import COUNTERS, G, L, Point, add, base_mul, mul, sub
from crypto.hand_proofs import HeldCard, held_card
from crypto.inequality import (
    LEAF_BYTES,
    InequalityProof,
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


def _fails(proof, held=HELD, forbidden=(THREE_CLUBS,), ctx=CTX, public=PUB, deck=DECK):
    with pytest.raises(InvalidProof):
        verify_none_of(public, held, forbidden, deck, proof, ctx)


def test_single_card_not_v_verifies_and_round_trips():
    proof = prove_card_not(X, PUB, HELD[0], HAND[0], THREE_CLUBS, DECK, CTX)
    verify_card_not(PUB, HELD[0], THREE_CLUBS, DECK, proof, CTX)
    raw = proof.encode()
    assert len(raw) == proof_size(1) == 32 + LEAF_BYTES == 128
    assert InequalityProof.decode(raw, 1) == proof
    # the same proof says nothing about another forbidden card or another held card
    with pytest.raises(InvalidProof):
        verify_card_not(PUB, HELD[0], THREE_CLUBS + 1, DECK, proof, CTX)
    with pytest.raises(InvalidProof):
        verify_card_not(PUB, HELD[1], THREE_CLUBS, DECK, proof, CTX)


def test_hand_lacks_card_for_every_absent_face():
    proof = prove_none_of(X, PUB, HELD, HAND, {THREE_CLUBS}, DECK, CTX)
    verify_none_of(PUB, HELD, {THREE_CLUBS}, DECK, proof, CTX)
    assert proof.leaves == len(HAND)
    for v in (2, 13, 26, 50):  # other absent faces, and several at once
        p = prove_none_of(X, PUB, HELD, HAND, [v], DECK, CTX)
        verify_none_of(PUB, HELD, [v], DECK, p, CTX)
    p = prove_none_of(X, PUB, HELD, HAND, [2, 13, 26], DECK, CTX)
    verify_none_of(PUB, HELD, [26, 13, 2, 2], DECK, p, CTX)  # order and repeats do not matter
    assert p.leaves == 3 * len(HAND)


def test_double_deck_both_copies_of_a_face():
    hand = (0, 60, 103)
    held = _hand(hand, DECK104)
    forbidden = [1, 53]  # both copies of face 1
    proof = prove_none_of(X, PUB, held, hand, forbidden, DECK104, CTX)
    verify_none_of(PUB, held, forbidden, DECK104, proof, CTX)
    with pytest.raises(InvalidProof):  # face 8 is held as handle 60
        prove_none_of(X, PUB, held, hand, [8, 60], DECK104, CTX)


def test_false_statement_cannot_be_proved():
    for pos, idx in enumerate(HAND):
        with pytest.raises(InvalidProof, match=f"held card {pos} is forbidden"):
            prove_none_of(X, PUB, HELD, HAND, [idx], DECK, CTX)
    with pytest.raises(InvalidProof):
        prove_card_not(X, PUB, HELD[2], HAND[2], HAND[2], DECK, CTX)


def test_forged_proofs_of_a_false_statement_fail():
    v = HAND[3]  # the hand does hold v
    # 1. lying about the held card's handle: the prover's algebra uses the wrong M
    lying = list(HAND)
    lying[3] = THREE_CLUBS
    _fails(prove_none_of(X, PUB, HELD, lying, [v], DECK, CTX), forbidden=[v])
    # 2. a proof that the hand lacks another card, passed off as one for v
    other = prove_none_of(X, PUB, HELD, HAND, [THREE_CLUBS], DECK, CTX)
    _fails(other, forbidden=[v])
    # 3. a cheating prover that follows the protocol with an arbitrary non-identity Z
    #    and responses chosen for it: without knowing the challenge in advance, the
    #    recomputed commitments do not hash to the challenge
    forged = dataclasses.replace(other, zs=(*other.zs[:3], base_mul(7), *other.zs[4:]))
    _fails(forged, forbidden=[v])
    # 4. with a wrong key share the statement is about someone else's cards
    _fails(prove_none_of(SECRETS[0], PUB, HELD, HAND, [THREE_CLUBS], DECK, CTX))


def test_z_is_never_the_identity_on_the_wire():
    proof = prove_card_not(X, PUB, HELD[0], HAND[0], THREE_CLUBS, DECK, CTX)
    raw = proof.encode()
    identity = (1).to_bytes(32, "little")
    with pytest.raises(InvalidPoint, match="identity"):
        InequalityProof.decode(identity + raw[32:], 1)
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

    # proof fields: every Z, the challenge, every response
    for i in range(proof.leaves):
        zs = list(proof.zs)
        zs[i] = add(zs[i], G)
        fails(dataclasses.replace(proof, zs=tuple(zs)))
        for name in ("s_alpha", "s_beta"):
            ss = list(getattr(proof, name))
            ss[i] = (ss[i] + 1) % L
            fails(dataclasses.replace(proof, **{name: tuple(ss)}))
    fails(dataclasses.replace(proof, c=(proof.c + 1) % L))
    fails(dataclasses.replace(proof, zs=proof.zs[::-1]))  # leaves reordered
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
    for pos in range(0, len(raw), 7):
        bad = bytearray(raw)
        bad[pos] ^= 1
        with pytest.raises((InvalidEncoding, InvalidProof)):
            verify_none_of(
                PUB, held, [THREE_CLUBS, 2], DECK, InequalityProof.decode(bytes(bad), 6), CTX
            )


SMALL_ORDER_8 = bytes.fromhex("26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05")
NON_CANONICAL = (2**255 - 19 + 2).to_bytes(32, "little")
UNREDUCED = L.to_bytes(32, "little")


def test_invalid_points_and_scalars_rejected():
    proof = prove_none_of(X, PUB, HELD[:2], HAND[:2], [THREE_CLUBS], DECK, CTX)
    raw = proof.encode()
    assert len(raw) == proof_size(2)
    for bad_point in (SMALL_ORDER_8, NON_CANONICAL, bytes(32), b"\xff" * 32):
        with pytest.raises(InvalidPoint):
            InequalityProof.decode(bad_point + raw[32:], 2)
        with pytest.raises(InvalidPoint):
            InequalityProof.decode(raw[:32] + bad_point + raw[64:], 2)
    scalar_offsets = range(64, len(raw), 32)  # c, then s_a, s_b per leaf
    assert len(scalar_offsets) == 5
    for off in scalar_offsets:
        with pytest.raises(InvalidScalar):
            InequalityProof.decode(raw[:off] + UNREDUCED + raw[off + 32 :], 2)
    for bad in (raw[:-1], raw + b"\0", raw.hex()):
        with pytest.raises(InvalidEncoding):
            InequalityProof.decode(bad, 2)
    with pytest.raises(InvalidEncoding):
        InequalityProof.decode(raw, 0)
    # in-memory proofs are validated too
    with pytest.raises(InvalidScalar):
        dataclasses.replace(proof, c=L)
    with pytest.raises(InvalidScalar):
        dataclasses.replace(proof, s_beta=(1, -1))
    with pytest.raises(InvalidEncoding):
        dataclasses.replace(proof, zs=(proof.zs[0], proof.zs[1].data))
    with pytest.raises(InvalidEncoding):
        dataclasses.replace(proof, s_alpha=(1,))
    with pytest.raises(InvalidEncoding):
        dataclasses.replace(proof, zs=(), s_alpha=(), s_beta=())
    # a proof with the wrong number of leaves for the statement
    with pytest.raises(InvalidProof, match="leaves"):
        verify_none_of(PUB, HELD[:3], [THREE_CLUBS], DECK, proof, CTX)


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
    # a "held card" whose X is the forbidden encoding itself (x C1 = identity): rejected
    fake = HeldCard(HELD[0].c1, DECK.point(THREE_CLUBS))
    with pytest.raises(InvalidProof, match="equals a card encoding"):
        verify_none_of(
            PUB,
            [fake],
            [THREE_CLUBS],
            DECK,
            dataclasses.replace(
                proof, zs=proof.zs[:1], s_alpha=proof.s_alpha[:1], s_beta=proof.s_beta[:1]
            ),
            CTX,
        )


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


def test_pinned_nonces_are_deterministic_and_fresh_ones_are_not():
    a = prove_none_of(X, PUB, HELD, HAND, [THREE_CLUBS], DECK, CTX, insecure_test_seed=b"s")
    b = prove_none_of(X, PUB, HELD, HAND, [THREE_CLUBS], DECK, CTX, insecure_test_seed=b"s")
    assert a == b
    c = prove_none_of(X, PUB, HELD, HAND, [THREE_CLUBS], DECK, CTX)
    d = prove_none_of(X, PUB, HELD, HAND, [THREE_CLUBS], DECK, CTX)
    assert c != d and len(set(c.zs) | set(d.zs)) == 2 * len(HAND)
    verify_none_of(PUB, HELD, [THREE_CLUBS], DECK, a, CTX)


def test_op_counts():
    """Constant work per card: prove 3 mul + 1 base + 2 add, verify 4 mul + 1 base +
    4 add, per (card, forbidden encoding) -- against 51 DLEQ leaves per card in the CDS
    OR over the other faces (verify: 51 base + 153 mul + 153 add per card)."""
    n = len(HAND)
    COUNTERS.reset()
    proof = prove_none_of(X, PUB, HELD, HAND, [THREE_CLUBS], DECK, CTX)
    assert COUNTERS.snapshot() == {
        "mul": 3 * n,
        "base_mul": n,
        "add": 2 * n,
        "decode": 0,
        "hash_to_point": 0,
    }
    COUNTERS.reset()
    verify_none_of(PUB, HELD, [THREE_CLUBS], DECK, proof, CTX)
    assert COUNTERS.snapshot() == {
        "mul": 4 * n,
        "base_mul": n,
        "add": 4 * n,
        "decode": 0,
        "hash_to_point": 0,
    }
    COUNTERS.reset()
    InequalityProof.decode(proof.encode(), n)
    assert COUNTERS.snapshot()["decode"] == n
    # two forbidden encodings (double deck): twice the leaves
    COUNTERS.reset()
    verify_none_of(
        PUB,
        HELD,
        [THREE_CLUBS, 2],
        DECK,
        prove_none_of(X, PUB, HELD, HAND, [THREE_CLUBS, 2], DECK, CTX),
        CTX,
    )
    assert COUNTERS.snapshot()["mul"] == (3 + 4) * 2 * n


def test_malicious_prover_with_the_card_cannot_make_z_non_identity():
    """A prover that holds v runs the protocol with the true witness ``(r x, -r)``: the
    honest ``Z = r (x C1 - Y_v)`` is the identity, so it shifts it by some ``E``; the
    first verification equation is then off by ``c E`` and the proof fails."""
    from crypto.inequality import _transcript

    v = HAND[2]
    hc = HELD[2]
    r, a, b = 777, 888, 999

    def run_sigma(face, z):
        """The prover's Sigma protocol with witness ``(r x, -r)`` and nonces ``a, b``."""
        y = sub(hc.x, DECK.point(face))
        t = _transcript(CTX, PUB, [hc], [face], DECK, [z])
        a1 = add(mul(a, hc.c1), mul(b, y))
        a2 = add(base_mul(a), mul(b, PUB))
        t.append_points("commitments", [a1, a2])
        c = t.challenge("c")
        return InequalityProof((z,), c, ((a + c * r * X) % L,), ((b - c * r) % L,))

    y = sub(hc.x, DECK.point(v))
    assert y == mul(X, hc.c1)  # the card is v: x C1 - Y_v is the identity
    shift = base_mul(31337)
    forged = run_sigma(v, shift)  # Z = r (x C1 - Y_v) + E with the first term the identity
    with pytest.raises(InvalidProof):
        verify_card_not(PUB, hc, v, DECK, forged, CTX)
    # the same algebra on a true statement is exactly an honest proof, which verifies
    w = THREE_CLUBS
    y = sub(hc.x, DECK.point(w))
    honest = run_sigma(w, mul(r, sub(mul(X, hc.c1), y)))
    verify_card_not(PUB, hc, w, DECK, honest, CTX)


# ---- padded statements (the sealed Slave gift: a size that tells nothing) ----

TOP = 51  # the filler: in every forbidden set below


@pytest.mark.parametrize("forbidden", [[TOP], [1, 2, TOP], list(range(41, 52)) + [1]])
def test_padded_proof_has_one_size_whatever_the_forbidden_set(forbidden):
    hand = (3, 8, 20)
    held = _hand(hand)
    pad = 45
    proof = prove_none_of(X, PUB, held, hand, forbidden, DECK, CTX, pad_to=pad, pad_with=TOP)
    assert proof.leaves == len(hand) * pad
    assert len(proof.encode()) == proof_size(len(hand) * pad)
    verify_none_of(PUB, held, forbidden, DECK, proof, CTX, pad_to=pad, pad_with=TOP)
    # the verifier must pad the very same way: any other statement fails
    for other in (
        {"pad_to": pad - 1, "pad_with": TOP},
        {"pad_to": pad + 1, "pad_with": TOP},
        {"pad_to": pad, "pad_with": min(forbidden)} if min(forbidden) != TOP else None,
    ):
        if other is None:
            continue
        with pytest.raises(InvalidProof):
            verify_none_of(PUB, held, forbidden, DECK, proof, CTX, **other)
    with pytest.raises(InvalidProof):
        verify_none_of(PUB, held, forbidden, DECK, proof, CTX)  # unpadded


def test_padded_proof_tamper_each_field():
    hand = (3, 8)
    held = _hand(hand)
    kw = {"pad_to": 6, "pad_with": TOP}
    proof = prove_none_of(X, PUB, held, hand, [40, TOP], DECK, CTX, **kw)
    leaf = 5  # a padding leaf
    bad = [
        dataclasses.replace(proof, zs=(*proof.zs[:leaf], G, *proof.zs[leaf + 1 :])),
        dataclasses.replace(proof, c=(proof.c + 1) % L),
        dataclasses.replace(proof, s_alpha=(*proof.s_alpha[:leaf], 1, *proof.s_alpha[leaf + 1 :])),
        dataclasses.replace(proof, s_beta=(*proof.s_beta[:leaf], 1, *proof.s_beta[leaf + 1 :])),
    ]
    for p in bad:
        with pytest.raises(InvalidProof):
            verify_none_of(PUB, held, [40, TOP], DECK, p, CTX, **kw)
    for ctx in OTHER_CONTEXTS:
        with pytest.raises(InvalidProof):
            verify_none_of(PUB, held, [40, TOP], DECK, proof, ctx, **kw)


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
