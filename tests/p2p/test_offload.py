"""Proofs checked and made ahead of the fold (p2p/net/offload.py, GameRule.prework/premake).

In-process tables (``p2p.table.local_table``'s records and rules, routed here by hand) so
that the jobs run exactly where the node would run them in a worker thread.  The
tests count group operations (never time): a shuffle checked ahead is not checked
again by the fold, our own shuffle made ahead is not made again, and a result kept
for one body is never used for another one.
"""

from __future__ import annotations

import trio

from crypto.group import COUNTERS
from engine import registry
from p2p.errors import InvalidMove
from p2p.net.offload import Offload
from p2p.table import local_table
from p2p.table.game_rule import SHUFFLE_KIND, SealedProofBody, ShuffleBody, TokensBody
from p2p.table.seat import game_of
from tests.p2p._by_hand import (
    bot_body,
    offer,
    produce,
    run_job,
    send_machine_body,
    sign,
    swapped,
)

GAME, SEATS, OPTIONS = "slave", 4, {"games": 1}
CULPRIT = 1


def _play(
    table,
    ahead: bool,
    tamper_at: int | None = None,
    max_entries: int = 5000,
    made: type = ShuffleBody,
    counted: list | None = None,
    jobs: list | None = None,
    checked: type = ShuffleBody,
):
    """Play ``table`` to its end; with ``ahead`` every receiver runs the rule's prework
    job before offering an entry and every seat its premake job before producing.
    Returns the multiplications done while offering shuffle entries (the fold's
    checks), and those done by ``produce`` of our own bodies of type ``made`` (shuffles
    by default), each also appended to ``counted``.  Each prework job is appended to
    ``jobs`` as the kind of the entry it was for.

    With ``tamper_at``: the ``tamper_at``-th shuffle of slot CULPRIT is checked ahead
    by every receiver as made, and then sent with two of its ciphertexts swapped."""
    spec = registry.get(GAME)
    fold_muls = produce_muls = 0
    culprit_shuffles = 0
    for _ in range(max_entries):
        if all(r.finished for r in table.records) or table.cheats:
            return fold_muls, produce_muls
        moved = False
        for d in table.drivers:
            rule = game_of(d.record)
            if ahead and rule is not None:
                job = rule.premake()
                if job is not None:
                    run_job(job)
            body, cost = produce(d)
            if isinstance(body, made):
                produce_muls += cost
                if counted is not None:
                    counted.append(body)
            if body is None:
                body = bot_body(table, d, spec)
            if body is None:
                continue
            honest = body
            if isinstance(body, ShuffleBody) and d.slot == CULPRIT:
                culprit_shuffles += 1
                if culprit_shuffles == tamper_at:
                    body = swapped(body)
            signed, step = sign(table, d, body)
            for other in table.drivers:
                if other is d:
                    continue
                rule = game_of(other.record)
                if ahead and rule is not None:
                    job = rule.prework(d.slot, step, honest)
                    if job is not None:
                        muls = run_job(job)
                        if jobs is not None:
                            jobs.append(honest.TAG)
                            if isinstance(honest, ShuffleBody) and muls > 0:
                                jobs.append("shuffle/checked")
                if offer(table, other, signed) and isinstance(body, checked):
                    fold_muls += COUNTERS.mul
            moved = True
        assert moved, "table stuck"
    raise AssertionError("no end")


def test_shuffles_checked_and_made_ahead_are_not_redone_by_the_fold():
    on_loop = local_table.new_table(GAME, SEATS, OPTIONS)
    fold_on_loop, produce_on_loop = _play(on_loop, ahead=False)
    ahead = local_table.new_table(GAME, SEATS, OPTIONS)
    jobs: list = []
    fold_ahead, produce_ahead = _play(ahead, ahead=True, jobs=jobs)
    for table in (on_loop, ahead):
        assert not table.cheats
        assert all(r.finished for r in table.records)
        assert len({r.head for r in table.records}) == 1  # every seat folded the same record
        assert all(game_of(r).done for r in table.records)
    # on the loop, the last shuffle's fold verifies the round's shuffles in one batch
    # (about 6 multiplications per card and shuffle); checked ahead, none are left
    assert fold_on_loop > 3 * 52 * 6 * (SEATS - 1)
    assert fold_ahead == 0
    # every received shuffle is decoded by a job, and only each round's last one is
    # checked, in one batch with the round's earlier ones: the verifying multiplications
    # are all in those jobs (one per receiver and round)
    rounds = sum(1 for e in ahead.records[0].entries() if e.body.TAG == SHUFFLE_KIND) // SEATS
    assert rounds >= 1
    assert jobs.count(SHUFFLE_KIND) == rounds * SEATS * (SEATS - 1)
    assert jobs.count("shuffle/checked") == rounds * (SEATS - 1)
    # our own shuffle (2 per card) and its proof: made in produce(), or ahead
    assert produce_on_loop >= SEATS * 52 * 2
    assert produce_ahead == 0
    # every proof still counted as checked, by every seat
    for a, b in zip(on_loop.records, ahead.records, strict=True):
        assert game_of(b).proofs_checked > 0
        assert game_of(a).entries_checked > 0


def test_a_result_kept_for_one_shuffle_is_not_used_for_another():
    """The culprit's shuffle is checked ahead as made, then sent with two ciphertexts
    swapped: the kept result does not apply to it, and every other seat names the
    culprit when the round's shuffles are checked."""
    table = local_table.new_table(GAME, SEATS, OPTIONS)
    _play(table, ahead=True, tamper_at=1)
    assert table.cheats, "the swapped shuffle was accepted"
    assert {c.seat for c in table.cheats} == {CULPRIT}
    assert sum(isinstance(c, InvalidMove) for c in table.cheats) == SEATS - 1
    # (and maybe the culprit's entries after it, sent to a table that had ended)
    assert all("bad shuffle" in str(c) for c in table.cheats if isinstance(c, InvalidMove))
    assert not any(game_of(r).done for r in table.records)


def test_a_failing_job_keeps_nothing_and_the_node_goes_on():
    """A job for a shuffle whose proof does not verify raises in the worker thread:
    Offload swallows it, keeps nothing, and the rule checks the entry itself later.
    The culprit is the round's last shuffler: only that shuffle is checked ahead."""
    table = local_table.new_table(GAME, SEATS, OPTIONS)

    # play up to the round's last shuffle (engine seat SEATS - 1, whoever holds it)
    def last_shuffler(d) -> bool:
        rule = game_of(d.record)
        return rule is not None and rule.my_seat == SEATS - 1

    shuffler = None
    for _ in range(200):
        for d in table.drivers:
            rule = game_of(d.record)
            need = rule.need if rule is not None else None
            mine = need is not None and need.kind == SHUFFLE_KIND and rule.my_seat in need.seats
            if mine and last_shuffler(d):
                shuffler = d
        if shuffler is not None:
            break
        for d in table.drivers:
            if last_shuffler(d) and d.owed_kind() == SHUFFLE_KIND:
                continue  # its shuffle is the one this test sends
            send_machine_body(table, d)
    assert shuffler is not None
    bad = swapped(shuffler.machine_body())
    signed = shuffler.sign(bad).accepted[0].signed
    receiver = table.drivers[(shuffler.slot + 1) % SEATS]
    rule = game_of(receiver.record)
    assert rule.prework(shuffler.slot, rule.step_no, bad) is not None  # a job is tried
    offload = Offload()

    async def main():
        await offload.prework(rule, signed, rule.table_id, receiver.record.keys)
        await offload.aclose()

    trio.run(main)
    assert rule._ahead == {}  # nothing kept for the bad shuffle
    receiver.record.offer(signed)  # accepted for now: checked with the round's batch


def test_our_gift_is_made_ahead_and_not_again_on_the_loop():
    """The Slave gift's padded proof costs the worst case for every gift (so its size and
    time say nothing of the lowest card): it is made by a premake job, and producing the
    sealed entry then does no group operation on the loop."""
    table = local_table.new_table(GAME, SEATS, {"games": 2})
    sealed: list = []
    _, produce_muls = _play(table, ahead=True, made=SealedProofBody, counted=sealed)
    assert not table.cheats and all(r.finished for r in table.records)
    assert len(sealed) >= 2  # the second deal's exchange: a KING's and a QUEEN's gift
    assert produce_muls == 0


def test_our_reveal_tokens_are_made_ahead_and_not_again_on_the_loop():
    """Reveal tokens and their proof (two multiplications a card and more) are made by a
    premake job, so producing a tokens entry does no group operation on the loop."""
    table = local_table.new_table(GAME, SEATS, OPTIONS)
    made: list = []
    _, on_loop = _play(local_table.new_table(GAME, SEATS, OPTIONS), ahead=False, made=TokensBody)
    _, produce_muls = _play(table, ahead=True, made=TokensBody, counted=made)
    assert not table.cheats and all(r.finished for r in table.records)
    assert len(made) >= SEATS and on_loop > 0
    assert produce_muls == 0


def test_entries_that_arrive_together_are_checked_side_by_side_and_once():
    """The deal's round of reveal tokens: the three other seats' entries, one job each,
    run side by side; offered afterwards (or arriving again, relayed), none is checked a
    second time."""
    from p2p.table.game_rule import TOKENS_KIND

    table = local_table.new_table(GAME, SEATS, OPTIONS)
    receiver = need = None
    for _ in range(300):
        for d in table.drivers:
            rule = game_of(d.record)
            pending = rule.need if rule is not None else None
            if (
                pending is not None
                and pending.kind == TOKENS_KIND
                and len(set(pending.seats) - {rule.my_seat}) == SEATS - 1
                and not pending.parsed
            ):
                receiver, need = d, pending
        if receiver is not None:
            break
        for d in table.drivers:
            if send_machine_body(table, d):
                break  # one entry at a time: every round is seen before anyone answers it
    assert receiver is not None and need is not None and need.cards is not None
    rule = game_of(receiver.record)
    me = rule.my_seat
    # the deal is one round: every seat owes tokens, for the cards of the other hands
    assert set(need.seats) == set(range(SEATS))
    together = []
    for d in table.drivers:
        if d is not receiver:
            body = d.machine_body()
            assert isinstance(body, TokensBody)
            together.append(d.sign(body).accepted[0].signed)
    receiver.sign(receiver.machine_body())  # our own entry of the round
    offload = Offload()

    async def main():
        await offload.prework_many(rule, together, rule.table_id, receiver.record.keys)
        for signed in together:  # offered now, or a relayed copy: checked already
            await offload.prework(rule, signed, rule.table_id, receiver.record.keys)
        await offload.aclose()

    trio.run(main)
    assert offload.jobs_run == SEATS - 1
    COUNTERS.reset()
    for signed in together:
        receiver.record.offer(signed)
    # the fold used every kept result: what is left is the receiver's own token for each
    # card it opens (one multiplication a card: its hand), no check of anybody's proof
    shown = {h for s in need.seats if s != me for h in need.cards[s]}
    hand = shown - set(need.cards[me])
    assert len(hand) == 13
    assert COUNTERS.mul == len(hand)


def test_the_receiver_checks_a_gift_ahead_and_not_on_the_loop():
    """The Slave gift's padded proof costs the worst case to check too: its receiver
    opens the box and checks the proof in a prework job, so offering the sealed entry
    does no group operation on the loop (on the loop it does hundreds)."""
    on_loop = local_table.new_table(GAME, SEATS, {"games": 2})
    fold_on_loop, _ = _play(on_loop, ahead=False, checked=SealedProofBody)
    ahead = local_table.new_table(GAME, SEATS, {"games": 2})
    jobs: list = []
    fold_ahead, _ = _play(ahead, ahead=True, checked=SealedProofBody, jobs=jobs)
    for table in (on_loop, ahead):
        assert not table.cheats and all(r.finished for r in table.records)
    assert fold_on_loop > 100
    assert fold_ahead == 0
    assert jobs.count("sealed-proof") >= 2  # one per gift, by its receiver only


def test_closing_waits_off_the_loop_for_the_background_job_that_runs():
    """A job nobody waits for (the next deal's shuffle half, in a game with no next deal)
    may still run when the table ends: ``aclose`` waits for it in a worker thread, so the
    table leaves no thread behind (bench soak counts threads after each game)."""
    import threading

    def background() -> set[threading.Thread]:
        return {t for t in threading.enumerate() if t.name.startswith("slaiga-background")}

    before = background()  # another test's table may still be ending its own
    offload = Offload()
    started = threading.Event()

    def job() -> None:
        started.set()
        threading.Event().wait(0.3)

    offload.background.submit(job)
    started.wait(5)

    async def main() -> None:
        await offload.aclose()

    trio.run(main)
    assert not background() - before
