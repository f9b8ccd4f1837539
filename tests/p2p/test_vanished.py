"""A vanished player (issue 22): a peer killed for good while it owes a decision would
hold the table for the whole decision limit (30 minutes by default).  Once that seat
has had no link to anyone for the machine steps' limit, every other peer says so, by
name (the ``vanished`` event); the players who remain may then end the table by a
signed vote (bots vote at once), else the table goes on waiting as its manifest says.

Three real nodes in one Trio run over loopback play a short game; the seat that is
asked for a decision never answers, and its node is then stopped for good.  The two
bots left vote, and both end the table as abandoned by vote, with the votes as the
closing frame of their record files, which ``slaiga verify`` reports as ended by vote.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import trio

from engine.game import Action, Event, Game
from p2p.errors import TableAbandoned
from p2p.net.node import Node, TableResult
from p2p.record.store import load
from p2p.record.verify import ENDED_BY_VOTE, verify_record_file
from p2p.table.events import EndedByVote, NodeEvent, Vanished, VoteCast
from tests.p2p._nethelpers import no_leaks
from tests.p2p._tables import config

TIMEOUT_S = 60
LIMITS = {
    "stall_after_ms": 250,
    "max_wait_ms": 1500,  # the machine steps' limit: after this long unlinked, say so
    "decide_stall_ms": 1000,
    "decide_max_ms": 120_000,  # the table would wait this long for the decision
}
GONE = 2  # join order of the peer that vanishes


class NeverAnswers:
    """A player who is asked for a decision and never gives one (its machine dies)."""

    def __init__(self, asked: trio.Event) -> None:
        self.asked = asked

    def observe(self, game: Game, seat: int, events: Sequence[Event]) -> None:
        pass

    async def decide(self, game: Game, seat: int) -> Action:
        self.asked.set()
        await trio.sleep_forever()
        raise AssertionError("unreachable")

    def progress(self, text: str) -> None:
        pass

    def finish(self, summary: Any) -> None:
        pass


async def test_a_vanished_player_is_named_by_everyone_left(tmp_path: Path) -> None:
    asked = trio.Event()
    seen: dict[int, list[NodeEvent]] = {i: [] for i in range(3)}
    results: dict[int, TableResult] = {}
    ended: dict[int, TableAbandoned] = {}

    def cfg(i: int, **kw: Any):
        return config(tmp_path, i, on_event=seen[i].append, keepalive_dead=2.0, **LIMITS, **kw)

    with trio.fail_after(TIMEOUT_S):
        async with no_leaks(), trio.open_nursery() as nursery:
            opener = Node(cfg(0))

            async def run(i: int, node: Node, scope: trio.CancelScope) -> None:
                with scope:
                    try:
                        if i == 0:
                            results[i] = await node.open("high-card", 3, {})
                        else:
                            results[i] = await node.join(peer=opener.mesh.address)
                    except TableAbandoned as exc:
                        ended[i] = exc

            scopes = [trio.CancelScope() for _ in range(3)]
            nursery.start_soon(run, 0, opener, scopes[0])
            while opener.mesh is None or opener.mesh.listen_port is None:
                await trio.sleep(0.01)
            for i in (1, 2):
                extra = {"make_player": lambda *a: NeverAnswers(asked)} if i == GONE else {}
                node = Node(cfg(i, **extra))
                nursery.start_soon(run, i, node, scopes[i])
                if i == 1:
                    while len(seen[0]) == 0 or not any(e.KIND == "joined" for e in seen[0]):
                        await trio.sleep(0.01)
            await asked.wait()
            scopes[GONE].cancel()  # its machine is gone: no link, no answer, ever

            def told(i: int) -> list[Vanished]:
                return [e for e in seen[i] if isinstance(e, Vanished)]

            while not (0 in ended and 1 in ended):
                await trio.sleep(0.05)
            nursery.cancel_scope.cancel()
    gone_name = f"p{GONE}"
    for i in (0, 1):
        (event,) = told(i)
        assert event.name == gone_name and event.slot == GONE, event
        assert event.silent_for >= LIMITS["max_wait_ms"] / 1000
        assert event.gives_up_in > 60  # the table still waits, as its manifest says
        assert gone_name in event.describe()
    assert not results  # nobody finished the game
    for i in (0, 1):
        # the bots left voted to end the table (each once), and both ended it by vote
        casts = [e for e in seen[i] if isinstance(e, VoteCast)]
        assert sorted(e.voter_slot for e in casts) == [0, 1], casts
        assert all(e.slot == GONE and e.name == gone_name for e in casts)
        (end,) = [e for e in seen[i] if isinstance(e, EndedByVote)]
        assert end.slot == GONE and end.name == gone_name
        exc = ended[i]
        assert exc.by_vote and exc.seat == GONE and gone_name in str(exc)
        result = exc.result
        assert isinstance(result, TableResult)
        assert result.ended_by_vote == GONE and result.convicted is None and not result.cheats
        assert result.game_summary()["ended_by_vote"]["name"] == gone_name
        loaded = load(result.record_file)
        assert loaded.closed and {v.seat for v in loaded.votes} == {0, 1}
        report = verify_record_file(result.record_file)
        assert report.failure is not None and report.failure.kind == ENDED_BY_VOTE
        assert report.failure.culprit is None and report.ended_by_vote == GONE
