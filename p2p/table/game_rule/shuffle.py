"""``Shuffle(handles)``: one ``shuffle`` step per seat in engine-seat order, the pile
permuted and re-masked with a Terelius-Wikstrom proof checked by every peer.

Each seat shuffles the previous output at once.  With a background executor
(:attr:`GameRule.background`, which :mod:`p2p.net.offload` gives the rule of a live
peer), the work is spread over the time the seats wait for each other:

* our own shuffle's pile-independent half (the re-masking terms and the proof's
  commitments that do not depend on the pile, see :mod:`crypto.shuffle_prepared`) is
  computed in the background, so only the pile-dependent half is left when the
  previous pile comes in: for a table's first round, the part that needs no joint key
  while the key round goes on (:func:`prepare_first`) and the rest (``rho_i PK``) when
  the round starts; for a later one (the next deal's) as soon as an action of the
  current deal is in (:func:`prepare_spare`: before that shuffle's step is known, so
  the context is given when it is finished), so that none of it is left between the
  deal's last action and the next deal's first decision;
* each shuffle but the round's last is added in the background, as it arrives (while
  the later seats shuffle), to the round's running batch
  (:class:`crypto.shuffle_proof_tw_batch.RunningBatch`): the points no later shuffle
  names are multiplied then, so the round's checks cost what one batch costs (about
  6 multiplications a card and shuffle, where checking each alone costs about 9), and
  most of it is done before the last shuffle comes; the shuffle just before ours is
  added once ours is made, so that the background thread can help make ours;
* the round's last shuffle is checked ahead (a prework job): after waiting for the
  earlier additions (one not started by then is made by the job), the job adds it
  and verifies the batch (the last pile, the generators, the key: about what one
  check alone costs); when the last shuffle is ours, the job that makes it verifies;
* a job making our shuffle, decoding one or checking a batch lends half of its work
  to the background thread when that is idle (:func:`_aside`), so a second core shortens
  the step everybody waits for.

The next deal's round is made ahead, off the record.  A whole-deck round starts from
the deck's public masking (:func:`fresh_pile`) and its proofs are bound to the round's
number and the shuffler's position (:func:`slot_context`), not to a record step, so
both are known while the current deal is played.  Once it has had
:data:`SPARE_AFTER_ACTIONS` action rounds, the first shuffler shuffles that pile in the
background and sends it with its proof to every seat (a ``ShuffleProposal``, through
:class:`OffRecord`, which the node gives a live peer's rule); the next seat shuffles on
top of it when it comes (:func:`take_proposal`), and so on.  Every seat decodes and
checks each proposal in the background (:class:`Ahead`).  At the round's steps a seat
signs its proposal if its input is the very pile the record holds (waiting for it if it
is being made: never two shuffles of one pile for one position), else shuffles afresh
with fresh randomness; an entry that is a proposal checked ahead (the very bytes,
inputs, key and context) is not checked again.  A proposal is only precomputation:
nobody signed it, so a bad one is dropped (logged), never held against anyone; the
record's entries are checked and convict as always.

Soundness: shuffling on top of an unchecked pile reveals nothing (the output is the
input re-masked with fresh randomness and permuted, and its proof is zero-knowledge),
and no token of these cards is made before every shuffle of the round is checked: the
round ends (and the tokens step can start) only once the fold has every check's
verdict, a failed one convicting its author.  Without a background executor every
shuffle is checked in one batch when the last one is in, as before.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from crypto.elgamal import Ciphertext, decode_pile, encode_pile, public_mask
from crypto.errors import CryptoError
from crypto.group import Point
from crypto.shuffle import shuffle_deck
from crypto.shuffle_prepared import (
    EarlyShuffle,
    PreparedShuffle,
    finish_shuffle,
    prepare_early,
    prepare_shuffle,
)
from crypto.shuffle_proof_tw import Aside, run_aside
from crypto.shuffle_proof_tw_batch import (
    RunningBatch,
    ShuffleStatement,
    TWCommitmentProof,
    prove_shuffle_batchable,
    verify_shuffles_batch,
)
from crypto.transcript import Context
from engine.obligations import Shuffle
from p2p.errors import InvalidMove, LocalProtocolError
from p2p.table.game_rule.core import Flow, Job, Need
from p2p.wire import Blob, Body, ShuffleProposal, body

if TYPE_CHECKING:
    from concurrent.futures import Executor, Future  # annotations only: `verify` needs no threads

    from p2p.table.game_rule.fold import GameRule

SHUFFLE_KIND = "shuffle"

_log = logging.getLogger(__name__)


@body(SHUFFLE_KIND)
@dataclass(frozen=True, slots=True)
class ShuffleBody(Body):
    """The re-masked, permuted pile (64 bytes a card) and its shuffle proof."""

    pile: Blob
    proof: Blob


@dataclass(frozen=True, slots=True)
class _Pending:
    """A received shuffle of the round, and its addition to the round's running batch in
    the background (``None``: none)."""

    statement: ShuffleStatement
    check: Future[None] | None
    batch: RunningBatch | None
    step: int
    """The record step that holds it."""


def discharge(rule: GameRule, ob: Shuffle) -> Flow:
    """Every seat in turn permutes and re-masks the pile (see the module docstring for
    where each proof is made and checked)."""
    hs = rule._check_handles(ob.handles)
    if not hs:
        return None, None
    round_no = rule.shuffle_rounds
    rule.shuffle_rounds += 1
    if len(hs) == rule.size:  # the whole deck: from its public masking, known ahead
        for h, ct in zip(hs, fresh_pile(rule), strict=True):
            rule.cts[h] = ct
            rule.ptok[h] = {}
    ahead = rule._proposals.get(round_no)
    if ahead is not None:
        ahead.begin()
    for old in [r for r in rule._proposals if r < round_no]:
        del rule._proposals[old]
    prepared = _start_prepare(rule, len(hs), round_no, ahead)
    pending: list[_Pending] = []
    batch = RunningBatch() if rule.background is not None else None
    deferred: int | None = None
    for s in range(rule.n):
        if s in rule.gone:
            continue  # a seat that is gone shuffles no more
        position = sum(1 for t in range(s) if t not in rule.gone)
        ctx = slot_context(rule, s, round_no, position)
        inputs = tuple(rule.cts[h] for h in hs)
        # The round's last shuffle is checked ahead after the earlier checks (captured
        # now: the statements are immutable); the seats before it shuffle at once.
        last = tuple(pending) if s == _last_seat(rule) else None
        own = ahead.ours(position, inputs, ctx) if ahead is not None and rule._trusted(s) else None
        out = yield Need(
            SHUFFLE_KIND,
            (s,),
            lambda seat, b, inputs=inputs, ctx=ctx: _parse(rule, seat, inputs, ctx, b, ahead),
            "shuffling",
            rule._for_me(
                (s,),
                lambda inputs=inputs, ctx=ctx, own=own: _make(rule, inputs, ctx, prepared, own),
            ),
            pre=lambda seat, b, inputs=inputs, ctx=ctx, last=last: _pre(
                rule, seat, inputs, ctx, b, last, ahead
            ),
            premake=lambda inputs=inputs, ctx=ctx, last=last, own=own: _premake(
                rule, inputs, ctx, last or (), prepared, own
            ),
        )
        if s not in out:
            continue  # it left while we waited for its shuffle
        statement = out[s]
        step = rule.step_no - 1  # the record step that holds it
        if not rule._trusted(s) and not any(statement is v for v in rule._checked_ahead):
            check = None
            if batch is not None and rule.background is not None and s != _last_seat(rule):
                if rule._trusted(_next_seat(rule, s)):
                    deferred = len(pending)  # added once ours is made (see below)
                else:  # its output pile is the next shuffle's input: its terms wait
                    check = rule.background.submit(batch.add, statement, more=True)
            pending.append(_Pending(statement, check, batch, step))
        elif rule._trusted(s) and deferred is not None and s != _last_seat(rule):
            # The shuffle before ours is added only now: while ours was made, the
            # background thread was free to take half of that work (no later shuffle
            # takes its output pile, so all its terms are multiplied now).
            p = pending[deferred]
            check = rule.background.submit(batch.add, p.statement, more=False)  # type: ignore[union-attr]
            pending[deferred] = _Pending(p.statement, check, batch, p.step)
            deferred = None
        for h, ct in zip(hs, statement.outputs, strict=True):
            rule.cts[h] = ct
            rule.ptok[h] = {}  # no token opens the new ciphertexts
            if rule.mine is not None:
                rule.mine.known.pop(h, None)
    if prepared is not None:
        prepared.cancel()  # unused (we left, or our turn came at another step)
    rule._actions_since_shuffle = 0
    left = [p for p in pending if not any(p.statement is v for v in rule._checked_ahead)]
    rule.proofs_checked += len(pending) - len(left)  # checked ahead
    rule._checked_ahead.clear()
    _verify(rule, left)
    return None, None


SLOT_STRIDE = 256
"""A shuffle proof's context names its round and position as ``round * 256 + position``
(positions are below :data:`p2p.wire.MAX_SEATS`, at most 256)."""


def slot_context(rule: GameRule, seat: int, round_no: int, position: int) -> Context:
    """The context a shuffle proof is bound to: the table, the game, the shuffle round's
    number in the game (from 0) and the shuffler's position in it (from 0: the seats
    that shuffle before it), and its engine seat.  Unlike the record step, all of it is
    known before the round's steps are (a proposal is made ahead, off the record), and
    it is unique within the game: a seat shuffles once a round."""
    if not 0 <= position < SLOT_STRIDE:
        raise LocalProtocolError(f"shuffle position {position} out of range")
    return rule._ctx(seat, round_no * SLOT_STRIDE + position)


def fresh_pile(rule: GameRule) -> tuple[Ciphertext, ...]:
    """A whole-deck shuffle round's starting pile: every card's public masking under the
    joint key, in handle order (as after the key round).  It depends on public values
    only, so the next deal's first shuffle can be made while the current deal is played;
    which handle ends up with which card is the round's secret permutation anyway."""
    if rule._fresh is None:
        assert rule.deck is not None and rule.joint is not None
        rule._fresh = tuple(
            public_mask(rule.deck.points[k], rule.joint) for k in rule.index_of_handle
        )
    return rule._fresh


def _aside(executor: Executor | None) -> Aside | None:
    """``executor`` lent to a job as its second thread (:data:`crypto.shuffle_proof_tw.Aside`):
    a part it computes there is taken back and computed in the job's own thread if it has
    not started when its result is asked (the background thread is busy), so a job never
    waits for work queued behind another."""
    if executor is None:
        return None

    def aside(fn: Callable[[], Any]) -> Callable[[], Any]:
        try:
            future = executor.submit(fn)
        except RuntimeError:  # shut down (the table ends): computed here
            return fn

        def result() -> Any:
            return fn() if future.cancel() else future.result()

        return result

    return aside


def _last_seat(rule: GameRule) -> int:
    return max(s for s in range(rule.n) if s not in rule.gone)


@dataclass(frozen=True, slots=True)
class _Half:
    """Our shuffle's pile-independent half, being computed in the background, and how to
    compute it in a job instead if the background thread has not started it when our
    turn comes (busy, or not woken yet: the first shuffler's turn comes at once)."""

    future: Future[PreparedShuffle]
    redo: Callable[[], PreparedShuffle]

    def cancel(self) -> bool:
        return self.future.cancel()


def _start_prepare(rule: GameRule, n: int, round_no: int, ahead: Ahead | None) -> _Half | None:
    """Our shuffle's pile-independent half: the spare one prepared while the last deal
    was played (or the first deal's, begun during the key round) if it is for ``n``
    cards, else computed in the background from now on, for the position our turn comes
    at if nobody leaves before it.  None when our shuffle of this round was proposed
    ahead (it is signed as proposed, or made afresh from scratch if it does not fit)."""
    mine, joint = rule.mine, rule.joint
    spare, rule._spare = rule._spare, None
    proposed = ahead is not None and ahead.own is not None and not ahead.own[3].cancelled()
    if (
        rule.background is None
        or mine is None
        or joint is None
        or mine.seat in rule.gone
        or proposed
    ):
        if spare is not None:
            spare[1].cancel()
        return None
    if spare is not None:
        if spare[0] == n:  # the key comes in now if it was made before the key round
            half = spare[1]
            return _Half(
                rule.background.submit(_with_key, half, joint, n),
                lambda: _with_key(half, joint, n),
            )
        spare[1].cancel()  # a round of another size: its work is dropped
    position = sum(1 for s in range(mine.seat) if s not in rule.gone)
    ctx = slot_context(rule, mine.seat, round_no, position)
    return _Half(
        rule.background.submit(prepare_shuffle, n, joint, ctx),
        lambda: prepare_shuffle(n, joint, ctx),
    )


def _with_key(
    half: Future[PreparedShuffle | EarlyShuffle], joint: Point, n: int
) -> PreparedShuffle:
    """The prepared half ``half`` gives (submitted before this to the same background
    executor: done by now there), completed with the joint key if it was made before
    the key round; computed afresh if it has not started (called by a job)."""
    if half.cancel():
        return prepare_shuffle(n, joint, None)
    got = half.result()
    if isinstance(got, PreparedShuffle):
        return got
    return prepare_shuffle(got.size, joint, None, early=got)


def prepare_first(rule: GameRule) -> None:
    """As our key share is made (the seat order is drawn, the keys are not), start
    computing in the background what our first shuffle needs before the joint key is
    known (:func:`crypto.shuffle_prepared.prepare_early`, for the whole deck): the key
    round is mostly waiting, and the table's first shuffle follows it at once, when
    every seat would otherwise prepare its own beside the first shuffler's.  The first
    round (:func:`_start_prepare`) then has only ``rho_i PK`` left to add; a first deal
    of another size drops it.  Its nonces answer one challenge only; one never used is
    dropped, never sent."""
    mine = rule.mine
    if rule.background is None or mine is None or rule._spare is not None or not rule.size:
        return
    where = rule._ctx(mine.seat, 0).encode()  # the table and our seat; no step yet
    rule._spare = (rule.size, rule.background.submit(prepare_early, rule.size, where))


SPARE_AFTER_ACTIONS = 2
"""The action round of a deal after which our next shuffle's half is prepared: not the
first, whose fold comes as the table's first decision is owed, and the work would take
cores from the seats still folding the deal then."""


def prepare_spare(rule: GameRule) -> None:
    """Once a deal is being played (its :data:`SPARE_AFTER_ACTIONS`-th action round is
    in), start preparing our next shuffle's pile-independent half in the background, for
    as many cards as the game says its next deal shuffles
    (:meth:`engine.game.Game.next_deal_size`; nothing when no deal follows), with no
    context yet (its step is not known): the next deal's round then finds it done
    (:func:`_start_prepare`).  Its nonces answer one challenge only, like any prepared
    shuffle's; one that is never used is dropped, never sent."""
    mine, joint = rule.mine, rule.joint
    if rule.background is None or mine is None or joint is None:
        return
    n = rule.engine.next_deal_size()
    if n is None:
        return
    rule._actions_since_shuffle += 1
    if rule._actions_since_shuffle < SPARE_AFTER_ACTIONS:
        return
    if rule._spare is None and mine.seat not in rule.gone:
        ahead = rule._proposals.get(rule.shuffle_rounds)
        if ahead is None or not ahead.started:
            # with proposals, in the thread that makes them
            where = rule.offrecord.executor if rule.offrecord is not None else rule.background
            rule._spare = (n, where.submit(prepare_shuffle, n, joint, None))
    propose_ahead(rule)


def _next_seat(rule: GameRule, s: int) -> int:
    """The seat that shuffles after ``s`` (``s`` itself if none does)."""
    return min((t for t in range(s + 1, rule.n) if t not in rule.gone), default=s)


def _check_round(
    pending: tuple[_Pending, ...], last: ShuffleStatement | None, aside: Aside | None
) -> None:
    """Check the round's shuffles in a worker thread (never on the loop): wait for the
    ones being added to the round's running batch in the background, add the rest (the
    ones not started, and ``last``) and verify it (half of the multiplications ``aside``)."""
    batch = pending[0].batch if pending and pending[0].batch is not None else RunningBatch()
    todo = []
    for p in pending:
        if p.check is not None and not p.check.cancel():
            p.check.result()  # added, or being added: wait (raises if it could not be)
        else:
            todo.append(p.statement)
    for st in todo:
        batch.add(st, aside=aside)
    if last is not None:
        batch.add(last, more=False, aside=aside)
    batch.verify(aside)


def _verify(rule: GameRule, left: list[_Pending]) -> None:
    """The fold's verdict on the round's shuffles not checked ahead: checked here, in one
    batch (on failure each alone, to name the culprit); their background additions to
    the running batch are dropped."""
    for p in left:
        if p.check is not None:
            p.check.cancel()
    statements = [p.statement for p in left]
    steps = {id(p.statement): p.step for p in left}
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
                raise InvalidMove(slot, f"bad shuffle at step {steps[id(st)]}: {exc}") from None
        raise LocalProtocolError("a shuffle batch failed but no single proof did") from None
    rule.proofs_checked += len(statements)


def _shuffle_and_prove(
    inputs: tuple[Ciphertext, ...],
    joint: Point,
    ctx: Context,
    prepared: PreparedShuffle | None = None,
    aside: Aside | None = None,
) -> tuple[tuple[Ciphertext, ...], Any]:
    """Permute and re-mask ``inputs``, and prove it (pure: may run in a worker thread):
    the pile-dependent half only when ``prepared`` holds the rest for this very context
    and key, and was not used before (its nonces answer one challenge only); half of its
    multiplications ``aside``."""
    fits = prepared is not None and prepared.context in (None, ctx) and prepared.joint_key == joint
    if fits and not prepared.used and prepared.size == len(inputs):  # type: ignore[union-attr]
        try:
            return finish_shuffle(prepared, inputs, ctx, aside)  # type: ignore[arg-type]
        except CryptoError:
            pass  # used meanwhile by another thread: a fresh shuffle
    out, witness = shuffle_deck(inputs, joint)
    return out, prove_shuffle_batchable(inputs, out, joint, witness, ctx)


def _ready(prepared: _Half | None, wait: bool) -> PreparedShuffle | None:
    """The prepared half if it is done; if it is being computed, waiting for it when
    ``wait`` (worker threads only, never the loop).  If it has not started, it is
    cancelled (a background thread busy with checks must not hold up our turn) and, when
    ``wait``, computed here (from what was computed already: the part made during the
    key round, a spare).  ``None`` (shuffle from scratch) on the loop then, or if it
    failed."""
    if prepared is None:
        return None
    if prepared.cancel():
        if not wait:
            return None
        try:
            return prepared.redo()
        except Exception:  # noqa: BLE001 - a failed preparation: shuffle from scratch
            return None
    if prepared.future.cancelled() or not (wait or prepared.future.done()):
        return None
    try:
        return prepared.future.result()
    except Exception:  # noqa: BLE001 - a failed preparation: shuffle from scratch
        return None


def _decode(
    inputs: tuple[Ciphertext, ...],
    joint: Point,
    ctx: Context,
    b: ShuffleBody,
    aside: Aside | None = None,
) -> ShuffleStatement:
    """A shuffle entry as a statement, every point and scalar validated (pure); the pile's
    points ``aside`` while the proof's are validated."""
    n = len(inputs)
    pile = run_aside(aside, lambda: tuple(decode_pile(b.pile, n)))
    proof = TWCommitmentProof.decode(b.proof, expected_size=n)
    return ShuffleStatement(inputs, pile(), joint, proof, ctx)


def _make(
    rule: GameRule,
    inputs: tuple[Ciphertext, ...],
    ctx: Context,
    prepared: _Half | None = None,
    own: Future[_Made] | None = None,
) -> Body:
    mine = rule.mine
    assert mine is not None and rule.joint is not None
    made = rule._made.pop(rule.step_no, None)
    rule._made.clear()
    got: _Made | None = None
    if made is not None and made[0] is inputs and made[1] == ctx:
        got = made[2]
        rule._checked_ahead.extend(made[3])  # the round's earlier shuffles, checked
    elif own is not None:  # our proposal for this very pile (waited for: never two shuffles)
        got = _result(own)
    if got is None:  # on the loop: the prepared half only if it is ready (never wait here)
        got = _made_now(inputs, rule.joint, ctx, _ready(prepared, False), None, False)
    if got.proposed:
        rule.proposals_signed += 1
    else:
        rule.shuffles_made += 1
    forged = rule._cheat("shuffle", inputs, got.outputs, got.proof)
    if forged is not None:
        return forged
    statement = ShuffleStatement(inputs, got.outputs, rule.joint, got.proof, ctx)
    return rule._keep_own(ShuffleBody(got.pile, got.proof_bytes), statement)


@dataclass(frozen=True, slots=True)
class _Made:
    """One of our shuffles, made (at its step, or proposed ahead) and encoded."""

    outputs: tuple[Ciphertext, ...]
    proof: TWCommitmentProof
    pile: bytes
    proof_bytes: bytes
    proposed: bool


def _made_now(
    inputs: tuple[Ciphertext, ...],
    joint: Point,
    ctx: Context,
    prepared: PreparedShuffle | None,
    aside: Aside | None,
    proposed: bool,
) -> _Made:
    out, proof = _shuffle_and_prove(inputs, joint, ctx, prepared, aside)
    return _Made(tuple(out), proof, encode_pile(out), proof.encode(), proposed)


def _result(own: Future[_Made]) -> _Made | None:
    """Our proposal (waiting for it if it is being made), or ``None`` if it failed."""
    try:
        return own.result()
    except Exception:  # noqa: BLE001 - it was never sent: a fresh shuffle instead
        return None


def _premake(
    rule: GameRule,
    inputs: tuple[Ciphertext, ...],
    ctx: Context,
    pending: tuple[_Pending, ...] = (),
    prepared: _Half | None = None,
    own: Future[_Made] | None = None,
) -> Job:
    """Our shuffle and its proof (its pile-independent half prepared in the background,
    if there is one; our proposal for this very pile, if we made one ahead); when ours is
    the round's last, the same job also waits for (or makes) the checks of the round's
    earlier shuffles (``pending``)."""
    mine, joint, step = rule.mine, rule.joint, rule.step_no
    assert mine is not None and joint is not None
    aside = _aside(rule.background)

    def job() -> Callable[[], None]:
        got = _result(own) if own is not None else None
        if got is None:
            got = _made_now(inputs, joint, ctx, _ready(prepared, True), aside, False)
        checked: tuple[ShuffleStatement, ...] = ()
        if pending:
            try:
                _check_round(pending, None, aside)
                checked = tuple(p.statement for p in pending)
            except CryptoError:
                pass  # the fold checks them again and names the culprit

        def keep() -> None:
            if rule.step_no == step:
                rule._made[step] = (inputs, ctx, got, checked)

        return keep

    return job


def _parse(
    rule: GameRule,
    seat: int,
    inputs: tuple[Ciphertext, ...],
    ctx: Context,
    b: ShuffleBody,
    ahead: Ahead | None = None,
) -> ShuffleStatement:
    """Decode (validating every point and scalar); the proof is checked in the
    background or in a batch, unless a job of :meth:`GameRule.prework` checked this
    very statement already, or it is a proposal checked ahead (the very bytes, inputs,
    key and context)."""
    assert rule.joint is not None
    own = rule._own_parsed(seat, b)
    if own is not None and own.inputs == inputs:
        return own  # the shuffle we just made: not decoded again
    if ahead is not None:
        st = ahead.checked(seat, b, inputs, ctx, rule.joint)
        if st is not None:
            rule._checked_ahead.append(st)
            rule.proofs_checked += 1
            rule.proposals_hit += 1
            return st
    pre = rule._ahead.pop((SHUFFLE_KIND, seat, rule.step_no), None)
    if pre is not None:
        body_, st, pending = pre
        if body_ == b and st.inputs == inputs and st.joint_key == rule.joint and st.context == ctx:
            if pending is None:
                return st  # decoded (every point validated) ahead; checked later
            rule._checked_ahead.append(st)
            rule._checked_ahead.extend(p.statement for p in pending)  # counted at the end
            rule.proofs_checked += 1
            return st
    return _decode(inputs, rule.joint, ctx, b)


def _pre(
    rule: GameRule,
    seat: int,
    inputs: tuple[Ciphertext, ...],
    ctx: Context,
    b: ShuffleBody,
    pending: tuple[_Pending, ...] | None = None,
    ahead: Ahead | None = None,
) -> Job | None:
    """Decode a shuffle (every point validated: about 5 points a card, too slow for the
    loop); for the round's last one (``pending``: the round's earlier shuffles, the
    very ones the fold holds) also check it, once the earlier checks are in.  Nothing
    for a proposal checked ahead, when no earlier shuffle is left to check."""
    joint, step = rule.joint, rule.step_no
    assert joint is not None
    if ahead is not None and not pending and ahead.checked(seat, b, inputs, ctx, joint):
        return None
    aside = _aside(rule.background)

    def job() -> Callable[[], None]:
        st = _decode(inputs, joint, ctx, b, aside)
        if pending is not None:
            _check_round(pending, st, aside)
        return lambda: rule._keep_ahead((SHUFFLE_KIND, seat, step), (b, st, pending))

    return job


# ---- the next round's shuffles, proposed ahead off the record ------------------------------


@dataclass(frozen=True, slots=True)
class OffRecord:
    """How a live peer's rule reaches the event loop and the other seats from its
    background work (the node sets :attr:`GameRule.offrecord`)."""

    post: Callable[[Callable[[], None]], None]
    """Run a call on the event loop soon (thread-safe)."""
    send: Callable[[Any], None]
    """Send an off-record message to every seat we hold a link to (event loop only)."""
    executor: Executor
    """Where proposals are made and decoded (one thread of their own: the round's own
    background work never queues behind them)."""
    checker: Executor
    """Where the other seats' proposals are checked (a thread of lower priority: nothing
    waits for a check before the round, and the round checks at its step one not done)."""


@dataclass(slots=True)
class Proposal:
    """A shuffle of a round not begun yet, sent off the record by the seat at
    ``position``: only precomputation, never evidence (it is signed by nobody)."""

    seat: int
    position: int
    pile: bytes
    proof: bytes
    statement: ShuffleStatement | None = None
    """Decoded (every point validated), on its input pile."""
    verified: bool = False
    bad: str | None = None


@dataclass(slots=True)
class Ahead:
    """A shuffle round's proposals, as they come (event loop only).  The round's record
    steps use them only for the very bytes and statement they hold."""

    round_no: int
    order: tuple[int, ...]
    """The seats that shuffle, by position (those not gone when the round was foreseen)."""
    props: dict[int, Proposal] = field(default_factory=dict)
    """By position: decoded (or being decoded), ours included."""
    queued: dict[int, Proposal] = field(default_factory=dict)
    """By position: received, waiting for the pile it shuffles (the previous proposal)."""
    started: bool = False
    """Our own proposal was begun: never a second one for this round."""
    own: tuple[int, tuple[Ciphertext, ...], Context, Future[_Made]] | None = None
    """Our proposal: position, input pile, context and the job making it."""
    jobs: list[Future[Any]] = field(default_factory=list)
    """Its jobs, so that those not started when the round begins are dropped (the round's
    steps make and check what they would have, at the usual priority)."""

    def begin(self) -> None:
        """The round begins: drop its jobs not started yet."""
        for job in self.jobs:
            job.cancel()
        self.jobs.clear()

    def ours(
        self, position: int, inputs: tuple[Ciphertext, ...], ctx: Context
    ) -> Future[_Made] | None:
        """Our proposal if it shuffles this very pile for this very position."""
        own = self.own
        if own is None or own[0] != position or own[2] != ctx or own[1] != inputs:
            return None
        return own[3]

    def checked(
        self, seat: int, b: ShuffleBody, inputs: tuple[Ciphertext, ...], ctx: Context, joint: Point
    ) -> ShuffleStatement | None:
        """The statement of ``seat``'s proposal if it was checked and is the very entry
        ``b`` on the very statement (inputs, key, context) the record asks for."""
        for p in self.props.values():
            st = p.statement
            if p.seat != seat or not p.verified or st is None:
                continue
            same = p.pile == b.pile and p.proof == b.proof and st.context == ctx
            if same and st.joint_key == joint and st.inputs == inputs:
                return st
        return None


def _can_propose(rule: GameRule) -> bool:
    return (
        rule.offrecord is not None
        and rule.background is not None
        and rule.mine is not None
        and rule.joint is not None
        and rule.deck is not None
    )


def _foresee(rule: GameRule, round_no: int) -> Ahead:
    ahead = rule._proposals.get(round_no)
    if ahead is None:
        order = tuple(s for s in range(rule.n) if s not in rule.gone)
        ahead = rule._proposals[round_no] = Ahead(round_no, order)
    return ahead


def propose_ahead(rule: GameRule) -> None:
    """The next deal is a whole-deck shuffle round: start our part of it off the record
    (the first shuffler shuffles the fresh pile now; a later one when its predecessor's
    proposal comes)."""
    if not _can_propose(rule) or rule.engine.next_deal_size() != rule.size:
        return
    _advance(rule, _foresee(rule, rule.shuffle_rounds))


def take_proposal(rule: GameRule, slot: int, msg: Any) -> None:
    """A proposal from the seat at ``slot`` (event loop): kept, decoded and checked in the
    background; anything unexpected is dropped (logged), never held against anyone."""
    seat = rule.engine_seat_of.get(slot)
    if not _can_propose(rule) or seat is None or rule._trusted(seat) or rule.done:
        return
    r = msg.round
    if not rule.shuffle_rounds - 1 <= r <= rule.shuffle_rounds + 1:
        _drop(rule, seat, f"a proposal for shuffle round {r}, not near {rule.shuffle_rounds}")
        return
    ahead = _foresee(rule, r)
    if seat not in ahead.order or ahead.order.index(seat) != msg.position:
        _drop(rule, seat, f"a proposal for position {msg.position} of round {r}")
        return
    if msg.position in ahead.props or msg.position in ahead.queued:
        _drop(rule, seat, f"a second proposal for round {r}")
        return
    ahead.queued[msg.position] = Proposal(seat, msg.position, bytes(msg.pile), bytes(msg.proof))
    _advance(rule, ahead)


def _drop(rule: GameRule, seat: int, why: str) -> None:
    rule.proposals_dropped += 1
    _log.info("seat %d's shuffle proposal dropped: %s", seat + 1, why)


def _input_of(rule: GameRule, ahead: Ahead, position: int) -> tuple[Ciphertext, ...] | None:
    if position == 0:
        return fresh_pile(rule)
    prev = ahead.props.get(position - 1)
    if prev is None or prev.statement is None or prev.bad is not None:
        return None
    return prev.statement.outputs


def _advance(rule: GameRule, ahead: Ahead) -> None:
    """Start what the round's proposals allow now (event loop): decode each received one
    whose input pile is known; make ours once its input is known (a round not begun)."""
    if rule.background is None or rule.joint is None:
        return
    for position in sorted(ahead.queued):
        inputs = _input_of(rule, ahead, position)
        if inputs is None:
            continue
        p = ahead.props[position] = ahead.queued.pop(position)
        _submit_decode(rule, ahead, p, inputs)
    mine = rule.mine
    if mine is None or ahead.started or mine.seat not in ahead.order:
        return
    if ahead.round_no != rule.shuffle_rounds or rule.engine.next_deal_size() != rule.size:
        return  # begun (its steps shuffle, once), or not a whole-deck deal next
    position = ahead.order.index(mine.seat)
    inputs = _input_of(rule, ahead, position)
    if inputs is not None:
        _submit_own(rule, ahead, position, inputs)


def _post(rule: GameRule, future: Future[Any], then: Callable[[Any], None]) -> None:
    """When ``future`` is done, ``then(its result)`` on the event loop (nothing if it
    failed: a failed proposal is dropped; nothing if the table ended)."""
    off = rule.offrecord

    def done(f: Future[Any]) -> None:
        if f.cancelled() or f.exception() is not None:
            return
        with contextlib.suppress(Exception):  # the loop is gone: nothing to do any more
            off.post(lambda: _safely(then, f.result()))

    future.add_done_callback(done)


def _safely(then: Callable[[Any], None], result: Any) -> None:
    """``then(result)`` on the event loop: a failure there is logged, never raised into
    the loop (off-record work is only precomputation: the record's steps do without)."""
    try:
        then(result)
    except Exception:  # noqa: BLE001 - precomputation only: the round does it at its steps
        _log.exception("off-record shuffle work failed")


def _submit_own(
    rule: GameRule, ahead: Ahead, position: int, inputs: tuple[Ciphertext, ...]
) -> None:
    mine, joint, n = rule.mine, rule.joint, len(inputs)
    assert mine is not None and joint is not None and rule.background is not None
    ctx = slot_context(rule, mine.seat, ahead.round_no, position)
    spare, rule._spare = rule._spare, None
    half = spare[1] if spare is not None and spare[0] == n else None
    if spare is not None and half is None:
        spare[1].cancel()

    def job() -> _Made:
        prepared = None
        if half is not None:
            try:
                prepared = _with_key(half, joint, n)
            except Exception:  # noqa: BLE001 - a failed preparation: shuffle from scratch
                prepared = None
        return _made_now(inputs, joint, ctx, prepared, None, True)

    ahead.started = True
    try:
        future = rule.offrecord.executor.submit(job)
    except RuntimeError:  # shut down: the table ends
        return
    ahead.own = (position, inputs, ctx, future)
    ahead.jobs.append(future)

    def made(got: _Made) -> None:
        statement = ShuffleStatement(inputs, got.outputs, joint, got.proof, ctx)
        p = Proposal(mine.seat, position, got.pile, got.proof_bytes, statement, verified=True)
        ahead.props[position] = p
        sent = rule._cheat("propose", inputs, ahead.round_no, position, got.pile, got.proof_bytes)
        pile, proof = sent if sent is not None else (got.pile, got.proof_bytes)
        rule.offrecord.send(ShuffleProposal(rule.table_id, ahead.round_no, position, pile, proof))
        rule.proposals_sent += 1
        _advance(rule, ahead)

    _post(rule, future, made)


def _submit_decode(
    rule: GameRule, ahead: Ahead, p: Proposal, inputs: tuple[Ciphertext, ...]
) -> None:
    joint = rule.joint
    assert joint is not None and rule.background is not None
    ctx = slot_context(rule, p.seat, ahead.round_no, p.position)
    b = ShuffleBody(p.pile, p.proof)

    def decode() -> ShuffleStatement | str:
        try:
            return _decode(inputs, joint, ctx, b)
        except (CryptoError, ValueError) as exc:
            return str(exc)

    def decoded(st: ShuffleStatement | str) -> None:
        if isinstance(st, str):
            p.bad = st
            _drop(rule, p.seat, f"it does not decode: {st}")
            return
        p.statement = st
        _advance(rule, ahead)  # ours may shuffle it now: queued before its check
        try:
            future = rule.offrecord.checker.submit(_check_one, st)
        except RuntimeError:
            return
        ahead.jobs.append(future)
        _post(rule, future, checked)

    def checked(why: str | None) -> None:
        if why is None:
            p.verified = True
        else:
            p.bad = why
            _drop(rule, p.seat, f"its proof fails: {why}")

    try:
        future = rule.offrecord.executor.submit(decode)
    except RuntimeError:
        return
    ahead.jobs.append(future)
    _post(rule, future, decoded)


def _check_one(st: ShuffleStatement) -> str | None:
    try:
        verify_shuffles_batch([st])
    except CryptoError as exc:
        return str(exc) or type(exc).__name__
    return None
