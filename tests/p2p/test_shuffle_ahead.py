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

from functools import partial
from pathlib import Path
from typing import Any

import trio

from cli.netplay import player_factory
from crypto.elgamal import encode_pile
from crypto.shuffle import shuffle_deck
from crypto.shuffle_proof_tw_batch import prove_shuffle_batchable
from p2p.net.node import Node
from p2p.table.game_rule.shuffle import slot_context
from p2p.table.seat import game_of
from tests.p2p._games import verify_json
from tests.p2p._tables import config

SEATS = 4
TIMEOUT_S = 240


async def _play(tmp: Path, cheats: dict[int, Any]) -> list[Node]:
    """A two-deal Slave match of 4 real nodes (join order ``i``, cheat hook ``cheats[i]``)."""
    nodes: list[Node] = []

    def cfg(i: int):  # noqa: ANN202
        return config(
            tmp,
            i,
            make_player=player_factory(bot="heuristic", seed=i),
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
    nodes = trio.run(_play, tmp_path, {})
    rules = _finished_alike(nodes)
    for r in rules:
        assert r.shuffle_rounds == 2
        assert r.shuffles_made == 1  # deal 1's, at its step
        assert r.proposals_sent == 1
        assert r.proposals_signed == 1  # deal 2's: no shuffle made at its step
        assert r.proposals_hit == SEATS - 1  # the others' deal-2 shuffles, checked ahead
        assert r.proposals_dropped == 0


class _Proposer:
    """A cheat hook that sends, instead of its proposal: ``"equivocate"`` another valid
    shuffle of the same pile (and signs its real one at the step); ``"garbage"`` its
    proposal with a broken proof; ``"elsewhere"`` a valid shuffle bound to the next
    round's position instead of this one's."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.sent = 0

    def propose(self, rule, inputs, round_no, position, pile, proof):  # noqa: ANN001, ANN201
        self.sent += 1
        if self.kind == "garbage":
            return pile, proof[:40] + bytes([proof[40] ^ 1]) + proof[41:]
        where = (round_no, position) if self.kind == "equivocate" else (round_no + 1, position)
        ctx = slot_context(rule, rule.mine.seat, *where)
        out, witness = shuffle_deck(inputs, rule.joint)
        forged = prove_shuffle_batchable(inputs, out, rule.joint, witness, ctx)
        return encode_pile(out), forged.encode()


def _cheater_and_after(rules: list[Any], cheater: int) -> tuple[Any, list[Any], list[Any]]:
    """The cheating seat's rule, the honest rules, and those of the seats shuffling after it."""
    seat = rules[cheater].mine.seat
    honest = [r for i, r in enumerate(rules) if i != cheater]
    return rules[cheater], honest, [r for r in honest if r.mine.seat > seat]


def test_a_seat_that_proposes_one_shuffle_and_signs_another_convicts_nobody(tmp_path):
    hooks = {1: _Proposer("equivocate"), 2: _Proposer("garbage")}
    nodes = trio.run(_play, tmp_path, hooks)
    rules = _finished_alike(nodes)
    first = min(hooks, key=lambda c: rules[c].mine.seat)
    assert hooks[first].sent == 1  # (the later one proposes if what it shuffles decodes)
    assert rules[first].proposals_signed == 1  # it signs its real shuffle
    for cheater, hook in hooks.items():
        _, honest, _ = _cheater_and_after(rules, cheater)
        for r in honest:  # what it sent is never what the record holds: checked afresh
            assert r.proposals_hit <= SEATS - 2
        if hook.kind == "garbage" and hook.sent:
            assert all(r.proposals_dropped >= 1 for r in honest)
    # whoever shuffles after a bad or false proposal shuffles afresh at its step
    for i, r in enumerate(rules):
        if i not in hooks and r.mine.seat > rules[first].mine.seat:
            assert r.shuffles_made == 2 and r.proposals_signed == 0


def test_a_proposal_bound_to_another_round_is_dropped(tmp_path):
    nodes = trio.run(_play, tmp_path, {3: _Proposer("elsewhere")})
    rules = _finished_alike(nodes)
    mine, honest, after = _cheater_and_after(rules, 3)
    for r in honest:
        assert r.proposals_dropped == 1  # its proof does not hold for this round
        assert r.proposals_hit <= SEATS - 2
    for r in after:  # built on it before its check failed, or waited: afresh at the step
        assert r.proposals_signed == 0 and r.shuffles_made == 2
