"""Slave (docs/rules/slave.md): a scenario test per rule, random play, leaks, errors."""

import math
import random

import pytest

from engine import registry, runner
from engine.bots import RandomBot
from engine.cards import Card, cards, parse_card, slave_key
from engine.dealer import LocalDealer
from engine.errors import FalseClaim, NotYourTurn
from engine.games.slave.actions import Give, NotOpener, Pass, Play
from engine.games.slave.bots import SlaveHeuristicBot
from engine.games.slave.rules import ASCENDING, DESCENDING, Slave, beats, titles_for
from tests.engine._helpers import assert_resample_keeps_view, illegal, kinds

A, B, C, D = 0, 1, 2, 3

# A deal for four seats where A (seat 0) holds all 3s, 4s, 5s and Q♣.
HANDS_4 = [
    "3C 3D 3H 3S 4C 4D 4H 4S 5C 5D 5H 5S QC",
    "6C 6D 6H 7C 7D 7H 8C 8D 8H 9C 9D 9H 10C",
    "6S 7S 8S 9S 10D 10H 10S JC JD JH JS QD KC",
    "QH QS KD KH KS AC AD AH AS 2C 2D 2H 2S",
]


def stack(hands):
    """The first-shuffle order that deals ``hands`` (card i goes to seat i % n)."""
    hs = [cards(h) for h in hands]
    n = len(hs)
    total = sum(len(h) for h in hs)
    return [hs[i % n][i // n] for i in range(total)]


def new(hands=None, seats=4, games=1, seed=1, **opts):
    g = Slave(seats, {"games": games, **opts})
    d = LocalDealer(g.deck, seed, stacked=stack(hands) if hands else None)
    runner.start(g, d)
    return g, d


def handles(g, seat, text):
    """Handles of the named faces in ``seat``'s hand."""
    want = cards(text)
    by_face = {g.faces[h]: h for h in g.zones[f"hand:{seat}"]}
    return tuple(by_face[f] for f in want)


def play(g, d, seat, text):
    return runner.apply(g, d, Play(seat, handles(g, seat, text)))


# ---- card order and sets -------------------------------------------------------


def f(text):
    return cards(text)


def test_card_order_rank_then_suit():
    assert beats(f("2C"), f("AS")) and beats(f("2C"), f("KS"))
    assert not beats(f("AS"), f("2C"))
    assert beats(f("4C"), f("3S"))
    assert beats(f("3D"), f("3C")) and not beats(f("3C"), f("3D"))
    assert beats(f("JC JD"), f("10H 10S"))


def test_same_rank_pair_rule():
    assert beats(f("9H 9S"), f("9C 9D"))
    assert not beats(f("9D 9S"), f("9C 9H"))


def test_sets_need_same_size():
    assert not beats(f("4C 4D"), f("3S"))
    assert not beats(f("4C"), f("3S 3H"))
    assert not beats(f("AC AD AH"), f("3C 3D"))


def test_four_beats_any_single_but_not_pairs_or_triples():
    assert beats(f("7C 7D 7H 7S"), f("2S"))
    assert not beats(f("7C 7D 7H 7S"), f("2S 2H"))
    assert not beats(f("7C 7D 7H 7S"), f("2S 2H 2D"))
    assert beats(f("8C 8D 8H 8S"), f("7C 7D 7H 7S"))
    assert not beats(f("6C 6D 6H 6S"), f("7C 7D 7H 7S"))


def test_after_four_on_single_only_a_higher_four():
    hands = [
        "3C 4C 5C JC QC KC AC 2C 4D 4H 4S 10C 9C",
        "3D 5D 6D 7D 8D 9D 10D JD QD KD AD 2D 3S",
        "3H 5H 6H 7H 8H 9H 10H JH QH KH AH 2H 5S",
        "6S 7S 8S 9S 10S JS QS KS AS 2S 6C 7C 8C",
    ]
    g, d = new(hands)
    play(g, d, A, "3C")
    play(g, d, B, "2D")
    for s in (C, D):
        runner.apply(g, d, Pass(s))
    assert g.to_move() == (A,)
    # A answers the 2♦ with four 4s; B, C, D need a higher four now
    play(g, d, A, "4C 4D 4H 4S")
    assert g.to_move() == (B,)
    assert g.legal_actions(B) == [Pass(B)]
    illegal(g, Play(B, handles(g, B, "AD")), match="does not beat")


@pytest.mark.parametrize(
    ("old", "new_pair", "ok"),
    [
        ("9C 9D", "9H 9S", True),  # the rules: 9♥9♠ beats 9♣9♦
        ("9C 9H", "9D 9S", False),  # ... but 9♦9♠ does not beat 9♣9♥
        ("9D 9H", "9C 9S", False),  # 9♣ is below both old suits
        ("9C 9S", "9D 9H", False),  # 9♠ is above both new suits
    ],
)
def test_same_rank_pair_rule_in_play(old, new_pair, ok):
    rest_a = "3C 3D 3H 3S 4C 4D 4H 4S 5C 5D QC"
    rest_b = "6C 6D 6H 7C 7D 7H 8C 8D 8H 10C 5H"
    hands = [
        f"{rest_a} {old}",
        f"{new_pair} {rest_b}",
        "6S 7S 8S 10D 10H 10S JC JD JH JS QD KC 5S",
        "QH QS KD KH KS AC AD AH AS 2C 2D 2H 2S",
    ]
    g, d = new(hands)
    play(g, d, A, "3C 3D 3H 3S")
    for s in (B, C, D):
        runner.apply(g, d, Pass(s))
    play(g, d, A, old)  # A leads the old pair on a new pile
    pair = Play(B, handles(g, B, new_pair))
    assert (pair in g.legal_actions(B)) == ok
    if ok:
        play(g, d, B, new_pair)
        assert g.view(C)["last"] == B
    else:
        illegal(g, pair, match="does not beat")
        assert g.legal_actions(B) == [Pass(B)]  # B's other pairs are 6s-8s, all lower


# ---- opening -------------------------------------------------------------------


def test_first_deal_opens_with_three_of_clubs_and_opener_may_not_pass():
    hands = list(HANDS_4)
    hands[0], hands[2] = hands[2], hands[0]  # C now holds 3♣
    g, d = new(hands)
    assert g.to_move() == (A,) and g.legal_actions(A) == [NotOpener(A)]
    runner.apply(g, d, NotOpener(A))
    assert g.legal_actions(B) == [NotOpener(B)]
    runner.apply(g, d, NotOpener(B))
    assert g.to_move() == (C,)
    legal = g.legal_actions(C)
    threes = handles(g, C, "3C 3D 3H 3S")
    assert len(legal) == 8 and all(threes[0] in a.cards for a in legal)
    illegal(g, Pass(C), match="Pass is not allowed")
    illegal(g, Play(C, handles(g, C, "3D")), match="opens with 3♣")
    illegal(g, NotOpener(C), match="must open")
    ev = play(g, d, C, "3C 3D")
    assert kinds(ev) == ["play"] and "3♣ 3♦" in ev[0].text
    assert g.to_move() == (D,) and g.phase == "play"


def test_not_opener_is_proved():
    hands = list(HANDS_4)
    hands[0], hands[1] = hands[1], hands[0]  # B holds 3♣
    g, d = new(hands)
    # a peer that cannot see A's hand cannot pre-check; the proof catches a lie
    for h in g.zones["hand:0"]:
        g.seen[h] = 0
    g.apply(NotOpener(A))
    runner.settle(g, d)
    hands[0], hands[1] = hands[1], hands[0]  # A holds 3♣ again
    g, d = new(hands)
    for h in g.zones["hand:0"]:
        g.seen[h] = 0
    g.apply(NotOpener(A))
    with pytest.raises(FalseClaim):
        runner.settle(g, d)


# ---- passing, clearing, reversal ---------------------------------------------------


def reach_last_card(hands):
    g, d = new(hands)
    for quad in ("3C 3D 3H 3S", "4C 4D 4H 4S", "5C 5D 5H 5S"):
        play(g, d, A, quad)
        evs = []
        for s in (B, C, D):
            evs += runner.apply(g, d, Pass(s))
        assert "clear" in kinds(evs) and g.to_move() == (A,)
    return g, d


def test_worked_reversal_example():
    g, d = reach_last_card(HANDS_4)
    ev = play(g, d, A, "QC")  # 1. A plays Q♣ as their last card
    assert "out" in kinds(ev)
    assert g.to_move() == (B,)
    ev = runner.apply(g, d, Pass(B))  # 2. B cannot beat it and passes: reversal
    assert "reversal" in kinds(ev) and g.direction == DESCENDING
    assert g.to_move() == (D,)  # 3. back from B, skipping A (out), to D
    legal = g.legal_actions(D)  # 4. D must beat Q♣ or pass: not a new pile
    assert Pass(D) in legal
    assert all(g.faces[a.cards[0]].rank in (12, 13, 14, 2) for a in legal if isinstance(a, Play))
    assert Play(D, handles(g, D, "QH")) in legal
    assert [str(c) for c in g.view(D)["top"]] == ["Q♣"]
    runner.apply(g, d, Pass(D))
    assert g.to_move() == (C,)
    ev = runner.apply(g, d, Pass(C))
    # everyone passed; the last player is out, so the next seat in the
    # current (descending) direction from A leads
    assert "clear" in kinds(ev) and "reversal" not in kinds(ev)
    assert g.to_move() == (D,) and g.direction == DESCENDING


def test_reversal_watches_the_next_player_who_may_still_play():
    g, d = new(HANDS_4)
    for quad in ("3C 3D 3H 3S", "4C 4D 4H 4S"):
        play(g, d, A, quad)
        for s in (B, C, D):
            runner.apply(g, d, Pass(s))
    play(g, d, A, "QC")
    runner.apply(g, d, Pass(B))  # nobody went out: no reversal
    runner.apply(g, d, Pass(C))
    assert g.direction == ASCENDING
    play(g, d, D, "2C")
    ev = play(g, d, A, "5C 5D 5H 5S")  # four on a single, A's last cards
    assert "out" in kinds(ev) and g.to_move() == (D,)  # B and C passed: D is watched
    ev = runner.apply(g, d, Pass(D))
    assert "reversal" in kinds(ev) and g.direction == DESCENDING
    # everyone passed; A is out, so the next seat with cards from A in the new
    # (descending) direction leads: D, not B
    assert "clear" in kinds(ev) and g.to_move() == (D,)
    play(g, d, D, "QH")
    assert g.to_move() == (C,)


def test_out_lead_option_previous():
    g, d = reach_last_card(HANDS_4)
    g.options["out_lead"] = "previous"
    play(g, d, A, "QC")
    for s in (B, D, C):
        runner.apply(g, d, Pass(s))
    assert g.to_move() == (B,)


def test_no_reversal_when_next_player_beats_and_passing_locks_out():
    hands = list(HANDS_4)
    hands[1] = hands[1].replace("10C", "KC")
    hands[2] = hands[2].replace("KC", "10C")
    g, d = reach_last_card(hands)
    play(g, d, A, "QC")
    play(g, d, B, "KC")  # B beats: this going-out causes no reversal
    ev = runner.apply(g, d, Pass(C))
    assert "reversal" not in kinds(ev) and g.direction == ASCENDING
    play(g, d, D, "AC")
    assert g.to_move() == (B,)  # A out; C passed on this pile and is skipped
    ev = runner.apply(g, d, Pass(B))
    assert "clear" in kinds(ev) and "reversal" not in kinds(ev)
    assert g.to_move() == (D,)  # the last player leads the new pile


def test_leader_must_play_and_everyone_rejoins_new_pile():
    g, d = new(HANDS_4)
    play(g, d, A, "3C 3D 3H 3S")
    for s in (B, C, D):
        runner.apply(g, d, Pass(s))
    assert g.view(B)["passed"] == () and g.view(B)["top"] == ()
    illegal(g, Pass(A), match="leader of a new pile must play")
    assert Pass(A) not in g.legal_actions(A)
    play(g, d, A, "4C")
    assert g.to_move() == (B,)  # B passed on the last pile, takes part again


# ---- titles, exchange, later deals, topple, match ----------------------------------


def test_titles():
    assert titles_for((2, 0, 3, 1)) == {2: "KING", 0: "QUEEN", 3: "VICE SLAVE", 1: "SLAVE"}
    t5 = titles_for((4, 3, 2, 1, 0))
    assert t5 == {4: "KING", 3: "QUEEN", 2: "PEOPLE", 1: "VICE SLAVE", 0: "SLAVE"}
    t6 = titles_for((0, 1, 2, 3, 4, 5))
    assert [t6[s] for s in range(6)].count("PEOPLE") == 2


def play_first_deal(seats=5, games=2, seed=3):
    g = Slave(seats, {"games": games})
    d = LocalDealer(g.deck, seed)
    runner.start(g, d)
    bots = [RandomBot(s, random.Random(s)) for s in range(seats)]
    while g.phase != "exchange":
        s = g.to_move()[0]
        runner.apply(g, d, bots[s].act(g.view(s), g.legal_actions(s)))
    return g, d


def test_exchange_secret_highest_cards_then_slave_leads_away_from_king():
    g, d = play_first_deal()
    placement = g.placements[0]
    king, queen, vice, slave = placement[0], placement[1], placement[-2], placement[-1]
    assert g.view(0)["titles"][king] == "KING" and g.view(0)["titles"][slave] == "SLAVE"
    hand = list(g.zones[f"hand:{slave}"])
    best = sorted(hand, key=lambda h: slave_key(g.faces[h]))
    top2 = tuple(sorted(best[-2:]))
    assert g.to_move() == (slave,)
    assert [a.cards for a in g.legal_actions(slave)] == [top2]
    wrong = tuple(sorted((best[0], best[-1])))
    illegal(g, Give(slave, wrong), match="highest")
    illegal(g, Give(slave, top2[:1]), match="exactly 2")
    # one canonical order: a list that ranks the given cards is refused
    illegal(g, Give(slave, top2[::-1]), match="ascending")
    illegal(g, Play(slave, top2[:1]), match="Play is not allowed")
    ev = runner.apply(g, d, Give(slave, top2))
    secret = [e for e in ev if e.kind == "exchange"]
    assert secret and secret[0].audience == {slave, king}
    assert all(g.zones.where(h) == f"hand:{king}" for h in top2)
    others = [s for s in range(5) if s not in (slave, king)]
    assert all(g.face_for(s, h) is None for s in others for h in top2)
    # KING returns any 2 of its choice
    assert g.to_move() == (king,)
    kl = g.legal_actions(king)
    assert len(kl) == math.comb(len(g.zones[f"hand:{king}"]), 2)
    back = kl[-1]
    runner.apply(g, d, back)
    assert all(g.zones.where(h) == f"hand:{slave}" for h in back.cards)
    assert g.to_move() == (vice,)
    ev = runner.apply(g, d, g.legal_actions(vice)[0])
    assert g.to_move() == (queen,)
    ev += runner.apply(g, d, g.legal_actions(queen)[0])
    for e in ev:  # faces only to giver and receiver; the public learns counts
        if e.kind == "exchange":
            assert e.audience == {vice, queen}
        else:
            assert e.audience is None and "♣" not in e.text and "♠" not in e.text
            assert "♦" not in e.text and "♥" not in e.text
    assert g.phase == "play" and g.to_move() == (slave,)
    up = (king - slave) % 5
    assert g.direction == (ASCENDING if up > 5 - up else DESCENDING)
    illegal(g, Pass(slave), match="must play")


def test_highest_given_is_proved_when_unseen():
    g, d = play_first_deal()
    slave = g.placements[0][-1]
    hand = sorted(g.zones[f"hand:{slave}"], key=lambda h: slave_key(g.faces[h]))
    for h in hand:  # as on a peer that cannot see SLAVE's hand
        g.seen[h] = 0
    g.apply(Give(slave, tuple(sorted((hand[0], hand[1])))))
    with pytest.raises(FalseClaim):
        runner.settle(g, d)


@pytest.mark.parametrize(
    ("seats", "slave", "king", "tie", "want"),
    [
        (5, 0, 1, "ascending", DESCENDING),
        (5, 0, 4, "ascending", ASCENDING),
        (4, 1, 3, "ascending", ASCENDING),
        (4, 1, 3, "descending", DESCENDING),
        (6, 2, 5, "descending", DESCENDING),
        (6, 2, 4, "descending", DESCENDING),
    ],
)
def test_direction_away_from_king(seats, slave, king, tie, want):
    g = Slave(seats, {"tie_direction": tie})
    g.emit = lambda *a, **k: None
    from engine.games.slave.rules import Exchange

    g.king = king
    g.exchanges = (Exchange(slave, king, 2, True),)
    g._start_play()
    assert g.direction == want and g.current == slave


def test_king_topple_and_match_of_games():
    topples = 0
    for seed in range(40):
        g = Slave(4, {"games": 3})
        d = LocalDealer(g.deck, seed)
        bots = [RandomBot(s, random.Random(seed + s)) for s in range(4)]
        seen_topple = []
        shown: set[tuple[int, int, int]] = set()  # (deal, seat, card) a seat gave away

        def on_event(ev, g=g, seen_topple=seen_topple, shown=shown):
            if ev.kind == "exchange":
                # the giver saw the cards it gave; they may lie face down after a topple
                receiver = next(iter(set(ev.audience) - {ev.seat}))
                for h in g.zones[f"hand:{receiver}"]:
                    if g.face_for(ev.seat, h) is not None:
                        shown.add((g.game_no, ev.seat, h))
            if ev.kind == "topple":
                king = ev.seat
                assert g.toppled == king and king not in g.active
                assert len(g.zones["facedown"]) > 0 and not g.zones[f"hand:{king}"]
                for h in g.zones["facedown"]:
                    assert all(
                        g.face_for(s, h) is None or (g.game_no, s, h) in shown
                        for s in range(4)
                        if s != king
                    )
                seen_topple.append((g.game_no, king))

        r = runner.play(g, d, bots, on_event=on_event)
        assert len(g.placements) == 3 and r.events["title"] == 3
        for n, placement in enumerate(g.placements[1:], start=2):
            king = g.placements[n - 2][0]
            if placement[0] != king:
                assert (n, king) in seen_topple and placement[-1] == king
            else:
                assert (n, king) not in seen_topple
        topples += len(seen_topple)
        pts = [0] * 4
        for p in g.placements:
            for i, s in enumerate(p):
                pts[s] += 3 - i
        assert r.outcome.scores == tuple(pts)
        assert [pts[s] for s in r.outcome.ranking] == sorted(pts, reverse=True)
    assert topples > 0


def test_king_topple_scenario_cards_face_down_and_king_is_slave_next():
    g, d = play_first_deal(seats=4, games=3, seed=5)
    king, queen, vice, slave = g.placements[0]
    while g.phase == "exchange":
        s = g.to_move()[0]
        if s == vice:  # VICE SLAVE must give its highest card too
            hand = sorted(g.zones[f"hand:{s}"], key=lambda h: slave_key(g.faces[h]))
            illegal(g, Give(s, (hand[-2],)), match="highest")
        runner.apply(g, d, g.legal_actions(s)[0])
    assert g.to_move() == (slave,) and g.king == king
    king_hand = set(g.zones[f"hand:{king}"])
    known_before = {h: g.seen[h] for h in king_hand}  # KING; SLAVE knows the 2 it gave
    # SLAVE leads each of its ranks as a whole group; everyone else passes
    while g.zones[f"hand:{slave}"]:
        by_rank = {}
        for h in g.zones[f"hand:{slave}"]:
            by_rank.setdefault(g.faces[h].rank, []).append(h)
        group = next(iter(by_rank.values()))
        ev = runner.apply(g, d, Play(slave, tuple(group)))
        if not g.zones[f"hand:{slave}"]:
            break
        while g.to_move() != (slave,):
            ev = runner.apply(g, d, Pass(g.to_move()[0]))
    assert "topple" in kinds(ev) and g.toppled == king
    # the KING's cards leave face down: moved, never revealed, still secret
    assert set(g.zones["facedown"]) == king_hand and not g.zones[f"hand:{king}"]
    assert {h: g.seen[h] for h in king_hand} == known_before
    assert all(g.face_for(s, h) is None for s in (queen, vice) for h in king_hand)
    assert not any(e.kind == "play" and e.seat == king for e in ev)
    assert king not in g.active and king not in g.to_move()
    assert g.view(queen)["hand_sizes"][king] == 0 and g.view(queen)["toppled"] == king
    # the others play on for the remaining titles
    assert g.out == [slave] and g.phase == "play" and g.active == {queen, vice}
    while g.game_no == 2:
        s = g.to_move()[0]
        runner.apply(g, d, g.legal_actions(s)[0])
    placement = g.placements[1]
    assert placement[0] == slave and placement[-1] == king
    assert titles_for(placement)[king] == "SLAVE"
    # deal 3: the toppled KING is SLAVE, gives its two highest to the new KING
    assert g.phase == "exchange" and g.to_move() == (king,) and g.exchanges[0].receiver == slave
    assert g.king == slave


# ---- random play, leaks, determinism, errors --------------------------------------


def check_invariants(g, d):
    runner.check_conservation(g, d)
    sizes = [len(g.zones[f"hand:{s}"]) for s in range(g.seats)]
    other = sum(len(g.zones[z]) for z in ("pile", "discard", "facedown", "deck"))
    assert sum(sizes) + other == 52
    for s in g.out:
        assert sizes[s] == 0
    if g.phase == "opening" or (g.phase == "exchange" and g.exchange_no == 0):
        assert max(sizes) - min(sizes) <= 1 and sum(sizes) == 52
    top = [g.faces[h] for h in g.top]
    assert len(top) <= 4 and len({c.rank for c in top}) <= 1


def test_random_play_thousands_of_deals():
    deals = 0
    for seed in range(700):
        seats = 4 + seed % 3
        games = 1 if seed % 10 else 4
        g = Slave(seats, {"games": games})
        d = LocalDealer(g.deck, seed)
        bots = [RandomBot(s, random.Random(seed * 7 + s)) for s in range(seats)]
        r = runner.play(g, d, bots, check=lambda g, d=d: check_invariants(g, d))
        assert not r.outcome.draw and sorted(r.outcome.ranking) == list(range(seats))
        deals += len(g.placements)
    assert deals >= 900


def test_heuristic_bots_play_to_the_end():
    for seed in range(50):
        g = Slave(5, {"games": 2})
        d = LocalDealer(g.deck, seed)
        bots = [SlaveHeuristicBot(s, random.Random(s)) for s in range(5)]
        r = runner.play(g, d, bots, check=lambda g, d=d: check_invariants(g, d))
        assert len(r.outcome.ranking) == 5


def test_leak_resample_keeps_view_and_legal_actions():
    rng = random.Random(9)
    for seed in range(60):
        g = Slave(5, {"games": 2})
        d = LocalDealer(g.deck, seed)
        runner.start(g, d)
        bot = random.Random(seed)
        stop = rng.randrange(1, 400)
        for _ in range(stop):
            if g.is_over():
                break
            s = g.to_move()[0]
            runner.apply(g, d, bot.choice(g.legal_actions(s)))
        for seat in range(5):
            assert_resample_keeps_view(g, d, seat, rng)


def test_determinism_and_public_hash():
    def run(seed):
        g = Slave(5, {"games": 2})
        d = LocalDealer(g.deck, seed)
        return runner.play(g, d, [RandomBot(s, random.Random(s)) for s in range(5)]).state_hash

    assert run(4) == run(4)
    assert new(seed=1)[0].state_hash() == new(seed=2)[0].state_hash()


def test_illegal_actions_raise_and_leave_state():
    g, d = new(HANDS_4)
    illegal(g, Play(B, handles(g, B, "6C")), NotYourTurn)
    play(g, d, A, "3C")
    a_hand = handles(g, A, "4C")
    illegal(g, Play(B, a_hand), match="do not hold")
    illegal(g, Play(B, handles(g, B, "6C") * 2), match="twice")
    illegal(g, Play(B, handles(g, B, "6C 7C")), match="one rank")
    illegal(g, Play(B, handles(g, B, "6C 6D")), match="does not beat")
    illegal(g, Play(B, ()), match="1-4")
    illegal(g, Play(B, (999,)), match="field 'cards' item 0 must be an integer in 0..51")
    # malformed wire data from a peer is an IllegalAction too, never a TypeError
    assert g.zones["hand:1"][0] == 1  # handle 1 is B's 6♣, which would beat 3♣
    illegal(g, Play(B, (True,)), match="field 'cards' item 0 must be an integer")
    illegal(g, Play(B, ({},)), match="field 'cards' item 0 must be an integer")
    illegal(g, Play(B, ("1",)), match="field 'cards' item 0 must be an integer")
    illegal(g, Play(B, (None, 1)), match="field 'cards' item 0 must be an integer")
    illegal(g, Give(B, handles(g, B, "6C")), match="Give is not allowed")
    illegal(g, NotOpener(B), match="NotOpener is not allowed")
    runner.apply(g, d, Pass(B))
    assert g.to_move() == (C,)
    illegal(g, Pass(B), NotYourTurn)
    g2, d2 = new(HANDS_4)
    while not g2.is_over():
        s = g2.to_move()[0]
        runner.apply(g2, d2, g2.legal_actions(s)[0])
    illegal(g2, Pass(0), match="over")


def test_options_are_validated_and_registered():
    from engine.errors import BadOption

    with pytest.raises(BadOption, match="ascending, descending"):
        Slave(4, {"tie_direction": "left"})
    with pytest.raises(BadOption, match="options are"):
        Slave(4, {"game": 3})
    spec = registry.get("slave")
    assert spec.factory(5, {"games": "2"}).options["games"] == 2
    assert set(spec.bots) == {"random", "heuristic"}


def test_face_helpers():
    assert parse_card("10C") == Card(10, 0)
