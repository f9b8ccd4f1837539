"""ElGamal masking of card points under the joint key, and proven remasking.

Following Barnett and Smart, "Mental poker revisited" (2003): a card ``M`` is
masked as ``(r G, M + r PK)`` under the joint key ``PK = sum_j x_j G``.  Nobody
can unmask it alone; each seat contributes a reveal token ``x_j r G``
(:mod:`crypto.reveal`).  Remasking adds a fresh encryption of the identity,
``(c1 + r G, c2 + r PK)``, which makes the result unlinkable to the input under
DDH; the remask proof is the Chaum-Pedersen (1992) DLEQ
``log_G(c1' - c1) == log_PK(c2' - c2)``, showing the card inside is unchanged.

Operation counts:

* :func:`mask`: 1 base + 1 mul + 1 add.  :func:`public_mask`: 1 add.
* :func:`remask`: 1 base + 1 mul + 2 add.
* :func:`remask_proven`: 2 base + 2 mul + 2 add (remask + proof, reusing ``rG, r PK``).
* :func:`prove_remask`: 1 base + 1 mul + 2 add.
* :func:`verify_remask`: 1 base + 3 mul + 4 add.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from crypto.dleq import DleqProof, prove_dleq, verify_dleq
from crypto.errors import InvalidEncoding, InvalidPoint, InvalidProof
from crypto.group import POINT_BYTES, G, Point, add, base_mul, check_scalar, mul, random_scalar, sub
from crypto.transcript import Context, Transcript

CIPHERTEXT_BYTES = 2 * POINT_BYTES
REMASK_PROTOCOL = "slaiga/v1/remask"


@dataclass(frozen=True, slots=True)
class Ciphertext:
    """An ElGamal ciphertext ``(c1, c2) = (r G, M + r PK)``."""

    c1: Point
    c2: Point

    def encode(self) -> bytes:
        return self.c1.data + self.c2.data

    @classmethod
    def decode(cls, b: bytes) -> Ciphertext:
        """Validate both points (2 decodes)."""
        if type(b) is not bytes or len(b) != CIPHERTEXT_BYTES:
            raise InvalidEncoding(f"ciphertext must be {CIPHERTEXT_BYTES} bytes")
        return cls(Point.decode(b[:POINT_BYTES]), Point.decode(b[POINT_BYTES:]))


def encode_pile(cts: Sequence[Ciphertext]) -> bytes:
    return b"".join(ct.c1.data + ct.c2.data for ct in cts)


def decode_pile(b: bytes, n: int) -> list[Ciphertext]:
    """Decode exactly ``n`` ciphertexts, validating every point."""
    if type(b) is not bytes or len(b) != n * CIPHERTEXT_BYTES:
        raise InvalidEncoding(f"pile must be {n} x {CIPHERTEXT_BYTES} bytes")
    return [
        Ciphertext.decode(b[i : i + CIPHERTEXT_BYTES]) for i in range(0, len(b), CIPHERTEXT_BYTES)
    ]


def mask(card: Point, joint_key: Point, r: int | None = None) -> tuple[Ciphertext, int]:
    """Encrypt ``card`` under ``joint_key``; returns ``(ciphertext, r)``."""
    r = random_scalar() if r is None else check_scalar(r, nonzero=True, what="mask randomness")
    return Ciphertext(base_mul(r), add(card, mul(r, joint_key))), r


def public_mask(card: Point, joint_key: Point) -> Ciphertext:
    """The deterministic masking with ``r = 1``, ``(G, M + PK)``: anyone can compute
    and check it; it is the starting pile for the first shuffle."""
    return Ciphertext(G, add(card, joint_key))


def _apply_remask(ct: Ciphertext, d1: Point, d2: Point) -> Ciphertext:
    try:
        return Ciphertext(add(ct.c1, d1), add(ct.c2, d2))
    except InvalidPoint as exc:  # only if ct was built from the negated mask
        raise InvalidProof("remask produced the identity") from exc


def remask(ct: Ciphertext, joint_key: Point, r: int | None = None) -> tuple[Ciphertext, int]:
    """Re-randomise ``ct`` with fresh ``r``; the card inside is unchanged."""
    r = random_scalar() if r is None else check_scalar(r, nonzero=True, what="remask randomness")
    return _apply_remask(ct, base_mul(r), mul(r, joint_key)), r


def _transcript(context: Context, joint_key: Point, ct: Ciphertext, new: Ciphertext) -> Transcript:
    t = Transcript(REMASK_PROTOCOL, context)
    t.append_point("joint_key", joint_key)
    t.append_points("input", (ct.c1, ct.c2))
    t.append_points("output", (new.c1, new.c2))
    return t


def remask_proven(
    ct: Ciphertext,
    joint_key: Point,
    context: Context,
    r: int | None = None,
    *,
    insecure_test_seed: bytes | None = None,
) -> tuple[Ciphertext, DleqProof]:
    """Remask and prove it in one go (saves the two subtractions of :func:`prove_remask`).

    ``r`` is the remask randomness (fresh unless given); the proof's nonce is
    hedged (:mod:`crypto.nonces`).
    """
    r = random_scalar() if r is None else check_scalar(r, nonzero=True, what="remask randomness")
    d1, d2 = base_mul(r), mul(r, joint_key)
    new = _apply_remask(ct, d1, d2)
    t = _transcript(context, joint_key, ct, new)
    proof = prove_dleq(r, G, joint_key, d1, d2, t, insecure_test_seed=insecure_test_seed)
    return new, proof


def prove_remask(
    ct: Ciphertext,
    new: Ciphertext,
    r: int,
    joint_key: Point,
    context: Context,
    *,
    insecure_test_seed: bytes | None = None,
) -> DleqProof:
    """Prove ``new`` is ``ct`` remasked with ``r`` under ``joint_key`` (hedged nonce)."""
    d1, d2 = sub(new.c1, ct.c1), sub(new.c2, ct.c2)
    t = _transcript(context, joint_key, ct, new)
    return prove_dleq(r, G, joint_key, d1, d2, t, insecure_test_seed=insecure_test_seed)


def verify_remask(
    ct: Ciphertext, new: Ciphertext, joint_key: Point, proof: DleqProof, context: Context
) -> None:
    """Raise :class:`InvalidProof` unless ``new`` is a re-encryption of ``ct``."""
    try:
        d1, d2 = sub(new.c1, ct.c1), sub(new.c2, ct.c2)
    except InvalidPoint as exc:
        raise InvalidProof("remask left the ciphertext unchanged") from exc
    try:
        verify_dleq(G, joint_key, d1, d2, proof, _transcript(context, joint_key, ct, new))
    except InvalidProof as exc:
        raise InvalidProof(f"remask proof does not verify: {exc}") from exc
