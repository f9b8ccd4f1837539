"""Who gets an accepted entry besides its author, and when a seat asks for what it lacks.

A healthy table sends each entry once per link: its author sends it to every seat,
and nobody passes it on.  Two rules keep a table with a broken link going:

* **Relay over a link known to be down.**  Every peer tells the seats it holds a
  link to whom it can reach (``Links``, on every change).  An entry we accepted
  goes on only to a seat that told us it holds no link to the entry's author
  (:func:`relay_to`); a seat that has not told us anything yet is taken to be
  linked, as at a table that just formed.
* **Ask when an entry is late** (:class:`Nudge`).  Until a link's keepalive finds
  it dead, nobody knows it is down, and what its author sent over it is lost.  A
  seat whose record has waited on others at one step for :data:`NUDGE_S` asks
  every linked seat for the entries from that step (a ``Fetch``, answered from
  their records), and again after twice as long, and so on: a seat whose link to
  the author broke gets the entry from any seat that has it, well before the
  silence limit would name anybody.  A slow step (a shuffle, a person thinking)
  costs a few small requests, their number growing with the log of its length.

Pure policy: no I/O, no clock of its own (times are passed in).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

NUDGE_S = 0.25
"""How long a step may wait on others before we first ask the linked seats for it."""
NUDGE_MAX_S = 8.0
"""The longest wait between two requests for the same step."""


def relay_to(
    author: int,
    via: int | None,
    me: int,
    linked: Iterable[int],
    links: Mapping[int, frozenset[int]],
) -> list[int]:
    """The slots to pass an entry of ``author`` on to, which reached us from ``via``
    (``None``: fetched or read back): the seats we hold a link to (``linked``) that told
    us (``links``: slot -> the slots it holds a link to) they hold none to the author."""
    return sorted(
        slot
        for slot in linked
        if slot not in (author, via, me) and slot in links and author not in links[slot]
    )


class Nudge:
    """When to ask the linked seats for the entries of the step we wait on."""

    __slots__ = ("_step", "_at", "_gap", "asked")

    def __init__(self) -> None:
        self._step: int | None = None
        self._at = 0.0
        self._gap = NUDGE_S
        self.asked = 0
        """Requests made so far (each one ``Fetch`` to every linked seat)."""

    def due(self, now: float, step: int, waiting: bool) -> bool:
        """Is it time to ask for ``step``?  ``waiting``: the step waits on another seat's
        entry (not on ours).  Call it on every look at the record; a step that moved on,
        or that waits on us, starts the clock again."""
        if not waiting or step != self._step:
            self._step = step if waiting else None
            self._at = now + NUDGE_S
            self._gap = NUDGE_S
            return False
        if now < self._at:
            return False
        self._gap = min(self._gap * 2, NUDGE_MAX_S)
        self._at = now + self._gap
        self.asked += 1
        return True

    def deadline(self) -> float | None:
        """When :meth:`due` may next say yes (``None``: not waiting)."""
        return self._at if self._step is not None else None
