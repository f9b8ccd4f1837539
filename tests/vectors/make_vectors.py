"""Generate the pinned test vectors (tests/vectors/crypto_core.json, shuffle_proofs.json).

Every value is computed with explicit randomness, so the output is fully
deterministic.  ``tests/crypto/test_vectors.py`` rebuilds the vectors and
compares them with the committed JSON, and independently re-verifies every
proof in it.  Regenerate (only after a deliberate format change) with:

    .venv/bin/python tests/vectors/make_vectors.py
"""

from __future__ import annotations

import hashlib
import json
import pathlib

from crypto import shuffle_proof_cc as cc
from crypto import shuffle_proof_tw as tw
from crypto import shuffle_proof_tw_batch as twb
from crypto.commit import JointStream, commit
from crypto.deck import DECK_SIZES, deck_points
from crypto.elgamal import encode_pile, mask, remask_proven
from crypto.group import base_mul, hash_to_point, mul, random_scalar, scalar_to_bytes
from crypto.hand_proofs import held_card, prove_at_most_in_set
from crypto.identity import IdentityKey
from crypto.inequality import prove_none_of
from crypto.keys import joint_key, make_key_share
from crypto.reveal import make_token, make_tokens
from crypto.seal import SealKey, _seal_from_parts
from crypto.shuffle import shuffle_deck
from crypto.transcript import Context, Transcript

PATH = pathlib.Path(__file__).with_name("crypto_core.json")
SHUFFLE_PATH = pathlib.Path(__file__).with_name("shuffle_proofs.json")
SHUFFLE_SIZES = (3, 5)
CC_VECTOR_ROUNDS = 16
"""Cut-and-choose rounds in the vectors: enough to exercise both coin values many
times while keeping the file small (the production default is 128)."""


def _rng(label: str) -> int:
    return random_scalar(hashlib.sha512(b"vector-rng:" + label.encode()).digest())


def _s(k: int) -> str:
    return scalar_to_bytes(k).hex()


def build() -> dict:
    ctx = Context(b"vector-table", 7, 3, 1)
    out: dict = {"context": {"table_id": ctx.table_id.hex(), "game": 7, "step": 3, "seat": 1}}

    out["group"] = {
        "base_mul_2": base_mul(2).data.hex(),
        "hash_to_point_abc": hash_to_point(b"vector", b"abc").data.hex(),
        "random_scalar_from_07": _s(random_scalar(b"\x07" * 64)),
    }
    t = Transcript("vector", ctx)
    t.append("item", b"hello")
    t.append_point("g", base_mul(2))
    out["transcript"] = {
        "challenge": _s(t.challenge("c")),
        "challenges": [_s(x) for x in t.challenges("r", 2)],
    }

    c, n = commit(b"value", b"commit-ctx", nonce=bytes(range(32)))
    out["commit"] = {
        "value": b"value".hex(),
        "context": b"commit-ctx".hex(),
        "nonce": n.hex(),
        "commitment": c.hex(),
    }

    jr = JointStream.from_reveals(b"dice-ctx", {0: b"a" * 32, 1: b"b" * 32, 2: b"c" * 32})
    out["joint_random"] = {
        "seed": jr.seed.hex(),
        "dice": jr.dice(10),
        "permutation": jr.permutation(8),
    }

    ident = IdentityKey.from_private_bytes(bytes(range(32)))
    out["identity"] = {
        "private": ident.private_bytes().hex(),
        "public": ident.public.hex(),
        "fingerprint": ident.fingerprint,
        "signature_hello": ident.sign(b"hello").hex(),
    }
    recv = SealKey.from_private_bytes(bytes([5]) * 32)
    out["seal"] = {
        "receiver_private": recv.private_bytes().hex(),
        "randomness": (bytes([9]) * 32).hex(),
        "plaintext": b"token".hex(),
        "context": b"seal-ctx".hex(),
        "sealed": _seal_from_parts(recv.public, b"token", b"seal-ctx", bytes([9]) * 32).hex(),
    }

    out["decks"] = {
        str(size): {
            "first": deck_points(size).point(0).data.hex(),
            "last": deck_points(size).point(size - 1).data.hex(),
            "sha256_all": hashlib.sha256(
                b"".join(p.data for p in deck_points(size).points)
            ).hexdigest(),
        }
        for size in DECK_SIZES
    }

    secrets = [_rng(f"secret{i}") for i in range(3)]
    shares = [
        make_key_share(ctx.with_seat(i), x, insecure_test_seed=f"keyw{i}".encode())
        for i, x in enumerate(secrets)
    ]
    pk = joint_key([s.public for s in shares])
    out["keys"] = {
        "secrets": [_s(x) for x in secrets],
        "shares": [
            {"seat": s.seat, "public": s.public.data.hex(), "proof": s.proof.encode().hex()}
            for s in shares
        ],
        "joint_key": pk.data.hex(),
    }

    deck = deck_points(52)
    ct, _ = mask(deck.point(17), pk, r=_rng("mask"))
    new, rproof = remask_proven(ct, pk, ctx, r=_rng("remask-r"), insecure_test_seed=b"remask-w")
    out["elgamal"] = {
        "card": 17,
        "mask_r": _s(_rng("mask")),
        "ciphertext": ct.encode().hex(),
        "remask_r": _s(_rng("remask-r")),
        "remasked": new.encode().hex(),
        "remask_proof": rproof.encode().hex(),
    }

    tok = make_token(secrets[1], shares[1].public, new, ctx, insecure_test_seed=b"token-w")
    cts = [mask(deck.point(i), pk, r=_rng(f"m{i}"))[0] for i in range(4)]
    toks, bproof = make_tokens(
        secrets[1], shares[1].public, cts, ctx, insecure_test_seed=b"tokens-w"
    )
    out["reveal"] = {
        "token": tok.token.data.hex(),
        "token_proof": tok.proof.encode().hex(),
        "batch_ciphertexts": [x.encode().hex() for x in cts],
        "batch_tokens": [x.data.hex() for x in toks],
        "batch_proof": bproof.encode().hex(),
    }

    hand = [0, 14, 27]
    held = []
    for k, idx in enumerate(hand):
        hct = mask(deck.point(idx), pk, r=_rng(f"h{k}"))[0]
        held.append(held_card(hct, [mul(secrets[s], hct.c1) for s in (0, 2)]))
    spades = set(range(13))
    hp = prove_at_most_in_set(
        secrets[1], shares[1].public, held, hand, spades, 1, deck, ctx, insecure_test_seed=b"hand"
    )
    out["hand_proof"] = {
        "held": [[h.c1.data.hex(), h.x.data.hex()] for h in held],
        "forbidden": sorted(spades),
        "at_most": 1,
        "proof": hp.encode().hex(),
    }

    # "none of my cards is handle 1 or 2" (a blinded comparison, crypto/inequality.py)
    not_these = [1, 2]
    ip = prove_none_of(
        secrets[1],
        shares[1].public,
        held,
        hand,
        not_these,
        deck,
        ctx,
        insecure_test_seed=b"inequality",
    )
    out["inequality_proof"] = {
        "held": [[h.c1.data.hex(), h.x.data.hex()] for h in held],
        "forbidden": not_these,
        "cards": len(ip.qs),
        "proof": ip.encode().hex(),
    }
    return out


def build_shuffles() -> dict:
    """Both shuffle proofs on the same seeded shuffles of 3 and 5 cards.

    Each case records the statement (joint key, input and output piles), the
    witness (permutation, re-randomisers) and both proofs in wire form, so an
    independent implementation can check its prover and its verifier.
    """
    out: dict = {"cc_rounds": CC_VECTOR_ROUNDS, "cases": []}
    deck = deck_points(52)
    for n in SHUFFLE_SIZES:
        ctx = Context(b"vector-table", 7, 20 + n, n % 4)
        secrets = [_rng(f"shuffle{n}-secret{i}") for i in range(3)]
        pk = joint_key([base_mul(x) for x in secrets])
        cards = list(range(2 * n, 3 * n))  # any n distinct handles
        pile = tuple(
            mask(deck.point(idx), pk, r=_rng(f"shuffle{n}-mask{k}"))[0]
            for k, idx in enumerate(cards)
        )
        shuffled, w = shuffle_deck(
            pile, pk, insecure_test_seed=f"shuffle-vector-{n}-witness".encode()
        )
        tw_seed = f"tw-shuffle-vector-{n}".encode()
        tw_proof = tw.prove_shuffle(pile, shuffled, pk, w, ctx, insecure_test_seed=tw_seed)
        # the same proof in commitment form (same seed, same transcript)
        tw_commitment = twb.prove_shuffle_batchable(
            pile, shuffled, pk, w, ctx, insecure_test_seed=tw_seed
        )
        cc_proof = cc.prove_shuffle(
            pile,
            shuffled,
            pk,
            w,
            ctx,
            rounds=CC_VECTOR_ROUNDS,
            insecure_test_seed=f"cc-shuffle-vector-{n}".encode(),
        )
        out["cases"].append(
            {
                "cards": n,
                "context": {
                    "table_id": ctx.table_id.hex(),
                    "game": ctx.game,
                    "step": ctx.step,
                    "seat": ctx.seat,
                },
                "deck_size": deck.size,
                "card_handles": cards,
                "joint_key": pk.data.hex(),
                "inputs": encode_pile(pile).hex(),
                "outputs": encode_pile(shuffled).hex(),
                "permutation": list(w.permutation),
                "rerandomisers": [_s(k) for k in w.rerandomisers],
                "tw_proof": tw_proof.encode().hex(),
                "tw_commitment_proof": tw_commitment.encode().hex(),
                "cc_proof": cc_proof.encode().hex(),
            }
        )
    return out


def main() -> None:
    PATH.write_text(json.dumps(build(), indent=1, sort_keys=True) + "\n")
    SHUFFLE_PATH.write_text(json.dumps(build_shuffles(), indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
