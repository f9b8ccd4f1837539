"""Tests for crypto.commit: commitments, individual reveal checks, unbiased joint randomness."""

from __future__ import annotations

import collections

import pytest
from hypothesis import given
from hypothesis import strategies as st

from crypto.commit import (
    JointStream,
    bad_reveals,
    check_commitment,
    check_reveals,
    commit,
    missing_reveals,
)
from crypto.errors import CommitmentMismatch, InvalidEncoding


def test_commit_open():
    c, n = commit(b"value", b"ctx")
    assert len(c) == 32 and len(n) == 32
    check_commitment(c, b"value", n, b"ctx")
    c2, n2 = commit(b"value", b"ctx")
    assert c2 != c  # hiding: fresh nonce
    with pytest.raises(CommitmentMismatch) as ei:
        check_commitment(c, b"valuf", n, b"ctx", seat=3)
    assert ei.value.seat == 3 and "seat 3" in str(ei.value)
    with pytest.raises(CommitmentMismatch):
        check_commitment(c, b"value", n2, b"ctx")
    with pytest.raises(CommitmentMismatch):
        check_commitment(c, b"value", n, b"ctx2")
    with pytest.raises(CommitmentMismatch, match="length"):
        check_commitment(c, b"value", n[:31], b"ctx")
    with pytest.raises(CommitmentMismatch, match="length"):
        check_commitment(c[:31], b"value", n, b"ctx")
    with pytest.raises(InvalidEncoding):
        commit(b"v", b"c", nonce=b"short")


def test_commit_pinned_nonce_domain_separation():
    n = bytes(32)
    assert commit(b"ab", b"c", n) == commit(b"ab", b"c", n)
    assert commit(b"ab", b"c", n)[0] != commit(b"b", b"ca", n)[0]
    assert commit(b"", b"abc", n)[0] != commit(b"abc", b"", n)[0]


def _round(values, ctx=b"dice"):
    commitments, reveals, ctxs = {}, {}, {}
    for seat, v in values.items():
        ctxs[seat] = ctx + bytes([seat])
        c, n = commit(v, ctxs[seat])
        commitments[seat] = c
        reveals[seat] = (v, n)
    return commitments, reveals, ctxs


def test_reveals_individually_checked_and_blamed():
    commitments, reveals, ctxs = _round({0: b"a" * 32, 1: b"b" * 32, 2: b"c" * 32})
    check_reveals(commitments, reveals, ctxs)
    assert bad_reveals(commitments, reveals, ctxs) == []
    # seat 1 changes its value after seeing others
    bad = dict(reveals)
    bad[1] = (b"x" * 32, reveals[1][1])
    assert bad_reveals(commitments, bad, ctxs) == [1]
    with pytest.raises(CommitmentMismatch) as ei:
        check_reveals(commitments, bad, ctxs)
    assert ei.value.seat == 1
    # seat 2 does not reveal
    partial = {s: r for s, r in reveals.items() if s != 2}
    assert missing_reveals(commitments, partial) == [2]
    with pytest.raises(CommitmentMismatch, match="did not reveal") as ei:
        check_reveals(commitments, partial, ctxs)
    assert ei.value.seat == 2
    # seat 1 copies seat 0's commitment and reveal: bound to seat context, so rejected
    copied = dict(commitments)
    copied[1] = commitments[0]
    copied_r = dict(reveals)
    copied_r[1] = reveals[0]
    assert bad_reveals(copied, copied_r, ctxs) == [1]


def test_joint_random_deterministic_and_order_independent():
    a = JointStream.from_reveals(b"c", {0: b"x", 1: b"y"})
    b = JointStream.from_reveals(b"c", {1: b"y", 0: b"x"})
    assert a.seed == b.seed
    assert a.dice(10) == b.dice(10)
    assert JointStream.from_reveals(b"c", {0: b"x", 1: b"z"}).seed != a.seed
    assert JointStream.from_reveals(b"d", {0: b"x", 1: b"y"}).seed != a.seed
    assert JointStream.from_reveals(b"c", {0: b"xy", 1: b""}).seed != a.seed
    with pytest.raises(InvalidEncoding):
        JointStream.from_reveals(b"c", {})


def test_dice_unbiased_by_construction():
    jr = JointStream(bytes(64))
    counts = collections.Counter(jr.dice(6000))
    assert set(counts) == {1, 2, 3, 4, 5, 6}
    # loose chi-square style sanity bound (expected 1000 each)
    assert all(850 < c < 1150 for c in counts.values())


def test_below_rejects_instead_of_modulo():
    """A stream whose first byte would be biased by % 6 must be rejected, not reduced."""

    class Scripted(JointStream):
        __slots__ = ("script",)

        def random_bytes(self, n):
            return bytes([self.script.pop(0)])

    jr = Scripted(bytes(64))
    jr.script = [6, 7, 0xFF, 5]  # masked to 3 bits: 6, 7, 7 rejected, then 5
    assert jr.below(6) == 5
    assert jr.script == []


@given(st.binary(min_size=64, max_size=64), st.integers(min_value=1, max_value=60))
def test_permutation_and_choice(seed, n):
    jr = JointStream(seed)
    perm = jr.permutation(n)
    assert sorted(perm) == list(range(n))
    seq = list(range(100, 100 + n))
    assert jr.choice(seq) in seq
    assert 0 <= jr.below(n) < n


def test_joint_random_bad_inputs():
    with pytest.raises(InvalidEncoding):
        JointStream(b"short")
    jr = JointStream(bytes(64))
    with pytest.raises(InvalidEncoding):
        jr.below(0)
    with pytest.raises(InvalidEncoding):
        jr.choice([])
