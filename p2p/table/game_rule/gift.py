"""``Prove(HighestGiven)``, Slave's exchange: a gift checked by its receiver alone.

The receiver must not show the lowest given face to anyone, so the giver seals to
it an openable box (:func:`crypto.seal.seal_openable`) of fixed size: its reveal
tokens for the given cards and an inequality proof, its forbidden list padded to a
fixed length, that none of its other cards is a face at or above the lowest given one
(``sealed-proof``).  The receiver answers ``verdict``: accept (a :class:`Caveat`
that ``slaiga verify`` lists), or complain.  After a complaint the giver owes
``unseal``: the box's one-time key (derived from the table secret), with which
anyone opens the box and convicts the giver (a false gift, a wrong key) or the
complainer (a false complaint).  ``p2p/RECORD_FORMAT.md`` §9 has the details; the
giver's box may be made ahead in a worker thread (:data:`p2p.table.game_rule.core.Job`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated

from crypto.dleq import PROOF_BYTES, DleqProof
from crypto.elgamal import Ciphertext
from crypto.errors import CryptoError, InvalidEncoding, InvalidProof
from crypto.group import POINT_BYTES, Point
from crypto.inequality import InequalityProof, prove_none_of, verify_none_of
from crypto.inequality import proof_size as inequality_proof_size
from crypto.reveal import make_tokens, verify_tokens
from crypto.seal import (
    check_seal_key,
    open_openable,
    open_with_shown_key,
    openable_ephemeral,
    openable_key,
    openable_size,
    seal_openable,
    shown_key_public,
)
from engine.cards import ORDERS
from engine.obligations import HighestGiven
from p2p.errors import InvalidMove, LocalProtocolError
from p2p.table.game_rule.core import Flow, Job, Need, decode_points, derive
from p2p.table.game_rule.held import ensure_held, held_cards, my_indices
from p2p.wire import Blob, Body, Bool, Bytes, body

if TYPE_CHECKING:
    from p2p.table.game_rule.fold import GameRule

SEALED_KIND = "sealed-proof"
VERDICT_KIND = "verdict"
UNSEAL_KIND = "unseal"

SEAL_DOMAIN = b"slaiga/v1/game/sealed-proof"
GIFT_KEY_DOMAIN = b"slaiga/v1/game/gift-box-key"


@body(SEALED_KIND)
@dataclass(frozen=True, slots=True)
class SealedProofBody(Body):
    """A highest-given proof sealed to its verifier (see the module docstring)."""

    sealed: Blob


@body(VERDICT_KIND)
@dataclass(frozen=True, slots=True)
class VerdictBody(Body):
    """The verifier's answer to a sealed proof: accept, or complain (then the giver
    owes an ``unseal`` entry that settles the complaint)."""

    accept: Annotated[bool, Bool()]


@body(UNSEAL_KIND)
@dataclass(frozen=True, slots=True)
class UnsealBody(Body):
    """The giver's answer to a complaint: its gift box's one-time X25519 private key,
    with which anyone opens the box exactly as its receiver did."""

    key: Annotated[bytes, Bytes(size=32)]


@dataclass(frozen=True, slots=True)
class Caveat:
    """A check that only one seat could make: the gift sealed at record ``step`` by
    slot ``seat`` was checked by slot ``checked_by`` alone, who accepted it."""

    step: int
    seat: int
    checked_by: int
    kind: str = "gift"
    order: str = ""
    given: tuple[Ciphertext, ...] = ()
    rest: tuple[Ciphertext, ...] = ()
    """The card order and the given and kept cards' ciphertexts, which a table with the
    ``open_hands`` option opens after the game (:mod:`p2p.table.game_rule.open`)."""


@dataclass(frozen=True, slots=True)
class _Gift:
    """One sealed gift's public facts: the statement, the given cards whose giver token
    is in the box, the step that seals it, the padded statement and plaintext size."""

    st: HighestGiven
    need_tok: tuple[int, ...]
    step: int
    pad_to: int
    pad_with: int
    plain_bytes: int


def highest_given(rule: GameRule, st: HighestGiven) -> Flow:
    """A gift sealed to its receiver, the receiver's verdict, and, on a complaint, the
    giver's one-time key that lets anyone open the box and decide who lied."""
    p, v = st.seat, st.verifier
    given = rule._check_handles(st.given)
    rest = rule._check_handles(st.rest)
    if not given or not rest or p == v or not 0 <= v < rule.n:
        return
    if st.order not in ORDERS:
        raise LocalProtocolError(f"unknown card order {st.order!r}")
    yield from ensure_held(rule, p, given + rest)
    need_tok = tuple(h for h in given if p not in rule.ptok[h])
    pad_to, pad_with = _padding(rule, st)
    plain = POINT_BYTES * len(st.given) + PROOF_BYTES + inequality_proof_size(len(st.rest), pad_to)
    gift = _Gift(st, need_tok, rule.step_no, pad_to, pad_with, plain)

    def check_sealed(seat: int, b: SealedProofBody) -> bytes:
        if len(b.sealed) != openable_size(gift.plain_bytes):
            raise InvalidEncoding(
                f"a gift box must be {openable_size(gift.plain_bytes)} bytes, not {len(b.sealed)}"
            )
        check_seal_key(openable_ephemeral(b.sealed))
        mine = rule.mine
        if mine is not None and mine.seat == v:
            ahead = rule._ahead.pop((SEALED_KIND, p, rule.step_no), None)
            judged = ahead[1] if ahead is not None and ahead[0] == b else None
            mine.verdict = _judge_sealed(rule, gift, b.sealed, judged)
        return b.sealed

    sealed = yield Need(
        SEALED_KIND,
        (p,),
        check_sealed,
        "giving cards",
        rule._for_me((p,), lambda: _make_sealed(rule, gift)),
        premake=lambda: _premake_sealed(rule, gift),
        pre=lambda seat, b: _pre_judge(rule, gift, b),
    )
    verdict_step = rule.step_no
    verdict = yield Need(
        VERDICT_KIND,
        (v,),
        lambda seat, b: b.accept,
        "checking the gift",
        rule._for_me((v,), lambda: _make_verdict(rule)),
    )
    if verdict[v]:
        rule.caveats.append(
            Caveat(
                gift.step,
                rule.order[p],
                rule.order[v],
                order=st.order,
                given=tuple(rule.cts[h] for h in given),
                rest=tuple(rule.cts[h] for h in rest),
            )
        )
        return
    # a complaint: the giver shows the box's one-time key, and anyone opens the box
    box = sealed[p]
    shown = yield Need(
        UNSEAL_KIND,
        (p,),
        lambda seat, b: _judge_unsealed(rule, gift, box, verdict_step, b),
        "showing the gift",
        rule._for_me((p,), lambda: _make_unseal(rule, gift)),
    )
    culprit, reason = shown[p]
    raise InvalidMove(rule.order[culprit], reason)


def _padding(rule: GameRule, st: HighestGiven) -> tuple[int, int]:
    """The padded statement's size and filler, from public facts only.

    ``pad_to`` is the largest forbidden set any true gift of ``len(st.given)``
    cards over ``len(st.rest)`` others can have (every card of ``rest`` lies below
    the lowest given one); ``pad_with`` the highest face, which every forbidden set
    holds.  So the proof's size and the work to make and check it do not depend on
    the lowest given face."""
    key = ORDERS[st.order]
    size = rule.size
    keys = [key(rule._face(k)) for k in range(size)]
    pad_to = 0
    for low in set(keys):
        below = sum(1 for x in keys if x < low)
        if below >= len(st.rest) and size - below >= len(st.given):
            pad_to = max(pad_to, size - below)
    if pad_to == 0:
        raise LocalProtocolError("no gift of this size can be proven highest")
    pad_with = max(range(size), key=lambda k: (keys[k], -k))
    return pad_to, pad_with


def seal_context(rule: GameRule, step: int, prover: int, verifier: int) -> bytes:
    """The context a gift box is sealed and opened under."""
    return SEAL_DOMAIN + rule._ctx(prover, step).encode() + bytes([verifier])


def _box_secret(rule: GameRule, gift: _Gift) -> bytes:
    """What the gift box's one-time key is derived from: the table secret, so that it
    survives a crash (the giver may have to show the key after a restart)."""
    mine = rule.mine
    assert mine is not None
    return derive(mine.keys.table_secret, GIFT_KEY_DOMAIN, gift.step)


def _box_key(rule: GameRule, gift: _Gift) -> bytes:
    """The gift box's one-time X25519 key (:func:`crypto.seal.openable_key`)."""
    mine = rule.mine
    assert mine is not None
    ctx = seal_context(rule, gift.step, mine.seat, gift.st.verifier)
    return openable_key(_box_secret(rule, gift), ctx)


# ---- the giver ---------------------------------------------------------------------------


def _make_sealed(rule: GameRule, gift: _Gift) -> Body:
    made = rule._made.pop(rule.step_no, None)
    rule._made.clear()
    if made is not None and made[0] is gift:
        return made[1]
    return _sealing(rule, gift)()


def _premake_sealed(rule: GameRule, gift: _Gift) -> Job:
    """The gift's padded proof and box made in a worker thread (the worst-case
    statement costs the same for every gift: docs/design.md, the Slave gift)."""
    step, seal = rule.step_no, _sealing(rule, gift)

    def job() -> Callable[[], None]:
        body_ = seal()

        def keep() -> None:
            if rule.step_no == step:
                rule._made[step] = (gift, body_)

        return keep

    return job


def _sealing(rule: GameRule, gift: _Gift) -> Callable[[], Body]:
    """Capture on the loop thread everything our gift needs, and return the pure,
    expensive rest (tokens, the padded inequality proof, the box)."""
    mine = rule.mine
    assert mine is not None
    st, need_tok = gift.st, gift.need_tok
    ctx = rule._ctx(mine.seat, gift.step)
    pub = rule.pubs[mine.seat]
    to_open = [rule.cts[h] for h in need_tok]
    key = ORDERS[st.order]
    low = min(key(rule._face(k)) for k in my_indices(rule, st.given))
    forbidden = rule._indices(lambda f: key(f) >= low)
    forged = rule._cheat("highest", st, forbidden)
    if forged is not None:
        forbidden = forged
    filler = gift.pad_with if gift.pad_with in forbidden else min(forbidden)
    held = held_cards(rule, mine.seat, st.rest)
    secret, mine_rest, deck = mine.secret, my_indices(rule, st.rest), rule.deck
    receiver = rule.manifest.seats[rule.order[st.verifier]].seal_key
    ctx_bytes = seal_context(rule, gift.step, mine.seat, st.verifier)
    box_secret = _box_secret(rule, gift)

    def seal() -> Body:
        tokens, dleq = make_tokens(secret, pub, to_open, ctx) if to_open else ([], None)
        try:
            proof = prove_none_of(
                secret,
                pub,
                held,
                mine_rest,
                forbidden,
                deck,
                ctx,
                pad_to=gift.pad_to,
                pad_with=filler,
            )
        except (InvalidProof, InvalidEncoding) as exc:
            raise LocalProtocolError(f"we cannot prove our gift is our highest: {exc}") from exc
        parts = b"".join(t.data for t in tokens) + (dleq.encode() if dleq is not None else b"")
        plain = parts + proof.encode()
        plain += bytes(gift.plain_bytes - len(plain))
        forged_plain = rule._cheat("seal", plain)
        if forged_plain is not None:
            plain = forged_plain
        return SealedProofBody(seal_openable(receiver, plain, ctx_bytes, box_secret))

    return seal


def _make_unseal(rule: GameRule, gift: _Gift) -> Body:
    key = _box_key(rule, gift)
    forged = rule._cheat("unseal", key)
    return UnsealBody(forged if forged is not None else key)


# ---- the receiver, and anyone after a complaint ----------------------------------------------


def _verify_gift(rule: GameRule, gift: _Gift, plain: bytes) -> dict[int, int]:
    """Check a gift's opened plaintext; return the given cards' indices."""
    given, check = _read_gift(rule, gift, plain)
    check()
    rule.proofs_checked += 1
    return given


def _read_gift(
    rule: GameRule, gift: _Gift, plain: bytes
) -> tuple[dict[int, int], Callable[[], None]]:
    """Read a gift's opened plaintext: the given cards' indices, and the check of its
    padded inequality proof (the costly part; pure, so it may run in a worker thread).

    Layout (every size fixed by public facts): the giver's reveal tokens for the
    given cards whose token is not yet public, their DLEQ proof (absent if there
    are none), the padded inequality proof, then zero bytes up to the fixed size."""
    st, need_tok = gift.st, gift.need_tok
    p = st.seat
    if len(plain) != gift.plain_bytes:
        raise InvalidEncoding(f"a gift must be {gift.plain_bytes} bytes, not {len(plain)}")
    n_tok = POINT_BYTES * len(need_tok)
    n_dleq = PROOF_BYTES if need_tok else 0
    n_proof = inequality_proof_size(len(st.rest), gift.pad_to)
    toks = plain[:n_tok]
    dleq = plain[n_tok : n_tok + n_dleq]
    proof_b = plain[n_tok + n_dleq : n_tok + n_dleq + n_proof]
    if any(plain[n_tok + n_dleq + n_proof :]):
        raise InvalidEncoding("a gift's padding must be zero bytes")
    ctx = rule._ctx(p, gift.step)
    own: dict[int, Point] = {}
    if need_tok:
        tokens = decode_points(toks, len(need_tok))
        cts = [rule.cts[h] for h in need_tok]
        verify_tokens(rule.pubs[p], cts, tokens, DleqProof.decode(dleq), ctx)
        own = dict(zip(need_tok, tokens, strict=True))
    given = {}
    for h in st.given:
        tok = own.get(h) or rule.ptok[h][p]
        others = [rule.ptok[h][s] for s in range(rule.n) if s != p]
        given[h] = rule._open(h, [*others, tok])
    key = ORDERS[st.order]
    low = min(key(rule._face(k)) for k in given.values())
    forbidden = rule._indices(lambda f: key(f) >= low)
    held = held_cards(rule, p, st.rest)
    proof = InequalityProof.decode(proof_b, len(st.rest), gift.pad_to)
    pub, deck, pad_to, pad_with = rule.pubs[p], rule.deck, gift.pad_to, gift.pad_with

    def check() -> None:
        verify_none_of(pub, held, forbidden, deck, proof, ctx, pad_to=pad_to, pad_with=pad_with)

    return given, check


def _pre_judge(rule: GameRule, gift: _Gift, b: SealedProofBody) -> Job | None:
    """For the gift's receiver: open the box and read it now (cheap), and check its
    padded proof (the worst case for every gift, so costly) in a worker thread; the fold
    then takes the verdict for this very body.  Anything that fails here is left to the
    fold, which judges the gift itself."""
    mine, st, step = rule.mine, gift.st, rule.step_no
    if mine is None or mine.seat != st.verifier:
        return None
    if not isinstance(b, SealedProofBody) or len(b.sealed) != openable_size(gift.plain_bytes):
        return None
    try:
        plain = open_openable(
            mine.keys.seal, b.sealed, seal_context(rule, gift.step, st.seat, mine.seat)
        )
        given, check = _read_gift(rule, gift, plain)
    except (CryptoError, ValueError, TypeError, KeyError):
        return None

    def job() -> Callable[[], None]:
        check()
        return lambda: rule._keep_ahead((SEALED_KIND, st.seat, step), (b, given))

    return job


def _judge_sealed(
    rule: GameRule, gift: _Gift, sealed: bytes, judged: dict[int, int] | None = None
) -> VerdictBody:
    """Our verdict on a gift sealed to us (we are the verifier); ``judged``: the given
    cards of this very box, read and checked ahead by :func:`_pre_judge`."""
    mine = rule.mine
    assert mine is not None
    st = gift.st
    if judged is not None:
        given = judged
        rule.proofs_checked += 1
        mine.known.update(given)
        verdict = VerdictBody(True)
    else:
        try:
            plain = open_openable(
                mine.keys.seal, sealed, seal_context(rule, gift.step, st.seat, mine.seat)
            )
            given = _verify_gift(rule, gift, plain)
        except (CryptoError, ValueError, TypeError, KeyError):
            verdict = VerdictBody(False)
        else:
            mine.known.update(given)
            verdict = VerdictBody(True)
    forged = rule._cheat("verdict", verdict)
    return forged if forged is not None else verdict


def _make_verdict(rule: GameRule) -> Body:
    mine = rule.mine
    if mine is None or mine.verdict is None:
        raise LocalProtocolError("we owe a verdict on a gift we never received")
    return mine.verdict


def _judge_unsealed(
    rule: GameRule, gift: _Gift, box: bytes, verdict_step: int, b: UnsealBody
) -> tuple[int, str]:
    """Open a disputed gift box with the key its giver shows: ``(engine seat proven at
    fault, why)``.  A key that is not the box's own raises (the giver's entry is false)."""
    st = gift.st
    p, v = st.seat, st.verifier
    if shown_key_public(b.key) != openable_ephemeral(box):
        raise InvalidEncoding("the key shown is not the one-time key of its gift box")
    receiver = rule.manifest.seats[rule.order[v]].seal_key
    try:
        plain = open_with_shown_key(b.key, receiver, box, seal_context(rule, gift.step, p, v))
        _verify_gift(rule, gift, plain)
    except (CryptoError, ValueError, TypeError, KeyError) as exc:
        return p, (
            f"its sealed gift of step {gift.step} is false (its box, opened with the key it"
            f" showed after the receiver's complaint): {exc}"
        )
    return v, (
        f"false complaint at step {verdict_step}: the gift sealed at step {gift.step}"
        " opens and proves that the cards given are the giver's highest"
    )
