"""``Shuffle(handles)``: one ``shuffle`` step per seat in engine-seat order, the pile
permuted and re-masked with a Terelius-Wikstrom proof checked by every peer.

Each seat shuffles the previous output at once; the proofs are checked together, in
one batch (``crypto.shuffle_proof_tw_batch``), when the last shuffle is in.  A
received shuffle may be checked, and our own made, ahead of the fold in a worker
thread (:data:`p2p.table.game_rule.core.Job`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from crypto.elgamal import Ciphertext, decode_pile, encode_pile
from crypto.errors import CryptoError
from crypto.group import Point
from crypto.shuffle import shuffle_deck
from crypto.shuffle_proof_tw_batch import (
    ShuffleStatement,
    TWCommitmentProof,
    prove_shuffle_batchable,
    verify_shuffles_batch,
)
from crypto.transcript import Context
from engine.obligations import Shuffle
from p2p.errors import InvalidMove, LocalProtocolError
from p2p.table.game_rule.core import Flow, Job, Need
from p2p.wire import Blob, Body, body

if TYPE_CHECKING:
    from p2p.table.game_rule.fold import GameRule

SHUFFLE_KIND = "shuffle"


@body(SHUFFLE_KIND)
@dataclass(frozen=True, slots=True)
class ShuffleBody(Body):
    """The re-masked, permuted pile (64 bytes a card) and its shuffle proof."""

    pile: Blob
    proof: Blob


def discharge(rule: GameRule, ob: Shuffle) -> Flow:
    """Every seat in turn permutes and re-masks the pile.  Each seat shuffles the
    previous output at once; the proofs are checked together, in one batch
    (``crypto.shuffle_proof_tw_batch``), when the last shuffle is in: nothing
    about these cards is revealed before that, so a bad shuffle is caught in
    time, and the seats' turns are not held up by each other's checks."""
    hs = rule._check_handles(ob.handles)
    if not hs:
        return None, None
    statements: list[ShuffleStatement] = []
    for s in range(rule.n):
        if s in rule.gone:
            continue  # a seat that is gone shuffles no more
        inputs = tuple(rule.cts[h] for h in hs)
        # Only the round's last shuffle is checked ahead, in one batch with the round's
        # earlier ones (captured now: the statements are immutable): a batch costs about
        # 6 multiplications a card and shuffle where one proof alone costs about 9, and
        # the seats before the last shuffle at once instead of waiting for each check.
        pending = tuple(statements) if s == rule.n - 1 else None
        out = yield Need(
            SHUFFLE_KIND,
            (s,),
            lambda seat, b, inputs=inputs: _parse(rule, seat, inputs, b),
            "shuffling",
            rule._for_me((s,), lambda inputs=inputs: _make(rule, inputs)),
            pre=lambda seat, b, inputs=inputs, pending=pending: _pre(
                rule, seat, inputs, b, pending
            ),
            premake=lambda inputs=inputs, pending=pending: _premake(rule, inputs, pending or ()),
        )
        if s not in out:
            continue  # it left while we waited for its shuffle
        statement = out[s]
        if not rule._trusted(s) and not any(statement is v for v in rule._checked_ahead):
            statements.append(statement)
        for h, ct in zip(hs, statement.outputs, strict=True):
            rule.cts[h] = ct
            rule.ptok[h] = {}  # no token opens the new ciphertexts
            if rule.mine is not None:
                rule.mine.known.pop(h, None)
    left = [st for st in statements if not any(st is v for v in rule._checked_ahead)]
    rule.proofs_checked += len(statements) - len(left)  # checked ahead, in one batch
    rule._checked_ahead.clear()
    _verify(rule, left)
    return None, None


def _shuffle_and_prove(
    inputs: tuple[Ciphertext, ...], joint: Point, ctx: Context
) -> tuple[tuple[Ciphertext, ...], Any]:
    """Permute and re-mask ``inputs``, and prove it (pure: may run in a worker thread)."""
    out, witness = shuffle_deck(inputs, joint)
    return out, prove_shuffle_batchable(inputs, out, joint, witness, ctx)


def _decode(
    inputs: tuple[Ciphertext, ...], joint: Point, ctx: Context, b: ShuffleBody
) -> ShuffleStatement:
    """A shuffle entry as a statement, every point and scalar validated (pure)."""
    n = len(inputs)
    out = tuple(decode_pile(b.pile, n))
    proof = TWCommitmentProof.decode(b.proof, expected_size=n)
    return ShuffleStatement(inputs, out, joint, proof, ctx)


def _verify(rule: GameRule, statements: list[ShuffleStatement]) -> None:
    if not statements:
        return
    try:
        verify_shuffles_batch(statements)
    except CryptoError:
        for st in statements:  # name the culprit
            try:
                verify_shuffles_batch([st])
            except CryptoError as exc:
                slot = rule.order[st.context.seat]
                raise InvalidMove(slot, f"bad shuffle at step {st.context.step}: {exc}") from None
        raise LocalProtocolError("a shuffle batch failed but no single proof did") from None
    rule.proofs_checked += len(statements)


def _make(rule: GameRule, inputs: tuple[Ciphertext, ...]) -> Body:
    mine = rule.mine
    assert mine is not None and rule.joint is not None
    made = rule._made.pop(rule.step_no, None)
    rule._made.clear()
    if made is not None and made[0] is inputs and made[1] == rule._ctx(mine.seat):
        out, proof = made[2], made[3]
        rule._checked_ahead.extend(made[4])  # the round's earlier shuffles, checked
    else:
        out, proof = _shuffle_and_prove(inputs, rule.joint, rule._ctx(mine.seat))
    forged = rule._cheat("shuffle", inputs, out, proof)
    if forged is not None:
        return forged
    return ShuffleBody(encode_pile(out), proof.encode())


def _premake(
    rule: GameRule, inputs: tuple[Ciphertext, ...], pending: tuple[ShuffleStatement, ...] = ()
) -> Job:
    """Our shuffle and its proof; when ours is the round's last, the same job also checks
    the round's earlier shuffles (``pending``) in one batch."""
    mine, joint, step = rule.mine, rule.joint, rule.step_no
    assert mine is not None and joint is not None
    ctx = rule._ctx(mine.seat)

    def job() -> Callable[[], None]:
        out, proof = _shuffle_and_prove(inputs, joint, ctx)
        checked: tuple[ShuffleStatement, ...] = ()
        if pending:
            try:
                verify_shuffles_batch(pending)
                checked = pending
            except CryptoError:
                pass  # the fold checks them again and names the culprit

        def keep() -> None:
            if rule.step_no == step:
                rule._made[step] = (inputs, ctx, out, proof, checked)

        return keep

    return job


def _parse(
    rule: GameRule, seat: int, inputs: tuple[Ciphertext, ...], b: ShuffleBody
) -> ShuffleStatement:
    """Decode (validating every point and scalar); the proof is checked in a batch,
    unless a job of :meth:`GameRule.prework` checked this very statement already."""
    assert rule.joint is not None
    ctx = rule._ctx(seat)
    ahead = rule._ahead.pop((SHUFFLE_KIND, seat, rule.step_no), None)
    if ahead is not None:
        body_, st, pending = ahead
        if body_ == b and st.inputs == inputs and st.joint_key == rule.joint and st.context == ctx:
            if pending is None:
                return st  # decoded (every point validated) ahead; checked in the batch
            rule._checked_ahead.append(st)
            rule._checked_ahead.extend(pending)  # counted when the round ends
            rule.proofs_checked += 1
            return st
    return _decode(inputs, rule.joint, ctx, b)


def _pre(
    rule: GameRule,
    seat: int,
    inputs: tuple[Ciphertext, ...],
    b: ShuffleBody,
    pending: tuple[ShuffleStatement, ...] | None = None,
) -> Job:
    """Decode a shuffle (every point validated: about 5 points a card, too slow for the
    loop); for the round's last one (``pending``: the round's earlier statements, the
    very ones the fold holds) also check it together with the earlier ones in one batch."""
    joint, step = rule.joint, rule.step_no
    assert joint is not None
    ctx = rule._ctx(seat)

    def job() -> Callable[[], None]:
        st = _decode(inputs, joint, ctx, b)
        if pending is not None:
            verify_shuffles_batch([*pending, st])
        return lambda: rule._keep_ahead((SHUFFLE_KIND, seat, step), (b, st, pending))

    return job
