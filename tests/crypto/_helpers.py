"""Fixtures shared by the crypto tests: small-order encodings, misplaced contexts and a
seat's held cards."""

from __future__ import annotations

from collections.abc import Sequence

from crypto.deck import Deck
from crypto.elgamal import mask
from crypto.group import Point, mul
from crypto.hand_proofs import HeldCard, held_card
from crypto.transcript import Context

# The eight small-order points of edwards25519 (orders 1, 2, 4, 4, 8, 8, 8, 8).
SMALL_ORDER = [
    bytes.fromhex("0100000000000000000000000000000000000000000000000000000000000000"),
    bytes.fromhex("ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"),
    bytes.fromhex("0000000000000000000000000000000000000000000000000000000000000000"),
    bytes.fromhex("0000000000000000000000000000000000000000000000000000000000000080"),
    bytes.fromhex("26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05"),
    bytes.fromhex("26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85"),
    bytes.fromhex("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a"),
    bytes.fromhex("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa"),
]
"""Written out here independently of ``crypto.group.SMALL_ORDER_ENCODINGS``."""


def other_contexts(ctx: Context) -> list[Context]:
    """``ctx`` with exactly one field changed each: table id, game, step, seat.

    A proof made under ``ctx`` must fail under every one of them (the
    Fiat-Shamir transcript binds the whole context).
    """
    table = ctx.table_id[:-1] + bytes([ctx.table_id[-1] + 1])
    return [
        Context(table, ctx.game, ctx.step, ctx.seat),
        Context(ctx.table_id, ctx.game + 1, ctx.step, ctx.seat),
        Context(ctx.table_id, ctx.game, ctx.step + 1, ctx.seat),
        Context(ctx.table_id, ctx.game, ctx.step, ctx.seat + 1),
    ]


def held_hand(
    indices: Sequence[int],
    deck: Deck,
    joint_key: Point,
    secrets: Sequence[int],
    seat: int,
    first_r: int,
) -> list[HeldCard]:
    """Held cards of ``seat`` for the cards ``indices``, masked with ``r = first_r + n``:
    every other seat's reveal token is public, ``seat``'s own is not."""
    held = []
    for n, idx in enumerate(indices):
        ct, _ = mask(deck.point(idx), joint_key, r=first_r + n)
        others = [mul(x, ct.c1) for s, x in enumerate(secrets) if s != seat]
        held.append(held_card(ct, others))
    return held
