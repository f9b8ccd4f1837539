"""A table that survives a lost player (issue 21; docs/design.md, "Surviving a lost
player"; ``p2p/RECORD_FORMAT.md`` §12): key escrow in the key round, the absence lane's
bodies, and token shares that act for a seat that is gone.

* ``escrow`` round (right after the ``key`` round, only with the option ``survive``):
  each seat publishes its Feldman deal (:mod:`crypto.escrow`): commitments, and one
  share per other seat sealed to that seat's per-table seal key.  Every receiver opens
  and checks its own share.
* ``escrow-check`` round: each seat lists the dealers whose share it refuses (empty:
  it accepts every share, and vouches for it).
* ``escrow-open`` (only after a complaint): each accused dealer shows the one-time key
  of every disputed box; anyone opens it (:func:`crypto.escrow.judge_complaint`) and
  the verdict convicts the dealer or the complainer.  The table ends either way.
* ``token-shares``: when a seat is gone and a step needs its reveal tokens, every
  remaining seat publishes its share of each token with one batched DLEQ proof
  against its public share; the fold checks every proof and combines them by Lagrange
  interpolation into exactly the tokens the gone seat would have published.
* ``absent`` / ``present``: the absence lane (:class:`p2p.record.chain.Record`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from crypto.errors import CryptoError
from crypto.escrow import (
    EscrowDeal,
    TokenShares,
    combine_token_shares,
    complaint_key,
    judge_complaint,
    make_deal,
    make_token_shares,
    open_share,
    public_shares,
    verify_token_shares,
)
from crypto.group import Point
from p2p.errors import InvalidMove
from p2p.record.order import ABSENT_KIND, PRESENT_KIND
from p2p.table.game_rule.core import Flow, Need, SeatList, derive
from p2p.wire import U32, Blob, Body, body

if TYPE_CHECKING:
    from p2p.table.game_rule.fold import GameRule

ESCROW_KIND = "escrow"
ESCROW_CHECK_KIND = "escrow-check"
ESCROW_OPEN_KIND = "escrow-open"
TOKEN_SHARES_KIND = "token-shares"
SURVIVE_KINDS = frozenset({ESCROW_KIND, ESCROW_CHECK_KIND, ESCROW_OPEN_KIND, TOKEN_SHARES_KIND})
_BOX_DOMAIN = b"slaiga/v1/game/escrow-box"


@body(ESCROW_KIND)
@dataclass(frozen=True, slots=True)
class EscrowBody(Body):
    """A seat's escrow deal: ``EscrowDeal.encode`` (commitments, then sealed shares)."""

    deal: Blob


@body(ESCROW_CHECK_KIND)
@dataclass(frozen=True, slots=True)
class EscrowCheckBody(Body):
    """The dealers (engine seats) whose share to us does not open or does not match."""

    complaints: SeatList


@body(ESCROW_OPEN_KIND)
@dataclass(frozen=True, slots=True)
class EscrowOpenBody(Body):
    """An accused dealer's one-time box keys (32 bytes each), one per complainer in
    ascending engine-seat order."""

    keys: Blob


@body(TOKEN_SHARES_KIND)
@dataclass(frozen=True, slots=True)
class TokenSharesBody(Body):
    """Our shares of a gone seat's tokens for the cards the rule names, with one
    batched DLEQ proof (``TokenShares.encode``)."""

    shares: Blob


@body(ABSENT_KIND)
@dataclass(frozen=True, slots=True)
class AbsentBody(Body):
    """The signer holds the named slots gone for good (a lane entry, in lane round
    ``round``: p2p/RECORD_FORMAT.md §12)."""

    seats: SeatList
    round: U32


@body(PRESENT_KIND)
@dataclass(frozen=True, slots=True)
class PresentBody(Body):
    """The signer holds the named slots' entries for this step (a lane entry)."""

    seats: SeatList
    round: U32


# ---- the escrow in the key round ---------------------------------------------------------------


def _box_secret(rule: GameRule) -> bytes:
    mine = rule.mine
    assert mine is not None
    return derive(mine.keys.table_secret, _BOX_DOMAIN)


def escrow_round(rule: GameRule) -> Flow:
    """Every seat deals its escrow; every receiver checks its share; complaints settled."""
    everyone = tuple(range(rule.n))
    step = rule.step_no
    deals = yield Need(
        ESCROW_KIND,
        everyone,
        lambda seat, b: _check_deal(rule, seat, b),
        "sharing a key in escrow",
        rule._for_me(everyone, lambda: _make_deal(rule)),
    )
    rule.escrow_deals = {s: deals[s] for s in everyone}
    rule.escrow_pub = {s: public_shares(deals[s], rule.pubs[s]) for s in everyone}
    rule.escrow_step = step
    mine = rule.mine
    refused: list[int] = []
    if mine is not None:
        for dealer in everyone:
            if dealer == mine.seat:
                continue
            try:
                share = open_share(
                    mine.keys.seal,
                    rule.escrow_deals[dealer],
                    rule.escrow_pub[dealer],
                    mine.seat,
                    rule._ctx(dealer, step),
                )
            except CryptoError:
                refused.append(dealer)
            else:
                mine.escrow_shares[dealer] = share
        forged = rule._cheat("escrow_complaints", refused)
        if forged is not None:
            refused = forged
    checks = yield Need(
        ESCROW_CHECK_KIND,
        everyone,
        lambda seat, b: _check_complaints(rule, seat, b),
        "checking escrowed shares",
        rule._for_me(everyone, lambda: EscrowCheckBody(tuple(refused))),
    )
    accused = {d: tuple(s for s in everyone if d in checks[s]) for d in everyone}
    accused = {d: c for d, c in accused.items() if c}
    if not accused:
        rule.escrow_ready = True
        return
    dealers = tuple(sorted(accused))
    shown = yield Need(
        ESCROW_OPEN_KIND,
        dealers,
        lambda seat, b: _judge(rule, seat, accused[seat], step, b),
        "answering a complaint about an escrowed share",
        rule._for_me(dealers, lambda: _make_open(rule, accused[rule.mine.seat], step)),  # type: ignore[union-attr]
    )
    for d in dealers:
        culprit, reason = shown[d]
        raise InvalidMove(rule.order[culprit], reason)


def _make_deal(rule: GameRule) -> Body:
    mine = rule.mine
    assert mine is not None
    seals = {i: rule.manifest.seats[rule.order[i]].seal_key for i in range(rule.n)}
    deal = make_deal(mine.secret, rule.n, rule._ctx(mine.seat), seals, _box_secret(rule))
    forged = rule._cheat("escrow_deal", deal)
    return EscrowBody((forged or deal).encode())


def _check_deal(rule: GameRule, seat: int, b: EscrowBody) -> EscrowDeal:
    return EscrowDeal.decode(b.deal, rule.n, seat)


def _check_complaints(rule: GameRule, seat: int, b: EscrowCheckBody) -> frozenset[int]:
    got = tuple(b.complaints)
    if list(got) != sorted(set(got)) or any(d == seat or not 0 <= d < rule.n for d in got):
        raise ValueError(f"complaints must name other seats in ascending order, not {got}")
    return frozenset(got)


def _make_open(rule: GameRule, complainers: tuple[int, ...], step: int) -> Body:
    mine = rule.mine
    assert mine is not None
    deal = rule.escrow_deals[mine.seat]
    keys = [
        complaint_key(_box_secret(rule), deal, r, rule._ctx(mine.seat, step)) for r in complainers
    ]
    return EscrowOpenBody(b"".join(keys))


def _judge(
    rule: GameRule, seat: int, complainers: tuple[int, ...], step: int, b: EscrowOpenBody
) -> tuple[int, str]:
    """(engine seat proven at fault, why) for the first disputed share."""
    if len(b.keys) != 32 * len(complainers):
        raise ValueError(f"{len(complainers)} box keys must be {32 * len(complainers)} bytes")
    deal, pub = rule.escrow_deals[seat], rule.escrow_pub[seat]
    verdicts = []
    for i, r in enumerate(complainers):
        receiver = rule.manifest.seats[rule.order[r]].seal_key
        v = judge_complaint(
            deal, pub, r, receiver, b.keys[32 * i : 32 * i + 32], rule._ctx(seat, step)
        )
        verdicts.append((v.culprit, f"escrow, step {step}: {v.reason}"))
    dealer_lied = [v for v in verdicts if v[0] == seat]
    return (dealer_lied or verdicts)[0]


# ---- tokens for a seat that is gone ---------------------------------------------------------


def stand_in_tokens(rule: GameRule, gone: int, hs: tuple[int, ...]) -> Flow:
    """A ``token-shares`` round of every remaining seat for ``gone``'s tokens of ``hs``;
    returns the combined tokens, in ``hs`` order."""
    present = tuple(s for s in range(rule.n) if s != gone and s not in rule.gone)
    pub = rule.escrow_pub[gone]
    cts = [rule.cts[h] for h in hs]
    got = yield Need(
        TOKEN_SHARES_KIND,
        present,
        lambda seat, b: _check_token_shares(rule, gone, seat, cts, b),
        "acting together for a player who left",
        rule._for_me(present, lambda: _make_token_shares(rule, gone, cts)),
    )
    return combine_token_shares(pub, {s: got[s] for s in present})


def _make_token_shares(rule: GameRule, gone: int, cts: list[Any]) -> Body:
    mine = rule.mine
    assert mine is not None
    shares = make_token_shares(
        mine.escrow_shares[gone], rule.escrow_pub[gone], cts, rule._ctx(mine.seat)
    )
    forged = rule._cheat("token_shares", gone, shares)
    return TokenSharesBody((forged or shares).encode())


def _check_token_shares(
    rule: GameRule, gone: int, seat: int, cts: list[Any], b: TokenSharesBody
) -> tuple[Point, ...]:
    shares = TokenShares.decode(b.shares, len(cts))
    if not rule._trusted(seat):
        verify_token_shares(rule.escrow_pub[gone], cts, shares, rule._ctx(seat))
        rule.proofs_checked += 1
    return shares.tokens
