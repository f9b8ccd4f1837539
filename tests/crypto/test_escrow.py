"""Tests for crypto.escrow: Feldman sharing of a key share, sealed shares and complaints,
token shares for an absent seat, and their combination (docs/design.md, "Surviving a lost
player")."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crypto.deck import deck_points
from crypto.dleq import DleqProof
from crypto.elgamal import Ciphertext, mask
from crypto.errors import DeckMismatch, InvalidEncoding, InvalidPoint, InvalidProof
from crypto.escrow import (
    SHARE_BOX_BYTES,
    BadShare,
    EscrowDeal,
    TokenShares,
    check_shown_share,
    combine_token_shares,
    complaint_key,
    eval_point,
    judge_complaint,
    lagrange_at_zero,
    make_deal,
    make_token_shares,
    open_share,
    public_shares,
    receivers,
    recover_key_share,
    verify_token_shares,
)
from crypto.group import (
    COUNTERS,
    G,
    L,
    add,
    base_mul,
    hash_to_point,
    mul,
    random_scalar,
    scalar_to_bytes,
)
from crypto.keys import joint_key
from crypto.reveal import make_token, reveal_index, unmask
from crypto.seal import SealKey, seal_openable
from crypto.transcript import Context
from tests.crypto._helpers import SMALL_ORDER, other_contexts

TABLE = b"escrow-table"
DECK = deck_points(52)


class Table:
    """``n`` seats with key shares, per-table seal keys and box secrets, and seat
    ``dealer``'s escrow deal (made at step 3)."""

    def __init__(self, n: int = 4, dealer: int = 1, coefficients=None) -> None:
        self.n, self.dealer = n, dealer
        self.secrets = [random_scalar() for _ in range(n)]
        self.publics = [base_mul(x) for x in self.secrets]
        self.pk = joint_key(self.publics)
        self.seals = [SealKey.generate() for _ in range(n)]
        self.box_secret = bytes(range(32))
        self.ctx = Context(TABLE, 1, 3, dealer)
        self.deal = make_deal(
            self.secrets[dealer],
            n,
            self.ctx,
            {i: k.public for i, k in enumerate(self.seals)},
            self.box_secret,
            _coefficients=coefficients,
        )
        self.public = public_shares(self.deal, self.publics[dealer])
        self.shares = {
            i: open_share(self.seals[i], self.deal, self.public, i, self.ctx)
            for i in receivers(n, dealer)
        }

    def card(self, index: int = 7) -> Ciphertext:
        return mask(DECK.point(index), self.pk)[0]

    def token_ctx(self, seat: int, step: int = 40) -> Context:
        return Context(TABLE, 1, step, seat)


@pytest.fixture(scope="module")
def table() -> Table:
    return Table()


# ---- correctness ------------------------------------------------------------------------


def test_every_share_opens_and_matches_the_commitments(table):
    assert set(table.shares) == {0, 2, 3}
    for i, s in table.shares.items():
        assert base_mul(s) == table.public.share_public(i)
    # the shares lie on one polynomial of degree n-2 whose value at 0 is the key share
    lam = lagrange_at_zero(table.n, table.dealer)
    assert sum(lam[i] * s for i, s in table.shares.items()) % L == table.secrets[table.dealer]


def test_absent_seat_tokens_open_a_card_as_its_own_would(table):
    cts = [table.card(i) for i in (3, 17, 51)]
    got = {}
    for i, s in table.shares.items():
        ts = make_token_shares(s, table.public, cts, table.token_ctx(i))
        verify_token_shares(table.public, cts, ts, table.token_ctx(i))
        got[i] = ts.tokens
    combined = combine_token_shares(table.public, got)
    for ct, tok, index in zip(cts, combined, (3, 17, 51), strict=True):
        own = make_token(table.secrets[table.dealer], table.publics[table.dealer], ct, table.ctx)
        assert tok == own.token  # the very token the absent seat would have published
        others = [mul(x, ct.c1) for j, x in enumerate(table.secrets) if j != table.dealer]
        assert reveal_index(unmask(ct, [*others, tok]), DECK) == index


@settings(max_examples=8, deadline=None)
@given(n=st.integers(min_value=3, max_value=6), data=st.data())
def test_sharing_and_combination_hold_for_any_table(n, data):
    dealer = data.draw(st.integers(min_value=0, max_value=n - 1))
    coeffs = data.draw(
        st.lists(st.integers(min_value=1, max_value=L - 1), min_size=n - 2, max_size=n - 2)
    )
    t = Table(n, dealer, coeffs)
    ct = t.card(data.draw(st.integers(min_value=0, max_value=51)))
    parts = {i: [mul(s, ct.c1)] for i, s in t.shares.items()}
    assert combine_token_shares(t.public, parts) == [mul(t.secrets[dealer], ct.c1)]


# ---- threshold -------------------------------------------------------------------------------


@settings(max_examples=10, deadline=None)
@given(
    n=st.integers(min_value=3, max_value=7),
    data=st.data(),
    target=st.integers(min_value=1, max_value=L - 1),
)
def test_any_n_minus_2_shares_are_consistent_with_every_token(n, data, target):
    """Whatever ``n - 2`` seats hold, every value of the absent key share (so every token)
    fits them: the one missing share can always be chosen to make it come out."""
    dealer = data.draw(st.integers(min_value=0, max_value=n - 1))
    rs = receivers(n, dealer)
    missing = data.draw(st.sampled_from(rs))
    shares = {i: data.draw(st.integers(min_value=1, max_value=L - 1)) for i in rs}
    del shares[missing]
    lam = lagrange_at_zero(n, dealer)
    # f(0) = sum lam_i s_i: solve for the missing share that gives f(0) = target
    rest = sum(lam[i] * s for i, s in shares.items()) % L
    forged = (target - rest) * pow(lam[missing], -1, L) % L
    assert (rest + lam[missing] * forged) % L == target
    # the same in the exponent, on a real card: the token shares combine to target * c1
    ct = mask(DECK.point(5), base_mul(7))[0]
    if forged == 0:
        return  # (probability 1/L) a zero share has no token
    full = {i: mul(s, ct.c1) for i, s in shares.items()}
    full[missing] = mul(forged, ct.c1)
    acc = None
    for i in rs:
        term = mul(lam[i], full[i])
        acc = term if acc is None else add(acc, term)
    assert acc == mul(target, ct.c1)


def test_fewer_than_all_token_shares_do_not_combine(table):
    ct = table.card()
    parts = {i: [mul(s, ct.c1)] for i, s in table.shares.items()}
    for i in list(parts):
        fewer = {j: v for j, v in parts.items() if j != i}
        with pytest.raises(InvalidEncoding, match="all of"):
            combine_token_shares(table.public, fewer)
    with pytest.raises(InvalidEncoding):
        combine_token_shares(table.public, {**parts, table.dealer: parts[0]})


def test_escrow_needs_three_seats():
    with pytest.raises(InvalidEncoding, match="3-"):
        make_deal(5, 2, Context(TABLE, 1, 3, 0), {1: SealKey.generate().public}, bytes(32))
    with pytest.raises(InvalidEncoding):
        receivers(4, 4)


# ---- complaints ---------------------------------------------------------------------------


def _bad_deal(t: Table, receiver: int, plain: bytes, *, secret: bytes | None = None):
    """``t``'s deal with ``receiver``'s box replaced by one holding ``plain``."""
    from crypto.escrow import share_context

    ad = share_context(t.ctx, receiver, t.deal.commitments)
    box = seal_openable(t.seals[receiver].public, plain, ad, secret or t.box_secret)
    boxes = list(t.deal.boxes)
    boxes[receivers(t.n, t.dealer).index(receiver)] = box
    return dataclasses.replace(t.deal, boxes=tuple(boxes))


def test_a_bad_share_is_refused_and_the_dealer_convicted(table):
    t, r = table, 2
    wrong = (t.shares[r] + 1).to_bytes(32, "little")
    deal = _bad_deal(t, r, wrong)
    with pytest.raises(BadShare, match="does not match"):
        open_share(t.seals[r], deal, t.public, r, t.ctx)
    key = complaint_key(t.box_secret, deal, r, t.ctx)
    v = judge_complaint(deal, t.public, r, t.seals[r].public, key, t.ctx)
    assert v.culprit == t.dealer and "bad share" in v.reason
    # junk that is not a scalar
    for junk in (bytes(32), (L).to_bytes(32, "little"), b"\xff" * 32):
        deal = _bad_deal(t, r, junk)
        with pytest.raises(BadShare):
            open_share(t.seals[r], deal, t.public, r, t.ctx)
        key = complaint_key(t.box_secret, deal, r, t.ctx)
        v = judge_complaint(deal, t.public, r, t.seals[r].public, key, t.ctx)
        assert v.culprit == t.dealer, junk


def test_a_false_complaint_convicts_the_complainer(table):
    t, r = table, 3
    key = complaint_key(t.box_secret, t.deal, r, t.ctx)
    v = judge_complaint(t.deal, t.public, r, t.seals[r].public, key, t.ctx)
    assert v.culprit == r and v.share == t.shares[r] and "false complaint" in v.reason


def test_a_dealer_that_shows_a_wrong_key_or_sealed_elsewhere_is_convicted(table):
    t, r = table, 0
    good = complaint_key(t.box_secret, t.deal, r, t.ctx)
    for key in (complaint_key(t.box_secret, t.deal, 2, t.ctx), bytes(32), b"x"):
        v = judge_complaint(t.deal, t.public, r, t.seals[r].public, key, t.ctx)
        assert v.culprit == t.dealer, key
    # a box sealed to another seat's key does not open with the receiver's
    from crypto.escrow import share_context

    ad = share_context(t.ctx, r, t.deal.commitments)
    box = seal_openable(t.seals[2].public, t.shares[r].to_bytes(32, "little"), ad, t.box_secret)
    deal = dataclasses.replace(t.deal, boxes=(box, *t.deal.boxes[1:]))
    with pytest.raises(InvalidProof):
        open_share(t.seals[r], deal, t.public, r, t.ctx)
    v = judge_complaint(deal, t.public, r, t.seals[r].public, good, t.ctx)
    assert v.culprit == t.dealer and "does not open" in v.reason


def test_a_share_box_belongs_to_its_context(table):
    t = table
    for ctx in other_contexts(t.ctx)[:3]:  # table, game, step (the seat is the dealer)
        with pytest.raises(InvalidProof):
            open_share(t.seals[0], t.deal, t.public, 0, ctx.with_seat(t.dealer))
    with pytest.raises(InvalidEncoding):  # the context of another dealer
        open_share(t.seals[0], t.deal, t.public, 0, t.ctx.with_seat(2))
    # another receiver's box
    boxes = (t.deal.boxes[1], t.deal.boxes[0], t.deal.boxes[2])
    with pytest.raises(InvalidProof):
        open_share(t.seals[0], dataclasses.replace(t.deal, boxes=boxes), t.public, 0, t.ctx)


# ---- tampering and validation ------------------------------------------------------------


def test_tampering_with_any_field_of_a_deal_is_refused(table):
    t = table
    # commitments: a changed commitment changes every public share, and the boxes' context
    other = dataclasses.replace(t.deal, commitments=(hash_to_point(b"c"), t.deal.commitments[1]))
    pub = public_shares(other, t.publics[t.dealer])
    for i in receivers(t.n, t.dealer):
        with pytest.raises(InvalidProof):
            open_share(t.seals[i], other, pub, i, t.ctx)
    # the dealer's key share (C_0): the shares no longer match
    pub = public_shares(t.deal, t.publics[0])
    for i in receivers(t.n, t.dealer):
        with pytest.raises(BadShare):
            open_share(t.seals[i], t.deal, pub, i, t.ctx)
    # each byte region of each box
    for k in range(t.n - 1):
        for pos in (0, 1, 40, SHARE_BOX_BYTES - 1):
            box = bytearray(t.deal.boxes[k])
            box[pos] ^= 1
            boxes = list(t.deal.boxes)
            boxes[k] = bytes(box)
            r = receivers(t.n, t.dealer)[k]
            try:
                deal = dataclasses.replace(t.deal, boxes=tuple(boxes))
            except InvalidEncoding:
                continue  # the version byte or the one-time key no longer decodes
            with pytest.raises((InvalidProof, InvalidEncoding)):
                open_share(t.seals[r], deal, t.public, r, t.ctx)
    # the dealer and seat count fields
    with pytest.raises((InvalidEncoding, DeckMismatch)):
        dataclasses.replace(t.deal, n=5)
    with pytest.raises(InvalidEncoding):
        open_share(t.seals[0], dataclasses.replace(t.deal, dealer=2), t.public, 0, t.ctx)


def test_deal_encoding_roundtrips_and_refuses_bad_points(table):
    t = table
    b = t.deal.encode()
    assert EscrowDeal.decode(b, t.n, t.dealer) == t.deal
    for bad in SMALL_ORDER + [b"\xff" * 32]:
        with pytest.raises(InvalidPoint):
            EscrowDeal.decode(bad + b[32:], t.n, t.dealer)
    for cut in (b[:-1], b + b"\0", b""):
        with pytest.raises(InvalidEncoding):
            EscrowDeal.decode(cut, t.n, t.dealer)
    # a box whose one-time key has small order is refused before anyone tries it
    box = bytes([2]) + SMALL_ORDER[0] + t.deal.boxes[0][33:]
    with pytest.raises(InvalidPoint):
        dataclasses.replace(t.deal, boxes=(box, *t.deal.boxes[1:]))
    with pytest.raises(DeckMismatch):
        dataclasses.replace(t.deal, commitments=t.deal.commitments[:1])
    with pytest.raises(InvalidPoint):
        dataclasses.replace(t.deal, commitments=(b"\0" * 32, t.deal.commitments[1]))


def test_secrets_and_coefficients_are_checked():
    seals = {i: SealKey.generate().public for i in range(4)}
    ctx = Context(TABLE, 1, 3, 0)
    for bad in (0, L, -1, 1.5):
        with pytest.raises(InvalidEncoding):
            make_deal(bad, 4, ctx, seals, bytes(32))
        with pytest.raises(InvalidEncoding):
            make_deal(5, 4, ctx, seals, bytes(32), _coefficients=[bad, 3])
    with pytest.raises(InvalidPoint):
        make_deal(5, 4, ctx, {**seals, 2: SMALL_ORDER[0]}, bytes(32))


def _token_fixture(t: Table, prover: int = 2):
    cts = [t.card(i) for i in (1, 2, 3)]
    ctx = t.token_ctx(prover)
    return cts, ctx, make_token_shares(t.shares[prover], t.public, cts, ctx)


def test_tampering_with_any_field_of_token_shares_is_refused(table):
    t = table
    cts, ctx, ts = _token_fixture(t)
    verify_token_shares(t.public, cts, ts, ctx)
    # each token
    for k in range(len(ts.tokens)):
        toks = list(ts.tokens)
        toks[k] = mul(t.shares[2] + 1, cts[k].c1)
        with pytest.raises(InvalidProof, match="seat 2 for absent seat 1"):
            verify_token_shares(t.public, cts, TokenShares(tuple(toks), ts.proof), ctx)
    # each scalar of the proof
    for name in ("c", "s"):
        proof = dataclasses.replace(ts.proof, **{name: (getattr(ts.proof, name) + 1) % L})
        with pytest.raises(InvalidProof):
            verify_token_shares(t.public, cts, TokenShares(ts.tokens, proof), ctx)
    with pytest.raises(InvalidProof):
        verify_token_shares(t.public, cts, TokenShares(ts.tokens, DleqProof(0, 0)), ctx)
    # each ciphertext point, the order of the cards, their number
    other = hash_to_point(b"o")
    for k in range(len(cts)):
        for bad_ct in (Ciphertext(other, cts[k].c2), Ciphertext(cts[k].c1, other)):
            bad = list(cts)
            bad[k] = bad_ct
            with pytest.raises(InvalidProof):
                verify_token_shares(t.public, bad, ts, ctx)
    with pytest.raises(InvalidProof):
        verify_token_shares(t.public, [cts[1], cts[0], cts[2]], ts, ctx)
    with pytest.raises(DeckMismatch):
        verify_token_shares(t.public, cts[:2], ts, ctx)
    # every field of the context, and of the public statement
    for c in other_contexts(ctx):
        with pytest.raises((InvalidProof, InvalidEncoding)):
            verify_token_shares(t.public, cts, ts, c)
    for change in (
        {"dealer_public": t.publics[0]},
        {"commitments": (t.deal.commitments[1], t.deal.commitments[0])},
        {"dealer": 3},
    ):
        with pytest.raises(InvalidProof):
            verify_token_shares(dataclasses.replace(t.public, **change), cts, ts, ctx)
    with pytest.raises(DeckMismatch):
        dataclasses.replace(t.public, n=5)
    # a public share that is not the one the commitments give
    moved = dataclasses.replace(t.public)
    moved.share_publics[2] = t.public.share_public(3)
    with pytest.raises(InvalidProof):
        verify_token_shares(moved, cts, ts, ctx)
    # the absent seat proves nothing for itself
    with pytest.raises(InvalidEncoding):
        make_token_shares(t.shares[2], t.public, cts, t.token_ctx(t.dealer))


def test_a_proof_with_the_real_share_for_a_wrong_token_is_refused(table):
    """A seat that knows its share still cannot prove a different token share."""
    from crypto.dleq import prove_dleq_batch
    from crypto.escrow import _token_transcript

    t = table
    cts, ctx, ts = _token_fixture(t)
    cheat = (mul(t.shares[2] + 5, cts[0].c1), *ts.tokens[1:])
    tr, y = _token_transcript(t.public, cts, ctx)
    proof = prove_dleq_batch(t.shares[2], G, [ct.c1 for ct in cts], y, list(cheat), tr)
    with pytest.raises(InvalidProof):
        verify_token_shares(t.public, cts, TokenShares(cheat, proof), ctx)


def test_token_shares_encoding_refuses_bad_points_and_scalars(table):
    cts, ctx, ts = _token_fixture(table)
    b = ts.encode()
    assert TokenShares.decode(b, 3) == ts
    for bad in SMALL_ORDER:
        with pytest.raises(InvalidPoint):
            TokenShares.decode(bad + b[32:], 3)
    with pytest.raises(InvalidEncoding):  # an unreduced proof scalar
        TokenShares.decode(b[:-32] + (L).to_bytes(32, "little"), 3)
    for cut in (b[:-1], b + b"\0"):
        with pytest.raises(InvalidEncoding):
            TokenShares.decode(cut, 3)
    with pytest.raises(InvalidEncoding):
        TokenShares.decode(b, 0)


def test_combination_checks_the_public_shares_against_the_key_share(table):
    t = table
    ct = t.card()
    parts = {i: [mul(s, ct.c1)] for i, s in t.shares.items()}
    combine_token_shares(t.public, parts)
    moved = dataclasses.replace(t.public)
    moved.share_publics[0] = t.public.share_public(2)
    with pytest.raises(InvalidProof, match="interpolate"):
        combine_token_shares(moved, parts)
    with pytest.raises(DeckMismatch):
        combine_token_shares(t.public, {**parts, 0: []})


# ---- costs ------------------------------------------------------------------------------------


def test_operation_counts():
    n, m = 5, 4
    COUNTERS.reset()
    t = Table(n, 0)
    # the key round's extra work: commitments, and each receiver's own public share and check
    assert COUNTERS.base_mul == n + (n - 2) + (n - 1)  # key shares, commitments, checks
    assert COUNTERS.mul == (n - 1) * (n - 2)
    COUNTERS.reset()
    for i in receivers(n, 0):  # computed once: nothing more to pay
        t.public.share_public(i)
    assert COUNTERS.mul == 0
    cts = [t.card(i) for i in range(m)]
    COUNTERS.reset()
    ts = make_token_shares(t.shares[1], t.public, cts, t.token_ctx(1))
    assert (COUNTERS.base_mul, COUNTERS.mul, COUNTERS.add) == (1, 2 * m + 1, m - 1)
    COUNTERS.reset()
    verify_token_shares(t.public, cts, ts, t.token_ctx(1))
    assert (COUNTERS.base_mul, COUNTERS.mul, COUNTERS.add) == (1, 2 * m + 1, 2 * m)
    parts = {i: [mul(s, ct.c1) for ct in cts] for i, s in t.shares.items()}
    COUNTERS.reset()
    combine_token_shares(t.public, parts)
    assert (COUNTERS.mul, COUNTERS.add) == ((n - 1) * (m + 1), (n - 2) * (m + 1))


def test_eval_points_are_never_zero():
    assert [eval_point(s) for s in range(4)] == [1, 2, 3, 4]


# ---- shown shares (hands opened after the game) ------------------------------------------


def test_shown_shares_rebuild_the_key_share_of_the_seat_that_left(table):
    shown = {
        i: check_shown_share(table.public, i, scalar_to_bytes(s)) for i, s in table.shares.items()
    }
    assert recover_key_share(table.public, shown) == table.secrets[table.dealer]


@pytest.mark.parametrize("how", ["bit-flip", "negated", "other-seat", "other-scalar"])
def test_a_false_shown_share_is_refused(table, how):
    i = 2
    s = table.shares[i]
    false = {
        "bit-flip": scalar_to_bytes(s ^ 1),
        "negated": scalar_to_bytes(L - s),
        "other-seat": scalar_to_bytes(table.shares[0]),
        "other-scalar": scalar_to_bytes(random_scalar()),
    }[how]
    with pytest.raises(BadShare, match="does not match"):
        check_shown_share(table.public, i, false)


@pytest.mark.parametrize(
    "raw", [bytes(32), (L + 5).to_bytes(32, "little"), b"\xff" * 32, bytes(31), bytes(33)]
)
def test_a_shown_share_that_is_no_scalar_is_refused(table, raw):
    with pytest.raises(InvalidEncoding):
        check_shown_share(table.public, 2, raw)


def test_the_dealer_itself_shows_no_share(table):
    with pytest.raises(InvalidEncoding, match="holds no share"):
        check_shown_share(table.public, table.dealer, scalar_to_bytes(table.secrets[1]))


def test_recovery_needs_every_other_seats_share_and_checks_the_result(table):
    shares = dict(table.shares)
    with pytest.raises(InvalidEncoding, match="all of"):
        recover_key_share(table.public, {i: s for i, s in shares.items() if i != 0})
    shares[3] = (shares[3] + 1) % L  # not checked one by one: the result is off
    with pytest.raises(InvalidProof, match="do not interpolate"):
        recover_key_share(table.public, shares)
