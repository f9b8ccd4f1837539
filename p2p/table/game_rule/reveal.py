"""``Reveal``, ``Deal`` and ``Transfer``: reveal tokens, and remasks that make old tokens
useless.

* ``Reveal(hs, None)``: one ``tokens`` round of the seats whose tokens are not yet
  public, each batch with a DLEQ proof;
* ``Reveal(hs, {r})``: a ``remask`` by ``r`` of the cards whose ``r``-token is
  already public (else everybody could open them), then a ``tokens`` round of every
  seat but ``r``; ``r`` opens with its own share;
* ``Deal(((r, hs), ...))``: every hand in one ``tokens`` round, each seat's entry
  holding its tokens for the cards of every other hand (a hand that needs a remask
  first is shown as its own ``Reveal``);
* ``Transfer(h, s, d)``: a ``remask`` of ``h`` by ``s`` (old tokens stop opening
  it), then a private reveal to ``d``.

A private reveal or transfer after which *every* seat may see the card (each was
shown it in turn) is carried out as a public reveal, so the seatless engine learns
the face like every seat engine does and their hashes agree.  Received tokens may
be checked ahead of the fold in a worker thread (:data:`p2p.table.game_rule.core.Job`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from crypto.dleq import PROOF_BYTES, DleqProof
from crypto.elgamal import Ciphertext, decode_pile, encode_pile
from crypto.errors import InvalidEncoding
from crypto.group import Point, mul
from crypto.reveal import make_tokens, verify_tokens
from crypto.transfer import start_transfer, verify_transfer
from engine.cards import Card
from engine.obligations import Deal, Reveal, Transfer
from p2p.errors import LocalProtocolError
from p2p.table.game_rule.core import Flow, Job, Need, Proof64, Waived, decode_points
from p2p.wire import Blob, Body, body

if TYPE_CHECKING:
    from p2p.table.game_rule.fold import GameRule

TOKENS_KIND = "tokens"
REMASK_KIND = "remask"


@body(TOKENS_KIND)
@dataclass(frozen=True, slots=True)
class TokensBody(Body):
    """Reveal tokens (32 bytes a card, in the order the rule names) with one batched
    DLEQ proof."""

    tokens: Blob
    proof: Proof64


@body(REMASK_KIND)
@dataclass(frozen=True, slots=True)
class RemaskBody(Body):
    """New ciphertexts for the cards the rule names, with one remask proof each."""

    pile: Blob
    proofs: Blob


# ---- the obligations -------------------------------------------------------------------


def discharge(rule: GameRule, ob: Reveal) -> Flow:
    """Show ``ob.handles`` to everybody, or to one seat: (public answer, our answer)."""
    hs = rule._check_handles(ob.handles)
    if ob.to is None:
        faces = yield from reveal_public(rule, hs)
        return faces, faces
    if len(ob.to) != 1:
        raise LocalProtocolError(f"private reveals go to one seat, not {set(ob.to)}")
    (r,) = tuple(ob.to)
    return (yield from _reveal_to(rule, hs, r))


def transfer(rule: GameRule, ob: Transfer) -> Flow:
    """Move a card from ``ob.src`` to ``ob.dst``: (public answer, our answer)."""
    (h,) = rule._check_handles((ob.handle,))
    if not (0 <= ob.src < rule.n and 0 <= ob.dst < rule.n):
        raise LocalProtocolError(f"transfer between unknown seats: {ob}")
    if _everyone_sees(rule, h, ob.dst):
        faces = yield from reveal_public(rule, (h,))
        return faces, faces
    yield from _remask(rule, (h,), ob.src)
    got = yield from reveal_private(rule, (h,), ob.dst)
    return {}, got


# ---- reveals (also used to prove about held cards) -----------------------------------------


def _everyone_sees(rule: GameRule, h: int, seat: int) -> bool:
    """After showing ``h`` to ``seat``, may every seat see it?"""
    return (rule.engine.seen.get(h, 0) | (1 << seat)) == rule.engine.all_seats


def reveal_public(rule: GameRule, hs: Sequence[int]) -> Flow:
    yield from _token_round(rule, hs, range(rule.n))
    faces = {}
    for h in hs:
        toks = rule.ptok[h]
        k = rule._open(h, [toks[s] for s in range(rule.n)])
        faces[h] = rule._face(k)
        if rule.mine is not None:
            rule.mine.known[h] = k
    return faces


def _reveal_to(rule: GameRule, hs: tuple[int, ...], r: int) -> Flow:
    """Show ``hs`` to seat ``r``: (public answer, our answer)."""
    everyone = tuple(h for h in hs if _everyone_sees(rule, h, r))
    private = tuple(h for h in hs if h not in everyone)
    public_faces = (yield from reveal_public(rule, everyone)) if everyone else {}
    mine_faces = dict(public_faces)
    if private:
        got = yield from reveal_private(rule, private, r)
        mine_faces.update(got)
    return public_faces, mine_faces


def deal(rule: GameRule, ob: Deal) -> Flow:
    """Show each hand to its own seat in one ``tokens`` round: each seat publishes its
    tokens for every card of the other hands, hand after hand.  A hand that needs more
    (a card whose receiver's token is public, one every seat may see once shown) is
    dealt as its own private reveal instead, as ``Reveal(hand, to={seat})`` would be.
    Returns (public answer, our answer)."""
    hands: list[tuple[int, tuple[int, ...]]] = []
    for r, hand in ob.hands:
        if not (type(r) is int and 0 <= r < rule.n) or r in (seat for seat, _ in hands):
            raise LocalProtocolError(f"a deal to an unknown or repeated seat: {ob}")
        hands.append((r, rule._check_handles(hand)))
    dealt = [h for _, hand in hands for h in hand]
    if len(set(dealt)) != len(dealt):
        raise LocalProtocolError(f"a deal shows one card to two seats: {ob}")
    simple = [
        (r, hand)
        for r, hand in hands
        if not any(_everyone_sees(rule, h, r) or _rekey_for(rule, h, r) for h in hand)
    ]
    public: dict[int, Card] = {}
    mine: dict[int, Card] = {}
    if simple:
        need = {
            s: [h for r, hand in simple if r != s for h in hand if s not in rule.ptok[h]]
            for s in range(rule.n)
        }
        yield from _tokens_owed(rule, need)
        for r, hand in simple:
            mine.update(_open_own(rule, hand, r))
    for r, hand in hands:
        if (r, hand) not in simple:
            got_public, got_mine = yield from _reveal_to(rule, hand, r)
            public.update(got_public)
            mine.update(got_mine)
    return public, mine


def _rekey_for(rule: GameRule, h: int, r: int) -> bool:
    """Is ``r``'s token for ``h`` public while others are not (so that showing ``h`` to
    ``r`` alone first needs a remask)?"""
    return r in rule.ptok[h] and len(rule.ptok[h]) < rule.n


def reveal_private(rule: GameRule, hs: tuple[int, ...], r: int) -> Flow:
    """Let seat ``r`` (alone) open ``hs``; returns the faces if we are ``r``."""
    rekey = tuple(h for h in hs if _rekey_for(rule, h, r))
    if rekey:
        yield from _remask(rule, rekey, r)
    yield from _token_round(rule, hs, [s for s in range(rule.n) if s != r])
    return _open_own(rule, hs, r)


def _open_own(rule: GameRule, hs: Sequence[int], r: int) -> dict[int, Card]:
    """Once every other seat's token for ``hs`` is public: their faces if we are ``r``
    (opened with our own share), else nothing."""
    mine = rule.mine
    if mine is None or mine.seat != r:
        return {}
    faces = {}
    for h in hs:
        toks = [rule.ptok[h][s] for s in range(rule.n) if s != r]
        own = rule.ptok[h].get(r)
        if own is None:
            own = mul(mine.secret, rule.cts[h].c1)
        k = rule._open(h, [*toks, own])
        mine.known[h] = k
        faces[h] = rule._face(k)
    return faces


# ---- tokens ------------------------------------------------------------------------------------


def _token_round(rule: GameRule, hs: Sequence[int], seats: Sequence[int]) -> Flow:
    """Every seat of ``seats`` publishes its tokens for those of ``hs`` it has not yet."""
    yield from _tokens_owed(rule, {s: [h for h in hs if s not in rule.ptok[h]] for s in seats})


def _tokens_owed(rule: GameRule, need: dict[int, list[int]]) -> Flow:
    """One ``tokens`` round: each seat of ``need`` publishes its tokens for its cards (in
    that order), if it owes any."""
    owing = tuple(s for s in need if need[s])
    if not owing:
        return
    got = yield Need(
        TOKENS_KIND,
        owing,
        lambda seat, b: _check_tokens(rule, seat, need[seat], b),
        "unlocking cards",  # each seat's share of the key that opens them
        rule._for_me(owing, lambda: _make_tokens(rule, need[rule.mine.seat])),  # type: ignore[union-attr]
        pre=lambda seat, b: _pre_tokens(rule, seat, need[seat], b),
        premake=lambda: _premake_tokens(rule, need[rule.mine.seat]),  # type: ignore[union-attr]
        cards={s: tuple(need[s]) for s in owing},
    )
    for s in owing:
        for h, tok in zip(need[s], got[s], strict=True):
            rule.ptok[h][s] = tok


def _make_tokens(rule: GameRule, hs: Sequence[int]) -> Body:
    mine = rule.mine
    assert mine is not None
    cts = [rule.cts[h] for h in hs]
    pub = rule.pubs[mine.seat]
    ctx = rule._ctx(mine.seat)
    made = rule._made.pop(rule.step_no, None)
    rule._made.clear()
    if made is not None and made[0] == TOKENS_KIND and made[1] == cts and made[2] == ctx:
        tokens, proof = made[3], made[4]
    else:
        tokens, proof = make_tokens(mine.secret, pub, cts, ctx)
    forged = rule._cheat("tokens", hs, tokens, proof)
    if forged is not None:
        return forged
    return rule._keep_own(TokensBody(b"".join(t.data for t in tokens), proof.encode()), tokens)


def _premake_tokens(rule: GameRule, hs: Sequence[int]) -> Job:
    """Our reveal tokens and their proof for this step, made in a worker thread."""
    mine, step = rule.mine, rule.step_no
    assert mine is not None
    cts = [rule.cts[h] for h in hs]
    pub, ctx, secret = rule.pubs[mine.seat], rule._ctx(mine.seat), mine.secret

    def job() -> Callable[[], None]:
        tokens, proof = make_tokens(secret, pub, cts, ctx)

        def keep() -> None:
            if rule.step_no == step:
                rule._made[step] = (TOKENS_KIND, cts, ctx, tokens, proof)

        return keep

    return job


def _check_tokens(rule: GameRule, seat: int, hs: Sequence[int], b: TokensBody) -> list[Point]:
    own = rule._own_parsed(seat, b)
    if own is not None and len(own) == len(hs):
        return list(own)  # the tokens we just made: not decoded again
    cts = [rule.cts[h] for h in hs]
    ahead = rule._ahead.pop((TOKENS_KIND, seat, rule.step_no), None)
    if ahead is not None:
        body_, checked_cts, ctx, tokens = ahead
        if body_ == b and checked_cts == cts and ctx == rule._ctx(seat):
            rule.proofs_checked += 1
            return tokens
    tokens = decode_points(b.tokens, len(hs))
    proof = DleqProof.decode(b.proof)
    if not rule._trusted(seat):
        verify_tokens(rule.pubs[seat], cts, tokens, proof, rule._ctx(seat))
        rule.proofs_checked += 1
    return tokens


def _pre_tokens(rule: GameRule, seat: int, hs: Sequence[int], b: TokensBody) -> Job:
    cts = [rule.cts[h] for h in hs]
    pub, step, ctx = rule.pubs[seat], rule.step_no, rule._ctx(seat)

    def job() -> Callable[[], None]:
        tokens = decode_points(b.tokens, len(cts))
        verify_tokens(pub, cts, tokens, DleqProof.decode(b.proof), ctx)
        return lambda: rule._keep_ahead((TOKENS_KIND, seat, step), (b, cts, ctx, tokens))

    return job


# ---- remasks -----------------------------------------------------------------------------------


def _remask(rule: GameRule, hs: tuple[int, ...], by: int) -> Flow:
    olds = tuple(rule.cts[h] for h in hs)
    if by in rule.gone:
        return  # a seat that is gone re-masks nothing; its tokens come from the escrow
    try:
        got = yield Need(
            REMASK_KIND,
            (by,),
            lambda seat, b: _check_remask(rule, seat, olds, b),
            "re-masking cards",
            rule._for_me((by,), lambda: _make_remask(rule, olds)),
        )
    except Waived:
        return
    for h, ct in zip(hs, got[by], strict=True):
        rule.cts[h] = ct
        rule.ptok[h] = {}


def _make_remask(rule: GameRule, olds: tuple[Ciphertext, ...]) -> Body:
    mine = rule.mine
    assert mine is not None and rule.joint is not None
    news, proofs = [], []
    for old in olds:
        new, proof = start_transfer(old, rule.joint, rule._ctx(mine.seat))
        news.append(new)
        proofs.append(proof)
    forged = rule._cheat("remask", olds, news, proofs)
    if forged is not None:
        return forged
    return RemaskBody(encode_pile(news), b"".join(p.encode() for p in proofs))


def _check_remask(
    rule: GameRule, seat: int, olds: tuple[Ciphertext, ...], b: RemaskBody
) -> list[Ciphertext]:
    assert rule.joint is not None
    news = decode_pile(b.pile, len(olds))
    if len(b.proofs) != PROOF_BYTES * len(olds):
        raise InvalidEncoding(f"{len(olds)} remask proofs must be {PROOF_BYTES * len(olds)} bytes")
    for i, (old, new) in enumerate(zip(olds, news, strict=True)):
        proof = DleqProof.decode(b.proofs[i * PROOF_BYTES : (i + 1) * PROOF_BYTES])
        if not rule._trusted(seat):
            verify_transfer(old, new, rule.joint, proof, rule._ctx(seat))
            rule.proofs_checked += 1
    return news
