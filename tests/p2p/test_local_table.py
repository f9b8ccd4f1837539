"""A table in one process (``p2p.table.local_table``): every seat's real game-rule code, routed
in memory.

The game rule's cheat hooks (tests/p2p/cheaters.py) each make one seat's contribution
wrong; every honest seat must refuse it and name that seat.  A game whose rules read a
face its engine was never shown cannot run on a peer, where that face is not there.
And the mapping of engine faces to crypto card indices is one to one for every deck.
"""

from __future__ import annotations

import traceback

import pytest

from engine.cards import standard_deck
from engine.games.highcard.bots import HighestFirstBot
from engine.games.highcard.rules import HighCard
from engine.registry import GameSpec, register
from p2p.errors import FoldFailed, InvalidMove
from p2p.table import local_table
from p2p.table.faces import handle_indices, index_face
from p2p.table.seat import game_of
from tests.p2p.cheaters import Cheater

CHEAT_SLOT = 1

# kinds a seat's game rule signs by itself, each at a table where every seat gets the
# chance whatever the seat order: every seat shuffles and shows tokens in the deal, and
# every seat gives cards in Slave's exchange.  tests/p2p/test_cheats_procs.py plays
# every kind (malformed entries, false claims, decisions, sending) over processes.
RULE_CHEATS = (
    ("token", "slave", 4, {"games": 1}),
    ("shuffle-substitute", "slave", 4, {"games": 1}),
    ("remask", "slave", 4, {"games": 2}),  # every seat gives cards in the exchange
)


@pytest.mark.parametrize(("kind", "game", "seats", "options"), RULE_CHEATS)
def test_a_cheating_seat_is_named_by_every_honest_seat(kind, game, seats, options):
    cheater = Cheater(kind)
    table = local_table.new_table(game, seats, options, cheats={CHEAT_SLOT: cheater})
    local_table.run(table)
    assert cheater.done, f"{kind}: the cheating seat had no chance"
    assert {c.seat for c in table.cheats} == {CHEAT_SLOT}
    # every honest seat refused the bad entry (and maybe the ones after it, sent to a
    # table that had ended)
    assert sum(isinstance(c, InvalidMove) for c in table.cheats) == seats - 1, table.cheats
    assert not any(game_of(r).done for r in table.records)  # no seat signed a result


class PeekingHighCard(HighCard):
    """Reads the next seat's hidden card when it emits its event (a rule bug that a
    dealer who knows every face never notices)."""

    NAME = "peeking-high-card"

    def play_text(self, action, face):
        nxt = self.zones[f"hand:{(action.seat + 1) % self.seats}"]
        text = super().play_text(action, face)
        return text + f" (next seat holds {self.faces[nxt[0]]})" if nxt else text


PEEKING = register(
    GameSpec(
        PeekingHighCard.NAME,
        PeekingHighCard,
        PeekingHighCard,
        {"heuristic": HighestFirstBot},
        3,
        listed=False,
    )
)


def test_the_template_game_plays_to_the_end():
    table = local_table.run(local_table.new_table("high-card", 3))
    assert not table.cheats and all(r.finished for r in table.records)


def test_a_game_that_peeks_at_a_hidden_face_crashes_on_a_real_peer():
    table = local_table.new_table(PEEKING.name, 3)
    with pytest.raises(FoldFailed) as exc:
        local_table.run(table)
    # our own bug, never a peer's fault: the record keeps every entry and says so
    assert "KeyError" in str(exc.value) and "record file is intact" in str(exc.value)
    # the face it reads is one this peer's engine was never shown
    cause = exc.value.__cause__
    assert isinstance(cause, KeyError)
    assert cause.__traceback__ is not None
    frames = [f.name for f in traceback.extract_tb(cause.__traceback__)]
    assert frames[-1] == "play_text"


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


def test_only_the_first_draw_has_a_commit_round():
    """Each later draw's commitments ride in the previous draw's entries."""
    table = local_table.run(local_table.new_table("slajens", 3, {"rounds": 2}))
    kinds = [e.body.TAG for e in table.records[0].entries() if e.body.TAG in ("commit", "dice")]
    # three for the seat order (the table's forming), three for the first draw
    assert kinds.count("commit") == 6 and kinds[:6] == ["commit"] * 6
    assert kinds.count("dice") >= 3 * 2 * 2  # every seat, two rounds, at least two rolls


@pytest.mark.parametrize(
    ("game", "options", "bot"),
    [
        (
            "aight-of-spaides",
            {"max_turns": 40, "vote_threshold": "all", "caller_votes": False},
            "random",
        ),
        ("aight-of-spaides", {"max_turns": 40, "spend_several": True}, "random"),
        ("slajens", {"rounds": 2, "sjond": True, "steal_cap": "total"}, "heuristic"),
    ],
)
def test_the_later_table_options_play_on_the_real_path(game, options, bot):
    """The options a table chose after records were first signed (docs/rules/) play on the
    seats' real protocol code too, and every seat reaches the same end."""
    table = local_table.run(local_table.new_table(game, 3, options), bot=bot)
    assert not table.cheats and all(r.finished for r in table.records)
    engines = [game_of(r).engine for r in table.records]
    assert all(e.options[k] == v for e in engines for k, v in options.items())
    assert len({e.state_hash() for e in engines}) == 1
