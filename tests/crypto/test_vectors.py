"""Pinned vectors: rebuild with explicit randomness and compare; re-verify every proof
from its serialized form (exercising every decode path)."""

from __future__ import annotations

import importlib.util
import json
import pathlib

import pytest

from crypto.commit import check_commitment
from crypto.deck import deck_points
from crypto.dleq import DleqProof
from crypto.elgamal import Ciphertext, verify_remask
from crypto.errors import InvalidProof
from crypto.group import Point
from crypto.hand_proofs import (
    CompositeProof,
    HeldCard,
    _complement,
    _statement,
    verify_at_most_in_set,
)
from crypto.identity import verify_signature
from crypto.inequality import InequalityProof, verify_none_of
from crypto.keys import KeyShare, joint_key, verify_key_share
from crypto.reveal import RevealToken, verify_token, verify_tokens
from crypto.seal import SealKey, open_sealed
from crypto.transcript import Context

VECTORS = pathlib.Path(__file__).parents[1] / "vectors"


def _load_builder():
    spec = importlib.util.spec_from_file_location("make_vectors", VECTORS / "make_vectors.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def vec():
    return json.loads((VECTORS / "crypto_core.json").read_text())


def test_vectors_reproduce(vec):
    assert _load_builder().build() == vec


def _ctx(vec) -> Context:
    c = vec["context"]
    return Context(bytes.fromhex(c["table_id"]), c["game"], c["step"], c["seat"])


def test_vectors_verify_from_bytes(vec):
    ctx = _ctx(vec)
    h = bytes.fromhex
    c = vec["commit"]
    check_commitment(h(c["commitment"]), h(c["value"]), h(c["nonce"]), h(c["context"]))
    i = vec["identity"]
    verify_signature(h(i["public"]), b"hello", h(i["signature_hello"]))
    s = vec["seal"]
    assert open_sealed(
        SealKey.from_private_bytes(h(s["receiver_private"])), h(s["sealed"]), h(s["context"])
    ) == h(s["plaintext"])

    shares = []
    for sh in vec["keys"]["shares"]:
        share = KeyShare(
            sh["seat"], Point.decode(h(sh["public"])), DleqProof.decode(h(sh["proof"]))
        )
        verify_key_share(share, ctx.with_seat(sh["seat"]))
        shares.append(share)
    pk = Point.decode(h(vec["keys"]["joint_key"]))
    assert joint_key([x.public for x in shares]) == pk

    e = vec["elgamal"]
    ct = Ciphertext.decode(h(e["ciphertext"]))
    new = Ciphertext.decode(h(e["remasked"]))
    verify_remask(ct, new, pk, DleqProof.decode(h(e["remask_proof"])), ctx)

    r = vec["reveal"]
    tok = RevealToken(Point.decode(h(r["token"])), DleqProof.decode(h(r["token_proof"])))
    verify_token(shares[1].public, new, tok, ctx)
    cts = [Ciphertext.decode(h(x)) for x in r["batch_ciphertexts"]]
    toks = [Point.decode(h(x)) for x in r["batch_tokens"]]
    verify_tokens(shares[1].public, cts, toks, DleqProof.decode(h(r["batch_proof"])), ctx)

    hp = vec["hand_proof"]
    deck = deck_points(52)
    held = [HeldCard(Point.decode(h(a)), Point.decode(h(b))) for a, b in hp["held"]]
    n = len(held)
    allowed = _complement(hp["forbidden"], deck)
    stmt = _statement(shares[1].public, held, allowed, n - hp["at_most"], deck)
    proof = CompositeProof.decode(h(hp["proof"]), stmt)
    verify_at_most_in_set(shares[1].public, held, hp["forbidden"], hp["at_most"], deck, proof, ctx)
    with pytest.raises(InvalidProof):
        verify_at_most_in_set(
            shares[1].public, held, hp["forbidden"], hp["at_most"], deck, proof, ctx.with_step(4)
        )

    iv = vec["inequality_proof"]
    iheld = [HeldCard(Point.decode(h(a)), Point.decode(h(b))) for a, b in iv["held"]]
    assert iv["cards"] == len(iheld)
    iproof = InequalityProof.decode(h(iv["proof"]), len(iheld), len(iv["forbidden"]))
    verify_none_of(shares[1].public, iheld, iv["forbidden"], deck, iproof, ctx)
    for other in (ctx.with_step(4), ctx.with_seat(2)):
        with pytest.raises(InvalidProof):
            verify_none_of(shares[1].public, iheld, iv["forbidden"], deck, iproof, other)
    with pytest.raises(InvalidProof):  # another forbidden card
        verify_none_of(shares[1].public, iheld, [2, 3], deck, iproof, ctx)


SMALL_ORDER_8 = bytes.fromhex("26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05")
NON_CANONICAL = (2**255 - 19 + 2).to_bytes(32, "little")
BIG_SCALAR = (2**256 - 1).to_bytes(32, "little")


def test_rejection_at_every_decoder(vec):
    """Small-order / non-canonical points, unreduced scalars and wrong lengths are
    rejected by every decoder through which outside data enters."""
    from crypto.elgamal import decode_pile
    from crypto.errors import InvalidEncoding, InvalidPoint, InvalidScalar

    h = bytes.fromhex
    good_ct = h(vec["elgamal"]["ciphertext"])
    good_proof = h(vec["elgamal"]["remask_proof"])
    for bad_point in (SMALL_ORDER_8, NON_CANONICAL, bytes(32)):
        with pytest.raises(InvalidPoint):
            Ciphertext.decode(bad_point + good_ct[32:])
        with pytest.raises(InvalidPoint):
            Ciphertext.decode(good_ct[:32] + bad_point)
        with pytest.raises(InvalidPoint):
            decode_pile(good_ct + good_ct[:32] + bad_point, 2)
    for bad in (good_ct[:63], good_ct + b"\0"):
        with pytest.raises(InvalidEncoding):
            Ciphertext.decode(bad)
    with pytest.raises(InvalidScalar):
        DleqProof.decode(BIG_SCALAR + good_proof[32:])
    with pytest.raises(InvalidScalar):
        DleqProof.decode(good_proof[:32] + BIG_SCALAR)
    with pytest.raises(InvalidEncoding):
        DleqProof.decode(good_proof[:40])
    hp = vec["hand_proof"]
    deck = deck_points(52)
    held = [HeldCard(Point.decode(h(a)), Point.decode(h(b))) for a, b in hp["held"]]
    stmt = _statement(vec_public(vec), held, _complement(hp["forbidden"], deck), 2, deck)
    raw = h(hp["proof"])
    with pytest.raises(InvalidScalar):
        CompositeProof.decode(raw[:-32] + BIG_SCALAR, stmt)
    with pytest.raises(InvalidEncoding):
        CompositeProof.decode(raw[:-1], stmt)
    iv = vec["inequality_proof"]
    iraw = h(iv["proof"])
    shape = (iv["cards"], len(iv["forbidden"]))
    for bad_point in (SMALL_ORDER_8, NON_CANONICAL, bytes(32)):
        with pytest.raises(InvalidPoint):
            InequalityProof.decode(iraw[:32] + bad_point + iraw[64:], *shape)
    with pytest.raises(InvalidScalar):
        InequalityProof.decode(iraw[:-32] + BIG_SCALAR, *shape)
    with pytest.raises(InvalidEncoding):
        InequalityProof.decode(iraw[:-1], *shape)


def vec_public(vec) -> Point:
    return Point.decode(bytes.fromhex(vec["keys"]["shares"][1]["public"]))


# --- shuffle proofs -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def shuffle_vec():
    return json.loads((VECTORS / "shuffle_proofs.json").read_text())


def test_shuffle_vectors_reproduce(shuffle_vec):
    assert _load_builder().build_shuffles() == shuffle_vec


def _shuffle_case(case):
    from crypto.elgamal import decode_pile

    h = bytes.fromhex
    c = case["context"]
    ctx = Context(bytes.fromhex(c["table_id"]), c["game"], c["step"], c["seat"])
    n = case["cards"]
    pk = Point.decode(h(case["joint_key"]))
    inputs = decode_pile(h(case["inputs"]), n)
    outputs = decode_pile(h(case["outputs"]), n)
    return ctx, n, pk, inputs, outputs


def test_shuffle_vectors_verify_from_bytes(shuffle_vec):
    """Both proofs verify from wire form; the witness reproduces the outputs; either
    proof fails in another context, for swapped piles and after any flipped byte."""
    from crypto import shuffle_proof_cc as cc
    from crypto import shuffle_proof_tw as tw
    from crypto import shuffle_proof_tw_batch as twb
    from crypto.errors import InvalidEncoding
    from crypto.group import scalar_from_bytes
    from crypto.shuffle import ShuffleWitness, apply_shuffle

    rounds = shuffle_vec["cc_rounds"]
    assert [case["cards"] for case in shuffle_vec["cases"]] == [3, 5]
    for case in shuffle_vec["cases"]:
        ctx, n, pk, inputs, outputs = _shuffle_case(case)
        deck = deck_points(case["deck_size"])
        witness = ShuffleWitness(
            tuple(case["permutation"]),
            tuple(scalar_from_bytes(bytes.fromhex(k)) for k in case["rerandomisers"]),
        )
        assert apply_shuffle(inputs, pk, witness) == tuple(outputs)
        tw_raw = bytes.fromhex(case["tw_proof"])
        cc_raw = bytes.fromhex(case["cc_proof"])
        assert len(tw_raw) == tw.proof_size(n) and len(cc_raw) == cc.proof_size(n, rounds)
        tw_proof = tw.TWShuffleProof.decode(tw_raw, n)
        cc_proof = cc.CCShuffleProof.decode(cc_raw, n)
        tw.verify_shuffle(inputs, outputs, pk, tw_proof, ctx)
        cc.verify_shuffle(inputs, outputs, pk, cc_proof, ctx, min_rounds=rounds)
        twc_proof = twb.TWCommitmentProof.decode(bytes.fromhex(case["tw_commitment_proof"]), n)
        assert twc_proof.permutation_commitments == tw_proof.permutation_commitments
        assert twc_proof.s_prime == tw_proof.s_prime
        twb.verify_shuffle_commitment(inputs, outputs, pk, twc_proof, ctx)
        with pytest.raises(InvalidProof):
            twb.verify_shuffle_commitment(inputs, outputs, pk, twc_proof, ctx.with_step(1))
        # the pile holds exactly the recorded cards (the shuffle moved, not changed, them)
        assert len({deck.point(i) for i in case["card_handles"]}) == n
        for other in (ctx.with_step(ctx.step + 1), ctx.with_seat(ctx.seat + 1)):
            with pytest.raises(InvalidProof):
                tw.verify_shuffle(inputs, outputs, pk, tw_proof, other)
            with pytest.raises(InvalidProof):
                cc.verify_shuffle(inputs, outputs, pk, cc_proof, other, min_rounds=rounds)
        with pytest.raises(InvalidProof):
            tw.verify_shuffle(outputs, inputs, pk, tw_proof, ctx)
        with pytest.raises(InvalidProof):
            cc.verify_shuffle(outputs, inputs, pk, cc_proof, ctx, min_rounds=rounds)
        # one flipped bit anywhere past the header: rejected at decode or at verify
        for raw, mod, verify in (
            (tw_raw, lambda b, n=n: tw.TWShuffleProof.decode(b, n), tw.verify_shuffle),
            (
                cc_raw,
                lambda b, n=n: cc.CCShuffleProof.decode(b, n),
                lambda i, o, k, p, c: cc.verify_shuffle(i, o, k, p, c, min_rounds=rounds),
            ),
        ):
            for pos in range(3, len(raw), max(1, len(raw) // 97)):
                bad = bytearray(raw)
                bad[pos] ^= 1
                with pytest.raises((InvalidEncoding, InvalidProof)):
                    verify(inputs, outputs, pk, mod(bytes(bad)), ctx)
