"""Tests for crypto.reveal: tokens, batched tokens, private/public reveal, unmasking."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crypto.deck import deck_points
from crypto.dleq import DleqProof
from crypto.elgamal import Ciphertext, mask, public_mask, remask
from crypto.errors import DeckMismatch, InvalidProof
from crypto.group import COUNTERS, L, base_mul, hash_to_point, mul
from crypto.keys import joint_key
from crypto.reveal import (
    RevealToken,
    make_token,
    make_tokens,
    reveal_index,
    unmask,
    unmask_private,
    verify_token,
    verify_tokens,
)
from crypto.transcript import Context
from tests.crypto._helpers import other_contexts

CTX = Context(b"table", 1, 5, 0)
OTHER_CONTEXTS = other_contexts(CTX)
SECRETS = [1111, 2222, 3333, 4444]
PUBLICS = [base_mul(x) for x in SECRETS]
PK = joint_key(PUBLICS)
DECK = deck_points(52)


def _masked(index=7, r=123):
    return mask(DECK.point(index), PK, r=r)[0]


def test_public_reveal_roundtrip():
    ct = _masked()
    toks = []
    for seat, x in enumerate(SECRETS):
        tok = make_token(x, PUBLICS[seat], ct, CTX.with_seat(seat))
        verify_token(PUBLICS[seat], ct, tok, CTX.with_seat(seat))
        toks.append(tok.token)
    assert reveal_index(unmask(ct, toks), DECK) == 7


def test_private_reveal_only_receiver_can_finish():
    ct = _masked(index=12)
    receiver = 2
    others = [mul(x, ct.c1) for s, x in enumerate(SECRETS) if s != receiver]
    assert reveal_index(unmask_private(ct, others, SECRETS[receiver]), DECK) == 12
    # without the receiver's share the point is not a card
    with pytest.raises(InvalidProof, match="not a card"):
        reveal_index(unmask(ct, others), DECK)
    # a wrong secret does not give the card either
    with pytest.raises(InvalidProof):
        reveal_index(unmask_private(ct, others, SECRETS[receiver] + 1), DECK)


def test_token_tampering_and_context():
    ct = _masked()
    tok = make_token(SECRETS[0], PUBLICS[0], ct, CTX)
    for field in ("c", "s"):
        bad = RevealToken(
            tok.token,
            dataclasses.replace(tok.proof, **{field: (getattr(tok.proof, field) + 1) % L}),
        )
        with pytest.raises(InvalidProof, match="seat 0"):
            verify_token(PUBLICS[0], ct, bad, CTX)
    with pytest.raises(InvalidProof):
        verify_token(PUBLICS[0], ct, RevealToken(mul(SECRETS[0] + 1, ct.c1), tok.proof), CTX)
    with pytest.raises(InvalidProof):
        verify_token(PUBLICS[1], ct, tok, CTX)
    other = hash_to_point(b"o")
    for bad_ct in (Ciphertext(other, ct.c2), Ciphertext(ct.c1, other)):
        with pytest.raises(InvalidProof):
            verify_token(PUBLICS[0], bad_ct, tok, CTX)
    for ctx in OTHER_CONTEXTS:
        with pytest.raises(InvalidProof):
            verify_token(PUBLICS[0], ct, tok, ctx)


def test_wrong_token_with_honest_looking_proof_rejected():
    ct = _masked()
    cheat = mul(SECRETS[0] + 5, ct.c1)
    # a proof made with the real secret for a different token value
    from crypto.dleq import prove_dleq
    from crypto.group import G
    from crypto.reveal import TOKEN_PROTOCOL, _transcript

    t = _transcript(TOKEN_PROTOCOL, CTX, PUBLICS[0], [ct])
    proof = prove_dleq(SECRETS[0], G, ct.c1, PUBLICS[0], cheat, t)
    with pytest.raises(InvalidProof):
        verify_token(PUBLICS[0], ct, RevealToken(cheat, proof), CTX)


def test_batched_tokens():
    cts = [_masked(i, r=100 + i) for i in range(10)]
    COUNTERS.reset()
    toks, proof = make_tokens(SECRETS[1], PUBLICS[1], cts, CTX.with_seat(1))
    assert (COUNTERS.mul, COUNTERS.base_mul) == (2 * 10 + 1, 1)
    COUNTERS.reset()
    verify_tokens(PUBLICS[1], cts, toks, proof, CTX.with_seat(1))
    assert (COUNTERS.mul, COUNTERS.base_mul, COUNTERS.add) == (2 * 10 + 1, 1, 2 * 10)
    for i in range(10):
        bad = list(toks)
        bad[i] = mul(SECRETS[1] + 1, cts[i].c1)
        with pytest.raises(InvalidProof, match="seat 1"):
            verify_tokens(PUBLICS[1], cts, bad, proof, CTX.with_seat(1))
    for field in ("c", "s"):
        bad_proof = dataclasses.replace(proof, **{field: (getattr(proof, field) + 1) % L})
        with pytest.raises(InvalidProof):
            verify_tokens(PUBLICS[1], cts, toks, bad_proof, CTX.with_seat(1))
    swapped_cts = [cts[1], cts[0], *cts[2:]]
    with pytest.raises(InvalidProof):
        verify_tokens(PUBLICS[1], swapped_cts, toks, proof, CTX.with_seat(1))
    with pytest.raises(InvalidProof):
        verify_tokens(PUBLICS[0], cts, toks, proof, CTX.with_seat(1))
    with pytest.raises(DeckMismatch):
        verify_tokens(PUBLICS[1], cts, toks[:9], proof, CTX.with_seat(1))
    for ctx in [c.with_seat(1) for c in OTHER_CONTEXTS[:3]] + [CTX]:
        with pytest.raises(InvalidProof):
            verify_tokens(PUBLICS[1], cts, toks, proof, ctx)


def test_token_op_counts():
    ct = _masked()
    COUNTERS.reset()
    tok = make_token(SECRETS[0], PUBLICS[0], ct, CTX, insecure_test_seed=b"t")
    assert (COUNTERS.mul, COUNTERS.base_mul, COUNTERS.add) == (2, 1, 0)
    COUNTERS.reset()
    verify_token(PUBLICS[0], ct, tok, CTX)
    assert (COUNTERS.mul, COUNTERS.base_mul, COUNTERS.add) == (3, 1, 2)


@settings(max_examples=20, deadline=None)
@given(
    st.sampled_from([52, 54, 104]),
    st.data(),
    st.lists(st.integers(min_value=1, max_value=L - 1), min_size=1, max_size=4),
)
def test_mask_remask_reveal_roundtrip(size, data, secrets):
    deck = deck_points(size)
    index = data.draw(st.integers(min_value=0, max_value=size - 1))
    publics = [base_mul(x) for x in secrets]
    if len({p.data for p in publics}) != len(publics):
        return
    try:
        pk = joint_key(publics)
    except InvalidProof:
        return
    ct = public_mask(deck.point(index), pk)
    ct, _ = remask(ct, pk)
    ct, _ = remask(ct, pk)
    toks = [mul(x, ct.c1) for x in secrets]
    assert reveal_index(unmask(ct, toks), deck) == index
    # the face of a 104-deck handle is the handle mod 52
    assert deck.face(index) == (index % 52 if size == 104 else index)


def test_degenerate_token_proof_rejected():
    ct = _masked()
    tok = RevealToken(mul(SECRETS[0], ct.c1), DleqProof(0, 0))
    with pytest.raises(InvalidProof):
        verify_token(PUBLICS[0], ct, tok, CTX)
