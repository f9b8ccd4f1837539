"""The one decoder of untrusted actions (``engine.codec``), for every game.

A peer may send anything. ``Game.decode_action`` must turn it into an action of the
game with every field of its exact type and within its bounds, or raise
``MalformedAction``, and nothing else (no ``TypeError``, ``KeyError``,
``RecursionError``...). Every action a game can produce must survive the trip
through the wire form and msgpack unchanged.
"""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass
from typing import Annotated

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import codec, registry, runner
from engine.codec import SEATS, Handle, Range, Size, Text
from engine.dealer import LocalDealer
from engine.errors import IllegalAction, MalformedAction
from engine.game import Action, Game, Phase

GAMES = [*registry.names(), "high-card"]
SEATS_OF = {"slave": 4, "high-card": 3}


def fresh(name: str, seed: int = 0) -> tuple[Game, LocalDealer]:
    spec = registry.get(name)
    g = spec.factory(SEATS_OF.get(name, 3), None)
    d = LocalDealer(g.deck, seed)
    runner.start(g, d)
    return g, d


def wire(data):
    """What a peer receives: the msgpack round trip of ``data``."""
    return msgpack.unpackb(msgpack.packb(data), strict_map_key=False)


# ---- the schema is read from the annotations ------------------------------------------


def test_an_unbounded_field_is_a_programming_error_found_at_class_definition():
    @dataclass(frozen=True, slots=True)
    class Loose(Action):
        n: int

    with pytest.raises(TypeError, match="Loose.n"):

        class _Game(Game):
            PHASES = {"x": Phase({Loose: lambda g, a: None})}


@dataclass(frozen=True, slots=True)
class Sample(Action):
    card: Handle
    flag: bool
    target: Annotated[int, Range(-1, SEATS)]
    cards: Annotated[tuple[Handle, ...], Size(1, 3)]
    word: Annotated[str, Text(5)] | None = None


class SampleGame(Game):
    NAME = "sample"
    PHASES = {"x": Phase({Sample: lambda g, a: None})}

    def make_deck(self):
        return [None] * 10  # ten handles


def test_decode_checks_exact_types_and_bounds():
    g = SampleGame(3)
    ok = {"type": "Sample", "seat": 2, "card": 9, "flag": False, "target": -1, "cards": [0, 9]}
    assert g.decode_action({**ok, "word": "hello"}) == Sample(2, 9, False, -1, (0, 9), "hello")
    assert g.decode_action({**ok, "word": None}).cards == (0, 9)
    for bad, match in [
        ({"seat": 3}, "'seat' must be an integer in 0..2"),  # seat < seats
        ({"seat": True}, "'seat' must be an integer"),  # bool is not int
        ({"card": 10}, "'card' must be an integer in 0..9"),  # handle < deck size
        ({"card": 1.0}, "'card' must be an integer"),
        ({"flag": 0}, "'flag' must be true or false"),  # int is not bool
        ({"target": -2}, r"'target' must be an integer in -1\.\.2"),
        ({"cards": []}, "'cards' must hold 1-3 items, not 0"),
        ({"cards": [1, 2, 3, 4]}, "'cards' must hold 1-3 items, not 4"),
        ({"cards": [1, "2"]}, "'cards' item 1 must be an integer"),
        ({"cards": "12"}, "'cards' must be a list"),
        ({"word": "toolong"}, "'word' must be 1-5 printable characters"),
        ({"word": ""}, "'word' must be 1-5 printable characters"),
        ({"word": "a\nb"}, "'word' must be 1-5 printable characters"),
        ({"card": 10**5000}, r"<int of \d+ bits>"),
    ]:
        with pytest.raises(MalformedAction, match=match):
            g.decode_action({**ok, "word": None, **bad})
    for data, match in [
        ([1, 2], "must be a map"),
        ({"type": "Nope"}, "unknown action type"),
        ({"type": ["Sample"]}, "unknown action type <list>"),
        ({**ok}, "fields"),  # a field is missing
        ({**ok, "word": None, "extra": 1}, "fields"),
        ({**ok, "word": None, 7: 1}, "fields"),
    ]:
        with pytest.raises(MalformedAction, match=match):
            g.decode_action(data)


def test_apply_refuses_a_badly_typed_action_before_any_rule_runs():
    g, _ = fresh("high-card")
    before = g.state_hash()
    hand = g.zones["hand:0"]
    bad = [
        type(g.legal_actions(0)[0])(True, hand[0]),  # True is not seat 1
        type(g.legal_actions(0)[0])(0, float(hand[0])),
        type(g.legal_actions(0)[0])(0, 52),
    ]
    for a in bad:
        with pytest.raises(IllegalAction, match="field") as err:
            g.apply(a)
        assert err.value.action is a and err.value.phase == "play"
    assert g.state_hash() == before


# ---- every game: hostile data gives MalformedAction and nothing else ---------------------


def _ints():
    return st.one_of(
        st.integers(-3, 120), st.integers(), st.sampled_from([2**63, -(2**63), 10**30])
    )


_scalar = st.one_of(
    st.none(), st.booleans(), _ints(), st.floats(), st.text(max_size=50), st.binary(max_size=8)
)
_plain = st.recursive(
    _scalar,
    lambda inner: st.one_of(
        st.lists(inner, max_size=5),
        st.dictionaries(st.one_of(st.text(max_size=8), _ints()), inner, max_size=5),
    ),
    max_leaves=25,
)
_RULE_WORDS = ["kind", "trigger", "effect", "target", "spec", "n", "rank", "suit", "event"]
_rulish = st.recursive(
    _scalar,
    lambda inner: st.dictionaries(st.sampled_from(_RULE_WORDS), inner, max_size=4),
    max_leaves=20,
)


@st.composite
def hostile(draw, name: str):
    """Plain data aimed at one game: random maps, or maps with real action names and
    field names holding random or nearly right values."""
    g_cls = registry.get(name).game_class
    if draw(st.integers(0, 4)) == 0:
        return draw(_plain)
    cls = draw(st.sampled_from(g_cls.ACTIONS))
    names = [f.name for f in dataclasses.fields(cls)]
    if draw(st.booleans()):
        names = draw(st.lists(st.sampled_from([*names, "type", "x"]), max_size=6))
    value = st.one_of(_plain, _rulish, st.lists(_ints(), max_size=6))
    data = {n: draw(value) for n in names}
    data["type"] = draw(st.one_of(st.just(cls.__name__), _scalar))
    return data


@pytest.mark.parametrize("name", GAMES)
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_hostile_data_decodes_or_raises_malformed_action_only(name, data):
    g, _ = fresh(name)
    raw = data.draw(hostile(name))
    try:
        a = g.decode_action(raw)
    except MalformedAction as exc:
        assert len(str(exc)) < 600
        return
    # what decodes is exactly an action of the game, and encodes back to the same data
    assert isinstance(a, g.ACTIONS) and codec.problem(g, a) is None
    assert g.decode_action(wire(g.encode_action(a))) == a


@pytest.mark.parametrize("name", GAMES)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**16), field_value=_plain)
def test_a_legal_action_with_one_field_replaced_decodes_or_raises_malformed_action(
    name, seed, field_value
):
    """Near misses: a real encoded action of a real game state with one value swapped."""
    g, d = fresh(name, seed)
    rng = random.Random(seed)
    for _ in range(rng.randrange(30)):
        if g.is_over():
            break
        s = g.to_move()[0]
        runner.apply(g, d, rng.choice(g.legal_actions(s)))
    if g.is_over():
        return
    s = g.to_move()[0]
    data = g.encode_action(rng.choice(g.legal_actions(s)))
    key = rng.choice(sorted(data))
    data[key] = field_value
    try:
        a = g.decode_action(data)
    except MalformedAction:
        return
    before = g.state_hash()
    try:  # a decoded action is applied or refused as illegal, leaving the state as it was
        runner.apply(g, d, a)
    except IllegalAction:
        assert g.state_hash() == before


# ---- every game: whatever a game hands out survives the wire ----------------------------


@pytest.mark.parametrize("name", GAMES)
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**20))
def test_every_legal_and_every_bot_action_round_trips_through_the_wire(name, seed):
    spec = registry.get(name)
    g, d = fresh(name, seed)
    bots = [spec.bots["heuristic"](s, random.Random(seed + s)) for s in range(g.seats)]
    rng = random.Random(seed)
    for _ in range(rng.randrange(5, 60)):
        if g.is_over():
            break
        s = g.to_move()[0]
        legal = g.legal_actions(s)
        chosen = bots[s].act(g.view(s), legal)
        for a in [*legal, chosen]:
            back = g.decode_action(wire(g.encode_action(a)))
            assert back == a and type(back) is type(a)
        for ev in runner.apply(g, d, chosen):
            for b in bots:
                if ev.visible_to(b.seat):
                    b.observe(ev)
