"""Key shares with Schnorr proofs of knowledge, and the joint ElGamal key.

Each seat ``j`` draws a secret ``x_j`` and publishes ``PK_j = x_j G`` with a
Schnorr (1991) proof of knowledge of ``x_j`` made non-interactive by
Fiat-Shamir (1986) and bound to the context (table, game, step, seat).  The
proof stops rogue-key attacks: without it the last seat could publish
``PK = Y - sum(others)`` and alone know the joint secret for ``Y``.  Binding the
seat and table stops a seat from copying another seat's share and proof.  The
joint key is the sum of the shares, as in Barnett and Smart, "Mental poker
revisited" (2003), so every seat's cooperation is needed to unmask a card.

Operation counts: :func:`make_key_share` 2 base (public key and commitment);
:func:`verify_key_share` 1 base + 1 mul + 1 add; :func:`joint_key` n-1 add.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from crypto.dleq import DleqProof, lincomb_sub
from crypto.errors import DeckMismatch, InvalidEncoding, InvalidPoint, InvalidProof
from crypto.group import (
    G,
    L,
    Point,
    base_mul,
    check_scalar,
    random_scalar,
    scalar_to_bytes,
    sum_points,
)
from crypto.transcript import Context, Transcript

PROTOCOL = "slaiga/v1/key-share"


@dataclass(frozen=True, slots=True)
class KeyShare:
    """A seat's public key share with its proof of knowledge."""

    seat: int
    public: Point
    proof: DleqProof


def _transcript(context: Context, public: Point) -> Transcript:
    t = Transcript(PROTOCOL, context)
    t.append_point("G", G)
    t.append_point("public", public)
    return t


def make_key_share(
    context: Context, secret: int, *, insecure_test_seed: bytes | None = None
) -> KeyShare:
    """Public share and Schnorr proof for ``secret``; ``context.seat`` is the owner.

    The nonce is hedged on the statement, ``secret`` and fresh randomness
    (:mod:`crypto.nonces`); ``insecure_test_seed`` stands in for the
    randomness in tests only.
    """
    check_scalar(secret, nonzero=True, what="secret key")
    public = base_mul(secret)
    t = _transcript(context, public)
    w = t.nonces("w", scalar_to_bytes(secret), insecure_test_seed=insecure_test_seed)()
    t.append_point("A", base_mul(w))
    c = t.challenge("c")
    return KeyShare(context.seat, public, DleqProof(c, (w + c * secret) % L))


def new_key_share(context: Context) -> tuple[int, KeyShare]:
    """Draw a fresh secret and return ``(secret, share)``."""
    secret = random_scalar()
    return secret, make_key_share(context, secret)


def verify_key_share(share: KeyShare, context: Context) -> None:
    """Raise :class:`InvalidProof` unless ``share`` proves knowledge of its secret in ``context``."""
    if not isinstance(share, KeyShare):
        raise InvalidEncoding("expected a KeyShare")
    if share.seat != context.seat:
        raise InvalidProof(f"key share claims seat {share.seat} but context is seat {context.seat}")
    a = lincomb_sub(share.proof.s, G, share.proof.c, share.public)
    t = _transcript(context, share.public)
    t.append_point("A", a)
    if t.challenge("c") != share.proof.c:
        raise InvalidProof(f"key share proof of seat {share.seat} does not verify")


def joint_key(publics: Sequence[Point]) -> Point:
    """Sum of the (verified) public shares; distinct shares required."""
    if not publics:
        raise DeckMismatch("joint key of no shares")
    if len({p.data for p in publics}) != len(publics):
        raise InvalidProof("duplicate key shares")
    try:
        return sum_points(publics)
    except InvalidPoint as exc:
        raise InvalidProof("joint key is the identity") from exc
