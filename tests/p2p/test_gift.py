"""The sealed Slave gift (``HighestGiven``): what it hides, and who is convicted when a
gift is disputed.

Every seat's real protocol code in one process (``p2p.local_table``).  A gift box
must tell the seats that do not receive it nothing about the cards inside (every
entry they see has one size, whatever the hands), and every complaint about a
gift is settled from the record alone: the giver shows the box's one-time key,
so anyone opens the box as its receiver did and convicts whoever lied.
``slaiga verify`` reaches the same verdict, and lists each gift that only its
receiver checked as a caveat.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import msgpack
import pytest

from engine import registry
from engine.cards import slave_key
from p2p import local_table
from p2p.errors import InvalidMove
from p2p.game_rule import (
    ACTION_KIND,
    SEALED_KIND,
    UNSEAL_KIND,
    VERDICT_KIND,
    GameRule,
    SeatKeys,
)
from p2p.record import Record
from p2p.seat import SeatDriver, game_of, rule_factory
from p2p.store import RecordFile
from p2p.verify import verify_record_file
from p2p.wire import decode_body, encode_body
from tests.p2p.cheaters import Cheater, force_signing, make_bot

REPO = Path(__file__).resolve().parents[2]


def _entries(table: local_table.LocalTable) -> list:
    """(entry, bytes of its body, bytes of its signature) for every entry of the table:
    the entry's header (step, chain hash) is the same size for every body."""
    out = []
    for s in table.log:
        e = decode_body(s.entry)
        out.append((e, len(encode_body(e.body)), len(s.signature)))
    return out


def _exchange_shapes(table: local_table.LocalTable) -> list[list[tuple[str, int, int]]]:
    """Per proven gift: (kind, seat, bytes) of the entries from the giver's ``Give``
    action through the receiver's verdict."""
    entries = _entries(table)
    shapes = []
    for i, (e, _, _) in enumerate(entries):
        if e.body.TAG != SEALED_KIND:
            continue
        start = max(j for j in range(i) if entries[j][0].body.TAG == ACTION_KIND)
        stop = next(j for j in range(i, len(entries)) if entries[j][0].body.TAG == VERDICT_KIND)
        shapes.append([(x.body.TAG, x.seat, n) for x, n, _ in entries[start : stop + 1]])
    return shapes


def _note_lowest_given(lows: list[int]):
    """An ``on_entry`` hook: at each sealed gift, note the key of its lowest card (read
    from the giver's own secrets)."""

    def on_entry(table: local_table.LocalTable) -> None:
        e = decode_body(table.log[-1].entry)
        if e.body.TAG != SEALED_KIND:
            return
        give = [
            x for x in map(decode_body, (s.entry for s in table.log)) if x.body.TAG == ACTION_KIND
        ][-1]
        game = game_of(table.drivers[e.seat].record)
        assert isinstance(game, GameRule) and game.mine is not None and give.seat == e.seat
        action = game.mine.engine.decode_action(msgpack.unpackb(give.body.action))
        lows.append(min(slave_key(game._face(game.mine.known[h])) for h in action.cards))

    return on_entry


def test_every_gift_entry_has_one_size_whatever_the_hands():
    """Hole: the box's length (and the proof's) gave away the lowest given card."""
    shapes: list[list[tuple[str, int, int]]] = []
    lows: list[int] = []
    table = local_table.new_table("slave", 4, {"games": 4})
    local_table.run(table, on_entry=_note_lowest_given(lows))
    assert not table.cheats
    shapes += _exchange_shapes(table)
    assert len(shapes) == 6  # three later deals, two proven gifts each
    assert len(set(lows)) > 2, f"the hands gave too few different lowest gifts: {lows}"
    # each deal: the SLAVE's gift to the KING (2 cards), then the VICE SLAVE's to the
    # QUEEN (1 card); each has one shape and size, whatever the hands
    by_kind: dict[int, set] = {}
    for i, shape in enumerate(shapes):
        by_kind.setdefault(i % 2, set()).add(tuple((k, n) for k, _, n in shape))
    for sizes in by_kind.values():
        assert len(sizes) == 1, f"gift entries differ in size across hands: {sizes}"
    sealed = {n for shape in shapes for k, _, n in shape if k == SEALED_KIND}
    assert len(sealed) == 2  # one size for a 2-card gift, one for a 1-card gift


def _cheat_table(kind: str, seats: int = 4, games: int = 3):
    """A Slave table where every seat carries the cheat ``kind`` (it fires at its first
    chance, whoever gets it first); returns the table and the cheaters."""
    genesis, ids, seals = local_table.game_genesis("slave", seats, {"games": games})

    cheaters = [Cheater(kind) for _ in range(seats)]
    drivers = []
    for slot in range(seats):
        keys = SeatKeys(slot, ids[slot], seals[slot], bytes([slot + 1]) * 32, cheaters[slot])
        record = Record(genesis, rule_factory(keys))
        force_signing(record)
        drivers.append(SeatDriver(record, ids[slot], slot))
    table = local_table.LocalTable(genesis, drivers)
    spec = registry.get("slave")

    def player(slot: int, seat: int):
        return make_bot(spec, seat, cheaters[slot], lambda: game_of(drivers[slot].record))

    return table, cheaters, player


def _gift_steps(table) -> dict[str, list]:
    out: dict[str, list] = {}
    for e, _, _ in _entries(table):
        out.setdefault(e.body.TAG, []).append(e)
    return out


def _write_record(table, slot: int, path: Path) -> Path:
    """Seat ``slot``'s record file as its node writes it: the entries it accepted, then
    (as evidence) any signed entry it refused."""
    accepted = table.records[slot].signed_from(1)
    kept = {s.signature for s in accepted}
    with RecordFile.create(path, table.genesis) as f:
        for signed in accepted + [s for s in table.log if s.signature not in kept]:
            f.append(signed)
    return path


def _convicted(table, culprit_slot: int, step: int, tmp_path: Path) -> None:
    honest = [d.slot for d in table.drivers if d.slot != culprit_slot]
    named = {}
    for exc in table.cheats:
        assert isinstance(exc, InvalidMove), exc
        named.setdefault(exc.seat, []).append(exc)
    assert set(named) == {culprit_slot}, table.cheats
    for slot in honest:
        path = _write_record(table, slot, tmp_path / f"seat{slot}.rec")
        report = verify_record_file(path)
        assert report.failure is not None
        assert report.failure.culprit == culprit_slot, report.failure
        assert report.failure.step == step, report.failure


@pytest.mark.parametrize("kind", ["gift-junk", "gift-wrong-key", "gift-not-highest"])
def test_a_giver_who_seals_a_false_gift_is_convicted(kind, tmp_path):
    """Hole: junk in the box ended the table as a blameless Dispute."""
    table, cheaters, player = _cheat_table(kind)
    local_table.run(table, make_player=player)
    steps = _gift_steps(table)
    sealed = steps[SEALED_KIND][0]
    assert steps[VERDICT_KIND][0].body.accept is False
    unseal = steps[UNSEAL_KIND][0]
    assert unseal.seat == sealed.seat
    _convicted(table, sealed.seat, unseal.step, tmp_path)
    reason = str(table.cheats[0])
    if kind == "gift-wrong-key":
        assert "one-time key" in reason
    else:
        assert "sealed gift" in reason and "is false" in reason


def test_a_receiver_who_falsely_complains_is_convicted(tmp_path):
    """Hole: a KING's "does not open" about an honest gift ended the table, blaming
    nobody (and live peers branded the honest giver)."""
    table, cheaters, player = _cheat_table("false-complaint")
    local_table.run(table, make_player=player)
    steps = _gift_steps(table)
    verdict = steps[VERDICT_KIND][-1]
    assert verdict.body.accept is False
    unseal = steps[UNSEAL_KIND][0]
    _convicted(table, verdict.seat, unseal.step, tmp_path)
    assert "false complaint" in str(table.cheats[0])


def test_verify_lists_each_gift_checked_by_its_receiver_alone(tmp_path):
    """Hole: a KING colluding with the SLAVE may accept junk; the record said only ok."""
    table = local_table.run(local_table.new_table("slave", 4, {"games": 2}))
    assert not table.cheats
    path = _write_record(table, 0, tmp_path / "t.rec")
    report = verify_record_file(path)
    assert report.ok
    gifts = [e for e, _, _ in _entries(table) if e.body.TAG == SEALED_KIND]
    assert [(c.step, c.seat) for c in report.caveats] == [(e.step, e.seat) for e in gifts]
    out = subprocess.run(
        [sys.executable, "-m", "cli.verify", "verify", str(path), "--json"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert len(data["caveats"]) == 2
    for c, e in zip(data["caveats"], gifts, strict=True):
        assert c["kind"] == "gift" and c["step"] == e.step
        assert "alone" in c["message"]
    human = subprocess.run(
        [sys.executable, "-m", "cli.verify", "verify", str(path)],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    assert human.returncode == 0
    assert human.stdout.count("checked by its receiver alone") == 2, human.stdout
