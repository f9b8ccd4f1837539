"""The table session's policy, driven directly: events in, effects out (no socket, no clock).

:class:`p2p.table.session.TableSession` is what the node decides while a record runs;
these tests feed it signed entries, links and times and read the effects it returns,
in milliseconds.  The record rule is the small branching one of ``test_forks`` (seat 0
counts, then seat 1 or 2), on a game manifest, so a proven cheat convicts.
"""

from __future__ import annotations

import pytest

from p2p import wire
from p2p.errors import TableAbandoned
from p2p.record.chain import Record
from p2p.table import effects as fx
from p2p.table.demo import Count
from p2p.table.endvote import sign_vote
from p2p.table.events import (
    Abandoned,
    CheatSeen,
    Convicted,
    FalseHead,
    Forked,
    HeadClaimed,
    Refetching,
    SeatUp,
    VoteRefused,
)
from p2p.table.local_table import game_genesis
from p2p.table.session import Finished, Links, TableSession
from tests.p2p.test_forks import Branching, _signed

ME, OTHER, THIRD = 2, 0, 1
"""Our slot, the seat that owes step 1, and a third seat."""


def _table(end_on_other: bool = False):
    genesis, ids, _ = game_genesis("high-card", 3, limits=(1000, 4000, 1000, 4000))

    def rule(m):
        return Branching(m, end_on_other)

    ours = Record(genesis, rule)
    return TableSession(ours, ids[ME], ME), Record(genesis, rule), ids


def _of(effects, kind):
    return [e for e in effects if isinstance(e, kind)]


def test_an_accepted_entry_is_persisted_and_shown_and_sent_on_to_nobody():
    """A healthy table sends each entry once per link: every seat linked to its author
    got it from the author, so we pass it on to nobody (p2p/table/relay.py)."""
    s, _, ids = _table()
    s.tell_links(frozenset({OTHER, THIRD}))
    s.message(s.manifest.seats[THIRD].identity, Links(s.manifest.table_id, (OTHER, ME)))
    s.drain()
    entry = _signed(ids, s.record, OTHER, Count(2))
    out = s.offer(entry, via=OTHER)
    assert [type(e) for e in out] == [fx.Persist, fx.Broadcast, fx.ShowPlayer]
    assert out[0].signed == entry and not out[0].sync
    # the broadcast is for our spectators only: it skips every seat
    assert out[1].skip == frozenset(m.identity for m in s.manifest.seats)
    assert s.relayed == 0
    # a copy is a duplicate: nothing to do
    assert s.offer(entry, via=OTHER) == []


def test_an_entry_goes_on_to_a_seat_cut_off_from_its_author_only():
    s, _, ids = _table()
    s.tell_links(frozenset({OTHER, THIRD}))
    # THIRD says it holds a link to us only: its link to OTHER is down
    s.message(s.manifest.seats[THIRD].identity, Links(s.manifest.table_id, (ME,)))
    s.drain()
    entry = _signed(ids, s.record, OTHER, Count(2))
    out = s.offer(entry, via=OTHER)
    assert [type(e) for e in out] == [fx.Persist, fx.Send, fx.Broadcast, fx.ShowPlayer]
    assert out[1].peer == s.manifest.seats[THIRD].identity and out[1].msg == entry
    assert s.relayed == 1
    # never back over the link it came by
    s2, _, ids2 = _table()
    s2.tell_links(frozenset({OTHER, THIRD}))
    s2.message(s2.manifest.seats[THIRD].identity, Links(s2.manifest.table_id, (ME,)))
    s2.drain()
    assert not _of(s2.offer(_signed(ids2, s2.record, OTHER, Count(2)), via=THIRD), fx.Send)


def test_a_late_step_is_asked_for_and_a_lost_link_asks_at_once():
    """Until a broken link is found dead, what crossed it is lost: a step that waits on
    another seat is asked for after a quarter second (then less and less often), and a
    link that goes down makes us ask every other linked seat at once."""
    s, _, _ = _table()
    linked = frozenset({OTHER, THIRD})
    fetches = []
    for t in (100.0, 100.1, 100.2, 100.26, 100.5, 100.77):
        s.tick(t, linked, 2)
        fetches.append(
            len([e for e in _of(s.drain(), fx.SendEach) if isinstance(e.msg, wire.Fetch)])
        )
    assert fetches == [0, 0, 0, 1, 0, 1]
    assert s.tick(100.8, linked, 2).deadline <= 100.77 + 1.0
    s.drain()
    out = s.peer_down(s.manifest.seats[OTHER].identity, "keepalive", frozenset({THIRD}))
    assert [e.msg.from_step for e in _of(out, fx.SendEach) if isinstance(e.msg, wire.Fetch)]


def test_our_own_entry_is_fsynced_before_it_is_sent():
    s, _, ids = _table()
    s.offer(_signed(ids, s.record, OTHER, Count(2)), via=OTHER)  # seat 2 owes step 2 now
    out = s.own(Count(7))
    assert [type(e) for e in out[:2]] == [fx.Persist, fx.SendOwn]
    assert out[0].sync and out[1].accepted.signed == out[0].signed  # a drawn kind (Count)
    assert not _of(out, fx.Broadcast)  # our own entry is relayed by nobody but SendOwn


def test_a_forged_entry_blames_the_link_that_carried_it():
    s, _, ids = _table()
    good = _signed(ids, s.record, OTHER, Count(2))
    forged = wire.Signed(good.entry, bytes(64))
    out = s.offer(forged, via=THIRD)
    (seen,) = _of(out, CheatSeen)
    assert seen.culprit_slot == THIRD and seen.kind == "ForgedSignature"
    assert s.convicted is None and not _of(out, fx.Persist)


def test_equivocation_is_kept_spread_and_convicts_its_signer_once():
    s, theirs, ids = _table()
    s.offer(_signed(ids, s.record, OTHER, Count(2)), via=OTHER)
    other_version = _signed(ids, theirs, OTHER, Count(1))
    out = s.offer(other_version, via=THIRD)
    kept = _of(out, fx.Persist)
    assert [p.signed for p in kept] == [other_version] and kept[0].sync  # the evidence
    spread = [b.msg for b in _of(out, fx.Broadcast) if b.skip is None]
    assert other_version in spread
    (convicted,) = _of(out, Convicted)
    assert convicted.culprit_slot == OTHER and s.convicted.kind == "Equivocation"
    assert s.ended()
    # once convicted, more from the seat is neither kept nor spread
    assert not _of(s.offer(other_version, via=OTHER), fx.Persist)


def test_the_record_is_final_at_a_conviction():
    """After a conviction a valid entry of another seat is not taken: the record stays as
    the verdict found it, which is what ``slaiga verify`` reads back (an entry completing
    the seat-order draw after a cheat in it made the live result number seats in the
    drawn order and ``verify`` by join order; the process adversary found it)."""
    s, theirs, ids = _table()
    s.offer(_signed(ids, s.record, OTHER, Count(1)), via=OTHER)  # THIRD owes step 2 now
    s.offer(_signed(ids, theirs, OTHER, Count(2)), via=THIRD)  # another version: convicted
    assert s.convicted is not None
    step, head = s.record.step, s.record.head
    assert s.offer(_signed(ids, s.record, THIRD, Count(5)), via=THIRD) == []
    assert (s.record.step, s.record.head) == (step, head)


def test_a_table_that_ended_serves_its_spectators_a_while_longer():
    """After a conviction the table lingers its two seconds; a spectator still linked to
    us (one behind, fetching the evidence's step) then gets up to the spectators' grace,
    and a table nobody watches ends at once."""
    from p2p.table.session.linger import ENDED_LINGER_S, SPECTATOR_GRACE_S

    def convicted():
        s, theirs, ids = _table()
        s.offer(_signed(ids, s.record, OTHER, Count(2)), via=OTHER)
        s.offer(_signed(ids, theirs, OTHER, Count(1)), via=THIRD)
        assert s.ended()
        return s

    linked = frozenset({OTHER, THIRD})
    watched, alone = convicted(), convicted()
    assert not watched.tick(100.0, linked, 2, watching=1).done
    assert not alone.tick(100.0, linked, 2).done
    end = 100.0 + ENDED_LINGER_S
    assert alone.tick(end, linked, 2).done  # nobody watches: over with the linger
    tick = watched.tick(end, linked, 2, watching=1)
    assert not tick.done and tick.deadline == end + SPECTATOR_GRACE_S
    assert watched.tick(end + 1, linked, 2, watching=0).done  # it left: we leave too
    again = convicted()
    again.tick(100.0, linked, 2, watching=1)
    again.tick(end, linked, 2, watching=1)
    assert again.tick(end + SPECTATOR_GRACE_S, linked, 2, watching=1).done  # bounded


def test_a_chain_break_is_looked_into_before_anyone_is_blamed():
    s, theirs, ids = _table()
    s.offer(_signed(ids, s.record, OTHER, Count(2)), via=OTHER)
    theirs.offer(_signed(ids, theirs, OTHER, Count(1)))
    honest = theirs.sign(ids[THIRD], THIRD, Count(5)).accepted[0].signed
    out = s.offer(honest, via=THIRD)
    (forked,) = _of(out, Forked)
    assert forked.slot == THIRD and not _of(out, CheatSeen) and not s.cheats
    fetches = _of(out, fx.Send)
    assert {f.peer for f in fetches} == {s.manifest.seats[THIRD].identity}
    assert all(isinstance(f.msg, wire.Fetch) and f.msg.from_step == 1 for f in fetches)
    assert not _of(s.offer(honest, via=THIRD), fx.Send)  # once per seat and step
    # the fetched record shows the other version: equivocation, the break is explained
    theirs_first = theirs.signed_from(1)[0]
    fetched = wire.Fetched(s.manifest.table_id, (theirs_first,), False)
    out = s.message(s.manifest.seats[THIRD].identity, fetched)
    assert _of(out, Convicted)[0].culprit_slot == OTHER
    assert [c.kind for c in s.cheats] == ["Equivocation"]  # the honest seat is not named


def _live_until(s: TableSession, start: float, end: float) -> None:
    """The heartbeat's beats from ``start`` to ``end`` (we were there all along)."""
    t = start
    while t < end:
        s.beat(t)
        t += 0.25
    s.drain()


def test_two_versions_leading_to_two_next_movers_are_found_before_anyone_is_named():
    """A seat signs two versions of its step, each leading to another next mover: we
    took the one after which THIRD owes, THIRD the one after which we owe, and each
    waits on the other.  The re-fetch before anyone is named asks for our last completed
    step too, so THIRD's answer holds the other version, which convicts its signer of
    equivocation (the process adversary found a table abandoned for an honest seat)."""
    s, theirs, ids = _table()
    s.offer(_signed(ids, s.record, OTHER, Count(1)), via=OTHER)  # THIRD owes step 2
    other_version = _signed(ids, theirs, OTHER, Count(2))  # THIRD's: we would owe step 2
    linked = frozenset({OTHER, THIRD})
    s.tick(100.0, linked, 2)
    s.drain()
    _live_until(s, 100.0, 105.0)
    s.tick(105.0, linked, 2)  # past the longest wait: the re-fetch, nobody named
    asked = [e.msg for e in _of(s.drain(), fx.SendEach) if isinstance(e.msg, wire.Fetch)]
    assert 1 in {m.from_step for m in asked}  # our last completed step too
    answer = wire.Fetched(s.manifest.table_id, (other_version,), False)
    out = s.message(s.manifest.seats[THIRD].identity, answer)
    (convicted,) = _of(out, Convicted)
    assert convicted.culprit_slot == OTHER and s.convicted.kind == "Equivocation"
    assert s.absent is None


def test_an_abandoned_table_serves_its_spectators_before_it_ends():
    """A table given up for a silent seat ends as the silence rules say, but a spectator
    still linked gets its grace first (it fetches the last steps), and no entry is taken
    meanwhile; then the abandonment is raised as it would have been."""
    from p2p.table.session.linger import SPECTATOR_GRACE_S

    s, _, ids = _table()
    linked = frozenset({OTHER, THIRD})
    s.tick(100.0, linked, 2)
    _live_until(s, 100.0, 105.0)
    s.tick(105.0, linked, 2)
    _live_until(s, 105.0, 105.5)
    s.tick(105.5, linked, 2)
    _live_until(s, 105.5, 107.0)
    tick = s.tick(107.0, linked, 2, watching=1)  # it would raise now: a spectator watches
    assert s.absent == OTHER and _of(s.drain(), Abandoned)
    assert not tick.done and tick.deadline == 107.0 + SPECTATOR_GRACE_S
    assert s.offer(_signed(ids, s.record, OTHER, Count(2)), via=OTHER) == []  # too late
    with pytest.raises(TableAbandoned) as ei:
        s.tick(108.0, linked, 2, watching=0)  # it left
    assert ei.value.seat == OTHER


def test_silence_is_blamed_only_after_a_refetch_round():
    s, _, _ = _table()
    linked = frozenset({OTHER, THIRD})
    s.tick(100.0, linked, 2)
    s.drain()
    # past the longest wait (4 s): first a re-fetch from everyone, nobody named
    _live_until(s, 100.0, 105.0)
    tick = s.tick(105.0, linked, 2)
    out = s.drain()
    assert _of(out, Refetching) and _of(out, fx.SendEach) and not _of(out, Abandoned)
    assert tick.deadline is not None and not tick.done and s.absent is None
    # not before the re-fetch had its time (the stall limit, 1 s)
    _live_until(s, 105.0, 105.5)
    s.tick(105.5, linked, 2)
    assert s.absent is None and _of(s.drain(), Refetching)
    # still silent after that: named
    _live_until(s, 105.5, 107.0)
    with pytest.raises(TableAbandoned) as ei:
        s.tick(107.0, linked, 2)
    assert ei.value.seat == OTHER and s.absent == OTHER
    assert _of(s.drain(), Abandoned)[0].slot == OTHER


def test_time_we_were_away_counts_against_nobody():
    s, _, _ = _table()
    s.tick(100.0, frozenset({OTHER}), 1)
    s.drain()
    out = s.beat(110.0)  # ten seconds without a heartbeat: we were away
    assert [type(e).__name__ for e in out] == ["Away"]
    s.tick(110.1, frozenset({OTHER}), 1)  # the silence clocks moved on by it
    out = s.drain()
    assert _of(out, fx.SendEach) and not _of(out, Refetching) and not s.stalls


def test_a_seat_back_on_line_hears_our_fetch_and_our_links():
    s, _, _ = _table()
    peer = s.manifest.seats[OTHER].identity
    out = s.peer_up(peer, frozenset({OTHER}))
    assert _of(out, SeatUp)[0].slot == OTHER
    assert [e.msg.from_step for e in _of(out, fx.Send)] == [1]
    (links,) = _of(out, fx.Broadcast)
    assert isinstance(links.msg, Links) and links.msg.slots == (OTHER,)


def test_a_false_head_claim_is_compared_and_found_false():
    s, _, ids = _table(end_on_other=True)
    s.offer(_signed(ids, s.record, OTHER, Count(2)), via=OTHER)
    assert s.record.finished
    peer = s.manifest.seats[THIRD].identity
    s.message(peer, Finished(s.manifest.table_id, s.record.step, bytes(32)))
    assert not s.settle_heads()
    out = s.drain()
    assert _of(out, HeadClaimed) and _of(out, fx.Send)[0].msg.from_step == 1
    mine = wire.Fetched(s.manifest.table_id, tuple(s.record.signed_from(1)), False)
    s.message(peer, mine)
    assert s.settle_heads()
    assert _of(s.drain(), FalseHead)[0].slot == THIRD and s.divergent == []


def test_a_vote_in_our_name_is_refused_and_ends_nothing():
    s, _, ids = _table()
    rec = s.record
    vote = sign_vote(ids[ME], rec.table_id, ME, rec.step, rec.head, OTHER)
    out = s.take_vote(vote, via=THIRD)
    assert _of(out, VoteRefused) and s.votes == {} and s.ended_by_vote is None


def test_every_other_seat_voting_ends_the_table_with_the_votes_on_file():
    s, _, ids = _table()
    s.tick(100.0, frozenset({THIRD}), 1)  # OTHER owes step 1 and nobody holds a link to it
    s.drain()
    s.unlinked_since[OTHER] = 0.0
    assert s.vote(OTHER, 100.0) is None
    out = s.drain()
    assert [type(e) for e in out[:2]] == [fx.PersistVote, fx.Broadcast]  # durable first
    assert s.vote(OTHER, 100.0) == "you already voted"
    rec = s.record
    out = s.take_vote(sign_vote(ids[THIRD], rec.table_id, THIRD, rec.step, rec.head, OTHER), 1)
    (closing,) = _of(out, fx.CloseWithVotes)
    assert sorted(v.seat for v in closing.votes.votes) == [THIRD, ME]
    assert _of(out, fx.Wake) and s.ended_by_vote == OTHER and s.convicted is None


def test_the_state_each_topic_owns_is_the_state_the_session_names():
    """The session routes to one object per concern (p2p/table/session/); what the shell
    and the tests read on the session is that topic's very state, not a copy, and only
    the end vote may be set from outside (a restart's reload, in tests)."""
    s, _, _ = _table()
    assert s.unlinked_since is s.connectivity.unlinked_since
    assert s.cheats is s.blame.cheats and s.evidence is s.blame.evidence
    assert s.votes is s.ballot.others and s.notices is s.seat_notices.notices
    assert s.finished_peers is s.linger.finished_peers and s.stalls is s.silence.stalls
    assert s.out is s.ctx.out
    s.tick(100.0, frozenset({THIRD}), 1)
    s.unlinked_since[OTHER] = 0.0  # read by the vote's check through the links topic
    assert s.vote(OTHER, 100.0) is None and s.my_vote is s.ballot.mine is not None
    s.my_vote = None  # as a test does before a reload
    assert s.ballot.mine is None
    with pytest.raises(AttributeError, match="read-only"):
        s.convicted = None
