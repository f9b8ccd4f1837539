"""Tests for crypto.shuffle and both shuffle proofs (cut-and-choose and Terelius-Wikstrom).

Both proofs run on the same shuffles: honest ones must verify under both, and
each kind of cheating shuffle (dropped, duplicated, substituted, unremasked
card) must be rejected by both.  Every field of each proof is tampered with,
proofs are moved to other contexts, and the decoders are fed bad points,
unreduced scalars and wrong lengths.  Operation counts are asserted exactly.
"""

from __future__ import annotations

import dataclasses

import nacl.bindings as sodium
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crypto import shuffle_proof_cc as cc
from crypto import shuffle_proof_tw as tw
from crypto.elgamal import Ciphertext
from crypto.errors import (
    CryptoError,
    DeckMismatch,
    InvalidEncoding,
    InvalidPoint,
    InvalidProof,
    InvalidScalar,
)
from crypto.group import (
    COUNTERS,
    IDENTITY_BYTES,
    G,
    L,
    Point,
    add,
    base_mul,
    hash_to_point,
    mul,
    random_scalar,
    sub,
)
from crypto.nonces import NonceStream
from crypto.shuffle import (
    MAX_CARDS,
    ShuffleWitness,
    apply_shuffle,
    random_permutation,
    random_witness,
    remask_with,
    shuffle_deck,
)
from crypto.transcript import Context

CTX = Context(b"table-under-test", 3, 7, 1)
FAST_ROUNDS = 12  # cut-and-choose rounds for tests that are not about soundness level
SMALL = 4
ORDER_TWO_POINT = bytes.fromhex("ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f")


@dataclasses.dataclass(frozen=True)
class Table:
    secret: int
    joint_key: Point
    cards: tuple[Point, ...]
    deck: tuple[Ciphertext, ...]


def make_table(n: int, seed: int = 0) -> Table:
    """A deck of ``n`` distinct hashed cards, each masked under a key derived from ``seed``."""
    stream = NonceStream("test/shuffle/table", insecure_test_seed=seed.to_bytes(4, "little"))
    secret = stream()
    pk = base_mul(secret)
    cards = tuple(
        hash_to_point(b"test/shuffle/card", seed.to_bytes(4, "little"), i.to_bytes(4, "little"))
        for i in range(n)
    )
    deck = []
    for m in cards:
        r = stream()
        deck.append(Ciphertext(base_mul(r), add(m, mul(r, pk))))
    return Table(secret, pk, cards, tuple(deck))


def decrypt(t: Table, ct: Ciphertext) -> Point:
    return sub(ct.c2, mul(t.secret, ct.c1))


def prove(kind: str, inputs, outputs, pk, witness, ctx=CTX):
    if kind == "tw":
        return tw.prove_shuffle(inputs, outputs, pk, witness, ctx)
    return cc.prove_shuffle(inputs, outputs, pk, witness, ctx, rounds=FAST_ROUNDS)


def verify(kind: str, inputs, outputs, pk, proof, ctx=CTX):
    if kind == "tw":
        tw.verify_shuffle(inputs, outputs, pk, proof, ctx)
    else:
        cc.verify_shuffle(inputs, outputs, pk, proof, ctx, min_rounds=FAST_ROUNDS)


def unchecked_witness(perm, rhos) -> ShuffleWitness:
    """A witness that skips validation, to build deliberately bad shuffles."""
    w = object.__new__(ShuffleWitness)
    object.__setattr__(w, "permutation", tuple(perm))
    object.__setattr__(w, "rerandomisers", tuple(rhos))
    return w


# --- applying shuffles -------------------------------------------------------------


def test_shuffle_preserves_the_multiset_of_cards_and_changes_every_ciphertext():
    t = make_table(20)
    out, w = shuffle_deck(t.deck, t.joint_key)
    assert sorted(decrypt(t, ct).data for ct in out) == sorted(m.data for m in t.cards)
    for i, j in enumerate(w.permutation):
        assert decrypt(t, out[i]) == t.cards[j]
        assert out[i].c1 != t.deck[j].c1 and out[i].c2 != t.deck[j].c2


def _seeded(seed: bytes) -> NonceStream:
    return NonceStream("test", insecure_test_seed=seed)


def test_seeded_randomness_is_reproducible_and_seed_dependent():
    seed = b"s" * 32
    assert random_witness(52, _seeded(seed)) == random_witness(52, _seeded(seed))
    assert random_witness(52, _seeded(seed)) != random_witness(52, _seeded(b"t" * 32))
    perm = random_permutation(52, _seeded(seed))
    assert sorted(perm) == list(range(52))
    t = make_table(8)
    w = random_witness(8, _seeded(seed))
    assert apply_shuffle(t.deck, t.joint_key, w) == apply_shuffle(t.deck, t.joint_key, w)
    with pytest.raises(InvalidEncoding):
        NonceStream("test", insecure_test_seed="text")  # type: ignore[arg-type]


def test_a_repeated_test_seed_never_repeats_a_witness_for_another_deck():
    """The witness is hedged on the deck: the same seed on two decks gives unrelated
    permutations and re-randomisers (a shared re-randomiser would link cards)."""
    t, u = make_table(8), make_table(8, seed=1)
    _, wa = shuffle_deck(t.deck, t.joint_key, insecure_test_seed=b"same")
    _, wb = shuffle_deck(u.deck, u.joint_key, insecure_test_seed=b"same")
    _, wa2 = shuffle_deck(t.deck, t.joint_key, insecure_test_seed=b"same")
    assert wa == wa2
    assert not set(wa.rerandomisers) & set(wb.rerandomisers)


def test_unseeded_permutations_vary():
    assert len({random_permutation(52) for _ in range(5)}) == 5


def test_witness_rejects_bad_permutations_and_rerandomisers():
    with pytest.raises(InvalidEncoding, match="repeats"):
        ShuffleWitness((0, 0, 1), (1, 2, 3))
    with pytest.raises(InvalidEncoding, match="out of range"):
        ShuffleWitness((0, 1, 3), (1, 2, 3))
    with pytest.raises(DeckMismatch):
        ShuffleWitness((0, 1, 2), (1, 2))
    with pytest.raises(InvalidScalar):
        ShuffleWitness((0, 1, 2), (1, 0, 3))
    with pytest.raises(InvalidScalar):
        ShuffleWitness((0, 1, 2), (1, L, 3))
    with pytest.raises(DeckMismatch):
        ShuffleWitness((), ())
    t = make_table(3)
    with pytest.raises(DeckMismatch):
        apply_shuffle(t.deck, t.joint_key, random_witness(4))


def test_remask_with_matches_its_definition():
    t = make_table(1)
    ct = remask_with(t.deck[0], t.joint_key, 5)
    assert ct.c1 == add(t.deck[0].c1, base_mul(5))
    assert ct.c2 == add(t.deck[0].c2, mul(5, t.joint_key))


# --- honest shuffles verify under both proofs -----------------------------------------


@pytest.mark.parametrize("n", [1, 2, 3, 52, 104])
def test_tw_verifies_honest_shuffles(n):
    t = make_table(n)
    out, w = shuffle_deck(t.deck, t.joint_key)
    proof = tw.prove_shuffle(t.deck, out, t.joint_key, w, CTX)
    tw.verify_shuffle(t.deck, out, t.joint_key, proof, CTX)
    encoded = proof.encode()
    assert len(encoded) == tw.proof_size(n)
    decoded = tw.TWShuffleProof.decode(encoded, n)
    assert decoded == proof
    tw.verify_shuffle(t.deck, out, t.joint_key, decoded, CTX)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_cc_verifies_honest_small_shuffles(n):
    t = make_table(n)
    out, w = shuffle_deck(t.deck, t.joint_key)
    proof = cc.prove_shuffle(t.deck, out, t.joint_key, w, CTX, rounds=FAST_ROUNDS)
    cc.verify_shuffle(t.deck, out, t.joint_key, proof, CTX, min_rounds=FAST_ROUNDS)
    assert cc.CCShuffleProof.decode(proof.encode(), n) == proof


@pytest.mark.parametrize("n", [52, 104])
def test_both_proofs_verify_the_same_full_size_shuffle(n):
    """The reference proof at full soundness and the production proof agree."""
    t = make_table(n)
    out, w = shuffle_deck(t.deck, t.joint_key)
    cc_proof = cc.prove_shuffle(t.deck, out, t.joint_key, w, CTX)
    assert len(cc_proof.rounds) == cc.DEFAULT_ROUNDS
    cc.verify_shuffle(t.deck, out, t.joint_key, cc_proof, CTX)
    tw_proof = tw.prove_shuffle(t.deck, out, t.joint_key, w, CTX)
    tw.verify_shuffle(t.deck, out, t.joint_key, tw_proof, CTX)
    assert len(cc_proof.encode()) == cc.proof_size(n)


def test_both_proofs_agree_on_a_chain_of_seeded_shuffles():
    """Four seats shuffle in turn; every link verifies under both proofs."""
    t = make_table(SMALL * 3)
    deck = t.deck
    for seat in range(4):
        ctx = CTX.with_seat(seat)
        out, w = shuffle_deck(deck, t.joint_key, insecure_test_seed=bytes([seat]) * 32)
        for kind in ("tw", "cc"):
            verify(kind, deck, out, t.joint_key, prove(kind, deck, out, t.joint_key, w, ctx), ctx)
        deck = out
    assert sorted(decrypt(t, ct).data for ct in deck) == sorted(m.data for m in t.cards)


def test_seeded_proofs_are_deterministic():
    t = make_table(SMALL)
    out, w = shuffle_deck(t.deck, t.joint_key, insecure_test_seed=b"x" * 32)
    a = tw.prove_shuffle(t.deck, out, t.joint_key, w, CTX, insecure_test_seed=b"p" * 32)
    b = tw.prove_shuffle(t.deck, out, t.joint_key, w, CTX, insecure_test_seed=b"p" * 32)
    c = tw.prove_shuffle(t.deck, out, t.joint_key, w, CTX, insecure_test_seed=b"q" * 32)
    assert a.encode() == b.encode() != c.encode()
    ca = cc.prove_shuffle(t.deck, out, t.joint_key, w, CTX, rounds=4, insecure_test_seed=b"p" * 32)
    cb = cc.prove_shuffle(t.deck, out, t.joint_key, w, CTX, rounds=4, insecure_test_seed=b"p" * 32)
    assert ca.encode() == cb.encode()


# --- cheating shuffles are rejected by both proofs -----------------------------------


def _honest(n=6):
    t = make_table(n)
    w = random_witness(n, _seeded(b"test/shuffle/honest-witness"))
    return t, w, list(apply_shuffle(t.deck, t.joint_key, w))


@pytest.mark.parametrize("kind", ["tw", "cc"])
def test_dropped_card_is_rejected(kind):
    t, w, out = _honest()
    proof = prove(kind, t.deck, out, t.joint_key, w)
    with pytest.raises(DeckMismatch):
        verify(kind, t.deck, out[:-1], t.joint_key, proof)
    with pytest.raises(DeckMismatch):
        prove(kind, t.deck, out[:-1], t.joint_key, w)
    # Dropping a card and filling its slot with a fresh card is caught by the proof.
    r = random_scalar()
    fresh = hash_to_point(b"test/shuffle/foreign-card")
    out[2] = Ciphertext(base_mul(r), add(fresh, mul(r, t.joint_key)))
    with pytest.raises(InvalidProof):
        verify(kind, t.deck, out, t.joint_key, prove(kind, t.deck, out, t.joint_key, w))


@pytest.mark.parametrize("kind", ["tw", "cc"])
def test_duplicated_card_is_rejected(kind):
    t, w, out = _honest()
    # Output 3 becomes a fresh remask of the card at output 0; output 3's card is gone.
    out[3] = remask_with(t.deck[w.permutation[0]], t.joint_key, random_scalar())
    assert decrypt(t, out[3]) == decrypt(t, out[0])
    with pytest.raises(InvalidProof):
        verify(kind, t.deck, out, t.joint_key, prove(kind, t.deck, out, t.joint_key, w))


@pytest.mark.parametrize("kind", ["tw", "cc"])
def test_substituted_card_is_rejected(kind):
    t, w, out = _honest()
    # Same c1 as the honest remask (so the re-randomiser matches), another card inside.
    delta = sub(t.cards[w.permutation[(4 + 1) % 6]], t.cards[w.permutation[4]])
    out[4] = Ciphertext(out[4].c1, add(out[4].c2, delta))
    with pytest.raises(InvalidProof):
        verify(kind, t.deck, out, t.joint_key, prove(kind, t.deck, out, t.joint_key, w))


@pytest.mark.parametrize("kind", ["tw", "cc"])
def test_unremasked_card_is_rejected_even_with_an_algebraically_valid_proof(kind):
    t, w, out = _honest()
    rhos = list(w.rerandomisers)
    rhos[1] = 0  # Enc(0; 0): the card passes through unchanged and stays linkable
    bad = unchecked_witness(w.permutation, rhos)
    out[1] = t.deck[w.permutation[1]]
    proof = prove(kind, t.deck, out, t.joint_key, bad)
    with pytest.raises(InvalidProof, match="unremasked"):
        verify(kind, t.deck, out, t.joint_key, proof)


@pytest.mark.parametrize("kind", ["tw", "cc"])
def test_repeated_output_card_is_rejected(kind):
    t, w, out = _honest()
    out[5] = out[0]
    with pytest.raises(InvalidProof, match="repeats"):
        verify(kind, t.deck, out, t.joint_key, prove(kind, t.deck, out, t.joint_key, w))


@pytest.mark.parametrize("kind", ["tw", "cc"])
def test_wrong_witness_and_wrong_key_are_rejected(kind):
    t, w, out = _honest()
    swapped = list(w.permutation)
    swapped[0], swapped[1] = swapped[1], swapped[0]
    bad = ShuffleWitness(tuple(swapped), w.rerandomisers)
    with pytest.raises(InvalidProof):
        verify(kind, t.deck, out, t.joint_key, prove(kind, t.deck, out, t.joint_key, bad))
    proof = prove(kind, t.deck, out, t.joint_key, w)
    with pytest.raises(InvalidProof):
        verify(kind, t.deck, out, base_mul(random_scalar()), proof)
    with pytest.raises(InvalidProof):  # same outputs claimed against other inputs
        other = make_table(6, seed=9)
        verify(kind, other.deck, out, t.joint_key, proof)


@pytest.mark.parametrize("kind", ["tw", "cc"])
def test_proof_for_one_context_fails_in_every_other(kind):
    t, w, out = _honest(SMALL)
    proof = prove(kind, t.deck, out, t.joint_key, w)
    verify(kind, t.deck, out, t.joint_key, proof)
    for other in (
        Context(b"another-table", CTX.game, CTX.step, CTX.seat),
        Context(CTX.table_id, CTX.game + 1, CTX.step, CTX.seat),
        CTX.with_step(CTX.step + 1),
        CTX.with_seat(CTX.seat + 1),
    ):
        with pytest.raises(InvalidProof):
            verify(kind, t.deck, out, t.joint_key, proof, other)


# --- tampering with every field ----------------------------------------------------------


def _other_point(p: Point) -> Point:
    return add(p, G)


def _tampered_values(value):
    """A few single-entry changes of a field's value, all still well-formed."""
    if isinstance(value, Point):
        return [_other_point(value)]
    if isinstance(value, int):
        return [(value + 1) % L, (L - value) % L or 1]
    assert isinstance(value, tuple) and value
    out = []
    for idx in {0, len(value) - 1}:
        for v in _tampered_values(value[idx]):
            out.append(value[:idx] + (v,) + value[idx + 1 :])
    if len(value) > 1:
        out.append(value[1:] + value[:1])  # rotated: right entries, wrong places
    return out


def test_tw_rejects_tampering_with_each_field():
    t, w, out = _honest(SMALL)
    proof = tw.prove_shuffle(t.deck, out, t.joint_key, w, CTX)
    fields = [f.name for f in dataclasses.fields(tw.TWShuffleProof)]
    assert len(fields) == 9
    for name in fields:
        for value in _tampered_values(getattr(proof, name)):
            bad = dataclasses.replace(proof, **{name: value})
            with pytest.raises(InvalidProof):
                tw.verify_shuffle(t.deck, out, t.joint_key, bad, CTX)


def test_tw_rejects_tampering_with_each_encoded_block():
    """Change every 32-byte block of the wire form: decode or verify must fail."""
    t, w, out = _honest(3)
    encoded = tw.prove_shuffle(t.deck, out, t.joint_key, w, CTX).encode()
    header = 3
    for pos in range(header, len(encoded), 32):
        block = encoded[pos : pos + 32]
        if pos < header + 2 * 3 * 32:
            new_block = _other_point(Point(block)).data
        else:
            new_block = ((int.from_bytes(block, "little") + 1) % L).to_bytes(32, "little")
        data = encoded[:pos] + new_block + encoded[pos + 32 :]
        with pytest.raises(InvalidProof):
            tw.verify_shuffle(t.deck, out, t.joint_key, tw.TWShuffleProof.decode(data), CTX)


def test_cc_rejects_tampering_with_each_field():
    t, w, out = _honest(SMALL)
    proof = cc.prove_shuffle(
        t.deck, out, t.joint_key, w, CTX, rounds=FAST_ROUNDS, insecure_test_seed=b"c" * 32
    )
    assert [f.name for f in dataclasses.fields(cc.CCShuffleProof)] == ["rounds"]
    assert [f.name for f in dataclasses.fields(cc.CCRound)] == [
        "shadow",
        "permutation",
        "rerandomisers",
    ]
    rounds = proof.rounds
    for j in (0, len(rounds) - 1):
        rnd = rounds[j]
        shadow = list(rnd.shadow)
        shadow[1] = Ciphertext(shadow[1].c1, _other_point(shadow[1].c2))
        perm = list(rnd.permutation)
        perm[0], perm[1] = perm[1], perm[0]
        rhos = list(rnd.rerandomisers)
        rhos[2] = (rhos[2] + 1) % L
        for bad_round in (
            dataclasses.replace(rnd, shadow=tuple(shadow)),
            dataclasses.replace(rnd, permutation=tuple(perm)),
            dataclasses.replace(rnd, rerandomisers=tuple(rhos)),
        ):
            bad = cc.CCShuffleProof(rounds[:j] + (bad_round,) + rounds[j + 1 :])
            with pytest.raises(InvalidProof):
                cc.verify_shuffle(t.deck, out, t.joint_key, bad, CTX, min_rounds=FAST_ROUNDS)
    # The rounds field itself: fewer rounds than required, or the rounds reordered.
    with pytest.raises(InvalidProof, match="rounds"):
        cc.verify_shuffle(
            t.deck, out, t.joint_key, cc.CCShuffleProof(rounds[:-1]), CTX, min_rounds=FAST_ROUNDS
        )
    with pytest.raises(InvalidProof):
        cc.verify_shuffle(t.deck, out, t.joint_key, proof, CTX, min_rounds=FAST_ROUNDS + 1)
    # Rotated rounds: each opening is valid for its own shadow, but the coins are
    # re-derived from the new order.  Everything is seeded, so this is deterministic.
    with pytest.raises(InvalidProof):
        cc.verify_shuffle(
            t.deck,
            out,
            t.joint_key,
            cc.CCShuffleProof(rounds[1:] + rounds[:1]),
            CTX,
            min_rounds=FAST_ROUNDS,
        )


def test_cc_default_soundness_is_enforced():
    t, w, out = _honest(2)
    short = cc.prove_shuffle(t.deck, out, t.joint_key, w, CTX, rounds=cc.DEFAULT_ROUNDS - 1)
    with pytest.raises(InvalidProof, match="rounds"):
        cc.verify_shuffle(t.deck, out, t.joint_key, short, CTX)


# --- decoding rejects malformed proofs ---------------------------------------------------


def _torsioned(p: Point) -> bytes:
    return sodium.crypto_core_ed25519_add(p.data, ORDER_TWO_POINT)


def _bad_points(p: Point) -> list[bytes]:
    non_canonical = (2**255 - 19 + 1).to_bytes(32, "little")  # y = p + 1
    return [IDENTITY_BYTES, ORDER_TWO_POINT, _torsioned(p), non_canonical, _off_curve()]


def _off_curve() -> bytes:
    for y in range(2, 100):
        enc = y.to_bytes(32, "little")
        try:
            sodium.crypto_core_ed25519_add(enc, enc)
        except Exception:
            return enc
    raise AssertionError("no off-curve encoding found")


def test_tw_decode_rejects_malformed_input():
    t, w, out = _honest(3)
    encoded = tw.prove_shuffle(t.deck, out, t.joint_key, w, CTX).encode()
    n = 3
    first_point = 3
    last_point = 3 + (2 * n - 1) * 32
    for pos in (first_point, last_point):
        for bad in _bad_points(Point(encoded[pos : pos + 32])):
            with pytest.raises(InvalidPoint):
                tw.TWShuffleProof.decode(encoded[:pos] + bad + encoded[pos + 32 :])
    first_scalar = 3 + 2 * n * 32
    for pos in (first_scalar, len(encoded) - 32):
        for bad_k in (L, L + 1, 2**256 - 1):
            with pytest.raises(InvalidScalar):
                data = encoded[:pos] + bad_k.to_bytes(32, "little") + encoded[pos + 32 :]
                tw.TWShuffleProof.decode(data)
    with pytest.raises(InvalidEncoding):
        tw.TWShuffleProof.decode(encoded[:-1])
    with pytest.raises(InvalidEncoding):
        tw.TWShuffleProof.decode(encoded + b"\0")
    with pytest.raises(InvalidEncoding):
        tw.TWShuffleProof.decode(b"\x01\x03")
    with pytest.raises(InvalidEncoding):
        tw.TWShuffleProof.decode(b"\x02" + encoded[1:])
    with pytest.raises(DeckMismatch):
        tw.TWShuffleProof.decode(encoded, expected_size=4)
    with pytest.raises(InvalidEncoding, match="must be"):  # header claims 4 cards
        tw.TWShuffleProof.decode(encoded[:1] + (4).to_bytes(2, "little") + encoded[3:])
    with pytest.raises(DeckMismatch):
        tw.TWShuffleProof.decode(encoded[:1] + (0).to_bytes(2, "little") + encoded[3:])
    with pytest.raises(DeckMismatch):
        tw.TWShuffleProof.decode(encoded[:1] + (MAX_CARDS + 1).to_bytes(2, "little"))
    with pytest.raises(InvalidEncoding):
        tw.TWShuffleProof.decode(bytearray(encoded))  # type: ignore[arg-type]


def test_tw_proof_object_validates_sizes_and_scalars():
    t, w, out = _honest(3)
    proof = tw.prove_shuffle(t.deck, out, t.joint_key, w, CTX)
    with pytest.raises(DeckMismatch):
        dataclasses.replace(proof, s_hat=proof.s_hat[:-1])
    with pytest.raises(DeckMismatch):
        dataclasses.replace(proof, chain_commitments=proof.chain_commitments + (G,))
    with pytest.raises(InvalidScalar):
        dataclasses.replace(proof, s2=L)
    with pytest.raises(InvalidScalar):
        dataclasses.replace(proof, s_prime=(proof.s_prime[0], -1, proof.s_prime[2]))
    with pytest.raises(InvalidEncoding):
        dataclasses.replace(proof, permutation_commitments=(G, G, b"x" * 32))
    big = make_table(4)
    out4, w4 = shuffle_deck(big.deck, big.joint_key)
    with pytest.raises(DeckMismatch):  # a 3-card proof for a 4-card shuffle
        tw.verify_shuffle(big.deck, out4, big.joint_key, proof, CTX)


def test_cc_decode_rejects_malformed_input():
    t, w, out = _honest(2)
    rounds = 2
    encoded = cc.prove_shuffle(t.deck, out, t.joint_key, w, CTX, rounds=rounds).encode()
    assert len(encoded) == cc.proof_size(2, rounds)
    header = 5
    for bad in _bad_points(t.deck[0].c1):
        with pytest.raises(InvalidPoint):
            cc.CCShuffleProof.decode(encoded[:header] + bad + encoded[header + 32 :])
    perm_pos = header + 2 * 64
    for bad_index in ((1, 1), (0, 2)):
        data = bytearray(encoded)
        data[perm_pos : perm_pos + 4] = b"".join(x.to_bytes(2, "little") for x in bad_index)
        with pytest.raises(InvalidEncoding):
            cc.CCShuffleProof.decode(bytes(data))
    scalar_pos = perm_pos + 4
    with pytest.raises(InvalidScalar):
        cc.CCShuffleProof.decode(
            encoded[:scalar_pos] + L.to_bytes(32, "little") + encoded[scalar_pos + 32 :]
        )
    with pytest.raises(InvalidEncoding):
        cc.CCShuffleProof.decode(encoded[:-1])
    with pytest.raises(InvalidEncoding):
        cc.CCShuffleProof.decode(encoded + b"\0")
    with pytest.raises(InvalidEncoding):  # zero rounds
        cc.CCShuffleProof.decode(encoded[:3] + (0).to_bytes(2, "little") + encoded[5:])
    with pytest.raises(InvalidEncoding):  # header claims 3 rounds
        cc.CCShuffleProof.decode(encoded[:3] + (3).to_bytes(2, "little") + encoded[5:])
    with pytest.raises(DeckMismatch):
        cc.CCShuffleProof.decode(encoded, expected_size=3)
    with pytest.raises(InvalidEncoding):
        cc.CCShuffleProof.decode(b"\x07" + encoded[1:])


def test_verify_rejects_non_ciphertext_statement_entries():
    t, w, out = _honest(3)
    proof = tw.prove_shuffle(t.deck, out, t.joint_key, w, CTX)
    with pytest.raises(InvalidEncoding):
        tw.verify_shuffle(t.deck, [*out[:2], (out[2].c1, out[2].c2)], t.joint_key, proof, CTX)
    with pytest.raises(InvalidEncoding):
        tw.verify_shuffle(t.deck, out, t.joint_key.data, proof, CTX)
    with pytest.raises(DeckMismatch):
        tw.verify_shuffle((), (), t.joint_key, proof, CTX)


def test_all_failures_are_crypto_errors():
    """Callers can catch one base class for anything a malicious peer sends."""
    for exc in (InvalidProof, InvalidPoint, InvalidScalar, DeckMismatch, InvalidEncoding):
        assert issubclass(exc, CryptoError)


# --- operation counts ----------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 5, 52])
def test_tw_operation_counts(n):
    t = make_table(n)
    out, w = shuffle_deck(t.deck, t.joint_key)
    # Warm the caches of the generators and of their sum (computed once per size).
    tw.verify_shuffle(
        t.deck, out, t.joint_key, tw.prove_shuffle(t.deck, out, t.joint_key, w, CTX), CTX
    )
    COUNTERS.reset()
    proof = tw.prove_shuffle(t.deck, out, t.joint_key, w, CTX)
    assert COUNTERS.snapshot() == {
        "mul": 5 * n + 1,
        "base_mul": 3 * n + 4,
        "add": 6 * n,
        "decode": 0,
        "hash_to_point": 0,
    }
    COUNTERS.reset()
    tw.verify_shuffle(t.deck, out, t.joint_key, proof, CTX)
    assert COUNTERS.snapshot() == {
        "mul": 8 * n + 4,
        "base_mul": n + 4,
        "add": 9 * n + 3,
        "decode": 0,
        "hash_to_point": 0,
    }
    COUNTERS.reset()
    tw.TWShuffleProof.decode(proof.encode())
    assert COUNTERS.snapshot()["decode"] == 2 * n


@pytest.mark.parametrize("n", [1, 7])
def test_cc_operation_counts(n):
    t = make_table(n)
    out, w = shuffle_deck(t.deck, t.joint_key)
    k = 5
    COUNTERS.reset()
    # proving and verifying each apply k shuffles: k n mul, k n base, 2 k n add
    one_shuffle_per_round = {
        "mul": k * n,
        "base_mul": k * n,
        "add": 2 * k * n,
        "decode": 0,
        "hash_to_point": 0,
    }
    proof = cc.prove_shuffle(t.deck, out, t.joint_key, w, CTX, rounds=k)
    assert COUNTERS.snapshot() == one_shuffle_per_round
    COUNTERS.reset()
    cc.verify_shuffle(t.deck, out, t.joint_key, proof, CTX, min_rounds=k)
    assert COUNTERS.snapshot() == one_shuffle_per_round
    COUNTERS.reset()
    cc.CCShuffleProof.decode(proof.encode())
    assert COUNTERS.snapshot()["decode"] == 2 * k * n


def test_shuffle_operation_counts():
    t = make_table(9)
    COUNTERS.reset()
    shuffle_deck(t.deck, t.joint_key)
    assert COUNTERS.snapshot()["mul"] == 9
    assert COUNTERS.snapshot()["base_mul"] == 9
    assert COUNTERS.snapshot()["add"] == 18


# --- properties ------------------------------------------------------------------------------


@settings(max_examples=12, deadline=None)
@given(n=st.integers(min_value=1, max_value=8), seed=st.binary(min_size=16, max_size=16))
def test_property_both_proofs_accept_any_seeded_shuffle_and_round_trip(n, seed):
    t = make_table(n, seed=n)
    out, w = shuffle_deck(t.deck, t.joint_key, insecure_test_seed=seed)
    assert sorted(decrypt(t, ct).data for ct in out) == sorted(m.data for m in t.cards)
    proof = tw.prove_shuffle(t.deck, out, t.joint_key, w, CTX, insecure_test_seed=seed)
    tw.verify_shuffle(t.deck, out, t.joint_key, tw.TWShuffleProof.decode(proof.encode(), n), CTX)
    cproof = cc.prove_shuffle(t.deck, out, t.joint_key, w, CTX, rounds=4, insecure_test_seed=seed)
    decoded = cc.CCShuffleProof.decode(cproof.encode(), n)
    cc.verify_shuffle(t.deck, out, t.joint_key, decoded, CTX, min_rounds=4)
