"""``crypto.memo.remembering``: within a scope a pure check or product is done once per
input, only successes are kept (a false statement is refused every time, also right after
the true one it was made from), and outside a scope, or in a worker thread, nothing is
remembered.  Counted in group operations, never timed."""

from __future__ import annotations

import dataclasses
from concurrent.futures import ThreadPoolExecutor

import pytest

from crypto import shuffle_proof_tw_batch as tb
from crypto.errors import InvalidPoint, InvalidProof, InvalidSignature
from crypto.group import COUNTERS, G, L, Point, base_mul, mul
from crypto.identity import IdentityKey, verify_signature
from crypto.memo import LIMIT, SHUFFLE_LIMIT, Memory, current, remembering
from tests.crypto.test_shuffle_batch import _chain


def _ops() -> int:
    return COUNTERS.mul + COUNTERS.base_mul + COUNTERS.decode


def test_products_and_decodes_are_done_once_in_a_scope_and_every_time_outside() -> None:
    p = base_mul(12345)
    COUNTERS.reset()
    assert mul(7, p) == mul(7, p) and Point.decode(p.data) == Point.decode(p.data)
    assert _ops() == 4  # no scope: every time
    with remembering():
        COUNTERS.reset()
        assert [mul(7, p), mul(7, p), base_mul(9), base_mul(9)] == [
            mul(7, p),
            mul(7, p),
            base_mul(9),
            base_mul(9),
        ]
        Point.decode(p.data)
        Point.decode(p.data)
        assert _ops() == 3  # one product, one base product, one decode
        assert mul(7, p) == base_mul(7 * 12345 % L)  # a remembered product is the product
    assert current() is None
    COUNTERS.reset()
    mul(7, p)
    assert _ops() == 1  # the scope is over


def test_an_invalid_point_is_refused_every_time() -> None:
    bad = bytes(32)  # a point of small order
    with remembering() as memory:
        for _ in range(2):
            with pytest.raises(InvalidPoint):
                Point.decode(bad)
        assert bad not in memory.points


def test_a_shuffle_passed_is_not_checked_again_but_a_tampered_one_is_refused() -> None:
    _, (st,) = _chain(6, 1)
    with remembering():
        tb.verify_shuffles_batch([st])
        COUNTERS.reset()
        tb.verify_shuffles_batch([st])
        assert COUNTERS.mul + COUNTERS.base_mul == 0
        for field, value in (("s1", (st.proof.s1 + 1) % L), ("s4", (st.proof.s4 + 1) % L)):
            forged = dataclasses.replace(st, proof=dataclasses.replace(st.proof, **{field: value}))
            for _ in range(2):
                with pytest.raises(InvalidProof):
                    tb.verify_shuffles_batch([st, forged])
        other = dataclasses.replace(st, context=dataclasses.replace(st.context, seat=5))
        with pytest.raises(InvalidProof):  # the same proof in another seat's name
            tb.verify_shuffles_batch([other])


def test_a_signature_verified_is_remembered_and_another_is_still_refused() -> None:
    key = IdentityKey.generate()
    msg = b"an entry"
    sig = key.sign(msg)
    with remembering() as memory:
        verify_signature(key.public, msg, sig)
        verify_signature(key.public, msg, sig)
        assert len(memory.signatures) == 1
        forged = sig[:40] + bytes([sig[40] ^ 1]) + sig[41:]
        for _ in range(2):
            with pytest.raises(InvalidSignature):
                verify_signature(key.public, msg, forged)
        with pytest.raises(InvalidSignature):
            verify_signature(key.public, b"another entry", sig)


def test_a_worker_thread_does_not_see_the_scope() -> None:
    p = base_mul(5)
    with remembering(), ThreadPoolExecutor(1) as pool:
        mul(3, p)
        assert pool.submit(current).result() is None
        COUNTERS.reset()
        pool.submit(mul, 3, p).result()
        assert COUNTERS.mul == 1


def test_a_full_memory_starts_over() -> None:
    memory = Memory()
    for i in range(LIMIT):
        memory.keep(memory.points, i.to_bytes(32, "little"))
    memory.keep(memory.points, b"one more")
    assert memory.points == {b"one more"}
    assert G.data not in memory.points
    for i in range(SHUFFLE_LIMIT):  # large statements: a smaller memory
        memory.keep(memory.shuffles, i)
    memory.keep(memory.shuffles, -1)
    assert memory.shuffles == {-1} and memory.points == {b"one more"}


def test_a_refused_batch_names_the_same_proof_in_a_scope_as_outside() -> None:
    """The error of a batch counts its proofs as the caller does, whether or not some were
    remembered: the third proof is 'proof 2', not the first of those left to check."""
    _, chain = _chain(5, 3)
    forged = [
        dataclasses.replace(st, proof=dataclasses.replace(st.proof, s1=(st.proof.s1 + 1) % L))
        for st in chain[1:]
    ]
    batch = [chain[0], *forged]
    with pytest.raises(InvalidProof) as outside:
        tb.verify_shuffles_batch(batch)
    assert "proof 1 of the batch (seat 1)" in str(outside.value)
    with remembering():
        tb.verify_shuffles_batch(chain[:1])  # the first proof is remembered
        with pytest.raises(InvalidProof) as inside:
            tb.verify_shuffles_batch(batch)
        assert str(inside.value) == str(outside.value)
        with pytest.raises(InvalidProof) as inside:
            tb.verify_shuffles_batch([chain[0], forged[0]])
    with pytest.raises(InvalidProof) as outside:
        tb.verify_shuffles_batch([chain[0], forged[0]])
    assert str(inside.value) == str(outside.value)
