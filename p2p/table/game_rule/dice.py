"""``Roll`` and ``JointRandom``: a joint random draw by commit and reveal.

A ``dice`` round opens every seat's commitment (made in the previous draw's ``dice``
round, or in a ``commit`` round for the first draw of a game) and carries its
commitment for the next draw; values come by rejection sampling from the joint seed
(:class:`crypto.commit.JointStream`).  The committed values and nonces are derived
from the table secret, so they survive a crash.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated

from crypto.commit import CommitmentMismatch, JointStream, check_commitment, commit
from engine.obligations import JointRandom, Roll
from p2p.errors import InvalidMove, LocalProtocolError
from p2p.table.forming import SEAT_ORDER_VALUE_BYTES, Commit
from p2p.table.game_rule.core import Flow, Need, derive
from p2p.wire import Body, Bytes, Hash, body

if TYPE_CHECKING:
    from p2p.table.game_rule.fold import GameRule

COMMIT_KIND = "commit"
DICE_KIND = "dice"

_DICE_DOMAIN = b"slaiga/v1/game/dice"
_DICE_CONTEXT = b"slaiga/v1/game/dice-commit"
_JOINT_DOMAIN = b"slaiga/v1/game/joint-random"


@body(DICE_KIND)
@dataclass(frozen=True, slots=True)
class DiceBody(Body):
    """A seat's opening of its commitment for this joint draw, and its commitment for the
    next draw (see :func:`joint_draw`)."""

    value: Annotated[bytes, Bytes(size=SEAT_ORDER_VALUE_BYTES)]
    nonce: Annotated[bytes, Bytes(size=32)]
    next: Hash


def roll(rule: GameRule, ob: Roll) -> Flow:
    """``ob.count`` dice of ``ob.sides`` faces: (public answer, our answer)."""
    stream = yield from joint_draw(rule)
    dice = tuple(stream.below(ob.sides) + 1 for _ in range(ob.count))
    return dice, dice


def joint_random(rule: GameRule, ob: JointRandom) -> Flow:
    """A number in ``range(ob.bound)``: (public answer, our answer)."""
    if ob.bound < 1:
        raise LocalProtocolError(f"joint random bound {ob.bound}")
    stream = yield from joint_draw(rule)
    value = stream.below(ob.bound)
    return value, value


def _context(rule: GameRule, step: int, seat: int) -> bytes:
    return _DICE_CONTEXT + rule._ctx(seat, step).encode()


def _secret(rule: GameRule, step: int) -> tuple[bytes, bytes]:
    mine = rule.mine
    assert mine is not None
    d = derive(mine.keys.table_secret, _DICE_DOMAIN, step)
    return d[:32], d[32:64]


def joint_draw(rule: GameRule) -> Flow:
    """One joint random draw by commit and reveal; returns its :class:`JointStream`.

    A draw's ``dice`` round opens every seat's commitment and carries its
    commitment for the *next* draw, so only the first draw of a game needs
    a ``commit`` round of its own: each later roll is one round, not two.
    A draw is named by the step that committed to it (a ``commit`` step,
    or the previous draw's ``dice`` step); its contexts and its joint
    label carry that number.
    """
    everyone = tuple(range(rule.n))
    if rule._chained is not None:
        draw, commits = rule._chained
    else:
        draw = rule.step_no

        def make_commit() -> Body:
            value, nonce = _secret(rule, draw)
            c, _ = commit(value, _context(rule, draw, rule.mine.seat), nonce)  # type: ignore[union-attr]
            return Commit(c)

        commits = yield Need(
            COMMIT_KIND,
            everyone,
            lambda seat, b: b.commitment,
            "rolling",
            rule._for_me(everyone, make_commit),
        )
    following = rule.step_no  # this dice step commits to the next draw

    def make_open() -> Body:
        value, nonce = _secret(rule, draw)
        next_value, next_nonce = _secret(rule, following)
        seat = rule.mine.seat  # type: ignore[union-attr]
        ahead, _ = commit(next_value, _context(rule, following, seat), next_nonce)
        body_ = DiceBody(value, nonce, ahead)
        forged = rule._cheat("opening", body_)
        return forged if forged is not None else body_

    def check_open(seat: int, b: DiceBody) -> DiceBody:
        try:
            check_commitment(commits[seat], b.value, b.nonce, _context(rule, draw, seat), seat)
        except CommitmentMismatch as exc:
            raise InvalidMove(rule.order[seat], f"dice reveal: {exc}") from None
        return b

    opened = yield Need(
        DICE_KIND, everyone, check_open, "rolling", rule._for_me(everyone, make_open)
    )
    rule._chained = (following, {seat: b.next for seat, b in opened.items()})
    label = _JOINT_DOMAIN + rule._ctx(0, draw).encode()
    return JointStream.from_reveals(label, {seat: b.value for seat, b in opened.items()})
