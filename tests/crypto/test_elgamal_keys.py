"""Tests for keys (Schnorr PoK, joint key), dleq, elgamal (mask / remask proofs) and decks."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from crypto.deck import DECK_SIZES, card_point, deck_points
from crypto.dleq import DleqProof, prove_dleq, prove_dleq_batch, verify_dleq, verify_dleq_batch
from crypto.elgamal import (
    Ciphertext,
    decode_pile,
    encode_pile,
    mask,
    prove_remask,
    public_mask,
    remask,
    remask_proven,
    verify_remask,
)
from crypto.errors import DeckMismatch, InvalidEncoding, InvalidPoint, InvalidProof, InvalidScalar
from crypto.group import COUNTERS, G, L, Point, base_mul, hash_to_point, mul
from crypto.keys import KeyShare, joint_key, make_key_share, new_key_share, verify_key_share
from crypto.transcript import Context, Transcript
from tests.crypto._helpers import other_contexts

CTX = Context(b"table", 1, 2, 0)
OTHER_CONTEXTS = other_contexts(CTX)
scalars = st.integers(min_value=1, max_value=L - 1)


def _tamper_scalar(proof: DleqProof, field: str) -> DleqProof:
    return dataclasses.replace(proof, **{field: (getattr(proof, field) + 1) % L})


# ---------------------------------------------------------------- keys


def test_key_share_roundtrip_and_joint_key():
    shares = []
    secrets = []
    for seat in range(4):
        x, share = new_key_share(CTX.with_seat(seat))
        verify_key_share(share, CTX.with_seat(seat))
        secrets.append(x)
        shares.append(share)
    pk = joint_key([s.public for s in shares])
    assert pk == base_mul(sum(secrets) % L)


def test_key_share_tampering_and_context():
    share = make_key_share(CTX, 12345, insecure_test_seed=b"k")
    for field in ("c", "s"):
        with pytest.raises(InvalidProof):
            verify_key_share(
                dataclasses.replace(share, proof=_tamper_scalar(share.proof, field)), CTX
            )
    with pytest.raises(InvalidProof):
        verify_key_share(dataclasses.replace(share, public=base_mul(12346)), CTX)
    with pytest.raises(InvalidProof, match="seat"):
        verify_key_share(dataclasses.replace(share, seat=1), CTX)
    for other in OTHER_CONTEXTS:
        with pytest.raises(InvalidProof):
            verify_key_share(dataclasses.replace(share, seat=other.seat), other)


def test_rogue_key_without_knowledge_fails():
    """A seat publishing Y - PK_0 cannot produce a proof (it does not know the dlog)."""
    honest = make_key_share(CTX, 999)
    target = hash_to_point(b"rogue-target")
    from crypto.group import sub

    rogue_pub = sub(target, honest.public)
    forged = KeyShare(1, rogue_pub, honest.proof)
    with pytest.raises(InvalidProof):
        verify_key_share(forged, CTX.with_seat(1))
    with pytest.raises(InvalidProof, match="duplicate"):
        joint_key([honest.public, honest.public])
    with pytest.raises(InvalidProof, match="identity"):
        joint_key([base_mul(5), base_mul(L - 5)])


def test_key_op_counts():
    COUNTERS.reset()
    share = make_key_share(CTX, 5, insecure_test_seed=b"k")
    assert COUNTERS.snapshot() | {} == {
        "mul": 0,
        "base_mul": 2,
        "add": 0,
        "decode": 0,
        "hash_to_point": 0,
    }
    COUNTERS.reset()
    verify_key_share(share, CTX)
    assert (COUNTERS.mul, COUNTERS.base_mul, COUNTERS.add) == (1, 1, 1)


# ---------------------------------------------------------------- dleq


def _dleq_statement(x=31337):
    h = hash_to_point(b"h")
    return x, G, h, base_mul(x), mul(x, h)


def test_dleq_roundtrip_tamper_context():
    x, g, h, xg, xh = _dleq_statement()
    proof = prove_dleq(x, g, h, xg, xh, Transcript("t", CTX))
    verify_dleq(g, h, xg, xh, proof, Transcript("t", CTX))
    assert DleqProof.decode(proof.encode()) == proof
    for field in ("c", "s"):
        with pytest.raises(InvalidProof):
            verify_dleq(g, h, xg, xh, _tamper_scalar(proof, field), Transcript("t", CTX))
    other = hash_to_point(b"other")
    for args in ((other, h, xg, xh), (g, other, xg, xh), (g, h, other, xh), (g, h, xg, other)):
        with pytest.raises(InvalidProof):
            verify_dleq(*args, proof, Transcript("t", CTX))
    for ctx in OTHER_CONTEXTS:
        with pytest.raises(InvalidProof):
            verify_dleq(g, h, xg, xh, proof, Transcript("t", ctx))
    with pytest.raises(InvalidProof):
        verify_dleq(g, h, xg, xh, proof, Transcript("u", CTX))


def test_dleq_false_statement_cannot_be_proven():
    x, g, h, xg, _ = _dleq_statement()
    wrong = mul(x + 1, h)
    proof = prove_dleq(x, g, h, xg, wrong, Transcript("t", CTX))
    with pytest.raises(InvalidProof):
        verify_dleq(g, h, xg, wrong, proof, Transcript("t", CTX))


def test_dleq_zero_and_degenerate_proofs_rejected():
    x, g, h, xg, xh = _dleq_statement()
    for c, s in ((0, 0), (0, 1), (1, 0)):
        with pytest.raises(InvalidProof):
            verify_dleq(g, h, xg, xh, DleqProof(c, s), Transcript("t", CTX))
    with pytest.raises(InvalidScalar):
        DleqProof(L, 1)
    with pytest.raises(InvalidScalar):
        DleqProof.decode(L.to_bytes(32, "little") + bytes(32))
    with pytest.raises(InvalidEncoding):
        DleqProof.decode(bytes(63))


def test_dleq_op_counts():
    x, g, h, xg, xh = _dleq_statement()
    COUNTERS.reset()
    proof = prove_dleq(x, g, h, xg, xh, Transcript("t", CTX))
    assert (COUNTERS.mul, COUNTERS.base_mul, COUNTERS.add) == (1, 1, 0)
    COUNTERS.reset()
    verify_dleq(g, h, xg, xh, proof, Transcript("t", CTX))
    assert (COUNTERS.mul, COUNTERS.base_mul, COUNTERS.add) == (3, 1, 2)


def test_dleq_batch():
    x = 4242
    hs = [hash_to_point(b"b", bytes([i])) for i in range(6)]
    xhs = [mul(x, h) for h in hs]
    pk = base_mul(x)
    COUNTERS.reset()
    proof = prove_dleq_batch(x, G, hs, pk, xhs, Transcript("b", CTX))
    assert (COUNTERS.mul, COUNTERS.base_mul, COUNTERS.add) == (6 + 1, 1, 5)
    COUNTERS.reset()
    verify_dleq_batch(G, hs, pk, xhs, proof, Transcript("b", CTX))
    assert (COUNTERS.mul, COUNTERS.base_mul, COUNTERS.add) == (2 * 6 + 1, 1, 2 * 6)
    for i in range(6):
        bad = list(xhs)
        bad[i] = mul(x + 1, hs[i])
        with pytest.raises(InvalidProof):
            verify_dleq_batch(G, hs, pk, bad, proof, Transcript("b", CTX))
        # a cheater proving with the wrong image also fails
        bad_proof = prove_dleq_batch(x, G, hs, pk, bad, Transcript("b", CTX))
        with pytest.raises(InvalidProof):
            verify_dleq_batch(G, hs, pk, bad, bad_proof, Transcript("b", CTX))
    swapped = [xhs[1], xhs[0], *xhs[2:]]
    with pytest.raises(InvalidProof):
        verify_dleq_batch(G, hs, pk, swapped, proof, Transcript("b", CTX))
    with pytest.raises(DeckMismatch):
        verify_dleq_batch(G, hs, pk, xhs[:5], proof, Transcript("b", CTX))
    for ctx in OTHER_CONTEXTS:
        with pytest.raises(InvalidProof):
            verify_dleq_batch(G, hs, pk, xhs, proof, Transcript("b", ctx))


# ---------------------------------------------------------------- elgamal


def _pk():
    return base_mul(777)


def test_mask_and_public_mask():
    pk = _pk()
    m = card_point("deck52", 3)
    ct, r = mask(m, pk, r=55)
    assert ct.c1 == base_mul(55)
    assert public_mask(m, pk).c1 == G
    assert Ciphertext.decode(ct.encode()) == ct
    assert decode_pile(encode_pile([ct, ct]), 2) == [ct, ct]
    with pytest.raises(InvalidEncoding):
        decode_pile(encode_pile([ct]), 2)
    with pytest.raises(InvalidPoint):
        Ciphertext.decode(bytes(64))
    with pytest.raises(InvalidScalar):
        mask(m, pk, r=0)
    with pytest.raises(InvalidScalar):
        mask(m, pk, r=L)


def test_remask_proof_roundtrip_tamper_context():
    pk = _pk()
    ct, _ = mask(card_point("deck52", 1), pk)
    new, proof = remask_proven(ct, pk, CTX)
    verify_remask(ct, new, pk, proof, CTX)
    new2, r2 = remask(ct, pk, r=99)
    verify_remask(ct, new2, pk, prove_remask(ct, new2, r2, pk, CTX), CTX)
    for field in ("c", "s"):
        with pytest.raises(InvalidProof):
            verify_remask(ct, new, pk, _tamper_scalar(proof, field), CTX)
    other = hash_to_point(b"x")
    for bad_ct, bad_new, bad_pk in (
        (Ciphertext(other, ct.c2), new, pk),
        (Ciphertext(ct.c1, other), new, pk),
        (ct, Ciphertext(other, new.c2), pk),
        (ct, Ciphertext(new.c1, other), pk),
        (ct, new, other),
    ):
        with pytest.raises(InvalidProof):
            verify_remask(bad_ct, bad_new, bad_pk, proof, CTX)
    for ctx in OTHER_CONTEXTS:
        with pytest.raises(InvalidProof):
            verify_remask(ct, new, pk, proof, ctx)


def test_remask_that_changes_the_card_is_rejected():
    pk = _pk()
    ct, _ = mask(card_point("deck52", 1), pk)
    d1, d2 = base_mul(5), mul(5, pk)
    # substitute card 2 while "remasking": c2' = c2 + 5 PK + (M2 - M1)
    from crypto.group import add, sub

    cheat = Ciphertext(
        add(ct.c1, d1),
        add(add(ct.c2, d2), sub(card_point("deck52", 2), card_point("deck52", 1))),
    )
    proof = prove_remask(ct, cheat, 5, pk, CTX)
    with pytest.raises(InvalidProof):
        verify_remask(ct, cheat, pk, proof, CTX)
    with pytest.raises(InvalidProof, match="unchanged"):
        verify_remask(ct, ct, pk, proof, CTX)


def test_remask_op_counts():
    pk = _pk()
    ct, _ = mask(card_point("deck52", 1), pk, r=3)
    COUNTERS.reset()
    new, proof = remask_proven(ct, pk, CTX, r=4, insecure_test_seed=b"r")
    assert (COUNTERS.mul, COUNTERS.base_mul, COUNTERS.add) == (2, 2, 2)
    COUNTERS.reset()
    verify_remask(ct, new, pk, proof, CTX)
    assert (COUNTERS.mul, COUNTERS.base_mul, COUNTERS.add) == (3, 1, 4)


@settings(max_examples=25, deadline=None)
@given(scalars, scalars, scalars)
@example(1, L - 1, 1)  # found by Hypothesis in make test: r1 + r2 = L
def test_remask_unlinkable_sanity(r1, r2, x):
    """Remasks of one card with fresh randomness differ from each other and from the
    input, and a remask of card A is distributed like a fresh mask of A: its c1 is
    r G for uniform r regardless of the card."""
    pk = base_mul(x)
    ct, _ = mask(card_point("deck52", 0), pk, r=r1)
    if (r1 + r2) % L == 0:  # the negated mask: c1 would be the identity, which is refused
        with pytest.raises(InvalidProof, match="identity"):
            remask(ct, pk, r=r2)
        return
    a, _ = remask(ct, pk, r=r2)
    assert a.c1 != ct.c1 and a.c2 != ct.c2
    # c1 of the remask equals the c1 of a fresh mask with r1 + r2: nothing card-specific
    fresh, _ = mask(card_point("deck52", 0), pk, r=(r1 + r2) % L)
    assert fresh == a
    other, _ = mask(card_point("deck52", 1), pk, r=(r1 + r2) % L)
    assert other.c1 == a.c1


# ---------------------------------------------------------------- decks


def test_decks():
    for size in DECK_SIZES:
        deck = deck_points(size)
        assert len(deck.points) == size == len({p.data for p in deck.points})
        for i in (0, size - 1):
            assert deck.index_of(deck.point(i)) == i
            assert Point.decode(deck.point(i).data) == deck.point(i)
        assert G not in deck.points
    d104 = deck_points(104)
    assert d104.face(3) == d104.face(55) == 3 and d104.point(3) != d104.point(55)
    assert deck_points(54).face(53) == 53
    assert deck_points(52).point(0) != deck_points(54).point(0)
    with pytest.raises(DeckMismatch):
        deck_points(53)
    with pytest.raises(InvalidEncoding):
        deck_points(52).point(52)
    with pytest.raises(InvalidProof, match="not a card"):
        deck_points(52).index_of(G)
    with pytest.raises(DeckMismatch):
        deck_points(52).check_size(54)
    assert deck_points(52).deck_id == "deck52"
