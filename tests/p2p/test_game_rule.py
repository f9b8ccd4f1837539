"""The game rule's dispatch tables (``p2p.table.game_rule``): every obligation the engine
can state, and every proof shape a statement reduces to, has its sub-protocol.

A new obligation kind, or a new proof shape, with no entry here would stop every table
that meets it with "no protocol for obligation" (our bug, ``FoldFailed``); this finds
it without playing a game.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass

import pytest

from engine import obligations
from engine.obligations import Obligation, Reveal, Statement
from p2p.table.game_rule import DISCHARGE, PROOF_SHAPES, fold, reveal


def _subclasses(base: type) -> list[type]:
    return [
        cls
        for _, cls in inspect.getmembers(obligations, inspect.isclass)
        if issubclass(cls, base) and cls is not base and cls.__module__ == obligations.__name__
    ]


def test_every_obligation_has_a_sub_protocol() -> None:
    kinds = _subclasses(Obligation)
    assert kinds, "engine.obligations states no obligation"
    missing = [cls.__name__ for cls in kinds if fold._lookup(DISCHARGE, _blank(cls)) is None]
    assert not missing, f"no sub-protocol for {missing}"


def test_every_proof_shape_has_a_sub_protocol() -> None:
    shapes = {type(_shape_of(cls)) for cls in _subclasses(Statement)}
    assert len(shapes) == 3  # engine.obligations: exactly three shapes
    assert shapes == set(PROOF_SHAPES)


def test_a_subclass_finds_its_base_class_sub_protocol() -> None:
    @dataclass(frozen=True, slots=True)
    class NamedReveal(Reveal):
        name: str = "a game's own reveal"

    assert fold._lookup(DISCHARGE, NamedReveal((1,))) is reveal.discharge
    assert fold._lookup(DISCHARGE, object()) is None


def _blank(cls: type) -> object:
    """An instance of ``cls`` without running its checks (only its class is looked up)."""
    return object.__new__(cls)


def _shape_of(cls: type) -> Statement:
    """The proof shape of a statement of class ``cls`` (fields filled with plain values)."""
    params = list(inspect.signature(cls).parameters.values())
    values = {
        "seat": 0,
        "handles": (1, 2),
        "faces": frozenset(),
        "at_least": 1,
        "face": next(iter(obligations.ALL_FACES)),
        "given": (1,),
        "rest": (2,),
        "verifier": 1,
        "order": "slave",
        "handle": 1,
        "suit": 0,
        "limit": 1,
    }
    args = {}
    for p in params:
        if p.default is not inspect.Parameter.empty:
            continue
        if p.name not in values:
            pytest.fail(f"{cls.__name__}: no test value for field {p.name!r}")
        args[p.name] = values[p.name]
    return cls(**args).shape()


def test_what_the_table_waits_for_is_said_in_words():
    """The status line's wait: one player "is", several "are", listed with "and"."""
    from types import SimpleNamespace

    from p2p.table.game_rule.core import Need
    from p2p.table.game_rule.fold import describe

    def said(seats, what="unlocking cards"):
        need = Need("tokens", seats, lambda seat, body: None, what)
        rule = SimpleNamespace(need=need, slot=lambda s: s)
        return describe(rule, {0: "Ann", 1: "Bob", 2: "Cat", 3: "Dan"})

    assert said((1,), "shuffling") == "Bob is shuffling"
    assert said((0, 2)) == "Ann and Cat are unlocking cards"
    assert said((1, 2, 3)) == "Bob, Cat and Dan are unlocking cards"
