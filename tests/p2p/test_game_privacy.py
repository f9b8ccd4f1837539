"""Privacy of a whole game: everything a peer received plus its own secrets opens exactly
the cards its seat was shown, and no other card.

Through a whole game of Slave (with its exchange, where each gift is sealed to its
receiver), Slaiga and Honest Slaiga (every seat's real protocol code,
``p2p.table.local_table``), at many points and at the end, for every seat and every
card: the seat combines every token it holds for the card's current ciphertext
(all that was published, and its own share).  If that opens the card, the seat's
own engine must be entitled to see it; if not, the combination must be no card
at all.  And every card the seat's engine was shown is one it opened itself.
"""

from __future__ import annotations

import pytest

from crypto.errors import InvalidProof
from crypto.group import mul
from crypto.reveal import unmask
from p2p.table import local_table
from p2p.table.game_rule import SEALED_KIND, SHUFFLE_KIND
from p2p.table.seat import game_of
from p2p.wire import decode_body

EVERY = 60  # check after every 60th entry (and at the end)


def check_privacy(table: local_table.LocalTable, cache: dict) -> None:
    for d in table.drivers:
        game = game_of(d.record)
        if game is None or game.mine is None or not game.cts:
            continue
        if game.need is not None and game.need.kind == SHUFFLE_KIND:
            continue  # mid-shuffle: cards are being re-keyed, the engine forgets at the end
        mine = game.mine
        engine = mine.engine
        for h, ct in enumerate(game.cts):
            key = (d.slot, ct.c1.data)
            own = cache.get(key)
            if own is None:
                own = cache[key] = mul(mine.secret, ct.c1)
            toks = dict(game.ptok[h])
            toks.setdefault(mine.seat, own)
            point = unmask(ct, list(toks.values()))
            try:
                index = game.deck.index_of(point)
            except InvalidProof:
                index = None
            if index is not None:
                assert len(toks) == game.n
                assert engine.visible(mine.seat, h), f"seat {mine.seat} can open #{h}"
                face = game._face(index)
                assert engine.faces.get(h, face) == face
            else:
                assert len(toks) < game.n, f"#{h}: every token, yet no card"
        for h in engine.faces:
            assert engine.visible(mine.seat, h)
            assert h in mine.known, f"seat {mine.seat}'s engine knows #{h} it never opened"


@pytest.mark.parametrize(
    ("game", "options", "proofs"),
    [
        # the second deal opens with the exchange: gifts sealed to their receivers
        ("slave", {"games": 2}, {SEALED_KIND}),
        ("slaiga", {"max_turns": 60}, set()),
        ("honest-slaiga", {"max_turns": 40}, set()),
    ],
)
def test_a_peer_opens_exactly_what_its_seat_was_shown(game, options, proofs):
    table = local_table.new_table(game, 4, options)
    cache: dict = {}
    count = [0]

    def on_entry(t):
        count[0] += 1
        if count[0] % EVERY == 0:
            check_privacy(t, cache)

    local_table.run(table, on_entry=on_entry)
    assert not table.cheats
    assert all(r.finished for r in table.records)
    check_privacy(table, cache)
    kinds = {decode_body(s.entry).body.TAG for s in table.log}
    assert proofs <= kinds, f"no {proofs - kinds} entry in this game"
