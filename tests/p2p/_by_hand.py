"""An in-process table (``p2p.table.local_table``) driven by hand, one entry at a time: the
pieces the tests that route entries themselves share (the offload's jobs, the background
shuffle's), so that each test's loop shows only what it counts."""

from __future__ import annotations

import random
from typing import Any

from crypto.elgamal import decode_pile, encode_pile
from crypto.group import COUNTERS
from engine.players import BotPlayer
from p2p.errors import CheatDetected
from p2p.table.game_rule import ShuffleBody
from p2p.wire import Entry, Signed, decode_body


def run_job(job: Any) -> int:
    """Run a prework or premake job as :class:`p2p.net.offload.Offload` does (one that
    raises keeps nothing: the fold checks the entry itself); its multiplications."""
    COUNTERS.reset()
    try:
        keep = job()
    except Exception:  # noqa: BLE001 - the fold checks the entry itself
        return COUNTERS.mul
    keep()
    return COUNTERS.mul


def produce(d: Any) -> tuple[Any, int]:
    """What ``d``'s machine owes now (``None``: nothing), and the multiplications making
    it took."""
    COUNTERS.reset()
    body = d.machine_body()
    return body, COUNTERS.mul


def bot_body(table: Any, d: Any, spec: Any) -> Any:
    """The heuristic bot's decision for ``d``'s seat as a body, if the seat owes one."""
    if not d.owes_decision():
        return None
    engine, seat = d.seat_view()
    player = table.players.setdefault(
        d.slot, BotPlayer.make(spec.bots["heuristic"], seat, random.Random(seat))
    )
    return d.decision_body(player.choose(engine, seat))


def swapped(body: ShuffleBody) -> ShuffleBody:
    """``body`` with its first two ciphertexts swapped: its proof no longer fits."""
    pile = list(decode_pile(body.pile, len(body.pile) // 64))
    pile[0], pile[1] = pile[1], pile[0]
    return ShuffleBody(encode_pile(pile), body.proof)


def sign(table: Any, d: Any, body: Any) -> tuple[Signed, int]:
    """``d`` signs ``body`` (what its own record proves goes to ``table.cheats``); the
    signed entry and its step."""
    offer = d.sign(body)
    table.cheats.extend(offer.cheats)
    signed = offer.accepted[0].signed
    return signed, decode_body(signed.entry, Entry).step


def offer(table: Any, other: Any, signed: Signed) -> bool:
    """Offer ``signed`` to ``other``'s record with the multiplication counter reset first
    (so ``COUNTERS.mul`` is the offer's afterwards); a cheat it proves goes to
    ``table.cheats``.  ``False`` when the offer itself proved one."""
    COUNTERS.reset()
    try:
        got = other.record.offer(signed)
    except CheatDetected as exc:
        table.cheats.append(exc)
        return False
    table.cheats.extend(got.cheats)
    return True


def send_machine_body(table: Any, d: Any) -> bool:
    """``d`` signs what its machine owes now, if anything, and every other seat takes it."""
    body = d.machine_body()
    if body is None:
        return False
    signed = d.sign(body).accepted[0].signed
    for other in table.drivers:
        if other is not d:
            other.record.offer(signed)
    return True
