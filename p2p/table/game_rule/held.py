"""``Prove`` for the two proof shapes every peer checks: one ``proof`` step by the
prover about cards it holds, without showing them.

* ``AtLeastInSet``: at least t of these cards have a face in a set (a CDS threshold
  proof, ``crypto.hand_proofs``);
* ``NoneOfFace``: none of these cards is this face (one inequality proof about all
  of them, ``crypto.inequality``).

A held card is its ciphertext with every other seat's token: the prover opens it
with its own share.  :func:`ensure_held` first shows the prover again any of its
cards whose tokens are not all public (a card that came back to it through a pile).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from crypto.errors import InvalidEncoding, InvalidProof
from crypto.group import Point
from crypto.hand_proofs import (
    HeldCard,
    decode_cards_in_set_proof,
    held_card,
    prove_cards_in_set,
    verify_cards_in_set,
)
from crypto.inequality import InequalityProof, prove_none_of, verify_none_of
from crypto.transcript import Context
from engine.obligations import AtLeastInSet, NoneOfFace
from p2p.errors import LocalProtocolError
from p2p.table.game_rule.core import Flow, Job, Need
from p2p.table.game_rule.reveal import reveal_private
from p2p.wire import Blob, Body, body

if TYPE_CHECKING:
    from p2p.table.game_rule.fold import GameRule

PROOF_KIND = "proof"


@body(PROOF_KIND)
@dataclass(frozen=True, slots=True)
class ProofBody(Body):
    """A proof about the sender's own hidden cards (shape decided by the statement)."""

    proof: Blob


# ---- the two shapes ------------------------------------------------------------------------


def at_least_in_set(rule: GameRule, st: AtLeastInSet) -> Flow:
    hs = rule._check_handles(st.handles)
    at_least = st.at_least
    if at_least <= 0:
        return  # holds for any faces
    allowed = rule._indices(lambda f: f in st.faces)

    def prove(secret: int, pub: Point, held: list[HeldCard], idx: list[int], ctx: Context):
        return prove_cards_in_set(secret, pub, held, idx, allowed, at_least, rule.deck, ctx)

    def verify(pub: Point, held: list[HeldCard], raw: bytes, ctx: Context) -> None:
        if at_least > len(hs) or not allowed:
            raise InvalidProof(f"claim about {len(hs)} cards cannot hold for any faces")
        proof = decode_cards_in_set_proof(raw, pub, held, allowed, at_least, rule.deck)
        verify_cards_in_set(pub, held, allowed, at_least, rule.deck, proof, ctx)

    yield from _held_proof(rule, st.seat, hs, prove, verify)


def none_of_face(rule: GameRule, st: NoneOfFace) -> Flow:
    hs = rule._check_handles(st.handles)
    forbidden = rule._indices(lambda f: f == st.face)
    if not hs or not forbidden:
        return

    def prove(secret: int, pub: Point, held: list[HeldCard], idx: list[int], ctx: Context):
        return prove_none_of(secret, pub, held, idx, forbidden, rule.deck, ctx)

    def verify(pub: Point, held: list[HeldCard], raw: bytes, ctx: Context) -> None:
        proof = InequalityProof.decode(raw, len(hs), len(forbidden))
        verify_none_of(pub, held, forbidden, rule.deck, proof, ctx)

    yield from _held_proof(rule, st.seat, hs, prove, verify)


def _held_proof(
    rule: GameRule,
    p: int,
    hs: tuple[int, ...],
    prove: Callable[..., Any],
    verify: Callable[..., None],
) -> Flow:
    """One ``proof`` step by ``p`` about its held cards ``hs``, in the statement's shape."""
    yield from ensure_held(rule, p, hs)
    yield Need(
        PROOF_KIND,
        (p,),
        lambda seat, b: _check(rule, seat, hs, verify, b),
        "proving a claim",
        rule._for_me((p,), lambda: _make(rule, hs, prove)),
        pre=lambda seat, b: _pre_check(rule, seat, hs, verify, b),
        premake=lambda: _premake(rule, hs, prove),
    )


def _make(rule: GameRule, hs: Sequence[int], prove: Callable[..., Any]) -> Body:
    """Our proof about our held cards ``hs``: ``prove(secret, public share, held
    cards, their crypto indices, context)`` makes it in the statement's shape (or takes
    the one :func:`_premake` made for this very statement in a worker thread)."""
    mine = rule.mine
    assert mine is not None
    forged = rule._cheat("proof", hs)
    if forged is not None:
        return forged
    held = held_cards(rule, mine.seat, hs)
    ctx = rule._ctx(mine.seat)
    made = rule._made.pop(rule.step_no, None)
    rule._made.clear()
    if made is not None and made[0] == PROOF_KIND and made[1] == held and made[2] == ctx:
        return ProofBody(made[3])
    try:
        proof = prove(mine.secret, rule.pubs[mine.seat], held, my_indices(rule, hs), ctx)
    except (InvalidProof, InvalidEncoding) as exc:
        raise LocalProtocolError(f"we cannot prove our own claim: {exc}") from exc
    return ProofBody(proof.encode())


def _premake(rule: GameRule, hs: Sequence[int], prove: Callable[..., Any]) -> Job | None:
    """Our proof about our held cards ``hs`` for this step, made in a worker thread
    (p2p/net/offload.py); :func:`_make` takes it for the very same statement only.
    ``None`` when it cannot be made ahead (:func:`_make` then says why)."""
    mine, step = rule.mine, rule.step_no
    assert mine is not None
    try:
        held, idx = held_cards(rule, mine.seat, hs), my_indices(rule, hs)
    except (LocalProtocolError, InvalidProof, InvalidEncoding):
        return None
    ctx, secret, pub = rule._ctx(mine.seat), mine.secret, rule.pubs[mine.seat]

    def job() -> Callable[[], None]:
        encoded = prove(secret, pub, held, idx, ctx).encode()

        def keep() -> None:
            if rule.step_no == step:
                rule._made[step] = (PROOF_KIND, held, ctx, encoded)

        return keep

    return job


def _check(
    rule: GameRule, seat: int, hs: Sequence[int], verify: Callable[..., None], b: ProofBody
) -> None:
    """Check ``seat``'s proof about its held cards ``hs``: ``verify(public share, held
    cards, proof bytes, context)`` decodes and verifies it in the statement's shape (a
    check :func:`_pre_check` made in a worker thread counts for the very same body and
    statement only)."""
    if rule._trusted(seat):
        return
    held, ctx = held_cards(rule, seat, hs), rule._ctx(seat)
    ahead = rule._ahead.pop((PROOF_KIND, seat, rule.step_no), None)
    if ahead is not None and ahead == (b, rule.pubs[seat], held, ctx):
        rule.proofs_checked += 1
        return
    verify(rule.pubs[seat], held, b.proof, ctx)
    rule.proofs_checked += 1


def _pre_check(
    rule: GameRule, seat: int, hs: Sequence[int], verify: Callable[..., None], b: ProofBody
) -> Job:
    """:func:`_check`'s verification of ``seat``'s proof, as a job for a worker thread."""
    step, pub, held, ctx = (
        rule.step_no,
        rule.pubs[seat],
        held_cards(rule, seat, hs),
        rule._ctx(seat),
    )

    def job() -> Callable[[], None]:
        verify(pub, held, b.proof, ctx)
        return lambda: rule._keep_ahead((PROOF_KIND, seat, step), (b, pub, held, ctx))

    return job


# ---- held cards (also the sealed gift's) -----------------------------------------------------


def held_cards(rule: GameRule, prover: int, hs: Sequence[int]) -> list[HeldCard]:
    return [
        held_card(rule.cts[h], [rule.ptok[h][s] for s in range(rule.n) if s != prover]) for h in hs
    ]


def ensure_held(rule: GameRule, prover: int, hs: Sequence[int]) -> Flow:
    """Every other seat's token for the prover's cards must be public (a card that came
    back to its seat through a pile lacks some): show those to the prover again."""
    missing = tuple(
        h for h in hs if any(s not in rule.ptok[h] for s in range(rule.n) if s != prover)
    )
    if not missing:
        return
    blind = [h for h in missing if not rule.engine.visible(prover, h)]
    if blind:
        raise LocalProtocolError(f"seat {prover} must prove about cards {blind} it never saw")
    yield from reveal_private(rule, missing, prover)


def my_indices(rule: GameRule, hs: Sequence[int]) -> list[int]:
    """The crypto indices of our cards ``hs`` (we must have opened each)."""
    mine = rule.mine
    assert mine is not None
    missing = [h for h in hs if h not in mine.known]
    if missing:
        raise LocalProtocolError(f"we must prove about cards {missing} we never opened")
    return [mine.known[h] for h in hs]
