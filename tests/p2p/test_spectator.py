"""A spectator (``p2p.table.spectator``) follows a table's record with no seat, checks every
signature and proof as a seat does, and signs nothing (issue 20).

In process, over ``p2p.table.local_table`` (every seat's real protocol code): a spectator fed
every entry of whole games of Slave and Slaiga reaches the seats' ranking, state hash and
record head; one that starts mid-game from the record so far, and one fed the entries out of
order, agree too; a cheating seat is named by the spectator with the same kind, seat and step
as every honest seat and ``slaiga verify``.  And at every point of those games, everything a
spectator holds opens no card that is not public (the way ``test_game_privacy.py`` checks
seats).  Entry by entry, a live spectator blames only the link for what no seat of the table
signed, treats a broken chain as a fork to fetch, and convicts a seat's two versions of a step.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from crypto.errors import InvalidProof
from crypto.reveal import unmask
from engine import registry
from engine.game import CardView, Game
from engine.players import BotPlayer
from p2p.errors import CheatDetected
from p2p.record.chain import entry_hash, entry_signing_input
from p2p.record.store import RecordFile
from p2p.record.verify import verify_record_file
from p2p.table import local_table
from p2p.table.game_rule import SEALED_KIND
from p2p.table.seat import game_of
from p2p.table.spectator import Spectator, Update
from p2p.wire import Entry, Signed, decode_body, encode_body
from tests.p2p.cheaters import Cheater, lies

GAMES = [
    # the second deal opens with the exchange: gifts sealed to their receivers
    ("slave", {"games": 2}, {SEALED_KIND}),
    ("slaiga", {"max_turns": 60}, set()),
]
PRIVACY_EVERY = 40  # check a spectator's privacy after every 40th entry (and at the end)


def _step(raw: bytes) -> int:
    entry = decode_body(raw, Entry)
    assert isinstance(entry, Entry)
    return entry.step


def _cards_in(value: object) -> list[CardView]:
    """Every card a view shows (nested in tuples, lists, dicts and dataclass-like values)."""
    if isinstance(value, CardView):
        return [value]
    if isinstance(value, dict):
        return [c for v in value.values() for c in _cards_in(v)]
    if isinstance(value, (tuple, list)):
        return [c for v in value for c in _cards_in(v)]
    return []


def check_spectator_privacy(spectator: Spectator) -> int:
    """Everything the spectator holds (every token published for each card's current
    ciphertext, its engine, its views, its events) opens only public cards; returns how
    many cards it could open."""
    game = spectator.game
    if game is None or not game.cts:
        return 0
    assert game.mine is None  # no key share, no seal key, no table secret
    engine = game.engine
    opened = 0
    for h, ct in enumerate(game.cts):
        toks = game.ptok[h]
        point = unmask(ct, list(toks.values()))
        try:
            index = game.deck.index_of(point)
        except InvalidProof:
            index = None
        if index is None:
            assert len(toks) < game.n, f"#{h}: every token public, yet no card"
            continue
        # only a card every seat's token opens is open, and the rules made it public
        assert len(toks) == game.n, f"#{h} opens with {len(toks)} of {game.n} tokens"
        assert engine.is_public(h), f"the spectator opens #{h}, which is not public"
        assert engine.faces.get(h, game._face(index)) == game._face(index)
        opened += 1
    for h in engine.faces:
        assert engine.is_public(h), f"the spectator's engine knows #{h}, which is not public"
    for seat in range(game.n):
        for card in _cards_in(engine.view(seat)):
            if card.face is not None:
                assert engine.is_public(card.handle), f"seat {seat}'s view shows #{card.handle}"
    return opened


def _seat_results(table: local_table.LocalTable) -> set[tuple]:
    out = set()
    for r in table.records:
        res = game_of(r).result()
        out.add((tuple(res["ranking"]), res["state_hash"], r.head, r.step))
    return out


def _spectator_result(spectator: Spectator) -> tuple:
    res = spectator.result()
    assert res is not None
    return (tuple(res["ranking"]), res["state_hash"], spectator.head, spectator.step)


@pytest.mark.parametrize(("game", "options", "kinds"), GAMES, ids=[g[0] for g in GAMES])
def test_spectators_reach_the_seats_result_and_open_no_hidden_card(game, options, kinds):
    table = local_table.new_table(game, 4, options)
    live = Spectator(table.genesis)  # fed every entry as it is signed
    shuffled = Spectator(table.genesis)  # fed in bursts, each in reverse (held, released)
    late: list[Spectator] = []  # starts mid-game from a seat's record so far
    burst: list[Signed] = []
    opened = [0]
    rng = random.Random(7)

    def on_entry(t: local_table.LocalTable) -> None:
        signed = t.log[-1]
        update = live.offer(signed)
        assert update.failure is None, update.failure
        burst.append(signed)
        if len(burst) == 9:
            rng.shuffle(burst)
            for s in burst:
                assert shuffled.offer(s).failure is None
            burst.clear()
        if late:
            assert late[0].offer(signed).failure is None
        elif len(t.log) == 150:
            follower = Spectator(t.genesis)
            so_far = t.drivers[2].record.signed_from(1)
            updates = follower.offer_all(so_far)
            assert all(u.failure is None for u in updates)
            assert follower.step == t.records[2].step and follower.head == t.records[2].head
            late.append(follower)
        if len(t.log) % PRIVACY_EVERY == 0:
            for s in (live, shuffled, *late):
                opened[0] += check_spectator_privacy(s)

    local_table.run(table, on_entry=on_entry)
    assert not table.cheats and all(r.finished for r in table.records)
    for s in burst:
        shuffled.offer(s)
    assert late, "the game ended before the late spectator joined"
    (seats,) = _seat_results(table)
    for s in (live, shuffled, late[0]):
        assert s.finished and s.verdict is None
        assert _spectator_result(s) == seats
        check_spectator_privacy(s)
    # it checked every entry, and more proofs than any seat (a seat trusts its own)
    assert live.entries == len(table.log) == shuffled.entries
    assert live.proofs > max(game_of(r).proofs_checked for r in table.records)
    assert (
        live.status_line()
        == f"{len(table.log)} signatures and {live.proofs} proofs checked, no cheat"
    )
    assert opened[0] > 0, "no card was public at any check"
    assert kinds <= {decode_body(s.entry).body.TAG for s in table.log}


def _verdicts_of_seats(table: local_table.LocalTable, seen: list[tuple]) -> None:
    """(kind, culprit slot, step) of each conviction the seats reported so far."""
    for exc in table.cheats[len(seen) :]:
        assert isinstance(exc, CheatDetected)
        raw = exc.evidence[0] if exc.evidence else table.log[-1].entry
        seen.append((type(exc).__name__, exc.seat, _step(raw)))


def _verify_honest_file(table: local_table.LocalTable, slot: int, tmp_path: Path) -> tuple:
    """``slaiga verify`` on an honest seat's record file: what it accepted, then the
    evidence it kept (every entry of the table log that its record refused)."""
    path = tmp_path / f"seat{slot}.rec"
    rec = table.records[slot]
    with RecordFile.create(path, table.genesis) as store:
        kept = set()
        for signed in [*rec.signed_from(1), *table.log]:
            if entry_hash(signed.entry) not in kept:
                kept.add(entry_hash(signed.entry))
                store.append(signed)
    f = verify_record_file(path).failure
    assert f is not None
    return (f.kind, f.culprit, f.step)


def test_a_cheating_seat_is_named_with_the_seats_seat_and_step(tmp_path: Path) -> None:
    """A seat forges a reveal token (the catalogue's ``token``): the spectator names it with
    the kind, seat and step every honest seat names, and ``slaiga verify`` agrees."""
    cheat_slot = 1
    cheater = Cheater("token")
    table = local_table.new_table("slave", 4, {"games": 1}, cheats={cheat_slot: cheater})
    spectator = Spectator(table.genesis)
    seats: list[tuple] = []

    def on_entry(t: local_table.LocalTable) -> None:
        spectator.offer(t.log[-1])
        _verdicts_of_seats(t, seats)

    local_table.run(table, on_entry=on_entry)
    assert cheater.done and seats
    assert set(seats) == {("InvalidMove", cheat_slot, seats[0][2])}, seats
    v = spectator.verdict
    assert v is not None
    assert (v.kind, v.culprit, v.step) == seats[0]
    assert [e.entry for e in v.evidence] == [
        s.entry
        for s in table.log
        if _step(s.entry) == v.step and decode_body(s.entry, Entry).seat == cheat_slot
    ]
    assert "cheat proven: seat1" in spectator.status_line()
    honest = next(s for s in range(4) if s != cheat_slot)
    assert _verify_honest_file(table, honest, tmp_path) == seats[0]


class _Liar(BotPlayer):
    """A heuristic bot that tells the first lie it can (a claim only a later reveal shows
    false: the catalogue's ``late-lie``)."""

    def __init__(self, seat: int, public: Game) -> None:
        super().__init__(registry.get("slaiga").bots["heuristic"](seat, random.Random(seat)))
        self.public = public
        self.told = False

    def choose(self, game: Game, seat: int):
        if not self.told:
            found = lies(self.public, game, seat)
            if found:
                self.told = True
                return found[0]
        return super().choose(game, seat)


def test_a_lie_shown_later_is_named_at_its_action_step(tmp_path: Path) -> None:
    """A late verdict (found when a reveal completes, RECORD_FORMAT.md §9) names the liar
    at the step of its signed action, for the spectator as for the seats."""
    liar_slot = 0
    for seed in range(8):
        table = local_table.new_table("slaiga", 3)
        spectator = Spectator(table.genesis)
        liars: list[_Liar] = []

        def make_player(slot: int, seat: int, table=table, liars=liars):
            if slot != liar_slot:
                return None
            liars.append(_Liar(seat, table.drivers[slot].game.engine))
            return liars[0]

        local_table.run(
            table,
            seed=seed,
            make_player=make_player,
            max_entries=20_000,
            on_entry=lambda t, spectator=spectator: spectator.offer(t.log[-1]),
        )
        if liars and liars[0].told:
            break
    assert liars[0].told, "no lie came up"
    seats = {
        (type(r.verdict).__name__, r.verdict.seat, _step(r.verdict.evidence[0]))
        for i, r in enumerate(table.records)
        if i != liar_slot
    }
    (seat_verdict,) = seats
    v = spectator.verdict
    assert v is not None and (v.kind, v.culprit, v.step) == seat_verdict
    assert seat_verdict[1] == liar_slot
    assert _verify_honest_file(table, 1, tmp_path) == seat_verdict


# ---- what a live spectator blames, entry by entry (a High Card table: quick) ---------------


def _sign(key, entry: Entry) -> Signed:
    raw = encode_body(entry)
    return Signed(raw, key.sign(entry_signing_input(raw)))


@pytest.fixture(scope="module")
def high_card() -> local_table.LocalTable:
    table = local_table.run(local_table.new_table("high-card", 3))
    assert not table.cheats and all(r.finished for r in table.records)
    return table


def _following(table: local_table.LocalTable, upto: int) -> Spectator:
    spectator = Spectator(table.genesis)
    for signed in table.log[:upto]:
        assert spectator.offer(signed).failure is None
    return spectator


def _an_action(table: local_table.LocalTable) -> int:
    """The index in the log of the first action entry."""
    return next(i for i, s in enumerate(table.log) if decode_body(s.entry, Entry).kind == "action")


def test_an_envelope_no_seat_signed_blames_only_the_link(high_card) -> None:
    i = _an_action(high_card)
    spectator = _following(high_card, i)
    good = high_card.log[i]
    forged = Signed(good.entry, bytes([good.signature[0] ^ 1]) + good.signature[1:])
    update = spectator.offer(forged)
    assert update.verdict is None and update.junk and update.failure.culprit is None
    assert update.failure.kind == "ForgedSignature"
    # an entry of another table (the same players may have met before): no one here is blamed
    other = local_table.run(local_table.new_table("high-card", 3))
    update = spectator.offer(other.log[0])
    assert update.verdict is None and update.junk and update.failure.kind == "ForeignEntry"
    # junk bytes that do not decode and that no seat signed
    update = spectator.offer(Signed(b"\x93junk", bytes(64)))
    assert update.verdict is None and update.failure.culprit is None
    # and the table goes on: the spectator still agrees with the seats at the end
    for signed in high_card.log[i:]:
        assert spectator.offer(signed).failure is None
    (seats,) = _seat_results(high_card)
    assert spectator.verdict is None and _spectator_result(spectator) == seats


def test_a_broken_chain_is_a_fork_to_fetch_and_its_other_version_a_verdict(high_card) -> None:
    i = _an_action(high_card)
    spectator = _following(high_card, i)
    good = decode_body(high_card.log[i].entry, Entry)
    key = high_card.drivers[good.seat].identity
    # chained to a hash we do not know: maybe another fork of a split view; fetch, not blame
    forked = _sign(key, Entry(good.table_id, good.seat, good.step, bytes(32), good.body))
    update = spectator.offer(forked)
    assert update.verdict is None and update.suspect == good.seat
    assert update.failure.kind == "BrokenChain"
    # its other version of that step shows up (fetched, or relayed): both are signed by the
    # seat, so the split view is proven equivocation, with both envelopes as evidence
    update = spectator.offer(high_card.log[i])
    v = update.verdict
    assert v is not None and v is spectator.verdict
    assert (v.kind, v.culprit, v.step) == ("Equivocation", good.seat, good.step)
    assert {e.entry for e in v.evidence} == {high_card.log[i].entry, forked.entry}
    assert spectator.finished and "cheat proven" in spectator.status_line()
    # a convicted table is over: nothing more is taken
    assert spectator.offer(high_card.log[i + 1]) == Update()
