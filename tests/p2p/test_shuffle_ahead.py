"""The next deal's shuffles, proposed ahead off the record (p2p/table/game_rule/shuffle.py).

Four real nodes in one Trio run over loopback TCP play a two-deal Slave match with
heuristic bots.  While deal 1 is played, each seat shuffles deal 2's starting pile on
top of the previous seat's proposal and sends it to the others (``ShuffleProposal``);
at deal 2's steps each seat signs its proposal and the others find it checked.  The
tests count operations, never time: deal 2 makes no shuffle at its steps.  A peer that
sends one shuffle and signs another (equivocation), or sends a bad proposal, or one
bound to another round or position, leaves the game correct and convicts nobody: a
proposal is never evidence.  Every record verifies offline (``slaiga verify``).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import msgpack
import pytest
import trio

from cli.netplay import player_factory
from crypto.elgamal import encode_pile
from crypto.shuffle import shuffle_deck
from crypto.shuffle_proof_tw_batch import prove_shuffle_batchable
from p2p.errors import RemoteProtocolError
from p2p.net.node import Node
from p2p.table.game_rule.shuffle import SPARE_AFTER_ACTIONS, slot_context
from p2p.table.seat import game_of
from p2p.wire import MAX_SEATS, ShuffleProposal, decode_body, encode_body
from tests.p2p._games import verify_json
from tests.p2p._tables import config

SEATS = 4
TIMEOUT_S = 240
PATIENCE_S = 30
"""How long the bots wait, at most in all, for the next deal's proposals."""

Ready = Callable[[list[Any]], bool]
"""Given every seat's rule: is the off-record work a test looks at done?"""


class _Patient:
    """A heuristic bot that, while deal 1 is played and its proposals are under way,
    decides only once ``ready`` holds for every seat's rule (bounded): so what was
    proposed is in before deal 2 begins, however loaded the machine (a count, not a
    race)."""

    def __init__(self, inner: Any, nodes: list[Node], ready: Ready, budget: list[float]) -> None:
        self.inner, self.nodes, self.ready = inner, nodes, ready
        self.budget = budget  # seconds left to wait, shared by the table's bots

    def observe(self, game, seat, events) -> None:  # noqa: ANN001
        self.inner.observe(game, seat, events)

    async def decide(self, game, seat):  # noqa: ANN001, ANN201
        rules = [game_of(n.record) if n.record is not None else None for n in self.nodes]
        if all(r is not None for r in rules) and len(rules) == SEATS:
            start = trio.current_time()
            with trio.move_on_after(max(0.0, self.budget[0])):
                while _proposing(rules) and not self.ready(rules):
                    await trio.sleep(0.01)
            self.budget[0] -= trio.current_time() - start
        return await self.inner.decide(game, seat)

    def progress(self, text: str) -> None:
        self.inner.progress(text)

    def finish(self, summary) -> None:  # noqa: ANN001
        self.inner.finish(summary)


def _proposing(rules: list[Any]) -> bool:
    """Deal 1 is played and its seats are making deal 2's proposals."""
    started = all(r._actions_since_shuffle >= SPARE_AFTER_ACTIONS for r in rules)
    return started and all(r.shuffle_rounds == 1 for r in rules)


def _proposed(rules: list[Any], check: Callable[[Any], bool], positions: Any = None) -> bool:
    """Every seat holds the proposals of deal 2's round (at ``positions``: all by
    default) and ``check`` holds for each (its own included)."""
    for r in rules:
        ahead = r._proposals.get(1)
        if ahead is None:
            return False
        for pos in range(SEATS) if positions is None else positions(r):
            p = ahead.props.get(pos)
            if p is None or not check(p):
                return False
    return True


async def _play(tmp: Path, cheats: dict[int, Any], ready: Ready) -> list[Node]:
    """A two-deal Slave match of 4 real nodes (join order ``i``, cheat hook ``cheats[i]``)."""
    nodes: list[Node] = []
    budget = [PATIENCE_S]

    def cfg(i: int):  # noqa: ANN202
        bot = player_factory(bot="heuristic", seed=i)
        return config(
            tmp,
            i,
            make_player=lambda *a: _Patient(bot(*a), nodes, ready, budget),
            cheat=cheats.get(i),
            linger_s=1.0,
        )

    with trio.fail_after(TIMEOUT_S):
        async with trio.open_nursery() as nursery:
            opener = Node(cfg(0))
            nodes.append(opener)
            nursery.start_soon(opener.open, "slave", SEATS, {"games": 2})
            while opener.mesh is None or opener.mesh.listen_port is None:
                await trio.sleep(0.01)
            for i in range(1, SEATS):
                node = Node(cfg(i))
                nodes.append(node)
                nursery.start_soon(partial(node.join, peer=opener.mesh.address))
    return nodes


def _finished_alike(nodes: list[Node]) -> list[Any]:
    """Every seat finished the match, nobody convicted, one record; verified offline."""
    rules = [game_of(n.record) for n in nodes]
    assert all(r is not None and r.done for r in rules)
    assert len({n.record.head for n in nodes}) == 1
    assert len({repr(r.result()) for r in rules}) == 1
    for n in nodes:
        assert n.session.convicted is None
        code, report = verify_json(str(n.store.path))
        assert code == 0 and report["ok"] and report["finished"], report
    return rules


def test_the_next_deal_signs_the_shuffles_proposed_while_the_last_was_played(tmp_path):
    def ready(rules: list[Any]) -> bool:
        return _proposed(rules, lambda p: p.verified)

    nodes = trio.run(_play, tmp_path, {}, ready)
    rules = _finished_alike(nodes)
    for r in rules:
        assert r.shuffle_rounds == 2
        assert r.shuffles_made == 1  # deal 1's, at its step
        assert r.proposals_sent == 1
        assert r.proposals_signed == 1  # deal 2's: no shuffle made at its step
        assert r.proposals_hit == SEATS - 1  # the others' deal-2 shuffles, checked ahead
        assert r.proposals_dropped == 0


class _Cheats:
    """One cheat hook for two nodes: the first of them to propose (the one with the
    lower position: proposals are made in the round's order) sends, instead of its
    proposal, another valid shuffle of the same pile (it signs its real one at its step:
    equivocation); the second sends a valid shuffle bound to the next round instead."""

    def __init__(self) -> None:
        self.by_seat: dict[int, str] = {}

    def propose(self, rule, inputs, round_no, position, pile, proof):  # noqa: ANN001, ANN201
        kind = "equivocate" if not self.by_seat else "elsewhere"
        self.by_seat[rule.mine.seat] = kind
        where = (round_no, position) if kind == "equivocate" else (round_no + 1, position)
        ctx = slot_context(rule, rule.mine.seat, *where)
        out, witness = shuffle_deck(inputs, rule.joint)
        forged = prove_shuffle_batchable(inputs, out, rule.joint, witness, ctx)
        return encode_pile(out), forged.encode()


def test_an_equivocating_or_misbound_proposal_convicts_nobody(tmp_path):
    """Every seat waits until the others hold both cheaters' proposals, checked (the
    equivocating one valid, the misbound one dropped), and every proposal before them."""
    hook = _Cheats()
    cheaters = {1, 2}  # join order
    fine = {"equivocate": lambda p: p.verified, "elsewhere": lambda p: p.bad is not None}

    def ready(rules: list[Any]) -> bool:
        if len(hook.by_seat) < 2:
            return False
        first = min(hook.by_seat)  # no seat is gone: seat = position
        if not _proposed(rules, lambda p: p.verified, lambda r: range(first)):
            return False
        for seat, kind in hook.by_seat.items():
            them = [r for r in rules if r.mine.seat != seat]
            if not _proposed(them, fine[kind], lambda r, seat=seat: [seat]):
                return False
        return True

    rules = _finished_alike(trio.run(_play, tmp_path, dict.fromkeys(cheaters, hook), ready))
    first = min(hook.by_seat)
    assert hook.by_seat[first] == "equivocate" and len(hook.by_seat) == 2
    by_seat = {r.mine.seat: r for r in rules}
    assert by_seat[first].proposals_signed == 1  # it signs its real shuffle at its step
    for i, r in enumerate(rules):
        if i in cheaters:
            continue
        # only the shuffles before the first cheater's were signed as proposed
        assert r.proposals_hit == first - (r.mine.seat < first)
        assert r.proposals_dropped == 1  # the misbound one: its proof fails here
        if r.mine.seat > first:  # built on what a cheater sent: afresh at its step
            assert r.proposals_signed == 0 and r.shuffles_made == 2


def test_a_proposal_on_the_wire_is_schema_checked():
    msg = ShuffleProposal(bytes(16), 1, 3, b"pile", b"proof")
    raw = encode_body(msg)
    assert decode_body(raw, ShuffleProposal) == msg
    tag, fields = msgpack.unpackb(raw, raw=False)
    for name, value in (
        ("position", MAX_SEATS),  # no such position
        ("table_id", bytes(15)),  # not a table id
        ("round", -1),  # no such round
        ("pile", "not bytes"),
    ):
        bad = msgpack.packb([tag, {**fields, name: value}], use_bin_type=True)
        with pytest.raises(RemoteProtocolError):
            decode_body(bad, ShuffleProposal)
