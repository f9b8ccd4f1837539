"""A split view never gets an honest seat convicted.

A cheater signs two versions of one step and shows each to different peers.  On
the two forks the next step may be owed by different seats, or by nobody (one
fork has ended).  An honest seat's entry on the other fork then looks out of turn
here; it must be judged by its chain first (an unknown ``prev`` is a fork to look
into, ``BrokenChain``, never a conviction), and the fetch that follows shows the
cheater's two versions (``Equivocation``).  Found by a hostile review: the turn
was checked before the chain, and the honest seat was convicted ``OutOfTurn``.
"""

from __future__ import annotations

import pytest

from p2p.errors import BrokenChain, Equivocation, OutOfTurn
from p2p.record.chain import Record, Status, entry_signing_input
from p2p.record.order import Owed
from p2p.table.demo import Count
from p2p.table.local_table import game_genesis
from p2p.wire import Entry, Signed, encode_body

CHEATER, HONEST = 0, 1


class Branching:
    """Step 1: seat 0 counts.  Step 2: seat 1 if it counted 1, else seat 2 (or, with
    ``end_on_other``, nobody: the record ends).  Then the record ends."""

    def __init__(self, manifest, end_on_other: bool = False) -> None:
        self.k, self.v, self.end_on_other = 0, None, end_on_other

    def owed(self) -> Owed | None:
        if self.k == 0:
            return Owed.actor(CHEATER, "count")
        if self.k == 1 and (self.v == 1 or not self.end_on_other):
            return Owed.actor(HONEST if self.v == 1 else 2, "count")
        return None

    def check(self, seat, body) -> None:
        pass

    def advance(self, view) -> None:
        if self.k == 0:
            self.v = view.entries[0].body.value
        self.k += 1


def _signed(ids, rec: Record, seat: int, body) -> Signed:
    raw = encode_body(Entry(rec.table_id, seat, rec.step, rec.head, body))
    return Signed(raw, ids[seat].sign(entry_signing_input(raw)))


@pytest.mark.parametrize("end_on_other", [False, True])
def test_an_honest_entry_on_the_other_fork_is_a_fork_not_a_cheat(end_on_other: bool) -> None:
    genesis, ids, _ = game_genesis("high-card", 3)
    rule = lambda m: Branching(m, end_on_other)  # noqa: E731
    ours, theirs = Record(genesis, rule), Record(genesis, rule)
    shown_us, shown_them = (
        _signed(ids, ours, CHEATER, Count(2)),
        _signed(ids, theirs, CHEATER, Count(1)),
    )
    ours.offer(shown_us)
    theirs.offer(shown_them)
    honest = theirs.sign(ids[HONEST], HONEST, Count(5)).accepted[0].signed
    if end_on_other:
        assert ours.finished
    try:
        offer = ours.offer(honest)
    except OutOfTurn as exc:  # the hole: the honest seat was convicted
        pytest.fail(f"an honest seat on the other fork was convicted: {exc}")
    except BrokenChain as exc:
        assert exc.seat == HONEST and not ours.evidence
    else:
        assert offer.status is Status.TOO_FAR  # after our end: not held, no verdict
    # the fetch that follows a chain break brings the cheater's other version
    with pytest.raises(Equivocation) as ei:
        ours.offer(shown_them)
    assert ei.value.seat == CHEATER


def test_an_entry_chained_to_our_head_for_a_step_it_does_not_owe_is_still_out_of_turn() -> None:
    genesis, ids, _ = game_genesis("high-card", 3)
    rec = Record(genesis, Branching)
    rec.offer(_signed(ids, rec, CHEATER, Count(2)))  # step 2 is owed by seat 2
    with pytest.raises(OutOfTurn) as ei:
        rec.offer(_signed(ids, rec, HONEST, Count(5)))
    assert ei.value.seat == HONEST
