"""Tests for crypto.shuffle_proof_tw_batch: commitment-form TW proofs and batch verification."""

from __future__ import annotations

import dataclasses
import inspect
from concurrent.futures import ThreadPoolExecutor

import pytest

from crypto import shuffle_proof_tw as tw
from crypto import shuffle_proof_tw_batch as tb
from crypto.elgamal import Ciphertext
from crypto.errors import DeckMismatch, InvalidEncoding, InvalidPoint, InvalidProof, InvalidScalar
from crypto.group import COUNTERS, G, L, add, base_mul, hash_to_point, mul, random_scalar
from crypto.nonces import NonceStream
from crypto.shuffle import apply_shuffle, random_witness, remask_with
from crypto.transcript import Context
from tests.crypto.test_shuffle import (
    CTX,
    _other_point,
    _tampered_values,
    decrypt,
    make_table,
    unchecked_witness,
)

SEED = b"test/shuffle-batch/weights"


def _weights() -> NonceStream:
    """Predictable batch weights (tests only; see the forgery test below)."""
    return NonceStream(tb._WEIGHT_LABEL, insecure_test_seed=SEED)


def _seeded(label: bytes) -> NonceStream:
    return NonceStream("test", insecure_test_seed=label)


def _ctx(seat: int) -> Context:
    return Context(b"table-under-test", 3, 7, seat)


def _chain(n: int, shuffles: int, table_seed: int = 0):
    """``shuffles`` consecutive seeded shuffles by seats 0, 1, ...: statements and witnesses."""
    t = make_table(n, table_seed)
    pile = t.deck
    statements = []
    for s in range(shuffles):
        w = random_witness(n, _seeded(b"test/shuffle-batch/witness" + bytes([s, table_seed])))
        out = apply_shuffle(pile, t.joint_key, w)
        proof = tb.prove_shuffle_batchable(pile, out, t.joint_key, w, _ctx(s))
        statements.append(tb.ShuffleStatement(pile, out, t.joint_key, proof, _ctx(s)))
        pile = out
    return t, statements


def test_commitment_form_is_the_challenge_form_proof():
    """Same seed, same transcript: same responses, and the t values hash to the challenge."""
    t, _ = _chain(5, 0)
    w = random_witness(5, _seeded(b"test/shuffle-batch/same-proof"))
    out = apply_shuffle(t.deck, t.joint_key, w)
    seed = b"test/shuffle-batch/prover-seed"
    plain = tw.prove_shuffle(t.deck, out, t.joint_key, w, CTX, insecure_test_seed=seed)
    comm = tb.prove_shuffle_batchable(t.deck, out, t.joint_key, w, CTX, insecure_test_seed=seed)
    for name in ("permutation_commitments", "chain_commitments", "s1", "s2", "s3", "s4"):
        assert getattr(plain, name) == getattr(comm, name)
    assert (plain.s_hat, plain.s_prime) == (comm.s_hat, comm.s_prime)
    tr = tw._statement_transcript(CTX, t.joint_key, t.deck, out, comm.permutation_commitments)
    tr.challenges("u", 5)
    assert tw._final_challenge(tr, comm.chain_commitments, comm.t, comm.t_hat) == plain.challenge
    tb.verify_shuffle_commitment(t.deck, out, t.joint_key, comm, CTX)
    assert tb.TWCommitmentProof.decode(comm.encode(), 5) == comm
    assert len(comm.encode()) == tb.proof_size(5)


@pytest.mark.parametrize("n", [1, 2, 5, 13])
def test_honest_batches_verify(n):
    _, sts = _chain(n, 4)
    for k in range(1, 5):
        tb.verify_shuffles_batch(sts[:k])
    tb.verify_shuffles_batch([sts[0], sts[2], sts[3]])  # not consecutive: no shared pile
    tb.verify_shuffles_batch(sts[::-1])


def test_batch_of_different_sizes_and_tables():
    _, a = _chain(3, 2, table_seed=1)
    _, b = _chain(5, 2, table_seed=2)
    tb._verify_batch([a[0], b[0], a[1], b[1]], _weights())


def test_failure_names_the_bad_proof_and_its_seat():
    _, sts = _chain(6, 4)
    bad = dataclasses.replace(sts[2], context=sts[2].context.with_step(8))
    with pytest.raises(InvalidProof, match=r"proof 1 of the batch \(seat 2\)"):
        tb._verify_batch([sts[1], bad, sts[3]], _weights())
    with pytest.raises(InvalidProof, match=r"seat 2"):
        tb._verify_batch([bad], _weights())


def test_proof_for_one_context_fails_in_every_other():
    _, sts = _chain(4, 1)
    st = sts[0]
    for other in (
        Context(b"other-table", 3, 7, 0),
        Context(b"table-under-test", 4, 7, 0),
        Context(b"table-under-test", 3, 8, 0),
        Context(b"table-under-test", 3, 7, 1),
    ):
        with pytest.raises(InvalidProof):
            tb._verify_batch([dataclasses.replace(st, context=other)], _weights())


def test_tampering_with_each_field_is_rejected_inside_a_batch():
    _, sts = _chain(4, 3)
    proof = sts[1].proof
    fields = [f.name for f in dataclasses.fields(tb.TWCommitmentProof)]
    assert len(fields) == 10
    for name in fields:
        for value in _tampered_values(getattr(proof, name)):
            bad = dataclasses.replace(sts[1], proof=dataclasses.replace(proof, **{name: value}))
            with pytest.raises(InvalidProof, match="proof 1 of the batch"):
                tb._verify_batch([sts[0], bad, sts[2]], _weights())


def test_tampering_with_each_statement_field_is_rejected():
    t, sts = _chain(4, 2)
    st = sts[1]
    other_key = base_mul(random_scalar())
    fresh = Ciphertext(base_mul(5), add(hash_to_point(b"x"), mul(5, t.joint_key)))
    for bad in (
        dataclasses.replace(st, joint_key=other_key),
        dataclasses.replace(st, inputs=(fresh, *st.inputs[1:])),
        dataclasses.replace(st, outputs=(*st.outputs[:-1], fresh)),
        dataclasses.replace(st, inputs=st.outputs, outputs=st.inputs),
    ):
        with pytest.raises(InvalidProof):
            tb._verify_batch([sts[0], bad], _weights())


def test_tampering_with_each_encoded_block_is_rejected():
    _, sts = _chain(3, 1)
    st = sts[0]
    encoded = st.proof.encode()
    n_points = 3 * 3 + 5
    for pos in range(3, len(encoded), 32):
        block = encoded[pos : pos + 32]
        if pos < 3 + n_points * 32:
            new_block = _other_point(tb.Point.decode(block)).data
        else:
            new_block = ((int.from_bytes(block, "little") + 1) % L).to_bytes(32, "little")
        data = encoded[:pos] + new_block + encoded[pos + 32 :]
        bad = dataclasses.replace(st, proof=tb.TWCommitmentProof.decode(data, 3))
        with pytest.raises(InvalidProof):
            tb._verify_batch([bad], _weights())


def _one_cheat(kind: str):
    t = make_table(6)
    w = random_witness(6, _seeded(b"test/shuffle-batch/cheat-witness"))
    out = list(apply_shuffle(t.deck, t.joint_key, w))
    if kind == "drop":  # a card dropped, its slot filled with a foreign card
        r = random_scalar()
        out[2] = Ciphertext(base_mul(r), add(hash_to_point(b"foreign"), mul(r, t.joint_key)))
    elif kind == "duplicate":
        out[3] = remask_with(t.deck[w.permutation[0]], t.joint_key, random_scalar())
        assert decrypt(t, out[3]) == decrypt(t, out[0])
    elif kind == "substitute":
        delta = add(t.cards[w.permutation[5]], G)
        out[4] = Ciphertext(out[4].c1, add(out[4].c2, delta))
    elif kind == "unremasked":
        rhos = list(w.rerandomisers)
        rhos[1] = 0
        w = unchecked_witness(w.permutation, rhos)
        out[1] = t.deck[w.permutation[1]]
    proof = tb.prove_shuffle_batchable(t.deck, out, t.joint_key, w, _ctx(1))
    return tb.ShuffleStatement(t.deck, tuple(out), t.joint_key, proof, _ctx(1))


@pytest.mark.parametrize("kind", ["drop", "duplicate", "substitute", "unremasked"])
def test_cheating_shuffles_are_rejected_alone_and_in_a_batch(kind):
    cheat = _one_cheat(kind)
    _, honest = _chain(6, 2, table_seed=3)
    with pytest.raises(InvalidProof):
        tb._verify_batch([cheat], _weights())
    with pytest.raises(InvalidProof):
        tb._verify_batch([honest[0], cheat, honest[1]], _weights())
    # and with weights from secrets, as in production
    with pytest.raises(InvalidProof):
        tb.verify_shuffles_batch([honest[0], cheat, honest[1]])


def test_malformed_batches_and_proofs():
    _, sts = _chain(3, 2)
    with pytest.raises(DeckMismatch):
        tb.verify_shuffles_batch([])
    with pytest.raises(InvalidEncoding):
        tb.verify_shuffles_batch([sts[0].proof])  # type: ignore[list-item]
    with pytest.raises(DeckMismatch):
        tb.verify_shuffles_batch([dataclasses.replace(sts[0], outputs=sts[0].outputs[:2])])
    plain = tw.TWShuffleProof.decode(
        tw.prove_shuffle(
            sts[0].inputs,
            sts[0].outputs,
            sts[0].joint_key,
            random_witness(3, _seeded(b"test/shuffle-batch/unused-witness")),
            CTX,
        ).encode()
    )
    with pytest.raises(InvalidEncoding):
        tb.verify_shuffles_batch([dataclasses.replace(sts[0], proof=plain)])  # type: ignore
    raw = sts[0].proof.encode()
    with pytest.raises(InvalidEncoding, match="version"):
        tb.TWCommitmentProof.decode(b"\x01" + raw[1:])
    with pytest.raises(InvalidEncoding):
        tb.TWCommitmentProof.decode(raw[:-1])
    with pytest.raises(DeckMismatch):
        tb.TWCommitmentProof.decode(raw, expected_size=4)
    with pytest.raises(InvalidScalar):
        tb.TWCommitmentProof.decode(raw[:-32] + (2**256 - 1).to_bytes(32, "little"))
    small_order = bytes.fromhex("ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f")
    with pytest.raises(InvalidPoint):
        tb.TWCommitmentProof.decode(raw[:3] + small_order + raw[35:])
    with pytest.raises(DeckMismatch):
        dataclasses.replace(sts[0].proof, t=sts[0].proof.t[:4])
    with pytest.raises(DeckMismatch):
        dataclasses.replace(sts[0].proof, t_hat=sts[0].proof.t_hat[:2])


@pytest.mark.parametrize("n", [3, 8])
def test_batch_operation_counts(n):
    """Three consecutive shuffles share 2 piles and the generators: ``18N + 17`` multiplications
    and one base multiplication, against ``3 (8N + 4)`` and ``3 (N + 4)`` one by one."""
    _, sts = _chain(n, 3)
    COUNTERS.reset()
    tb._verify_batch(sts, _weights())
    assert (COUNTERS.mul, COUNTERS.base_mul, COUNTERS.add) == (18 * n + 17, 1, 18 * n + 16)
    COUNTERS.reset()
    tb.verify_shuffle_commitment(
        sts[0].inputs, sts[0].outputs, sts[0].joint_key, sts[0].proof, sts[0].context
    )
    # alone: c_j, c^_i, t^_i, h_i and two piles (4N), plus t1..t42, h and the joint key:
    # more than the challenge form's 8N + 4, so a batch of one is only for uniformity
    assert (COUNTERS.mul, COUNTERS.base_mul) == (8 * n + 7, 1)


def test_predictable_weights_let_a_false_proof_pass_so_the_public_batch_takes_none():
    """With weights the prover knows, two false equations can cancel: move ``s1`` by delta
    and ``s2`` by ``-b1 delta / b2``.  The public verifier draws fresh weights, always."""
    _, sts = _chain(3, 1)
    st = sts[0]
    known = _weights()
    b1, b2 = known(), known()
    delta = 12345
    proof = dataclasses.replace(
        st.proof,
        s1=(st.proof.s1 + delta) % L,
        s2=(st.proof.s2 - b1 * delta * pow(b2, -1, L)) % L,
    )
    forged = dataclasses.replace(st, proof=proof)
    tb._verify_batch([forged], _weights())  # the predictable weights are fooled
    with pytest.raises(InvalidProof):
        tb.verify_shuffles_batch([forged])
    with pytest.raises(InvalidProof):
        tb.verify_shuffle_commitment(st.inputs, st.outputs, st.joint_key, proof, st.context)
    # no way to give it weights: the statements, and a second thread to lend (aside)
    assert list(inspect.signature(tb.verify_shuffles_batch).parameters) == ["statements", "aside"]


class _Thread:
    """An aside (crypto.shuffle_proof_tw.Aside) that runs the part in a second thread."""

    def __init__(self) -> None:
        self.lent = 0

    def __call__(self, fn):  # noqa: ANN001, ANN204
        self.lent += 1
        pool = ThreadPoolExecutor(max_workers=1)
        future = pool.submit(fn)
        pool.shutdown(wait=False)
        return future.result


def _never_started(fn):  # noqa: ANN001, ANN202
    """An aside whose thread never got to the part: it is computed when asked."""
    return fn


@pytest.mark.parametrize("aside", [_Thread(), _never_started])
def test_a_batch_with_a_second_thread_costs_the_same_and_keeps_its_verdicts(aside):
    """Half of a batch's terms computed aside: the same multiplications and additions
    (the two partial sums added once), a true batch passes, a false one fails and names
    the culprit, and an exception in the part aside (a degenerate sum) is a failure."""
    n = 8
    _, sts = _chain(n, 3)
    COUNTERS.reset()
    tb._verify_batch(sts, _weights(), aside)
    assert (COUNTERS.mul, COUNTERS.base_mul, COUNTERS.add) == (18 * n + 17, 1, 18 * n + 16)
    if isinstance(aside, _Thread):
        assert aside.lent == 1
    tb.verify_shuffles_batch(sts, aside=aside)
    bad = dataclasses.replace(
        sts[1], proof=dataclasses.replace(sts[1].proof, s1=(sts[1].proof.s1 + 1) % L)
    )
    with pytest.raises(InvalidProof, match="proof 1 of the batch"):
        tb.verify_shuffles_batch([sts[0], bad, sts[2]], aside=aside)


def test_a_small_batch_is_not_split():
    """Too few terms to be worth a second thread: none is asked for."""
    _, sts = _chain(2, 1)
    aside = _Thread()
    tb.verify_shuffles_batch(sts, aside=aside)
    assert aside.lent == 0


def _running(sts, *, aside=None, last_more: bool = False) -> tb.RunningBatch:
    """A running batch of ``sts`` added in order (each output pile the next one's input)."""
    batch = tb.RunningBatch()
    for k, st in enumerate(sts):
        batch.add(st, more=k < len(sts) - 1 or last_more, aside=aside)
    return batch


@pytest.mark.parametrize("n", [3, 8])
def test_a_running_batch_costs_what_the_batch_costs_most_of_it_as_statements_come(n):
    """Added one by one, three consecutive shuffles cost the batch's 18N + 17
    multiplications (and additions less one, one base multiplication): 5N + 5 as each
    comes (its proof's points and its input pile), the rest (the last pile, the
    generators and the key: 2N + N + 2) at the end."""
    _, sts = _chain(n, 3)
    batch = tb.RunningBatch()
    counts = []
    for st in sts:
        COUNTERS.reset()
        batch.add(st)
        counts.append(COUNTERS.mul)
    COUNTERS.reset()
    batch.verify()
    counts.append(COUNTERS.mul)
    assert counts == [5 * n + 5, 5 * n + 5, 5 * n + 5, 3 * n + 2]
    assert sum(counts) == 18 * n + 17
    COUNTERS.reset()
    _running(sts).verify()
    assert (COUNTERS.mul, COUNTERS.base_mul, COUNTERS.add) == (18 * n + 17, 1, 18 * n + 16)


@pytest.mark.parametrize("aside", [None, _never_started, _Thread()])
def test_a_running_batch_passes_true_shuffles_and_names_a_false_one(aside):
    """The batch's verdicts, in any order of adding, with or without a second thread:
    true statements pass; one false proof among them fails the batch, and the error
    names it; a statement whose outputs were wrongly said to come again costs its
    multiplications at the end, with the same verdict."""
    _, sts = _chain(4, 3)
    _running(sts, aside=aside).verify(aside)
    _running(list(reversed(sts)), aside=aside).verify(aside)
    _running(sts, aside=aside, last_more=True).verify(aside)
    bad = dataclasses.replace(
        sts[1], proof=dataclasses.replace(sts[1].proof, s2=(sts[1].proof.s2 + 1) % L)
    )
    with pytest.raises(InvalidProof, match="proof 1 of the batch"):
        _running([sts[0], bad, sts[2]], aside=aside).verify(aside)
    with pytest.raises(InvalidProof, match="does not verify"):
        _running([bad], aside=aside).verify(aside)


def test_tampering_with_each_field_fails_a_running_batch():
    _, sts = _chain(3, 2)
    for name in [f.name for f in dataclasses.fields(tb.TWCommitmentProof)]:
        for value in _tampered_values(getattr(sts[1].proof, name)):
            bad = dataclasses.replace(
                sts[1], proof=dataclasses.replace(sts[1].proof, **{name: value})
            )
            with pytest.raises(InvalidProof):
                _running([sts[0], bad]).verify()


def test_a_running_batch_draws_its_weights_fresh_so_a_forgery_for_known_ones_fails():
    """The forgery that fools predictable weights (see above) fails a running batch,
    whose weights come from fresh randomness as each statement is added."""
    _, sts = _chain(3, 1)
    st = sts[0]
    known = _weights()
    b1, b2 = known(), known()
    delta = 12345
    proof = dataclasses.replace(
        st.proof,
        s1=(st.proof.s1 + delta) % L,
        s2=(st.proof.s2 - b1 * delta * pow(b2, -1, L)) % L,
    )
    forged = dataclasses.replace(st, proof=proof)
    tb._verify_batch([forged], _weights())  # the predictable weights are fooled
    with pytest.raises(InvalidProof):
        _running([forged]).verify()
    assert list(inspect.signature(tb.RunningBatch).parameters) == []


def test_a_running_batch_is_verified_once_and_refuses_what_is_not_a_statement():
    _, sts = _chain(2, 2)
    batch = _running(sts)
    batch.verify()
    with pytest.raises(InvalidEncoding, match="once"):
        batch.verify()
    with pytest.raises(InvalidEncoding):
        batch.add(sts[0])
    with pytest.raises(InvalidEncoding):
        tb.RunningBatch().add("not a statement")
    with pytest.raises(DeckMismatch):
        tb.RunningBatch().verify()
