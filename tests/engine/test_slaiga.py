"""Scenario tests for Slaiga and Honest Slaiga (docs/rules/slaiga.md), on stacked decks.

``LocalDealer(stacked=...)`` fixes the first shuffle: seat 0 is dealt the
first six stacked cards, seat 1 the next six, and so on; the rest of the
stack is the top of the draw pile.
"""

from collections import Counter

import pytest

from engine import runner
from engine.cards import ACE, JOKER, cards, standard_deck
from engine.dealer import LocalDealer
from engine.errors import BadOption, IllegalAction, NotYourTurn
from engine.games.slaiga.actions import (
    DISCARD,
    DRAW,
    AcceptCheck,
    Answer,
    CancelCheck,
    Check,
    ClaimWin,
    Concede,
    Discard,
    Draw,
    Give,
    GiveBack,
    JackShot,
    KingLook,
    Miss,
    MissVerdict,
    Pass,
    Place,
    QueenSwap,
    Shoot,
    ShotCard,
    Swap,
)
from engine.games.slaiga.bots import SlaigaBot, hand_value, pack, window_counts
from engine.games.slaiga.hands import has_straight_flush, is_bullet
from engine.games.slaiga.rules import HonestSlaiga, Slaiga
from engine.registry import get
from tests.engine._helpers import illegal, kinds

C, D, H, S = 0, 1, 2, 3
MECHANICAL = ("give", "place", "place_hand", "reload")


def new(cls=Slaiga, hands=(), pile="", seats=2, options=None, picks=(), seed=0):
    g = cls(seats, {"max_turns": 500, **(options or {})})
    stacked = [c for h in hands for c in cards(h)] + cards(pile)
    d = LocalDealer(g.deck, seed, stacked=stacked, picks=picks)
    events = runner.start(g, d)
    return g, d, events


def h_of(g, d, seat, code):
    """The handle of face ``code`` in ``seat``'s hand."""
    (card,) = cards(code) if code != "JK" else (JOKER,)
    for h in g.zones[f"hand:{seat}"]:
        if d.truth[h] == card:
            return h
    raise AssertionError(f"{code} not in seat {seat}'s hand")


def faces(g, d, zone):
    return [str(d.truth[h]) for h in g.zones[zone]]


def act(g, d, action):
    return runner.apply(g, d, action)


def drain(g, d, stop=()):
    """Play the mechanical phases (give, place, reload) with the first legal action."""
    done = Counter()
    events = []
    while not g.is_over() and g.phase in MECHANICAL and g.phase not in stop:
        seat = g.to_move()[0]
        done[(g.phase, seat)] += 1
        events += act(g, d, g.legal_actions(seat)[0])
    return done, events


# ---- straight flushes ------------------------------------------------------------------


def test_straight_flush_ace_high_ace_low_no_wrap():
    assert has_straight_flush(cards("10H JH QH KH AH 2C"))
    assert has_straight_flush(cards("AS 2S 3S 4S 5S 9D"))
    assert not has_straight_flush(cards("QD KD AD 2D 3D 4C"))
    assert has_straight_flush(cards("QD KD AD 2D 3D 4C"), wrap=True)
    assert not has_straight_flush(cards("2C 3C 4C 5C 7C 6D"))
    assert not has_straight_flush([*cards("2C 3C 4C 5C"), JOKER, JOKER])


# ---- setup -------------------------------------------------------------------------------


def test_setup_slaiga_face_up_pile_and_jokers():
    g, d, events = new(Slaiga, seats=3)
    assert len(g.deck) == 54 and Counter(g.deck)[JOKER] == 2
    assert all(len(g.zones[f"hand:{s}"]) == 6 for s in range(3))
    assert not g.zones[DISCARD]
    top = g.zones[DRAW][0]
    assert g.is_public(top) and "top" in kinds(events)
    assert not g.is_public(g.zones[DRAW][1])
    assert g.to_move() == (0,) and g.phase == "turn"
    for s in range(3):
        assert all(c.face is not None for c in g.view(s)["hand"])
        assert all(c.face is None for c in g.view(s)["hands"][(s + 1) % 3])


def test_setup_honest_face_down_pile_no_jokers_and_options():
    g, d, _ = new(HonestSlaiga, seats=8)
    assert len(g.deck) == 52 and JOKER not in g.deck
    assert g.seen.get(g.zones[DRAW][0], 0) == 0
    assert len(g.zones[DRAW]) == 52 - 48
    with pytest.raises(BadOption):
        Slaiga(4, {"king_max": 0})
    g2, _, _ = new(Slaiga, options={"turn_up_discard": True})
    assert len(g2.zones[DISCARD]) == 1 and g2.is_public(g2.zones[DISCARD][0])


# ---- turns -------------------------------------------------------------------------------

HANDS2 = ("JC 2H 3H 4H 5H 9D", "2S 3S 4S 7D 8D 9C")


def test_draw_then_discard_and_new_top_revealed():
    g, d, _ = new(Slaiga, HANDS2, "10C 10D 10H")
    top = g.zones[DRAW][0]
    act(g, d, Draw(0, DRAW))
    assert top in g.zones["hand:0"] and g.phase == "discard"
    assert g.is_public(g.zones[DRAW][0]) and str(d.truth[g.zones[DRAW][0]]) == "10♦"
    act(g, d, Discard(0, h_of(g, d, 0, "9D")))
    assert faces(g, d, DISCARD) == ["9♦"] and g.is_public(g.zones[DISCARD][0])
    assert g.to_move() == (1,) and g.turns == 1
    act(g, d, Draw(1, DISCARD))
    assert g.zones[DISCARD] == [] or faces(g, d, DISCARD) != ["9♦"]


def test_honest_draw_is_private():
    g, d, _ = new(HonestSlaiga, HANDS2, "10C 10D")
    top = g.zones[DRAW][0]
    act(g, d, Draw(0, DRAW))
    assert g.visible(0, top) and not g.visible(1, top)
    assert not g.visible(0, g.zones[DRAW][0])


def test_acting_out_of_turn_raises_and_keeps_state():
    g, d, _ = new(HonestSlaiga, HANDS2, "10C")
    before = g.state_hash()
    with pytest.raises(NotYourTurn):
        g.apply(Draw(1, DRAW))
    assert g.state_hash() == before
    illegal(g, Discard(0, h_of(g, d, 0, "9D")), match="not allowed now")


# ---- honest volleys ----------------------------------------------------------------------


def test_honest_illegal_shots_raise_and_keep_state():
    g, d, _ = new(HonestSlaiga, ("JC 2H 3H 4H 5H 9D", "2S 3S 4S 7D 8D 9C"), "10C")
    # wrong suit: a ♣ shot card names target ♠, not ♥
    illegal(g, Shoot(0, 1, H), match="no shoot card")
    act(g, d, Shoot(0, 1, S))
    illegal(g, ShotCard(0, h_of(g, d, 0, "9D")), match="required suit")


def test_honest_non_shoot_card_of_the_right_suit_is_refused():
    g, d, _ = new(HonestSlaiga, ("JC 2C 3H 4H 5H 9D", "2S 3S 4S 7D 8D 9C"), "10C")
    act(g, d, Shoot(0, 1, S))
    illegal(g, ShotCard(0, h_of(g, d, 0, "2C")), match="not a shoot card")


def test_honest_miss_true_penalty_and_turn_after_attacker():
    hands = ("JC 2H 3H 4H 5H 9D", "2S 3S 7D 8D 9C 10C", "2D 3D 4D 5D 6D 7H")
    g, d, _ = new(HonestSlaiga, hands, "KC KD KH KS", seats=3)
    act(g, d, Shoot(0, 1, S))
    act(g, d, ShotCard(0, h_of(g, d, 0, "JC")))
    assert g.is_public(g.zones["volley"][0])
    assert g.legal_actions(1) == [Miss(1)]  # only two ♠: miss is compulsory
    illegal(g, Concede(1), match="call miss")
    act(g, d, Miss(1))
    assert d.counts["Prove"] == 1
    assert g.phase == "give" and g.to_move() == (0,)
    act(g, d, Give(0, h_of(g, d, 0, "9D")))
    assert g.visible(1, h_of(g, d, 1, "9D") if False else g.zones["place:1"][0])
    h = g.zones["place:1"][0]
    act(g, d, Place(1, h, 2))
    assert g.zones[DRAW][2] == h and g.visible(0, h) is not False
    assert faces(g, d, DISCARD) == ["J♣"]
    done, _ = drain(g, d)
    assert done[("reload", 0)] == 2 and len(g.zones["hand:0"]) == 6
    assert g.phase == "turn" and g.to_move() == (1,)


def test_honest_false_miss_is_illegal():
    hands = ("JC 2H 3H 4H 5H 9D", "2S 3S 4S 8D 9C 10C")
    g, d, _ = new(HonestSlaiga, hands, "KC KD")
    act(g, d, Shoot(0, 1, S))
    act(g, d, ShotCard(0, h_of(g, d, 0, "JC")))
    illegal(g, Miss(1), match="false miss")
    assert Miss(1) not in g.legal_actions(1)


def test_honest_volley_wraps_and_concede_pays_shots():
    # T = ♥: shot ♠, block ♣ (wrap), countershot ♦, block ♥; then A cannot shoot ♠ again
    hands = ("AS 2H QD 4H 5H 9D", "2H 3H 4H 5C 7H 8D")
    g, d, _ = new(HonestSlaiga, ("QS 2D QD 4D 5D 9C", "2H 3H 4H 5C 7H 8D"), "KC KD KH")
    del hands
    act(g, d, Shoot(0, 1, H))
    act(g, d, ShotCard(0, h_of(g, d, 0, "QS")))
    assert Concede(1) in g.legal_actions(1)
    act(g, d, Answer(1, h_of(g, d, 1, "5C")))  # block ♣
    act(g, d, Answer(0, h_of(g, d, 0, "QD")))  # countershot ♦
    assert d.counts["Prove"] == 1  # the first answer proved 3+ ♥
    act(g, d, Answer(1, h_of(g, d, 1, "7H")))  # counterblock ♥
    assert g.legal_actions(0) == [Concede(0)]
    act(g, d, Concede(0))
    done, events = drain(g, d)
    assert done[("give", 0)] == 2  # two shots
    assert "volley-length:4" in kinds(events)
    assert faces(g, d, DISCARD)[:4] == ["7♥", "Q♦", "5♣", "Q♠"]
    assert g.to_move() == (1,)


def test_honest_ace_must_be_answered_by_ace():
    g, d, _ = new(HonestSlaiga, ("AS 2D QD 4D 5D 9C", "2H 3H 4H 5C AC 8D"), "KC KD KH")
    act(g, d, Shoot(0, 1, H))
    act(g, d, ShotCard(0, h_of(g, d, 0, "AS"), True))
    illegal(g, Answer(1, h_of(g, d, 1, "5C"), False), match="ace")
    assert [a for a in g.legal_actions(1) if isinstance(a, Answer)] == [
        Answer(1, h_of(g, d, 1, "AC"), True)
    ]
    act(g, d, Answer(1, h_of(g, d, 1, "AC"), True))
    assert g.to_move() == (0,)


# ---- lies and checks --------------------------------------------------------------------


def lying_shot(options=None, hands=HANDS2, pile="10C 10D 10H 10S KC KD KH KS"):
    g, d, _ = new(Slaiga, hands, pile, options=options)
    act(g, d, Shoot(0, 1, H))
    act(g, d, ShotCard(0, h_of(g, d, 0, "9D")))  # claims a ♠ shoot card: a lie
    assert not g.is_public(g.zones["volley"][0])
    return g, d


def test_shot_check_catches_liar_who_pays_n_plus_1():
    g, d = lying_shot()
    act(g, d, Check(1))
    assert g.phase == "check_response" and g.to_move() == (0,)
    events = act(g, d, AcceptCheck(0))
    assert "check:shot:liar" in kinds(events)
    assert g.is_public(g.zones["volley"][0])
    done, events = drain(g, d)
    assert done[("give", 0)] == 2 and done[("place", 1)] == 2
    assert g.to_move() == (1,) and len(g.zones["hand:0"]) == 6


def test_shot_check_true_claim_checker_pays_n():
    g, d, _ = new(Slaiga, ("JH 2H 3H 4H 5H 9D", HANDS2[1]), "10C 10D 10H KS")
    act(g, d, Shoot(0, 1, D))
    act(g, d, ShotCard(0, h_of(g, d, 0, "JH")))
    act(g, d, Check(1))
    events = act(g, d, AcceptCheck(0))
    assert "check:shot:true" in kinds(events)
    done, _ = drain(g, d)
    assert done[("give", 1)] == 1 and done[("place", 0)] == 1


def test_block_check_and_penalty_cap():
    # five lying shots and four blocks; D checks the fifth shot: 5+1 capped at 5
    hands = ("2C 3C 4C 5C 6C 7C", "2D 3D 4D 5D 6D 7D")
    g, d, _ = new(Slaiga, hands, "10C 10D 10H 10S KC KD KH KS", options={"jokers": False})
    act(g, d, Shoot(0, 1, H))
    a_cards = list(g.zones["hand:0"])
    b_cards = list(g.zones["hand:1"])
    act(g, d, ShotCard(0, a_cards[0]))
    for i in range(4):
        act(g, d, Answer(1, b_cards[i]))
        act(g, d, Answer(0, a_cards[i + 1]))
    assert g.volley.shots == 5
    events = act(g, d, Check(1))  # jokers off: resolved at once
    assert [e.data["pay"] for e in events if e.kind == "check:shot:liar"] == [5]  # 5+1, capped
    done, _ = drain(g, d)
    assert done[("give", 0)] == 1  # capped at 5, but A holds only 1 card
    g, d, _ = new(Slaiga, hands, "10C 10D 10H 10S KC KD KH KS", options={"jokers": False})
    act(g, d, Shoot(0, 1, H))
    act(g, d, ShotCard(0, h_of(g, d, 0, "2C")))
    act(g, d, Answer(1, h_of(g, d, 1, "2D")))  # lying ♣ block
    events = act(g, d, Check(0))
    assert "check:block:liar" in kinds(events)
    done, _ = drain(g, d)
    assert done[("give", 1)] == 2


def test_joker_cancels_shot_check_then_checker_answers():
    g, d = lying_shot(hands=("JK 2H 3H 4H 5H 9D", HANDS2[1]))
    act(g, d, Check(1))
    joker = h_of(g, d, 0, "JK")
    assert CancelCheck(0, joker) in g.legal_actions(0)
    events = act(g, d, CancelCheck(0, joker))
    assert "joker" in kinds(events)
    assert g.zones[DRAW][-1] == joker and g.is_public(joker)
    assert not g.is_public(g.zones["volley"][0])  # nothing revealed
    assert g.phase == "reload" and g.to_move() == (0,)
    act(g, d, Draw(0, DRAW))
    assert len(g.zones["hand:0"]) == 5  # 6 - shot - joker + 1
    assert g.phase == "answer" and g.to_move() == (1,)
    assert Check(1) not in g.legal_actions(1)
    act(g, d, Concede(1))
    done, _ = drain(g, d)
    assert done[("give", 1)] == 1


def test_slaiga_ace_claim_must_be_answered_by_ace_claim():
    g, d, _ = new(Slaiga, HANDS2, "10C 10D 10H")
    act(g, d, Shoot(0, 1, H))
    act(g, d, ShotCard(0, h_of(g, d, 0, "9D"), True))
    illegal(g, Answer(1, h_of(g, d, 1, "2S"), False), match="ace")
    act(g, d, Answer(1, h_of(g, d, 1, "2S"), True))
    act(g, d, Check(0))
    events = act(g, d, AcceptCheck(1))
    assert "check:block:liar" in kinds(events)  # 2♠ is no ace of ♣


def miss_setup(d_hand, options=None, pile="10C 10D 10H 10S KC KD KH KS QC QD"):
    g, d, _ = new(Slaiga, ("JS 5C 6C 7C 8C 9D", d_hand), pile, options=options)
    act(g, d, Shoot(0, 1, H))
    act(g, d, ShotCard(0, h_of(g, d, 0, "JS")))
    act(g, d, Miss(1))
    assert g.phase == "miss_answer" and g.to_move() == (0,)
    return g, d


def test_miss_accepted_one_card_penalty():
    g, d = miss_setup("2S 3S 4S 7D 8D 9C")
    act(g, d, Pass(0))
    done, _ = drain(g, d)
    assert done[("give", 0)] == 1 and done[("place", 1)] == 1


def test_miss_check_true_attacker_places_4_defender_swaps():
    g, d = miss_setup("2S 3S 4S 7D 8D 9C")
    act(g, d, Check(0))
    assert g.legal_actions(1) == [MissVerdict(1, True)]
    illegal(g, MissVerdict(1, False), match="truth")
    events = act(g, d, MissVerdict(1, True))
    shown = [e for e in events if e.kind == "hand-shown"]
    assert shown and shown[0].audience == frozenset({0, 1})
    assert all(g.visible(0, h) for h in g.zones["hand:1"])
    assert "check:miss:true" in kinds(events)
    done, _ = drain(g, d, stop=("reload",))
    assert done[("place_hand", 0)] == 4 and len(g.zones["hand:0"]) == 1
    assert g.phase == "swap" and g.to_move() == (1,)
    looked = g.agenda[0].handles
    assert len(looked) == 6 and all(g.visible(1, h) for h in looked)
    assert not all(g.visible(0, h) for h in looked[1:])
    pile_card = looked[3]
    mine = h_of(g, d, 1, "9C")
    act(g, d, Swap(1, mine, pile_card))
    assert g.zones[DRAW][3] == mine and pile_card in g.zones["hand:1"]
    act(g, d, Pass(1))
    done, _ = drain(g, d)
    assert done[("reload", 0)] == 5 and g.to_move() == (1,)


def test_miss_check_false_defender_pays_3():
    g, d = miss_setup("2H 3H 4H 7D 8D 9C")
    act(g, d, Check(0))
    assert g.legal_actions(1) == [MissVerdict(1, False)]
    events = act(g, d, MissVerdict(1, False))
    assert "check:miss:liar" in kinds(events)
    done, _ = drain(g, d)
    assert done[("give", 1)] == 3 and done[("place", 0)] == 3


def test_miss_check_cancelled_by_joker_keeps_miss_penalty():
    g, d = miss_setup("2H 3H 4H 7D 8D JK")
    act(g, d, Check(0))
    joker = h_of(g, d, 1, "JK")
    act(g, d, CancelCheck(1, joker))
    assert not any(g.visible(0, h) for h in g.zones["hand:1"])
    assert g.phase == "reload"
    done, _ = drain(g, d)
    assert done[("reload", 1)] == 1 and done[("give", 0)] == 1


# ---- win claims ---------------------------------------------------------------------------

WIN = "2H 3H 4H 5H 6H 9D"


def test_win_check_true_checker_places_4_claimer_finishes():
    g, d, _ = new(
        Slaiga, (WIN, "2S 3S 4S 7D 8D 9C", "2D 3D 4D 5D 7C 8C"), "10C 10D 10H 10S KC KD KH", 3
    )
    act(g, d, Draw(0, DRAW))
    act(g, d, ClaimWin(0, h_of(g, d, 0, "9D")))
    assert not g.is_public(g.zones[DISCARD][0])
    assert g.phase == "win_ask" and g.to_move() == (1,)
    act(g, d, Pass(1))
    assert g.to_move() == (2,)
    act(g, d, Check(2))
    events = act(g, d, AcceptCheck(0))
    assert "check:win:true" in kinds(events)
    assert all(g.is_public(h) for h in g.zones["hand:0"])
    done, _ = drain(g, d)
    assert done[("place_hand", 2)] == 4 and done[("reload", 2)] == 4
    assert g.places == [0] and g.to_move() == (1,)


def test_win_lie_caught_claimer_places_hand_and_stays():
    g, d, _ = new(Slaiga, ("2H 3H 4H 5H 7H 9D", "2S 3S 4S 7D 8D 9C"), "10C 10D 10H 10S KC KD KH")
    act(g, d, Draw(0, DRAW))
    act(g, d, ClaimWin(0, h_of(g, d, 0, "10C")))
    act(g, d, Check(1))
    events = act(g, d, AcceptCheck(0))
    assert "check:win:liar" in kinds(events)
    done, _ = drain(g, d)
    assert done[("place_hand", 0)] == 6 and done[("reload", 0)] == 6
    assert g.active[0] and g.places == [] and g.to_move() == (1,)


def test_win_check_cancelled_by_joker_next_seat_checks_then_all_pass():
    hands = ("2H 3H 4H 5H 6H JK", "2S 3S 4S 7D 8D 9C", "2D 3D 4D 5D 7C 8C")
    g, d, _ = new(Slaiga, hands, "JK 10D 10H 10S KC KD KH", 3)
    act(g, d, Draw(0, DRAW))  # takes the second joker
    act(g, d, ClaimWin(0, h_of(g, d, 0, "JK")))
    act(g, d, Check(1))
    act(g, d, CancelCheck(0, h_of(g, d, 0, "JK")))
    act(g, d, Draw(0, DRAW))
    assert g.phase == "win_ask" and g.to_move() == (2,)
    act(g, d, Pass(2))
    assert g.places == [0] and g.to_move() == (1,)


def test_two_seat_true_win_ends_the_game():
    g, d, _ = new(Slaiga, (WIN, "2S 3S 4S 7D 8D 9C"), "10C 10D")
    act(g, d, Draw(0, DRAW))
    act(g, d, ClaimWin(0, h_of(g, d, 0, "10C")))
    events = act(g, d, Pass(1))
    assert g.is_over() and g.outcome().ranking == (0, 1) and not g.outcome().draw
    assert [e.kind for e in events].count("finish") == 2


def test_honest_win_claim_proved_or_refused():
    g, d, _ = new(HonestSlaiga, (WIN, "2S 3S 4S 7D 8D 9C", "2D 3D 4D 5D 7C 8C"), "10C 10D", 3)
    act(g, d, Draw(0, DRAW))
    illegal(g, ClaimWin(0, h_of(g, d, 0, "2H")), match="no straight flush")
    assert [a for a in g.legal_actions(0) if isinstance(a, ClaimWin)] == [
        ClaimWin(0, h_of(g, d, 0, "9D")),
        ClaimWin(0, h_of(g, d, 0, "10C")),
    ]
    events = act(g, d, ClaimWin(0, h_of(g, d, 0, "9D")))
    assert "win:proved" in kinds(events) and g.places == [0]
    assert all(g.is_public(h) for h in g.zones["hand:0"])
    assert g.to_move() == (1,)


# ---- bullets --------------------------------------------------------------------------------


def test_king_reveals_next_k_to_all():
    g, d, _ = new(Slaiga, ("KC 2H 3H 4H 5H 9D", HANDS2[1]), "10C 10D 10H 10S")
    act(g, d, Draw(0, DRAW))
    act(g, d, Discard(0, h_of(g, d, 0, "KC"), True))
    assert g.phase == "king"
    assert [a.count for a in g.legal_actions(0)] == [1, 2, 3, 4, 5, 6]
    events = act(g, d, KingLook(0, 3))
    assert all(g.is_public(h) for h in g.zones[DRAW][:3])
    assert not g.is_public(g.zones[DRAW][3]) and "king" in kinds(events)
    illegal(g, Discard(1, h_of(g, d, 1, "2S"), True))


def test_queen_swaps_with_recent_discard():
    g, d, _ = new(Slaiga, ("QC 2H 3H 4H 5H 9D", "2S 3S 4S 7D 8D 9C"), "10C 10D 10H 10S")
    act(g, d, Draw(0, DRAW))
    act(g, d, Discard(0, h_of(g, d, 0, "9D")))
    act(g, d, Draw(1, DRAW))
    act(g, d, Discard(1, h_of(g, d, 1, "9C")))
    act(g, d, Draw(0, DRAW))
    act(g, d, Discard(0, h_of(g, d, 0, "QC"), True))
    assert faces(g, d, DISCARD) == ["Q♣", "9♣", "9♦"]
    nine = g.zones[DISCARD][2]
    act(g, d, QueenSwap(0, h_of(g, d, 0, "2H"), nine))
    assert faces(g, d, DISCARD) == ["Q♣", "9♣", "2♥"] and nine in g.zones["hand:0"]
    assert g.to_move() == (1,)


def test_jack_volley_blind_pick_and_give_back():
    hands = ("JC KH 3H 4H 5H 9D", "AS 3S 4S 7D 8D 9C")
    g, d, _ = new(HonestSlaiga, hands, "10C 10D 10H 10S KC KD", picks=[2])
    act(g, d, JackShot(0, 1, h_of(g, d, 0, "JC")))
    assert g.is_public(g.zones["volley"][0])
    assert [type(a).__name__ for a in g.legal_actions(1)] == ["Concede", "Answer"]
    act(g, d, Answer(1, h_of(g, d, 1, "AS")))
    act(g, d, Answer(0, h_of(g, d, 0, "KH")))
    hand1 = list(g.zones["hand:1"])
    events = act(g, d, Concede(1))
    picked = hand1[2]
    assert "jack-pick" in kinds(events) and d.counts["JointRandom"] == 1
    assert picked in g.zones["hand:0"] and g.visible(0, picked)
    assert g.phase == "give_back" and g.to_move() == (0,)
    back = h_of(g, d, 0, "9D")
    act(g, d, GiveBack(0, back))
    assert back in g.zones["hand:1"] and g.visible(1, back)
    assert faces(g, d, DISCARD)[:3] == ["K♥", "A♠", "J♣"]
    done, events = drain(g, d)
    assert g.to_move() == (1,)


def test_non_bullet_cannot_answer_a_jack():
    g, d, _ = new(Slaiga, ("JC KH 3H 4H 5H 9D", "AS 3S 4S 7D 8D 9C"), "10C 10D")
    act(g, d, JackShot(0, 1, h_of(g, d, 0, "JC")))
    illegal(g, Answer(1, h_of(g, d, 1, "3S")), match="not a bullet")


# ---- piles and the end ------------------------------------------------------------------------


def test_turn_cap_is_a_draw():
    g, d, _ = new(HonestSlaiga, HANDS2, "10C 10D", options={"max_turns": 3})
    for _ in range(3):
        seat = g.to_move()[0]
        act(g, d, Draw(seat, DRAW))
        events = act(g, d, Discard(seat, g.zones[f"hand:{seat}"][0]))
    assert g.is_over() and g.outcome().draw and "turn-cap" in kinds(events)


def test_registry_and_summary():
    spec = get("slaiga")
    assert spec.game_class is Slaiga and get("honest-slaiga").game_class is HonestSlaiga
    assert set(spec.bots) == {"random", "heuristic"}
    import random

    g = spec.factory(4, None)
    dd = LocalDealer(g.deck, 3)
    bots = [spec.bots["heuristic"](s, random.Random(s)) for s in range(4)]
    r = runner.play(g, dd, bots)
    summary = spec.summarise([r])
    for key in ("volleys", "shot checks", "lies caught", "jokers used", "reshuffles"):
        assert key in summary
    assert summary["draws by turn cap"] == (1 if r.outcome.draw else 0)


def test_slaiga_shoot_cards_are_claims_any_card_may_be_played():
    g, d, _ = new(Slaiga, HANDS2, "10C")
    act(g, d, Shoot(0, 1, C))
    assert len(g.legal_actions(0)) == 12  # any of 6 cards, with or without an ace claim
    assert ACE == 14


# ---- the bot's fast hand scoring agrees with the plain window count ------------------------


def _reference_value(faces, dead):
    counts = window_counts(faces, dead)
    return max(counts) * 10 + sum(c * c for c in counts if c > 0) * 0.01


def test_bot_hand_scores_match_window_by_window_counts():
    """hand_value, and the bot's per-card "hand without it" / "hand plus it" scores,
    equal the plain 40-window count for random hands (jokers and dead windows included)."""
    import random

    rng = random.Random(5)
    deck = list(standard_deck(jokers=2))
    for _ in range(400):
        hand = rng.sample(deck, rng.randint(1, 7))
        dead = rng.getrandbits(40) if rng.random() < 0.5 else 0
        assert hand_value(hand, dead) == _reference_value(hand, dead)
        bot = SlaigaBot(0, random.Random(0))
        bot._hand_now = dict(enumerate(hand))
        bot._packed = pack(hand)
        bot._dead_now = dead
        bot._base, bot._rest = None, {}
        assert bot._value() == _reference_value(hand, dead)
        for h in range(len(hand)):
            rest = hand[:h] + hand[h + 1 :]
            assert bot._rest_value(h) == _reference_value(rest, dead)
        top = rng.choice([c for c in deck if c not in hand])
        assert bot._plus_value(top) == _reference_value([*hand, top], dead)
        bot._rest = {}
        keep = [
            v - (0.5 if is_bullet(f) else 0)
            for v, f in (
                (_reference_value(hand[:h] + hand[h + 1 :], dead), f) for h, f in enumerate(hand)
            )
        ]
        assert bot._worst() == keep.index(max(keep))


# ---- malformed actions (as a network peer could send them) ---------------------------------


def assert_refused(g, *actions):
    """Each action raises an IllegalAction naming it, its phase and seat; the state stays."""
    before = g.state_hash()
    for a in actions:
        with pytest.raises(IllegalAction) as err:
            g.apply(a)
        assert err.value.action == a and err.value.phase == g.phase and err.value.seat == a.seat
        assert g.state_hash() == before, a


def test_malformed_fields_bools_floats_strings_are_refused():
    """``True`` == 1 and ``1.0`` == 1 would pass ``in`` tests on handles and seats."""
    g, d, _ = new(Slaiga, HANDS2, "10C 10D 10H 10S KC KD")
    one = g.zones["hand:0"][1]
    assert_refused(
        g,
        Shoot(0, True, H),
        Shoot(0, 1, 2.0),
        Shoot(0, "1", H),
        Draw(0, ["draw"]),
        JackShot(0, 1, float(h_of(g, d, 0, "JC"))),
    )
    act(g, d, Draw(0, DRAW))
    assert_refused(g, Discard(0, float(one)), Discard(0, one, 1), ClaimWin(0, str(one)))
    act(g, d, Discard(0, h_of(g, d, 0, "9D")))
    assert g.to_move() == (1,)
    assert_refused(g, Draw(True, DRAW), Draw(1.0, DRAW))  # seat 1 written as True / 1.0
    act(g, d, Shoot(1, 0, H))
    assert_refused(g, ShotCard(1, g.zones["hand:1"][0], "yes"), ShotCard(True, 2))
    act(g, d, ShotCard(1, h_of(g, d, 1, "2S")))
    assert_refused(g, Answer(0, True), Answer(0, g.zones["hand:0"][0], 0), Concede(False))
    act(g, d, Concede(0))
    assert g.phase == "give"
    assert_refused(g, Give(0, float(g.zones["hand:0"][0])))
    act(g, d, Give(0, g.zones["hand:0"][0]))
    card = g.zones["place:1"][0]
    assert_refused(g, Place(1, card, True), Place(1, card, 0.0), Place(1, True, 0))
    act(g, d, Place(1, card, 0))


def test_malformed_king_count_and_miss_verdict_are_refused():
    g, d, _ = new(Slaiga, ("KC 2H 3H 4H 5H 9D", HANDS2[1]), "10C 10D 10H 10S")
    act(g, d, Draw(0, DRAW))
    act(g, d, Discard(0, h_of(g, d, 0, "KC"), True))
    assert_refused(g, KingLook(0, True), KingLook(0, 2.0))
    g, d = miss_setup("2S 3S 4S 7D 8D 9C")
    act(g, d, Check(0))
    assert_refused(g, MissVerdict(1, 1), MissVerdict(1, "true"))
    act(g, d, MissVerdict(1, True))


def test_a_lie_with_a_card_everyone_saw_can_still_be_checked():
    """A card drawn from the face-up pile is public, yet it is played face down with a claim:
    the claim is a lie like any other and may be checked (the card needs no new reveal)."""
    g, d, _ = new(Slaiga, HANDS2, "10C 10D 10H 10S KC KD KH KS")
    ten = g.zones[DRAW][0]
    act(g, d, Draw(0, DRAW))  # 10♣, face up to everyone
    act(g, d, Discard(0, h_of(g, d, 0, "9D")))
    act(g, d, Draw(1, DRAW))
    act(g, d, Discard(1, h_of(g, d, 1, "9C")))
    act(g, d, Shoot(0, 1, H))
    act(g, d, ShotCard(0, ten))  # claims a ♠ shoot card with the 10♣ everyone saw
    assert g.is_public(ten)
    assert Check(1) in g.legal_actions(1)
    act(g, d, Check(1))
    events = act(g, d, AcceptCheck(0))
    assert "check:shot:liar" in kinds(events)
    done, _ = drain(g, d)
    assert done[("give", 0)] == 2


# ---- [house] options: each default and its alternative -------------------------------------


def test_block_any_option_blocks_must_be_shoot_cards_when_off():
    hands = ("QS 2D QD 4D 5D 9C", "2H 3H 4H 5C KC 8D")
    g, d, _ = new(HonestSlaiga, hands, "10C 10D 10H", options={"block_any": False})
    act(g, d, Shoot(0, 1, H))
    act(g, d, ShotCard(0, h_of(g, d, 0, "QS")))
    assert [a for a in g.legal_actions(1) if isinstance(a, Answer)] == [
        Answer(1, h_of(g, d, 1, "KC"))
    ]
    assert_refused(g, Answer(1, h_of(g, d, 1, "5C")))
    # default: any ♣ blocks
    g, d, _ = new(HonestSlaiga, hands, "10C 10D 10H")
    act(g, d, Shoot(0, 1, H))
    act(g, d, ShotCard(0, h_of(g, d, 0, "QS")))
    act(g, d, Answer(1, h_of(g, d, 1, "5C")))
    # slaiga: a checked 5♣ block claim is true by default and a lie without block_any
    for opts, verdict in (({}, "check:block:true"), ({"block_any": False}, "check:block:liar")):
        g, d, _ = new(Slaiga, hands, "10C 10D 10H", options=opts)
        act(g, d, Shoot(0, 1, H))
        act(g, d, ShotCard(0, h_of(g, d, 0, "QS")))
        act(g, d, Answer(1, h_of(g, d, 1, "5C")))
        act(g, d, Check(0))
        assert verdict in kinds(act(g, d, AcceptCheck(1)))


def test_check_ends_volley_option_off_checker_pays_then_answers():
    hands = ("JH 2H 3H 4H 5H 9D", "2S 3S 4S 7D 8D 9C")
    g, d, _ = new(Slaiga, hands, "10C 10D 10H KS", options={"check_ends_volley": False})
    act(g, d, Shoot(0, 1, D))
    act(g, d, ShotCard(0, h_of(g, d, 0, "JH")))  # a true ♥ shot
    act(g, d, Check(1))
    assert "check:shot:true" in kinds(act(g, d, AcceptCheck(0)))
    done, _ = drain(g, d)
    assert done[("give", 1)] == 1 and done[("place", 0)] == 1 and not done[("reload", 1)]
    assert g.volley is not None and g.phase == "answer" and g.to_move() == (1,)
    assert Check(1) not in g.legal_actions(1)  # the same card cannot be checked again
    act(g, d, Concede(1))
    done, _ = drain(g, d)
    assert done[("give", 1)] == 1 and g.volley is None and g.to_move() == (1,)


def test_miss_check_replaces_option_off_adds_the_one_card_penalty():
    g, d = miss_setup("2S 3S 4S 7D 8D 9C", options={"miss_check_replaces": False})
    act(g, d, Check(0))
    act(g, d, MissVerdict(1, True))
    done, _ = drain(g, d, stop=("reload",))
    assert done[("give", 0)] == 1 and done[("place", 1)] == 1 and done[("place_hand", 0)] == 4
    assert not g.zones["hand:0"] and g.phase == "swap"


def test_unchecked_volley_cards_stay_face_down_unless_the_option_reveals_them():
    for opts, public in (({}, False), ({"reveal_volley_cards": True}, True)):
        g, d = lying_shot(options=opts)
        shot = g.zones["volley"][0]
        act(g, d, Concede(1))
        drain(g, d)
        assert shot in g.zones[DISCARD] and g.is_public(shot) is public
        assert g.visible(0, shot)


def reload_order(g, d):
    order = []
    while g.phase in MECHANICAL:
        seat = g.to_move()[0]
        if g.phase == "reload" and seat not in order:
            order.append(seat)
        act(g, d, g.legal_actions(seat)[0])
    return order


def test_loser_reloads_first_by_default_and_winner_first_by_option():
    g, d = lying_shot()
    act(g, d, Concede(1))
    assert reload_order(g, d) == [1, 0]
    g, d = lying_shot(options={"loser_reloads_first": False})
    act(g, d, Concede(1))
    assert reload_order(g, d) == [0, 1]


def test_wrap_straights_option_in_a_win_claim():
    hand = ("QD KD AD 2D 3D 9C", "2S 3S 4S 7D 8D 9H")
    g, d, _ = new(HonestSlaiga, hand, "10C 10H")
    act(g, d, Draw(0, DRAW))
    assert_refused(g, ClaimWin(0, h_of(g, d, 0, "9C")))
    g, d, _ = new(HonestSlaiga, hand, "10C 10H", options={"wrap_straights": True})
    act(g, d, Draw(0, DRAW))
    assert "win:proved" in kinds(act(g, d, ClaimWin(0, h_of(g, d, 0, "9C"))))


def test_king_max_option_caps_the_reveal():
    g, d, _ = new(
        Slaiga, ("KC 2H 3H 4H 5H 9D", HANDS2[1]), "10C 10D 10H 10S", options={"king_max": 2}
    )
    act(g, d, Draw(0, DRAW))
    act(g, d, Discard(0, h_of(g, d, 0, "KC"), True))
    assert g.legal_actions(0) == [KingLook(0, 1), KingLook(0, 2)]
    assert_refused(g, KingLook(0, 3), KingLook(0, 0))
    act(g, d, KingLook(0, 2))


def test_declaring_a_card_without_an_ability_is_refused():
    g, d, _ = new(Slaiga, ("KC 2H 3H 4H 5H 9D", HANDS2[1]), "10C 10D 10H 10S")
    act(g, d, Draw(0, DRAW))
    assert_refused(g, Discard(0, h_of(g, d, 0, "9D"), True))
    assert Discard(0, h_of(g, d, 0, "9D"), True) not in g.legal_actions(0)


# ---- the face-up draw pile, reshuffles, queen reach, swap limit, reload, win-check order -----


HANDS3 = (*HANDS2, "2D 3D 4D 5D 7C 8C")  # a third seat, so a card two seats know is not public


def test_new_top_revealed_after_a_placement_at_position_0():
    g, d, _ = new(Slaiga, HANDS3, "10C 10D 10H 10S KC KD KH KS", seats=3)
    act(g, d, Shoot(0, 1, H))
    act(g, d, ShotCard(0, h_of(g, d, 0, "9D")))
    act(g, d, Concede(1))
    given = h_of(g, d, 1, "9C")
    act(g, d, Give(1, given))
    assert not g.is_public(given)
    events = act(g, d, Place(0, given, 0))
    assert g.zones[DRAW][0] == given and g.is_public(given) and "top" in kinds(events)


def test_new_top_revealed_after_a_swap_at_position_0():
    hands = ("JS 5C 6C 7C 8C 9D", HANDS2[1], "2D 3D 4D 5D QH QD")
    g, d, _ = new(Slaiga, hands, "10C 10D 10H 10S KC KD KH", seats=3)
    act(g, d, Shoot(0, 1, H))
    act(g, d, ShotCard(0, h_of(g, d, 0, "JS")))
    act(g, d, Miss(1))
    act(g, d, Check(0))
    act(g, d, MissVerdict(1, True))
    drain(g, d, stop=("reload",))
    looked = g.agenda[0].handles
    mine = h_of(g, d, 1, "9C")
    assert not g.is_public(mine)
    events = act(g, d, Swap(1, mine, looked[0]))
    assert g.zones[DRAW][0] == mine and g.is_public(mine) and "top" in kinds(events)


def test_at_most_three_swaps_keeping_positions():
    g, d = miss_setup("2S 3S 4S 7D 8D 9C")
    act(g, d, Check(0))
    act(g, d, MissVerdict(1, True))
    drain(g, d, stop=("reload",))
    looked = g.agenda[0].handles
    for i, code in enumerate(("9C", "8D", "7D")):
        mine = h_of(g, d, 1, code)
        pos = g.zones[DRAW].index(looked[i + 1])
        act(g, d, Swap(1, mine, looked[i + 1]))
        assert g.zones[DRAW][pos] == mine
    assert g.phase != "swap" and len(g.zones["hand:1"]) == 6


def test_reshuffle_takes_the_whole_discard_pile_face_down_cards_included():
    g, d, _ = new(Slaiga, seats=8)  # 54 - 48 = 6 cards in the draw pile
    act(g, d, Draw(0, DRAW))
    claim = g.zones["hand:0"][0]
    act(g, d, ClaimWin(0, claim))  # face down on the discard pile
    while g.phase == "win_ask":
        act(g, d, Pass(g.to_move()[0]))
    assert not g.is_public(claim) and claim in g.zones[DISCARD]
    events = []
    while "reshuffle" not in kinds(events):
        seat = g.to_move()[0]
        assert len(g.zones[DRAW]) >= 1
        discards = list(g.zones[DISCARD])
        events = act(g, d, Draw(seat, DRAW))
        if "reshuffle" not in kinds(events):
            act(g, d, Discard(seat, g.zones[f"hand:{seat}"][0]))
    assert not g.zones[DISCARD] and sorted(g.zones[DRAW]) == sorted(discards)
    assert claim in g.zones[DRAW]
    top, rest = g.zones[DRAW][0], g.zones[DRAW][1:]
    assert g.is_public(top) and not any(g.seen.get(h, 0) for h in rest)
    runner.check_conservation(g, d)


def test_queen_reaches_the_six_most_recent_discards_only_queen_included():
    g, d, _ = new(Slaiga, ("QC 2H 3H 4H 5H 9D", "2S 3S 4S 7D 8D 9C"), "10C 10D 10H 10S JC JD JH")
    for _ in range(6):
        seat = g.to_move()[0]
        act(g, d, Draw(seat, DRAW))
        act(g, d, Discard(seat, g.zones[f"hand:{seat}"][-1]))
    act(g, d, Draw(0, DRAW))
    queen = h_of(g, d, 0, "QC")
    act(g, d, Discard(0, queen, True))
    pile = list(g.zones[DISCARD])
    assert len(pile) == 7 and pile[0] == queen
    give = h_of(g, d, 0, "2H")
    assert_refused(g, QueenSwap(0, give, pile[6]))
    assert {a.take for a in g.legal_actions(0)} == set(pile[:6])
    act(g, d, QueenSwap(0, give, queen))
    assert g.zones[DISCARD][0] == give and g.is_public(give) and queen in g.zones["hand:0"]


def test_reload_mixes_both_piles():
    hands = ("QS 2D QD 4D 5D 9C", "2H 3H 4H 5C 7H 8D")
    g, d, _ = new(HonestSlaiga, hands, "KC KD KH KS 10C 10D")
    act(g, d, Shoot(0, 1, H))
    act(g, d, ShotCard(0, h_of(g, d, 0, "QS")))
    act(g, d, Answer(1, h_of(g, d, 1, "5C")))
    act(g, d, Concede(0))
    act(g, d, Give(0, h_of(g, d, 0, "9C")))
    act(g, d, Place(1, g.zones["place:1"][0], 0))
    assert g.phase == "reload" and g.to_move() == (0,)
    top_discard = g.zones[DISCARD][0]
    act(g, d, Draw(0, DISCARD))
    top_draw = g.zones[DRAW][0]
    act(g, d, Draw(0, DRAW))  # A paid 1 and shot 1: two cards, one from each pile
    assert {top_discard, top_draw} <= set(g.zones["hand:0"]) and len(g.zones["hand:0"]) == 6
    assert g.to_move() == (1,) and g.phase == "reload"


def test_win_checks_are_asked_in_seat_order_from_the_claimer():
    g, d, _ = new(Slaiga, seats=4)
    for seat in (0, 1):
        act(g, d, Draw(seat, DRAW))
        act(g, d, Discard(seat, g.zones[f"hand:{seat}"][0]))
    act(g, d, Draw(2, DRAW))
    act(g, d, ClaimWin(2, g.zones["hand:2"][0]))
    asked = []
    while g.phase == "win_ask":
        asked.append(g.to_move()[0])
        act(g, d, Pass(asked[-1]))
    assert asked == [3, 0, 1] and g.places == [2] and g.to_move() == (3,)


def test_shoot_cards_are_exactly_j_q_k_a():
    g, d, _ = new(HonestSlaiga, ("JC QC KC AC 10C 9D", HANDS2[1]), "10H 10S")
    act(g, d, Shoot(0, 1, S))
    expected = [ShotCard(0, h_of(g, d, 0, c), c == "AC") for c in ("JC", "QC", "KC", "AC")]
    assert sorted(g.legal_actions(0), key=lambda a: a.card) == sorted(
        expected, key=lambda a: a.card
    )
    assert_refused(g, ShotCard(0, h_of(g, d, 0, "10C")))
    # slaiga: a 10 played as a shot claim is a lie when checked
    g, d, _ = new(Slaiga, ("JC QC KC AC 10C 9D", HANDS2[1]), "10H 10S")
    act(g, d, Shoot(0, 1, S))
    act(g, d, ShotCard(0, h_of(g, d, 0, "10C")))
    act(g, d, Check(1))
    assert "check:shot:liar" in kinds(act(g, d, AcceptCheck(0)))


def test_jack_volley_loser_reloads_first():
    hands = ("JC KH 3H 4H 5H 9D", "AS 3S 4S 7D 8D 9C")
    g, d, _ = new(HonestSlaiga, hands, "10C 10D 10H 10S KC KD", picks=[0])
    act(g, d, JackShot(0, 1, h_of(g, d, 0, "JC")))
    act(g, d, Answer(1, h_of(g, d, 1, "AS")))
    act(g, d, Concede(0))  # the attacker gives up: seat 1 wins and picks
    assert g.phase == "give_back" and g.to_move() == (1,)
    act(g, d, g.legal_actions(1)[0])
    assert reload_order(g, d) == [0, 1] and g.to_move() == (1,)


def test_miss_only_as_the_defenders_first_answer():
    g, d, _ = new(Slaiga, HANDS2, "10C 10D 10H 10S")
    act(g, d, Shoot(0, 1, H))
    act(g, d, ShotCard(0, h_of(g, d, 0, "JC")))
    act(g, d, Answer(1, h_of(g, d, 1, "2S")))
    assert_refused(g, Miss(0))
    act(g, d, Answer(0, h_of(g, d, 0, "9D")))
    assert Miss(1) not in g.legal_actions(1)
    assert_refused(g, Miss(1))


def test_shots_need_an_opponent_in_play():
    hands = (WIN, "JS 3S 4S 7D 8D 9C", "2D 3D 4D 5D 7C 8C")
    g, d, _ = new(HonestSlaiga, hands, "10C 10D 10H", seats=3)
    act(g, d, Draw(0, DRAW))
    act(g, d, ClaimWin(0, h_of(g, d, 0, "9D")))
    assert g.places == [0] and g.to_move() == (1,)
    jack = h_of(g, d, 1, "JS")
    assert_refused(g, Shoot(1, 0, H), Shoot(1, 1, H), Shoot(1, 3, H), Shoot(1, -1, H))
    assert_refused(g, JackShot(1, 0, jack), JackShot(1, 1, jack))
    assert {a.target for a in g.legal_actions(1) if isinstance(a, Shoot | JackShot)} == {2}
    act(g, d, Shoot(1, 2, H))


def test_face_up_plays_cannot_be_checked():
    """Honest shots and every jack-volley card are face up: there is no claim to check."""
    g, d, _ = new(HonestSlaiga, ("JC 2H 3H 4H 5H 9D", "2S 3S 4S 7D 8D 9C"), "10C 10D")
    act(g, d, Shoot(0, 1, S))
    act(g, d, ShotCard(0, h_of(g, d, 0, "JC")))
    assert_refused(g, Check(1))
    g, d, _ = new(Slaiga, ("JC KH 3H 4H 5H 9D", "AS 3S 4S 7D 8D 9C"), "10C 10D")
    act(g, d, JackShot(0, 1, h_of(g, d, 0, "JC")))
    assert Check(1) not in g.legal_actions(1)
    assert_refused(g, Check(1), Miss(1))
