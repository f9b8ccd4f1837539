"""Issue 18, the table players enjoy: history, typing, player words, bots that slip.

Unit tests of the screen and prompt code and of the bots (cheap: no terminal, no
network); the tmux tests drive the same code through a real terminal.
"""

from __future__ import annotations

import contextlib
import random
from collections import Counter

import pytest

from cli.human import HumanPlayer, PlayerQuit
from cli.menus import MoveError
from cli.moves import take_cards
from cli.narrate import Names, words
from cli.render import event_lines, plain, render_page
from cli.screen import Prompter
from cli.verify import lead_line
from engine import registry, runner
from engine.cards import parse_card
from engine.dealer import LocalDealer
from engine.games.aight.actions import ProposeEnd
from engine.games.aight.bots import HeuristicBot
from engine.games.slave.rules import set_problem
from engine.words.moves import one_card
from p2p.record.verify import Failure, SeatInfo, VerifyReport
from tests.cli._screens import FakeTerminal
from tests.cli.test_human import seat_person

# ---- history ----------------------------------------------------------------------------


def test_events_since_your_last_move_have_a_heading_that_says_how_to_read_them_all():
    events = [f"event {i}" for i in range(30)]
    lines = [x.plain for x in event_lines(events, 80, 5, since=12)]
    assert lines[0] == "Since your last move: 12 events (PgUp or `log`: all)"
    assert lines[1:] == ["· event 26", "· event 27", "· event 28", "· event 29"]
    few = [x.plain for x in event_lines(events, 80, 5, since=2)]
    assert few[0] == "Since your last move: 2 events"
    # older events are still shown, dimmed, under the ones since your move
    assert few[-2:] == ["· event 28", "· event 29"]
    styles = [x.style for x in event_lines(events, 80, 5, since=2)]
    assert styles[-1] != "dim" and styles[-3] == "dim"
    assert [x.plain for x in event_lines(events, 80, 3)] == [
        "· event 27",
        "· event 28",
        "· event 29",
    ]
    assert event_lines(events, 80, 3, since=2, moved=False)[0].plain == "So far: 2 events"


def test_pgup_pgdn_and_typed_log_open_the_log():
    p = Prompter(_choice(), "Q", lambda t: (_ for _ in ()).throw(MoveError("no")))
    assert p.key("pgup") == ("log",)
    assert p.key("pgdn") == ("log",)
    for k in "log":
        p.key(k)
    assert p.key("enter") == ("log",)


def test_the_log_page_opens_at_the_newest_events():
    body = [f"event {i}" for i in range(100)]
    first, pages = render_page("Log", body, 0, 80, 24)
    last, _ = render_page("Log", body, 10**9, 80, 24)
    assert pages > 1 and "event 99" in plain(last) and "event 99" not in plain(first)


async def test_a_person_reads_the_whole_log_with_pgup_during_a_game():
    seen: list[str] = []

    def person(player):
        if player.prompter is None:
            return []
        if not seen:
            seen.append("asked")
            return ["pgup"]
        if len(seen) == 1:
            seen.append(plain(player.term.frames[-1]))
            return ["esc", *"quit", "enter", "y"]
        return []

    term = FakeTerminal(person=person)
    human, table, players = seat_person("slave", 4, {"games": 1}, 3, term, answer_timeout=0)
    from cli.play import local_backend

    with contextlib.suppress(PlayerQuit):
        await local_backend(players, table)
    log = seen[1]
    assert log.startswith("Log: every event so far, newest last (page")
    assert human.events[-1] in log or human.events[-2] in log


async def test_the_heading_stays_until_the_person_moves_then_counts_afresh():
    moves = []

    def person(player):
        if player.prompter is None:
            return []
        moves.append(player.since)
        if len(moves) >= 3:
            return [*"quit", "enter", "y"]
        return ["enter"]

    term = FakeTerminal(person=person)
    human, table, players = seat_person("slaiga", 3, {}, 2, term, answer_timeout=0)
    from cli.play import local_backend

    with contextlib.suppress(PlayerQuit):
        await local_backend(players, table)
    assert moves[0] > 0 and all(n > 0 for n in moves)  # others moved between our questions
    assert human.since < len(human.events)  # counted from our last answer, not from the start


# ---- typing --------------------------------------------------------------------------------


def _choice():
    from cli.menus import Choice, Option

    return Choice("Q", [Option("a", ("A",)), Option("b", ("B",))])


def test_refused_text_is_selected_so_typing_replaces_it():
    p = Prompter(_choice(), "Q", lambda t: (_ for _ in ()).throw(MoveError("bad move")))
    for k in "9h 9s":
        p.key(k)
    assert p.key("enter") is None and p.message == "bad move"
    assert p.input == "9h 9s" and p.view().marked
    p.key("2")  # the next move typed replaces the refused one, it is not appended
    assert p.input == "2" and not p.marked
    for k in "xx":
        p.key(k)
    p.key("enter")
    p.key("left")  # an arrow first keeps the text, to mend it
    p.key("y")
    assert p.input == "2xxy"


def test_cards_not_held_and_cards_named_twice_are_said_plainly():
    pool = {1: parse_card("9c"), 2: parse_card("7s"), 3: parse_card("Kd")}
    with pytest.raises(MoveError, match="^you do not hold 7♥$"):
        take_cards(["7h"], pool)
    with pytest.raises(MoveError, match="^9♣ named twice$"):
        take_cards(["9c", "9c"], pool)
    assert take_cards(["9c", "ks"], {**pool, 4: parse_card("Ks")}) == [1, 4]


def test_slave_refuses_give_outside_the_exchange():
    spec = registry.get("slave")
    game = spec.factory(4, {"games": 1})
    runner.start(game, LocalDealer(game.deck, 1))
    seat = game.to_move()[0]
    assert game.view(seat)["phase"] != "exchange"
    moves = registry_moves("slave", seat)
    card = next(c.face for c in game.view(seat)["hand"])
    code = str(card)[:-1] + {"♣": "c", "♦": "d", "♥": "h", "♠": "s"}[str(card)[-1]]
    with pytest.raises(MoveError, match="give is for the exchange"):
        moves.parse(game, seat, f"give {code}")


def registry_moves(game: str, seat: int):
    from cli.moves import moves_for

    return moves_for(game, Names(["Ann", "Bob", "Cat", "Dan"], seat))


def test_engine_text_becomes_plain_english():
    assert words("concedes after 1 shot(s)") == "concedes after 1 shot"
    assert words("3 card(s), 2 shot(s)") == "3 cards, 2 shots"
    assert words("play a A on a 8, or a 11") == "play an A on an 8, or an 11"
    assert words("a 9 and a King") == "a 9 and a King"


# ---- verify ------------------------------------------------------------------------------------


def _report(**kw) -> VerifyReport:
    seats = (SeatInfo(1, 1, "Ann", "aa"), SeatInfo(2, 0, "Bob", "bb"))
    return VerifyReport(path="x.rec", table_id="ab", game="slave", seats=seats, **kw)


def test_verify_leads_with_one_plain_line():
    ok = _report(is_game=True, finished=True, ranking=(1, 0), seat_order=(1, 0))
    assert lead_line(ok) == "✓ This game is genuine: nobody cheated; Bob won"
    cut = _report(is_game=True, failure=Failure("Unfinished", "stops", None, None, 9))
    assert "damaged or cut short" in lead_line(cut) and lead_line(cut).startswith("✗")
    cheat = _report(is_game=True, failure=Failure("Equivocation", "two entries", 0, 0, 3))
    assert lead_line(cheat).startswith("✗ Cheating proven: Bob")
    waiting = _report(is_game=True, finished=False, waiting_on=(0,))
    assert lead_line(waiting).endswith("(waiting for Bob)")


# ---- bots that slip, and suggestions that never do ---------------------------------------------


def _aight(bots, turns=80, seed=5):
    g = registry.get("aight-of-spaides").factory(len(bots), {"max_turns": turns})
    return g, runner.play(g, LocalDealer(g.deck, seed), bots)


def test_the_default_aight_bot_makes_human_mistakes_that_can_be_called():
    slips = Counter()
    for seed in range(3):
        bots = [HeuristicBot(s, random.Random(seed * 10 + s), end_after=1000) for s in range(4)]
        _, r = _aight(bots, seed=seed)
        slips.update(r.events)
    assert slips["improper:right"] + slips["improper:uncalled"] > 0
    careful = Counter()
    for seed in range(3):
        bots = [
            HeuristicBot(s, random.Random(seed * 10 + s), end_after=1000, mistake_rate=0)
            for s in range(4)
        ]
        careful.update(_aight(bots, seed=seed)[1].events)
    assert careful["improper:right"] == 0 and careful["improper:uncalled"] == 0


def test_bots_do_not_propose_the_end_every_turn():
    # seat 0 never wants to end (votes no), the others want to from turn 10
    bots = [HeuristicBot(0, random.Random(0), end_after=10**6)]
    bots += [HeuristicBot(s, random.Random(s), end_after=10) for s in (1, 2)]
    g, r = _aight(bots, turns=130)
    assert g.turns >= 100
    # each of two proposers at most once per 20 turns after turn 10
    assert 1 <= r.events["end:proposed"] <= 2 * ((g.turns - 10) // 20 + 1)


def test_the_suggested_move_is_never_a_proposal_to_end():
    spec = registry.get("aight-of-spaides")
    g = spec.factory(3, {"max_turns": 200})
    d = LocalDealer(g.deck, 1)  # a deal that runs past turn 60, when bots propose the end
    runner.start(g, d)
    bots = [HeuristicBot(s, random.Random(s), end_after=10**6) for s in range(3)]
    human = HumanPlayer(["Ann", "Bob", "Cat"], 0, "aight-of-spaides", terminal=FakeTerminal())
    checked = 0
    while not g.is_over() and checked < 5:
        s = g.to_move()[0]
        legal = g.legal_actions(s)
        if s == 0 and ProposeEnd(0) in legal and g.turns >= 60 and g.phase == "turn":
            human.hint_bot.proposed_at = None
            assert human.hint_bot.act(g.view(0), legal) == ProposeEnd(0)  # what the bot says
            assert human._hint(g, 0, legal) != ProposeEnd(0)  # and what is preselected
            checked += 1
        runner.apply(g, d, bots[s].act(g.view(s), legal))
    assert checked


# ---- rules pages -------------------------------------------------------------------------------


@pytest.mark.parametrize("game", registry.names())
def test_every_table_option_is_on_its_rules_page(game):
    """Every option `slaiga options GAME` lists is named on the game's page, in the
    page's options table (`name` | default | meaning)."""
    from cli.rules import rules_text

    page = rules_text(game)
    rows = {line.split("|")[1].strip() for line in page.splitlines() if line.startswith("| `")}
    missing = [o.name for o in registry.get(game).game_class.OPTIONS if f"`{o.name}`" not in rows]
    assert not missing, f"docs/rules/{game}.md does not list {missing}"
    # a house choice (the original rules silent) is marked * as the table's choice
    cells = {
        line.split("|")[1].strip(): line.split("|")[2]
        for line in page.splitlines()
        if line.startswith("| `")
    }
    unmarked = [
        o.name
        for o in registry.get(game).game_class.OPTIONS
        if "[house]" in o.help and f"`{o.name}`" in cells and "*" not in cells[f"`{o.name}`"]
    ]
    assert not unmarked, f"docs/rules/{game}.md does not mark {unmarked} as the table's choice"


def test_dice_are_named_one_way_by_value_and_keep_all_stops():
    from cli.menus import Pick

    spec = registry.get("slajens")
    game = spec.factory(2, {"rounds": 1})
    d = LocalDealer(game.deck, 2)
    runner.start(game, d)
    seat = game.to_move()[0]
    runner.apply(game, d, game.legal_actions(seat)[0])  # roll the five dice
    moves = registry_moves("slajens", seat)
    dice = game.view(seat)["dice"]
    menu = moves.menu(game, seat)
    assert isinstance(menu, Pick) and menu.typed == "keep"
    p = Prompter(menu, "Q", lambda t: moves.parse(game, seat, t))
    value = dice[-1]  # typed numbers are die values (as in `keep 6 6 1`), not positions
    for k in str(value):
        p.key(k)
    kind, plan = p.key("enter")
    assert kind == "plan" and [dice[i] for i in plan[0].keep] == [value]
    assert type(moves.parse(game, seat, "keep all")[0]).__name__ == "Stop"


def test_your_face_down_cards_are_marked_face_down_to_the_others():
    """In a Slaiga volley your own face-down shot shows its face to you, in brackets."""
    import re

    spec = registry.get("slaiga")
    marked = 0
    for seed in range(2):
        game = spec.factory(3, {})
        d = LocalDealer(game.deck, seed)
        runner.start(game, d)
        bots = [spec.bots["heuristic"](s, random.Random(seed + s), bluff=0.5) for s in range(3)]
        human = HumanPlayer(["Ann", "Bob", "Cat"], 0, "slaiga", terminal=FakeTerminal())
        human.game = game
        for _ in range(300):
            if game.is_over():
                break
            secret = human._secret(game)
            text = plain(human.screen())
            shown = {m for m in re.findall(r"\[([^\]]+)\]", text) if m.strip()}
            want = {str(game.face_for(0, h)) for h in secret}
            assert shown == want, (shown, want, text)
            for h in secret:  # really seen by us and not by everyone
                assert game.face_for(0, h) is not None and not game.is_public(h)
            marked += bool(secret)
            s = game.to_move()[0]
            runner.apply(game, d, bots[s].act(game.view(s), game.legal_actions(s)))
    assert marked, "no deal put a face-down card of ours on the table"


# ---- player words for the table's own news, and first steps ------------------------------------


def test_node_events_in_player_words():
    from cli.netplay import player_event_text
    from p2p.table.events import (
        Formed,
        RecordFinished,
        Resuming,
        SeatFinished,
        SeatRecovered,
        SeatStalled,
    )

    stalled = SeatStalled(name="Bob", seat=1, slot=2, step=17, silent_for=60.04)
    assert player_event_text(stalled, None) == "waiting for Bob (silent 60 s, may have left)"
    assert player_event_text(SeatRecovered(name="Bob", seat=1, slot=2), None) == "Bob is back"
    formed = player_event_text(Formed(table_id="ab", slot=3), None)
    assert "slot" not in formed and "player" in formed
    assert player_event_text(SeatFinished(name="Bob", seat=1, slot=2, step=9), None) is None
    assert player_event_text(RecordFinished(steps=9, head="ff"), None) is None  # no "head"
    resuming = player_event_text(Resuming(entries=1263, torn_bytes=0), None)
    assert resuming == "going back to the table from its record (1263 signatures)"
    torn = player_event_text(Resuming(entries=1, torn_bytes=7), None)
    assert "entries" not in torn and "torn" not in torn and "half written" in torn


def test_the_name_is_asked_once_then_remembered(tmp_path, monkeypatch):
    from cli import state

    answers = iter(["  Zoe  "])
    monkeypatch.setattr("builtins.input", lambda prompt: next(answers))
    monkeypatch.setenv("USER", "root")
    assert state.player_name(tmp_path, None, ask=True) == "Zoe"
    # next time: not asked (input would raise StopIteration), the name is remembered
    assert state.player_name(tmp_path, None, ask=True) == "Zoe"
    assert state.player_name(tmp_path, "Ann", ask=True) == "Ann"  # --name wins and is kept
    assert state.player_name(tmp_path, None, ask=False) == "Ann"


def test_typed_card_mistakes_say_what_would_work():
    """ "pass pass" once answered "not a card: 'pass'", "1 2" "name one card, like 9d"."""
    pool = {1: parse_card("9c"), 2: parse_card("7s"), 3: parse_card("Kd")}
    with pytest.raises(MoveError, match="^pass is a move, not a card: type pass alone"):
        take_cards(["pass", "pass"], pool)
    with pytest.raises(MoveError, match="^1 2 are not cards: name one card by rank and suit"):
        one_card(["1", "2"], pool)
    with pytest.raises(MoveError, match=r"^name just one card, like 9d \(not 2: 9c 7s\)$"):
        one_card(["9c", "7s"], pool)


def test_a_mixed_slave_set_is_listed_in_rank_order():
    """It once read "a set must be of one rank: 10♦ 10♣ Q♦ 10♠"."""
    faces = [parse_card(c) for c in ("10d", "10c", "Qd", "10s")]
    assert set_problem(faces) == "a set must be of one rank: 10♣ 10♦ 10♠ Q♦"
