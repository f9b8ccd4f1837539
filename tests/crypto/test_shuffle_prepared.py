"""Tests for crypto.shuffle_prepared: a shuffle made in a pile-independent half and a
pile-dependent one, its proof the commitment-form Terelius-Wikstrom proof."""

from __future__ import annotations

import dataclasses
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest

from crypto import shuffle_proof_tw_batch as tb
from crypto.errors import DeckMismatch, InvalidEncoding, InvalidProof
from crypto.group import COUNTERS
from crypto.shuffle_prepared import finish_shuffle, prepare_early, prepare_shuffle
from crypto.transcript import Context
from tests.crypto._helpers import other_contexts
from tests.crypto.test_shuffle import CTX, _tampered_values, decrypt, make_table

SEED = b"test/shuffle-prepared"


def _made(n: int, ctx: Context = CTX, seed: bytes | None = SEED, table_seed: int = 0):
    t = make_table(n, table_seed)
    prep = prepare_shuffle(n, t.joint_key, ctx, insecure_test_seed=seed)
    out, proof = finish_shuffle(prep, t.deck)
    return t, prep, tb.ShuffleStatement(t.deck, out, t.joint_key, proof, ctx)


@pytest.mark.parametrize("n", [1, 2, 5, 13])
def test_a_prepared_shuffle_is_a_shuffle_and_its_proof_verifies(n):
    t, prep, st = _made(n, seed=None)
    tb.verify_shuffles_batch([st])
    assert Counter(decrypt(t, ct).data for ct in st.outputs) == Counter(c.data for c in t.cards)
    assert not {ct.c1.data for ct in st.outputs} & {ct.c1.data for ct in t.deck}
    # the same wire form, decoded and checked by the ordinary verifier, also in a batch
    assert tb.TWCommitmentProof.decode(st.proof.encode(), n) == st.proof
    nxt = prepare_shuffle(n, t.joint_key, dataclasses.replace(CTX, seat=2))
    out2, proof2 = finish_shuffle(nxt, st.outputs)
    ctx2 = dataclasses.replace(CTX, seat=2)
    tb.verify_shuffles_batch([st, tb.ShuffleStatement(st.outputs, out2, t.joint_key, proof2, ctx2)])


@pytest.mark.parametrize("n", [3, 52])
def test_operation_counts_of_the_two_halves(n):
    """Prepared: 2N variable-base and 2N + 3 fixed-base multiplications; what is left once
    the pile is in: 4N + 1 and 2N + 1 (a whole shuffle and proof: 6N + 1 and 4N + 4)."""
    t = make_table(n)
    COUNTERS.reset()
    prep = prepare_shuffle(n, t.joint_key, CTX)
    assert (COUNTERS.mul, COUNTERS.base_mul) == (2 * n, 2 * n + 3)
    COUNTERS.reset()
    finish_shuffle(prep, t.deck)
    assert (COUNTERS.mul, COUNTERS.base_mul, COUNTERS.decode) == (4 * n + 1, 2 * n + 1, 0)


def test_a_prepared_shuffle_is_used_once_only():
    """Its nonces answer one challenge: a second pile gets no proof from them."""
    t, prep, _ = _made(4)
    other = make_table(4, 1)
    COUNTERS.reset()
    with pytest.raises(InvalidEncoding, match="once"):
        finish_shuffle(prep, other.deck)
    assert COUNTERS.snapshot() == dict.fromkeys(COUNTERS.snapshot(), 0)
    assert prep.used


def test_a_pile_of_another_size_is_refused_and_leaves_it_unused():
    t = make_table(5)
    prep = prepare_shuffle(4, t.joint_key, CTX)
    with pytest.raises(DeckMismatch):
        finish_shuffle(prep, t.deck)
    with pytest.raises(InvalidEncoding):
        finish_shuffle(prep, (*t.deck[:3], "not a ciphertext"))
    assert not prep.used
    finish_shuffle(prep, t.deck[:4])


def test_bad_arguments_are_refused():
    t = make_table(2)
    for n in (0, -1, 1025, "4"):
        with pytest.raises(DeckMismatch):
            prepare_shuffle(n, t.joint_key, CTX)
    with pytest.raises(InvalidEncoding):
        prepare_shuffle(2, t.joint_key.data, CTX)


def test_a_proof_for_one_context_fails_in_every_other():
    t, _, st = _made(4)
    for ctx in other_contexts(CTX):
        with pytest.raises(InvalidProof):
            tb.verify_shuffles_batch([dataclasses.replace(st, context=ctx)])


def test_tampering_with_each_field_is_rejected():
    _, _, st = _made(4)
    fields = [f.name for f in dataclasses.fields(tb.TWCommitmentProof)]
    assert len(fields) == 10
    for name in fields:
        for value in _tampered_values(getattr(st.proof, name)):
            bad = dataclasses.replace(st, proof=dataclasses.replace(st.proof, **{name: value}))
            with pytest.raises(InvalidProof):
                tb.verify_shuffles_batch([bad])


def test_the_witness_is_bound_to_the_context_even_under_a_repeated_seed():
    """A repeated test seed repeats the witness only for the very same context (table,
    game, step, seat) and key; any other step or seat gets another one."""
    t = make_table(8)
    same = [prepare_shuffle(8, t.joint_key, CTX, insecure_test_seed=SEED) for _ in range(2)]
    assert same[0].witness == same[1].witness and same[0].r == same[1].r
    for ctx in other_contexts(CTX):
        other = prepare_shuffle(8, t.joint_key, ctx, insecure_test_seed=SEED)
        assert other.witness.rerandomisers[0] != same[0].witness.rerandomisers[0]
        assert other.w_prime[0] != same[0].w_prime[0]
    fresh = [prepare_shuffle(8, t.joint_key, CTX) for _ in range(2)]
    assert fresh[0].witness.rerandomisers != fresh[1].witness.rerandomisers


def _spare(n: int, ctx: Context = CTX):
    """A shuffle prepared before its step was known (no context), finished under ``ctx``."""
    t = make_table(n)
    prep = prepare_shuffle(n, t.joint_key, None)
    assert prep.context is None
    out, proof = finish_shuffle(prep, t.deck, ctx)
    return t, prep, tb.ShuffleStatement(t.deck, out, t.joint_key, proof, ctx)


def test_a_shuffle_prepared_before_its_step_is_bound_to_the_context_it_is_finished_in():
    """The context is hashed into the challenges when the shuffle is finished: the proof
    verifies under that context (alone and in a batch) and fails under every other."""
    t, prep, st = _spare(5)
    assert prep.used
    tb.verify_shuffles_batch([st])
    assert Counter(decrypt(t, ct).data for ct in st.outputs) == Counter(c.data for c in t.cards)
    for ctx in other_contexts(CTX):
        with pytest.raises(InvalidProof):
            tb.verify_shuffles_batch([dataclasses.replace(st, context=ctx)])
        with pytest.raises(InvalidProof):
            tb.verify_shuffles_batch([st, dataclasses.replace(st, context=ctx)])


def test_tampering_with_each_field_of_a_spare_shuffles_proof_is_rejected():
    _, _, st = _spare(4)
    for name in [f.name for f in dataclasses.fields(tb.TWCommitmentProof)]:
        for value in _tampered_values(getattr(st.proof, name)):
            bad = dataclasses.replace(st, proof=dataclasses.replace(st.proof, **{name: value}))
            with pytest.raises(InvalidProof):
                tb.verify_shuffles_batch([bad])


def test_a_spare_costs_the_same_and_its_context_must_be_given_and_right():
    n = 6
    t = make_table(n)
    COUNTERS.reset()
    prep = prepare_shuffle(n, t.joint_key, None)
    assert (COUNTERS.mul, COUNTERS.base_mul) == (2 * n, 2 * n + 3)
    with pytest.raises(InvalidEncoding, match="context"):
        finish_shuffle(prep, t.deck)  # no context at either end
    with pytest.raises(InvalidEncoding):
        finish_shuffle(prep, t.deck, "not a context")
    assert not prep.used
    bound = prepare_shuffle(n, t.joint_key, CTX)
    with pytest.raises(InvalidEncoding, match="another step"):
        finish_shuffle(bound, t.deck, other_contexts(CTX)[2])
    assert not bound.used
    finish_shuffle(bound, t.deck, CTX)  # the very context it was prepared for
    COUNTERS.reset()
    finish_shuffle(prep, t.deck, CTX)
    assert (COUNTERS.mul, COUNTERS.base_mul, COUNTERS.decode) == (4 * n + 1, 2 * n + 1, 0)
    with pytest.raises(InvalidEncoding, match="once"):
        finish_shuffle(prep, t.deck, CTX)
    # two spares for the same key and size (no context to tell them apart) never share
    # a witness: fresh randomness each
    fresh = [prepare_shuffle(n, t.joint_key, None) for _ in range(2)]
    assert fresh[0].witness.rerandomisers != fresh[1].witness.rerandomisers


class _Thread:
    """An aside (crypto.shuffle_proof_tw.Aside) that really runs the part in a second
    thread, and counts the parts it was lent."""

    def __init__(self) -> None:
        self.lent = 0

    def __call__(self, fn):  # noqa: ANN001, ANN204
        self.lent += 1
        pool = ThreadPoolExecutor(max_workers=1)
        future = pool.submit(fn)
        pool.shutdown(wait=False)
        return future.result


def test_a_shuffle_half_made_before_the_key_is_completed_once_with_it():
    """Before the joint key is known: N variable-base and 2N + 3 fixed-base
    multiplications; with it, N more (rho_i PK): the same 2N and 2N + 3 as a prepared
    half made at once, and its shuffle verifies.  It is used once only (its nonces)."""
    n = 6
    t = make_table(n)
    COUNTERS.reset()
    early = prepare_early(n, CTX.encode())
    assert (COUNTERS.mul, COUNTERS.base_mul) == (n, 2 * n + 3)
    COUNTERS.reset()
    prep = prepare_shuffle(n, t.joint_key, None, early=early)
    assert (COUNTERS.mul, COUNTERS.base_mul, COUNTERS.add) == (n, 0, 0)
    out, proof = finish_shuffle(prep, t.deck, CTX)
    st = tb.ShuffleStatement(t.deck, out, t.joint_key, proof, CTX)
    tb.verify_shuffles_batch([st])
    assert Counter(decrypt(t, ct).data for ct in out) == Counter(c.data for c in t.cards)
    for ctx in other_contexts(CTX):
        with pytest.raises(InvalidProof):
            tb.verify_shuffles_batch([dataclasses.replace(st, context=ctx)])
    with pytest.raises(InvalidEncoding, match="once"):
        prepare_shuffle(n, t.joint_key, None, early=early)
    with pytest.raises(DeckMismatch):
        prepare_shuffle(n + 1, t.joint_key, None, early=prepare_early(n, CTX.encode()))
    with pytest.raises(InvalidEncoding):
        prepare_early(n, "not bytes")
    # two early halves for the same place never share a witness (fresh randomness), and
    # a repeated test seed repeats it only for the very same place
    fresh = [prepare_early(n, CTX.encode()) for _ in range(2)]
    assert fresh[0].witness.rerandomisers != fresh[1].witness.rerandomisers
    seeded = [prepare_early(n, c.encode(), insecure_test_seed=SEED) for c in (CTX, CTX)]
    assert seeded[0].witness == seeded[1].witness
    for ctx in other_contexts(CTX):
        other = prepare_early(n, ctx.encode(), insecure_test_seed=SEED)
        assert other.witness.rerandomisers[0] != seeded[0].witness.rerandomisers[0]


def test_tampering_with_each_field_of_a_shuffle_made_early_is_rejected():
    t = make_table(4)
    prep = prepare_shuffle(4, t.joint_key, None, early=prepare_early(4, CTX.encode()))
    out, proof = finish_shuffle(prep, t.deck, CTX)
    st = tb.ShuffleStatement(t.deck, out, t.joint_key, proof, CTX)
    for name in [f.name for f in dataclasses.fields(tb.TWCommitmentProof)]:
        for value in _tampered_values(getattr(st.proof, name)):
            bad = dataclasses.replace(st, proof=dataclasses.replace(st.proof, **{name: value}))
            with pytest.raises(InvalidProof):
                tb.verify_shuffles_batch([bad])


@pytest.mark.parametrize("n", [3, 52])
def test_a_shuffle_finished_with_a_second_thread_costs_the_same_and_verifies(n):
    """With an aside, t41 and t42 are computed in a second thread beside the chain and
    t^: the same operations (4N + 1 and 2N + 1), the same kind of proof."""
    t = make_table(n)
    prep = prepare_shuffle(n, t.joint_key, CTX)
    aside = _Thread()
    COUNTERS.reset()
    out, proof = finish_shuffle(prep, t.deck, aside=aside)
    assert aside.lent == 1
    assert (COUNTERS.mul, COUNTERS.base_mul, COUNTERS.decode) == (4 * n + 1, 2 * n + 1, 0)
    st = tb.ShuffleStatement(t.deck, out, t.joint_key, proof, CTX)
    tb.verify_shuffles_batch([st])
    assert Counter(decrypt(t, ct).data for ct in out) == Counter(c.data for c in t.cards)
