"""A shuffle round with background work (p2p/table/game_rule/shuffle.py, the rule's
``background`` executor that p2p/net/offload.py gives a live peer's rule).

In-process tables (``p2p.table.local_table``), each seat's background executor under
the test's control (:class:`Deferred`: a submitted call runs when the test drains it),
and every prework and premake job run where the node would run it.  The tests count
group operations, never time: our shuffle's pile-independent half is done in the
background, each earlier shuffle is checked there as it arrives, only the last one is
left when the round ends; and a bad shuffle is caught before any card is shown.
"""

from __future__ import annotations

from collections import Counter
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from typing import Any

import pytest

from crypto.group import COUNTERS
from engine import registry
from p2p.errors import InvalidMove
from p2p.table import local_table
from p2p.table.game_rule import SHUFFLE_KIND, ShuffleBody, TokensBody
from p2p.table.game_rule.shuffle import SPARE_AFTER_ACTIONS
from p2p.table.seat import game_of
from p2p.wire import Entry, decode_body
from tests.p2p._by_hand import bot_body, offer, produce, run_job, sign, swapped

GAME, SEATS, OPTIONS, CARDS = "slave", 4, {"games": 1}, 52


class Deferred(Executor):
    """A background executor run by hand: :meth:`drain` runs what was submitted."""

    def __init__(self) -> None:
        self.queue: list = []
        self.ran: Counter = Counter()
        self.muls = 0

    def submit(self, fn, /, *args, **kwargs):  # noqa: ANN001, ANN201
        future: Future = Future()
        self.queue.append((future, fn, args, kwargs))
        return future

    def drain(self) -> None:
        while self.queue:
            future, fn, args, kwargs = self.queue.pop(0)
            if not future.set_running_or_notify_cancel():
                continue  # cancelled: the rule did it another way
            before = COUNTERS.mul
            try:
                future.set_result(fn(*args, **kwargs))
            except Exception as exc:  # noqa: BLE001 - kept in the future, as a thread would
                future.set_exception(exc)
            self.muls += COUNTERS.mul - before
            self.ran[fn.__name__] += 1


def _play(table, backgrounds, drain: bool, tamper_first: bool = False, max_entries: int = 5000):
    """Play ``table`` with every job run ahead; returns the multiplications per place:
    ``fold`` (offering shuffle entries), ``premake`` (our shuffle's jobs), ``last``
    (the jobs checking a round's last shuffle), ``pre`` (the other shuffle jobs).  With
    ``drain`` every seat runs its background work as soon as it is submitted.  With
    ``tamper_first`` the first shuffle is sent with two of its ciphertexts swapped."""
    spec = registry.get(GAME)
    muls = Counter()
    tampered = False
    for _ in range(max_entries):
        if all(r.finished for r in table.records) or table.cheats:
            return muls
        moved = False
        for d in table.drivers:
            rule = game_of(d.record)
            if rule is not None:
                if rule.background is None:
                    rule.background = backgrounds[d.slot]
                if drain:
                    backgrounds[d.slot].drain()
                need = rule.need
                job = rule.premake()
                if job is not None:
                    n = run_job(job)
                    if need is not None and need.kind == SHUFFLE_KIND:
                        muls["premake"] += n
            body, cost = produce(d)
            if isinstance(body, ShuffleBody):
                muls["produce"] += cost
            if body is None:
                body = bot_body(table, d, spec)
            if body is None:
                continue
            if isinstance(body, ShuffleBody) and tamper_first and not tampered:
                tampered = True
                body = swapped(body)
            signed, step = sign(table, d, body)
            if drain:  # what folding our own entry submitted
                backgrounds[d.slot].drain()
            for other in table.drivers:
                if other is d:
                    continue
                rule = game_of(other.record)
                if rule is not None:
                    last = rule.need is not None and rule.need.kind == SHUFFLE_KIND
                    last = last and rule.need.seats[0] == max(
                        s for s in range(rule.n) if s not in rule.gone
                    )
                    job = rule.prework(d.slot, step, body)
                    if job is not None and isinstance(body, ShuffleBody):
                        muls["last" if last else "pre"] += run_job(job)
                    elif job is not None:
                        run_job(job)
                if not offer(table, other, signed):
                    continue
                if isinstance(body, ShuffleBody):
                    muls["fold"] += COUNTERS.mul
                if drain:
                    backgrounds[other.slot].drain()
            moved = True
        assert moved, "table stuck"
    raise AssertionError("no end")


def _finished(table) -> None:
    assert not table.cheats
    assert all(r.finished for r in table.records)
    assert len({r.head for r in table.records}) == 1
    assert all(game_of(r).done for r in table.records)


def _played(background: type[Deferred], drain: bool) -> tuple[Any, dict, dict]:
    """A whole table played with a ``background`` thread per seat and checked to have
    ended well: the table, each seat's background, and the multiplications by where they
    were made."""
    table = local_table.new_table(GAME, SEATS, OPTIONS)
    backgrounds = {d.slot: background() for d in table.drivers}
    muls = _play(table, backgrounds, drain=drain)
    _finished(table)
    return table, backgrounds, muls


def test_background_work_leaves_only_the_pile_dependent_half_and_the_last_check():
    table, backgrounds, muls = _played(Deferred, drain=True)
    n = CARDS
    # every seat prepared its shuffle in the background (2N multiplications): N of them
    # as it made its key share, before the joint key was known, and N once it was; no
    # spare for a next deal (prepare_spare): a match of one deal has none
    for bg in backgrounds.values():
        assert bg.ran["prepare_early"] == 1
        assert bg.ran["_with_key"] == 1
        assert bg.ran["prepare_shuffle"] == 0
    # each added every shuffle of the others but the round's last one to the round's
    # running batch there: a shuffle's 3N + 5 proof points and its input pile (2N; N + 1
    # for the public deck, every card masked by G) are multiplied then, and its output
    # pile too (2N) when the next shuffle is ours (no shuffle to come takes it); the
    # generators, the key and an output pile the next shuffle takes wait.  A shuffle
    # just before ours is added once ours is made (the background thread helps make it)
    added = sorted(bg.ran["add"] for bg in backgrounds.values())
    assert added == [2, 2, 2, 2]  # the last shuffler's job adds the one before its own
    first, passed_on, before_ours = 4 * n + 6, 5 * n + 5, 7 * n + 5
    seat0 = 2 * passed_on  # shuffles 1 and 2
    seat1 = (first + 2 * n) + passed_on  # the deck's shuffle, before ours; shuffle 2
    seat2 = first + before_ours  # shuffle 0; shuffle 1, before ours
    seat3 = first + passed_on  # shuffles 0 and 1
    prepared = SEATS * (2 * n)
    assert sum(bg.muls for bg in backgrounds.values()) == prepared + seat0 + seat1 + seat2 + seat3
    # when the pile comes in, only the pile-dependent half is left: 4N + 1 a shuffle;
    # the last shuffler's job then adds the shuffle before its own (7N + 5) and verifies
    # the batch (the generators and the key: N + 2)
    assert muls["premake"] == SEATS * (4 * n + 1) + (8 * n + 7)
    assert muls["produce"] == 0
    # the round's last shuffle: each of the other seats adds it (its proof, both piles:
    # 7N + 5) and verifies the batch (N + 2): 8N + 7, what checking it alone costs, the
    # earlier ones added already; earlier shuffles are only decoded ahead; the fold
    # checks nothing
    assert muls["last"] == (SEATS - 1) * (8 * n + 7)
    # all told, each seat's checks cost what one batch of the three others' shuffles
    # costs ((3N + 5)k + N + 2 + 2Np for k shuffles on p piles, less N - 1 with the
    # deck), about 6N a shuffle, not 8N + 7 each as alone (7N + 8 for the deck's)
    checks = seat0 + seat1 + seat2 + seat3 + (8 * n + 7) + muls["last"]
    assert checks == (18 * n + 17) + 2 * (19 * n + 18) + (17 * n + 18)
    assert checks < 3 * (7 * n + 8) + 9 * (8 * n + 7)
    assert muls["pre"] == 0
    assert muls["fold"] == 0
    for r in table.records:
        assert game_of(r).proofs_checked >= SEATS - 1


def test_background_work_not_started_is_done_in_the_last_batch():
    """A background thread that never got to run: the prepared half is cancelled (our
    shuffle is made whole), and the earlier checks are cancelled and made in one batch
    with the last shuffle's check; every shuffle is still checked once."""
    table, backgrounds, muls = _played(Deferred, drain=False)
    n = CARDS
    assert all(not bg.ran for bg in backgrounds.values())
    # a batch of k shuffles touching p piles costs (3N + 5)k + N + 2 + 2Np (less N - 1
    # when the public deck, all first halves G, is one of them): the last shuffler's job
    # checks the three others' (k = 3, p = 4, the deck among them) with its own shuffle
    # made whole; each other seat checks the last with its two others' (k = 3; p = 4 for
    # the first shuffler, p = 5 with the deck for the second and third)
    assert muls["premake"] == SEATS * (6 * n + 1) + (18 * n + 17) - (n - 1)
    assert muls["last"] == (18 * n + 17) + 2 * ((20 * n + 17) - (n - 1))
    assert muls["fold"] == 0


class EarlyOnly(Deferred):
    """A background thread that ran the key round's work (``prepare_early``) and then got
    to nothing more: everything else stays queued."""

    def submit(self, fn, /, *args, **kwargs):  # noqa: ANN001, ANN201
        future = super().submit(fn, *args, **kwargs)
        if fn.__name__ == "prepare_early":
            self.drain()
        return future


def test_a_half_begun_in_the_key_round_is_finished_by_our_job_if_the_background_is_late():
    """The first shuffler's turn comes as the key round ends: if the background thread
    has not started adding the key to our half by then, our job does it (N), and only
    the pile-dependent half is left (4N + 1): the half made during the key round is not
    dropped for a shuffle from scratch (6N + 1)."""
    table, backgrounds, muls = _played(EarlyOnly, drain=False)
    n = CARDS
    for bg in backgrounds.values():
        assert dict(bg.ran) == {"prepare_early": 1}
        assert bg.muls == n
    # each seat's job: the key into its half (N), its shuffle (4N + 1); the last
    # shuffler's also checks the round (one batch: the three others', the deck among them)
    assert muls["premake"] == SEATS * (n + 4 * n + 1) + (18 * n + 17) - (n - 1)
    assert muls["produce"] == 0


@pytest.mark.parametrize("drain", [True, False])
def test_a_bad_shuffle_is_caught_before_any_card_is_shown(drain):
    """The round's first shuffle, sent with two ciphertexts swapped, is shuffled on by the
    later seats (before its check is in), but the round ends with every other seat
    convicting its author, and nobody made a token on top of it."""
    table = local_table.new_table(GAME, SEATS, OPTIONS)
    backgrounds = {d.slot: Deferred() for d in table.drivers}
    _play(table, backgrounds, drain=drain, tamper_first=True)
    bad = [c for c in table.cheats if isinstance(c, InvalidMove)]
    assert len(bad) == SEATS - 1
    assert len({c.seat for c in bad}) == 1
    assert all("bad shuffle" in str(c) for c in bad)
    kinds = [[e.body.TAG for e in r.entries()] for r in table.records]
    assert all(TokensBody.TAG not in k for k in kinds)
    assert max(k.count(SHUFFLE_KIND) for k in kinds) == SEATS  # later seats shuffled on


def test_a_game_with_background_threads_agrees():
    """Real worker threads (one per seat, as a node has): the same record everywhere."""
    table = local_table.new_table(GAME, SEATS, {"games": 2})
    pools = {d.slot: ThreadPoolExecutor(max_workers=1) for d in table.drivers}
    try:
        _play(table, pools, drain=False)
    finally:
        for pool in pools.values():
            pool.shutdown(wait=True)
    _finished(table)


class Inline(Executor):
    """A background executor that runs what is submitted at once, and logs it."""

    def __init__(self, log: list) -> None:
        self.log = log

    def submit(self, fn, /, *args, **kwargs):  # noqa: ANN001, ANN201
        self.log.append(("submit", fn.__name__, args))
        future: Future = Future()
        future.set_running_or_notify_cancel()
        future.set_result(fn(*args, **kwargs))
        return future


def test_the_next_deals_shuffle_is_prepared_while_this_deal_is_played():
    """Between a deal's last action and the next deal's first decision, no seat computes
    its shuffle's pile-independent half: each prepared it (for a step not known yet)
    while the deal was played, and the next deal's round finishes that one."""
    table = local_table.new_table(GAME, SEATS, {"games": 2})
    log: list = []

    def on_entry(t) -> None:  # noqa: ANN001
        for d in t.drivers:
            rule = game_of(d.record)
            if rule is not None and rule.background is None:
                rule.background = Inline(log)
        log.append(("entry", decode_body(t.log[-1].entry, Entry).body.TAG, None))

    local_table.run(table, on_entry=on_entry)
    _finished(table)
    kinds = [k for what, k, _ in log if what == "entry"]
    assert kinds.count(SHUFFLE_KIND) == 2 * SEATS
    # the window of the second deal: from the last action before its first shuffle to
    # the entry after which its first decision is owed (the entry before the next action;
    # a spare would be submitted by the fold of that action, after it)
    first_shuffle_2 = [i for i, e in enumerate(log) if e[:2] == ("entry", SHUFFLE_KIND)][SEATS]
    start = max(i for i in range(first_shuffle_2) if log[i][:2] == ("entry", "action"))
    action = min(i for i in range(first_shuffle_2, len(log)) if log[i][:2] == ("entry", "action"))
    end = max(i for i in range(action) if log[i][0] == "entry") + 1
    window = [e for e in log[start:end] if e[0] == "submit" and e[1] == "prepare_shuffle"]
    assert window == []
    # every seat's spare (no context: the step was not known) was made during deal 1,
    # not as its first decision came (after the first action, not before the second)
    spares = [i for i, e in enumerate(log[:start]) if e[:2] == ("submit", "prepare_shuffle")]
    spares = [i for i in spares if log[i][2][2] is None]
    assert len(spares) == SEATS
    assert all(log[i][2][0] == CARDS for i in spares)
    actions = [i for i, e in enumerate(log) if e[:2] == ("entry", "action")]
    assert all(actions[0] < i < actions[SPARE_AFTER_ACTIONS - 1] + 1 for i in spares)
    assert not any(actions[0] > i for i in spares)
    # and none for a third deal: the match has two
    later = [e for e in log[start:] if e[:2] == ("submit", "prepare_shuffle") and e[2][2] is None]
    assert later == []
