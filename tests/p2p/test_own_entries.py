"""Our own shuffle and reveal tokens are not decoded again when we sign them
(``GameRule._keep_own``/``_own_parsed``, p2p/table/game_rule/fold.py).

A seat that made a shuffle holds its output pile and proof as points already; signing
the entry used to decode and validate all of them again (about five points a card,
on the event loop, before the entry could leave: on every shuffle step of a deal's
critical path).  In-process tables (``p2p.table.local_table``); the tests count point
decodings, never time.
"""

from __future__ import annotations

from collections import Counter

import pytest

from crypto.group import COUNTERS
from p2p.table import local_table
from p2p.table.game_rule import ShuffleBody, TokensBody
from p2p.table.seat import game_of

GAME, SEATS, OPTIONS = "slave", 4, {"games": 1}


def _count_own_decodes(table, copy: bool = False) -> Counter:
    """Play ``table``; the point decodings done by signing our own shuffle and tokens
    entries, by kind (and how many were signed, under ``n_<kind>``).  With ``copy`` each
    such body is signed as an equal copy, not the object the rule made."""
    counts: Counter = Counter()
    for d in table.drivers:
        sign = d.sign

        def counted(body, sign=sign):  # noqa: ANN001, ANN202
            if isinstance(body, ShuffleBody | TokensBody):
                if copy:
                    body = type(body)(*(getattr(body, f) for f in body.__dataclass_fields__))
                before = COUNTERS.decode
                out = sign(body)
                counts[body.TAG] += COUNTERS.decode - before
                counts["n_" + body.TAG] += 1
                return out
            return sign(body)

        d.sign = counted
    local_table.run(table)
    assert not table.cheats and all(r.finished for r in table.records)
    heads = {r.head for r in table.records}
    assert len(heads) == 1
    return counts


def test_signing_our_own_shuffle_and_tokens_decodes_no_point():
    counts = _count_own_decodes(local_table.new_table(GAME, SEATS, OPTIONS))
    assert counts["n_shuffle"] == SEATS and counts["n_tokens"] >= SEATS
    assert counts["shuffle"] == 0
    assert counts["tokens"] == 0


def test_a_body_that_is_not_the_one_we_made_is_decoded_in_full():
    """An equal copy (as read back from our file after a crash) is not trusted by
    identity: it is decoded and validated like a peer's entry."""
    counts = _count_own_decodes(local_table.new_table(GAME, SEATS, OPTIONS), copy=True)
    cards = 52
    # the pile (2 points a card) and the proof's commitments (about 3 a card)
    assert counts["shuffle"] >= counts["n_shuffle"] * 5 * cards
    assert counts["tokens"] >= counts["n_tokens"]  # at least one token each


class _Started(Exception):
    pass


def _stop_once_started(table) -> None:  # noqa: ANN001
    if game_of(table.records[0]) is not None:
        raise _Started


def test_a_kept_body_is_used_once_and_only_at_its_step():
    table = local_table.new_table(GAME, SEATS, OPTIONS)
    with pytest.raises(_Started):
        local_table.run(table, on_entry=_stop_once_started)
    rule = game_of(table.records[0])
    assert rule is not None and rule.mine is not None
    body = TokensBody(b"", b"\0" * 64)
    rule._keep_own(body, ["parsed"])
    assert rule._own_parsed((rule.mine.seat + 1) % SEATS, body) is None  # not our seat
    assert rule._own_parsed(rule.mine.seat, TokensBody(b"", b"\0" * 64)) is None  # a copy
    rule._keep_own(body, ["parsed"])
    rule.step_no += 1
    assert rule._own_parsed(rule.mine.seat, body) is None  # another step
    rule.step_no -= 1
    rule._keep_own(body, ["parsed"])
    assert rule._own_parsed(rule.mine.seat, body) == ["parsed"]
    assert rule._own_parsed(rule.mine.seat, body) is None  # once
