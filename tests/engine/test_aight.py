"""Tests of Aight of Spaides (engine/games/aight/rules.py) and its bots (engine/games/aight/bots.py)."""

import random
from collections import Counter

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import registry, runner
from engine.cards import cards, parse_card, standard_deck
from engine.dealer import LocalDealer
from engine.errors import DealerPending, EngineError, IllegalAction, NotYourTurn
from engine.games.aight.actions import (
    Call,
    Draw,
    EndTurn,
    KeepRule,
    Pass,
    Play,
    PlayDrawn,
    ProposeEnd,
    Spend,
    Vote,
    VoteEnd,
)
from engine.games.aight.bots import HeuristicBot, RandomAightBot, random_spec
from engine.games.aight.rulebook import (
    AIGHT_WORDS,
    MAX_ANNOUNCEMENTS,
    MAX_RULES,
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
    OnCard,
    OnColour,
    OnEvent,
    OnRank,
    OnSuit,
    PlayAgain,
    Repeal,
    Reverse,
    RuleSpec,
    SetPenalty,
    SetUnmauCount,
    SkipNext,
    Wild,
    WinCondition,
    spec_from_dict,
    spec_to_dict,
)
from engine.games.aight.rules import HAND_SIZE, AightOfSpaides
from tests.engine._helpers import assert_resample_keeps_view, illegal, kinds

DECK = standard_deck(copies=2)
FILLER_RANKS = (3, 4, 5, 6)  # scenario tests avoid these ranks in the cards they move
A_RULE = RuleSpec(OnRank(12), Reverse())


def new(hands, top, deck="", options=None, rules=(), seed=1):
    """A game whose hands start with ``hands`` (padded to 8 with low filler cards),
    whose first turned-up card is ``top`` and whose deck starts with ``deck``."""
    explicit = [cards(h) for h in hands]
    fixed = Counter(c for h in explicit for c in h) + Counter(cards(top + " " + deck))
    pool = Counter(DECK) - fixed
    filler = sorted(pool.elements(), key=lambda c: (c.rank not in FILLER_RANKS, c.rank, c.suit))
    stacked = []
    for h in explicit:
        pad = HAND_SIZE - len(h)
        stacked += h + filler[:pad]
        filler = filler[pad:]
    stacked += cards(top) + cards(deck)
    g = AightOfSpaides(len(hands), options)
    d = LocalDealer(g.deck, seed, stacked=stacked)
    runner.start(g, d)
    for spec in rules:
        g.book, _ = g.book.add(spec, None)
    return g, d


def h_of(g, seat, code):
    face = parse_card(code)
    for h in g.zones[f"hand:{seat}"]:
        if g.faces[h] == face:
            return h
    raise AssertionError(f"seat {seat} holds no {code}")


def shrink(g, seat, keep):
    """Position set-up: move every card but ``keep`` from the hand to the deck's bottom."""
    keep_h = h_of(g, seat, keep)
    for h in list(g.zones[f"hand:{seat}"]):
        if h != keep_h:
            g.zones.move(h, "deck")


def play(g, d, seat, code, words=(), suit=None, rule=None):
    return runner.apply(g, d, Play(seat, h_of(g, seat, code), tuple(words), suit, rule))


def window(g, d, calls=None):
    """Every seat of the window answers: Call(cite) for those in ``calls``, else Pass."""
    calls = calls or {}
    events = []
    while g.phase == "window":
        s = g.to_move()[0]
        a = Call(s, calls[s]) if s in calls else Pass(s)
        events += runner.apply(g, d, a)
    return events


def top(g):
    return str(g.faces[g.zones["pile"][0]])


def size(g, s):
    return len(g.zones[f"hand:{s}"])


# ---- base rules ---------------------------------------------------------------------------


def test_setup_deals_eight_privately_and_turns_one_up():
    g, d = new(["AS"] * 1 + [""] * 3, "9C")
    assert [size(g, s) for s in range(4)] == [8] * 4
    assert len(g.zones["deck"]) == 104 - 33 and top(g) == "9♣"
    assert g.is_public(g.zones["pile"][0])
    h = g.zones["hand:0"][0]
    assert g.visible(0, h) and not g.visible(1, h)
    assert g.to_move() == (0,) and g.turns == 1 and g.book.lines()[0].startswith("#1:")
    # every hand in one deal (one round of tokens on a table), then the card turned up
    assert (d.counts["Shuffle"], d.counts["Deal"], d.counts["Reveal"]) == (1, 1, 1)


def test_matching_play_stands_and_turn_passes():
    g, d = new(["JC KH", "", ""], "9C")
    play(g, d, 0, "JC")
    assert g.phase == "window" and g.to_move() == (1, 2)
    ev = window(g, d)
    assert top(g) == "J♣" and g.current == 1 and "improper:uncalled" not in kinds(ev)
    assert g.is_public(g.zones["pile"][0])


def test_improper_called_right_takes_back_and_penalises():
    g, d = new(["KH", "", ""], "9C")
    play(g, d, 0, "KH")
    ev = window(g, d, {1: 0})
    assert "improper:right" in kinds(ev) and "take_back" in kinds(ev)
    assert top(g) == "9♣" and size(g, 0) == 9 and size(g, 1) == 8
    assert g.current == 1


def test_improper_called_wrong_costs_the_caller_unless_option_off():
    g, d = new(["JC", "", ""], "9C")
    play(g, d, 0, "JC")
    ev = window(g, d, {2: 0})
    assert "improper:wrong" in kinds(ev) and size(g, 2) == 9 and top(g) == "J♣"
    g, d = new(["JC", "", ""], "9C", options={"wrong_call_penalty": False})
    play(g, d, 0, "JC")
    window(g, d, {2: 0})
    assert size(g, 2) == 8


def test_improper_uncalled_move_stands():
    g, d = new(["KH", "", ""], "9C")
    play(g, d, 0, "KH")
    ev = window(g, d)
    assert "improper:uncalled" in kinds(ev) and top(g) == "K♥" and size(g, 0) == 7


def test_calls_resolved_in_seat_order_from_mover():
    g, d = new(["", "JC", "", ""], "9C")
    g.current = 1  # position set-up: seat 1 to move
    play(g, d, 1, "JC")
    assert g.to_move() == (2, 3, 0)
    ev = window(g, d, {3: 0, 0: 0})
    assert kinds(ev).count("improper:wrong") == 2 and size(g, 3) == 9 and size(g, 0) == 9
    g, d = new(["KH", "", "", ""], "9C")
    play(g, d, 0, "KH")
    ev = window(g, d, {2: 0, 3: 0})
    right = [e for e in ev if e.kind == "improper:right"]
    assert right[0].seat == 2 and "improper:wrong" not in kinds(ev) and size(g, 3) == 8


def test_draw_then_play_the_drawn_card_or_keep_it():
    g, d = new(["KH", "", ""], "9C", deck="9D 2S")
    runner.apply(g, d, Draw(0))
    assert g.phase == "drawn" and g.face_for(0, g.drawn) == parse_card("9D")
    assert g.face_for(1, g.drawn) is None
    runner.apply(g, d, PlayDrawn(0))
    window(g, d)
    assert top(g) == "9♦" and size(g, 0) == 8 and g.current == 1
    runner.apply(g, d, Draw(1))
    runner.apply(g, d, EndTurn(1))
    assert g.move.kind == "draw"
    window(g, d)
    assert size(g, 1) == 9 and g.current == 2


def test_reshuffle_of_the_pile_except_its_top():
    g, d = new(["", ""], "9C")
    deck = list(g.zones["deck"])
    for h in deck[:-1]:  # position set-up: most of the deck has been played
        g.zones.move(h, "pile")
    old_top, rest = g.zones["pile"][0], set(g.zones["pile"][1:])
    runner.apply(g, d, Draw(0))
    runner.apply(g, d, EndTurn(0))
    window(g, d)
    runner.apply(g, d, Draw(1))  # the deck is empty now: reshuffle
    assert d.counts["Shuffle"] == 2
    assert list(g.zones["pile"]) == [old_top]
    assert set(g.zones["deck"]) | {g.drawn} == rest
    assert not any(g.visible(0, h) for h in g.zones["deck"])
    runner.check_conservation(g, d)


# ---- the 8♠, Unmau, pending rules ----------------------------------------------------------


def test_eight_of_spades_announces_and_creates_a_rule():
    g, d = new(["8S", "", ""], "3S")
    play(g, d, 0, "8S", [AIGHT_WORDS], rule=A_RULE)
    ev = window(g, d, {1: 0})
    assert "improper:wrong" in kinds(ev) and "rule:reverse" in kinds(ev)
    assert g.book.get(7).spec == A_RULE and g.book.get(7).author == 0 and g.created[0] == 1


@pytest.mark.parametrize(("words", "rule"), [((), A_RULE), ((AIGHT_WORDS,), None)])
def test_eight_of_spades_without_words_or_rule_is_improper(words, rule):
    g, d = new(["8S", "", ""], "3S")
    play(g, d, 0, "8S", words, rule=rule)
    ev = window(g, d, {2: 0})
    assert "improper:right" in kinds(ev) and len(g.book.rules) == 6 and size(g, 0) == 9


def test_unmau_picks_up_gains_pending_rule_and_spends_it():
    g, d = new(["JC", "", ""], "9C")
    shrink(g, 0, "JC")
    play(g, d, 0, "JC", [UNMAU_WORDS])
    ev = window(g, d)
    assert "unmau" in kinds(ev) and size(g, 0) == 5 and g.pending_rules == [1, 0, 0]
    assert g.phase == "interlude" and g.to_move() == (0,)
    runner.apply(g, d, Spend(0, A_RULE, (1, 1, 2)))
    assert size(g, 1) == 10 and size(g, 2) == 9 and g.pending_rules == [0, 0, 0]
    assert g.book.get(7).spec == A_RULE and g.phase == "turn" and g.current == 1


def test_pending_rule_may_be_kept_and_holder_asked_between_moves():
    g, d = new(["JC", "QC", ""], "9C")
    shrink(g, 0, "JC")
    play(g, d, 0, "JC", [UNMAU_WORDS])
    window(g, d)
    runner.apply(g, d, KeepRule(0))
    assert g.current == 1 and g.pending_rules[0] == 1
    play(g, d, 1, "QC")
    window(g, d)
    assert g.phase == "interlude" and g.to_move() == (0,)


def test_unannounced_unmau_called_is_taken_back():
    g, d = new(["JC", "", ""], "9C")
    shrink(g, 0, "JC")
    play(g, d, 0, "JC")
    ev = window(g, d, {1: 0})
    assert "improper:right" in kinds(ev) and "unmau" not in kinds(ev) and size(g, 0) == 2


def test_unannounced_unmau_uncalled_still_counts():
    g, d = new(["JC", "", ""], "9C")
    shrink(g, 0, "JC")
    play(g, d, 0, "JC")
    ev = window(g, d)
    assert "improper:uncalled" in kinds(ev) and "unmau" in kinds(ev) and size(g, 0) == 5


# ---- effects ---------------------------------------------------------------------------------


def test_skip_reverse_and_play_again():
    rules = [
        RuleSpec(OnRank(11), SkipNext()),
        RuleSpec(OnRank(12), Reverse()),
        RuleSpec(OnRank(13), PlayAgain()),
    ]
    g, d = new(["JC", "", "", ""], "9C", rules=rules)
    play(g, d, 0, "JC")
    window(g, d)
    assert g.current == 2
    g, d = new(["QC", "", "", ""], "9C", rules=rules)
    play(g, d, 0, "QC")
    window(g, d)
    assert g.current == 3 and g.direction == -1
    g, d = new(["KC", "", "", ""], "9C", rules=rules)
    play(g, d, 0, "KC")
    window(g, d)
    assert g.current == 0


def test_draw_next_without_stacking():
    g, d = new(["2H", "", ""], "9H", rules=[RuleSpec(OnCard(2, 2), DrawNext(4))])
    play(g, d, 0, "2H")
    ev = window(g, d)
    assert "draw_next" in kinds(ev) and size(g, 1) == 12 and g.current == 1


def test_stacking_draws_pass_on_and_are_taken():
    rules = [RuleSpec(OnRank(7), DrawNext(2, stacking=True))]
    g, d = new(["7C", "7H", "", ""], "9C", rules=rules)
    play(g, d, 0, "7C")
    window(g, d)
    assert g.stack == 2 and g.current == 1
    play(g, d, 1, "7H")
    window(g, d)
    assert g.stack == 4 and g.current == 2
    runner.apply(g, d, Draw(2))
    assert g.phase == "window" and size(g, 2) == 12 and g.stack == 0
    window(g, d)
    assert g.current == 3


def test_not_stacking_on_a_stack_is_improper():
    rules = [RuleSpec(OnRank(7), DrawNext(2, stacking=True))]
    g, d = new(["7C", "JC", "", ""], "9C", rules=rules)
    play(g, d, 0, "7C")
    window(g, d)
    play(g, d, 1, "JC")
    ev = window(g, d, {2: 0})
    assert "does not stack" in next(e.text for e in ev if e.kind == "improper:right")
    assert size(g, 1) == 8 + 2 + 1 and g.stack == 0


def test_wild_names_the_suit_to_follow():
    g, d = new(["AS", "4D 4S", ""], "9H", rules=[RuleSpec(OnRank(14), Wild())])
    play(g, d, 0, "AS", suit=1)
    ev = window(g, d)
    assert "wild" in kinds(ev) and g.named_suit == 1
    play(g, d, 1, "4S")
    assert g.book.improper(g.move)  # ♠ does not follow the named ♦
    ev = window(g, d, {2: 0})
    assert "improper:right" in kinds(ev)
    assert [a for a in g.legal_actions(2) if isinstance(a, Play)]


def test_wild_without_a_named_suit_is_improper():
    g, d = new(["AS", "", ""], "9H", rules=[RuleSpec(OnRank(14), Wild())])
    play(g, d, 0, "AS")
    ev = window(g, d, {1: 0})
    assert "no suit was named" in next(e.text for e in ev if e.kind == "improper:right")


def test_required_announcement_with_exact_words_on_colour_trigger():
    rules = [RuleSpec(OnColour("red"), Announce("Red!"))]
    g, d = new(["9H", "", ""], "9C", rules=rules)
    play(g, d, 0, "9H", ["red!"])
    ev = window(g, d, {1: 0})
    assert "missing announcement “Red!”" in next(e.text for e in ev if e.kind == "improper:right")
    g, d = new(["9H", "", ""], "9C", rules=rules)
    play(g, d, 0, "9H", ["Red!"])
    assert "improper:wrong" in kinds(window(g, d, {1: 0}))


def test_extra_and_forbidden_matching_conditions():
    rules = [
        RuleSpec(OnSuit(2), AllowOn(OnColour("red"))),
        RuleSpec(OnRank(10), ForbidOn(OnSuit(0))),
    ]
    g, d = new(["KH", "", ""], "2D", rules=rules)
    play(g, d, 0, "KH")
    assert g.book.improper(g.move) == ()
    g, d = new(["10C", "", ""], "2C", rules=rules)
    play(g, d, 0, "10C")
    assert "may not be played" in g.book.improper(g.move)[0]


def test_penalty_size_and_unmau_count_rules():
    g, d = new(["KH", "", ""], "9C", rules=[RuleSpec(Always(), SetPenalty(3))])
    play(g, d, 0, "KH")
    window(g, d, {1: 0})
    assert size(g, 0) == 11
    amend = RuleSpec(Always(), Amend(5, RuleSpec(Always(), SetUnmauCount(2))))
    g, d = new(["JC", "", ""], "9C", rules=[amend])
    shrink(g, 0, "JC")
    play(g, d, 0, "JC", [UNMAU_WORDS])
    window(g, d)
    assert size(g, 0) == 2


def test_card_rank_suit_and_any_triggers():
    for trig, code in ((OnCard(10, 0), "10C"), (OnRank(10), "10C"), (OnSuit(0), "10C")):
        g, d = new(["10C", "", ""], "9C", rules=[RuleSpec(trig, SkipNext())])
        play(g, d, 0, code)
        window(g, d)
        assert g.current == 2, trig


def test_event_triggers():
    # draw: the drawer's next seat draws 1 after the draw stands
    g, d = new(["", "", ""], "9C", rules=[RuleSpec(OnEvent("draw"), DrawNext(1))])
    runner.apply(g, d, Draw(0))
    runner.apply(g, d, EndTurn(0))
    window(g, d)
    assert size(g, 1) == 9
    # penalty: a penalty reverses the direction
    g, d = new(["KH", "", ""], "9C", rules=[RuleSpec(OnEvent("penalty"), Reverse())])
    play(g, d, 0, "KH")
    window(g, d, {1: 0})
    assert g.direction == -1 and g.current == 2
    # turn start: the seat after the one whose turn starts draws 1
    g, d = new(["JC", "", ""], "9C", rules=[RuleSpec(OnEvent("turn_start"), DrawNext(1))])
    play(g, d, 0, "JC")
    window(g, d)
    assert g.current == 1 and size(g, 2) == 9
    # unmau: the next seat is skipped
    g, d = new(["JC", "", ""], "9C", rules=[RuleSpec(OnEvent("unmau"), SkipNext())])
    shrink(g, 0, "JC")
    play(g, d, 0, "JC", [UNMAU_WORDS])
    window(g, d)
    runner.apply(g, d, KeepRule(0))
    assert g.current == 2


def test_draw_announcement_rule():
    g, d = new(["", "", ""], "9C", rules=[RuleSpec(OnEvent("draw"), Announce("Spaides"))])
    assert Draw(0, ("Spaides",)) in g.legal_actions(0)
    runner.apply(g, d, Draw(0))
    runner.apply(g, d, EndTurn(0))
    ev = window(g, d, {1: 0})
    assert "improper:right" in kinds(ev) and size(g, 0) == 10


def test_win_by_unmau_count_and_empty_without_pending():
    for cond in ("unmaus", "empty_no_pending"):
        g, d = new(["JC", "", ""], "9C", rules=[RuleSpec(Always(), WinCondition(cond, 1))])
        shrink(g, 0, "JC")
        play(g, d, 0, "JC", [UNMAU_WORDS])
        window(g, d)
        assert g.is_over() and g.outcome().ranking[0] == 0 and not g.outcome().draw
        assert g.to_move() == ()


def test_win_by_rules_created():
    win = RuleSpec(Always(), WinCondition("rules_created", 2))
    g, d = new(["8S 8S", "8H", "8C"], "3S", rules=[win])
    play(g, d, 0, "8S", [AIGHT_WORDS], rule=A_RULE)
    window(g, d)
    assert g.created[0] == 1 and not g.is_over()
    play(g, d, 1, "8H")
    window(g, d)
    play(g, d, 2, "8C")
    window(g, d)
    play(g, d, 0, "8S", [AIGHT_WORDS], rule=RuleSpec(OnRank(13), PlayAgain()))
    ev = window(g, d)
    assert "end:win" in kinds(ev) and g.is_over() and g.winner == 0
    assert "created 2 rules" in g.outcome().reason and g.outcome().ranking[0] == 0


def test_free_text_rule_call_is_voted():
    rules = [RuleSpec(Always(), FreeText("No humming"))]
    g, d = new(["JC", "", "", ""], "9C", rules=rules)
    play(g, d, 0, "JC")
    assert Call(1, 7) in g.legal_actions(1)
    window(g, d, {1: 7})
    assert g.phase == "vote" and g.to_move() == (1, 2, 3)
    for s, yes in ((1, True), (2, True), (3, False)):
        runner.apply(g, d, Vote(s, yes))
    assert top(g) == "9♣" and size(g, 0) == 9
    g, d = new(["JC", "", "", ""], "9C", rules=rules)
    play(g, d, 0, "JC")
    window(g, d, {1: 7})
    for s, yes in ((1, True), (2, False), (3, False)):
        runner.apply(g, d, Vote(s, yes))
    assert top(g) == "J♣" and size(g, 1) == 9 and g.phase == "turn"


@pytest.mark.parametrize(
    ("threshold", "yes", "upheld"),
    [
        ("majority", 2, True),
        ("majority", 1, False),
        ("half", 1, False),  # 1 of 3 is under half
        ("two-thirds", 2, True),
        ("all", 2, False),
        ("all", 3, True),
    ],
)
def test_vote_threshold_option_decides_a_free_text_call(threshold, yes, upheld):
    rules = [RuleSpec(Always(), FreeText("No humming"))]
    g, d = new(["JC", "", "", ""], "9C", rules=rules, options={"vote_threshold": threshold})
    play(g, d, 0, "JC")
    window(g, d, {1: 7})
    assert g.to_move() == (1, 2, 3)
    for s in (1, 2, 3):
        runner.apply(g, d, Vote(s, s - 1 < yes))
    assert (top(g) == "9♣") == upheld and size(g, 0) == (9 if upheld else 7)


def test_half_threshold_upholds_a_tied_vote_when_the_caller_does_not_vote():
    rules = [RuleSpec(Always(), FreeText("No humming"))]
    opts = {"vote_threshold": "half", "caller_votes": False}
    g, d = new(["JC", "", "", "", ""], "9C", rules=rules, options=opts)
    play(g, d, 0, "JC")
    window(g, d, {2: 7})
    assert g.phase == "vote" and g.to_move() == (1, 3, 4)  # the caller, seat 2, does not vote
    illegal(g, Vote(2, True), NotYourTurn)
    for s, v in ((1, True), (3, False), (4, True)):
        runner.apply(g, d, Vote(s, v))
    assert top(g) == "9♣"  # 2 of 3


def test_caller_votes_off_leaves_the_call_to_the_others():
    rules = [RuleSpec(Always(), FreeText("No humming"))]
    g, d = new(["JC", "", ""], "9C", rules=rules, options={"caller_votes": False})
    play(g, d, 0, "JC")
    window(g, d, {1: 7})
    assert g.to_move() == (2,)
    ev = runner.apply(g, d, Vote(2, False))
    assert top(g) == "J♣" and size(g, 1) == 9  # rejected: the wrong call is paid
    assert "(0 of 1 for)" in next(e.text for e in ev if e.kind == "improper:rejected")
    # by default the caller's own vote counts: 1 of 2 is no strict majority either way
    g, d = new(["JC", "", ""], "9C", rules=rules)
    play(g, d, 0, "JC")
    window(g, d, {1: 7})
    assert g.to_move() == (1, 2)


def test_caller_votes_off_at_two_seats_lets_the_caller_vote_after_all():
    rules = [RuleSpec(Always(), FreeText("No humming"))]
    g, d = new(["JC", ""], "9C", rules=rules, options={"caller_votes": False})
    play(g, d, 0, "JC")
    window(g, d, {1: 7})
    assert g.phase == "vote" and g.to_move() == (1,)
    runner.apply(g, d, Vote(1, True))
    assert top(g) == "9♣"


def test_spend_several_option_spends_pending_rules_between_the_same_two_moves():
    for several in (False, True):
        g, d = new(["JC QC", "", ""], "9C", options={"spend_several": several})
        g.pending_rules[0] = 1  # position set-up: one rule kept from an earlier Unmau
        shrink(g, 0, "JC")
        play(g, d, 0, "JC", [UNMAU_WORDS])
        window(g, d)
        assert g.pending_rules == [2, 0, 0] and g.to_move() == (0,)
        runner.apply(g, d, Spend(0, A_RULE, (1, 1, 1)))
        if not several:  # one per holder between two moves: the turn goes on
            assert g.phase == "turn" and g.current == 1 and g.pending_rules[0] == 1
            continue
        assert g.phase == "interlude" and g.to_move() == (0,)  # asked again
        runner.apply(g, d, Spend(0, RuleSpec(OnRank(13), SkipNext()), (2, 2, 2)))
        assert g.pending_rules == [0, 0, 0] and g.phase == "turn" and g.current == 1
        assert len(g.book.rules) == 8 and size(g, 2) == 11
    g, d = new(["JC", "", ""], "9C", options={"spend_several": True})
    g.pending_rules[0] = 1
    shrink(g, 0, "JC")
    play(g, d, 0, "JC", [UNMAU_WORDS])
    window(g, d)
    runner.apply(g, d, Spend(0, A_RULE, (1, 1, 1)))
    runner.apply(g, d, KeepRule(0))  # and may keep the rest
    assert g.pending_rules[0] == 1 and g.phase == "turn" and g.current == 1


def test_new_options_at_their_defaults_leave_the_state_hash_as_records_signed_it():
    """A record signed before these options existed replays to the same final hash."""
    g, _ = new(["JC", "", ""], "9C")
    h = g.state_hash()
    g2, _ = new(["JC", "", ""], "9C", options={"caller_votes": True, "spend_several": False})
    assert g2.state_hash() == h
    g3, _ = new(["JC", "", ""], "9C", options={"spend_several": True})
    assert g3.state_hash() != h


def test_voting_to_end():
    g, d = new(["", "", ""], "9C")
    runner.apply(g, d, ProposeEnd(0))
    assert g.phase == "end_vote" and g.to_move() == (0, 1, 2)
    for s in (0, 1):
        runner.apply(g, d, VoteEnd(s, True))
    runner.apply(g, d, VoteEnd(2, False))
    assert g.phase == "turn" and not g.is_over()
    with pytest.raises(IllegalAction, match="already proposed"):
        g.apply(ProposeEnd(0))
    assert ProposeEnd(0) not in g.legal_actions(0)
    runner.apply(g, d, Draw(0))
    runner.apply(g, d, EndTurn(0))
    window(g, d)
    runner.apply(g, d, ProposeEnd(1))
    for s in (1, 2, 0):
        runner.apply(g, d, VoteEnd(s, True))
    assert g.is_over() and g.outcome().draw and g.outcome().reason.startswith("vote")


def test_turn_cap_ends_as_draw():
    g, d = new(["", ""], "9C", options={"max_turns": 2})
    for s in (0, 1):
        runner.apply(g, d, Draw(s))
        runner.apply(g, d, EndTurn(s))
        window(g, d)
    assert g.is_over() and g.outcome().draw and "cap" in g.outcome().reason


# ---- errors and the wire ------------------------------------------------------------------------


def test_illegal_actions_raise_specific_errors_and_leave_state():
    g, d = new(["JC", "KD", ""], "9C")
    before = g.state_hash()
    jc = h_of(g, 0, "JC")
    bad = [
        (Play(1, h_of(g, 1, "KD")), NotYourTurn, "not this seat's move"),
        (Play(0, h_of(g, 1, "KD")), IllegalAction, "do not hold"),
        (Pass(0), IllegalAction, "Pass is not allowed now"),
        (EndTurn(0), IllegalAction, "EndTurn is not allowed now"),
        (Play(0, jc, ("",)), IllegalAction, "field 'words' item 0 must be 1-40 printable"),
        (Play(0, jc, "Unmau"), IllegalAction, "tuple"),
        (Play(0, jc, (), 7), IllegalAction, "field 'suit' must be an integer in 0..3"),
        (Play(0, jc, (), None, RuleSpec(Always(), SetPenalty(1))), IllegalAction, "duplicates"),
        (Play(0, jc, (), None, "rule"), IllegalAction, "field 'rule' must be a rule"),
    ]
    for action, err, match in bad:
        with pytest.raises(err, match=match):
            g.apply(action)
        assert g.state_hash() == before
    play(g, d, 0, "JC")
    before = g.state_hash()
    with pytest.raises(IllegalAction, match="no rule #42"):
        g.apply(Call(1, 42))
    with pytest.raises(NotYourTurn):
        g.apply(Call(0, 0))
    assert g.state_hash() == before
    g.apply(Pass(1))
    g.apply(Pass(2))  # the move stands and seat 1 is to move
    g.apply(Draw(1))  # not settled: the draw's Reveal is pending
    with pytest.raises(DealerPending):
        g.apply(EndTurn(1))


def test_spend_validation():
    g, d = new(["JC", "", ""], "9C")
    shrink(g, 0, "JC")
    play(g, d, 0, "JC", [UNMAU_WORDS])
    window(g, d)
    for action, match in [
        (Spend(0, A_RULE, (1, 1)), "field 'deal' must hold 3 items"),
        (Spend(0, A_RULE, (1, 1, 9)), r"field 'deal' item 2 must be an integer in 0\.\.2"),
        (Spend(0, RuleSpec(Always(), Amend(99, A_RULE)), (1, 1, 1)), "no rule #99"),
    ]:
        illegal(g, action, match=match)


def test_actions_round_trip_through_msgpack_and_bad_ones_are_refused():
    g, _ = new(["", "", ""], "9C")
    actions = [
        Play(0, 5, ("Aight of Spaides",), 2, A_RULE),
        Play(0, 5),
        Draw(1, ("Spaides",)),
        PlayDrawn(1, (), None, RuleSpec(Always(), Amend(5, RuleSpec(Always(), SetPenalty(3))))),
        EndTurn(2),
        Call(0, 7),
        Pass(1),
        Vote(2, True),
        Spend(0, A_RULE, (1, 2, 2)),
        KeepRule(1),
        ProposeEnd(0),
        VoteEnd(1, False),
    ]
    for a in actions:
        wire = msgpack.unpackb(msgpack.packb(g.encode_action(a)))
        assert g.decode_action(wire) == a
    for data, match in [
        ({"type": "Play", "seat": 0, "card": "5", "words": [], "suit": None, "rule": None}, "card"),
        ({"type": "Play", "seat": 0, "card": 5, "words": [1], "suit": None, "rule": None}, "words"),
        (
            {"type": "Play", "seat": 0, "card": 5, "words": [], "suit": None, "rule": {"x": 1}},
            "bad rule",
        ),
        ({"type": "Vote", "seat": 0, "upheld": 1}, "upheld"),
        ({"type": "Spend", "seat": 0, "rule": spec_to_dict(A_RULE), "deal": "012"}, "deal"),
        ({"type": "Nuke", "seat": 0}, "unknown action"),
        ({"type": "Pass"}, "fields"),
        ([1, 2], "must be a map"),
    ]:
        with pytest.raises(EngineError, match=match):
            g.decode_action(data)


# ---- random play, leaks, determinism, properties -----------------------------------------------


def check_all(g, d):
    runner.check_conservation(g, d)
    assert len(g.deck) == 104
    assert g.book.compiled.dead_top() is None


def test_registry_and_summary():
    spec = registry.get("aight-of-spaides")
    assert spec.game_class is AightOfSpaides and set(spec.bots) == {"random", "heuristic"}
    results = []
    for i, kind in enumerate(("random", "heuristic")):
        g = spec.factory(4, {"max_turns": 200})
        d = LocalDealer(g.deck, i)
        bots = [spec.bots[kind](s, random.Random(s), end_after=150) for s in range(4)]
        results.append(runner.play(g, d, bots))
    summary = spec.summarise(results)
    assert summary["games ended by"] and "Improper! right" in summary
    assert summary["rules created"] == sum(summary["rules created by kind"].values()) - sum(
        summary["rules created by kind"].get(k, 0) for k in ("ignored", "rejected")
    )


def test_thousands_of_random_games_conserve_cards_and_keep_rules_valid():
    """Random and heuristic bots, 2-10 seats, short games; conservation and rule
    validity after every action, and every action survives the wire."""
    totals = Counter()
    games = 0
    for i in range(1200):
        seats = 2 + i % 9
        long = i % 20 == 0  # a few long games reach Unmaus, pending rules and wins
        g = AightOfSpaides(seats, {"max_turns": 200 if long else 10 + i % 7})
        d = LocalDealer(g.deck, i)
        rng = random.Random(i)
        end = 120 if long else (40 if i % 3 == 0 else 8)
        if i % 2:
            bots = [
                RandomAightBot(s, random.Random(i * 16 + s), improper_rate=0.2, end_after=end)
                for s in range(seats)
            ]
        else:
            bots = [HeuristicBot(s, random.Random(i * 16 + s), end_after=end) for s in range(seats)]

        def check(game, d=d, rng=rng):
            runner.check_conservation(game, d)
            if rng.random() < 0.02:
                check_all(game, d)

        r = runner.play(g, d, bots, check=check)
        check_all(g, d)
        assert g.is_over() and r.outcome.reason
        totals.update(r.events)
        games += 1
    assert games == 1200
    for kind in (
        "improper:right",
        "improper:wrong",
        "improper:uncalled",
        "unmau",
        "pending:spent",
        "reshuffle",
        "end:vote",
        "end:cap",
        "end:win",
    ):
        assert totals[kind] > 0, kind
    assert sum(v for k, v in totals.items() if k.startswith("rule:")) > 50


def test_actions_survive_the_wire_in_random_play():
    g = AightOfSpaides(5, {"max_turns": 60})
    d = LocalDealer(g.deck, 3)
    bots = [RandomAightBot(s, random.Random(s), improper_rate=0.3) for s in range(5)]
    runner.start(g, d)
    while not g.is_over():
        s = g.to_move()[0]
        a = bots[s].act(g.view(s), g.legal_actions(s))
        wire = msgpack.unpackb(msgpack.packb(g.encode_action(a)))
        assert g.decode_action(wire) == a
        runner.apply(g, d, a)


def test_leak_resampling_hidden_cards_changes_no_view():
    rng = random.Random(7)
    for i in range(30):
        seats = 2 + i % 5
        g = AightOfSpaides(seats, {"max_turns": 40})
        d = LocalDealer(g.deck, 100 + i)
        bots = [RandomAightBot(s, random.Random(s + i), improper_rate=0.2) for s in range(seats)]
        runner.start(g, d)
        for _ in range(rng.randrange(1, 120)):
            if g.is_over():
                break
            s = g.to_move()[0]
            runner.apply(g, d, bots[s].act(g.view(s), g.legal_actions(s)))
        for seat in range(seats):
            assert_resample_keeps_view(g, d, seat, rng)


def test_determinism_same_seed_same_hash():
    hashes = set()
    for _ in range(2):
        g = AightOfSpaides(4, {"max_turns": 80})
        d = LocalDealer(g.deck, 11)
        bots = [RandomAightBot(s, random.Random(s), improper_rate=0.2) for s in range(4)]
        hashes.add(runner.play(g, d, bots).state_hash)
    assert len(hashes) == 1


def test_bots_never_see_hidden_cards():
    """The heuristic bot calls Improper! exactly on the improper moves, using its view."""
    g = AightOfSpaides(4, {"max_turns": 120})
    d = LocalDealer(g.deck, 5)
    random_bots = [RandomAightBot(s, random.Random(s), improper_rate=0.5) for s in range(4)]
    judge = HeuristicBot(0, random.Random(0))
    runner.start(g, d)
    checked = 0
    while not g.is_over():
        s = g.to_move()[0]
        if g.phase == "window":
            view = g.view(s)
            judge.seat = s
            call = judge.act(view, g.legal_actions(s))
            assert isinstance(call, Call) == bool(g.book.improper(g.move))
            checked += 1
        runner.apply(g, d, random_bots[s].act(g.view(s), g.legal_actions(s)))
    assert checked > 20


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(0, 2**32 - 1), min_size=1, max_size=15), st.integers(2, 6))
def test_any_valid_rules_leave_a_legal_move_or_a_draw(seeds, seats):
    """Property: whatever valid rules were created, the seat to move always has a
    proper play or can draw, and the game keeps going to its end."""
    g = AightOfSpaides(seats, {"max_turns": 30})
    d = LocalDealer(g.deck, seeds[0])
    runner.start(g, d)
    for seed in seeds:
        spec = random_spec(random.Random(seed), len(g.book.rules))
        try:
            g.book, _ = g.book.add(spec, 0, g.standings())
        except BadRule:
            continue
    bots = [HeuristicBot(s, random.Random(s), end_after=1000) for s in range(seats)]
    while not g.is_over():
        movers = g.to_move()
        assert movers
        s = movers[0]
        legal = g.legal_actions(s)
        assert legal
        if g.phase == "turn":
            assert any(isinstance(a, Draw) for a in legal)
            top_face = g.faces[g.zones["pile"][0]]
            assert any(g.book.can_play(c, top_face, g.named_suit) for c in set(DECK))
        runner.apply(g, d, bots[s].act(g.view(s), legal))
    assert spec_from_dict(spec_to_dict(A_RULE)) == A_RULE


# ---- audit additions --------------------------------------------------------------------------


def draw_and_keep(g, d, seat):
    runner.apply(g, d, Draw(seat))
    if g.phase == "drawn":
        runner.apply(g, d, EndTurn(seat))
    window(g, d)


def test_skip_on_a_wrong_callers_penalty_skips_the_seat_after_the_caller():
    """Event effects act relative to the event's actor: a wrong caller's penalty
    skips the seat after the caller, not the seat after the mover."""
    rules = [RuleSpec(OnEvent("penalty"), SkipNext())]
    g, d = new(["JC", "", "", ""], "9C", rules=rules)
    play(g, d, 0, "JC")
    ev = window(g, d, {2: 0})  # wrong: seat 2 is penalised, seat 3 loses a turn
    assert "improper:wrong" in kinds(ev) and g.current == 1
    draw_and_keep(g, d, 1)
    assert g.current == 2
    ev = []
    runner.apply(g, d, Draw(2))
    runner.apply(g, d, EndTurn(2))
    ev = window(g, d)
    assert "skip:lost" in kinds(ev) and g.current == 0
    # the offender's own penalty skips the seat after the offender
    g, d = new(["KH", "", "", ""], "9C", rules=rules)
    play(g, d, 0, "KH")
    window(g, d, {3: 0})
    assert g.current == 2 and g.lost == [0, 0, 0, 0]


def test_refusing_a_stack_with_the_last_card_is_no_unmau_and_fires_no_unmau_rule():
    rules = [
        RuleSpec(OnRank(7), DrawNext(2, stacking=True)),
        RuleSpec(OnEvent("unmau"), Reverse()),
    ]
    g, d = new(["7C", "JC", "", ""], "9C", rules=rules)
    play(g, d, 0, "7C")
    window(g, d)
    shrink(g, 1, "JC")
    play(g, d, 1, "JC", [UNMAU_WORDS])  # does not stack: improper, but nobody calls
    ev = window(g, d)
    assert "improper:uncalled" in kinds(ev) and "unmau" not in kinds(ev)
    assert "reverse" not in kinds(ev) and g.direction == 1
    assert size(g, 1) == 2 and g.pending_rules[1] == 0 and g.current == 2


def test_legal_plays_never_carry_more_words_than_allowed():
    """Every listed play can really be made: the rule book cannot demand more
    announcements than an action may carry."""
    g, d = new(["8S", "", ""], "3S")
    for i in range(12):
        spec = RuleSpec(AnyCard(), Announce(f"Word {i}"))
        try:
            g.book, _ = g.book.add(spec, None)
        except BadRule:
            break
    shrink(g, 0, "8S")
    (a,) = [a for a in g.legal_actions(0) if isinstance(a, Play)]
    runner.apply(g, d, Play(0, a.card, a.words, a.suit, A_RULE))
    assert len(a.words) == MAX_ANNOUNCEMENTS and not g.book.improper(g.move)


def test_bots_survive_a_full_rule_book():
    """With MAX_RULES rules no rule can be created: an any-card CreateRule rule
    lapses, pending rules are kept, and bots play on without illegal actions."""
    for kind in (RandomAightBot, HeuristicBot):
        g = AightOfSpaides(3, {"max_turns": 60})
        d = LocalDealer(g.deck, 4)
        runner.start(g, d)
        g.book, _ = g.book.add(RuleSpec(AnyCard(), CreateRule()), None)
        i = 0
        while not g.book.full:
            g.book, _ = g.book.add(RuleSpec(Always(), FreeText(f"Filler {i}")), None)
            i += 1
        g.pending_rules = [1, 1, 1]
        bots = [kind(s, random.Random(s), end_after=1000) for s in range(3)]
        while not g.is_over():
            s = g.to_move()[0]
            runner.apply(g, d, bots[s].act(g.view(s), g.legal_actions(s)))
        assert len(g.book.rules) == MAX_RULES and "cap" in g.outcome().reason


def test_decode_action_hostile_values_raise_engine_error():
    g, _ = new(["", "", ""], "9C")
    deep: object = 0
    for _ in range(100_000):
        deep = [deep]
    for data in (
        {"type": [1]},
        {"type": {"a": 1}},
        {"type": "Call", "seat": 0, "cite": 10**5000},
        {"type": "Call", "seat": deep, "cite": 0},
        {"type": "Play", "seat": 0, "card": 1, "words": deep, "suit": None, "rule": None},
        {"type": "Pass", "seat": 0, "x" * 10**6: 1},
    ):
        with pytest.raises(EngineError) as info:
            g.decode_action(data)
        assert len(str(info.value)) < 400


_wire_scalar = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=12), st.floats())
_wire = st.recursive(
    _wire_scalar,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(
        [
            "Play",
            "Draw",
            "PlayDrawn",
            "EndTurn",
            "Call",
            "Pass",
            "Vote",
            "Spend",
            "KeepRule",
            "ProposeEnd",
            "VoteEnd",
        ]
    ),
    st.dictionaries(
        st.sampled_from(["seat", "card", "words", "suit", "rule", "cite", "upheld", "deal", "yes"]),
        _wire,
        max_size=6,
    ),
)
def test_fuzz_decoded_actions_are_refused_or_safe_to_apply(kind, fields):
    """Untrusted wire actions decode or raise EngineError; a decoded one is then
    applied or refused with an IllegalAction, leaving the state unchanged."""
    g, _ = new(["JC", "", ""], "9C")
    try:
        a = g.decode_action({"type": kind, **fields})
    except EngineError:
        return
    before = g.state_hash()
    try:
        g.apply(a)
    except IllegalAction:
        assert g.state_hash() == before


def _peer_answer(ob, answer, seat):
    """What a real peer at ``seat`` would learn: only faces its seat may see."""
    from engine.obligations import Deal, Reveal, who_learns

    if isinstance(ob, Reveal | Deal):
        learns = who_learns(ob, (1 << 16) - 1)
        return {h: f for h, f in answer.items() if learns[h] >> seat & 1}
    return answer


@pytest.mark.parametrize(
    "options",
    [{}, {"vote_threshold": "two-thirds", "caller_votes": False, "spend_several": True}],
)
def test_peers_that_only_know_their_own_faces_agree_with_the_omniscient_game(options):
    """Leak safety on the real path: one instance per seat, each told only the
    faces its seat may see, replays the same game. None of them may read an
    unrevealed face (a KeyError here), and every one reaches the same public
    state and shows its seat the same view and legal actions as the reference."""
    for seed in range(4):
        seats = 3 + seed % 2
        ref = AightOfSpaides(seats, {"max_turns": 80, **options})
        d = LocalDealer(ref.deck, 50 + seed)
        peers = [AightOfSpaides(seats, {"max_turns": 80, **options}) for _ in range(seats)]
        bots = [
            RandomAightBot(s, random.Random(seed * 8 + s), improper_rate=0.3) for s in range(seats)
        ]

        def settle_all(ref=ref, d=d, peers=peers):
            while ref.pending() is not None:
                ob = ref.pending()
                answer = d.fulfil(ob)
                ref.resolve(answer)
                for s, p in enumerate(peers):
                    assert p.pending() == ob
                    p.resolve(_peer_answer(ob, answer, s))

        ref.start()
        for p in peers:
            p.start()
        settle_all()
        while not ref.is_over():
            s = ref.to_move()[0]
            view = peers[s].view(s)
            assert view == ref.view(s) and peers[s].legal_actions(s) == ref.legal_actions(s)
            a = bots[s].act(view, peers[s].legal_actions(s))
            ref.apply(a)
            for p in peers:
                p.apply(a)
            settle_all()
            assert {p.state_hash() for p in peers} == {ref.state_hash()}


def test_reshuffle_on_the_real_path_keeps_the_top_and_a_card_awaiting_its_verdict():
    """No state editing: the 8♠ creates "any card on any card", both seats draw
    and play until the deck is empty; the next draw reshuffles all but the top.
    Then, with the deck empty again, a wrong call's penalty during a window keeps
    the played card and the card under it."""
    anything = RuleSpec(AnyCard(), AllowOn(AnyCard()))
    g, d = new(["8S", ""], "3S")
    play(g, d, 0, "8S", [AIGHT_WORDS], rule=anything)
    window(g, d)
    shuffles = d.counts["Shuffle"]
    while g.zones["deck"]:
        s = g.current
        runner.apply(g, d, Draw(s))
        runner.apply(g, d, PlayDrawn(s, g.legal_actions(s)[0].words))
        window(g, d)
    assert d.counts["Shuffle"] == shuffles
    pile = list(g.zones["pile"])
    runner.apply(g, d, Draw(g.current))
    assert d.counts["Shuffle"] == shuffles + 1 and list(g.zones["pile"]) == pile[:1]
    assert set(g.zones["deck"]) | {g.drawn} == set(pile[1:])
    assert not any(g.visible(s, h) for s in (0, 1) for h in g.zones["deck"])
    runner.apply(g, d, EndTurn(g.current))
    window(g, d)
    while g.zones["deck"]:  # empty the new deck again by drawing and keeping
        draw_and_keep(g, d, g.current)
    s = g.current
    card = g.zones[f"hand:{s}"][0]
    under = g.zones["pile"][0]
    runner.apply(
        g,
        d,
        Play(
            s,
            card,
            tuple(
                w
                for a in g.legal_actions(s)
                if isinstance(a, Play) and a.card == card
                for w in a.words
            ),
        ),
    )
    runner.apply(g, d, Call(1 - s, 0))  # wrong: the caller draws, reshuffling
    assert list(g.zones["pile"])[:2] == [card, under] and g.zones[f"hand:{1 - s}"]
    runner.check_conservation(g, d)


def test_repealing_and_amending_base_rules_in_play():
    """Base rules change through real moves: the 8♠ repeals #2 (its own
    announcement), after which a silent 8♠ is proper; an amendment of #6 makes
    the penalty 3."""
    g, d = new(["8S 8S", "JS", ""], "3S")
    play(g, d, 0, "8S", [AIGHT_WORDS], rule=RuleSpec(Always(), Repeal(2)))
    window(g, d)
    assert g.book.get(2).status == "repealed"
    play(g, d, 1, "JS")
    window(g, d)
    amend = RuleSpec(Always(), Amend(6, RuleSpec(Always(), SetPenalty(3))))
    runner.apply(g, d, Draw(2))
    runner.apply(g, d, EndTurn(2))
    window(g, d)
    play(g, d, 0, "8S", (), rule=amend)  # no words: proper now
    assert g.book.improper(g.move) == ()
    ev = window(g, d, {1: 0})
    # the amendment takes effect when the move stands, after the window's verdicts
    assert "improper:wrong" in kinds(ev) and size(g, 1) == 7 + 1
    assert g.book.penalty() == 3
    runner.apply(g, d, Draw(1))
    runner.apply(g, d, EndTurn(1))
    window(g, d, {2: 0})  # wrong again: now it costs 3
    assert size(g, 2) == 9 + 3


def test_a_penalty_is_told_once_in_whole_words():
    """The log once read "seat 0 draws a penalty of 3" then "seat 0 draws as penalty 3"."""
    g, d = new(["KH", "", ""], "9C", rules=[RuleSpec(Always(), SetPenalty(3))])
    play(g, d, 0, "KH")
    ev = window(g, d, {1: 0})
    said = [e.text for e in ev if e.kind in ("penalty", "draw")]
    assert said == ["seat 0 pays a penalty of 3 cards", "seat 0 draws 3 cards for the penalty"]
