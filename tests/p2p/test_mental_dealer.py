"""The mental-poker dealer: whole games with one engine per seat, and cheats caught.

Every game runs through ``p2p.mental_play.play_mental``, which checks after
every action that all seat engines agree (state hash, mover), that no engine
and no seat (at the crypto level) knows a face it may not see, and that every
known face is the true one.  Games use ``insecure_seed`` so that they replay
exactly (the assertions on obligation kinds below depend on the deal).
"""

from __future__ import annotations

import pytest

from crypto.group import COUNTERS
from engine.bots import RandomBot
from engine.cards import HEARTS, SPADES, Card, standard_deck
from engine.errors import FalseClaim
from engine.games.highcard.rules import HighCard
from engine.games.slaiga.hands import AtLeastOfSuit
from engine.games.slave.rules import LacksCard
from engine.obligations import (
    FewerOfSuit,
    HighestGiven,
    InSet,
    JointRandom,
    Prove,
    Reveal,
    Roll,
    Shuffle,
    Transfer,
)
from engine.registry import GameSpec
from p2p.mental_dealer import (
    CannotProve,
    DealerCheat,
    MentalTable,
    ObligationMismatch,
    SeatDealer,
    handle_indices,
    index_face,
)
from p2p.mental_play import play_mental

DECK52 = standard_deck()
HAND = 5


def _seeded(seed: int) -> bytes:
    return b"test-mental-%d" % seed


# ---- whole games -------------------------------------------------------------------------


def _play(name: str, seats: int, options: dict, seed: int):
    result = play_mental(name, seats, options, seed=seed, insecure_seed=_seeded(seed))
    hashes = {g.state_hash() for g in result.engines}
    assert hashes == {result.state_hash}
    assert len({repr(g.outcome()) for g in result.engines}) == 1
    # no engine knows a face its seat may not see (also checked after every action)
    for s, g in enumerate(result.engines):
        assert all(g.visible(s, h) for h in g.faces)
    return result


def test_slave_two_deals_with_exchange():
    r = _play("slave", 4, {"games": 2}, seed=2)  # this deal has a LacksCard proof
    stats = r.table.stats
    assert r.engines[0].is_over()
    assert stats.obligations["Shuffle"] == 2
    assert stats.obligations["Transfer"] == 6  # 2 + 2 + 1 + 1 exchanged cards
    assert stats.statements["HighestGiven"] == 2
    assert stats.statements["LacksCard"] >= 1
    # the receiver of each exchange learnt the given cards' faces; nobody else did
    for s, g in enumerate(r.engines):
        assert all((g.seen[h] >> s) & 1 for h in g.faces)


def test_slajens_dice_from_joint_randomness():
    r = _play("slajens", 3, {"rounds": 2}, seed=1)
    assert r.engines[0].is_over()
    assert r.table.stats.obligations["Roll"] >= 6
    assert set(r.table.stats.obligations) == {"Roll"}


def test_slaiga_lying_variant():
    r = _play("slaiga", 4, {"max_turns": 30}, seed=2)
    ob = r.table.stats.obligations
    assert ob["Shuffle"] >= 1 and ob["Reveal"] > 10 and ob["Transfer"] >= 1


def test_honest_slaiga_with_hand_proofs():
    r = _play("honest-slaiga", 3, {"max_turns": 40}, seed=6)  # this deal has two proofs
    assert r.table.stats.statements["AtLeastOfSuit"] == 2


def test_honest_slaiga_card_back_through_the_pile_is_rekeyed():
    # In this deal a penalty card handed from seat A to seat B is placed on the draw
    # pile and drawn back by A, who then proves a claim about its hand: the card's
    # ciphertext is still keyed to B, so the dealer re-keys it to A first.
    r = play_mental("honest-slaiga", 4, {"max_turns": 60}, seed=2, insecure_seed=b"seed2")
    assert r.table.stats.rekeys >= 1
    assert r.table.stats.statements["AtLeastOfSuit"] >= 1


def test_aight_of_spaides_double_deck():
    r = _play("aight-of-spaides", 3, {"max_turns": 30}, seed=3)
    assert r.table.size == 104
    assert r.table.stats.obligations["Shuffle"] >= 1


def test_seeded_games_replay_exactly():
    a = play_mental("honest-slaiga", 3, {"max_turns": 12}, seed=5, insecure_seed=b"replay")
    b = play_mental("honest-slaiga", 3, {"max_turns": 12}, seed=5, insecure_seed=b"replay")
    assert a.state_hash == b.state_hash
    assert [st.ob for st in a.table.steps] == [st.ob for st in b.table.steps]


# ---- the face mapping ----------------------------------------------------------------------


def test_face_index_mapping_matches_engine_decks():
    for jokers, copies, size in ((0, 1, 52), (2, 1, 54), (0, 2, 104)):
        deck = standard_deck(jokers=jokers, copies=copies)
        idx = handle_indices(deck, size)
        assert len(set(idx)) == size
        assert [index_face(k, size) for k in idx] == list(deck)
    # a shuffled face list maps onto distinct indices with the right faces
    deck = list(reversed(standard_deck(copies=2)))
    idx = handle_indices(deck, 104)
    assert len(set(idx)) == 104 and [index_face(k, 104) for k in idx] == deck


# ---- dealer-level protocol tests --------------------------------------------------------------


def _dealt(seats: int = 3, seed: int = 7, cheats=None):
    """A table that has shuffled a 52-card deck and dealt HAND cards to each seat."""
    table = MentalTable(seats, DECK52, cheats=cheats, insecure_seed=_seeded(seed))
    dealers = [SeatDealer(table, s) for s in range(seats)]
    shuffle = Shuffle(tuple(range(52)))
    for d in dealers:
        assert d.fulfil(shuffle) is None
    hands = [tuple(range(s * HAND, (s + 1) * HAND)) for s in range(seats)]
    for s, hand in enumerate(hands):
        ob = Reveal(hand, frozenset((s,)), "deal")
        answers = [d.fulfil(ob) for d in dealers]
        for t, ans in enumerate(answers):
            assert ans == ({h: table.oracle_face(h) for h in hand} if t == s else {})
    return table, dealers, hands


def _all(dealers, ob):
    return [d.fulfil(ob) for d in dealers]


def test_reveal_private_public_and_transfer():
    table, dealers, hands = _dealt()
    top = (40, 41)
    answers = _all(dealers, Reveal(top, None, "public"))
    assert all(a == {h: table.oracle_face(h) for h in top} for a in answers)
    assert table.openers(40) == {0, 1, 2}
    h = hands[0][0]
    assert table.openers(h) == {0}
    answers = _all(dealers, Transfer(h, 0, 2, "give"))
    assert answers == [{}, {}, {h: table.oracle_face(h)}]
    assert table.openers(h) == {2}


def test_private_reveal_rekeys_instead_of_leaking():
    table, dealers, hands = _dealt()
    h = hands[0][0]
    _all(dealers, Transfer(h, 0, 1, "give"))  # seat 0's token for the new card is public
    assert table.openers(h) == {1}
    # the card goes back to seat 0 without a Transfer (through a pile); seat 1 shows it
    # to seat 0 only: publishing seat 1's token now would open it for seat 2 too
    answers = _all(dealers, Reveal((h,), frozenset((0,)), "draw"))
    assert answers[0] == {h: table.oracle_face(h)} and answers[2] == {}
    assert table.openers(h) == {0}
    assert table.stats.rekeys == 1


def test_hand_proofs_true_claims_verify():
    table, dealers, hands = _dealt()
    hand = hands[1]
    faces = [table.oracle_face(h) for h in hand]
    for suit in range(4):
        count = sum(f.suit == suit for f in faces)
        _all(dealers, Prove(FewerOfSuit(1, hand, suit, count + 1)))
        if count:
            _all(dealers, Prove(AtLeastOfSuit(1, hand, suit, count)))
    _all(dealers, Prove(InSet(1, hand[0], frozenset({faces[0], Card(2, SPADES)}))))
    missing = next(c for c in DECK52 if c not in faces)
    _all(dealers, Prove(LacksCard(1, hand, missing)))
    assert table.stats.statements["FewerOfSuit"] == 4


def test_false_claims_name_the_prover():
    table, dealers, hands = _dealt()
    hand = hands[2]
    faces = [table.oracle_face(h) for h in hand]
    suit = faces[0].suit
    count = sum(f.suit == suit for f in faces)
    for st in (
        FewerOfSuit(2, hand, suit, count),
        AtLeastOfSuit(2, hand, suit, count + 1),
        InSet(2, hand[0], frozenset(c for c in DECK52 if c != faces[0])),
        LacksCard(2, hand, faces[3]),
    ):
        with pytest.raises(FalseClaim) as exc:
            dealers[0].fulfil(Prove(st))
        assert exc.value.seat == 2
        # every other engine gets the same verdict for this step
        for d in dealers[1:]:
            with pytest.raises(FalseClaim):
                d.fulfil(Prove(st))


def test_highest_given_verified_by_its_receiver():
    table, dealers, hands = _dealt()
    hand = hands[0]
    faces = {h: table.oracle_face(h) for h in hand}
    from engine.cards import slave_key

    order = sorted(hand, key=lambda h: slave_key(faces[h]), reverse=True)
    good = HighestGiven(0, tuple(order[:2]), tuple(order[2:]), "slave", 1)
    before = dict(table.seats[2].known)
    _all(dealers, Prove(good))
    # the verifier learnt the given cards (at the crypto level); the third seat did not
    assert all(table.seats[1].known[h] is not None for h in order[:2])
    assert table.seats[2].known == before
    bad = HighestGiven(0, tuple(order[1:3]), (order[0], *order[3:]), "slave", 1)
    with pytest.raises(FalseClaim) as exc:
        _all(dealers, Prove(bad))
    assert exc.value.seat == 0


def test_dice_and_picks_agree_and_are_in_range():
    table = MentalTable(3, (), insecure_seed=b"dice")
    dealers = [SeatDealer(table, s) for s in range(3)]
    seen = set()
    for _ in range(40):
        answers = _all(dealers, Roll(0, 5, 6))
        assert len(set(answers)) == 1
        assert all(1 <= v <= 6 for v in answers[0])
        seen.update(answers[0])
        picks = _all(dealers, JointRandom(7))
        assert len(set(picks)) == 1 and 0 <= picks[0] < 7
    assert seen == {1, 2, 3, 4, 5, 6}


def test_divergent_obligations_are_reported():
    table, dealers, hands = _dealt()
    dealers[0].fulfil(Reveal((30,), None))
    with pytest.raises(ObligationMismatch):
        dealers[1].fulfil(Reveal((31,), None))


def test_proof_about_unseen_card_cannot_be_made():
    table, dealers, hands = _dealt()
    with pytest.raises(CannotProve):
        dealers[0].fulfil(Prove(InSet(0, 45, frozenset(DECK52))))


# ---- cheats ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "what"),
    [("shuffle", "bad shuffle"), ("token", "bad reveal token")],
)
def test_cheat_in_the_deal_is_caught_and_named(kind, what):
    with pytest.raises(DealerCheat) as exc:
        _dealt(cheats={1: kind})
    assert exc.value.seat == 1
    assert exc.value.what == what


def test_bad_transfer_remask_is_caught():
    table, dealers, hands = _dealt(cheats={0: "remask"})
    with pytest.raises(DealerCheat) as exc:
        dealers[2].fulfil(Transfer(hands[0][0], 0, 1))
    assert (exc.value.seat, exc.value.what) == (0, "bad transfer remask")


def test_forged_hand_proof_is_caught():
    table, dealers, hands = _dealt(cheats={1: "hand-proof"})
    hand = hands[1]
    faces = [table.oracle_face(h) for h in hand]
    count = sum(f.suit == HEARTS for f in faces)
    with pytest.raises(DealerCheat) as exc:
        dealers[0].fulfil(Prove(FewerOfSuit(1, hand, HEARTS, count + 1)))  # true, forged proof
    assert (exc.value.seat, exc.value.what) == (1, "hand proof does not verify")


def test_bad_commitment_opening_is_caught():
    table = MentalTable(3, (), cheats={2: "commit"}, insecure_seed=b"c")
    with pytest.raises(DealerCheat) as exc:
        SeatDealer(table, 0).fulfil(Roll(0, 5))
    assert (exc.value.seat, exc.value.what) == (2, "bad commitment opening")


def test_cheating_seat_in_a_whole_game_is_named():
    with pytest.raises(DealerCheat) as exc:
        play_mental("slave", 4, {"games": 1}, seed=0, insecure_seed=b"x", cheats={3: "token"})
    assert exc.value.seat == 3


def test_operation_counts_of_a_public_reveal():
    table, dealers, hands = _dealt()
    COUNTERS.reset()
    _all(dealers, Reveal((45, 46, 47), None))
    # three seats each publish 3 tokens with one batched proof (1 base + 2n+1 mul),
    # verified by the two others (1 base + 2n+1 mul each), then each seat unmasks
    ops = COUNTERS.snapshot()
    assert ops["base_mul"] == 3 * (1 + 2)
    assert ops["mul"] == 3 * (2 * 3 + 1) * 3  # no extra mul to unmask: all tokens are public


# ---- a game that peeks is caught --------------------------------------------------------------


class _PeekingHighCard(HighCard):
    """Reads the next seat's hidden card when it emits its event (a rule bug that an
    omniscient local dealer never notices)."""

    def play_text(self, action, face):
        nxt = self.zones[f"hand:{(action.seat + 1) % self.seats}"]
        text = super().play_text(action, face)
        return text + f" (next seat holds {self.faces[nxt[0]]})" if nxt else text


def _spec(cls):
    return GameSpec(cls.NAME, lambda n, o=None: cls(n, o), cls, {"random": RandomBot}, 3)


def test_game_that_plays_by_the_rules_runs():
    r = play_mental(_spec(HighCard), 3, None, bot="random", insecure_seed=b"hc")
    assert r.engines[0].is_over()


def test_game_that_peeks_at_a_hidden_face_crashes_on_a_real_peer():
    with pytest.raises(KeyError):
        play_mental(_spec(_PeekingHighCard), 3, None, bot="random", insecure_seed=b"hc")


def test_lacks_card_costs_constant_work_per_card():
    # "I do not hold v" over HAND cards: one inequality proof per card (crypto.inequality)
    # made by seat 1 and verified by the two other seats, instead of an OR over the 51
    # other faces per card.
    table, dealers, hands = _dealt()
    hand = hands[1]
    missing = next(c for c in DECK52 if c not in {table.oracle_face(h) for h in hand})
    COUNTERS.reset()
    _all(dealers, Prove(LacksCard(1, hand, missing)))
    ops = COUNTERS.snapshot()
    verifiers = 2
    assert ops["mul"] == HAND * (3 + 4 * verifiers)
    assert ops["base_mul"] == HAND * (1 + verifiers)
    # X = c2 - (2 other tokens) per card, then 2 add per card to prove, 4 per verify
    assert ops["add"] == HAND * (2 + 2 + 4 * verifiers)
    # the OR over the other 51 faces (crypto.hand_proofs): N = 51 HAND leaves, R = HAND
    # true ones; prove R + 2 (N - R) mul, verify 3 N mul per verifier
    leaves = 51 * HAND
    or_mul = HAND + 2 * (leaves - HAND) + verifiers * 3 * leaves
    assert ops["mul"] * 30 < or_mul


def test_forged_lacks_card_proof_is_caught():
    table, dealers, hands = _dealt(cheats={2: "hand-proof"})
    hand = hands[2]
    missing = next(c for c in DECK52 if c not in {table.oracle_face(h) for h in hand})
    with pytest.raises(DealerCheat) as exc:
        dealers[1].fulfil(Prove(LacksCard(2, hand, missing)))  # true claim, replayed proof
    assert (exc.value.seat, exc.value.what) == (2, "hand proof does not verify")
