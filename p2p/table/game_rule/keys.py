"""The ``key`` round that opens every game: each seat publishes its key share ``x_j G``
with a Schnorr proof, and every card starts as the public masking of its encoding
under the joint key."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from crypto.dleq import DleqProof
from crypto.elgamal import public_mask
from crypto.errors import CryptoError
from crypto.group import Point
from crypto.keys import KeyShare, joint_key, make_key_share, verify_key_share
from p2p.errors import LocalProtocolError
from p2p.table.game_rule import shuffle
from p2p.table.game_rule.core import Flow, Need, Point32, Proof64
from p2p.wire import Body, body

if TYPE_CHECKING:
    from p2p.table.game_rule.fold import GameRule

KEY_KIND = "key"


@body(KEY_KIND)
@dataclass(frozen=True, slots=True)
class KeyBody(Body):
    """A seat's public key share ``x G`` and its Schnorr proof ``(c, s)``."""

    public: Point32
    proof: Proof64


def key_round(rule: GameRule) -> Flow:
    """Every seat's key share; then the joint key and every card's first ciphertext."""
    everyone = tuple(range(rule.n))
    keys = yield Need(
        KEY_KIND,
        everyone,
        lambda seat, b: _check_key(rule, seat, b),
        "publishing a key share",
        rule._for_me(everyone, lambda: _make_key(rule)),
    )
    rule.pubs = [keys[s] for s in range(rule.n)]
    try:
        rule.joint = joint_key(rule.pubs)
    except CryptoError as exc:  # two seats with one key: impossible with valid proofs
        raise LocalProtocolError(f"joint key: {exc}") from exc
    if rule.deck is not None:
        rule.cts = [public_mask(rule.deck.points[k], rule.joint) for k in rule.index_of_handle]


def _make_key(rule: GameRule) -> Body:
    mine = rule.mine
    assert mine is not None
    shuffle.prepare_first(rule)  # in the background, while the key round goes on
    share = make_key_share(rule._ctx(mine.seat), mine.secret)
    return KeyBody(share.public.data, share.proof.encode())


def _check_key(rule: GameRule, seat: int, b: KeyBody) -> Point:
    share = KeyShare(seat, Point.decode(b.public), DleqProof.decode(b.proof))
    if not rule._trusted(seat):
        verify_key_share(share, rule._ctx(seat))
        rule.proofs_checked += 1
    return share.public
