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

Soundness: shuffling on top of an unchecked pile reveals nothing (the output is the
input re-masked with fresh randomness and permuted, and its proof is zero-knowledge),
and no token of these cards is made before every shuffle of the round is checked: the
round ends (and the tokens step can start) only once the fold has every check's
verdict, a failed one convicting its author.  Without a background executor every
shuffle is checked in one batch when the last one is in, as before.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from crypto.elgamal import Ciphertext, decode_pile, encode_pile
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
from p2p.wire import Blob, Body, body

if TYPE_CHECKING:
    from concurrent.futures import Executor, Future  # annotations only: `verify` needs no threads

    from p2p.table.game_rule.fold import GameRule

SHUFFLE_KIND = "shuffle"


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


def discharge(rule: GameRule, ob: Shuffle) -> Flow:
    """Every seat in turn permutes and re-masks the pile (see the module docstring for
    where each proof is made and checked)."""
    hs = rule._check_handles(ob.handles)
    if not hs:
        return None, None
    prepared = _start_prepare(rule, len(hs))
    pending: list[_Pending] = []
    batch = RunningBatch() if rule.background is not None else None
    deferred: int | None = None
    for s in range(rule.n):
        if s in rule.gone:
            continue  # a seat that is gone shuffles no more
        inputs = tuple(rule.cts[h] for h in hs)
        # The round's last shuffle is checked ahead after the earlier checks (captured
        # now: the statements are immutable); the seats before it shuffle at once.
        last = tuple(pending) if s == _last_seat(rule) else None
        out = yield Need(
            SHUFFLE_KIND,
            (s,),
            lambda seat, b, inputs=inputs: _parse(rule, seat, inputs, b),
            "shuffling",
            rule._for_me((s,), lambda inputs=inputs: _make(rule, inputs, prepared)),
            pre=lambda seat, b, inputs=inputs, last=last: _pre(rule, seat, inputs, b, last),
            premake=lambda inputs=inputs, last=last: _premake(rule, inputs, last or (), prepared),
        )
        if s not in out:
            continue  # it left while we waited for its shuffle
        statement = out[s]
        if not rule._trusted(s) and not any(statement is v for v in rule._checked_ahead):
            check = None
            if batch is not None and rule.background is not None and s != _last_seat(rule):
                if rule._trusted(_next_seat(rule, s)):
                    deferred = len(pending)  # added once ours is made (see below)
                else:  # its output pile is the next shuffle's input: its terms wait
                    check = rule.background.submit(batch.add, statement, more=True)
            pending.append(_Pending(statement, check, batch))
        elif rule._trusted(s) and deferred is not None and s != _last_seat(rule):
            # The shuffle before ours is added only now: while ours was made, the
            # background thread was free to take half of that work (no later shuffle
            # takes its output pile, so all its terms are multiplied now).
            p = pending[deferred]
            check = rule.background.submit(batch.add, p.statement, more=False)  # type: ignore[union-attr]
            pending[deferred] = _Pending(p.statement, check, batch)
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


def _start_prepare(rule: GameRule, n: int) -> _Half | None:
    """Our shuffle's pile-independent half: the spare one prepared while the last deal
    was played (or the first deal's, begun during the key round) if it is for ``n``
    cards, else computed in the background from now on, for the step our turn comes at
    if nobody leaves before it."""
    mine, joint = rule.mine, rule.joint
    spare, rule._spare = rule._spare, None
    if rule.background is None or mine is None or joint is None or mine.seat in rule.gone:
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
    step = rule.step_no + sum(1 for s in range(mine.seat) if s not in rule.gone)
    ctx = rule._ctx(mine.seat, step)
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
    if rule._spare is not None or mine.seat in rule.gone:
        return
    rule._spare = (n, rule.background.submit(prepare_shuffle, n, joint, None))


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
    prepared: _Half | None = None,
) -> Body:
    mine = rule.mine
    assert mine is not None and rule.joint is not None
    made = rule._made.pop(rule.step_no, None)
    rule._made.clear()
    if made is not None and made[0] is inputs and made[1] == rule._ctx(mine.seat):
        out, proof = made[2], made[3]
        rule._checked_ahead.extend(made[4])  # the round's earlier shuffles, checked
    else:  # on the loop: the prepared half only if it is ready (never wait here)
        ctx = rule._ctx(mine.seat)
        out, proof = _shuffle_and_prove(inputs, rule.joint, ctx, _ready(prepared, False))
    forged = rule._cheat("shuffle", inputs, out, proof)
    if forged is not None:
        return forged
    statement = ShuffleStatement(inputs, tuple(out), rule.joint, proof, rule._ctx(mine.seat))
    return rule._keep_own(ShuffleBody(encode_pile(out), proof.encode()), statement)


def _premake(
    rule: GameRule,
    inputs: tuple[Ciphertext, ...],
    pending: tuple[_Pending, ...] = (),
    prepared: _Half | None = None,
) -> Job:
    """Our shuffle and its proof (its pile-independent half prepared in the background,
    if there is one); when ours is the round's last, the same job also waits for (or
    makes) the checks of the round's earlier shuffles (``pending``)."""
    mine, joint, step = rule.mine, rule.joint, rule.step_no
    assert mine is not None and joint is not None
    ctx, aside = rule._ctx(mine.seat), _aside(rule.background)

    def job() -> Callable[[], None]:
        out, proof = _shuffle_and_prove(inputs, joint, ctx, _ready(prepared, True), aside)
        checked: tuple[ShuffleStatement, ...] = ()
        if pending:
            try:
                _check_round(pending, None, aside)
                checked = tuple(p.statement for p in pending)
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
    """Decode (validating every point and scalar); the proof is checked in the
    background or in a batch, unless a job of :meth:`GameRule.prework` checked this
    very statement already."""
    assert rule.joint is not None
    own = rule._own_parsed(seat, b)
    if own is not None and own.inputs == inputs:
        return own  # the shuffle we just made: not decoded again
    ctx = rule._ctx(seat)
    ahead = rule._ahead.pop((SHUFFLE_KIND, seat, rule.step_no), None)
    if ahead is not None:
        body_, st, pending = ahead
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
    b: ShuffleBody,
    pending: tuple[_Pending, ...] | None = None,
) -> Job:
    """Decode a shuffle (every point validated: about 5 points a card, too slow for the
    loop); for the round's last one (``pending``: the round's earlier shuffles, the
    very ones the fold holds) also check it, once the earlier checks are in."""
    joint, step = rule.joint, rule.step_no
    assert joint is not None
    ctx, aside = rule._ctx(seat), _aside(rule.background)

    def job() -> Callable[[], None]:
        st = _decode(inputs, joint, ctx, b, aside)
        if pending is not None:
            _check_round(pending, st, aside)
        return lambda: rule._keep_ahead((SHUFFLE_KIND, seat, step), (b, st, pending))

    return job
