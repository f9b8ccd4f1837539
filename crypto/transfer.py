"""Moving a masked card from one seat to another (Barnett-Smart 2003, section on
transferring cards).

A card held by seat A (everyone has its ciphertext; every seat but A has
published its token to A privately) moves to seat B in three steps:

1. any seat -- normally A -- remasks the ciphertext and proves the remask
   (:func:`start_transfer`; the old tokens no longer open the new ciphertext,
   so A loses the ability to read it);
2. every seat verifies the remask (:func:`verify_transfer`);
3. every seat except B sends B its reveal token for the *new* ciphertext
   (:func:`crypto.reveal.make_token`), sealed to B; B verifies them and unmasks
   with its own share (:func:`crypto.reveal.unmask_private`).

Operation counts: :func:`start_transfer` 2 base + 2 mul + 2 add;
:func:`verify_transfer` 1 base + 3 mul + 4 add.
"""

from __future__ import annotations

from crypto.dleq import DleqProof
from crypto.elgamal import Ciphertext, remask_proven, verify_remask
from crypto.group import Point
from crypto.transcript import Context


def start_transfer(
    ct: Ciphertext,
    joint_key: Point,
    context: Context,
    r: int | None = None,
    *,
    insecure_test_seed: bytes | None = None,
) -> tuple[Ciphertext, DleqProof]:
    """Remask ``ct`` for hand-over, with the remask proof (hedged nonce, crypto.nonces)."""
    return remask_proven(ct, joint_key, context, r, insecure_test_seed=insecure_test_seed)


def verify_transfer(
    old: Ciphertext, new: Ciphertext, joint_key: Point, proof: DleqProof, context: Context
) -> None:
    """Raise :class:`~crypto.errors.InvalidProof` unless ``new`` re-encrypts ``old``."""
    verify_remask(old, new, joint_key, proof, context)
