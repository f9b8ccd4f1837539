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


def vec_public(vec) -> Point:
    return Point.decode(bytes.fromhex(vec["keys"]["shares"][1]["public"]))
