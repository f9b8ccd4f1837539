"""Ending a table whose player vanished, by a signed vote of the players who remain
(issue 22; docs/design.md; p2p/table/endvote.py; RECORD_FORMAT.md §10).

In process: in-memory seats 1 and 2 and, at slot 0, the table session (the vote's policy,
no I/O, tests/p2p/_session_table.py) whose writes go to a real record file as the node's
do; for the whole path, and for asking a person, a real node (tests/p2p/_node_table.py).
Seat 2 falls silent while it owes a step, and slot 0 sees it unlinked past the machine
limit.  The votes, the record file's closing frame, the node's result, ``slaiga verify``
and the refusal of every doctored vote are checked on the files slot 0 wrote.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
import trio

from cli.net import EXIT_ABANDONED, _abandoned
from cli.verify import lead_line
from crypto.identity import IdentityKey
from p2p import wire
from p2p.errors import BadVote, CorruptRecordFile, NodeError, TableAbandoned
from p2p.net.mesh import unwrap_single_error
from p2p.record.store import load
from p2p.record.verify import BAD_VOTE, ENDED_BY_VOTE, PARTIAL_VOTE, UNFINISHED, verify_record_file
from p2p.table.effects import SendOwn
from p2p.table.endvote import check_vote, sign_vote, tally, vote_message
from p2p.table.events import EndedByVote, NodeEvent, VoteCast, VoteRefused
from p2p.table.seat import game_of
from tests.p2p._node_table import node_table
from tests.p2p._session_table import PLAYERS, InMemoryTable, session_table

TIMEOUT_S = 30
GONE = 2
"""The slot of the player who vanishes."""


def _silence(t: InMemoryTable, slot: int = GONE) -> None:
    """Play until ``slot`` owes a step and everyone else has said all they can, then make
    slot 0 see ``slot`` unlinked for longer than the machine limit."""
    t.run_until(lambda t: game_of(t.record) is not None and t.record.step >= 6)
    t.silent.add(slot)
    t.run_until(lambda t: False)
    assert slot in t.record.waiting_on() and not t.record.finished
    limit = t.record.manifest.max_wait_ms / 1000
    t.session.unlinked_since[slot] = t.now() - limit - 1


def _vote_of(t: InMemoryTable, voter: int, absent: int = GONE) -> wire.EndVote:
    rec = t.record
    key = t.drivers[voter].identity
    return sign_vote(key, rec.table_id, voter, rec.step, rec.head, absent)


def _refused(events: list[NodeEvent]) -> list[VoteRefused]:
    return [e for e in events if isinstance(e, VoteRefused)]


async def test_every_other_seat_votes_and_the_table_ends_as_abandoned(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    events: list[NodeEvent] = []
    with trio.fail_after(TIMEOUT_S):
        async with node_table(tmp_path, "high-card", 3, on_event=events.append, linger_s=0.1) as t:
            _silence(t)
            assert t.node.vote_end(GONE) is None
            mine = t.node.session.my_vote
            assert mine is not None and t.node.session.ended_by_vote is None  # one vote of two
            # our vote is on disk before it is sent (final, even after a restart)
            assert load(t.node.store.path).votes == (mine,)
            t.node._take_vote(_vote_of(t, 1), via=1)
            assert t.node.session.ended_by_vote == GONE and t.node.session.absent == GONE
            assert t.node.session.convicted is None and not t.node.session.cheats
            with pytest.raises(TableAbandoned) as ei, unwrap_single_error():
                await t.node._run_record()
            path = t.node.store.path
            order = t.node._seat_order()
    exc = ei.value
    assert exc.by_vote and exc.seat == GONE and PLAYERS[GONE] in str(exc)
    loaded = load(path)
    assert loaded.closed and [v.seat for v in loaded.votes] == [0, 0, 1]
    who = {"seat": order.index(GONE), "slot": GONE, "name": PLAYERS[GONE]}
    summary = exc.result.game_summary()
    assert summary["ended_by_vote"] == who and summary["absent"] == who
    assert summary["culprit"] is None and not summary["finished"]
    casts = [e for e in events if isinstance(e, VoteCast)]
    assert [(e.voter_slot, e.votes, e.needed) for e in casts] == [(0, 1, 2), (1, 2, 2)]
    (ended,) = [e for e in events if isinstance(e, EndedByVote)]
    assert (ended.name, ended.slot) == (PLAYERS[GONE], GONE)
    # what `slaiga open/join --json` prints for it, with exit code 3
    capsys.readouterr()
    assert _abandoned(exc, as_json=True) == EXIT_ABANDONED
    out = json.loads(capsys.readouterr().out)
    assert out["ended_by_vote"] == who and "voted to stop" in out["error"]
    # slaiga verify: "ended by vote", nobody blamed, the absent player named
    report = verify_record_file(path)
    f = report.failure
    assert f is not None and f.kind == ENDED_BY_VOTE, f
    assert f.culprit is None and f.seat == GONE and PLAYERS[GONE] in f.message
    assert report.to_json()["ended_by_vote"] == who
    assert report.to_json()["culprit"] is None
    assert lead_line(report).startswith("✓") and f"{PLAYERS[GONE]} vanished" in lead_line(report)


def test_verify_reports_a_partial_and_an_invalid_set_as_such(tmp_path: Path) -> None:
    """Only the full set of valid votes for the record's last head ends a record."""
    with session_table(tmp_path) as t:
        _silence(t)
        path = t.path
        assert verify_record_file(path).failure.kind == UNFINISHED
        assert t.vote_end(GONE) is None
        partial = verify_record_file(path).failure
        assert partial is not None and partial.kind == PARTIAL_VOTE, partial
        assert partial.culprit is None and PLAYERS[1] in partial.message
        # a closing frame whose other vote is for another head
        other = dataclasses.replace(_vote_of(t, 1), head=bytes(32))
        t.store.close_with_votes(wire.EndVotes((t.session.my_vote, other)))
    bad = verify_record_file(path).failure
    assert bad is not None and bad.kind == BAD_VOTE and bad.culprit is None, bad
    assert PLAYERS[1] in bad.message


def test_a_voter_signs_no_further_entry(tmp_path: Path) -> None:
    """Voting is final for the voter: the vanished player comes back and the table could
    go on, but the seat that voted signs nothing more at that table."""
    with session_table(tmp_path) as t:
        _silence(t)
        assert t.vote_end(GONE) is None
        step = t.record.step
        t.silent.clear()
        t.run_until(lambda t: t.record.step > step and 0 in t.record.waiting_on())
        sent = len(t.sent)
        t.round()
        assert 0 in t.record.waiting_on()
        assert not [fx for fx in t.sent[sent:] if isinstance(fx, SendOwn)]  # signed nothing
        assert t.session.ended_by_vote is None  # the others never voted


def test_a_vote_cannot_end_a_table_whose_absent_seat_owes_nothing(tmp_path: Path) -> None:
    with session_table(tmp_path) as t:
        _silence(t)
        here = t.record.waiting_on()
        assert 1 not in here
        # seat 1 owes nothing now: we do not vote it out, and a vote for it is refused
        t.session.unlinked_since[1] = t.session.unlinked_since[GONE]
        problem = t.vote_end(1)
        assert problem is not None and "does not owe" in problem
        assert t.session.my_vote is None
        t.take_vote(sign_vote(IdentityKey.generate(), b"x" * 16, 0, 1, b"h" * 32, 1), 1)
        wrong = sign_vote(t.drivers[GONE].identity, t.record.table_id, GONE, *_at(t), 1)
        t.take_vote(wrong, via=GONE)
        refused = _refused(t.events)
        assert len(refused) == 2 and "does not owe" in refused[-1].reason
        assert t.session.votes == {} and t.session.ended_by_vote is None
        # even a complete set counts for nothing: the tally refuses it
        votes = [sign_vote(t.identity, t.record.table_id, 0, *_at(t), 1), wrong]
        count = tally(t.record.manifest, votes, *_at(t), here)
        assert not count.ended and count.problems


def _at(t: InMemoryTable) -> tuple[int, bytes]:
    return t.record.step, t.record.head


def test_every_field_of_a_vote_is_checked(tmp_path: Path) -> None:
    """A tampered vote is refused with a clear reason, never a crash; a vote convicts no
    one (nobody is blamed, nothing is counted) and the table goes on."""
    with session_table(tmp_path) as t:
        _silence(t)
        events = t.events
        good = _vote_of(t, 1)
        manifest = t.record.manifest
        check_vote(manifest, good, step=t.record.step, head=t.record.head, owing={GONE})
        flip = bytes([good.signature[0] ^ 1]) + good.signature[1:]
        tampered = {
            "table_id": dataclasses.replace(good, table_id=bytes(16)),
            "seat (another seat's key did not sign it)": dataclasses.replace(good, seat=0),
            "seat (the absent one)": dataclasses.replace(good, seat=GONE),
            "seat (no such seat)": dataclasses.replace(good, seat=5),
            "step": dataclasses.replace(good, step=good.step + 1),
            "step (re-signed, behind)": _resigned(t, good, step=good.step - 1),
            "head": dataclasses.replace(good, head=bytes(32)),
            "head (re-signed)": _resigned(t, good, head=bytes(32)),
            "absent": dataclasses.replace(good, absent=0),
            "absent (no such seat)": dataclasses.replace(good, absent=9),
            "signature": dataclasses.replace(good, signature=flip),
            "signature (a stranger's key)": sign_vote(
                IdentityKey.generate(), good.table_id, 1, good.step, good.head, GONE
            ),
        }
        for field, vote in tampered.items():
            before = len(_refused(events))
            t.take_vote(vote, via=1)
            after = _refused(events)
            assert len(after) == before + 1, field
            assert after[-1].name == PLAYERS[1] and after[-1].reason, field
            with pytest.raises(BadVote):
                check_vote(manifest, vote, step=good.step, head=good.head, owing={GONE})
        assert t.session.votes == {} and not t.session.cheats and t.session.convicted is None
        reasons = [e.reason for e in _refused(events)]
        assert "another table" in reasons[0] or "is for table" in reasons[0]
        assert "did not sign" in reasons[1]
        # the untouched vote still counts
        t.take_vote(good, via=1)
        assert set(t.session.votes) == {1} and not _refused(events)[len(tampered) :]


def _resigned(t: InMemoryTable, vote: wire.EndVote, **change: object) -> wire.EndVote:
    """``vote`` with fields changed and signed again by its voter (a valid signature for
    a vote that does not fit the record)."""
    v = dataclasses.replace(vote, **change)
    key = t.drivers[v.seat].identity
    return dataclasses.replace(
        v, signature=key.sign(vote_message(v.table_id, v.step, v.head, v.absent))
    )


class _Asked:
    """A person at the terminal who answers the end-or-wait question with ``answers``,
    one per time asked (``then`` runs after each answer)."""

    def __init__(self, *answers: bool, then=lambda: None) -> None:  # type: ignore[no-untyped-def]
        self.answers = list(answers)
        self.then = then
        self.asked: list[tuple[str, float]] = []
        self.said: list[str] = []

    async def ask_end(self, name: str, silent_for: float) -> bool:
        self.asked.append((name, silent_for))
        answer = self.answers.pop(0)
        self.then()
        return answer

    def progress(self, text: str) -> None:
        self.said.append(text)


QUICK = (100, 200, 100, 600_000)
"""Silence limits (ms): a machine steps' limit of 0.2 s, so a waiting person is asked
again quickly; decisions wait 10 minutes."""


async def test_a_person_is_asked_and_not_voting_is_waiting(tmp_path: Path) -> None:
    """A bot votes at once once the player vanished; a person is asked by name, again
    while the player stays gone, and only their ``end`` signs a vote."""
    with trio.fail_after(TIMEOUT_S):
        async with node_table(tmp_path, "high-card", 3, QUICK) as t:
            _silence(t)
            node = t.node

            def back() -> None:
                node.session.unlinked_since.pop(GONE)

            # waits, and the player comes back: no vote, no second question
            waits = _Asked(False, then=back)
            node.player = waits  # type: ignore[assignment]
            await node._ask_player(waits.ask_end, GONE, t.record.step, 12.3)
            assert waits.asked == [(PLAYERS[GONE], 12)] and node.session.my_vote is None
            # gone again: waits, is asked again, then ends the table
            node.session.unlinked_since[GONE] = trio.current_time() - 1
            ends = _Asked(False, True)
            node.player = ends  # type: ignore[assignment]
            await node._ask_player(ends.ask_end, GONE, t.record.step, 1)
            assert [name for name, _ in ends.asked] == [PLAYERS[GONE]] * 2
            assert ends.asked[1][1] >= 1
            assert node.session.my_vote is not None and node.session.my_vote.absent == GONE
    with trio.fail_after(TIMEOUT_S):
        async with node_table(tmp_path / "bot", "high-card", 3) as t:
            _silence(t)
            t.node.player = t.node._bot()  # the heuristic bot that plays a --bot seat
            t.node._run("ask_end", GONE, 5.0)  # as the vanished check: a bot votes yes
            assert t.node.session.my_vote is not None and t.node.session.my_vote.absent == GONE


def test_a_closing_frame_is_the_last_frame(tmp_path: Path) -> None:
    """The store reads vote frames back; nothing may follow the closing frame."""
    with session_table(tmp_path) as t:
        _silence(t)
        assert t.vote_end(GONE) is None
        t.take_vote(_vote_of(t, 1), via=1)
        path = t.path
        assert load(path).closed
        t.store.append(t.record.signed_from(1)[0])
    with pytest.raises(
        CorruptRecordFile, match="damaged: more follows the votes that ended the table"
    ):
        load(path)


def test_a_resumed_voter_still_voted_and_a_closed_table_is_not_resumed(tmp_path: Path) -> None:
    """Our vote is in our file before it leaves, so a restart cannot take it back (the
    resumed peer signs nothing more); a file with the closing frame is not resumed."""
    with session_table(tmp_path) as t:
        _silence(t)
        assert t.vote_end(GONE) is None
        mine, t.session.my_vote = t.session.my_vote, None  # as after a restart
        loaded = load(t.path)
        t.session.reload_votes(loaded.votes, loaded.closed)
        assert t.session.my_vote == mine
        t.take_vote(_vote_of(t, 1), via=1)
        loaded = load(t.path)
        with pytest.raises(NodeError, match="ended by vote"):
            t.session.reload_votes(loaded.votes, loaded.closed)


def test_a_seat_back_after_the_votes_writes_nothing_past_them(tmp_path: Path) -> None:
    """The votes closed the file; the vanished player's owed entry arriving in the short
    linger after them is not taken (it landed after the closing frame, and the file no
    longer loaded)."""
    with session_table(tmp_path) as t:
        _silence(t)
        assert t.vote_end(GONE) is None
        t.take_vote(_vote_of(t, 1), via=1)
        assert t.session.ended_by_vote == GONE and load(t.path).closed
        step = t.record.step
        t.to_me(t._drive(t.drivers[GONE]), GONE)  # it is back, with its owed entry
        assert t.record.step == step
        path = t.path
    assert load(path).closed
    assert verify_record_file(path).to_json()["error_kind"] == ENDED_BY_VOTE
