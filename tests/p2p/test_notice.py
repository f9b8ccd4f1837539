"""A player leaves (a bot plays the seat) or comes back: the signed seat notice.

The policy is the session's (:class:`p2p.table.session.TableSession`), driven directly
as in ``test_session``: events in, effects out, no socket.  The record file keeps the
notices (``p2p.record.store``) and ``slaiga verify`` shows and checks them
(``p2p.record.verify``).  The whole flow over real processes, under tmux, is
``tests/cli/test_tmux.py``'s person who leaves a LAN table.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

from crypto.identity import IdentityKey
from p2p import wire
from p2p.record.store import RecordFile, load
from p2p.record.verify import verify_record_file
from p2p.table import effects as fx
from p2p.table.events import CheatSeen, NoticeRefused, SeatBack, SeatLeft
from p2p.table.notice import sign_notice
from p2p.table.session import TableSession
from tests.p2p.test_session import ME, OTHER, THIRD, _of, _table


def _notice(ids, s: TableSession, seat: int, number: int = 0, back: bool = False, **kw):
    table = kw.pop("table_id", s.manifest.table_id)
    key = kw.pop("key", ids[seat])
    return sign_notice(key, table, seat, number, kw.pop("step", s.record.step), back)


def test_leaving_is_signed_fsynced_then_sent_and_never_moves_the_record():
    s, _, ids = _table()
    step, head = s.record.step, s.record.head
    out = s.leave()
    assert [type(e) for e in out] == [fx.PersistNotice, fx.Broadcast]  # durable first
    notice = out[0].notice
    assert out[1].msg == notice and out[1].skip is None
    assert (notice.seat, notice.number, notice.step, notice.back) == (ME, 0, step, False)
    assert notice == _notice(ids, s, ME)  # signed by our identity key, for this table and step
    assert s.bot_slots() == {ME}
    assert s.leave() == []  # said once
    assert (s.record.step, s.record.head) == (step, head)  # not an entry: the fold is as it was


def test_a_notice_is_kept_relayed_past_its_signer_and_link_and_told_by_name():
    s, _, ids = _table()
    notice = _notice(ids, s, OTHER)
    out = s.take_notice(notice, via=THIRD)
    assert [type(e) for e in out] == [fx.PersistNotice, fx.Broadcast, SeatLeft]
    keys = {s.manifest.seats[i].identity for i in (OTHER, THIRD)}
    assert out[1].msg == notice and out[1].skip == frozenset(keys)
    left = out[2]
    assert left.slot == OTHER and left.describe() == f"{left.name} left; a bot now plays their seat"
    assert s.bot_slots() == {OTHER}
    assert s.take_notice(notice, via=OTHER) == []  # a relayed copy: nothing to do
    # back: told, and the seat is a person's again
    back = _notice(ids, s, OTHER, number=1, back=True)
    out = s.take_notice(back, via=OTHER)
    assert _of(out, SeatBack)[0].describe() == f"{left.name} is back" and s.bot_slots() == set()
    # the old notice that she left, sent again: a copy, not news
    assert s.take_notice(notice, via=THIRD) == [] and s.bot_slots() == set()


def test_a_late_older_notice_is_kept_but_not_told():
    s, _, ids = _table()
    s.take_notice(_notice(ids, s, OTHER, number=1, back=True), via=OTHER)
    out = s.take_notice(_notice(ids, s, OTHER, number=0), via=THIRD)
    assert _of(out, fx.PersistNotice) and not _of(out, SeatLeft)
    assert s.bot_slots() == set()


def _refused(s: TableSession, notice: wire.SeatNotice, via: int = THIRD) -> str:
    out = s.take_notice(notice, via=via)
    (refused,) = _of(out, NoticeRefused)
    # only the link is named; nothing kept, relayed or told; nobody convicted
    assert refused.slot == via
    assert not _of(out, fx.PersistNotice) and not _of(out, fx.Broadcast)
    assert not _of(out, SeatLeft) and not _of(out, CheatSeen)
    assert s.convicted is None and not s.cheats and s.bot_slots() == set()
    return refused.reason


def test_a_forged_notice_is_refused_blaming_only_its_link():
    s, _, ids = _table()
    good = _notice(ids, s, OTHER)
    forged = dataclasses.replace(good, signature=bytes(64))
    assert "key did not sign it" in _refused(s, forged)
    # each signed field is bound: changed, the signature fails
    for change in ({"step": good.step + 1}, {"number": 1}, {"back": True}, {"seat": THIRD}):
        assert "did not sign it" in _refused(s, dataclasses.replace(good, **change))
    # signed by another seat's key, claiming OTHER
    assert "did not sign it" in _refused(s, _notice(ids, s, OTHER, key=ids[THIRD]))


def test_a_notice_of_another_table_is_refused_as_replayed():
    s, _, ids = _table()
    foreign = _notice(ids, s, OTHER, table_id=bytes(16))
    assert "another table" in _refused(s, foreign)
    assert "the table has 3 seats" in _refused(
        s, sign_notice(ids[OTHER], s.manifest.table_id, 5, 0, 1, False)
    )


def test_two_different_notices_under_one_number_the_second_is_refused():
    s, _, ids = _table()
    s.take_notice(_notice(ids, s, OTHER), via=OTHER)
    other = _notice(ids, s, OTHER, step=s.record.step + 1)
    reason = s.take_notice(other, via=THIRD)
    (refused,) = _of(reason, NoticeRefused)
    assert "second, different one" in refused.reason and refused.slot == THIRD
    assert s.bot_slots() == {OTHER}


def test_a_notice_in_our_name_that_we_never_signed_is_refused():
    s, _, ids = _table()
    assert "our own name" in _refused(s, _notice(ids, s, ME))


def test_a_seat_back_on_line_hears_every_notice_and_a_resume_keeps_them():
    s, _, ids = _table()
    s.leave()
    s.take_notice(_notice(ids, s, OTHER), via=OTHER)
    out = s.peer_up(s.manifest.seats[THIRD].identity, frozenset({THIRD}))
    sent = [e.msg for e in _of(out, fx.Send) if isinstance(e.msg, wire.SeatNotice)]
    assert {(n.seat, n.back) for n in sent} == {(ME, False), (OTHER, False)}
    # resumed from the file: the same notices, and "back" is our next one
    again = TableSession(s.record, ids[ME], ME)
    again.reload_notices(tuple(sent))
    assert again.bot_slots() == {ME, OTHER}
    out = again.back()
    assert out[0].notice.number == 1 and out[0].notice.back and again.bot_slots() == {OTHER}
    assert again.back() == []  # said at this step already


def test_a_seat_signs_a_bounded_number_of_notices():
    from p2p.table.notice import MAX_NOTICES

    s, _, ids = _table()
    reason = _refused(s, _notice(ids, s, OTHER, number=MAX_NOTICES))
    assert f"at most {MAX_NOTICES}" in reason


def _record_file(tmp_path: Path, notices=()) -> tuple[Path, list[IdentityKey], wire.Genesis]:
    from p2p.table.local_table import game_genesis

    genesis, ids, _ = game_genesis("high-card", 2, names=["Ann", "Bob"])
    path = tmp_path / "t.rec"
    with RecordFile.create(path, genesis) as f:
        for n in notices:
            f.append_notice(n(genesis, ids) if callable(n) else n)
    return path, ids, genesis


def _table_id(genesis: wire.Genesis) -> bytes:
    from p2p.table.forming import Manifest

    manifest = wire.decode_body(genesis.manifest, Manifest)
    return manifest.table_id  # type: ignore[attr-defined]


def test_the_record_file_keeps_notices_and_verify_shows_and_checks_them(tmp_path: Path):
    def left(g, ids):
        return sign_notice(ids[1], _table_id(g), 1, 0, 1, False)

    def back(g, ids):
        return sign_notice(ids[1], _table_id(g), 1, 1, 1, True)

    path, ids, genesis = _record_file(tmp_path, [left, back, left])  # a relayed copy too
    assert [n.back for n in load(path).notices] == [False, True, False]
    report = verify_record_file(path)
    assert [(n.slot, n.back, n.number) for n in report.notices] == [(1, False, 0), (1, True, 1)]
    assert report.failure is None or report.failure.kind == "Unfinished"
    out = subprocess.run(
        [sys.executable, "-m", "cli.verify", "verify", str(path), "--json"],
        capture_output=True,
        text=True,
    )
    data = json.loads(out.stdout)
    assert [(n["name"], n["what"], n["step"]) for n in data["notices"]] == [
        ("Bob", "left", 1),
        ("Bob", "back", 1),
    ]
    human = subprocess.run(
        [sys.executable, "-m", "cli.verify", "verify", str(path)], capture_output=True, text=True
    ).stdout
    assert "Bob left; a bot played their seat from then on" in human
    assert "Bob is back" in human


def test_verify_names_a_forged_notice_and_blames_nobody(tmp_path: Path):
    def forged(g, ids):
        good = sign_notice(ids[1], _table_id(g), 1, 0, 1, False)
        return dataclasses.replace(good, signature=ids[0].sign(b"something else"))

    path, _, _ = _record_file(tmp_path, [forged])
    report = verify_record_file(path)
    assert report.failure is not None and report.failure.kind == "BadNotice"
    assert report.failure.culprit is None and report.notices == ()
    assert "Bob's key did not sign it" in report.failure.message
    human = subprocess.run(
        [sys.executable, "-m", "cli.verify", "verify", str(path)], capture_output=True, text=True
    )
    assert human.returncode == 1 and "notice" in human.stdout
