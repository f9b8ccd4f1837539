"""Verdicts a player can check: the evidence behind every conviction is in the record file,
and ``slaiga verify`` names the same seat the live peer named (issue 22).

In process: in-memory seats and, at slot 0, the table session (the policy, no I/O:
tests/p2p/_session_table.py) writing a real record file as the node does; where the node's
own loop is the subject (an abandoned table, a lingering head claim), a real
:class:`p2p.net.node.Node` (tests/p2p/_node_table.py).  Each case takes well under a
second.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import trio

from cli.net import EXIT_ABANDONED, _abandoned
from p2p import wire
from p2p.errors import TableAbandoned
from p2p.net.mesh import unwrap_single_error
from p2p.record.chain import entry_signing_input
from p2p.record.verify import verify_record_file
from p2p.table.demo import Count
from p2p.table.effects import Broadcast, Send, SendEach
from p2p.table.events import (
    Abandoned,
    Convicted,
    Divergent,
    FalseHead,
    HeadClaimed,
    LingerTimeout,
    NodeEvent,
    SeatStalled,
)
from p2p.table.results import CheatReport, TableResult
from p2p.table.seat import game_of
from p2p.table.silence import Stalled
from tests.p2p._node_table import node_table
from tests.p2p._session_table import PLAYERS, session_table
from tests.p2p._tables import Table

TIMEOUT_S = 30
CHEATER = 2


def test_a_held_entry_refused_at_its_step_is_kept_and_verify_names_its_author(
    tmp_path: Path,
) -> None:
    """A cheater's entry for a future step is held; when its step comes the seat convicts
    the cheater, and the signed envelope is in the record file, so ``verify`` names the
    same seat (before the fix it said "Unfinished" and named no one)."""
    with session_table(tmp_path) as t:
        t.run_until(lambda t: game_of(t.record) is not None and t.record.step >= 8)
        rec = t.record
        assert not rec.finished and t.session.convicted is None
        # signed for the next step, chained to the current head: held, checkable only
        # when its step comes (and then refused: nobody owes a 'count' in this game)
        cheater = t.drivers[CHEATER]
        raw = wire.encode_body(wire.Entry(rec.table_id, CHEATER, rec.step + 1, rec.head, Count(1)))
        bad = wire.Signed(raw, cheater.identity.sign(entry_signing_input(raw)))
        t.to_me(bad, CHEATER)
        assert rec.held_count() == 1 and t.session.convicted is None
        t.run_until(lambda t: t.session.convicted is not None)
        convicted = t.session.convicted
        assert convicted is not None and convicted.culprit == CHEATER
        path = t.path
        summary = t.session.result(path).game_summary()
    report = verify_record_file(path)
    f = report.failure
    assert f is not None, report
    assert f.culprit == CHEATER and f.kind == convicted.kind, f
    assert [e.entry for e in f.evidence] == [raw]
    # one numbering: the live event, our result and verify name the same seat, by name
    seat = summary["seats"].index(PLAYERS[CHEATER])
    (event,) = [e for e in t.events if isinstance(e, Convicted)]
    assert (event.name, event.culprit, event.culprit_slot) == (PLAYERS[CHEATER], seat, CHEATER)
    assert (summary["culprit"], summary["culprit_name"]) == (seat, PLAYERS[CHEATER])
    out = report.to_json()
    assert (out["culprit"], out["culprit_name"]) == (seat, PLAYERS[CHEATER])
    assert "PROVEN: " + PLAYERS[CHEATER] in event.describe()


def test_both_versions_of_a_held_equivocation_are_kept(tmp_path: Path) -> None:
    """Two different signed entries from one seat for a future step: the first is held,
    the second is refused as equivocation.  Both go into the record file (one alone
    proves nothing), so ``verify`` names the seat even though the file stops before
    that step (before, it kept only the second: "gap", no culprit)."""
    with session_table(tmp_path) as t:
        t.run_until(lambda t: game_of(t.record) is not None and t.record.step >= 8)
        rec = t.record
        key = t.drivers[CHEATER].identity
        versions = []
        for value in (1, 2):
            raw = wire.encode_body(
                wire.Entry(rec.table_id, CHEATER, rec.step + 1, rec.head, Count(value))
            )
            versions.append(wire.Signed(raw, key.sign(entry_signing_input(raw))))
        for signed in versions:
            t.to_me(signed, CHEATER)
        convicted = t.session.convicted
        assert convicted is not None and convicted.kind == "Equivocation"
        assert convicted.culprit == CHEATER
        path = t.path
    report = verify_record_file(path)
    f = report.failure
    assert f is not None and (f.kind, f.culprit) == ("Equivocation", CHEATER), f
    assert {e.entry for e in f.evidence} == {v.entry for v in versions}


def test_a_convicted_table_keeps_and_relays_no_more_evidence(tmp_path: Path) -> None:
    """Once a cheat has ended the game, more bad entries from the convicted seat are
    neither written to the record file nor relayed: else a convicted seat could grow
    every peer's file and flood every link (the evidence that convicts it is kept)."""
    with session_table(tmp_path) as t:
        t.run_until(lambda t: game_of(t.record) is not None and t.record.step >= 8)
        rec = t.record
        key = t.drivers[CHEATER].identity

        def relayed() -> list[wire.Message]:  # what the node would put on the mesh
            return [fx.msg for fx in t.sent if isinstance(fx, Broadcast | Send | SendEach)]

        def bad(step: int, value: int) -> wire.Signed:
            raw = wire.encode_body(wire.Entry(rec.table_id, CHEATER, step, rec.head, Count(value)))
            return wire.Signed(raw, key.sign(entry_signing_input(raw)))

        first = bad(rec.step, 1)
        t.to_me(first, CHEATER)
        convicted = t.session.convicted
        assert convicted is not None and convicted.culprit == CHEATER
        assert first in relayed()  # the evidence that convicts is kept and relayed
        path = t.path
        size = path.stat().st_size
        t.sent.clear()
        flood = [bad(rec.step + k % 3, 2 + k) for k in range(60)]
        for signed in flood:
            t.to_me(signed, CHEATER)
        assert path.stat().st_size == size
        assert not any(signed in relayed() for signed in flood)
    report = verify_record_file(path)
    f = report.failure
    assert f is not None and f.culprit == CHEATER, f
    # the evidence is the first bad entry (with the cheater's other version of that step,
    # if it had signed one already: equivocation); none of the flood
    kept = {e.entry for e in f.evidence}
    assert first.entry in kept and not kept & {signed.entry for signed in flood}


SHORT = (250, 1000, 250, 1000)
"""Silence limits (ms) short enough to abandon a table within a test."""


async def test_an_abandoned_table_names_the_absent_player_one_way(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every peer once printed "table abandoned: seat 1 silent" with seat 1 a slot, while
    the results and the screen count seats in the drawn order (issue 22).  Now the event,
    the error and the result object name the absent player the same way: its name, its
    seat as in the results, its slot; the result also gives the table and record."""
    events: list[NodeEvent] = []
    with trio.fail_after(TIMEOUT_S):
        async with node_table(tmp_path, "high-card", 3, SHORT, on_event=events.append) as t:
            # play until the seat order puts some slot at another seat number, then fall
            # silent (every seat but ours: its only links would be through us)
            order = ()
            t.run_until(lambda t: game_of(t.record) is not None and t.record.step >= 6)
            order = t.node._seat_order()
            assert order and game_of(t.record) is not None
            with pytest.raises(TableAbandoned) as ei, unwrap_single_error():
                await t.node._run_record()
            owing = t.record.waiting_on()
    exc = ei.value
    slot = exc.seat
    assert slot in owing and slot != 0
    who = {"seat": order.index(slot), "slot": slot, "name": PLAYERS[slot]}
    assert exc.name == PLAYERS[slot] and PLAYERS[slot] in str(exc)
    assert f"seat {slot}" not in str(exc)
    summary = exc.result.game_summary()
    assert summary["absent"] == who
    assert summary["table_id"] == t.node.manifest.table_id.hex()
    assert summary["record"] == str(t.node.store.path) and Path(summary["record"]).exists()
    assert not summary["finished"]
    (abandoned,) = [e for e in events if isinstance(e, Abandoned)]
    assert {"seat": abandoned.seat, "slot": abandoned.slot, "name": abandoned.name} == who
    stalled = [e for e in events if isinstance(e, SeatStalled) and e.slot == slot]
    assert stalled and all(e.seat == who["seat"] and e.name == who["name"] for e in stalled)
    # what `slaiga open/join --json` prints for it (exit code 3)
    capsys.readouterr()
    assert _abandoned(exc, as_json=True) == EXIT_ABANDONED
    out = json.loads(capsys.readouterr().out)
    assert out["absent"] == who and out["error"] == str(exc)
    assert (out["table_id"], out["record"]) == (summary["table_id"], summary["record"])


async def _finished_table(tmp_path: Path, events: list[NodeEvent]):
    cm = node_table(tmp_path, "high-card", 3, on_event=events.append, linger_s=1.0)
    t = await cm.__aenter__()
    t.run_until(lambda t: t.record.finished and all(d.record.finished for d in t.drivers.values()))
    assert t.record.finished and t.node.session.convicted is None
    return cm, t


def _pieces(t, slot: int, size: int) -> list[wire.Fetched]:
    """Slot's whole record as the fetch server would send it, in pieces of ``size``."""
    entries = t.drivers[slot].record.signed_from(1)
    tid = t.record.table_id
    cuts = range(0, len(entries), size)
    return [wire.Fetched(tid, tuple(entries[i : i + size]), i + size < len(entries)) for i in cuts]


async def test_a_false_head_claim_does_not_fail_a_finished_game(tmp_path: Path) -> None:
    """An unsigned ``Finished`` with a false head made every honest peer call the game
    divergent (exit 1).  A head claim is a hint: the claimant's record is fetched, piece
    by piece, and since its signed entries are ours, the game stands (issue 22)."""
    events: list[NodeEvent] = []
    with trio.fail_after(TIMEOUT_S):
        cm, t = await _finished_table(tmp_path, events)
        try:
            node, rec = t.node, t.record
            liar = 1
            node.session.finished_peers.update({liar: bytes(32), 2: rec.head})
            assert not node._settle_heads(rec)  # comparing, nothing said yet
            (claimed,) = [e for e in events if isinstance(e, HeadClaimed)]
            assert (claimed.name, claimed.slot) == (PLAYERS[liar], liar)
            peer = node.manifest.seats[liar].identity
            pieces = _pieces(t, liar, 7)
            assert len(pieces) > 2
            for piece in pieces[:-1]:
                node._take_fetched(piece, peer, liar)
                assert not node._settle_heads(rec)  # walked to the end, whatever it moves
            node._take_fetched(pieces[-1], peer, liar)
            assert node._settle_heads(rec)
            await node._run_record()  # ends at once: every seat finished, nothing pending
            result = node._result()
        finally:
            await cm.__aexit__(None, None, None)
    assert result.divergent == [] and result.convicted is None
    assert result.game_summary()["finished"]
    assert [e.name for e in events if isinstance(e, FalseHead)] == [PLAYERS[liar]]
    assert not [e for e in events if isinstance(e, Divergent | LingerTimeout)]


def test_a_head_claim_backed_by_a_forked_signed_entry_is_divergent(tmp_path: Path) -> None:
    """The same claim, when the claimant's record holds a signed entry that forks from
    ours (its author signed two entries for one step), is divergence, and the author
    is named."""
    with session_table(tmp_path) as t:
        t.run_until(lambda t: all(d.record.finished for d in [t.driver, *t.drivers.values()]))
        session, rec = t.session, t.record
        assert rec.finished and session.convicted is None
        forker = 2
        session.finished_peers.update({1: bytes(32), forker: rec.head})
        t.run("settle_heads")
        theirs = list(t.drivers[1].record.signed_from(1))
        i, entry = next(
            (i, e)
            for i, s in enumerate(theirs)
            if (e := wire.decode_body(s.entry, wire.Entry)).seat == forker and e.step > 3
        )
        other = wire.Entry(entry.table_id, forker, entry.step, bytes(32), entry.body)
        raw = wire.encode_body(other)
        key = t.drivers[forker].identity
        theirs[i] = wire.Signed(raw, key.sign(entry_signing_input(raw)))
        peer = rec.manifest.seats[1].identity
        t.run("message", peer, wire.Fetched(rec.table_id, tuple(theirs), False))
        assert t.run("settle_heads")
        result = session.result(t.path)
    assert result.divergent == [1]
    assert any(c.kind == "Equivocation" and c.culprit == forker for c in result.cheats)
    assert [e.name for e in t.events if isinstance(e, Divergent)] == [PLAYERS[1]]


async def test_an_unanswered_false_head_claim_is_no_divergence(tmp_path: Path) -> None:
    """A claimant that never shows its record leaves only its unsigned word: the peer
    stops lingering in time, and the finished game is not called divergent."""
    events: list[NodeEvent] = []
    with trio.fail_after(TIMEOUT_S):
        cm, t = await _finished_table(tmp_path, events)
        try:
            t.node.session.finished_peers.update({1: bytes(32), 2: t.record.head})
            await t.node._run_record()  # lingers (linger_s) for a record nobody sends
            result = t.node._result()
        finally:
            await cm.__aexit__(None, None, None)
    assert result.divergent == [] and result.game_summary()["finished"]


def test_a_demo_tables_summary_names_players_as_the_game_results_do() -> None:
    """``slaiga open/join --json`` of a demo table gave culprits and stalls as slots under
    ``culprit``, which the game results use for the seat in the seat order."""
    table = Table(3)
    order = (2, 0, 1)
    result = TableResult(
        manifest=table.manifest,
        my_seat=0,
        seat_order=order,
        record=None,
        record_file=None,
        cheats=[CheatReport(2, "OutOfTurn", "spoke out of turn", 2)],
        stalls=[Stalled(1, 5, 3.0)],
        aborted=2,
        absent=1,
    )
    out = result.summary()
    cheat = {"culprit": 0, "culprit_slot": 2, "name": "p2"}
    assert out["cheats"] == [{**cheat, "kind": "OutOfTurn", "reason": "spoke out of turn"}]
    assert out["aborted"] == {**cheat, "reason": "equivocation"}
    assert out["stalls"] == [{"seat": 2, "slot": 1, "name": "p1"}]
    assert out["absent"] == {"seat": 2, "slot": 1, "name": "p1"}


def test_a_cheat_in_the_seat_order_draw_numbers_seats_as_verify_does(tmp_path: Path) -> None:
    """A second version of a seat-order reveal reaching us after the draw completed:
    live and ``slaiga verify`` (which stops at the verdict, before the draw) both number
    the culprit by join order, whatever order we had drawn."""
    from p2p.table.forming import Opening

    cheater = 1
    for trial in range(40):
        with session_table(tmp_path / str(trial), seats=3) as t:
            t.run_until(lambda t: t.record.step >= 3)
            order = t.session.seat_order()
            if order.index(cheater) == cheater:
                continue  # both numberings agree anyway: draw again
            rec = t.record
            good = wire.decode_body(rec.steps[2][cheater].signed.entry, wire.Entry)
            value = bytes(32) if good.body.value != bytes(32) else b"\1" * 32
            body = Opening(value, good.body.nonce)
            raw = wire.encode_body(wire.Entry(rec.table_id, cheater, 2, rec.hashes[1], body))
            signed = wire.Signed(raw, t.drivers[cheater].identity.sign(entry_signing_input(raw)))
            t.to_me(signed, cheater)
            assert t.session.convicted is not None
            live = t.session.result(t.path).game_summary()
            path = t.path
        report = verify_record_file(path).to_json()
        assert report["culprit_name"] == live["culprit_name"]
        assert report["culprit"] == live["culprit"] == cheater
        return
    pytest.fail("no draw put the cheater out of its join place")
