"""Reveal tokens (decryption shares) with Chaum-Pedersen proofs, and unmasking.

For a ciphertext ``(c1, c2) = (r G, M + r PK)`` with ``PK = sum_j PK_j``, seat
``j``'s reveal token is ``T_j = x_j c1``, proven with the DLEQ
``log_G PK_j == log_c1 T_j`` (Chaum-Pedersen 1992; Barnett-Smart 2003).  Then
``M = c2 - sum_j T_j``.

* A *public* reveal publishes all tokens.
* A *private* reveal to seat ``k`` publishes every token except ``k``'s; only
  ``k`` can finish, with its own ``x_k c1`` (:func:`unmask_private`).

The transcript binds the seat's key share and the whole ciphertext (both
points) with the context, so a token cannot be reused for another card, seat,
step or game.

Operation counts:

* :func:`make_token`: 1 base + 2 mul.  :func:`verify_token`: 1 base + 3 mul + 2 add.
* :func:`make_tokens` (n cards, one batched proof): 1 base + 2n+1 mul + n-1 add.
* :func:`verify_tokens`: 1 base + 2n+1 mul + 2n add (vs 1 base + 3 mul + 2 add per
  card separately); see :mod:`crypto.dleq`.
* :func:`unmask`: one add per token.  :func:`unmask_private`: + 1 mul + 1 add.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from crypto.deck import Deck
from crypto.dleq import (
    DleqProof,
    prove_dleq,
    prove_dleq_batch,
    verify_dleq,
    verify_dleq_batch,
)
from crypto.elgamal import Ciphertext
from crypto.errors import DeckMismatch, InvalidEncoding, InvalidPoint, InvalidProof
from crypto.group import G, Point, check_scalar, mul, sub
from crypto.transcript import Context, Transcript

TOKEN_PROTOCOL = "slaiga/v1/reveal-token"
BATCH_PROTOCOL = "slaiga/v1/reveal-tokens"


@dataclass(frozen=True, slots=True)
class RevealToken:
    """A decryption share ``x_j c1`` with its DLEQ proof."""

    token: Point
    proof: DleqProof


def _transcript(protocol: str, context: Context, public: Point, cts: Sequence[Ciphertext]):
    t = Transcript(protocol, context)
    t.append_point("key_share", public)
    t.append_points("c1", [ct.c1 for ct in cts])
    t.append_points("c2", [ct.c2 for ct in cts])
    return t


def make_token(
    secret: int,
    public: Point,
    ct: Ciphertext,
    context: Context,
    *,
    insecure_test_seed: bytes | None = None,
) -> RevealToken:
    """Seat ``context.seat``'s token for ``ct`` with its proof (hedged nonce, crypto.nonces)."""
    check_scalar(secret, nonzero=True, what="secret key")
    token = mul(secret, ct.c1)
    t = _transcript(TOKEN_PROTOCOL, context, public, [ct])
    proof = prove_dleq(secret, G, ct.c1, public, token, t, insecure_test_seed=insecure_test_seed)
    return RevealToken(token, proof)


def verify_token(public: Point, ct: Ciphertext, token: RevealToken, context: Context) -> None:
    """Raise :class:`InvalidProof` unless ``token`` is the right share for ``public``."""
    if not isinstance(token, RevealToken):
        raise InvalidEncoding("expected a RevealToken")
    t = _transcript(TOKEN_PROTOCOL, context, public, [ct])
    try:
        verify_dleq(G, ct.c1, public, token.token, token.proof, t)
    except InvalidProof as exc:
        raise InvalidProof(f"reveal token of seat {context.seat} does not verify: {exc}") from exc


def make_tokens(
    secret: int,
    public: Point,
    cts: Sequence[Ciphertext],
    context: Context,
    *,
    insecure_test_seed: bytes | None = None,
) -> tuple[list[Point], DleqProof]:
    """Tokens for many cards with one batched DLEQ proof (hedged nonce, crypto.nonces)."""
    check_scalar(secret, nonzero=True, what="secret key")
    tokens = [mul(secret, ct.c1) for ct in cts]
    t = _transcript(BATCH_PROTOCOL, context, public, cts)
    c1s = [ct.c1 for ct in cts]
    proof = prove_dleq_batch(
        secret, G, c1s, public, tokens, t, insecure_test_seed=insecure_test_seed
    )
    return tokens, proof


def verify_tokens(
    public: Point,
    cts: Sequence[Ciphertext],
    tokens: Sequence[Point],
    proof: DleqProof,
    context: Context,
) -> None:
    """Raise :class:`InvalidProof` unless every token is ``x c1`` for ``public = x G``."""
    if len(tokens) != len(cts):
        raise DeckMismatch(f"{len(tokens)} tokens for {len(cts)} cards")
    t = _transcript(BATCH_PROTOCOL, context, public, cts)
    try:
        verify_dleq_batch(G, [ct.c1 for ct in cts], public, tokens, proof, t)
    except InvalidProof as exc:
        raise InvalidProof(f"reveal tokens of seat {context.seat} do not verify: {exc}") from exc


def unmask(ct: Ciphertext, tokens: Sequence[Point]) -> Point:
    """``c2 - sum(tokens)``: the card point once every seat's token is included."""
    m = ct.c2
    try:
        for tok in tokens:
            m = sub(m, tok)
    except InvalidPoint as exc:
        raise InvalidProof("unmasking produced the identity (tokens do not match)") from exc
    return m


def unmask_private(ct: Ciphertext, other_tokens: Sequence[Point], secret: int) -> Point:
    """The receiver of a private reveal finishes with its own share ``secret c1``."""
    return unmask(ct, [*other_tokens, mul(secret, ct.c1)])


def reveal_index(card: Point, deck: Deck) -> int:
    """Map an unmasked point to its card handle; raise :class:`InvalidProof` if not a card."""
    return deck.index_of(card)
