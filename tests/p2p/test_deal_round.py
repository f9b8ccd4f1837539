"""A deal is one round: every hand is shown to its seat by one ``tokens`` round, where each
seat's entry holds its tokens for the cards of all the other hands (``engine.obligations.
Deal``, ``p2p.table.game_rule.reveal.deal``), not one round a hand."""

from __future__ import annotations

import pytest

from p2p.table import local_table
from p2p.table.seat import game_of
from p2p.wire import Entry, decode_body

HAND = {"slave": 13, "slaiga": 6, "aight-of-spaides": 8}


@pytest.mark.parametrize("game", sorted(HAND))
def test_the_first_deal_is_one_tokens_round(game: str) -> None:
    seats = 4
    table = local_table.new_table(game, seats, {"games": 1} if game == "slave" else None)
    # play entry by entry until the first action, and look at what came before it
    kinds: list[tuple[int, str, int]] = []
    for _ in range(100):
        moved = False
        for d in table.drivers:
            body = d.next_body(lambda engine, seat: None)
            if body is None:
                continue
            signed = d.sign(body).accepted[0].signed
            for other in table.drivers:
                if other is not d:
                    other.record.offer(signed)
            entry = decode_body(signed.entry, Entry)
            kinds.append((entry.step, entry.body.TAG, len(getattr(entry.body, "tokens", b""))))
            moved = True
        if not moved or any(k == "action" for _, k, _ in kinds):
            break
    last_shuffle = max(s for s, k, _ in kinds if k == "shuffle")
    deal_step = last_shuffle + 1
    dealt = [(s, n) for s, k, n in kinds if k == "tokens" and s == deal_step]
    # the step after the last shuffle deals every hand; what follows before the first
    # action is not a deal (Slaiga and Aight then turn a card up: a public reveal)
    later = [(s, n) for s, k, n in kinds if k == "tokens" and s > deal_step]
    assert all(n // 32 <= 1 for _, n in later), kinds
    # every seat's entry: its tokens for the cards of the three other hands
    assert sorted(n // 32 for _, n in dealt) == [3 * HAND[game]] * seats
    for d in table.drivers:
        rule = game_of(d.record)
        assert rule is not None and len(rule.mine.known) >= HAND[game]
