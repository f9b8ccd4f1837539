"""Tests of Aight of Spaides' rule language (engine/games/aight/rulebook.py)."""

import contextlib
import random

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.cards import parse_card
from engine.games.aight.bots import random_spec
from engine.games.aight.rulebook import (
    AIGHT_WORDS,
    ALL_FACES,
    BASE_RULES,
    EFFECTS,
    MAX_ANNOUNCEMENTS,
    MAX_FREE_TEXT_LEN,
    MAX_RULES,
    TRIGGERS,
    UNMAU_WORDS,
    AllowOn,
    Always,
    Amend,
    Announce,
    AnyCard,
    BadRule,
    CreateRule,
    DrawNext,
    ForbidOn,
    FreeText,
    MatchRankOrSuit,
    MoveRecord,
    OnCard,
    OnColour,
    OnEvent,
    OnRank,
    OnSuit,
    PlayAgain,
    Repeal,
    Reverse,
    RuleBook,
    RuleSpec,
    SetPenalty,
    SetUnmauCount,
    SkipNext,
    Standings,
    Wild,
    WinCondition,
    catalogue,
    describe,
    spec_from_dict,
    spec_to_dict,
)

C = parse_card


def one_of_each_effect():
    """A valid spec for every effect kind (checked to cover EFFECTS below)."""
    return [
        RuleSpec(Always(), MatchRankOrSuit()),
        RuleSpec(OnRank(11), SkipNext()),
        RuleSpec(OnRank(12), Reverse()),
        RuleSpec(OnRank(7), DrawNext(2, True)),
        RuleSpec(OnRank(13), PlayAgain()),
        RuleSpec(OnRank(14), Wild()),
        RuleSpec(OnColour("red"), Announce("Red!")),
        RuleSpec(OnSuit(2), AllowOn(OnColour("red"))),
        RuleSpec(OnRank(9), ForbidOn(OnSuit(0))),
        RuleSpec(Always(), SetUnmauCount(3)),
        RuleSpec(Always(), SetPenalty(2)),
        RuleSpec(Always(), WinCondition("unmaus", 3)),
        RuleSpec(OnCard(5, 1), CreateRule()),
        RuleSpec(Always(), Repeal(2)),
        RuleSpec(Always(), Amend(5, RuleSpec(Always(), SetUnmauCount(2)))),
        RuleSpec(Always(), FreeText("No humming")),
    ]


def test_base_rules_are_numbered_and_described():
    book = RuleBook()
    assert [r.number for r in book.rules] == [1, 2, 3, 4, 5, 6]
    assert [r.spec for r in book.rules] == list(BASE_RULES)
    assert (
        book.lines()[1] == f"#2: When the 8♠ is played, the player must announce “{AIGHT_WORDS}”."
    )
    assert book.lines()[3] == f"#4: When a seat Unmaus, the player must announce “{UNMAU_WORDS}”."
    assert book.unmau_count() == 5 and book.penalty() == 1
    assert book.required_words("play", C("8S"), emptied=True) == (AIGHT_WORDS, UNMAU_WORDS)


def test_every_effect_and_trigger_round_trips_and_describes():
    specs = one_of_each_effect()
    assert {s.effect.KIND for s in specs} == set(EFFECTS)
    triggers = [AnyCard(), OnCard(3, 2), OnRank(4), OnSuit(1), OnColour("black")]
    triggers += [OnEvent(e) for e in ("unmau", "draw", "penalty", "turn_start")]
    specs += [RuleSpec(t, SkipNext()) for t in triggers]
    assert {s.trigger.KIND for s in specs} == set(TRIGGERS)
    descriptions = set()
    for s in specs + list(catalogue()):
        wire = msgpack.unpackb(msgpack.packb(spec_to_dict(s)))
        assert spec_from_dict(wire) == s
        text = describe(s)
        assert text.endswith(".") and "\n" not in text
        descriptions.add(text)
    assert len(descriptions) == len(set(specs + list(catalogue())))
    assert describe(specs[3]) == "When a 7 is played, the next seat draws 2 (stackable)."
    assert describe(specs[14]) == "Rule #5 now reads: Unmau picks up 2 cards."


@pytest.mark.parametrize(
    ("data", "match"),
    [
        ("nope", "must be a map"),
        ({"trigger": {"kind": "always"}}, "exactly trigger and effect"),
        ({"trigger": {"kind": "always"}, "effect": {"kind": "boom"}}, "unknown effect kind"),
        ({"trigger": {"kind": "moon"}, "effect": {"kind": "skip"}}, "unknown trigger kind"),
        ({"trigger": {"kind": "rank", "rank": 15}, "effect": {"kind": "skip"}}, "rank must be"),
        ({"trigger": {"kind": "rank", "rank": True}, "effect": {"kind": "skip"}}, "integer"),
        ({"trigger": {"kind": "rank"}, "effect": {"kind": "skip"}}, "fields"),
        ({"trigger": {"kind": "rank", "rank": 5, "x": 1}, "effect": {"kind": "skip"}}, "fields"),
        ({"trigger": {"kind": "colour", "colour": "blue"}, "effect": {"kind": "skip"}}, "colour"),
        ({"trigger": {"kind": "event", "event": "sneeze"}, "effect": {"kind": "skip"}}, "event"),
        (
            {"trigger": {"kind": "rank", "rank": 5}, "effect": {"kind": "draw_next", "n": 99}},
            "draw count",
        ),
        (
            {"trigger": {"kind": "rank", "rank": 5}, "effect": {"kind": "draw_next", "n": [1]}},
            "bad type",
        ),
        (
            {"trigger": {"kind": "rank", "rank": 5}, "effect": {"kind": "announce", "words": " x"}},
            "surrounding spaces",
        ),
        (
            {"trigger": {"kind": "always"}, "effect": {"kind": "free_text", "text": "x" * 999}},
            f"limit is {MAX_FREE_TEXT_LEN}",
        ),
        (
            {"trigger": {"kind": "always"}, "effect": {"kind": "win", "condition": "rich"}},
            "win condition",
        ),
        (
            {"trigger": {"kind": "rank", "rank": 5}, "effect": {"kind": "allow_on", "target": 3}},
            "target must be a map",
        ),
        (
            {
                "trigger": {"kind": "rank", "rank": 5},
                "effect": {"kind": "allow_on", "target": {"kind": "event", "event": "draw"}},
            },
            "card pattern",
        ),
        ({"trigger": {"kind": "always"}, "effect": {"kind": "skip"}}, "cannot be triggered"),
    ],
)
def test_untrusted_rule_dicts_are_rejected_with_reasons(data, match):
    with pytest.raises(BadRule, match=match):
        spec_from_dict(data)


def test_amendment_nesting_is_bounded_and_cannot_amend():
    inner = {"trigger": {"kind": "always"}, "effect": {"kind": "penalty", "n": 2}}
    nested = {
        "trigger": {"kind": "always"},
        "effect": {"kind": "amend", "number": 6, "spec": inner},
    }
    assert isinstance(spec_from_dict(nested).effect, Amend)
    double = {
        "trigger": {"kind": "always"},
        "effect": {"kind": "amend", "number": 6, "spec": nested},
    }
    with pytest.raises(BadRule, match="cannot itself repeal or amend"):
        spec_from_dict(double)


@pytest.mark.parametrize(
    ("spec", "match"),
    [
        (RuleSpec(Always(), SkipNext()), "cannot be triggered by always"),
        (RuleSpec(OnEvent("turn_start"), PlayAgain()), "cannot be triggered"),
        (RuleSpec(OnEvent("penalty"), Announce("Ow")), "cannot be triggered"),
        (RuleSpec(OnEvent("draw"), DrawNext(1, True)), "only a card can start a stackable"),
        (RuleSpec(OnCard(8, 3), Announce(AIGHT_WORDS)), "duplicates rule #2"),
        (RuleSpec(Always(), Repeal(99)), "there is no rule #99"),
        (RuleSpec(Always(), Amend(6, RuleSpec(Always(), SetPenalty(1)))), "leaves rule #6"),
        (RuleSpec(Always(), Repeal(1)), "every play illegal"),
        (RuleSpec(AnyCard(), ForbidOn(OnRank(13))), "every play illegal on K"),
        (RuleSpec(Always(), SetPenalty(11)), "penalty size must be in 0..10"),
        (RuleSpec(Always(), WinCondition("empty_no_pending", 2)), "k must be 1"),
        (RuleSpec(Always(), FreeText("")), "non-empty"),
        ("not a rule", "not a rule"),
        (RuleSpec(Always(), Amend(1, RuleSpec(Always(), Repeal(2)))), "cannot itself"),
    ],
)
def test_invalid_rules_rejected_with_clear_reasons(spec, match):
    with pytest.raises(BadRule, match=match):
        RuleBook().validate(spec)


def test_contradiction_and_changed_rules():
    book, r7 = RuleBook().add(RuleSpec(OnRank(9), AllowOn(OnSuit(2))), 0)
    with pytest.raises(BadRule, match="contradicts rule #7"):
        book.validate(RuleSpec(OnRank(9), ForbidOn(OnSuit(2))))
    book, r8 = book.add(RuleSpec(Always(), Repeal(7)), 1)
    assert book.get(7).status == "repealed" and r8.status == "spent"
    assert "[repealed]" in book.get(7).describe()
    with pytest.raises(BadRule, match="rule #7 is repealed"):
        book.validate(RuleSpec(Always(), Repeal(7)))
    with pytest.raises(BadRule, match="already taken effect"):
        book.validate(RuleSpec(Always(), Amend(8, RuleSpec(Always(), SetPenalty(2)))))
    # once #7 is repealed the forbidding rule is no longer a contradiction
    book.validate(RuleSpec(OnRank(9), ForbidOn(OnSuit(2))))


def test_win_condition_already_met_is_rejected():
    ctx = Standings(unmaus=(0, 2, 0), rules_created=(3, 0, 0))
    with pytest.raises(BadRule, match="seat 1 has already met"):
        RuleBook().validate(RuleSpec(Always(), WinCondition("unmaus", 2)), ctx)
    with pytest.raises(BadRule, match="seat 0 has already met"):
        RuleBook().validate(RuleSpec(Always(), WinCondition("rules_created", 4)), ctx)
    RuleBook().validate(RuleSpec(Always(), WinCondition("unmaus", 3)), ctx)


def test_repeal_and_amend_base_rules():
    book, _ = RuleBook().add(RuleSpec(Always(), Repeal(2)), 0)
    assert book.required_words("play", C("8S"), emptied=False) == ()
    book, _ = book.add(RuleSpec(Always(), Amend(5, RuleSpec(Always(), SetUnmauCount(2)))), 1)
    assert book.unmau_count() == 2 and book.get(5).amended_by == (8,)
    # base #1 may go when another rule keeps something playable on every card
    book, _ = book.add(RuleSpec(AnyCard(), AllowOn(AnyCard())), 0)
    book, _ = book.add(RuleSpec(Always(), Repeal(1)), 0)
    assert book.can_play(C("2C"), C("KH"), None)


def test_matching_allow_forbid_wild_named_suit():
    book = RuleBook()
    assert book.can_play(C("7H"), C("7C"), None) and book.can_play(C("2C"), C("7C"), None)
    assert not book.can_play(C("2H"), C("7C"), None)
    book, _ = book.add(RuleSpec(OnColour("red"), AllowOn(OnColour("red"))), 0)
    assert book.can_play(C("2H"), C("9D"), None) and not book.can_play(C("2H"), C("9C"), None)
    book, _ = book.add(RuleSpec(OnRank(9), ForbidOn(OnSuit(2))), 0)
    assert not book.can_play(C("9H"), C("3H"), None)  # forbidding beats matching
    book, _ = book.add(RuleSpec(OnRank(14), Wild()), 0)
    assert book.can_play(C("AS"), C("3H"), None)
    # after a wild naming ♦, ♦ (or the wild's rank) follows, the wild's own suit does not
    assert book.can_play(C("4D"), C("AS"), 1) and book.can_play(C("AC"), C("AS"), 1)
    assert not book.can_play(C("4S"), C("AS"), 1)


def test_improper_judges_public_records():
    book, _ = RuleBook().add(RuleSpec(OnRank(7), DrawNext(2, True)), 0)
    book, _ = book.add(RuleSpec(OnRank(14), Wild()), 0)

    def rec(card, top, words=(), suit=None, has_rule=False, emptied=False, stack=0, kind="play"):
        return MoveRecord(
            0, kind, C(card) if card else None, C(top), None, words, suit, has_rule, emptied, stack
        )

    assert book.improper(rec("5C", "9C")) == ()
    assert "may not be played on" in book.improper(rec("5H", "9C"))[0]
    assert "does not stack" in book.improper(rec("9C", "7C", stack=2))[0]
    assert book.improper(rec("7H", "7C", stack=2)) == ()
    assert "no suit was named" in book.improper(rec("AH", "7C"))[0]
    assert book.improper(rec("AH", "7C", suit=0)) == ()
    reasons = book.improper(rec("8S", "3S"))
    assert any("requires creating a rule" in r for r in reasons)
    assert any(AIGHT_WORDS in r for r in reasons)
    assert book.improper(rec("8S", "3S", words=(AIGHT_WORDS,), has_rule=True)) == ()
    assert UNMAU_WORDS in book.improper(rec("5C", "9C", emptied=True))[0]
    book, _ = book.add(RuleSpec(OnEvent("draw"), Announce("Spaides")), 0)
    assert "Spaides" in book.improper(rec(None, "9C", kind="draw"))[0]
    assert book.improper(rec(None, "9C", words=("Spaides",), kind="draw")) == ()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 2**32 - 1), min_size=1, max_size=25))
def test_any_sequence_of_valid_rules_keeps_every_top_playable(seeds):
    """Property: after any sequence of accepted rules, every top card (with any
    named suit) has some face playable on it, and the book round-trips."""
    book = RuleBook()
    for seed in seeds:
        spec = random_spec(random.Random(seed), len(book.rules))
        try:
            book, _ = book.add(spec, 0)
        except BadRule:
            continue
    assert book.compiled.dead_top() is None
    for r in book.rules:
        assert spec_from_dict(spec_to_dict(r.spec)) == r.spec
    for top in ALL_FACES[:13]:
        assert any(book.can_play(c, top, None) for c in ALL_FACES)


# ---- audit additions ------------------------------------------------------------------------


def test_validate_memo_does_not_take_a_bool_for_an_int():
    """DrawNext(True) == DrawNext(1) as dataclasses; the memo must not let the
    bool through on the int's verdict."""
    book = RuleBook()
    book.validate(RuleSpec(OnRank(5), DrawNext(1)))
    with pytest.raises(BadRule, match="draw count must be an integer"):
        book.validate(RuleSpec(OnRank(5), DrawNext(True)))
    with pytest.raises(BadRule, match="stacking must be true or false"):
        book.validate(RuleSpec(OnRank(5), DrawNext(1, 0)))
    book.validate(RuleSpec(OnRank(9), SkipNext()))
    with pytest.raises(BadRule, match="rank must be an integer"):
        book.validate(RuleSpec(OnRank(9.0), SkipNext()))


def test_no_move_may_require_more_announcements_than_a_move_carries():
    book = RuleBook()
    for i in range(MAX_ANNOUNCEMENTS - 2):  # the emptying 8♠ also needs Aight + Unmau
        book, _ = book.add(RuleSpec(AnyCard(), Announce(f"Word {i}")), 0)
    assert len(book.required_words("play", C("8S"), emptied=True)) == MAX_ANNOUNCEMENTS
    with pytest.raises(BadRule, match="playing the last card 8♠ require 9 announcements"):
        book.validate(RuleSpec(OnSuit(3), Announce("One too many")))
    book.validate(RuleSpec(OnSuit(2), Announce("Hearts")))  # 8♠ is not a ♥: fine
    amend = RuleSpec(Always(), Amend(7, RuleSpec(OnSuit(3), Announce("Other"))))
    book.validate(amend)  # replacing one announcement keeps the count
    draw = RuleBook()
    for i in range(MAX_ANNOUNCEMENTS):
        draw, _ = draw.add(RuleSpec(OnEvent("draw"), Announce(f"D{i}")), 0)
    with pytest.raises(BadRule, match="a draw require 9"):
        draw.validate(RuleSpec(OnEvent("draw"), Announce("D9")))


def test_a_full_book_lifts_the_duty_to_create_a_rule():
    book, _ = RuleBook().add(RuleSpec(AnyCard(), CreateRule()), 0)
    assert book.creates_rule(C("2C"), False) and not book.full
    i = 0
    while len(book.rules) < MAX_RULES:
        book, _ = book.add(RuleSpec(Always(), FreeText(f"Rule text {i}")), 0)
        i += 1
    assert book.full and not book.creates_rule(C("2C"), False)
    with pytest.raises(BadRule, match="full"):
        book.validate(RuleSpec(Always(), FreeText("one more")))
    rec = MoveRecord(0, "play", C("2C"), C("9C"), None, (), None, False, False, 0)
    assert book.improper(rec) == ()


def test_hostile_values_give_bad_rule_not_crashes():
    deep: object = {"kind": "rank", "rank": 5}
    for _ in range(100_000):
        deep = [deep]
    huge = 10**5000
    for data in (
        deep,
        {"trigger": deep, "effect": {"kind": "skip"}},
        {"trigger": {"kind": deep}, "effect": {"kind": "skip"}},
        {"trigger": {"kind": "rank", "rank": huge}, "effect": {"kind": "skip"}},
        {"trigger": {"kind": "rank", "rank": -huge}, "effect": {"kind": "skip"}},
        {"trigger": {"kind": "colour", "colour": "x" * 10**6}, "effect": {"kind": "skip"}},
        {"trigger": {"kind": "rank", "rank": 5, "x" * 10**6: 1}, "effect": {"kind": "skip"}},
    ):
        with pytest.raises(BadRule) as info:
            spec_from_dict(data)
        assert len(str(info.value)) < 400
    with pytest.raises(BadRule, match="colour must be one of"):
        RuleBook().validate(RuleSpec(OnColour(deep), SkipNext()))


_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=-(10**6000), max_value=10**6000),
    st.floats(),
    st.text(max_size=50),
    st.sampled_from(
        ["kind", "trigger", "effect", "target", "spec", "rank", "suit", "n", "words"]
        + list(TRIGGERS)
        + list(EFFECTS)
    ),
    st.binary(max_size=8),
)
_keys = st.one_of(
    st.sampled_from(
        ["kind", "trigger", "effect", "target", "spec", "rank", "suit", "colour", "event"]
        + ["n", "stacking", "words", "number", "condition", "k", "text"]
    ),
    st.text(max_size=8),
)
_junk = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.tuples(inner, inner),
        st.dictionaries(_keys, inner, max_size=5),
    ),
    max_leaves=30,
)


def _near_rule(draw_kind):
    """Dicts shaped like rules, with random field values (reach deep checks)."""
    return st.fixed_dictionaries(
        {
            "trigger": st.fixed_dictionaries(
                {"kind": st.sampled_from(list(TRIGGERS))},
                optional={"rank": _junk, "suit": _junk, "colour": _junk, "event": _junk},
            ),
            "effect": st.fixed_dictionaries(
                {"kind": st.sampled_from(list(EFFECTS))},
                optional={
                    "n": _junk,
                    "stacking": _junk,
                    "words": _junk,
                    "target": _junk,
                    "number": _junk,
                    "spec": draw_kind,
                    "condition": _junk,
                    "k": _junk,
                    "text": _junk,
                },
            ),
        }
    )


@settings(max_examples=400, deadline=None)
@given(st.one_of(_junk, _near_rule(_junk), _near_rule(_near_rule(_junk))))
def test_fuzz_spec_from_dict_decodes_or_raises_bad_rule(data):
    """Untrusted rule data either decodes to a spec that checks and round-trips,
    or raises BadRule, never anything else."""
    try:
        spec = spec_from_dict(data)
    except BadRule as exc:
        assert len(str(exc)) < 600
        return
    spec.check()
    assert spec_from_dict(spec_to_dict(spec)) == spec
    with contextlib.suppress(BadRule):
        RuleBook().validate(spec)
