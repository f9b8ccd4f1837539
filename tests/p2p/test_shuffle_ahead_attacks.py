"""Hostile seats against the shuffles proposed ahead (p2p/table/game_rule/shuffle.py).

A proposal is precomputation, never evidence; the record's entries are what convict.
These tests attack that line from both sides:

* a record entry whose proof is valid but bound elsewhere (another round, position,
  seat, table, or the record step as before protocol 6), a verbatim replay of a seat's
  last-deal shuffle (the same public starting pile, so only the round differs), and a
  first shuffle made on the previous deal's pile instead of the deck's public masking:
  each convicts its author at every honest seat (an in-process table: the fold's code);
* a proposal that is "checked ahead" lets an entry skip its check only when it is the
  very statement: every field tampered alone finds no match;
* proposals sent by a hostile link (a seat not at the table, our own seat, another
  seat's position, a far round, a flood of copies, junk bytes) are dropped without a
  raise, a conviction, or more than one decode per seat and round.
"""

from __future__ import annotations

import contextlib
import dataclasses
import secrets
from concurrent.futures import Future, ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import trio

from cli.netplay import player_factory
from crypto.elgamal import Ciphertext, encode_pile, public_mask
from crypto.group import base_mul, random_scalar
from crypto.shuffle import shuffle_deck
from crypto.shuffle_proof_tw_batch import ShuffleStatement, prove_shuffle_batchable
from crypto.transcript import Context
from p2p.errors import InvalidMove, TableAbandoned
from p2p.net.node import Node
from p2p.table import local_table
from p2p.table.game_rule import ShuffleBody
from p2p.table.game_rule.shuffle import (
    SLOT_STRIDE,
    Ahead,
    OffRecord,
    Proposal,
    fresh_pile,
    slot_context,
    take_proposal,
)
from p2p.table.seat import game_of
from p2p.table.watchers import Decision, WatchGate
from p2p.wire import ShuffleProposal, Watch
from tests.p2p._games import verify_json
from tests.p2p._tables import config
from tests.p2p.test_shuffle_ahead import PATIENCE_S, TIMEOUT_S, _Patient, _proposed

SEATS = 4


def _position(rule: Any, seat: int) -> int:
    return sum(1 for t in range(seat) if t not in rule.gone)


def _prove(rule: Any, inputs: tuple[Ciphertext, ...], ctx: Context) -> ShuffleBody:
    """A valid shuffle of ``inputs``, its proof bound to ``ctx``."""
    out, witness = shuffle_deck(inputs, rule.joint)
    proof = prove_shuffle_batchable(inputs, out, rule.joint, witness, ctx)
    return ShuffleBody(encode_pile(out), proof.encode())


class _Hook:
    """One cheat hook given to every slot; only engine seat ``seat`` cheats, at shuffle
    round ``round_no``, with ``forge(rule, inputs, round_no, position)``."""

    def __init__(self, seat: int, round_no: int, forge: Any) -> None:
        self.seat, self.round_no, self.forge = seat, round_no, forge
        self.culprit: int | None = None
        self.saved: dict[str, Any] = {}

    def shuffle(self, rule: Any, inputs, out, proof) -> ShuffleBody | None:  # noqa: ANN001
        if rule.mine.seat != self.seat:
            return None
        round_no = rule.shuffle_rounds - 1
        position = _position(rule, self.seat)
        if round_no < self.round_no:  # an honest shuffle, remembered
            self.saved[f"round{round_no}"] = (inputs, ShuffleBody(encode_pile(out), proof.encode()))
            return None
        if round_no > self.round_no or self.culprit is not None:
            return None
        self.culprit = rule.order[self.seat]
        return self.forge(self, rule, inputs, round_no, position)

    def tokens(self, rule: Any, hs, tokens, proof) -> None:  # noqa: ANN001
        if rule.mine.seat == self.seat and rule.shuffle_rounds == 1:
            self.saved["cts"] = list(rule.cts)  # the deal's pile, after its round
        return None


def _convicted(hook: _Hook, game_options: dict[str, Any]) -> Any:
    table = local_table.new_table(
        "slave", SEATS, game_options, cheats=dict.fromkeys(range(SEATS), hook)
    )
    local_table.run(table)
    assert hook.culprit is not None, "the cheating seat had no chance"
    assert {c.seat for c in table.cheats} == {hook.culprit}, table.cheats
    named = [c for c in table.cheats if isinstance(c, InvalidMove)]
    assert len(named) == SEATS - 1, table.cheats  # every honest seat refused it
    assert all("bad shuffle" in str(c) for c in named), named
    assert not any(game_of(r).done for r in table.records)
    return table


def _elsewhere(field: str) -> Any:
    def forge(hook: _Hook, rule: Any, inputs, round_no: int, position: int) -> ShuffleBody:  # noqa: ANN001
        seat = hook.seat
        ctx = {
            "next round": lambda: slot_context(rule, seat, round_no + 1, position),
            "next position": lambda: slot_context(rule, seat, round_no, position + 1),
            "another seat": lambda: slot_context(rule, (seat + 1) % SEATS, round_no, position),
            "another table": lambda: dataclasses.replace(
                slot_context(rule, seat, round_no, position), table_id=secrets.token_bytes(16)
            ),
            "another game": lambda: dataclasses.replace(
                slot_context(rule, seat, round_no, position),
                game=slot_context(rule, seat, round_no, position).game + 1,
            ),
            "the record step": lambda: rule._ctx(seat),  # the binding before protocol 6
        }[field]()
        assert ctx != slot_context(rule, seat, round_no, position)
        return _prove(rule, inputs, ctx)

    return forge


@pytest.mark.parametrize(
    "field",
    [
        "next round",
        "next position",
        "another seat",
        "another table",
        "another game",
        "the record step",
    ],
)
def test_a_shuffle_proof_bound_elsewhere_convicts_its_author(field):
    """A valid shuffle of the right pile, its proof bound to a context that differs in
    one field from (table, game, 256 * round + position, seat)."""
    _convicted(_Hook(2, 0, _elsewhere(field)), {"games": 1})


def test_a_replayed_shuffle_of_the_same_public_pile_convicts_its_author():
    """The first shuffler's input is the deck's public masking in every deal: its deal-1
    entry, replayed verbatim at deal 2, holds for the very same statement but the round."""

    def forge(hook: _Hook, rule: Any, inputs, round_no: int, position: int) -> ShuffleBody:  # noqa: ANN001
        old_inputs, body_ = hook.saved["round0"]
        assert position == 0 and old_inputs == inputs == fresh_pile(rule)
        return body_

    _convicted(_Hook(0, 1, forge), {"games": 2})


def _last_pile(hook: _Hook, rule: Any, inputs, round_no: int, position: int) -> ShuffleBody:  # noqa: ANN001
    """A valid shuffle of deal 1's pile (after its round), bound to the right context."""
    old = hook.saved["cts"]
    by_ct = {ct.encode(): h for h, ct in enumerate(rule.cts)}
    hs = [by_ct[ct.encode()] for ct in inputs]  # the round's handles, in its order
    last_pile = tuple(old[h] for h in hs)
    assert last_pile != inputs
    return _prove(rule, last_pile, slot_context(rule, hook.seat, round_no, position))


def test_a_first_shuffle_of_the_last_deals_pile_convicts_its_author():
    """Deal 2's first shuffler shuffles deal 1's pile (a valid proof, for the right
    context, on those inputs) instead of the deck's public masking."""
    _convicted(_Hook(0, 1, _last_pile), {"games": 2})


async def _play_to_conviction(tmp: Path, hook: _Hook, ready: Any) -> list[Node]:
    """:func:`tests.p2p.test_shuffle_ahead._play`, every node given ``hook``; ended once all
    seats but one have left the table (the cheater, convicted, is left alone: bounded)."""
    nodes: list[Node] = []
    budget = [PATIENCE_S]
    ended: list[Node] = []

    def cfg(i: int):  # noqa: ANN202
        bot = player_factory(bot="heuristic", seed=i)
        return config(
            tmp,
            i,
            make_player=lambda *a: _Patient(bot(*a), nodes, ready, budget),
            cheat=hook,
            linger_s=1.0,
        )

    async def run(node: Node, start: Any, scope: trio.CancelScope) -> None:
        with contextlib.suppress(TableAbandoned):  # the cheater, alone once convicted
            await start()
        ended.append(node)
        if len(ended) >= SEATS - 1:
            scope.cancel()

    with trio.fail_after(TIMEOUT_S):
        async with trio.open_nursery() as nursery:
            opener = Node(cfg(0))
            nodes.append(opener)
            nursery.start_soon(
                run,
                opener,
                partial(opener.open, "slave", SEATS, {"games": 2}),
                nursery.cancel_scope,
            )
            while opener.mesh is None or opener.mesh.listen_port is None:
                await trio.sleep(0.01)
            for i in range(1, SEATS):
                node = Node(cfg(i))
                nodes.append(node)
                start = partial(node.join, peer=opener.mesh.address)
                nursery.start_soon(run, node, start, nursery.cancel_scope)
    return nodes


def test_a_seat_whose_proposal_was_checked_then_signs_another_statement_is_convicted(tmp_path):
    """Real nodes: deal 2's first shuffler proposes honestly (every seat checks its
    proposal ahead), then signs at its step a shuffle of deal 1's pile instead of the
    public masking.  The proposal checked ahead does not stand for it: every honest seat
    checks the entry, convicts it, and ``slaiga verify`` names the same seat."""
    hook = _Hook(0, 1, _last_pile)

    def ready(rules: list[Any]) -> bool:
        return _proposed(rules, lambda p: p.verified)

    nodes = trio.run(_play_to_conviction, tmp_path, hook, ready)
    assert hook.culprit is not None
    for n in nodes:
        rule = game_of(n.record)
        if rule.mine.seat == hook.seat:
            assert rule.proposals_sent == 1  # it proposed, then signed something else
            continue
        assert rule._proposals[1].props[0].verified  # its proposal, checked ahead
        assert n.session.convicted is not None, n.session
        assert n.session.convicted.culprit == hook.culprit
        assert "bad shuffle" in n.session.convicted.reason
        assert rule.proposals_hit == 0  # the entry at position 0 was checked, not skipped
        code, report = verify_json(str(n.store.path))
        assert code == 4 and report["culprit_slot"] == hook.culprit, report


# ---- a proposal checked ahead stands for its very statement only ----------------------------


def _statement(n: int = 4) -> tuple[ShuffleStatement, bytes, bytes]:
    joint = base_mul(random_scalar())
    inputs = tuple(public_mask(base_mul(random_scalar()), joint) for _ in range(n))
    ctx = Context(secrets.token_bytes(16), 1, SLOT_STRIDE + 1, 1)
    out, witness = shuffle_deck(inputs, joint)
    proof = prove_shuffle_batchable(inputs, out, joint, witness, ctx)
    return ShuffleStatement(inputs, out, joint, proof, ctx), encode_pile(out), proof.encode()


def test_a_proposal_checked_ahead_matches_only_its_very_statement():
    st, pile, proof = _statement()
    other, other_pile, other_proof = _statement()
    ahead = Ahead(1, (0, 1, 2))
    ahead.props[1] = Proposal(1, 1, pile, proof, st, verified=True)
    body_ = ShuffleBody(pile, proof)
    args = (1, body_, st.inputs, st.context, st.joint_key)
    assert ahead.checked(*args) is st
    ctx = st.context
    tampered = {
        "seat": (2, body_, st.inputs, ctx, st.joint_key),
        "pile": (1, ShuffleBody(other_pile, proof), st.inputs, ctx, st.joint_key),
        "proof": (1, ShuffleBody(pile, other_proof), st.inputs, ctx, st.joint_key),
        "one input": (1, body_, (other.inputs[0], *st.inputs[1:]), ctx, st.joint_key),
        "input order": (1, body_, st.inputs[::-1], ctx, st.joint_key),
        "key": (1, body_, st.inputs, ctx, other.joint_key),
        "table": (1, body_, st.inputs, dataclasses.replace(ctx, table_id=bytes(16)), st.joint_key),
        "game": (1, body_, st.inputs, dataclasses.replace(ctx, game=2), st.joint_key),
        "round": (1, body_, st.inputs, dataclasses.replace(ctx, step=1), st.joint_key),
        "position": (
            1,
            body_,
            st.inputs,
            dataclasses.replace(ctx, step=ctx.step + 1),
            st.joint_key,
        ),
        "context seat": (1, body_, st.inputs, dataclasses.replace(ctx, seat=2), st.joint_key),
    }
    for name, tampered_args in tampered.items():
        assert ahead.checked(*tampered_args) is None, name
    # received but not (yet, or ever) verified: no match either
    ahead.props[1].verified = False
    assert ahead.checked(*args) is None


# ---- proposals from a hostile link ----------------------------------------------------------


class _Counting:
    """A real one-thread executor that counts what it was given."""

    def __init__(self) -> None:
        self.pool = ThreadPoolExecutor(1)
        self.futures: list[Future[Any]] = []

    def submit(self, fn, *args, **kwargs) -> Future[Any]:  # noqa: ANN001
        future = self.pool.submit(fn, *args, **kwargs)
        self.futures.append(future)
        return future


def test_hostile_proposals_are_dropped_bounded_and_convict_nobody():
    """The seat at position 0 of the next round (its input is the public pile, so what
    it sends is decoded at once) sends junk, a flood of copies, proposals for another
    seat's position and for far rounds; a link that is no seat and our own seat's slot
    send too.  None of it raises, none is evidence, and the victim decodes at most one
    proposal per round of the window (the current round and the two around it)."""
    seen: dict[str, Any] = {}
    posted: list[Any] = []
    sent: list[Any] = []

    def attack(table: Any) -> None:
        if seen:
            return
        rules = [game_of(r) for r in table.records]
        if any(r is None or r.joint is None or r.shuffle_rounds != 1 for r in rules):
            return
        hostile = rules[0].order[0]  # the slot of engine seat 0: position 0
        victim = (hostile + 1) % SEATS
        rule = rules[victim]
        decode, check = _Counting(), _Counting()
        rule.background = decode
        rule.offrecord = OffRecord(posted.append, sent.append, decode, check)
        seen.update(rule=rule, decode=decode, check=check, hostile=hostile)
        r = rule.shuffle_rounds
        tid = rule.table_id
        junk = ShuffleProposal(tid, r, 0, secrets.token_bytes(64 * 52), secrets.token_bytes(99))
        before = rule.proposals_dropped
        take_proposal(rule, 99, junk)  # no seat at this table
        take_proposal(rule, victim, junk)  # our own seat's slot: we propose ourselves
        assert rule.proposals_dropped == before and r not in rule._proposals
        take_proposal(rule, hostile, dataclasses.replace(junk, position=1))  # another's
        take_proposal(rule, hostile, dataclasses.replace(junk, round=r + 2))  # too far
        take_proposal(rule, hostile, dataclasses.replace(junk, round=2**32 - 1))
        assert rule.proposals_dropped == before + 3
        assert set(rule._proposals) <= {r}  # a far round is not even foreseen
        for near in (r - 1, r, r + 1):  # the window: one each, decoded (junk: dropped)
            take_proposal(rule, hostile, dataclasses.replace(junk, round=near))
        for _ in range(500):  # a flood of copies and variants: no more work
            take_proposal(rule, hostile, dataclasses.replace(junk, pile=secrets.token_bytes(8)))
        assert rule.proposals_dropped == before + 3 + 500
        assert len(decode.futures) == 3 and not check.futures
        for _ in range(500):  # bounded: the decodes finish, their verdicts are posted
            for call in posted[:]:
                posted.remove(call)
                call()
            if all(f.done() for f in decode.futures) and not posted:
                break
            decode.futures[-1].exception(timeout=5)
        seen["dropped"] = rule.proposals_dropped - before

    table = local_table.new_table("slave", SEATS, {"games": 2})
    local_table.run(table, on_entry=attack)
    rule = seen["rule"]
    try:
        assert seen["dropped"] == 3 + 500 + 3  # the three junk ones, once decoded
        assert not table.cheats and all(r.finished for r in table.records)
        assert all(p.bad is not None for a in rule._proposals.values() for p in a.props.values())
        assert not seen["check"].futures  # junk is never checked, only decoded
        assert rule.proposals_hit == 0 and rule.proposals_signed == 0
    finally:
        seen["decode"].pool.shutdown()
        seen["check"].pool.shutdown()


def test_a_proposal_from_a_peer_with_no_seat_is_cut_off():
    """A node routes a ``ShuffleProposal`` to its rule only from a seat's link
    (p2p/net/node.py): a spectator or a stranger that sends one is cut off."""
    tid = secrets.token_bytes(16)
    gate = WatchGate(tid, slots=2)
    msg = ShuffleProposal(tid, 1, 0, b"pile", b"proof")
    assert gate.judge(b"stranger", msg).decision is Decision.CUT
    assert gate.judge(b"watcher", Watch(tid, "w")).decision is Decision.WELCOME
    assert gate.judge(b"watcher", msg).decision is Decision.CUT
    assert gate.cut == 2
