"""The whole cheat catalogue over real peer processes on loopback.

One seat runs the cheating peer (tests/p2p/cheat_peer.py, one named cheat);
the others are honest ``cli.net`` bot peers.  Every honest peer must catch it,
name the cheater's seat, exit with code 4 and keep the signed evidence in its
record file, from which ``slaiga verify`` names the same seat and step.

The tables (one per kind) are played two at a time in the background
(:func:`tests.p2p._games.tables_side_by_side`); each kind's test checks its own table.
"""

from __future__ import annotations

import pytest

from tests.p2p._games import GameTable, PeerOutcome, tables_side_by_side, verify_all_json
from tests.p2p.cheaters import GAME_OF, KINDS

EXIT_CHEATER = 4
CHEAT_SLOT = 1
OPTIONS = {"slave": {"games": 3}, "slajens": {"rounds": 3}}
TRIES = 5


def play(tmp_path, kind: str, attempt: int):
    game, seats = GAME_OF[kind]
    # random (honest) opponents give a gift complaint or a miss claim its chance
    random_honest = kind in ("false-complaint", "false-miss")
    bots = {s: "random" for s in range(seats)} if random_honest else {}
    table = GameTable(
        tmp_path / f"try{attempt}",
        game,
        seats,
        OPTIONS.get(game),
        cheats={CHEAT_SLOT: kind},
        bots=bots,
        extra=["--linger", "1"],
    )
    with table:
        table.start()
        honest = [p for i, p in enumerate(table.peers) if i != CHEAT_SLOT]
        outs = []
        for p in honest:
            outs.append(p.finish(timeout=400))
    return outs


def play_until_caught(tmp_path, kind: str) -> list[PeerOutcome]:
    """The honest peers' outcomes of the first game in which the cheat got its chance."""
    for attempt in range(TRIES):
        outs = play(tmp_path, kind, attempt)
        if any(o.returncode == EXIT_CHEATER for o in outs):
            return outs
        # the roles of a deal decide whether a gift cheat gets its chance: try again
        assert all(o.returncode == 0 for o in outs), [o.stderr[-2000:] for o in outs]
    pytest.fail(f"{kind}: no chance to cheat in {TRIES} games")


@pytest.fixture(scope="module")
def tables(request, tmp_path_factory):
    root = tmp_path_factory.mktemp("cheats")
    return tables_side_by_side(request, "kind", lambda kind: play_until_caught(root / kind, kind))


@pytest.mark.parametrize("kind", KINDS)
def test_cheat_caught_by_every_honest_peer(tables, kind):
    outs = tables[kind].result()
    culprits = set()
    for out in outs:
        assert out.returncode == EXIT_CHEATER, out.stderr[-3000:]
        assert out.result is not None
    verified = verify_all_json([out.result["record"] for out in outs])
    for out, (code, report) in zip(outs, verified, strict=True):
        culprit = out.result["culprit"]
        assert culprit is not None
        culprits.add(culprit)
        assert code == EXIT_CHEATER, report  # verify exits as the table did: 4
        assert report["culprit"] == culprit, (report, out.result)
        # the culprit is the cheater, named p1 (join order does not fix its slot)
        assert out.result["seats"][culprit] == f"p{CHEAT_SLOT}"
        assert report["culprit_name"] == f"p{CHEAT_SLOT}"
    assert len(culprits) == 1
