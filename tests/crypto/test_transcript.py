"""Tests for crypto.transcript: determinism, binding of every input, context separation."""

from __future__ import annotations

import pytest

from crypto.errors import InvalidEncoding, InvalidScalar
from crypto.group import G, L, base_mul
from crypto.transcript import Context, Transcript

CTX = Context(b"table-1", 3, 7, 2)


def _run(ctx=CTX, protocol="p", items=(("a", b"x"),)):
    t = Transcript(protocol, ctx)
    for label, data in items:
        t.append(label, data)
    return t.challenge("c")


def test_deterministic_and_in_range():
    assert _run() == _run()
    assert 0 <= _run() < L


def test_context_fields_all_bound():
    base = _run()
    for other in (
        Context(b"table-2", 3, 7, 2),
        Context(b"table-1", 4, 7, 2),
        Context(b"table-1", 3, 8, 2),
        Context(b"table-1", 3, 7, 1),
    ):
        assert _run(ctx=other) != base
    assert _run(protocol="q") != base


def test_items_length_prefixed():
    assert _run(items=(("a", b"xy"),)) != _run(items=(("a", b"x"), ("", b"y")))
    assert _run(items=(("ab", b"c"),)) != _run(items=(("a", b"bc"),))
    assert _run(items=(("a", b"x"),)) != _run(items=(("b", b"x"),))


def test_challenges_chain():
    t = Transcript("p", CTX)
    c1 = t.challenge("c")
    c2 = t.challenge("c")
    assert c1 != c2
    many = Transcript("p", CTX).challenges("r", 5)
    assert len(set(many)) == 5 and all(0 <= c < L for c in many)
    t1 = Transcript("p", CTX)
    t2 = t1.copy()
    assert t1.challenge("x") == t2.challenge("x")


def test_typed_appends():
    t1, t2 = Transcript("p", CTX), Transcript("p", CTX)
    t1.append_points("ps", [G, base_mul(2)])
    t2.append_points("ps", [base_mul(2), G])
    assert t1.challenge("c") != t2.challenge("c")
    t = Transcript("p", CTX)
    t.append_point("g", G)
    t.append_scalar("k", 5)
    t.append_int("n", 9)
    with pytest.raises(InvalidScalar):
        t.append_scalar("k", L)
    with pytest.raises(InvalidEncoding):
        t.append_int("n", -1)
    with pytest.raises(InvalidEncoding):
        t.append("x", "str")  # type: ignore[arg-type]


def test_context_validation():
    with pytest.raises(InvalidEncoding):
        Context(b"", 0, 0, 0)
    with pytest.raises(InvalidEncoding):
        Context(b"t", -1, 0, 0)
    with pytest.raises(InvalidEncoding):
        Context("t", 0, 0, 0)  # type: ignore[arg-type]
    assert CTX.with_seat(5).seat == 5 and CTX.with_step(9).step == 9
    assert CTX.encode() != CTX.with_seat(3).encode()
