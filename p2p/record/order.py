"""Who must speak next: the ordering contract between the record and protocol rules.

There is no leader.  Every peer feeds the same completed steps of the record
into the same deterministic :class:`Rule`, so every peer computes the same
:class:`Owed` answer for the next step: which seats must send an entry, and of
which kinds.

A step is owed either by **one actor** or by **a set of concurrent
responders**.  Both are the same thing to the record: a set of seats, each of
which must contribute exactly one entry to the step.  Concurrent responders
need no leader to get a deterministic chain position, because

* every responder's entry carries the same step number and the same ``prev``:
  the hash of the last step *before* the round, so no responder needs to see
  another's entry before sending its own;
* the step is complete when every owed seat has contributed, and its hash is
  taken over the contributions **sorted by seat** (see
  :func:`p2p.record.chain.step_hash`), so arrival order does not matter and every
  peer derives the same hash for the next step to chain to.

A one-actor step is just a round of one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from p2p.wire import Body, Entry


@dataclass(frozen=True, slots=True)
class Owed:
    """What the next step needs: for each owing seat, the entry kinds it may send."""

    wants: Mapping[int, frozenset[str]]

    @classmethod
    def actor(cls, seat: int, *kinds: str) -> Owed:
        """One seat acts."""
        return cls({seat: frozenset(kinds)})

    @classmethod
    def responders(cls, seats: Iterable[int], *kinds: str) -> Owed:
        """Every seat in ``seats`` responds concurrently (order fixed by seat number)."""
        kk = frozenset(kinds)
        return cls({s: kk for s in sorted(seats)})

    @property
    def seats(self) -> frozenset[int]:
        return frozenset(self.wants)

    def describe(self) -> str:
        return ", ".join(f"seat {s}: {'/'.join(sorted(k))}" for s, k in sorted(self.wants.items()))


@dataclass(frozen=True, slots=True)
class StepView:
    """A completed step as rules see it: its number, hash and entries in seat order."""

    number: int
    hash: bytes
    entries: tuple[Entry, ...]

    def by_seat(self) -> dict[int, Body]:
        return {e.seat: e.body for e in self.entries}


ABSENT_KIND = "absent"
"""A seat's signed statement that the seats it names are gone (issue 21): the step
closes *by absence* once every other remaining seat signed the same one."""
PRESENT_KIND = "present"
"""A seat's signed statement that it holds the named seats' entries for the step, so it
will never sign ``absent`` for them there: the step can only close as usual."""
LANE_KINDS = frozenset({ABSENT_KIND, PRESENT_KIND})
"""The *absence lane*: entries a seat may sign at a step besides the one it owes (at most
one lane entry per seat and step); see :class:`p2p.record.chain.Record`."""


@runtime_checkable
class AbsenceRule(Protocol):
    """A rule under which seats can leave for good (a table with ``survive`` on)."""

    def check_absent(self, seat: int, named: frozenset[int], kind: str) -> None:
        """Raise a ``CheatDetected`` naming ``seat`` unless it may sign a lane entry of
        ``kind`` naming ``named`` at the current step."""
        ...

    def advance_absent(self, step: StepView, named: frozenset[int]) -> None:
        """The current step closed by absence: the ``named`` slots are gone."""
        ...


class Rule(Protocol):
    """A deterministic protocol driver, a fold over the record's completed steps.

    ``owed()`` must depend only on the steps passed to ``advance`` so far (and
    on what the rule was built from, e.g. the manifest), so every peer agrees.
    """

    def owed(self) -> Owed | None:
        """What the next step needs, or ``None`` when the protocol has finished."""
        ...

    def check(self, seat: int, body: Body) -> None:
        """Validate an in-turn entry's content; raise a ``CheatDetected`` naming ``seat``."""
        ...

    def advance(self, step: StepView) -> None:
        """Take one completed step into account."""
        ...
