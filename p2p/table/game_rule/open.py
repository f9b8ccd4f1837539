"""The ``open`` round of a table with the ``open_hands`` option: hands opened after the game.

Off by default (``engine.options.OPEN_HANDS``).  With it on, once every seat has signed
the ``final`` round each seat publishes its secret key share ``x_j`` in a signed ``open``
entry.  Every peer checks that ``x_j`` is a reduced, non-zero scalar with
``x_j G == X_j``, the share seat ``j`` proved in the ``key`` round; any other value is a
false entry and convicts its signer.  A seat that never sends it is silent (the table's
silence limits name it), never a cheat.

From then on the joint secret ``x = sum x_j`` opens every ciphertext the table ever
held: every deal (the pile after each shuffle) and every sealed gift's cards.  So the
claims that only one seat could check during the game become public checks: a Slave
gift accepted by its receiver alone (:class:`p2p.table.game_rule.gift.Caveat`) is
re-checked against the giver's whole hand, and a gift that was not the giver's highest
convicts the giver.  What this gives away: every card ever dealt in this game becomes
readable by anyone holding the record (no forward secrecy for this game).

With the option ``survive`` as well, a seat that left the table (``p2p/RECORD_FORMAT.md``
§12) cannot publish its key share; the remaining seats rebuild it instead: after the
``open`` round each of them shows, in an ``open-share`` entry, its escrow share of the
lost seat's key (:func:`crypto.escrow.check_shown_share`: ``s_i G == Y_i``), and every
peer interpolates the lost seat's ``x_j`` and checks it against its key-round share
(:func:`crypto.escrow.recover_key_share`).  So the hands open, and the gifts are checked,
as if it had stayed.  A share that does not match convicts its signer.
``p2p/RECORD_FORMAT.md`` (the ``open`` round) and docs/design.md ("Hands opened after the
game") have the details.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

from crypto.elgamal import Ciphertext
from crypto.errors import InvalidEncoding
from crypto.escrow import check_shown_share, recover_key_share
from crypto.group import L, base_mul, mul, scalar_from_bytes, scalar_to_bytes, sub
from engine.cards import ORDERS, Card
from p2p.errors import InvalidMove
from p2p.table.game_rule.core import Flow, Need
from p2p.wire import Body, Bytes, body

if TYPE_CHECKING:
    from p2p.table.game_rule.fold import GameRule

OPEN_KIND = "open"
OPEN_SHARE_KIND = "open-share"
OPTION = "open_hands"


@body(OPEN_KIND)
@dataclass(frozen=True, slots=True)
class OpenBody(Body):
    """A seat's secret key share ``x`` (32 bytes, little-endian, in ``[1, L)``)."""

    secret: Annotated[bytes, Bytes(size=32)]


@body(OPEN_SHARE_KIND)
@dataclass(frozen=True, slots=True)
class OpenShareBody(Body):
    """A remaining seat's escrow share of the key share of the seat that left (32 bytes,
    little-endian, in ``[1, L)``), shown once the hands are opened."""

    share: Annotated[bytes, Bytes(size=32)]


@dataclass(slots=True)
class Deal:
    """The pile after a shuffle (record ``step`` completed it), and each engine seat's
    hand once it was dealt (handles), filled at the next action round."""

    step: int
    cts: tuple[Ciphertext, ...]
    hands: dict[int, tuple[int, ...]] | None = None


@dataclass(frozen=True, slots=True)
class GiftCheck:
    """A gift that only its receiver checked during the game, checked publicly once the
    hands were opened: ``ok`` and what the cards were (slots, faces)."""

    step: int
    seat: int
    checked_by: int
    given: tuple[Card, ...]
    rest: tuple[Card, ...]
    ok: bool


def enabled(manifest: Any) -> bool:
    """Whether the table signed the ``open_hands`` option."""
    return bool(dict(manifest.options).get(OPTION, False))


def note_deal(rule: GameRule) -> None:
    """After a ``Shuffle``: keep the pile's ciphertexts (a later shuffle replaces them)."""
    rule.deals.append(Deal(rule.step_no - 1, tuple(rule.cts)))


def note_hands(rule: GameRule) -> None:
    """At an action round: the hands of the latest deal, if not noted yet."""
    if rule.deals and rule.deals[-1].hands is None:
        zones = rule.engine.zones.snapshot()
        rule.deals[-1].hands = {s: tuple(zones.get(f"hand:{s}", ())) for s in range(rule.n)}


def open_round(rule: GameRule) -> Flow:
    """Every seat's key share, checked against the key round; then the public checks."""
    everyone = tuple(range(rule.n))
    shares = yield Need(
        OPEN_KIND,
        everyone,
        lambda seat, b: _check_open(rule, seat, b),
        "opening their hands",
        rule._for_me(everyone, lambda: _make_open(rule)),
    )
    keys = dict(shares)
    lost = [s for s in everyone if s not in keys]
    if lost:
        # a seat left for good (option survive): the others show their escrow shares of
        # its key, and everyone rebuilds it
        if len(lost) != 1 or not rule.escrow_ready:
            return  # cannot happen: with two seats gone the table ended (abandoned)
        (j,) = lost
        present = tuple(s for s in everyone if s != j)
        shown = yield Need(
            OPEN_SHARE_KIND,
            present,
            lambda seat, b: _check_open_share(rule, j, seat, b),
            "opening the hand of the player who left",
            rule._for_me(present, lambda: _make_open_share(rule, j)),
        )
        if set(shown) != set(present):
            return  # another seat left during this round: the table ended (abandoned)
        keys[j] = recover_key_share(rule.escrow_pub[j], dict(shown))
    rule.opened = sum(keys[s] for s in everyone) % L
    _check_gifts(rule)


def _make_open(rule: GameRule) -> Body:
    mine = rule.mine
    assert mine is not None
    secret = scalar_to_bytes(mine.secret)
    forged = rule._cheat("open", secret)
    return OpenBody(forged if forged is not None else secret)


def _make_open_share(rule: GameRule, lost: int) -> Body:
    mine = rule.mine
    assert mine is not None
    share = scalar_to_bytes(mine.escrow_shares[lost])
    forged = rule._cheat("open_share", share)
    return OpenShareBody(forged if forged is not None else share)


def _check_open_share(rule: GameRule, lost: int, seat: int, b: OpenShareBody) -> int:
    return check_shown_share(rule.escrow_pub[lost], seat, b.share)


def _check_open(rule: GameRule, seat: int, b: OpenBody) -> int:
    x = scalar_from_bytes(b.secret, nonzero=True)
    if base_mul(x).data != rule.pubs[seat].data:
        raise InvalidEncoding("the key shown does not match its share from the key round")
    return x


def face_of(rule: GameRule, ct: Ciphertext) -> Card:
    """The face inside ``ct``, with the opened joint secret."""
    assert rule.opened is not None and rule.deck is not None
    return rule._face(rule.deck.index_of(sub(ct.c2, mul(rule.opened, ct.c1))))


def _check_gifts(rule: GameRule) -> None:
    """Each gift its receiver alone accepted, checked by everyone: no card the giver kept
    may rank at or above the lowest card given.  A false one convicts the giver."""
    for c in rule.caveats:
        if c.kind != "gift" or not c.given:
            continue
        given = tuple(face_of(rule, ct) for ct in c.given)
        rest = tuple(face_of(rule, ct) for ct in c.rest)
        key = ORDERS[c.order]
        ok = not rest or max(map(key, rest)) < min(map(key, given))
        rule.gift_checks.append(GiftCheck(c.step, c.seat, c.checked_by, given, rest, ok))
        if not ok:
            raise InvalidMove(
                c.seat,
                f"its gift sealed at step {c.step} was not its highest cards, as the hands"
                f" opened after the game show: it gave {_cards(given)} and kept"
                f" {_cards(rest)} (its receiver had accepted it alone)",
                step=c.step,
            )


def _cards(cards: tuple[Card, ...]) -> str:
    return " ".join(str(c) for c in cards) or "nothing"


def opened_hands(rule: GameRule) -> list[dict[str, Any]]:
    """Every deal's cards once the hands are opened: per deal, the record step of its
    shuffle and each engine seat's dealt hand (card codes); ``[]`` if not opened."""
    if rule.opened is None:
        return []
    out = []
    for d in rule.deals:
        faces = [face_of(rule, ct) for ct in d.cts]
        hands: Mapping[int, tuple[int, ...]] = d.hands or {}
        out.append(
            {
                "step": d.step,
                "hands": {s: [faces[h].code for h in hands.get(s, ())] for s in range(rule.n)},
                "deck": [f.code for f in faces],
            }
        )
    return out
