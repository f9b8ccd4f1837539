"""One seat's table session, sans-I/O: the policy of a running record.

:class:`TableSession` is what a peer decides while a table's record runs, with no
socket, clock or thread of its own (the manner of h11 and trio-websocket: a
sans-I/O core, and a thin shell, :mod:`p2p.net.node`, that moves bytes and
timers).  The shell feeds it *events* and carries out the *effects* it
returns, in order:

* events: :meth:`TableSession.peer_up` / :meth:`~TableSession.peer_down`
  (a link to a seat came or went), :meth:`~TableSession.message` (a message
  from a seated peer), :meth:`~TableSession.offer` (one signed entry, from
  a peer or our file), :meth:`~TableSession.own` (our own next body),
  :meth:`~TableSession.vote` (our player votes to end the table),
  :meth:`~TableSession.leave` / :meth:`~TableSession.back` (our player left, a bot
  plays on, or is back) and :meth:`~TableSession.take_notice` (another seat's),
  :meth:`~TableSession.beat` and :meth:`~TableSession.tick` (the time now);
* effects (:mod:`p2p.table.effects`): ``Send``, ``SendEach``, ``Broadcast``,
  ``SendOwn`` (bytes to peers), ``Persist``, ``Sync``, ``PersistVote``, ``PersistNotice``,
  ``CloseWithVotes`` (the record file), a :class:`p2p.table.events.NodeEvent`
  (report it), ``Trace``, ``Tell``, ``AskEnd``, ``ShowPlayer`` (our player),
  ``Serve`` (answer a fetch) and ``Wake`` (look again now).

Each event returns the effects it caused (:attr:`TableSession.out` is drained);
one that must stop the table raises (:class:`p2p.errors.TableAbandoned`, a
:class:`p2p.errors.FoldFailed`) after queueing what must still be done, so the
shell carries out :attr:`TableSession.out` in a ``finally``.  :meth:`tick`
returns whether the record run is over and when to look again.

One module per concern; each holds its state and its rules, and the session
(:mod:`.core`) routes the events to them:

============  ==========================================================================
``core``      :class:`TableSession`: the events, our own and others' entries, the tick
``context``   what every topic shares: the record, our seat, the effect queue, names,
              how the table ended
``messages``  the unsigned ``finished`` and ``links`` messages between seats
``blame``     blame and forks: a chain break is investigated by fetching whole records
              before anyone is named; evidence kept and relayed; conviction
``heads``     fetched records, and head claims compared entry by entry
``stalls``    silence with no false blame: away time, a re-fetch round first
``links``     who holds a link to whom, relay choice, late-step requests
``vanished``  a player whose machine is gone, said by name
``votes``     the signed end vote (:mod:`p2p.table.endvote`)
``notices``   the signed notices of a player who left or is back (:mod:`p2p.table.notice`)
``lane``      the absence lane of a seat that left for good (``absent``, ``present``)
``linger``    the finish, and the linger after it or after an early end
============  ==========================================================================
"""

from __future__ import annotations

from p2p.table.effects import Effect, Tick
from p2p.table.results import CheatReport, TableResult
from p2p.table.session.context import seat_order, who
from p2p.table.session.core import TableSession
from p2p.table.session.linger import ENDED_LINGER_S, LINGER_S
from p2p.table.session.messages import Finished, Links
from p2p.table.session.stalls import AWAY_AFTER_S, HEARTBEAT_S, ISOLATED_ROUNDS, AwayClock

__all__ = [
    "AWAY_AFTER_S",
    "ENDED_LINGER_S",
    "HEARTBEAT_S",
    "ISOLATED_ROUNDS",
    "LINGER_S",
    "AwayClock",
    "CheatReport",
    "Effect",
    "Finished",
    "Links",
    "TableResult",
    "TableSession",
    "Tick",
    "seat_order",
    "who",
]
