"""Tests of the engine core with a tiny game, 'high card' (engine/games/highcard, the template game).

Each seat is dealt two cards privately, then in turn plays one face up; the
highest played card wins. It exercises shuffles, private and public reveals,
transfers, proofs, dice, joint randomness, views, hashing and errors.
"""

import random

import pytest

from engine import runner
from engine.bots import RandomBot
from engine.cards import ACE, HEARTS, SPADES, Card, cards, parse_card, standard_deck
from engine.dealer import LocalDealer
from engine.errors import BadOption, BadSeats, DealerPending, FalseClaim, IllegalAction, NotYourTurn
from engine.games.highcard.actions import PlayCard
from engine.games.highcard.rules import HighCard
from engine.obligations import FewerOfSuit, HighestGiven, JointRandom, Prove, Roll, Transfer
from tests.engine._helpers import assert_resample_keeps_view


def new(seed=1, seats=3, stacked=None):
    g = HighCard(seats)
    d = LocalDealer(g.deck, seed, stacked=stacked)
    runner.start(g, d)
    return g, d


def test_cards_parse_and_print():
    assert str(parse_card("QS")) == "Q♠"
    assert parse_card("10h") == Card(10, HEARTS)
    assert parse_card("A♠") == Card(ACE, SPADES)
    assert parse_card("JK").is_joker
    with pytest.raises(ValueError):
        parse_card("1Z")
    assert len(standard_deck(jokers=2)) == 54
    assert len(standard_deck(copies=2)) == 104


def test_stacked_deal_and_private_views():
    g, d = new(stacked=cards("AS KS 2C 3C 4D 5D"))
    assert [g.faces[h] for h in g.zones["hand:0"]] == cards("AS KS")
    assert [str(c) for c in g.view(0)["hand"]] == ["A♠", "K♠"]
    # seat 1 sees its own cards but not seat 0's
    assert all(c.face is None for c in g.cards_view(1, g.zones["hand:0"]))
    assert all(c.face is not None for c in g.view(1)["hand"])


def test_public_reveal_and_turn_order():
    g, d = new()
    h = g.zones["hand:0"][0]
    runner.apply(g, d, PlayCard(0, h))
    assert all(g.face_for(s, h) == d.truth[h] for s in range(3))
    assert g.to_move() == (1,)


def test_illegal_actions_leave_state_untouched():
    g, d = new()
    before = g.state_hash()
    with pytest.raises(NotYourTurn) as e:
        g.apply(PlayCard(1, g.zones["hand:1"][0]))
    assert e.value.seat == 1 and e.value.phase == "play"
    with pytest.raises(IllegalAction, match="do not hold"):
        g.apply(PlayCard(0, g.zones["hand:1"][0]))
    assert g.state_hash() == before
    g.apply(PlayCard(0, g.zones["hand:0"][0]))
    with pytest.raises(DealerPending):
        g.apply(PlayCard(1, g.zones["hand:1"][0]))


def test_options_and_seats_are_validated():
    with pytest.raises(BadSeats):
        HighCard(5)
    with pytest.raises(BadOption, match="this game's options are: .*hand"):
        HighCard(2, {"hands": 3})
    with pytest.raises(BadOption, match="a whole number from 1 to 4"):
        HighCard(2, {"hand": "9"})
    assert HighCard(2, {"hand": "3"}).options["hand"] == 3


def test_determinism_and_hash_is_public_only():
    hashes = set()
    for _ in range(2):
        g = HighCard(3)
        d = LocalDealer(g.deck, 42)
        r = runner.play(g, d, [RandomBot(s, random.Random(s)) for s in range(3)])
        hashes.add(r.state_hash)
    assert len(hashes) == 1
    g1, _ = new(seed=1)
    g2, _ = new(seed=2)
    # different private deals, same public state
    assert g1.state_hash() == g2.state_hash()


def test_leak_resample_keeps_view():
    g, d = new(seed=5)
    rng = random.Random(0)
    for seat in range(3):
        assert_resample_keeps_view(g, d, seat, rng)


def test_local_dealer_other_obligations():
    deck = standard_deck()
    d = LocalDealer(deck, 3, dice=[6, 1], picks=[2])
    assert d.fulfil(Roll(0, 3))[:2] == (6, 1)
    assert d.fulfil(JointRandom(5)) == 2
    assert 0 <= d.fulfil(JointRandom(5)) < 5
    assert d.fulfil(Transfer(0, 0, 1)) == {0: deck[0]}
    # deck[0..12] are the clubs 2..A
    d.fulfil(Prove(FewerOfSuit(0, (0, 1, 13), 0, 3)))
    with pytest.raises(FalseClaim):
        d.fulfil(Prove(FewerOfSuit(0, (0, 1, 2), 0, 3)))
    # 2♣ (handle 0) is Slave's highest club; 3♣ (handle 1) its lowest
    d.fulfil(Prove(HighestGiven(0, (0,), (1, 2), "slave", 1)))
    with pytest.raises(FalseClaim):
        d.fulfil(Prove(HighestGiven(0, (1,), (0,), "slave", 1)))


def test_check_is_the_one_legality_trial_and_changes_nothing():
    """``Game.check`` says why an action would be refused, or ``None``, without touching
    the game it is asked on."""
    g, d = new()
    before = g.state_hash()
    assert g.check(PlayCard(0, g.zones["hand:0"][0])) is None
    assert "not this seat's move" in g.check(PlayCard(1, g.zones["hand:1"][0]))
    assert "do not hold" in g.check(PlayCard(0, g.zones["hand:1"][0]))
    assert g.state_hash() == before
    assert g.to_move() == (0,)


def test_conservation_check_finds_a_broken_deal_after_one_it_passed():
    """``runner.check_conservation`` keeps the dealer's faces it last found to be the deck
    (so it sorts them only after a shuffle): a face changed after a passing check, in the
    dealer or in what the game knows, or a handle lost from its zone, is still found."""
    from engine.errors import EngineError

    g, d = new()
    runner.check_conservation(g, d)
    runner.check_conservation(g, d)  # the same faces again: passes without sorting
    h = g.zones["hand:0"][0]
    true_face = d.truth[h]
    d.truth[h] = Card(2, SPADES) if true_face != Card(2, SPADES) else Card(3, SPADES)
    with pytest.raises(EngineError, match="no longer match the deck"):
        runner.check_conservation(g, d)
    d.truth[h] = true_face
    runner.check_conservation(g, d)
    g.faces[h] = Card(ACE, HEARTS) if true_face != Card(ACE, HEARTS) else Card(ACE, SPADES)
    with pytest.raises(EngineError, match=f"handle {h}: game thinks"):
        runner.check_conservation(g, d)
    g.faces[h] = true_face
    runner.check_conservation(g, d)
    g.zones["hand:0"].remove(h)  # a pile changed behind the zones' index
    with pytest.raises(EngineError):
        runner.check_conservation(g, d)
