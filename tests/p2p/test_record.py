"""The signed record: ordering, held/duplicate entries, and every cheat named.

Peers here are in-memory Record objects exchanging Signed envelopes through
lists, in randomised orders, with duplicates; no network.
"""

from __future__ import annotations

import random

import msgpack
import pytest

from crypto.identity import IdentityKey
from p2p.errors import (
    BrokenChain,
    CheatDetected,
    Equivocation,
    ForeignEntry,
    ForgedSignature,
    Impersonation,
    InvalidGenesis,
    InvalidMove,
    LocalProtocolError,
    MalformedEntry,
    OutOfTurn,
    RemoteProtocolError,
    Replay,
)
from p2p.record.chain import (
    MAX_HELD_BYTES_PER_SEAT,
    MAX_HELD_ENTRY_BYTES,
    MAX_HELD_PER_SEAT,
    Record,
    Status,
    entry_signing_input,
    step_hash,
)
from p2p.table.demo import Count, DemoRule, Echo
from p2p.table.forming import (
    Manifest,
    Opening,
    new_table_id,
    open_genesis,
    seat_order_commit,
    sign_manifest,
)
from p2p.wire import (
    PROTOCOL_VERSION,
    Entry,
    Genesis,
    Member,
    Sealed,
    Signed,
    decode_body,
    encode_body,
    fetched_batches,
)
from tests.p2p._tables import Table, advance_to_demo


@pytest.mark.parametrize("n", [3, 5, 8])
def test_peers_with_random_delivery_end_identical(n):
    t = Table(n, steps=200, round_every=7)
    t.run(random.Random(n))
    heads = {r.head for r in t.records}
    assert len(heads) == 1
    ref = list(t.records[0].entries())
    assert len(ref) == 2 * n + 200 - 200 // 7 + (200 // 7) * n
    for r in t.records[1:]:
        assert list(r.entries()) == ref
        assert r.rule.seat_order == t.records[0].rule.seat_order
    assert sorted(t.records[0].rule.seat_order) == list(range(n))
    assert t.records[0].rule.next_rule.count == 200 - 200 // 7


def test_seat_order_depends_on_every_reveal():
    orders = set()
    for _ in range(12):
        t = Table(4, steps=0)
        advance_to_demo(t)
        orders.add(t.records[0].rule.seat_order)
    assert len(orders) > 1  # 24 possible orders; 12 identical draws would be a bug


def test_step_hash_is_independent_of_arrival_order():
    t = Table(3)
    sent = [t.act(s) for s in range(3)]  # commit round
    a, b = t.records[0], t.records[1]
    for s in (1, 2):
        a.offer(sent[s])
    for s in (2, 0):
        b.offer(sent[s])
    assert a.head == b.head == step_hash(1, a.hashes[0], {s: sent[s].entry for s in range(3)})


def test_round_entries_share_prev_and_step():
    t = Table(3)
    sent = [t.act(s) for s in range(3)]
    entries = [decode_body(s.entry) for s in sent]
    assert {e.step for e in entries} == {1}
    assert {e.prev for e in entries} == {t.records[0].hashes[0]}


def test_future_entries_are_held_then_released_in_order():
    t = Table(3, steps=20, round_every=0)
    advance_to_demo(t)
    order = t.records[0].rule.seat_order
    # seats act in order; seat order[2] receives nothing until the end
    late = order[2]
    stash = []
    for _ in range(6):
        for s in range(3):
            if s == late:
                continue
            signed = t.act(s)
            if signed is not None:
                stash.append(signed)
                for j in range(3):
                    if j not in (s, late):
                        t.records[j].offer(signed)
        signed = t.act(late) if t.records[late].owes(late) else None
        if signed is not None:
            break
    rec = t.records[late]
    start = rec.step
    stash.reverse()  # worst case: newest first
    statuses = [rec.offer(s).status for s in stash]
    assert statuses[:-1].count(Status.HELD) >= 1
    assert statuses[-1] is Status.ACCEPTED
    assert rec.step > start + 1
    assert rec.held_count() == 0


def test_duplicates_are_ignored():
    t = Table(3)
    signed = t.act(0)
    rec = t.records[1]
    assert rec.offer(signed).status is Status.ACCEPTED
    assert rec.offer(signed).status is Status.DUPLICATE
    assert t.records[0].offer(signed).status is Status.DUPLICATE  # own entry echoed back


def test_byte_identical_copies_are_verified_once(monkeypatch):
    import p2p.record.chain as record_module

    calls = []
    real = record_module.verify_signature

    def counting(public, msg, sig):
        calls.append(sig)
        return real(public, msg, sig)

    monkeypatch.setattr(record_module, "verify_signature", counting)
    t = Table(3)
    first = t.act(0)
    rec = t.records[1]
    assert rec.offer(first).status is Status.ACCEPTED
    assert rec.offer(first).status is Status.DUPLICATE
    assert len(calls) == 1  # the relayed/fetched copy skipped the signature check
    # same entry bytes with another signature: checked again (and refused if it is junk)
    junk = Signed(first.entry, bytes(64))
    with pytest.raises(ForgedSignature):
        rec.offer(junk)
    assert len(calls) > 1
    # an entry refused once is checked again each time, never remembered as good
    t2, actor, other = demo_table()
    wrong_turn = t2.craft(other, 3, Count(1))
    calls.clear()
    for _ in range(2):
        with pytest.raises(OutOfTurn):
            t2.records[actor].offer(wrong_turn)
    assert len(calls) == 2


# ---------------------------------------------------------------------------
# Cheats: each rejected, culprit named, record unchanged
# ---------------------------------------------------------------------------


def demo_table() -> tuple[Table, int, int]:
    t = Table(3, steps=30, round_every=0)
    advance_to_demo(t)
    actor = t.records[0].rule.seat_order[0]
    other = t.records[0].rule.seat_order[1]
    return t, actor, other


def snapshot(rec: Record):
    return (rec.step, rec.head, rec.waiting_on(), rec.held_count())


def test_forged_signature():
    t, actor, other = demo_table()
    good = t.craft(actor, 3, Count(1))
    forged = Signed(good.entry, bytes([good.signature[0] ^ 1]) + good.signature[1:])
    rec = t.records[other]
    before = snapshot(rec)
    with pytest.raises(ForgedSignature) as ei:
        rec.offer(forged)
    assert ei.value.seat == actor and ei.value.evidence == (good.entry,)
    outsider = IdentityKey.generate()
    with pytest.raises(ForgedSignature):
        rec.offer(t.craft(actor, 3, Count(1), key=outsider))
    assert snapshot(rec) == before
    assert rec.offer(good).status is Status.ACCEPTED


def test_tampered_step_of_an_old_entry_is_a_forgery():
    t, actor, other = demo_table()
    old = t.act(actor)
    e = decode_body(old.entry)
    moved = Entry(e.table_id, e.seat, e.step + 5, e.prev, e.body)
    with pytest.raises(ForgedSignature):
        t.records[other].offer(Signed(encode_body(moved), old.signature))


def test_impersonation_names_the_real_signer():
    t, actor, other = demo_table()
    fake = t.craft(actor, 3, Count(1), key=t.keys[other])  # `other` signs as `actor`
    with pytest.raises(Impersonation) as ei:
        t.records[(actor + 1) % 3 if (actor + 1) % 3 != other else (actor + 2) % 3].offer(fake)
    assert ei.value.seat == other


def test_an_entry_claiming_a_seat_the_table_does_not_have_names_its_signer():
    """Found by bench adversary (a raw byte flip turned seat 0 into seat 8 in a
    3-seat table): the entry was dropped as junk that no seat signed, and nobody was
    convicted.  A seat's key verifies it, so that seat signed an entry claiming
    another seat: impersonation, whatever seat number it claims."""
    t, actor, other = demo_table()
    good = decode_body(t.craft(actor, 3, Count(1)).entry)
    rec = t.records[other]
    for claimed in (3, 8, 15):
        raw = encode_body(Entry(good.table_id, claimed, good.step, good.prev, good.body))
        with pytest.raises(Impersonation) as ei:
            rec.offer(_signed_raw(t, actor, raw))
        assert ei.value.seat == actor and ei.value.evidence == (raw,)
    # signed by no key of this table: the link's junk, nobody named
    raw = encode_body(Entry(good.table_id, 8, good.step, good.prev, good.body))
    with pytest.raises(RemoteProtocolError) as ei2:
        rec.offer(Signed(raw, IdentityKey.generate().sign(entry_signing_input(raw))))
    assert not isinstance(ei2.value, CheatDetected)


IDENTITY_KEY = bytes([1]) + bytes(31)
UNIVERSAL_FORGERY = bytes([1]) + bytes(31) + bytes(32)
"""Under the small-order key 01 00..00, ``R = 01 00..00, S = 0`` verifies for any message."""


def test_a_forged_entry_is_not_blamed_on_a_weak_key_seat():
    """Were a small-order key ever seated, the signature that verifies for every message
    must not make ``_authenticate`` name that seat as the signer of a forgery."""
    t, actor, other = demo_table()
    weak_seat = next(s for s in range(3) if s not in (actor, other))
    rec = t.records[other]
    keys = list(rec.keys)
    keys[weak_seat] = IDENTITY_KEY
    rec.keys = tuple(keys)
    forged = Signed(t.craft(actor, 3, Count(1)).entry, UNIVERSAL_FORGERY)
    with pytest.raises(ForgedSignature) as ei:
        rec.offer(forged)
    assert not isinstance(ei.value, Impersonation) and ei.value.seat == actor


def test_a_genesis_with_a_small_order_seat_key_is_refused():
    """The weak seat signs the manifest with the universal forgery; the manifest bytes are
    patched after encoding, since a Member with such a key cannot even be built."""
    t = Table(3)
    raw = t.genesis.manifest
    victim = t.manifest.seats[2].identity
    assert raw.count(victim) == 1
    patched = raw.replace(victim, IDENTITY_KEY)
    sigs = [sign_manifest(k, patched) for k in t.keys[:2]] + [UNIVERSAL_FORGERY]
    with pytest.raises(InvalidGenesis, match="identity key refused"):
        open_genesis(Genesis(patched, tuple(sigs)))
    with pytest.raises(LocalProtocolError, match="identity key refused"):
        Member("weak", IDENTITY_KEY, t.manifest.seats[0].seal_key, "127.0.0.1:1")


def wire_entry_with_seat(signed: Signed, seat: int, key: IdentityKey) -> Signed:
    """``signed``'s entry claiming ``seat``, signed by ``key``."""
    entry = decode_body(signed.entry, Entry)
    raw = encode_body(Entry(entry.table_id, seat, entry.step, entry.prev, entry.body))
    return Signed(raw, key.sign(entry_signing_input(raw)))


def test_an_entry_of_another_table_is_no_evidence():
    """Same players, another table: the entry is refused before any signature or turn
    check, names no seat and is never kept as evidence (whoever relays it)."""
    t, actor, other = demo_table()
    t2 = Table(3, keys=t.keys)  # same players, another table
    advance_to_demo(t2)
    actor2 = t2.records[0].rule.seat_order[0]
    from_other_table = t2.act(actor2)
    rec = t.records[other]
    before = snapshot(rec)
    with pytest.raises(ForeignEntry) as ei:
        rec.offer(from_other_table)
    assert not isinstance(ei.value, CheatDetected)
    assert ei.value.table_id == t2.records[0].table_id
    assert not rec.evidence
    assert snapshot(rec) == before
    # signed by a seat of ours but claiming another seat: still only a foreign entry
    forged_seat = wire_entry_with_seat(from_other_table, (actor2 + 1) % 3, t.keys[actor2])
    with pytest.raises(ForeignEntry):
        rec.offer(forged_seat)
    assert not rec.evidence


def test_out_of_turn_and_wrong_kind():
    t, actor, other = demo_table()
    rec = t.records[actor]
    before = snapshot(rec)
    with pytest.raises(OutOfTurn, match="owed by seat") as ei:
        rec.offer(t.craft(other, 3, Count(1)))
    assert ei.value.seat == other
    with pytest.raises(OutOfTurn, match="sent 'echo'") as ei:
        t.records[other].offer(t.craft(actor, 3, Echo(0)))
    assert ei.value.seat == actor
    assert snapshot(rec) == before
    with pytest.raises(LocalProtocolError):
        t.records[other].sign(t.keys[other], other, Count(1))
    # speaking late in a completed step one did not owe
    t.act(actor)
    before = snapshot(rec)
    with pytest.raises(OutOfTurn, match="did not owe") as ei:
        rec.offer(t.craft(other, 3, Count(1), prev=rec.hashes[2]))
    assert ei.value.seat == other
    assert snapshot(rec) == before


def test_replay_of_old_entries():
    t, actor, other = demo_table()
    first = t.act(actor)
    rec = t.records[other]
    assert rec.offer(first).status is Status.ACCEPTED
    # verbatim replay later: ignored, not counted again
    before = snapshot(rec)
    assert rec.offer(first).status is Status.DUPLICATE
    assert snapshot(rec) == before
    # the current actor re-signs an old move chained to an old position
    cur = rec.rule.next_rule.seat_order[rec.rule.next_rule.turn % 3]
    stale = t.craft(cur, rec.step, Count(rec.rule.next_rule.count + 1), prev=rec.hashes[1])
    with pytest.raises(Replay, match="chains to step 1") as ei:
        rec.offer(stale)
    assert ei.value.seat == cur
    junk_prev = t.craft(cur, rec.step, Count(rec.rule.next_rule.count + 1), prev=b"\x07" * 32)
    with pytest.raises(BrokenChain):
        rec.offer(junk_prev)
    assert snapshot(rec) == before


def test_equivocation_current_step_keeps_both():
    t2 = Table(3)
    x = t2.craft(1, 1, t2.honest_body(1))
    y = t2.craft(1, 1, seat_order_commit(t2.records[0].table_id, 1)[0])
    r = t2.records[0]
    assert r.offer(x).status is Status.ACCEPTED
    with pytest.raises(Equivocation) as ei:
        r.offer(y)
    assert ei.value.seat == 1
    assert ei.value.evidence == (x.entry, x.signature, y.entry, y.signature)
    assert r.evidence == [ei.value]
    assert r.waiting_on() == {0, 2}


def test_equivocation_on_a_completed_step_and_a_held_step():
    t = Table(3)
    advance_to_demo(t)
    rec = t.records[0]
    # completed step 1: seat 2's commitment
    orig = rec.steps[1][2].signed
    alt = t.craft(2, 1, seat_order_commit(rec.table_id, 2)[0], prev=rec.hashes[0])
    with pytest.raises(Equivocation):
        rec.offer(alt)
    assert rec.offer(orig).status is Status.DUPLICATE
    # a held future step
    seat = 1
    h1 = t.craft(seat, rec.step + 3, Echo(5), prev=b"\x01" * 32)
    h2 = t.craft(seat, rec.step + 3, Echo(6), prev=b"\x01" * 32)
    assert rec.offer(h1).status is Status.HELD
    assert rec.offer(h1).status is Status.DUPLICATE
    with pytest.raises(Equivocation) as ei:
        rec.offer(h2)
    assert ei.value.seat == seat and len(rec.evidence) == 2


def test_invalid_moves_are_named():
    t, actor, other = demo_table()
    with pytest.raises(InvalidMove, match="count 5, expected 1") as ei:
        t.records[other].offer(t.craft(actor, 3, Count(5)))
    assert ei.value.seat == actor
    # a reveal that does not open the seat's commitment
    t2 = Table(3)
    for s in range(3):
        signed = t2.act(s)
        for j in range(3):
            if j != s:
                t2.records[j].offer(signed)
    bad = Opening(b"\x00" * 32, t2.secret_reveals[2].nonce)
    with pytest.raises(InvalidMove, match="seat-order reveal") as ei:
        t2.records[0].offer(t2.craft(2, 2, bad))
    assert ei.value.seat == 2


def test_cheats_in_released_held_entries_are_reported():
    t, actor, nxt = demo_table()  # nxt = seat order[1], who acts at step 4
    third = t.records[0].rule.seat_order[2]
    rec = t.records[third]
    # `nxt` sends step 4 early with a wrong count; it is held, then fails on release
    first = t.craft(actor, 3, Count(1))
    after = step_hash(3, rec.head, {actor: first.entry})
    bad = t.craft(nxt, 4, Count(9), prev=after)
    assert rec.offer(bad).status is Status.HELD
    off = rec.offer(first)
    assert off.status is Status.ACCEPTED
    assert len(off.cheats) == 1 and isinstance(off.cheats[0], InvalidMove)
    assert off.cheats[0].seat == nxt
    assert off.refused == ((off.cheats[0], bad),)  # the envelope to keep as evidence


def test_garbage_entry_bytes_raise_remote_error():
    t, actor, other = demo_table()
    with pytest.raises(RemoteProtocolError):
        t.records[0].offer(Signed(b"\x92\xa5entry\x80", bytes(64)))


def _signed_raw(t: Table, signer: int, raw: bytes) -> Signed:
    return Signed(raw, t.keys[signer].sign(entry_signing_input(raw)))


def test_a_validly_signed_entry_that_does_not_decode_convicts_its_signer():
    """The signature proves who sent the body: the signer is named, with the envelope as
    evidence, whether the body, the header or the whole msgpack is broken."""
    t, actor, other = demo_table()
    rec = t.records[other]
    good = decode_body(t.craft(actor, 3, Count(1)).entry)
    fields = {
        "table_id": good.table_id,
        "seat": actor,
        "step": 3,
        "prev": good.prev,
        "body": ["count", {"value": "not a number"}],
    }
    bad_body = msgpack.packb(["entry", fields], use_bin_type=True)
    unknown_kind = msgpack.packb(
        ["entry", {**fields, "body": ["no-such-kind", {}]}], use_bin_type=True
    )
    claims_other = msgpack.packb(["entry", {**fields, "seat": other}], use_bin_type=True)
    for raw, signer in (
        (bad_body, actor),
        (unknown_kind, actor),
        (b"\xc1 not msgpack at all", actor),
        (claims_other, actor),  # claims `other`, but `actor`'s key signed it
    ):
        before = snapshot(rec)
        signed = _signed_raw(t, signer, raw)
        with pytest.raises(MalformedEntry) as ei:
            rec.offer(signed)
        assert ei.value.seat == signer
        assert ei.value.evidence == (signed.entry, signed.signature)
        assert ei.value in rec.evidence
        assert snapshot(rec) == before
    # the same bytes signed by nobody at this table: the relay's junk, no seat named
    with pytest.raises(RemoteProtocolError) as ei2:
        rec.offer(Signed(bad_body, IdentityKey.generate().sign(entry_signing_input(bad_body))))
    assert not isinstance(ei2.value, MalformedEntry)
    # a readable header naming another table: no evidence here, no seat named
    elsewhere = msgpack.packb(["entry", {**fields, "table_id": bytes(16)}], use_bin_type=True)
    kept = len(rec.evidence)
    with pytest.raises(ForeignEntry):
        rec.offer(_signed_raw(t, actor, elsewhere))
    assert len(rec.evidence) == kept


def test_signed_junk_whose_table_id_length_was_changed_convicts_its_signer():
    """Found by bench adversary (a raw byte flip, seed 50331675 of the run then): a flip of
    the table id's length byte (16 -> 24) made the lenient header read a 24-byte id whose
    first 16 bytes are this table's, and the record called it another table's entry:
    nobody convicted, the deviation missed.  No table has such an id, so the bytes are
    no entry of any table, and their signer is convicted like any signed junk."""
    t, actor, other = demo_table()
    rec = t.records[other]
    good = t.craft(actor, 3, Count(1)).entry
    i = good.index(b"\xc4\x10")  # bin 8, length 16: the table id
    for length in (24, 8, 15):
        raw = good[: i + 1] + bytes([length]) + good[i + 2 :]
        signed = _signed_raw(t, actor, raw)
        kept = len(rec.evidence)
        with pytest.raises(MalformedEntry) as ei:
            rec.offer(signed)
        assert ei.value.seat == actor, length
        assert len(rec.evidence) == kept + 1


def test_a_seat_flooding_future_entries_holds_bounded_bytes():
    """One seat signs hundreds of future entries with big bodies and bogus parents (they can
    only be checked at their step).  Each seat's held entries are capped in count and
    bytes, oversized ones are not held at all, and the honest entries still get in."""
    t, actor, other = demo_table()
    rec = t.records[other]
    bogus = b"\x07" * 32
    blob = b"x" * (100 << 10)
    statuses = []
    for k in range(300):
        flood = t.craft(actor, 10 + k, Sealed(other, blob), prev=bogus)
        statuses.append(rec.offer(flood).status)
    assert rec.held_bytes() <= MAX_HELD_BYTES_PER_SEAT
    assert rec.held_count() <= MAX_HELD_PER_SEAT
    assert statuses.count(Status.HELD) == rec.held_count() > 0
    assert Status.TOO_FAR in statuses
    huge = t.craft(actor, 5, Sealed(other, b"y" * (MAX_HELD_ENTRY_BYTES + 1)), prev=bogus)
    assert rec.offer(huge).status is Status.TOO_FAR
    # another seat's honest future entries still have their own budget
    third = next(s for s in range(3) if s not in (actor, other))
    assert rec.offer(t.craft(third, 9, Count(1), prev=bogus)).status is Status.HELD


def test_far_future_entries_are_not_held():
    t, actor, other = demo_table()
    far = t.craft(actor, 10_000, Count(1), prev=b"\x01" * 32)
    assert t.records[other].offer(far).status is Status.TOO_FAR


def test_after_finish_nothing_is_owed():
    t = Table(3, steps=4, round_every=0)
    t.run(random.Random(3))
    rec = t.records[0]
    assert rec.finished and rec.owed is None and rec.waiting_on() == frozenset()
    with pytest.raises(OutOfTurn, match="finished"):
        rec.offer(t.craft(0, rec.step, Count(99)))


# ---------------------------------------------------------------------------
# Genesis and catching up
# ---------------------------------------------------------------------------


def test_genesis_signatures_checked():
    t = Table(3)
    raw = t.genesis.manifest
    sigs = list(t.genesis.signatures)
    assert open_genesis(t.genesis) == t.manifest
    bad = Genesis(raw, (sigs[0], sigs[2], sigs[1]))
    with pytest.raises(ForgedSignature) as ei:
        open_genesis(bad)
    assert ei.value.seat == 1
    with pytest.raises(InvalidGenesis, match="2 manifest signatures for 3 seats"):
        open_genesis(Genesis(raw, tuple(sigs[:2])))
    with pytest.raises(InvalidGenesis):
        open_genesis(Genesis(raw[:-1], tuple(sigs)))
    with pytest.raises(LocalProtocolError, match="share one identity"):
        Manifest(
            PROTOCOL_VERSION,
            t.manifest.table_id,
            "demo",
            {},
            (t.manifest.seats[0],) * 2,
            1,
            2,
            t.manifest.protocol,
        )


def test_lagging_peer_catches_up_from_fetch_batches():
    t = Table(4, steps=60, round_every=6)
    t.run(random.Random(9))
    fresh = Record(t.genesis, t.rule)
    done = t.records[2]
    for batch in fetched_batches(done.table_id, done.signed_from(1)):
        for signed in batch.entries:
            fresh.offer(signed)
    assert fresh.head == done.head and fresh.finished
    assert list(fresh.entries()) == list(done.entries())


def test_demo_rule_validates_seat_order():
    with pytest.raises(ValueError):
        DemoRule(3, (0, 0, 1))


def test_seat_order_secret_from_identity_is_stable_and_private():
    t = Table(3)
    tid = t.manifest.table_id
    c1, r1 = seat_order_commit(tid, 0, key=t.keys[0])
    c2, r2 = seat_order_commit(tid, 0, key=t.keys[0])
    assert (c1, r1) == (c2, r2)  # re-derivable after a crash
    assert seat_order_commit(tid, 0, key=t.keys[1])[0] != c1  # another key, another secret
    assert seat_order_commit(new_table_id(), 0, key=t.keys[0])[0] != c1
    with pytest.raises(LocalProtocolError):
        seat_order_commit(tid, 0, b"x" * 32, key=t.keys[0])
