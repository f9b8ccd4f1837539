"""A table that survives a lost player (issue 21), in one process over
:mod:`p2p.table.local_table`: every seat's real record, rule and crypto; only the sockets
are missing.  The absence lane (``p2p/RECORD_FORMAT.md`` §12), escrow cheats, two seats
lost at once, and a lost seat that comes back.  (Four real peers and ``kill -9``:
``tests/p2p/test_survive_procs.py``.)"""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path
from typing import Any

import pytest

from crypto.escrow import TokenShares, make_deal
from crypto.group import G, add, random_scalar
from engine import registry
from engine.players import BotPlayer
from p2p.errors import InvalidMove, LocalProtocolError
from p2p.record.chain import Status
from p2p.record.store import RecordFile
from p2p.record.verify import verify_record_file
from p2p.table import effects as fx
from p2p.table.events import NamedAbsent
from p2p.table.game_rule.survive import AbsentBody, PresentBody
from p2p.table.local_table import LocalTable, new_table, run
from p2p.table.seat import game_of
from p2p.table.session import TableSession
from p2p.wire import Entry, Fetch, decode_body


def write(tmp_path: Path, table: LocalTable, name: str = "t.rec", signed=None) -> Path:
    path = tmp_path / name
    with RecordFile.create(path, table.genesis) as store:
        for s in signed if signed is not None else table.log:
            store.append(s)
    return path


def survivors(table: LocalTable, lost: set[int]) -> list:
    return [d for d in table.drivers if d.slot not in lost]


@pytest.mark.parametrize("game", ["slave", "slajens"])
def test_three_seats_finish_without_the_fourth_and_verify_names_it_absent(tmp_path, game):
    table = new_table(game, 4, {"survive": True, **({"games": 1} if game == "slave" else {})})
    run(table, lost={1: 17 if game == "slave" else 70})  # slave: in the deal (its one round)
    assert table.cheats == []
    left = survivors(table, {1})
    assert {d.record.head for d in left} == {left[0].record.head}
    for d in left:
        g = game_of(d.record)
        assert d.record.finished and g.done and d.record.removed == {1: d.record.removed[1]}
        assert g.gone == (g.engine_seat_of[1],)
    report = verify_record_file(write(tmp_path, table)).to_json()
    assert report["ok"] and report["finished"] and report["culprit"] is None, report
    assert [a["slot"] for a in report["absent"]] == [1] and not report["abandoned"]
    assert report["head"] == left[0].record.head.hex()
    if game == "slave":  # cards: the others made the lost seat's tokens from the escrow
        assert any(b"token-shares" in s.entry for s in table.log)


def test_two_seats_lost_at_once_end_the_table_abandoned_naming_both(tmp_path):
    table = new_table("slajens", 4, {"survive": True, "rounds": 2})
    run(table, lost={0: 40, 3: 40})
    assert table.cheats == []
    for d in survivors(table, {0, 3}):
        g = game_of(d.record)
        assert d.record.finished and g.abandoned and not g.done
        assert sorted(d.record.removed) == [0, 3]
    report = verify_record_file(write(tmp_path, table)).to_json()
    assert report["ok"] and report["abandoned"] and report["culprit"] is None, report
    assert sorted(a["slot"] for a in report["absent"]) == [0, 3]


def test_a_seat_that_speaks_before_every_signature_goes_on(tmp_path):
    """The fork rule: two of three remaining seats sign ``absent``; then the silent seat's
    entry arrives.  The two are locked (they signed), the third closes the step as usual
    and answers ``present``; the two then close as usual too.  One outcome everywhere,
    the late ``absent`` entries are moot, nobody is blamed, every file verifies."""
    table = new_table("slajens", 4, {"survive": True, "rounds": 1})
    lagging = table.drivers[2]
    with pytest.raises(LocalProtocolError, match="stuck"):
        run(table, lost={2: 30}, name_absent=False)
    rec = [d.record for d in table.drivers]
    step = rec[0].step
    assert 2 in rec[0].waiting_on()
    absents = []
    for d in (table.drivers[0], table.drivers[1]):
        off = d.sign(AbsentBody((2,), 0))
        absents.append(off.accepted[0].signed)
    for s in absents:
        for d in table.drivers:
            if d.slot != s and not d.record.holds(s):
                d.record.offer(s)
    # seat 2 comes back with its entry for the step
    lagging_offer = _offer_everything(lagging, table.log + absents)
    body = lagging.next_body(lambda engine, seat: engine.legal_actions(seat)[0])
    assert body is not None
    own = lagging.sign(body).accepted[0].signed
    done3 = table.drivers[3].record.offer(own)
    assert done3.completed, "the seat that signed nothing closes the step as usual"
    for d in (table.drivers[0], table.drivers[1]):
        got = d.record.offer(own)
        assert got.status is Status.ACCEPTED and not got.completed  # locked
        assert d.record.step == step
    present = table.drivers[3].record.sign_past_lane(
        table.drivers[3].identity, 3, step, PresentBody((2,), 0)
    )
    assert present is not None
    for d in (table.drivers[0], table.drivers[1]):
        got = d.record.offer(present)
        assert got.completed and d.record.step == step + 1  # unlocked: closed as usual
    heads = {d.record.hashes[step] for d in table.drivers}
    assert len(heads) == 1 and not rec[0].closed_by_absence
    assert lagging_offer is not None
    for s in absents:  # the absent entries of a step that closed as usual are moot
        assert table.drivers[3].record.offer(s).status in (Status.MOOT, Status.DUPLICATE)
    log = [*table.log, *absents, own, present]
    report = verify_record_file(write(tmp_path, table, signed=log)).to_json()
    assert report["culprit"] is None and report["absent"] == [], report


def _offer_everything(driver, signed) -> int:
    n = 0
    for s in signed:
        try:
            driver.record.offer(s)
        except Exception:  # noqa: BLE001 - our own entries and duplicates
            continue
        n += 1
    return n


def test_the_lost_seat_comes_back_after_its_removal_and_follows(tmp_path):
    table = new_table("slave", 4, {"survive": True, "games": 1})
    run(table, lost={3: 60})
    gone = table.drivers[3]
    assert not gone.record.finished
    for s in table.log:
        got = gone.record.offer(s)
        assert got.status is not None
    g = game_of(gone.record)
    assert gone.record.finished and 3 in gone.record.removed
    assert g.removed_me and g.mine is None and g.done  # a spectator now, to the end
    assert gone.record.head == table.drivers[0].record.head
    assert gone.record.owes(3) == frozenset()
    events = g.take_events()
    assert any(e.kind == "left" for e in events)


class _Stop(Exception):
    pass


def victim_owes_alone() -> tuple[LocalTable, Any, Any]:
    """A four-seat Slåjens table with ``survive``, stopped past the escrow where slot 2
    alone owes the step; returns the table, slot 2's driver and the body it would sign."""
    table = new_table("slajens", 4, {"survive": True, "rounds": 2})
    victim = table.drivers[2]

    def stop(t: LocalTable) -> None:
        rec = victim.record
        if len(t.log) >= 40 and rec.waiting_on() == {2} and game_of(rec).escrow_ready:
            raise _Stop  # slot 2 alone owes the step now

    with pytest.raises(_Stop):
        run(table, on_entry=stop)
    seat = game_of(victim.record).mine.seat
    player = BotPlayer.make(registry.get("slajens").bots["heuristic"], seat, random.Random(1))
    body = victim.next_body(player.choose)
    assert body is not None
    return table, victim, body


def test_a_lost_seat_whose_last_entry_never_left_takes_the_tables_record(tmp_path):
    """The seat's machine signed (and saved) its entry for a step, then died before the
    entry left: its own record closed that step as usual, while every other seat closed
    it by absence naming it.  When it comes back, the others' record reaches it (the
    whole record, as after a fork); the complete round of ``absent`` entries for that
    step refolds its record: from that step on it holds the table's, it follows as a
    spectator to the same head, nobody is named a cheat, and its file verifies."""
    table, victim, body = victim_owes_alone()
    had = list(table.log)  # every entry its file holds, and then its own last one
    last = victim.sign(body).accepted[0].signed  # saved, then the machine died: never sent
    k = decode_body(last.entry, Entry).step
    assert victim.record.step == k + 1  # its own record closed the step as usual
    run(table, lost={2: 0})
    rest = survivors(table, {2})
    assert table.cheats == [] and all(d.record.removed == {2: k} for d in rest)
    head = rest[0].record.head
    # back: it fetches the table's whole record (p2p/table/session.py, a fork)
    fetched = rest[0].record.signed_from(1)
    for s in fetched:
        victim.record.offer(s)  # never a broken chain here
    assert victim.record.refolded == [k] and victim.record.removed == {2: k}
    g = game_of(victim.record)
    assert victim.record.finished and victim.record.head == head
    assert g.removed_me and g.mine is None and g.done
    # its file: what it had, its own late entry, then the table's record
    path = write(tmp_path, table, "back.rec", signed=[*had, last, *fetched])
    report = verify_record_file(path).to_json()
    assert report["ok"] and report["culprit"] is None, report
    assert report["head"] == head.hex() and [a["slot"] for a in report["absent"]] == [2]


async def test_a_whole_record_fetch_is_not_replaced_by_a_later_routine_one():
    """A returning seat whose chain broke asks one seat for the whole record (from step 1);
    its routine asks from its own step must not replace that request while it waits in
    the answering seat's queue of one (that left the seat ending alone under load)."""
    from p2p.net import fetch as fetch_module

    class Nursery:  # the serving task is not started: only the queue is looked at
        def start_soon(self, *args):
            pass

    server = fetch_module.FetchServer(Nursery(), None, lambda step: [])  # type: ignore[arg-type]
    peer, table = b"p" * 32, b"t" * 16
    server.request(peer, Fetch(table, 1))
    server.request(peer, Fetch(table, 10))
    assert server._wanted[peer].from_step == 1
    server.request(peer, Fetch(table, 1))
    server.request(peer, Fetch(table, 0))
    assert server._wanted[peer].from_step == 0  # a request from an earlier step replaces


# ---- cheats inside the escrow -----------------------------------------------------------------


class BadShares:
    """A dealer whose shares are of another secret than its key share."""

    def escrow_deal(self, rule, deal):
        mine = rule.mine
        seals = {i: rule.manifest.seats[rule.order[i]].seal_key for i in range(rule.n)}
        return make_deal(random_scalar(), rule.n, rule._ctx(mine.seat), seals, b"x" * 32)


class FalseComplaint:
    """A receiver that refuses a good share."""

    def escrow_complaints(self, rule, refused):
        return [min(s for s in range(rule.n) if s != rule.mine.seat)]


class BadTokenShares:
    """A remaining seat whose share of the gone seat's first token is off."""

    def token_shares(self, rule, gone, shares):
        tokens = (add(shares.tokens[0], G), *shares.tokens[1:])
        return TokenShares(tokens, shares.proof)


def test_a_bad_escrow_share_convicts_its_dealer(tmp_path):
    table = run(new_table("slajens", 4, {"survive": True, "rounds": 1}, cheats={1: BadShares()}))
    assert table.cheats and {c.seat for c in table.cheats} == {1}
    report = verify_record_file(write(tmp_path, table)).to_json()
    assert report["culprit_slot"] == 1 and "escrow" in report["error"], report


def test_a_false_complaint_about_a_share_convicts_the_complainer(tmp_path):
    table = run(
        new_table("slajens", 4, {"survive": True, "rounds": 1}, cheats={2: FalseComplaint()})
    )
    assert table.cheats and {c.seat for c in table.cheats} == {2}
    report = verify_record_file(write(tmp_path, table)).to_json()
    assert report["culprit_slot"] == 2 and "false complaint" in report["error"], report


def test_a_bad_token_share_convicts_its_maker(tmp_path):
    table = new_table("slave", 4, {"survive": True, "games": 1}, cheats={0: BadTokenShares()})
    run(table, lost={3: 19})  # in the deal (its one round): the others act for seat 3
    culprits = {c.seat for c in table.cheats}
    assert culprits == {0}, table.cheats
    assert all(isinstance(c, InvalidMove) for c in table.cheats)
    report = verify_record_file(write(tmp_path, table)).to_json()
    assert report["culprit_slot"] == 0 and "token shares" in report["error"], report
    assert [a["slot"] for a in report["absent"]] == [3]  # absent, not a cheat


def escrowed_table() -> LocalTable:
    """A four-seat Slåjens table with ``survive``, stopped once the escrow is ready at a
    step that another seat than seat 0 owes."""
    table = new_table("slajens", 4, {"survive": True, "rounds": 1})

    def escrowed(t: LocalTable) -> None:
        rec = t.drivers[0].record
        g = game_of(rec)
        owing = rec.waiting_on()
        if g is not None and g.escrow_ready and owing and 0 not in owing:
            raise _Stop

    with pytest.raises(_Stop):
        run(table, on_entry=escrowed)
    return table


def test_one_seat_alone_may_not_name_every_other_seat_absent():
    """Naming every other seat would need no other signature (the round completes with
    the signer's alone) and end the table abandoned for everyone: an ``absent`` entry
    must leave at least two seats to sign it.  Refused as our own entry, and a peer that
    signs one anyway is convicted by every other seat."""
    from p2p.errors import CheatDetected

    table = escrowed_table()
    rec = table.drivers[0].record
    r = rec.lane_round()
    with pytest.raises(LocalProtocolError, match="leaves 1 seat to sign"):
        table.drivers[0].sign(AbsentBody((1, 2, 3), r))
    assert not rec.removed
    # a peer that signs it anyway: every other seat refuses it and names its signer
    force = Entry(rec.table_id, 0, rec.step, rec.head, AbsentBody((1, 2, 3), r))
    signed = _sign_raw(table.drivers[0].identity, force)
    for d in table.drivers[1:]:
        with pytest.raises(CheatDetected, match="leaves 1 seat to sign") as ei:
            d.record.offer(signed)
        assert ei.value.seat == 0 and not d.record.removed
    # two seats signing for the other two: the table ends abandoned, as it must when two
    # machines are gone at once
    a = min(rec.waiting_on() - {0})
    two = (a, min({1, 2, 3} - {a}))
    assert table.drivers[0].sign(AbsentBody(tuple(sorted(two)), r)).status is Status.ACCEPTED


def _sign_raw(identity, entry):
    from p2p.record.chain import entry_signing_input
    from p2p.wire import Signed, encode_body

    raw = encode_body(entry)
    return Signed(raw, identity.sign(entry_signing_input(raw)))


def test_nobody_may_name_a_seat_absent_without_survive():
    table = new_table("slajens", 3, {"rounds": 1})
    d = table.drivers[0]
    with pytest.raises(Exception, match="nobody can leave"):
        d.sign(AbsentBody((1,), 0))
    assert dataclasses.is_dataclass(AbsentBody)


def test_a_lane_round_that_cannot_complete_is_followed_by_the_next(tmp_path):
    """Seats that do not name the same seats (one holds an entry the others lack) kill
    that lane round; the next round names the seat still silent and completes."""
    table = new_table("slajens", 4, {"survive": True, "rounds": 1})
    with pytest.raises(LocalProtocolError, match="stuck"):
        run(table, lost={2: 30}, name_absent=False)
    live = [d for d in table.drivers if d.slot != 2]
    step = live[0].record.step
    signed = [
        live[0].sign(AbsentBody((2,), 0)).accepted[0].signed,
        live[1].sign(PresentBody((2,), 0)).accepted[0].signed,  # it says it holds seat 2's
    ]
    for s in signed:
        for d in live:
            if not d.record.holds(s):
                d.record.offer(s)
    assert all(d.record.lane_round() == 1 for d in live)  # round 0 is dead everywhere
    for d in live:
        signed.append(d.sign(AbsentBody((2,), 1)).accepted[0].signed)
        for other in live:
            if other is not d:
                other.record.offer(signed[-1])
    assert all(d.record.closed_by_absence == {step: frozenset({2})} for d in live)
    assert len({d.record.head for d in live}) == 1
    report = verify_record_file(write(tmp_path, table, signed=[*table.log, *signed])).to_json()
    assert report["culprit"] is None and [a["slot"] for a in report["absent"]] == [2], report


# ---- the session's policy (sans-I/O: p2p/table/session/) ------------------------------------


def _stuck_table():
    """A Slåjens table with survive on, where seat 2 went silent and owes the step."""
    table = new_table("slajens", 4, {"survive": True, "rounds": 1, "absent_after": 1})
    with pytest.raises(LocalProtocolError, match="stuck"):
        run(table, lost={2: 30}, name_absent=False)
    assert 2 in table.records[0].waiting_on()
    return table


def _sent(effects, kind):
    return [e for e in effects if isinstance(e, fx.SendOwn) and e.kind == kind]


def test_the_session_signs_absent_once_the_seat_is_silent_past_the_limit():
    table = _stuck_table()
    d = table.drivers[3]
    s = TableSession(d.record, d.identity, 3)
    linked = frozenset({0, 1})  # nobody holds a link to seat 2: its machine is gone
    s.tick(100.0, linked, 2)
    assert not _sent(s.drain(), "absent")  # not before the limit
    s.beat(100.5)
    s.tick(100.5, linked, 2)
    assert not _sent(s.drain(), "absent")
    for t in (100.75, 101.0, 101.25):
        s.beat(t)
    s.tick(101.25, linked, 2)
    out = s.drain()
    (sent,) = _sent(out, "absent")
    assert sent.accepted.entry.body.seats == (2,) and sent.accepted.entry.body.round == 0
    assert [e.slots for e in out if isinstance(e, NamedAbsent)] == [(2,)]
    s.tick(101.5, linked, 2)
    assert not _sent(s.drain(), "absent")  # one lane entry per round


def test_the_session_answers_present_when_it_holds_the_named_seats_entry():
    table = _stuck_table()
    lagging, d = table.drivers[2], table.drivers[3]
    s = TableSession(d.record, d.identity, 3)
    absent = table.drivers[0].sign(AbsentBody((2,), 0)).accepted[0].signed
    _offer_everything(lagging, table.log)
    body = lagging.next_body(lambda engine, seat: engine.legal_actions(seat)[0])
    late = lagging.sign(body).accepted[0].signed
    s.offer(late, via=2)  # seat 2's entry reaches us: the step closes as usual here
    out = s.offer(absent, via=0)  # then seat 0's absent for that step
    (present,) = [e for e in out if isinstance(e, fx.Broadcast)]
    entry = decode_body(present.msg.entry, Entry)
    assert entry.kind == "present" and entry.body.seats == (2,) and entry.step == late_step(late)
    # seat 0, locked by its own absent, closes the step as usual once it has both
    rec0 = table.drivers[0].record
    rec0.offer(late)
    got = rec0.offer(present.msg)
    assert got.completed and rec0.head == d.record.head


def late_step(signed) -> int:
    return decode_body(signed.entry, Entry).step


# ---- a late complete round of ``absent`` is no way to rewrite a step (Record._late_absent) ---


def test_a_late_absent_contradicting_a_lane_entry_of_that_step_is_equivocation(tmp_path):
    """Seats 0 and 1 sign ``absent`` naming the slow seat 2, seat 3 says ``present``: that
    round dies, seat 2's entry arrives, the step closes as usual everywhere.  Seat 3 then
    signs ``absent`` naming seat 2 in that same round and hands seat 0 the round's other
    two ``absent`` entries: with its lie the round looks complete.  One seat must not
    remove an honest seat after the fact: seat 0 convicts seat 3 of equivocation (its
    ``present`` and its ``absent`` of one round) and keeps its record."""
    from p2p.errors import Equivocation

    table = new_table("slajens", 4, {"survive": True, "rounds": 1})
    lagging = table.drivers[2]
    with pytest.raises(LocalProtocolError, match="stuck"):
        run(table, lost={2: 30}, name_absent=False)
    live = [table.drivers[i] for i in (0, 1, 3)]
    rec0 = live[0].record
    k = rec0.step
    lane = [
        live[0].sign(AbsentBody((2,), 0)).accepted[0].signed,
        live[1].sign(AbsentBody((2,), 0)).accepted[0].signed,
        live[2].sign(PresentBody((2,), 0)).accepted[0].signed,
    ]
    for s in lane:
        for d in live:
            if not d.record.holds(s):
                d.record.offer(s)
    _offer_everything(lagging, table.log + lane)
    body = lagging.next_body(lambda engine, seat: engine.legal_actions(seat)[0])
    own = lagging.sign(body).accepted[0].signed
    for d in live:
        assert d.record.offer(own).completed and d.record.step == k + 1  # as usual
    head = rec0.head
    lie = _sign_raw(
        live[2].identity, Entry(rec0.table_id, 3, k, rec0.hashes[k - 1], AbsentBody((2,), 0))
    )
    for s in lane[:2]:
        assert rec0.offer(s).status in (Status.MOOT, Status.DUPLICATE)
    with pytest.raises(Equivocation) as ei:
        rec0.offer(lie)
    assert ei.value.seat == 3
    assert rec0.refolded == [] and rec0.removed == {} and rec0.head == head
    # seat 0's file (the lie kept as evidence): verify names seat 3 the same way
    path = write(tmp_path, table, signed=[*table.log, *lane, own, lie])
    report = verify_record_file(path).to_json()
    assert report["culprit_slot"] == 3 and "Equivocation" in str(report), report


def test_seats_that_played_on_after_a_step_cannot_remove_a_seat_there_later():
    """Every seat but seat 0 signs, after the game went on (and ended), ``absent`` naming
    seat 0 at a step where it owed and its entry came: a round that would rewrite seat
    0's history from there.  Those seats signed later steps after that one as usual, so
    none of them was locked there (p2p/RECORD_FORMAT.md §12): the round is moot at seat
    0, whose record, its result and its moves stand."""
    table = new_table("slajens", 4, {"survive": True, "rounds": 1})
    steps: list[int] = []

    def mark(t: LocalTable) -> None:
        rec = t.drivers[0].record
        g = game_of(rec)
        if not steps and g is not None and g.escrow_ready and rec.waiting_on() == {0}:
            steps.append(rec.step)

    run(table, on_entry=mark)
    (k,) = steps
    rec0 = table.drivers[0].record
    assert rec0.finished and rec0.step > k + 1
    head = rec0.head
    for d in table.drivers[1:]:
        late = _sign_raw(
            d.identity, Entry(rec0.table_id, d.slot, k, rec0.hashes[k - 1], AbsentBody((0,), 0))
        )
        assert rec0.offer(late).status is Status.MOOT
    assert rec0.refolded == [] and rec0.removed == {} and rec0.head == head
    assert game_of(rec0).done


def test_a_record_with_a_verdict_is_never_refolded():
    """The lost seat's case above, but its record holds a verdict (its own last entry
    showed a lie, say): the table's complete round for that step stays moot there, and
    the conviction stands (a refold would fold it away).  The verdict is set by hand: a
    narrow check of the guard."""
    table, victim, body = victim_owes_alone()
    victim.sign(body)  # saved, never sent
    run(table, lost={2: 0})
    verdict = InvalidMove(0, "a lie its reveal showed")
    victim.record.verdict = verdict
    _offer_everything(victim, table.drivers[0].record.signed_from(1))  # chains break
    assert victim.record.refolded == [] and victim.record.verdict is verdict
    assert victim.record.removed == {}


def test_the_session_never_says_it_named_seats_absent_when_it_could_not():
    """Three seats, two machines gone at once: naming both would leave one seat to sign
    (refused: the silence limits end such a table).  The player is never told "we signed
    that seat 2, seat 3 left the table for good", tick after tick, for nothing signed."""
    for _ in range(20):  # a table stuck where both lost seats owe the step (a dice round
        # where only one owes it names that one alone, rightly: it is not this case)
        table = new_table("slajens", 3, {"survive": True, "rounds": 1, "absent_after": 1})
        with pytest.raises(LocalProtocolError, match="stuck"):
            run(table, lost={1: 30, 2: 30}, name_absent=False)
        d = table.drivers[0]
        if d.record.waiting_on() >= {1, 2}:
            break
    assert d.record.waiting_on() >= {1, 2}
    s = TableSession(d.record, d.identity, 0)
    told = []
    for i in range(8):
        t = 100.0 + i / 2
        s.beat(t)
        s.tick(t, frozenset(), 0)
        out = s.drain()
        assert not _sent(out, "absent")
        told += [e for e in out if isinstance(e, NamedAbsent)]
    assert told == [] and not d.record.removed


def test_a_lane_round_past_the_last_convicts_its_signer_and_ours_never_gets_there():
    """A step has at most ``MAX_LANE_ROUNDS`` lane rounds (p2p/RECORD_FORMAT.md §12): one
    seat signing ``present`` in round after round (thousands of entries, each kept, relayed
    and scanned) is convicted at the first round past the bound, and our own session signs
    nothing there (the decision limit decides)."""
    from p2p.errors import CheatDetected
    from p2p.record.chain import MAX_LANE_ROUNDS

    table = escrowed_table()
    rec = table.drivers[0].record
    owing = min(rec.waiting_on())
    late = Entry(rec.table_id, 0, rec.step, rec.head, PresentBody((owing,), MAX_LANE_ROUNDS))
    signed = _sign_raw(table.drivers[0].identity, late)
    for d in table.drivers[1:]:
        with pytest.raises(CheatDetected, match="at most 16 lane rounds") as ei:
            d.record.offer(signed)
        assert ei.value.seat == 0
    with pytest.raises(LocalProtocolError):
        table.drivers[0].sign(PresentBody((owing,), MAX_LANE_ROUNDS))
    # the last round allowed is still a round
    ok = table.drivers[0].sign(PresentBody((owing,), MAX_LANE_ROUNDS - 1))
    assert ok.status is Status.ACCEPTED
