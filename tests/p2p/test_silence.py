"""Silence: stalled after stall_after, abandoned after max_wait; a fake clock drives it."""

from __future__ import annotations

import pytest

from p2p.errors import LocalProtocolError, TableAbandoned
from p2p.table.silence import Recovered, SilenceMonitor, Stalled
from tests.p2p._tables import Table


def test_stall_then_recover():
    m = SilenceMonitor(stall_after=5, max_wait=30)
    assert m.update(0, 1, frozenset({0, 1, 2})) == []
    assert m.next_deadline() == 5
    assert m.update(4.9, 1, frozenset({1, 2})) == []
    assert m.update(5, 1, frozenset({1, 2})) == [Stalled(1, 1, 5), Stalled(2, 1, 5)]
    assert m.stalled == {1, 2}
    assert m.next_deadline() == 30
    assert m.update(6, 1, frozenset({2})) == [Recovered(1)]
    assert m.update(7, 1, frozenset({2})) == []  # no repeated Stalled events
    # step completes; seat 2 immediately owes the next step: it delivered, so it recovered
    assert m.update(8, 2, frozenset({2})) == [Recovered(2)]
    assert m.stalled == frozenset()
    assert m.next_deadline() == 13


def test_abandoned_names_the_silent_seat():
    m = SilenceMonitor(stall_after=5, max_wait=20)
    m.update(0, 3, frozenset({1}))
    m.update(2, 3, frozenset({1, 2}))
    m.update(10, 3, frozenset({1, 2}))
    with pytest.raises(TableAbandoned) as ei:
        m.update(21, 3, frozenset({1, 2}))
    assert ei.value.seat == 1 and ei.value.waited == 21


def test_timer_restarts_per_step():
    m = SilenceMonitor(stall_after=5, max_wait=10)
    for k in range(100):  # seat 0 answers every 4 s: never stalled
        assert m.update(4.0 * k, k, frozenset({0})) == []


def test_from_manifest_and_validation():
    t = Table(3)
    m = SilenceMonitor.from_manifest(t.manifest)
    assert (m.stall_after, m.max_wait) == (5.0, 60.0)
    with pytest.raises(LocalProtocolError):
        SilenceMonitor(10, 5)
    with pytest.raises(LocalProtocolError):
        SilenceMonitor(0, 5)


def test_driven_by_a_record():
    t = Table(3, steps=10, round_every=0)
    rec = t.records[0]
    m = SilenceMonitor.from_manifest(t.manifest)
    now = 0.0
    assert m.update(now, rec.step, rec.waiting_on()) == []
    # seats 0 and 1 commit, seat 2 stays silent
    for s in (0, 1):
        signed = t.act(s)
        if s != 0:
            rec.offer(signed)
    now = 6.0
    assert m.update(now, rec.step, rec.waiting_on()) == [Stalled(2, 1, 6.0)]
    with pytest.raises(TableAbandoned) as ei:
        m.update(61.0, rec.step, rec.waiting_on())
    assert ei.value.seat == 2
