"""Key escrow for a table that survives a lost player (issue 21): Feldman verifiable
secret sharing of a seat's key share, and token shares that act for an absent seat.

Every hidden card needs every seat's reveal token ``x_j c1`` (:mod:`crypto.reveal`),
so a seat that is gone for good would stop the table.  With escrow each seat ``j``
(the *dealer* here) shares its key share ``x_j`` among the ``n - 1`` other seats with
threshold ``n - 1``: all of them together can make ``j``'s tokens, and no smaller
group learns anything about ``x_j`` beyond ``PK_j = x_j G`` (which is public anyway).

**Sharing** (Feldman, "A practical scheme for non-interactive verifiable secret
sharing", FOCS 1987).  The dealer draws a polynomial
``f(z) = x_j + a_1 z + ... + a_{n-2} z^{n-2}`` (degree ``n - 2``, so ``n - 1`` points
fix it), each ``a_k`` 64 bytes from :mod:`secrets` reduced mod L, and publishes the
commitments ``C_k = a_k G`` for ``k = 1 .. n-2``; ``C_0`` is ``PK_j`` itself, already
published with a Schnorr proof in the key round (:mod:`crypto.keys`).  Seat ``i``
gets the share ``s_i = f(i + 1)`` (the evaluation point of seat ``i`` is ``i + 1``,
never 0), sealed to its per-table seal key in an openable box (:mod:`crypto.seal`,
as the Slave gift does) whose associated data names the table, game, step, dealer,
receiver and the commitments.  Anyone computes seat ``i``'s *public share*
``Y_i = sum_k (i+1)^k C_k = s_i G`` from the commitments, and the receiver checks
``s_i G == Y_i``.

**Complaints.**  A receiver whose share does not open or does not match complains in
public; the dealer must show the box's one-time key (:func:`complaint_key`, derived
from its per-table secret, so it survives a crash), and anyone opens the box exactly as
the receiver could (:func:`judge_complaint`): a key that is not the box's, a box that
does not open, a plaintext that is not a scalar, or a share off the commitments
convicts the dealer; a share that matches convicts the complainer.  A complaint makes
that one share public, as a gift complaint makes the gift public; the dispute ends
the table with a conviction either way.  A receiver that accepts its share vouches for
it: if it later cannot prove a token share against ``Y_i``, the fault is its own.

**Token shares** (Chaum and Pedersen, "Wallet databases with observers", CRYPTO 1992).
For cards that still need the absent seat ``j``'s token, every other seat ``i``
publishes ``T_i = s_i c1`` for each card with one batched DLEQ proof
``log_G Y_i == log_c1 T_i`` (:mod:`crypto.dleq`), its Fiat-Shamir transcript bound to
the whole statement (absent seat, seat count, ``PK_j``, every commitment, the
receiver's evaluation point and public share, every ciphertext) and the context
(table, game, step, proving seat).  :func:`combine_token_shares` interpolates in the
exponent: with Lagrange coefficients ``lambda_i`` at 0 over the evaluation points of
the ``n - 1`` other seats, ``sum_i lambda_i T_i = f(0) c1 = x_j c1``, the very token
``j`` would have published.  It first checks ``sum_i lambda_i Y_i == PK_j`` (the
public shares interpolate to ``j``'s key share), so proven token shares can only
combine to ``j``'s true token.

**Threshold.**  Any ``n - 2`` shares leave ``x_j`` free: for every value ``x'`` there
is exactly one polynomial of degree ``n - 2`` through those shares with ``f(0) = x'``,
so every token ``x' c1`` is as consistent with them as the true one.  Only
``C_1 .. C_{n-2}`` and ``PK_j`` are public, which hide the scalars under the discrete
logarithm assumption.  The cost, said plainly: with escrow on, all the other seats
together could open a seat's cards.

Operation counts (n seats; ``m`` cards):

* :func:`make_deal`: ``n - 2`` base (commitments); scalar arithmetic for the shares.
* :meth:`EscrowPublic.share_public`: ``n - 2`` mul + ``n - 2`` add, once per receiver
  (all of them: ``(n-1)(n-2)`` mul, paid only when a seat is absent).
* :func:`open_share`: 1 base (the check) + the receiver's own ``Y_i``.
* :func:`make_token_shares`: 1 base + 2m+1 mul + m-1 add (as :func:`crypto.reveal.make_tokens`).
* :func:`verify_token_shares`: 1 base + 2m+1 mul + 2m add.
* :func:`combine_token_shares`: ``n - 1`` mul + ``n - 2`` add for the check against
  ``PK_j``, then ``(n-1) m`` mul + ``(n-2) m`` add.
* :func:`check_shown_share`: 1 base + the seat's ``Y_i``; :func:`recover_key_share`:
  scalar arithmetic + 1 base.

**Shown shares** (hands opened after the game, option ``open_hands``).  Once every seat
publishes its key share at the end, the escrow's secrecy has nothing left to guard, so
for a seat that left, every other seat shows its share ``s_i`` itself; anyone checks
``s_i G == Y_i`` (:func:`check_shown_share`) and interpolates ``x_j = sum_i lambda_i
s_i``, then checks ``x_j G == PK_j`` (:func:`recover_key_share`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from crypto.dleq import PROOF_BYTES, DleqProof, prove_dleq_batch, verify_dleq_batch
from crypto.elgamal import Ciphertext
from crypto.errors import DeckMismatch, InvalidEncoding, InvalidPoint, InvalidProof
from crypto.group import (
    POINT_BYTES,
    SCALAR_BYTES,
    G,
    L,
    Point,
    add,
    base_mul,
    check_scalar,
    mul,
    random_scalar,
    scalar_from_bytes,
    scalar_to_bytes,
)
from crypto.seal import (
    SealKey,
    check_seal_key,
    open_openable,
    open_with_shown_key,
    openable_ephemeral,
    openable_key,
    openable_size,
    seal_openable,
    shown_key_public,
)
from crypto.transcript import Context, Transcript

MIN_SEATS = 3
"""Escrow needs at least 3 seats: with 2, the one other seat alone could act for you."""
MAX_SEATS = 64
TOKEN_SHARES_PROTOCOL = "slaiga/v1/escrow-token-shares"
SHARE_BOX_BYTES = openable_size(SCALAR_BYTES)
_SEAL_DOMAIN = b"slaiga/v1/escrow/share"


class BadShare(InvalidProof):
    """A share that does not open or does not match the dealer's commitments."""


def _check_table(n: int, dealer: int) -> None:
    if type(n) is not int or not MIN_SEATS <= n <= MAX_SEATS:
        raise InvalidEncoding(f"escrow needs {MIN_SEATS}-{MAX_SEATS} seats, got {n!r}")
    if type(dealer) is not int or not 0 <= dealer < n:
        raise InvalidEncoding(f"seat {dealer!r} is not a seat of a {n}-seat table")


def eval_point(seat: int) -> int:
    """Seat ``seat``'s evaluation point of every sharing polynomial (never 0)."""
    return seat + 1


def receivers(n: int, dealer: int) -> tuple[int, ...]:
    """The seats that hold a share of ``dealer``'s key share, ascending."""
    _check_table(n, dealer)
    return tuple(s for s in range(n) if s != dealer)


def lagrange_at_zero(n: int, absent: int) -> dict[int, int]:
    """``lambda_i`` with ``f(0) = sum_i lambda_i f(i + 1)`` over the seats other than
    ``absent``, for every polynomial of degree ``n - 2``."""
    seats = receivers(n, absent)
    out = {}
    for i in seats:
        xi, num, den = eval_point(i), 1, 1
        for m in seats:
            if m != i:
                xm = eval_point(m)
                num = num * xm % L
                den = den * (xm - xi) % L
        out[i] = num * pow(den, -1, L) % L
    return out


@dataclass(frozen=True, slots=True)
class EscrowDeal:
    """What a dealer publishes: its commitments ``C_1 .. C_{n-2}`` and one sealed share
    per other seat, in ascending seat order."""

    dealer: int
    n: int
    commitments: tuple[Point, ...]
    boxes: tuple[bytes, ...]

    def __post_init__(self) -> None:
        _check_table(self.n, self.dealer)
        if len(self.commitments) != self.n - 2:
            raise DeckMismatch(f"{len(self.commitments)} commitments for a {self.n}-seat table")
        if not all(isinstance(c, Point) for c in self.commitments):
            raise InvalidPoint("an escrow commitment must be a Point")
        if len(self.boxes) != self.n - 1:
            raise DeckMismatch(f"{len(self.boxes)} share boxes for {self.n - 1} receivers")
        for box in self.boxes:
            if type(box) is not bytes or len(box) != SHARE_BOX_BYTES:
                raise InvalidEncoding(f"a share box must be {SHARE_BOX_BYTES} bytes")
            check_seal_key(openable_ephemeral(box))

    def box_for(self, receiver: int) -> bytes:
        rs = receivers(self.n, self.dealer)
        if receiver not in rs:
            raise InvalidEncoding(f"seat {receiver} holds no share of seat {self.dealer}")
        return self.boxes[rs.index(receiver)]

    def encode(self) -> bytes:
        return b"".join(c.data for c in self.commitments) + b"".join(self.boxes)

    @classmethod
    def decode(cls, b: bytes, n: int, dealer: int) -> EscrowDeal:
        """Validate every commitment (full point checks) and the size of every box."""
        _check_table(n, dealer)
        size = (n - 2) * POINT_BYTES + (n - 1) * SHARE_BOX_BYTES
        if type(b) is not bytes or len(b) != size:
            raise InvalidEncoding(f"an escrow deal of {n} seats must be {size} bytes")
        k = (n - 2) * POINT_BYTES
        commitments = tuple(Point.decode(b[i : i + POINT_BYTES]) for i in range(0, k, POINT_BYTES))
        boxes = tuple(b[i : i + SHARE_BOX_BYTES] for i in range(k, size, SHARE_BOX_BYTES))
        return cls(dealer, n, commitments, boxes)


@dataclass(frozen=True, slots=True)
class EscrowPublic:
    """The public side of one dealer's escrow: its key share ``PK_j``, its commitments,
    and each receiver's public share ``Y_i = s_i G``, computed from them when first
    asked for (:meth:`share_public`), so a receiver checking its own share in the key
    round pays for one, and the others are computed only once a seat is absent."""

    dealer: int
    n: int
    dealer_public: Point
    commitments: tuple[Point, ...]
    share_publics: dict[int, Point] = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        _check_table(self.n, self.dealer)
        if len(self.commitments) != self.n - 2:
            raise DeckMismatch(f"{len(self.commitments)} commitments for a {self.n}-seat table")
        object.__setattr__(self, "share_publics", {})

    def share_public(self, seat: int) -> Point:
        """``Y_seat`` (``n - 2`` mul + ``n - 2`` add the first time)."""
        y = self.share_publics.get(seat)
        if y is None:
            if seat not in receivers(self.n, self.dealer):
                raise InvalidEncoding(f"seat {seat} holds no share of seat {self.dealer}")
            y = _evaluate(self.commitments, self.dealer_public, eval_point(seat))
            self.share_publics[seat] = y
        return y


def _evaluate(commitments: Sequence[Point], dealer_public: Point, x: int) -> Point:
    """``C_0 + x C_1 + ... + x^(t-1) C_(t-1)``, ``C_0`` being the dealer's key share."""
    acc, power = dealer_public, 1
    try:
        for c in commitments:
            power = power * x % L
            acc = add(acc, mul(power, c))
    except InvalidPoint as exc:
        raise InvalidProof("a public share of the escrow is the identity") from exc
    return acc


def public_shares(deal: EscrowDeal, dealer_public: Point) -> EscrowPublic:
    """The public side of ``deal`` (receivers' public shares computed on demand)."""
    if not isinstance(deal, EscrowDeal) or not isinstance(dealer_public, Point):
        raise InvalidEncoding("expected an EscrowDeal and the dealer's key share")
    return EscrowPublic(deal.dealer, deal.n, dealer_public, deal.commitments)


def share_context(context: Context, receiver: int, commitments: Sequence[Point]) -> bytes:
    """The associated data of the box holding ``receiver``'s share: the dealer's context
    (table, game, step, dealer seat), the receiver and every commitment."""
    return (
        _SEAL_DOMAIN
        + context.encode()
        + receiver.to_bytes(8, "little")
        + len(commitments).to_bytes(8, "little")
        + b"".join(c.data for c in commitments)
    )


def _polynomial_shares(coefficients: Sequence[int], n: int, dealer: int) -> dict[int, int]:
    out = {}
    for i in receivers(n, dealer):
        x, acc = eval_point(i), 0
        for a in reversed(coefficients):
            acc = (acc * x + a) % L
        out[i] = acc
    return out


def make_deal(
    secret: int,
    n: int,
    context: Context,
    seal_keys: Mapping[int, bytes],
    box_secret: bytes,
    *,
    _coefficients: Sequence[int] | None = None,
) -> EscrowDeal:
    """Share ``secret`` (seat ``context.seat``'s key share) among the other ``n - 1``
    seats; ``seal_keys[i]`` is seat ``i``'s per-table seal key and ``box_secret`` the
    dealer's per-table secret from which each box's one-time key is derived.

    ``_coefficients`` (``a_1 .. a_{n-2}``) is for tests only; otherwise each is 64
    bytes from :mod:`secrets` reduced mod L (:func:`crypto.group.random_scalar`)."""
    dealer = context.seat
    _check_table(n, dealer)
    check_scalar(secret, nonzero=True, what="secret key")
    if _coefficients is None:
        coeffs = [random_scalar() for _ in range(n - 2)]
    else:
        coeffs = [check_scalar(a, nonzero=True, what="coefficient") for a in _coefficients]
        if len(coeffs) != n - 2:
            raise DeckMismatch(f"{len(coeffs)} coefficients for a {n}-seat table")
    commitments = tuple(base_mul(a) for a in coeffs)
    shares = _polynomial_shares([secret, *coeffs], n, dealer)
    boxes = []
    for i, s in shares.items():
        if s == 0:  # probability 2**-252; a zero share has no public share to prove against
            raise InvalidProof("an escrow share came out zero; deal again")
        key = check_seal_key(seal_keys[i])
        ad = share_context(context, i, commitments)
        boxes.append(seal_openable(key, scalar_to_bytes(s), ad, box_secret))
    return EscrowDeal(dealer, n, commitments, tuple(boxes))


def _check_share(public: EscrowPublic, receiver: int, plain: bytes) -> int:
    """The share in ``plain`` if it is a non-zero scalar on the commitments, else raise
    :class:`BadShare` saying why."""
    try:
        share = scalar_from_bytes(plain, nonzero=True)
    except InvalidEncoding as exc:
        raise BadShare(f"the share is not a scalar: {exc}") from None
    if base_mul(share) != public.share_public(receiver):
        raise BadShare(
            f"the share of seat {receiver} does not match seat {public.dealer}'s commitments"
        )
    return share


def _check_deal_context(deal: EscrowDeal, public: EscrowPublic, context: Context) -> None:
    if context.seat != deal.dealer or public.dealer != deal.dealer:
        raise InvalidEncoding(f"the context names seat {context.seat}, the deal {deal.dealer}")
    if public.commitments != deal.commitments or public.n != deal.n:
        raise InvalidEncoding("the public shares were computed from another deal")


def open_share(
    seal_key: SealKey, deal: EscrowDeal, public: EscrowPublic, receiver: int, context: Context
) -> int:
    """The receiver opens and checks its share (``context`` is the dealer's).  Raise
    :class:`BadShare` (or :class:`InvalidProof` if the box does not open): complain."""
    _check_deal_context(deal, public, context)
    ad = share_context(context, receiver, deal.commitments)
    plain = open_openable(seal_key, deal.box_for(receiver), ad)
    return _check_share(public, receiver, plain)


def complaint_key(box_secret: bytes, deal: EscrowDeal, receiver: int, context: Context) -> bytes:
    """The dealer's answer to a complaint: the one-time key of ``receiver``'s box."""
    return openable_key(box_secret, share_context(context, receiver, deal.commitments))


@dataclass(frozen=True, slots=True)
class EscrowVerdict:
    """Who lied in a disputed share: ``culprit`` is the dealer or the complainer;
    ``share`` the opened share when the box opened to one."""

    culprit: int
    reason: str
    share: int | None = None


def judge_complaint(
    deal: EscrowDeal,
    public: EscrowPublic,
    receiver: int,
    receiver_seal_public: bytes,
    shown_key: bytes,
    context: Context,
) -> EscrowVerdict:
    """Settle ``receiver``'s complaint about its share in public, from the one-time key
    the dealer showed: anyone opens the box as the receiver did."""
    _check_deal_context(deal, public, context)
    dealer = deal.dealer
    box = deal.box_for(receiver)
    try:
        shown_public = shown_key_public(shown_key)
    except InvalidEncoding as exc:
        return EscrowVerdict(dealer, f"the key seat {dealer} showed is malformed: {exc}")
    if shown_public != openable_ephemeral(box):
        return EscrowVerdict(dealer, f"the key seat {dealer} showed is not its box's key")
    ad = share_context(context, receiver, deal.commitments)
    try:
        plain = open_with_shown_key(shown_key, receiver_seal_public, box, ad)
    except (InvalidProof, InvalidEncoding) as exc:
        return EscrowVerdict(
            dealer, f"seat {dealer}'s box for seat {receiver} does not open: {exc}"
        )
    try:
        share = _check_share(public, receiver, plain)
    except BadShare as exc:
        return EscrowVerdict(dealer, f"seat {dealer} dealt a bad share: {exc}")
    return EscrowVerdict(
        receiver,
        f"false complaint: seat {dealer}'s share for seat {receiver} opens and matches",
        share,
    )


# ---- token shares for an absent seat -------------------------------------------------


@dataclass(frozen=True, slots=True)
class TokenShares:
    """One seat's shares of the absent seat's tokens for some cards, with one proof."""

    tokens: tuple[Point, ...]
    proof: DleqProof

    def encode(self) -> bytes:
        return b"".join(t.data for t in self.tokens) + self.proof.encode()

    @classmethod
    def decode(cls, b: bytes, m: int) -> TokenShares:
        """Validate ``m`` token points (full checks) and the proof's scalars."""
        size = m * POINT_BYTES + PROOF_BYTES
        if type(b) is not bytes or m < 1 or len(b) != size:
            raise InvalidEncoding(f"token shares for {m} cards must be {size} bytes")
        k = m * POINT_BYTES
        tokens = tuple(Point.decode(b[i : i + POINT_BYTES]) for i in range(0, k, POINT_BYTES))
        return cls(tokens, DleqProof.decode(b[k:]))


def _token_transcript(
    public: EscrowPublic, cts: Sequence[Ciphertext], context: Context
) -> tuple[Transcript, Point]:
    prover = context.seat
    y = public.share_public(prover)
    if not cts:
        raise DeckMismatch("token shares for no card")
    t = Transcript(TOKEN_SHARES_PROTOCOL, context)
    t.append_int("absent", public.dealer)
    t.append_int("seats", public.n)
    t.append_point("absent_key_share", public.dealer_public)
    t.append_points("commitments", public.commitments)
    t.append_int("eval_point", eval_point(prover))
    t.append_point("share_public", y)
    t.append_points("c1", [ct.c1 for ct in cts])
    t.append_points("c2", [ct.c2 for ct in cts])
    return t, y


def make_token_shares(
    share: int,
    public: EscrowPublic,
    cts: Sequence[Ciphertext],
    context: Context,
    *,
    insecure_test_seed: bytes | None = None,
) -> TokenShares:
    """Seat ``context.seat``'s shares of the absent seat's tokens for ``cts``."""
    check_scalar(share, nonzero=True, what="escrow share")
    t, y = _token_transcript(public, cts, context)
    tokens = tuple(mul(share, ct.c1) for ct in cts)
    c1s = [ct.c1 for ct in cts]
    proof = prove_dleq_batch(share, G, c1s, y, tokens, t, insecure_test_seed=insecure_test_seed)
    return TokenShares(tokens, proof)


def verify_token_shares(
    public: EscrowPublic, cts: Sequence[Ciphertext], shares: TokenShares, context: Context
) -> None:
    """Raise :class:`InvalidProof` unless seat ``context.seat``'s token shares are
    ``s_i c1`` for its public share ``Y_i``."""
    if not isinstance(shares, TokenShares):
        raise InvalidEncoding("expected TokenShares")
    if len(shares.tokens) != len(cts):
        raise DeckMismatch(f"{len(shares.tokens)} token shares for {len(cts)} cards")
    t, y = _token_transcript(public, cts, context)
    try:
        verify_dleq_batch(G, [ct.c1 for ct in cts], y, list(shares.tokens), shares.proof, t)
    except InvalidProof as exc:
        raise InvalidProof(
            f"token shares of seat {context.seat} for absent seat {public.dealer} do not"
            f" verify: {exc}"
        ) from exc


def _interpolate(lam: Mapping[int, int], points: Mapping[int, Point]) -> Point:
    acc: Point | None = None
    for i, k in lam.items():
        term = mul(k, points[i])
        acc = term if acc is None else add(acc, term)
    assert acc is not None
    return acc


def combine_token_shares(
    public: EscrowPublic, shares: Mapping[int, Sequence[Point]]
) -> list[Point]:
    """The absent seat's tokens, by Lagrange interpolation in the exponent of every
    other seat's (verified) token shares; ``shares[i]`` lists seat ``i``'s, card by card.

    First checks that the public shares interpolate to the absent seat's key share
    (``sum lambda_i Y_i == PK_j``), so the result is ``x_j c1``, the token the absent
    seat would have published."""
    lam = lagrange_at_zero(public.n, public.dealer)
    if set(shares) != set(lam):
        raise InvalidEncoding(
            f"token shares of seats {sorted(shares)}; all of {sorted(lam)} are needed"
        )
    counts = {len(v) for v in shares.values()}
    if len(counts) != 1 or 0 in counts:
        raise DeckMismatch("every seat must give one token share per card")
    try:
        pk = _interpolate(lam, {i: public.share_public(i) for i in lam})
    except InvalidPoint as exc:
        raise InvalidProof("the public shares interpolate to the identity") from exc
    if pk != public.dealer_public:
        raise InvalidProof(
            f"the public shares do not interpolate to seat {public.dealer}'s key share"
        )
    (m,) = counts
    out = []
    for k in range(m):
        try:
            out.append(_interpolate(lam, {i: shares[i][k] for i in lam}))
        except InvalidPoint as exc:
            raise InvalidProof("token shares combine to the identity") from exc
    return out


def check_shown_share(public: EscrowPublic, seat: int, share: bytes) -> int:
    """The share of ``public.dealer``'s key share that ``seat`` shows in the open: a
    reduced, non-zero scalar with ``s G == Y_seat``; returns ``s``."""
    s = scalar_from_bytes(share, nonzero=True)
    if base_mul(s) != public.share_public(seat):
        raise BadShare(
            f"the share of seat {public.dealer}'s key that seat {seat} showed does not"
            " match the escrow's commitments"
        )
    return s


def recover_key_share(public: EscrowPublic, shares: Mapping[int, int]) -> int:
    """``x_j`` from every other seat's shown share (each checked by
    :func:`check_shown_share`), by Lagrange interpolation at 0; checked against
    ``PK_j``."""
    lam = lagrange_at_zero(public.n, public.dealer)
    if set(shares) != set(lam):
        raise InvalidEncoding(f"shares of seats {sorted(shares)}; all of {sorted(lam)} are needed")
    x = sum(lam[i] * check_scalar(shares[i]) for i in lam) % L
    if x == 0 or base_mul(x) != public.dealer_public:
        raise InvalidProof(f"the shares shown do not interpolate to seat {public.dealer}'s key")
    return x
