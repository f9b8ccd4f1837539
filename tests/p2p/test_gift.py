"""The sealed Slave gift (``HighestGiven``): what it hides, and who is convicted when a
gift is disputed.

Every seat's real protocol code in one process (``p2p.table.local_table``).  A gift box
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

from crypto.seal import _seal_with_key, open_with_shown_key, openable_key
from engine import registry
from engine.cards import slave_key
from p2p.errors import CheatDetected, InvalidMove
from p2p.record.chain import Record, entry_signing_input
from p2p.record.verify import verify_record_file
from p2p.table import local_table
from p2p.table.forming import table_rule
from p2p.table.game_rule import (
    ACTION_KIND,
    SEALED_KIND,
    UNSEAL_KIND,
    VERDICT_KIND,
    GameRule,
    SealedProofBody,
    SeatKeys,
    UnsealBody,
    VerdictBody,
)
from p2p.table.game_rule.core import derive
from p2p.table.game_rule.gift import GIFT_KEY_DOMAIN, seal_context
from p2p.table.seat import SeatDriver, game_of, rule_factory
from p2p.wire import Entry, Signed, decode_body, encode_body
from tests.p2p._tables import write_seat_record
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


@pytest.fixture(scope="module")
def honest_table() -> tuple[local_table.LocalTable, list[int]]:
    """One honest Slave table of four deals played to its end (three exchanges, six proven
    gifts), and the key of each gift's lowest card: shared by the tests that only read it."""
    lows: list[int] = []
    table = local_table.new_table("slave", 4, {"games": 4})
    local_table.run(table, on_entry=_note_lowest_given(lows))
    assert not table.cheats
    return table, lows


def test_every_gift_entry_has_one_size_whatever_the_hands(honest_table):
    """Hole: the box's length (and the proof's) gave away the lowest given card."""
    table, lows = honest_table
    shapes: list[list[tuple[str, int, int]]] = []
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


def _convicted(table, culprit_slot: int, step: int, tmp_path: Path) -> None:
    honest = [d.slot for d in table.drivers if d.slot != culprit_slot]
    named = {}
    for exc in table.cheats:
        assert isinstance(exc, InvalidMove), exc
        named.setdefault(exc.seat, []).append(exc)
    assert set(named) == {culprit_slot}, table.cheats
    for slot in honest:
        path = write_seat_record(table, slot, tmp_path / f"seat{slot}.rec")
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


def test_verify_lists_each_gift_checked_by_its_receiver_alone(honest_table, tmp_path):
    """Hole: a KING colluding with the SLAVE may accept junk; the record said only ok."""
    table, _ = honest_table
    path = write_seat_record(table, 0, tmp_path / "t.rec")
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
    assert len(data["caveats"]) == len(gifts) == 6  # two gifts in each of three exchanges
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
    assert human.stdout.count("checked by its receiver alone") == len(gifts), human.stdout


# ---- every field of the gift entries, tampered: the record alone convicts ----


@pytest.fixture(scope="module")
def honest_gift(honest_table):
    """The shared honest Slave table up to its first gift: the entries before it, the sealed
    gift, the receiver's slot, the keys and the giver's table secret."""
    table, _ = honest_table
    entries = [decode_body(s.entry) for s in table.log]
    at = next(i for i, e in enumerate(entries) if e.body.TAG == SEALED_KIND)
    receiver = next(e.seat for e in entries[at:] if e.body.TAG == VERDICT_KIND)
    giver = entries[at].seat
    game = game_of(table.drivers[giver].record)
    assert game is not None and game.mine is not None
    return {
        "genesis": table.genesis,
        "before": table.log[:at],
        "sealed": entries[at],
        "giver": giver,
        "receiver": receiver,
        "ids": {d.slot: d.identity for d in table.drivers},
        "secret": game.mine.keys.table_secret,
    }


def _replay(g) -> Record:
    """A fresh verifier's record (no seat, as ``slaiga verify``) up to the gift."""
    rec = Record(g["genesis"], table_rule)
    for signed in g["before"]:
        rec.offer(signed)
    return rec


def _offer(g, rec: Record, slot: int, body) -> CheatDetected | None:
    entry = Entry(rec.table_id, slot, rec.step, rec.head, body)
    raw = encode_body(entry)
    signed = Signed(raw, g["ids"][slot].sign(entry_signing_input(raw)))
    try:
        offer = rec.offer(signed)
    except CheatDetected as exc:
        return exc
    return offer.cheats[0] if offer.cheats else None


def _gift_parts(g, rec: Record) -> tuple[bytes, bytes, bytes]:
    """The honest gift box's one-time key, the context and its plaintext."""
    rule = game_of(rec)
    assert rule is not None
    step = g["sealed"].step
    p, v = rule.engine_seat_of[g["giver"]], rule.engine_seat_of[g["receiver"]]
    ctx = seal_context(rule, step, p, v)
    key = openable_key(derive(g["secret"], GIFT_KEY_DOMAIN, step), ctx)
    receiver = rec.manifest.seats[g["receiver"]].seal_key
    return key, ctx, open_with_shown_key(key, receiver, g["sealed"].body.sealed, ctx)


def _tampered_boxes(g):
    box = g["sealed"].body.sealed
    yield "one byte longer", box + b"\0"
    yield "one byte shorter", box[:-1]
    yield "another version", bytes([1]) + box[1:]
    small = bytes([1]) + bytes(31)  # the X25519 point of order 4 (u = 1)
    yield "one-time key of small order", box[:1] + small + box[33:]


def test_a_gift_box_of_the_wrong_shape_convicts_its_giver_at_once(honest_gift):
    for what, box in _tampered_boxes(honest_gift):
        rec = _replay(honest_gift)
        step = rec.step
        exc = _offer(honest_gift, rec, honest_gift["giver"], SealedProofBody(box))
        assert isinstance(exc, CheatDetected), what
        assert exc.seat == honest_gift["giver"] and rec.step == step, what


def _dispute(g, box: bytes, key: bytes | None = None) -> CheatDetected | None:
    """Offer ``box`` as the gift, a complaint, and the giver's shown key."""
    rec = _replay(g)
    assert _offer(g, rec, g["giver"], SealedProofBody(box)) is None
    assert _offer(g, rec, g["receiver"], VerdictBody(False)) is None
    if key is None:
        key = _gift_parts(g, rec)[0]
    return _offer(g, rec, g["giver"], UnsealBody(key))


def test_a_complaint_about_an_honest_gift_convicts_the_receiver(honest_gift):
    exc = _dispute(honest_gift, honest_gift["sealed"].body.sealed)
    assert isinstance(exc, InvalidMove) and exc.seat == honest_gift["receiver"]
    assert "false complaint" in str(exc)


def test_a_wrong_key_shown_convicts_the_giver(honest_gift):
    rec = _replay(honest_gift)
    key = _gift_parts(honest_gift, rec)[0]
    wrong = key[:5] + bytes([key[5] ^ 1]) + key[6:]
    exc = _dispute(honest_gift, honest_gift["sealed"].body.sealed, wrong)
    assert isinstance(exc, CheatDetected) and exc.seat == honest_gift["giver"]


def test_each_field_of_the_sealed_plaintext_tampered_convicts_the_giver(honest_gift):
    rec = _replay(honest_gift)
    key, ctx, plain = _gift_parts(honest_gift, rec)
    receiver = rec.manifest.seats[honest_gift["receiver"]].seal_key
    # the giver's tokens (32 bytes a given card: none of them is public in Slave), their
    # DLEQ proof (64), then the inequality proof: in Slave (4 seats, 13 cards each) the
    # padded forbidden list and the 13 - given other cards make 52 blinded points (the
    # list padded to 52 - rest), then the challenge and two responses (32 bytes each)
    given = (len(plain) - 64 - 32 * 52 - 96) // 32
    assert given in (1, 2) and len(plain) == 32 * given + 64 + 32 * 52 + 96
    proof_at = 32 * given + 64
    pad_to = 52 - (13 - given)
    fields = {
        "a reveal token": 0,
        "the DLEQ proof": 32 * given + 40,
        "a blinded forbidden card": proof_at + 5,
        "a padding entry of the forbidden list": proof_at + 32 * (pad_to - 1) + 7,
        "a blinded held card": proof_at + 32 * pad_to + 5,
        "the inequality challenge": proof_at + 32 * 52 + 3,
        "a response": len(plain) - 1,
    }
    for what, pos in fields.items():
        bad = bytearray(plain)
        bad[pos] ^= 0x01
        box = _seal_with_key(receiver, bytes(bad), ctx, key)
        exc = _dispute(honest_gift, box)
        assert isinstance(exc, InvalidMove), what
        assert exc.seat == honest_gift["giver"], (what, exc)
        assert "is false" in str(exc), (what, exc)
    # the same plaintext sealed again is still the honest gift: the complainer lies
    exc = _dispute(honest_gift, _seal_with_key(receiver, plain, ctx, key))
    assert isinstance(exc, InvalidMove) and exc.seat == honest_gift["receiver"]
    # a box that does not open under its own key (sealed for another context)
    exc = _dispute(honest_gift, _seal_with_key(receiver, plain, ctx + b"x", key))
    assert isinstance(exc, InvalidMove) and exc.seat == honest_gift["giver"]
