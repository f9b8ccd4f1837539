"""``slaiga bench crypto``: costs of the mental-poker cryptography, against op-count bounds.

Every figure is the median of ``--repeat`` runs in this one process, reported
with the group operations it performed (from :data:`crypto.group.COUNTERS`),
the lower bound ``sum(ops x unit cost)`` and the ratio of the measured time to
that bound.  A ratio near 1 means Python adds little on top of libsodium.

The machine is shared, so the load can change between the unit-cost
measurement at the start and a figure measured a minute later, which moves the
ratio either way (ratios of 0.7 and 2.0 for the same code were seen).  So each
run of a figure is immediately followed by a *replay*: the same number of
each counted operation, executed bare (``ops x unit cost``, measured in situ).
``lower_bound_ms`` is the median replay time and ``ratio_to_bound`` the
median of the per-run ratios ``figure / replay``, both taken under the same
load.  ``lower_bound_global_ms`` is the same op counts times the unit costs
measured at the start, for reference.

Figures:

* unit costs of each group operation;
* 52- and 104-card shuffles with remask, Terelius-Wikstrom and cut-and-choose
  proofs: prove, verify, decode, proof sizes;
* reveal tokens (single and batched) and the hand proofs when
  :mod:`crypto.hand_proofs` is present;
* ``lacks_card_13_*``: Slave's "I do not hold 3 of clubs" over a 13-card hand
  with the inequality proof of :mod:`crypto.inequality`, and the CDS
  AND-of-ORs verification it replaces (``lacks_card_13_or_verify``);
* ``escrow_*`` (issue 21, :mod:`crypto.escrow`): a four-seat key escrow deal, one
  receiver's public share and check (the extra work of the key round), and token
  shares for an absent seat over 6 cards: one seat's batch made and verified, and
  the three batches combined;
* ``deal4``: a whole verified four-seat deal in memory -- key shares with
  proofs, four shuffles with TW proofs each verified by the three other seats,
  6 cards dealt privately to each seat, 28 revealed publicly, every token
  proven and verified by every seat that uses it;
* ``shuffle_prepare_{52,104}`` and ``shuffle_finish_{52,104}``: a seat's shuffle and
  its commitment-form proof in two halves (:mod:`crypto.shuffle_prepared`): what a
  table computes while the seat waits its turn, and what is left once the pile is in
  (``shuffle_finish_ms_*`` in the summary, beside ``tw_prove_ms_*`` plus the remask);
* ``tw_verify_batch3_52`` and ``deal4_batched``: the same with TW proofs in
  commitment form, each seat verifying the three other seats' shuffles in one
  batch (:mod:`crypto.shuffle_proof_tw_batch`);
* the same four-seat workload with the PyPI package ``mentalpoker`` 0.5.0
  (``DealerEC`` and ``DealerEG``; no proofs at all), run in a separate virtual
  environment so it never becomes a dependency of the project.  The venv is
  ``$SLAIGA_BENCH_VENV`` or ``/tmp/slaiga-bench-venv``; it is created with pip
  when missing, and if that fails the report says so and goes on.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from typing import Any

from bench import help_text
from crypto import hand_proofs as hp
from crypto import inequality as ineq
from crypto import shuffle_proof_cc as cc
from crypto import shuffle_proof_tw as tw
from crypto import shuffle_proof_tw_batch as twb
from crypto.deck import deck_points
from crypto.elgamal import Ciphertext, decode_pile, encode_pile, mask, public_mask
from crypto.group import (
    COUNTERS,
    L,
    Point,
    add,
    base_mul,
    hash_to_point,
    mul,
    random_scalar,
)
from crypto.keys import joint_key, new_key_share, verify_key_share
from crypto.reveal import (
    make_token,
    make_tokens,
    unmask,
    unmask_private,
    verify_token,
    verify_tokens,
)
from crypto.shuffle import shuffle_deck
from crypto.shuffle_prepared import finish_shuffle, prepare_shuffle
from crypto.transcript import Context

SEATS = 4
PRIVATE_CARDS = 6
DECK = 52
STEP_KEYS, STEP_SHUFFLE, STEP_PRIVATE, STEP_PUBLIC = 1, 2, 3, 4
UNIT_OPS = ("mul", "base_mul", "add", "decode", "hash_to_point")
MENTALPOKER_SPEC = "mentalpoker==0.5.0"
DEFAULT_VENV = "/tmp/slaiga-bench-venv"
PIP_TIMEOUT_S = 300
MENTALPOKER_TIMEOUT_S = 900
TARGET_TW_MS_52 = 60.0
TARGET_DEAL4_VS_EC = 1.5
TARGET_EG_SPEEDUP = 20.0
TARGET_LOWER_BOUND_RATIO = 1.5


# --- measuring -----------------------------------------------------------------------------


class _Replay:
    """Executes a given number of each counted group operation, bare (the op-count bound)."""

    def __init__(self) -> None:
        self.k = random_scalar()
        self.p = base_mul(random_scalar())
        self.q = base_mul(random_scalar())
        self.enc = self.p.data
        self.ops: dict[str, Callable[[], Any]] = {
            "mul": lambda: mul(self.k, self.p),
            "base_mul": lambda: base_mul(self.k),
            "add": lambda: add(self.p, self.q),
            "decode": lambda: Point.decode(self.enc),
            "hash_to_point": lambda: hash_to_point(b"bench", self.enc),
        }

    def __call__(self, counts: dict[str, int]) -> float:
        """Seconds taken by ``counts[name]`` bare operations of each kind."""
        t0 = time.perf_counter()
        for name in UNIT_OPS:
            op = self.ops[name]
            for _ in range(counts.get(name, 0)):
                op()
        return time.perf_counter() - t0


_REPLAY: _Replay | None = None


def _median_time(fn: Callable[[], Any], repeat: int) -> tuple[float, dict[str, int], float, float]:
    """Median wall time of ``fn`` over ``repeat`` runs, the op counts of the last run, and
    the median in-situ bound and median per-run ratio (each run is followed by a replay
    of its own op counts, so both see the same machine load)."""
    global _REPLAY
    if _REPLAY is None:
        _REPLAY = _Replay()
    times = []
    bounds = []
    ratios = []
    ops: dict[str, int] = {}
    for _ in range(repeat):
        COUNTERS.reset()
        t0 = time.perf_counter()
        fn()
        elapsed = time.perf_counter() - t0
        ops = COUNTERS.snapshot()
        bound = _REPLAY(ops)
        times.append(elapsed)
        bounds.append(bound)
        if bound > 0:
            ratios.append(elapsed / bound)
    ratio = statistics.median(ratios) if ratios else 0.0
    return statistics.median(times), ops, statistics.median(bounds), ratio


def measure_units(repeat: int, per_run: int) -> dict[str, float]:
    """Median cost in microseconds of each counted group operation (and of a mod-L product)."""
    k = random_scalar()
    p = base_mul(random_scalar())
    q = base_mul(random_scalar())
    enc = p.data
    ops: dict[str, Callable[[], Any]] = {
        "mul": lambda: mul(k, p),
        "base_mul": lambda: base_mul(k),
        "add": lambda: add(p, q),
        "decode": lambda: Point.decode(enc),
        "hash_to_point": lambda: hash_to_point(b"bench", enc),
        "scalar_mulmod": lambda: k * k % L,
    }
    units = {}
    for name, fn in ops.items():
        samples = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            for _ in range(per_run):
                fn()
            samples.append((time.perf_counter() - t0) / per_run)
        units[name] = statistics.median(samples) * 1e6
    return units


def lower_bound_s(ops: dict[str, int], units_us: dict[str, float]) -> float:
    return sum(ops.get(name, 0) * units_us[name] for name in UNIT_OPS) / 1e6


class Report:
    """Collects figures as ``name -> {seconds, ops, lower bound, ratio, extras}``."""

    def __init__(self, units: dict[str, float]) -> None:
        self.units = units
        self.figures: dict[str, dict[str, Any]] = {}

    def add(
        self,
        name: str,
        seconds: float,
        ops: dict[str, int],
        bound_s: float,
        ratio: float,
        **extra: Any,
    ) -> None:
        self.figures[name] = {
            "ms": seconds * 1e3,
            "ops": {k: v for k, v in ops.items() if v},
            "lower_bound_ms": bound_s * 1e3,
            "ratio_to_bound": ratio or None,
            "lower_bound_global_ms": lower_bound_s(ops, self.units) * 1e3,
            **extra,
        }

    def measure(self, name: str, fn: Callable[[], Any], repeat: int, **extra: Any) -> None:
        seconds, ops, bound_s, ratio = _median_time(fn, repeat)
        self.add(name, seconds, ops, bound_s, ratio, **extra)


# --- workloads -------------------------------------------------------------------------------


def _table(n: int) -> tuple[Point, tuple[Ciphertext, ...]]:
    pk = base_mul(random_scalar())
    deck = deck_points(n)
    return pk, tuple(public_mask(m, pk) for m in deck.points)


def bench_shuffles(
    report: Report,
    sizes: list[int],
    repeat: int,
    cc_repeat: int,
    cc_rounds: int,
    warm: bool = True,
):
    ctx = Context(b"bench", 1, STEP_SHUFFLE, 0)
    for n in sizes:
        pk, pile = _table(n)
        out, w = shuffle_deck(pile, pk)
        tw.generators(n)
        if warm:
            tw.verify_shuffle(pile, out, pk, tw.prove_shuffle(pile, out, pk, w, ctx), ctx)
        report.measure(
            f"shuffle_remask_{n}", lambda pile=pile, pk=pk: shuffle_deck(pile, pk), repeat
        )
        proof = tw.prove_shuffle(pile, out, pk, w, ctx)
        encoded = proof.encode()
        report.measure(
            f"tw_prove_{n}",
            lambda pile=pile, out=out, pk=pk, w=w: tw.prove_shuffle(pile, out, pk, w, ctx),
            repeat,
            proof_bytes=len(encoded),
        )
        report.measure(
            f"tw_verify_{n}",
            lambda pile=pile, out=out, pk=pk, proof=proof: tw.verify_shuffle(
                pile, out, pk, proof, ctx
            ),
            repeat,
        )
        report.measure(
            f"tw_decode_verify_{n}",
            lambda pile=pile, out=out, pk=pk, encoded=encoded, n=n: tw.verify_shuffle(
                pile, out, pk, tw.TWShuffleProof.decode(encoded, n), ctx
            ),
            repeat,
        )
        if cc_repeat:
            cproof = cc.prove_shuffle(pile, out, pk, w, ctx, rounds=cc_rounds)
            report.measure(
                f"cc_prove_{n}",
                lambda pile=pile, out=out, pk=pk, w=w: cc.prove_shuffle(
                    pile, out, pk, w, ctx, rounds=cc_rounds
                ),
                cc_repeat,
                proof_bytes=len(cproof.encode()),
                rounds=cc_rounds,
            )
            report.measure(
                f"cc_verify_{n}",
                lambda pile=pile, out=out, pk=pk, cproof=cproof: cc.verify_shuffle(
                    pile, out, pk, cproof, ctx, min_rounds=cc_rounds
                ),
                cc_repeat,
                rounds=cc_rounds,
            )


def bench_prepared(report: Report, sizes: list[int], repeat: int, warm: bool = True) -> None:
    """A shuffle made in two halves: the pile-independent one (while the seat waits its
    turn) and the one that needs the pile (on the table's critical path)."""
    ctxs = iter(Context(b"bench", 1, STEP_SHUFFLE + k, 0) for k in range(10**6))
    for n in sizes:
        pk, pile = _table(n)
        if warm:
            finish_shuffle(prepare_shuffle(n, pk, next(ctxs)), pile)
        report.measure(
            f"shuffle_prepare_{n}", lambda n=n, pk=pk: prepare_shuffle(n, pk, next(ctxs)), repeat
        )
        ready = [prepare_shuffle(n, pk, next(ctxs)) for _ in range(repeat)]
        report.measure(
            f"shuffle_finish_{n}",
            lambda pile=pile, ready=ready: finish_shuffle(ready.pop(), pile),
            repeat,
        )


def bench_tw_batch(report: Report, repeat: int, n: int = DECK, warm: bool = True) -> None:
    """Three consecutive shuffles verified in one batch (commitment form), and decoded first."""
    pk, pile = _table(n)
    statements = []
    for s in range(3):
        ctx = Context(b"bench", 1, STEP_SHUFFLE, s)
        out, w = shuffle_deck(pile, pk)
        proof = twb.prove_shuffle_batchable(pile, out, pk, w, ctx)
        statements.append(twb.ShuffleStatement(pile, out, pk, proof, ctx))
        pile = out
    if warm:
        twb.verify_shuffles_batch(statements)
    encoded = [st.proof.encode() for st in statements]
    report.measure(
        f"tw_verify_batch3_{n}",
        lambda: twb.verify_shuffles_batch(statements),
        repeat,
        proof_bytes=len(encoded[0]),
    )

    def decode_and_verify() -> None:
        twb.verify_shuffles_batch(
            [
                twb.ShuffleStatement(
                    st.inputs, st.outputs, pk, twb.TWCommitmentProof.decode(raw, n), st.context
                )
                for st, raw in zip(statements, encoded, strict=True)
            ]
        )

    report.measure(f"tw_decode_verify_batch3_{n}", decode_and_verify, repeat)


def bench_tokens(report: Report, repeat: int) -> None:
    ctx = Context(b"bench", 1, STEP_PRIVATE, 2)
    x = random_scalar()
    public = base_mul(x)
    pk, pile = _table(DECK)
    ct = pile[0]
    token = make_token(x, public, ct, ctx)
    report.measure("token_make", lambda: make_token(x, public, ct, ctx), repeat)
    report.measure("token_verify", lambda: verify_token(public, ct, token, ctx), repeat)
    cards = pile[:PRIVATE_CARDS]
    toks, proof = make_tokens(x, public, cards, ctx)
    report.measure(
        f"tokens_make_batch_{PRIVATE_CARDS}", lambda: make_tokens(x, public, cards, ctx), repeat
    )
    report.measure(
        f"tokens_verify_batch_{PRIVATE_CARDS}",
        lambda: verify_tokens(public, cards, toks, proof, ctx),
        repeat,
    )


def bench_escrow(report: Report, repeat: int, n: int = 4) -> None:
    """Key escrow at a four-seat table: seat 1's deal, seat 0's check of its share, and
    seat 1's tokens made by the others for ``PRIVATE_CARDS`` cards."""
    from crypto.escrow import (
        combine_token_shares,
        make_deal,
        make_token_shares,
        open_share,
        public_shares,
        receivers,
        verify_token_shares,
    )
    from crypto.seal import SealKey

    ctx = Context(b"bench", 1, 3, 1)
    x = random_scalar()
    public = base_mul(x)
    seals = [SealKey.generate() for _ in range(n)]
    keys = {i: k.public for i, k in enumerate(seals)}
    box_secret = bytes(range(32))
    deal = make_deal(x, n, ctx, keys, box_secret)
    report.measure("escrow_deal4", lambda: make_deal(x, n, ctx, keys, box_secret), repeat)

    def check_share() -> None:
        open_share(seals[0], deal, public_shares(deal, public), 0, ctx)

    report.measure("escrow_open_share4", check_share, repeat)
    pub = public_shares(deal, public)
    shares = {i: open_share(seals[i], deal, pub, i, ctx) for i in receivers(n, 1)}
    _, pile = _table(DECK)
    cards = pile[:PRIVATE_CARDS]
    tctx = Context(b"bench", 1, STEP_PRIVATE, 0)
    batch = make_token_shares(shares[0], pub, cards, tctx)
    report.measure(
        f"escrow_token_shares_make_{PRIVATE_CARDS}",
        lambda: make_token_shares(shares[0], pub, cards, tctx),
        repeat,
    )
    report.measure(
        f"escrow_token_shares_verify_{PRIVATE_CARDS}",
        lambda: verify_token_shares(pub, cards, batch, tctx),
        repeat,
    )
    parts = {
        i: make_token_shares(s, pub, cards, tctx.with_seat(i)).tokens for i, s in shares.items()
    }
    report.measure(
        f"escrow_combine_{PRIVATE_CARDS}", lambda: combine_token_shares(pub, parts), repeat
    )


HAND = (0, 14, 15, 27, 40, 41)
"""Handles of the benchmark hand: two cards of "suit" 1 (handles 13..25), ranks 0..2."""
SUIT_SIZE = 13
LOW_RANKS = 10


def bench_hand_proofs(report: Report, repeat: int) -> None:
    """Each hand proof of :mod:`crypto.hand_proofs` for a 6-card hand in a 4-seat game.

    "Suit" and "rank" are the benchmark's own reading of handles (``i // 13`` and
    ``i % 13``); the engine defines the real ones, the costs do not depend on it.
    """
    deck = deck_points(DECK)
    ctx = Context(b"bench", 1, 9, 1)
    xs = [random_scalar() for _ in range(SEATS)]
    publics = [base_mul(x) for x in xs]
    pk = joint_key(publics)
    me = ctx.seat
    held = []
    for idx in HAND:
        ct, _ = mask(deck.points[idx], pk)
        others = [mul(xs[k], ct.c1) for k in range(SEATS) if k != me]
        held.append(hp.held_card(ct, others))
    x, pub = xs[me], publics[me]
    suit_of_first = [i for i in range(DECK) if i // SUIT_SIZE == HAND[0] // SUIT_SIZE]
    suit_t = [i for i in range(DECK) if i // SUIT_SIZE == 1]
    low = [i for i in range(DECK) if i % SUIT_SIZE < LOW_RANKS]
    cases = {
        "hand_card_in_suit": (
            lambda: hp.prove_card_in_set(x, pub, held[0], HAND[0], suit_of_first, deck, ctx),
            lambda pr: hp.verify_card_in_set(pub, held[0], suit_of_first, deck, pr, ctx),
        ),
        "hand_fewer_than_3_of_suit_in_6": (
            lambda: hp.prove_at_most_in_set(x, pub, held, HAND, suit_t, 2, deck, ctx),
            lambda pr: hp.verify_at_most_in_set(pub, held, suit_t, 2, deck, pr, ctx),
        ),
        "hand_2_cards_lower_than_v": (
            lambda: hp.prove_all_in_set(x, pub, held[:2], HAND[:2], low, deck, ctx),
            lambda pr: hp.verify_all_in_set(pub, held[:2], low, deck, pr, ctx),
        ),
    }
    for name, (prove, verify) in cases.items():
        proof = prove()
        verify(proof)
        report.measure(f"{name}_prove", prove, repeat, proof_bytes=len(proof.encode()))
        report.measure(f"{name}_verify", lambda verify=verify, proof=proof: verify(proof), repeat)
    bench_lacks_card(report, repeat, xs, publics, pk, ctx)


LACKS_HAND = tuple(range(2, DECK, 4))
"""A 13-card hand (Slave deals 13 cards to each of 4 seats) that lacks handle 1."""
LACKS_FORBIDDEN = 1


def bench_lacks_card(
    report: Report, repeat: int, xs: list[int], publics: list[Point], pk: Point, ctx: Context
) -> None:
    """Slave's "I do not hold 3 of clubs" over a 13-card hand: the inequality proof of
    :mod:`crypto.inequality` (a blinded comparison), and for
    comparison the verification of the CDS AND-of-ORs over the 51 other faces that it
    replaces (663 DLEQ leaves)."""
    deck = deck_points(DECK)
    me = ctx.seat
    held = []
    for idx in LACKS_HAND:
        ct, _ = mask(deck.points[idx], pk)
        held.append(hp.held_card(ct, [mul(xs[k], ct.c1) for k in range(SEATS) if k != me]))
    x, pub = xs[me], publics[me]
    bad = [LACKS_FORBIDDEN]
    n = len(LACKS_HAND)
    proof = ineq.prove_none_of(x, pub, held, LACKS_HAND, bad, deck, ctx)
    ineq.verify_none_of(pub, held, bad, deck, proof, ctx)
    report.measure(
        f"lacks_card_{n}_prove",
        lambda: ineq.prove_none_of(x, pub, held, LACKS_HAND, bad, deck, ctx),
        repeat,
        proof_bytes=len(proof.encode()),
    )
    report.measure(
        f"lacks_card_{n}_verify",
        lambda: ineq.verify_none_of(pub, held, bad, deck, proof, ctx),
        repeat,
    )
    encoded = proof.encode()
    report.measure(
        f"lacks_card_{n}_decode_verify",
        lambda: ineq.verify_none_of(
            pub, held, bad, deck, ineq.InequalityProof.decode(encoded, n, len(bad)), ctx
        ),
        repeat,
    )
    others = [i for i in range(DECK) if i != LACKS_FORBIDDEN]
    or_proof = hp.prove_all_in_set(x, pub, held, LACKS_HAND, others, deck, ctx)
    report.measure(
        f"lacks_card_{n}_or_verify",
        lambda: hp.verify_all_in_set(pub, held, others, deck, or_proof, ctx),
        repeat,
        proof_bytes=len(or_proof.encode()),
    )


class PhaseClock:
    """Accumulates wall time per named phase over several runs (for a per-phase median)."""

    def __init__(self) -> None:
        self.samples: dict[str, list[float]] = {}
        self._t = time.perf_counter()

    def start(self) -> None:
        self._t = time.perf_counter()

    def mark(self, phase: str) -> None:
        now = time.perf_counter()
        self.samples.setdefault(phase, []).append(now - self._t)
        self._t = now

    def medians_s(self) -> dict[str, float]:
        return {name: statistics.median(v) for name, v in self.samples.items()}


def deal4(clock: PhaseClock | None = None, batched: bool = False) -> None:
    """One whole verified four-seat deal of 52 cards, in memory (see module docstring)."""
    deal(clock, batched)


def deal(
    clock: PhaseClock | None = None,
    batched: bool = False,
    seats: int = SEATS,
    n: int = DECK,
    private: int = PRIVATE_CARDS,
) -> None:
    """One whole verified deal, in memory: ``seats`` key shares, ``seats`` shuffles of an
    ``n``-card deck each proven and verified by every other seat, ``private`` cards dealt
    privately to each seat and the rest revealed publicly (``deal(seats=4, n=52)`` is
    deal4).  Every seat's work runs in this one process, one after the other.

    With ``batched`` the shuffle proofs are in commitment form and each seat
    verifies the other seats' shuffles in one batch once all of them are done.
    """
    clock = clock or PhaseClock()
    clock.start()
    table = b"bench-deal4"
    deck = deck_points(n)

    def ctx(step: int, seat: int) -> Context:
        return Context(table, 1, step, seat)

    secrets_: list[int] = []
    shares = []
    for s in range(seats):
        x, share = new_key_share(ctx(STEP_KEYS, s))
        secrets_.append(x)
        shares.append(share)
    for verifier in range(seats):
        for s in range(seats):
            if s != verifier:
                verify_key_share(shares[s], ctx(STEP_KEYS, s))
    publics = [sh.public for sh in shares]
    pk = joint_key(publics)
    pile = tuple(public_mask(m, pk) for m in deck.points)
    clock.mark("keys_and_initial_pile")

    statements = []
    for s in range(seats):
        out, w = shuffle_deck(pile, pk)
        if batched:
            bproof = twb.prove_shuffle_batchable(pile, out, pk, w, ctx(STEP_SHUFFLE, s))
            statements.append(twb.ShuffleStatement(pile, out, pk, bproof, ctx(STEP_SHUFFLE, s)))
            clock.mark("shuffle_and_prove_x4")
            pile = out
            continue
        proof = tw.prove_shuffle(pile, out, pk, w, ctx(STEP_SHUFFLE, s))
        clock.mark("shuffle_and_prove_x4")
        for verifier in range(seats):
            if verifier != s:
                tw.verify_shuffle(pile, out, pk, proof, ctx(STEP_SHUFFLE, s))
        clock.mark("verify_shuffles_x12")
        pile = out
    if batched:
        for verifier in range(seats):
            twb.verify_shuffles_batch([st for k, st in enumerate(statements) if k != verifier])
        clock.mark("verify_shuffles_x12")

    seen: list[int] = []
    for k in range(seats):
        cards = pile[k * private : (k + 1) * private]
        others: list[list[Point]] = []
        for j in range(seats):
            if j == k:
                continue
            toks, proof = make_tokens(secrets_[j], publics[j], cards, ctx(STEP_PRIVATE, j))
            verify_tokens(publics[j], cards, toks, proof, ctx(STEP_PRIVATE, j))  # by seat k
            others.append(toks)
        for i, ct in enumerate(cards):
            point = unmask_private(ct, [toks[i] for toks in others], secrets_[k])
            seen.append(deck.index_of(point))
    clock.mark("private_deal_24_cards")

    public_cards = pile[seats * private :]
    batches = [
        make_tokens(secrets_[j], publics[j], public_cards, ctx(STEP_PUBLIC, j))
        for j in range(seats)
    ]
    for verifier in range(seats):
        for j in range(seats):
            if j != verifier:
                toks, proof = batches[j]
                verify_tokens(publics[j], public_cards, toks, proof, ctx(STEP_PUBLIC, j))
        revealed = [
            deck.index_of(unmask(ct, [batches[j][0][i] for j in range(seats)]))
            for i, ct in enumerate(public_cards)
        ]
        if verifier == 0:
            seen.extend(revealed)
    clock.mark("public_reveal_28_cards")
    if sorted(seen) != list(range(n)):
        raise AssertionError(f"deal({seats}, {n}) did not reveal every card exactly once")


def make_deal4_wire_overhead(batched: bool = False) -> Callable[[], None]:
    """What deal4 adds when messages travel as bytes: each of the three receivers of each
    of the four shuffles decodes (validates) the new pile and the proof (the commitment
    form of ``deal4_batched`` has ``N + 5`` more points to validate)."""
    pk, pile = _table(DECK)
    out, w = shuffle_deck(pile, pk)
    ctx = Context(b"bench", 1, STEP_SHUFFLE, 0)
    pile_bytes = encode_pile(out)
    if batched:
        proof_bytes = twb.prove_shuffle_batchable(pile, out, pk, w, ctx).encode()
        decode: Callable[[bytes, int], Any] = twb.TWCommitmentProof.decode
    else:
        proof_bytes = tw.prove_shuffle(pile, out, pk, w, ctx).encode()
        decode = tw.TWShuffleProof.decode

    def run() -> None:
        for _ in range(SEATS * (SEATS - 1)):
            decode_pile(pile_bytes, DECK)
            decode(proof_bytes, DECK)

    return run


# --- mentalpoker comparison --------------------------------------------------------------

_MENTALPOKER_SCRIPT = textwrap.dedent(
    """
    import json, statistics, sys, time
    from mentalpoker import DealerEC, DealerEG
    SEATS, PRIVATE = 4, 6

    def workload(cls):
        dealers = [cls() for _ in range(SEATS)]
        deck = dealers[0].new_deck
        for d in dealers:  # shuffle with each seat
            deck = d.shuffle(deck)
        for d in dealers:  # deal: each seat swaps its shuffle lock for per-card keys
            deck = d.deal(deck)
        seen = []
        for k in range(SEATS):  # private: the receiver unlocks with every seat's card key
            for i in range(k * PRIVATE, (k + 1) * PRIVATE):
                keys = [d.get_card_key(i) for d in dealers]
                seen.append(dealers[k].reveal_card(deck[i], keys))
        for v in range(SEATS):  # public: every seat unlocks every public card
            for i in range(SEATS * PRIVATE, len(deck)):
                keys = [d.get_card_key(i) for d in dealers]
                card = dealers[v].reveal_card(deck[i], keys)
                if v == 0:
                    seen.append(card)
        assert len(set(seen)) == len(deck) == 52, "mentalpoker deal lost cards"

    out = {}
    for name, cls, repeat in (("DealerEC", DealerEC, int(sys.argv[1])),
                              ("DealerEG", DealerEG, int(sys.argv[2]))):
        if repeat <= 0:
            continue
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            workload(cls)
            times.append(time.perf_counter() - t0)
        out[name] = {"median_s": statistics.median(times), "runs": repeat}
    print(json.dumps(out))
    """
)


def _venv_python(venv: str) -> str:
    return os.path.join(venv, "bin", "python")


def ensure_mentalpoker(venv: str) -> tuple[str | None, str]:
    """Return ``(python, note)``: a python that imports mentalpoker, or ``None`` and why not."""
    py = _venv_python(venv)
    probe = [py, "-c", "import mentalpoker.dealer, ecdsa"]
    if os.path.exists(py) and subprocess.run(probe, capture_output=True).returncode == 0:
        return py, f"using {MENTALPOKER_SPEC} from existing venv {venv}"
    try:
        if not os.path.exists(py):
            subprocess.run(
                [sys.executable, "-m", "venv", venv],
                check=True,
                capture_output=True,
                timeout=PIP_TIMEOUT_S,
            )
        res = subprocess.run(
            [py, "-m", "pip", "install", "--quiet", MENTALPOKER_SPEC, "ecdsa"],
            capture_output=True,
            text=True,
            timeout=PIP_TIMEOUT_S,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return None, f"could not create benchmark venv {venv}: {exc}"
    if res.returncode != 0:
        tail = (res.stderr or res.stdout).strip().splitlines()[-1:] or ["(no output)"]
        return None, f"pip could not install {MENTALPOKER_SPEC} into {venv}: {tail[0]}"
    if subprocess.run(probe, capture_output=True).returncode != 0:
        return None, f"{MENTALPOKER_SPEC} installed into {venv} but does not import"
    return py, f"installed {MENTALPOKER_SPEC} into benchmark venv {venv}"


def run_mentalpoker(venv: str, ec_repeat: int, eg_repeat: int) -> tuple[dict | None, str]:
    py, note = ensure_mentalpoker(venv)
    if py is None:
        return None, note
    try:
        res = subprocess.run(
            [py, "-c", _MENTALPOKER_SCRIPT, str(ec_repeat), str(eg_repeat)],
            capture_output=True,
            text=True,
            timeout=MENTALPOKER_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired:
        return None, note + f"; its workload did not finish in {MENTALPOKER_TIMEOUT_S} s"
    if res.returncode != 0:
        return None, note + f"; its workload failed: {res.stderr.strip()[-300:]}"
    return json.loads(res.stdout), note


# --- the citable table (docs/benchmarks.md) ----------------------------------------------------

GRID_CARDS = (52, 54, 104)
GRID_SEATS = (2, 3, 4, 5, 6)
DEFAULT_MARKDOWN = os.path.join(os.path.dirname(os.path.dirname(__file__)), "docs", "benchmarks.md")
PUBLISHED = (
    # (system, what is shuffled, elements, prove ms, verify ms, proof bytes, machine, source)
    ("Curdleproofs (Rust)", "BLS12-381 points, common-scalar rerandomised", 60, 177, 22, 3968,
     "Intel i7-8550U @ 1.80GHz", "https://github.com/asn-d6/curdleproofs (README, Performance)"),
    ("Curdleproofs (Rust)", "BLS12-381 points, common-scalar rerandomised", 124, 304, 27, 4448,
     "Intel i7-8550U @ 1.80GHz", "https://github.com/asn-d6/curdleproofs (README, Performance)"),
    ("Curdleproofs (Rust)", "BLS12-381 points, common-scalar rerandomised", 252, 560, 35, 4928,
     "Intel i7-8550U @ 1.80GHz", "https://github.com/asn-d6/curdleproofs (README, Performance)"),
    ("Curdleproofs (Go)", "BLS12-381 points, common-scalar rerandomised", 60, 96, 12, None,
     "AMD Ryzen 7 3800XT", "https://github.com/jsign/go-curdleproofs (README, benchmarks)"),
    ("Curdleproofs (Go)", "BLS12-381 points, common-scalar rerandomised", 124, 150, 12, None,
     "AMD Ryzen 7 3800XT", "https://github.com/jsign/go-curdleproofs (README, benchmarks)"),
)  # fmt: skip
ZKSHUFFLE_SOURCE = "https://hackmd.io/@ZDZ-B3ktQlOiBE4iqOXVlg/BJA7Zoqns"


def _mults(ops: dict[str, int]) -> int:
    return ops.get("mul", 0) + ops.get("base_mul", 0)


def collect_grid(
    cards: tuple[int, ...], seats: tuple[int, ...], repeat: int, log: Callable[[str], None]
) -> dict[str, Any]:
    """Per card count: TW prove/verify ms, proof bytes, group operations per card; per
    (card count, seat count): the time of a whole verified deal (:func:`deal`)."""
    rows: dict[int, dict[str, Any]] = {}
    deals: dict[tuple[int, int], dict[str, Any]] = {}
    ctx = Context(b"bench", 1, STEP_SHUFFLE, 0)
    for n in cards:
        log(f"{n} cards: shuffle proofs ...")
        pk, pile = _table(n)
        out, w = shuffle_deck(pile, pk)
        proof = tw.prove_shuffle(pile, out, pk, w, ctx)
        tw.verify_shuffle(pile, out, pk, proof, ctx)  # warm the generators
        prove_s, prove_ops, _, _ = _median_time(
            lambda pile=pile, out=out, pk=pk, w=w: tw.prove_shuffle(pile, out, pk, w, ctx), repeat
        )
        verify_s, verify_ops, _, _ = _median_time(
            lambda pile=pile, out=out, pk=pk, proof=proof: tw.verify_shuffle(
                pile, out, pk, proof, ctx
            ),
            repeat,
        )
        shuffle_s, shuffle_ops, _, _ = _median_time(
            lambda pile=pile, pk=pk: shuffle_deck(pile, pk), repeat
        )
        rows[n] = {
            "shuffle_ms": shuffle_s * 1e3,
            "prove_ms": prove_s * 1e3,
            "verify_ms": verify_s * 1e3,
            "proof_bytes": len(proof.encode()),
            "shuffle_ops_per_card": _mults(shuffle_ops) / n,
            "prove_ops_per_card": _mults(prove_ops) / n,
            "verify_ops_per_card": _mults(verify_ops) / n,
            "prove_ops": prove_ops,
            "verify_ops": verify_ops,
        }
        for k in seats:
            if k * PRIVATE_CARDS > n:
                continue
            log(f"{n} cards, {k} seats: whole deal ...")
            deal_s, deal_ops, _, _ = _median_time(
                lambda k=k, n=n: deal(seats=k, n=n), max(1, min(repeat, 3))
            )
            deals[(n, k)] = {"deal_s": deal_s, "deal_ops_per_card": _mults(deal_ops) / n}
    return {"rows": rows, "deals": deals, "cards": list(cards), "seats": list(seats)}


def machine_description() -> dict[str, Any]:
    """The machine a figure ran on: CPU model, cores, OS, Python, load at the time."""
    import platform

    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        load = os.getloadavg()
    except OSError:
        load = None
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "os": platform.platform(),
        "python": platform.python_version(),
        "load_1min": None if load is None else round(load[0], 2),
    }


def render_markdown(
    grid: dict[str, Any],
    machine: dict[str, Any],
    mentalpoker: dict | None,
    notes: list[str],
    when: str,
    repeat: int,
) -> str:
    load = machine["load_1min"]
    busy = load is not None and machine["cores"] and load > 0.5 * machine["cores"]
    out = [
        "# Benchmarks: shuffle proofs and whole deals",
        "",
        "Generated by `slaiga bench crypto --markdown` (do not edit by hand; rerun it).",
        "",
        f"- Run: {when}, median of {repeat} run(s) per figure (deals: of up to 3).",
        f"- Machine: {machine['cpu']}, {machine['cores']} cores, {machine['os']}, "
        f"Python {machine['python']}; 1-minute load average at the start: {load}.",
    ]
    if busy:
        out.append(
            "- **The machine was loaded while this ran** (load average above half the "
            "cores): the times are pessimistic. Regenerate on a quiet machine before "
            "citing them; the proof sizes and operation counts do not depend on load."
        )
    out += [
        "",
        "## Shuffle proofs (Terelius-Wikström, Ristretto255 via libsodium)",
        "",
        "One re-masking shuffle of an ElGamal-masked deck, its proof of correct shuffle "
        "(`crypto.shuffle_proof_tw`), and the proof's check by one other seat. "
        "*Ops per card*: scalar multiplications (variable- and fixed-base) divided by "
        "the card count.",
        "",
        "| cards | shuffle ms | prove ms | verify ms | proof bytes "
        "| shuffle ops/card | prove ops/card | verify ops/card |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for n in grid["cards"]:
        r = grid["rows"][n]
        out.append(
            f"| {n} | {r['shuffle_ms']:.1f} | {r['prove_ms']:.1f} | {r['verify_ms']:.1f} "
            f"| {r['proof_bytes']} | {r['shuffle_ops_per_card']:.1f} "
            f"| {r['prove_ops_per_card']:.1f} | {r['verify_ops_per_card']:.1f} |"
        )
    out += [
        "",
        "## Whole deals",
        "",
        "Seconds for one whole verified deal with every seat's work done in one process, "
        f"one seat after the other: key shares with proofs, one shuffle per seat proven "
        f"and verified by every other seat, {PRIVATE_CARDS} cards dealt privately to each "
        "seat (reveal tokens with proofs), the rest revealed publicly and checked by every "
        "seat. On a table each seat does its own share on its own machine, so the wall "
        "time there is lower. Per cell: seconds (scalar multiplications per card).",
        "",
        "| cards \\ seats | " + " | ".join(str(k) for k in grid["seats"]) + " |",
        "|---:|" + "---:|" * len(grid["seats"]),
    ]
    for n in grid["cards"]:
        cells = []
        for k in grid["seats"]:
            d = grid["deals"].get((n, k))
            cells.append("-" if d is None else f"{d['deal_s']:.2f} ({d['deal_ops_per_card']:.0f})")
        out.append(f"| {n} | " + " | ".join(cells) + " |")
    out += [
        "",
        "## Published figures of other systems",
        "",
        "Their machines and what they shuffle differ from ours, so compare orders of "
        "magnitude, not ratios. Curdleproofs shuffles group elements under one common "
        "scalar with a structured reference string (for secret leader election), not "
        "masked cards; its element counts leave out the 4 blinders it adds to reach a power of two.",
        "",
        "| system | shuffles | elements | prove ms | verify ms | proof bytes | machine | source |",
        "|---|---|---:|---:|---:|---:|---|---|",
    ]
    for system, what, n, prove, verify, size, where, src in PUBLISHED:
        size_s = "-" if size is None else str(size)
        out.append(f"| {system} | {what} | {n} | {prove} | {verify} | {size_s} | {where} | {src} |")
    out += [
        "",
        f"- **zkShuffle** (Groth16 over BN254, cards on Baby Jubjub; design: {ZKSHUFFLE_SOURCE}): "
        "we found no published prove or verify time for its shuffle circuit, so there is "
        "no figure to put here.",
        f"- **`{MENTALPOKER_SPEC}`** (PyPI) publishes no timings and proves nothing: no "
        "shuffle or reveal can be checked by the other seats. `slaiga bench crypto` runs "
        "its four-seat, 52-card deal on this machine (the same workload as the 4-seat, 52-card "
        "deal above, minus every proof):",
    ]
    if mentalpoker:
        for name, fig in mentalpoker.items():
            out.append(f"  - `{name}`: {fig['median_s']:.3f} s (median of {fig['runs']} run(s)).")
    else:
        out.append("  - not measured in this run.")
    for note in notes:
        out.append(f"- Note: {note}.")
    out.append("")
    return "\n".join(out)


def write_markdown(args: argparse.Namespace, log: Callable[[str], None]) -> str:
    import datetime

    repeat = max(1, args.repeat)
    machine = machine_description()
    when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    grid = collect_grid(tuple(args.cards), tuple(args.seat_counts), repeat, log)
    notes: list[str] = []
    mp = None
    if args.no_compare or args.quick:
        notes.append("the mentalpoker comparison was skipped in this run")
    else:
        log(f"mentalpoker {MENTALPOKER_SPEC} four-seat workload (separate venv) ...")
        mp, note = run_mentalpoker(args.venv, repeat, args.eg_repeat)
        notes.append(note)
    text = render_markdown(grid, machine, mp, notes, when, repeat)
    with open(args.markdown, "w", encoding="utf-8") as fh:
        fh.write(text)
    return text


# --- main --------------------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="slaiga bench crypto", description=help_text(__doc__, True))
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--repeat", type=int, default=5, help="runs per figure (median reported)")
    p.add_argument(
        "--quick",
        action="store_true",
        help="one run each (no warm-up run), small CC, no comparison",
    )
    p.add_argument("--no-compare", action="store_true", help="skip the mentalpoker comparison")
    p.add_argument("--cc-rounds", type=int, default=cc.DEFAULT_ROUNDS, help="cut-and-choose rounds")
    p.add_argument(
        "--eg-repeat", type=int, default=1, help="runs of mentalpoker DealerEG (slow, ~30 s each)"
    )
    p.add_argument(
        "--venv",
        default=os.environ.get("SLAIGA_BENCH_VENV", DEFAULT_VENV),
        help="virtual environment for mentalpoker (never the project's)",
    )
    p.add_argument(
        "--markdown",
        nargs="?",
        const=DEFAULT_MARKDOWN,
        metavar="PATH",
        help="write the citable table (per card and seat count) to PATH "
        "(default docs/benchmarks.md) instead of the usual figures",
    )
    p.add_argument("--cards", type=int, nargs="+", default=list(GRID_CARDS), choices=GRID_CARDS)
    p.add_argument(
        "--seat-counts", type=int, nargs="+", default=list(GRID_SEATS), choices=range(2, 7)
    )
    return p


def collect(args: argparse.Namespace, log: Callable[[str], None]) -> dict[str, Any]:
    repeat = 1 if args.quick else max(1, args.repeat)
    cc_rounds = 8 if args.quick else args.cc_rounds
    cc_repeat = 1 if args.quick else max(1, min(repeat, 3))
    warm = not args.quick  # --quick: one run each, and no warm-up run before it
    log("unit costs of group operations ...")
    units = measure_units(repeat=max(3, repeat), per_run=50 if args.quick else 400)
    report = Report(units)
    log("shuffles and shuffle proofs (52 and 104 cards) ...")
    bench_shuffles(report, [52, 104], repeat, cc_repeat, cc_rounds, warm)
    bench_prepared(report, [52, 104], repeat, warm)
    bench_tw_batch(report, repeat, warm=warm)
    log("reveal tokens and hand proofs ...")
    bench_tokens(report, repeat)
    bench_escrow(report, repeat)
    bench_hand_proofs(report, repeat)
    log("whole verified four-seat deal ...")
    if warm:
        deal4()  # warm caches (generators, deck encodings)
    clock = PhaseClock()
    report.measure("deal4", lambda: deal4(clock), repeat)
    batched_clock = PhaseClock()
    report.measure("deal4_batched", lambda: deal4(batched_clock, batched=True), repeat)
    report.measure("deal4_wire_decoding", make_deal4_wire_overhead(), repeat)
    report.measure("deal4_batched_wire_decoding", make_deal4_wire_overhead(True), repeat)
    fig = report.figures
    result: dict[str, Any] = {
        "unit_us": units,
        "tw_prove_ms_52": fig["tw_prove_52"]["ms"],
        "tw_verify_ms_52": fig["tw_verify_52"]["ms"],
        "tw_prove_ms_104": fig["tw_prove_104"]["ms"],
        "tw_verify_ms_104": fig["tw_verify_104"]["ms"],
        "shuffle_prepare_ms_52": fig["shuffle_prepare_52"]["ms"],
        "shuffle_finish_ms_52": fig["shuffle_finish_52"]["ms"],
        "shuffle_prepare_ms_104": fig["shuffle_prepare_104"]["ms"],
        "shuffle_finish_ms_104": fig["shuffle_finish_104"]["ms"],
        "tw_proof_bytes_52": fig["tw_prove_52"]["proof_bytes"],
        "tw_proof_bytes_104": fig["tw_prove_104"]["proof_bytes"],
        "deal4_s": fig["deal4"]["ms"] / 1e3,
        "deal4_lower_bound_s": fig["deal4"]["lower_bound_ms"] / 1e3,
        "deal4_ratio_to_bound": fig["deal4"]["ratio_to_bound"],
        "deal4_phases_s": _phase_medians(clock, repeat),
        "deal4_batched_s": fig["deal4_batched"]["ms"] / 1e3,
        "deal4_batched_with_wire_decoding_s": (
            fig["deal4_batched"]["ms"] + fig["deal4_batched_wire_decoding"]["ms"]
        )
        / 1e3,
        "deal4_batched_phases_s": _phase_medians(batched_clock, repeat),
        "deal4_with_wire_decoding_s": (fig["deal4"]["ms"] + fig["deal4_wire_decoding"]["ms"]) / 1e3,
        "lacks_card_13_verify_ms": fig["lacks_card_13_verify"]["ms"],
        "lacks_card_13_or_verify_ms": fig["lacks_card_13_or_verify"]["ms"],
        "repeat": repeat,
        "cc_rounds": cc_rounds,
        "figures": fig,
        "notes": [],
    }
    if args.quick or args.no_compare:
        result["mentalpoker"] = None
        result["notes"].append("mentalpoker comparison skipped")
    else:
        log(f"mentalpoker {MENTALPOKER_SPEC} four-seat workload (separate venv) ...")
        mp, note = run_mentalpoker(args.venv, repeat, args.eg_repeat)
        result["notes"].append(note)
        result["mentalpoker"] = mp
        if mp:
            for name in ("DealerEC", "DealerEG"):
                if name in mp:
                    result[f"deal4_ratio_vs_{name}"] = result["deal4_s"] / mp[name]["median_s"]
                    result[f"deal4_batched_ratio_vs_{name}"] = (
                        result["deal4_batched_s"] / mp[name]["median_s"]
                    )
    return result


def _phase_medians(clock: PhaseClock, repeat: int) -> dict[str, float]:
    """Per-phase medians of the total per run (phases that repeat within a run are summed)."""
    out = {}
    for name, samples in clock.samples.items():
        per_run = len(samples) // repeat
        totals = [sum(samples[i * per_run : (i + 1) * per_run]) for i in range(repeat)]
        out[name] = statistics.median(totals)
    return out


def _targets(r: dict[str, Any]) -> list[tuple[str, bool | None]]:
    out = [
        (f"TW prove 52 <= {TARGET_TW_MS_52:.0f} ms", r["tw_prove_ms_52"] <= TARGET_TW_MS_52),
        (f"TW verify 52 <= {TARGET_TW_MS_52:.0f} ms", r["tw_verify_ms_52"] <= TARGET_TW_MS_52),
    ]
    ec = r.get("deal4_ratio_vs_DealerEC")
    eg = r.get("deal4_ratio_vs_DealerEG")
    out.append(
        (f"deal4 <= {TARGET_DEAL4_VS_EC}x mentalpoker DealerEC", None if ec is None else ec <= 1.5)
    )
    out.append(
        (
            f"deal4 >= {TARGET_EG_SPEEDUP:.0f}x faster than DealerEG",
            None if eg is None else 1 / eg >= TARGET_EG_SPEEDUP,
        )
    )
    worst = max(
        (f["ratio_to_bound"] for f in r["figures"].values() if f["ratio_to_bound"]), default=None
    )
    out.append(
        (
            f"every figure within {TARGET_LOWER_BOUND_RATIO}x of its bound (worst {worst:.2f})",
            None if worst is None else worst <= TARGET_LOWER_BOUND_RATIO,
        )
    )
    return out


def _print_text(r: dict[str, Any]) -> None:
    print("Unit costs (median, microseconds):")
    for name, us in r["unit_us"].items():
        print(f"  {name:<16} {us:8.2f}")
    print()
    print(f"{'figure':<26}{'median ms':>11}{'bound ms':>10}{'ratio':>7}  ops / size")
    for name, f in r["figures"].items():
        ops = " ".join(f"{k}={v}" for k, v in f["ops"].items())
        size = f"  {f['proof_bytes']} B" if "proof_bytes" in f else ""
        ratio = f"{f['ratio_to_bound']:.2f}" if f["ratio_to_bound"] else "-"
        print(f"{name:<26}{f['ms']:11.2f}{f['lower_bound_ms']:10.2f}{ratio:>7}  {ops}{size}")
    print()
    print(
        f"deal4: {r['deal4_s']:.3f} s (lower bound {r['deal4_lower_bound_s']:.3f} s); "
        f"with every receiver decoding piles and proofs: {r['deal4_with_wire_decoding_s']:.3f} s"
    )
    for phase, secs in r["deal4_phases_s"].items():
        print(f"  deal4 phase {phase:<26} {secs * 1e3:9.1f} ms")
    print(
        f"deal4_batched (each seat batch-verifies the other shuffles): "
        f"{r['deal4_batched_s']:.3f} s; with wire decoding: "
        f"{r['deal4_batched_with_wire_decoding_s']:.3f} s"
    )
    for phase, secs in r["deal4_batched_phases_s"].items():
        print(f"  deal4_batched phase {phase:<18} {secs * 1e3:9.1f} ms")
    mp = r.get("mentalpoker")
    if mp:
        for name in ("DealerEC", "DealerEG"):
            if name in mp:
                ratio = r[f"deal4_ratio_vs_{name}"]
                print(
                    f"mentalpoker {name}: {mp[name]['median_s']:.3f} s (median of "
                    f"{mp[name]['runs']}), unverified; ours / theirs = {ratio:.2f} "
                    f"({1 / ratio:.1f}x {'faster' if ratio < 1 else 'slower'}); "
                    f"batched: {r[f'deal4_batched_ratio_vs_{name}']:.2f}"
                )
    for note in r["notes"]:
        print(f"note: {note}")
    print()
    for label, ok in _targets(r):
        verdict = "not measured" if ok is None else ("met" if ok else "NOT met")
        print(f"target: {label}: {verdict}")


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)

    def log(msg: str) -> None:
        if not args.json:
            print(msg, file=sys.stderr, flush=True)

    if args.markdown:
        write_markdown(args, log)
        log(f"wrote {args.markdown}")
        return 0
    result = collect(args, log)
    result["targets"] = {label: ok for label, ok in _targets(result)}
    if args.json:
        print(json.dumps(result, indent=None, sort_keys=True))
    else:
        _print_text(result)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))
