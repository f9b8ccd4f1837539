"""A cheating seat against crypto.inequality (the blinded comparison ``Q_i = r M_i`` against
``P_j = r M_v``, one Sigma protocol for ``(r, alpha = r x)``), and a curious verifier.

Each test is one attack, written out concretely, and asserts that the verifier refuses
it (or, for privacy, that the proof does not carry what the attack looks for).  The seat
``SEAT`` holds the card ``HELD_V`` and wants to prove "none of my cards is ``HELD_V``"
(or a padded list holding it), as a Slave player would to hide 3 of clubs or a giver
to hide a card above its gift.
"""

from __future__ import annotations

import dataclasses
import random
from types import SimpleNamespace

import nacl.bindings as sodium
import pytest

from crypto.deck import deck_points
from crypto.errors import InvalidEncoding, InvalidPoint, InvalidProof
from crypto.group import COUNTERS, FIELD_P, G, L, Point, add, base_mul, mul, sub
from crypto.hand_proofs import HeldCard
from crypto.inequality import (
    PROTOCOL,
    InequalityProof,
    _statement_transcript,
    prove_none_of,
    verify_none_of,
)
from crypto.keys import joint_key
from crypto.memo import remembering
from crypto.transcript import Context, Transcript
from engine.cards import ORDERS
from p2p.table.faces import index_face
from p2p.table.game_rule.gift import _padding
from tests.crypto._helpers import SMALL_ORDER, held_hand, other_contexts

DECK = deck_points(52)
DECK104 = deck_points(104)
SECRETS = [4321, 8765, 1357]
PUBLICS = [base_mul(x) for x in SECRETS]
PK = joint_key(PUBLICS)
SEAT = 1
X, PUB = SECRETS[SEAT], PUBLICS[SEAT]
CTX = Context(b"attack-table", 2, 17, SEAT)
HAND = (4, 11, 23, 38, 47)
HELD_V = HAND[2]  # the cheater holds this card and wants to deny it
ABSENT = 1  # a card the hand does not hold


def _hand(indices, deck=DECK):
    return held_hand(indices, deck, PK, SECRETS, SEAT, first_r=9000)


HELD = _hand(HAND)


def _refused(proof, held=HELD, forbidden=(HELD_V,), ctx=CTX, public=PUB, deck=DECK, **kw):
    """The verifier refuses ``proof`` (as a bad proof or a bad encoding, never silently)."""
    with pytest.raises((InvalidProof, InvalidEncoding)):
        verify_none_of(public, held, forbidden, deck, proof, ctx, **kw)


def _forge(
    ps,
    qs,
    r,
    *,
    alpha=None,
    held=HELD,
    forbidden=(HELD_V,),
    public=PUB,
    ctx=CTX,
    deck=DECK,
    k_r=1234567,
    k_a=7654321,
    c=None,
):
    """A cheating prover: any blinded points ``ps``/``qs`` and any witness ``(r, alpha)``;
    commitments made as the verifier recomputes them for a true relation, the challenge
    hashed over exactly what the verifier hashes (or ``c`` if the cheater programs it)."""
    alpha = r * X if alpha is None else alpha
    t = _statement_transcript(ctx, public, held, list(forbidden), deck)
    t.append_points("P", ps)
    t.append_points("Q", qs)
    t.append_points("T", [mul(k_r, deck.point(v)) for v in forbidden])
    t.append_points("U", [sub(mul(k_r, hc.x), mul(k_a, hc.c1)) for hc in held])
    t.append_point("W", sub(base_mul(k_a), mul(k_r, public)))
    ch = t.challenge("c") if c is None else c
    return InequalityProof(tuple(ps), tuple(qs), ch, (k_r + ch * r) % L, (k_a + ch * alpha) % L)


def _true_blinds(r, hand=HAND, forbidden=(HELD_V,), deck=DECK):
    return [mul(r, deck.point(v)) for v in forbidden], [mul(r, deck.point(i)) for i in hand]


def _torsioned(p: Point, small: bytes) -> bytes:
    """``p`` plus a point of small order (libsodium adds points of any order)."""
    return sodium.crypto_core_ed25519_add(p.data, small)


# ---- soundness: a seat that holds a forbidden card ------------------------------------------


def test_sanity_the_forger_makes_proofs_of_true_statements():
    """The forging helper is faithful: with a true statement its proof verifies, so every
    refusal below comes from the attack, not from the helper."""
    r = 99991
    ps, qs = _true_blinds(r, forbidden=(ABSENT,))
    verify_none_of(PUB, HELD, [ABSENT], DECK, _forge(ps, qs, r, forbidden=(ABSENT,)), CTX)


def test_the_honest_algebra_with_a_held_forbidden_card_is_caught_by_the_comparison():
    r = 31337
    ps, qs = _true_blinds(r)
    assert qs[2] == ps[0]
    with pytest.raises(InvalidProof, match="held card 2 is a forbidden card"):
        verify_none_of(PUB, HELD, [HELD_V], DECK, _forge(ps, qs, r), CTX)
    # padded: the held card is the filler itself, repeated in every padding entry
    kw = {"pad_to": 7, "pad_with": HELD_V}
    padded = [ABSENT, HELD_V]
    ps, qs = _true_blinds(r, forbidden=[ABSENT] + [HELD_V] * 6)
    with pytest.raises(InvalidProof, match="held card 2 is a forbidden card"):
        verify_none_of(
            PUB, HELD, padded, DECK, _forge(ps, qs, r, forbidden=[ABSENT] + [HELD_V] * 6), CTX, **kw
        )


def test_r_zero_cannot_be_put_on_the_wire_or_in_memory():
    """``r = 0`` (or ``r = L``) would make every ``P`` and ``Q`` the identity, all equal and
    so "different" from nothing: decoding refuses the identity, a Point cannot hold it, and
    multiplying by zero raises."""
    honest = prove_none_of(X, PUB, HELD, HAND, [ABSENT], DECK, CTX)
    raw = honest.encode()
    identity = (1).to_bytes(32, "little")
    zero_blinded = identity * (1 + len(HAND)) + raw[32 * (1 + len(HAND)) :]
    with pytest.raises(InvalidPoint, match="identity"):
        InequalityProof.decode(zero_blinded, len(HAND), 1)
    with pytest.raises(InvalidPoint):
        Point(identity)
    for r in (0, L):
        with pytest.raises((InvalidPoint, ValueError)):
            mul(r, DECK.point(HELD_V))
    # r = 0 with a non-zero alpha would need alpha G = 0 * PK: the W relation fails
    ps, qs = _true_blinds(1)
    _refused(_forge(ps, [add(q, G) for q in qs], 0, alpha=5), forbidden=[HELD_V])


@pytest.mark.parametrize("small", SMALL_ORDER[1:], ids=lambda b: b.hex()[:8])
def test_torsion_on_a_blinded_point_is_refused_at_decode(small):
    """``Q + T`` for a small-order ``T`` has other bytes than ``P`` but ``L (Q + T) = L Q``:
    the relation in the prime-order subgroup would still see ``Q``.  Decoding refuses any
    torsion component, in every ``P`` and ``Q`` position."""
    r = 2024
    ps, qs = _true_blinds(r)
    proof = _forge(ps, qs, r)  # the true witness: Q_2 == P_1
    raw = proof.encode()
    n_pts = 1 + len(HAND)
    for slot in range(n_pts):
        pt = (proof.ps + proof.qs)[slot]
        bad = _torsioned(pt, small)
        assert bad != pt.data
        with pytest.raises(InvalidPoint):
            InequalityProof.decode(raw[: 32 * slot] + bad + raw[32 * (slot + 1) :], len(HAND), 1)
        with pytest.raises(InvalidPoint):
            Point(bad)


@pytest.mark.parametrize("small", SMALL_ORDER[1:], ids=lambda b: b.hex()[:8])
def test_torsion_in_the_statement_cannot_reach_the_verifier(small):
    """A held card or key share with a torsion component (an odd ``X`` or ``C1``) cannot be
    a Point, and a HeldCard of raw bytes is refused."""
    for p in (HELD[0].c1, HELD[0].x, PUB):
        with pytest.raises(InvalidPoint):
            Point(_torsioned(p, small))
    proof = prove_none_of(X, PUB, HELD, HAND, [ABSENT], DECK, CTX)
    odd = HeldCard(HELD[0].c1, _torsioned(HELD[0].x, small))  # type: ignore[arg-type]
    with pytest.raises(InvalidEncoding):
        verify_none_of(PUB, [odd, *HELD[1:]], [ABSENT], DECK, proof, CTX)
    with pytest.raises(InvalidEncoding):
        verify_none_of(_torsioned(PUB, small), HELD, [ABSENT], DECK, proof, CTX)


def test_no_second_encoding_of_a_blinded_point():
    """The bytes comparison relies on one encoding per point.  ``y + p`` fits in 255 bits
    only for ``y < 19``, and no point of the subgroup has such a ``y`` (so no valid point
    has a second encoding); a set sign bit is another point (``-Q``), which a cheater
    cannot make satisfy ``Q = r X - alpha C1``."""
    for y in range(19):
        for sign in (0, 1):
            for val in (y, y + FIELD_P):
                enc = (val | sign << 255).to_bytes(32, "little")
                assert not sodium.crypto_core_ed25519_is_valid_point(enc)
    r = 777
    ps, qs = _true_blinds(r)
    proof = _forge(ps, qs, r)
    raw = proof.encode()
    for slot, pt in enumerate(proof.ps + proof.qs):
        y = int.from_bytes(pt.data, "little") & ((1 << 255) - 1)
        sign = pt.data[31] >> 7
        assert y >= 19  # so y + p needs 256 bits: this point has one encoding only
        non_canonical = ((FIELD_P + 2) | sign << 255).to_bytes(32, "little")
        with pytest.raises(InvalidPoint, match="not canonical"):
            InequalityProof.decode(
                raw[: 32 * slot] + non_canonical + raw[32 * (slot + 1) :], len(HAND), 1
            )
        flipped = bytearray(pt.data)
        flipped[31] ^= 0x80
        assert Point(bytes(flipped)) == mul(L - 1, pt) != pt  # -pt: another point
    # Q_2 := -P_1 (the sign-flipped bytes of P): differs by bytes, but breaks U_2
    neg = list(qs)
    neg[2] = Point(bytes(bytearray(ps[0].data[:31]) + bytes([ps[0].data[31] ^ 0x80])))
    assert neg[2] != ps[0]
    _refused(_forge(ps, neg, r))


def test_a_shifted_or_freely_chosen_q_breaks_its_relation():
    r = 4040
    ps, qs = _true_blinds(r)
    for delta in (G, DECK.point(ABSENT), HELD[2].c1, PUB):
        shifted = list(qs)
        shifted[2] = add(qs[2], delta)
        _refused(_forge(ps, shifted, r))
    # Q_2 = r M_absent (claim the held card is another card)
    lying = list(qs)
    lying[2] = mul(r, DECK.point(ABSENT))
    _refused(_forge(ps, lying, r))
    # P_1 blinded with another r (so Q_2 != P_1), everything else honest
    _refused(_forge([mul(r + 1, DECK.point(HELD_V))], qs, r))
    # and the other way: P honest, every Q with another r
    _refused(_forge(ps, [mul(r + 1, DECK.point(i)) for i in HAND], r))


def test_alpha_is_tied_to_this_seats_key_share():
    """With ``alpha`` free, any ``Q_i = r X_i - alpha C1_i`` fits its relation: only
    ``identity = alpha G - r PK`` stops it.  A cheater who even knows every other seat's
    secret (so the plaintexts) cannot use one of their keys in place of its own."""
    r = 5150
    ps, _ = _true_blinds(r)
    for alpha in (r * X + 1, r * SECRETS[0], r * SECRETS[2], r * sum(SECRETS), 0, 1):
        free = [
            sub(mul(r, hc.x), mul(alpha % L, hc.c1)) if alpha % L else mul(r, hc.x) for hc in HELD
        ]
        if all(q != ps[0] for q in free):
            _refused(_forge(ps, free, r, alpha=alpha % L))
    # the same forgery checked against the colluder's key share fails too (wrong statement)
    alpha = r * SECRETS[0]
    free = [sub(mul(r, hc.x), mul(alpha, hc.c1)) for hc in HELD]
    _refused(_forge(ps, free, r, alpha=alpha, public=PUBLICS[0]), public=PUB)
    # Checked as a statement about seat 0's key it verifies, and rightly: X_i = M_i + x1
    # C1_i, so X_i - x0 C1_i is no card at all.  The statement is a (key share, held
    # cards) pair, so a verifier must derive X for the key's own seat (held.py's
    # held_cards(rule, seat, ...) with rule.pubs[seat] and rule._ctx(seat) does).
    verify_none_of(
        PUBLICS[0],
        HELD,
        [HELD_V],
        DECK,
        _forge(ps, free, r, alpha=alpha, public=PUBLICS[0]),
        CTX,
    )


def test_a_programmed_challenge_does_not_verify():
    """The honest-verifier simulator (pick ``c`` and the responses, solve for the
    commitments) makes a transcript for a false statement; under Fiat-Shamir the hash of
    the recomputed commitments is not the picked ``c``."""
    r_fake = 60606
    ps = [mul(r_fake, DECK.point(HELD_V))]
    qs = [mul(r_fake + 1 + i, DECK.point(ABSENT)) for i in range(len(HAND))]
    for c in (0, 1, 12345, L - 1):
        sim = InequalityProof(tuple(ps), tuple(qs), c, 111, 222)
        _refused(sim)
        _refused(_forge(ps, qs, r_fake, c=c))
    # all-zero scalars (c = s_r = s_alpha = 0 makes every recomputed commitment zero)
    _refused(InequalityProof(tuple(ps), tuple(qs), 0, 0, 0))


def test_blinded_points_reused_from_other_proofs():
    """A cheater holding ``HELD_V`` splices parts of honest proofs of true statements."""
    other = prove_none_of(X, PUB, HELD, HAND, [ABSENT], DECK, CTX)  # a true statement
    # the whole proof, relabelled as a proof about HELD_V
    _refused(other)
    # its Q with a fresh P for HELD_V and honest-looking responses
    for r in (12, 13):
        _refused(_forge([mul(r, DECK.point(HELD_V))], other.qs, r))
    # the same seat's proof from another step, table, game or seat
    for ctx in other_contexts(CTX):
        past = prove_none_of(X, PUB, HELD, HAND, [ABSENT], DECK, ctx)
        _refused(dataclasses.replace(past, ps=other.ps))
        _refused(past, forbidden=[ABSENT])
    # the same seat's proof over another hand (before an exchange): its Q and responses
    earlier_hand = (4, 11, 24, 38, 47)
    earlier = prove_none_of(X, PUB, _hand(earlier_hand), earlier_hand, [HELD_V], DECK, CTX)
    verify_none_of(PUB, _hand(earlier_hand), [HELD_V], DECK, earlier, CTX)
    _refused(earlier)
    # another seat's honest proof about its own cards (none of them HELD_V), relabelled
    hand0 = (5, 12, 30, 39, 48)
    held0 = held_hand(hand0, DECK, PK, SECRETS, 0, first_r=7000)
    seat0 = prove_none_of(SECRETS[0], PUBLICS[0], held0, hand0, [HELD_V], DECK, CTX.with_seat(0))
    verify_none_of(PUBLICS[0], held0, [HELD_V], DECK, seat0, CTX.with_seat(0))
    _refused(seat0)
    _refused(seat0, ctx=CTX.with_seat(0))
    _refused(seat0, public=PUBLICS[0])


def test_swapped_p_and_q_lists():
    """``f = n``: the cheater sends its ``Q`` list where the ``P`` list belongs (or reads
    the wire with the other split)."""
    hand, forbidden = HAND[:2], [HELD_V, ABSENT]
    held = HELD[:2]
    honest = prove_none_of(X, PUB, held, hand, forbidden, DECK, CTX)
    swapped = dataclasses.replace(honest, ps=honest.qs, qs=honest.ps)
    _refused(swapped, held=held, forbidden=forbidden)
    r = 8080
    ps, qs = _true_blinds(r, hand=hand, forbidden=forbidden)
    _refused(_forge(qs, ps, r, held=held, forbidden=forbidden), held=held, forbidden=forbidden)
    # the statement about HELD (5 cards) is not the 2-card one: other shapes refuse
    raw = honest.encode()
    assert InequalityProof.decode(raw, 2, 2) == honest


def test_duplicate_dropped_and_reordered_held_cards():
    """The cheater proves about a hand without the forbidden card (one card twice, a card
    left out, or the cards permuted so positions do not line up)."""
    r = 1111
    dup_hand = (HAND[0], HAND[1], HAND[1], HAND[3], HAND[4])
    dup_held = [HELD[0], HELD[1], HELD[1], HELD[3], HELD[4]]
    ps, qs = _true_blinds(r, hand=dup_hand)
    _refused(_forge(ps, qs, r, held=dup_held))  # statement built over the duplicate
    _refused(_forge(ps, qs, r))  # the real hand
    # an honest proof over the hand without the card, shown against the whole hand
    short = [h for i, h in enumerate(HELD) if i != 2]
    short_hand = [h for i, h in enumerate(HAND) if i != 2]
    proof = prove_none_of(X, PUB, short, short_hand, [HELD_V], DECK, CTX)
    verify_none_of(PUB, short, [HELD_V], DECK, proof, CTX)
    _refused(proof)
    # padded back to five cards by repeating a Q: the relation of card 2 fails
    padded = dataclasses.replace(proof, qs=(*proof.qs[:2], proof.qs[1], *proof.qs[2:]))
    _refused(padded)
    # permuted cards: each Q is checked against the held card at its position
    rot_hand = HAND[1:] + HAND[:1]
    ps, qs = _true_blinds(r, hand=rot_hand)
    assert qs[1] == ps[0]  # the truth is still there, now at position 1
    rot = list(qs)
    rot[1], rot[2] = qs[2], qs[1]
    _refused(_forge(ps, rot, r))


def test_padding_entries_cannot_be_bent():
    """Slave's gift: ``F`` padded with the filler.  The cheater holds a card of ``F``."""
    kw = {"pad_to": 6, "pad_with": 51}
    forbidden = [HELD_V, 51]
    full = [HELD_V, 51, 51, 51, 51, 51]
    r = 2323
    ps, qs = _true_blinds(r, forbidden=full)
    # the honest algebra: caught by the comparison
    with pytest.raises(InvalidProof, match="forbidden card"):
        verify_none_of(PUB, HELD, forbidden, DECK, _forge(ps, qs, r, forbidden=full), CTX, **kw)
    # P_1 (the held card's entry) blinded with another r, padding entries honest
    bent = [mul(r + 7, DECK.point(HELD_V)), *ps[1:]]
    _refused(_forge(bent, qs, r, forbidden=full), forbidden=forbidden, **kw)
    # the held card's entry replaced by a copy of the filler's (list of six fillers)
    fillers = [ps[1]] * 6
    _refused(_forge(fillers, qs, r, forbidden=full), forbidden=forbidden, **kw)
    _refused(_forge(fillers, qs, r, forbidden=[51] * 6), forbidden=forbidden, **kw)
    # the statement of a smaller F (a higher "lowest given") padded to the same length,
    # checked by a receiver who computes the true F: the lists differ, so it fails
    small_f = [51]
    honest_small = prove_none_of(X, PUB, HELD, HAND, small_f, DECK, CTX, **kw)
    verify_none_of(PUB, HELD, small_f, DECK, honest_small, CTX, **kw)
    _refused(honest_small, forbidden=forbidden, **kw)
    # and the padding entries of one proof differ from its held entries by bytes only
    # where the cards differ: a padding P never equals an honest Q of a non-forbidden card
    assert not {p.data for p in honest_small.ps} & {q.data for q in honest_small.qs}


def test_the_transcript_binds_everything_the_verifier_uses():
    """Each input of the verifier changes the statement transcript (so the challenge): the
    generator, key share, deck size, each forbidden handle (padding included), each held
    card's ``C1`` and ``X`` and their order, and each context field."""

    def digest(ctx=CTX, public=PUB, held=HELD, forbidden=(ABSENT, 51), deck=DECK) -> bytes:
        t = _statement_transcript(ctx, public, held, list(forbidden), deck)
        return t.copy()._h.digest()  # noqa: SLF001 - test reads the hash state

    base = digest()
    variants = [digest(ctx=c) for c in other_contexts(CTX)]
    variants += [digest(public=PUBLICS[0]), digest(deck=deck_points(54))]
    variants += [digest(deck=DECK104), digest(forbidden=(ABSENT, 51, 51))]
    variants += [digest(forbidden=(ABSENT, 50)), digest(forbidden=(51, ABSENT))]
    variants += [digest(held=HELD[::-1]), digest(held=HELD[:-1])]
    for i in range(len(HELD)):
        for field in ("c1", "x"):
            h = list(HELD)
            h[i] = dataclasses.replace(h[i], **{field: add(getattr(h[i], field), G)})
            variants.append(digest(held=h))
    assert base not in variants
    assert len(set(variants)) == len(variants)
    # the protocol label differs from every other proof's, and from version 4's
    assert PROTOCOL == "slaiga/v2/card-inequality"
    t_old = Transcript("slaiga/v1/card-inequality", CTX)
    assert t_old._h.digest() != Transcript(PROTOCOL, CTX)._h.digest()  # noqa: SLF001


def test_the_deck_size_and_the_deck_encodings_both_bind():
    """A proof made over the 104-card deck for handles below 52 is not a proof over the
    52-card deck (other encodings, other size), and the other way round."""
    hand = (4, 11, 60)
    held104 = _hand(hand, DECK104)
    proof = prove_none_of(X, PUB, held104, hand, [1, 53], DECK104, CTX)
    verify_none_of(PUB, held104, [1, 53], DECK104, proof, CTX)
    _refused(proof, held=held104, forbidden=[1, 51], deck=DECK)
    _refused(proof, held=held104, forbidden=[1, 53], deck=deck_points(54))


# ---- zero knowledge and privacy ------------------------------------------------------------


def test_two_copies_of_a_face_in_the_double_deck_are_told_apart_by_nobody():
    """Handles ``f`` and ``f + 52`` are distinct encodings: their ``Q`` differ, and a proof
    for one copy of a face does not stand for the other (NoneOfFace lists both)."""
    hand = (5, 57, 70)  # both copies of face 5
    held = _hand(hand, DECK104)
    proof = prove_none_of(X, PUB, held, hand, [9, 61], DECK104, CTX)
    verify_none_of(PUB, held, [9, 61], DECK104, proof, CTX)
    assert len({q.data for q in proof.qs}) == 3
    assert proof.ps[0] != proof.ps[1]
    # holding only copy 57 of face 5: "not 5" alone is provable, "not face 5" is not
    with pytest.raises(InvalidProof):
        prove_none_of(X, PUB, held[1:], hand[1:], [5, 57], DECK104, CTX)
    only_first = prove_none_of(X, PUB, held[1:], hand[1:], [5], DECK104, CTX)
    _refused(only_first, held=held[1:], forbidden=[5, 57], deck=DECK104)


def test_two_proofs_by_one_seat_share_no_blinded_point_and_no_scalar():
    """Fresh ``r`` each proof: the same statement twice, and two statements about the same
    cards, have no point or scalar in common (a repeated ``Q`` would link the cards)."""
    proofs = [
        prove_none_of(X, PUB, HELD, HAND, [ABSENT], DECK, CTX),
        prove_none_of(X, PUB, HELD, HAND, [ABSENT], DECK, CTX),
        prove_none_of(X, PUB, HELD, HAND, [ABSENT, 2], DECK, CTX),
        prove_none_of(X, PUB, HELD, HAND, [ABSENT], DECK, CTX.with_step(CTX.step + 1)),
    ]
    seen: set[bytes] = set()
    for p in proofs:
        mine = {pt.data for pt in p.ps + p.qs} | {k.to_bytes(32, "little") for k in (p.c, p.s_r)}
        assert not mine & seen
        seen |= mine


def test_a_guess_is_not_testable_from_the_proof_alone():
    """What a curious verifier can compute from the proof and the public deck: ``P = r M_v``
    and the recomputed commitments.  The natural tests of a guess ``a`` for card ``i`` --
    ``Q_i`` against ``P`` moved by ``M_a - M_v``, against ``s_r M_a - T`` style
    recombinations, against ``M_a`` itself -- match no held card (testing ``Q_i = r M_a``
    needs ``r M_a``, a Diffie-Hellman value; see the module's zero-knowledge argument)."""
    v = ABSENT
    proof = prove_none_of(X, PUB, HELD, HAND, [v], DECK, CTX)
    p, c, s_r = proof.ps[0], proof.c, proof.s_r
    t = sub(mul(s_r, DECK.point(v)), mul(c, p))  # T = k_r M_v, as the verifier recomputes
    q_bytes = {q.data for q in proof.qs}
    for a in range(52):
        if a == v:
            continue
        m_a = DECK.point(a)
        guesses = [
            m_a,
            add(p, sub(m_a, DECK.point(v))),
            sub(mul(s_r, m_a), t),
            mul(c, m_a),
            mul(s_r, m_a),
        ]
        for g in guesses:
            assert g.data not in q_bytes


def test_nonces_are_bound_to_the_statement_the_secret_and_the_true_handles():
    """``alpha = r x``: two proofs with the same ``(k_r, k_a)`` and different challenges
    give the key away, ``x = (s_a - s_a') / (s_r - s_r')``.  Even with a repeated
    (pinned) random seed, another statement, another context or other true handles draw
    other nonces, so the extraction yields garbage.  The extraction itself is checked on a
    prover that does reuse its nonces."""
    seed = b"the same broken randomness"

    def extract(a: InequalityProof, b: InequalityProof) -> int:
        return (a.s_alpha - b.s_alpha) * pow(a.s_r - b.s_r, -1, L) % L

    # a prover that reuses (k_r, k_a) across two statements leaks x (the check can fail)
    k_r, k_a = 99, 101
    r1, r2 = 5, 6
    f1 = _forge(*_true_blinds(r1, forbidden=(ABSENT,)), r1, forbidden=(ABSENT,), k_r=k_r, k_a=k_a)
    f2 = _forge(*_true_blinds(r2, forbidden=(2,)), r2, forbidden=(2,), k_r=k_r, k_a=k_a)
    assert extract(f1, f2) == X
    # the real prover, same seed
    base = prove_none_of(X, PUB, HELD, HAND, [ABSENT], DECK, CTX, insecure_test_seed=seed)
    others = [
        prove_none_of(X, PUB, HELD, HAND, [2], DECK, CTX, insecure_test_seed=seed),
        prove_none_of(
            X, PUB, HELD, HAND, [ABSENT], DECK, CTX.with_step(3), insecure_test_seed=seed
        ),
        prove_none_of(X, PUB, HELD[:4], HAND[:4], [ABSENT], DECK, CTX, insecure_test_seed=seed),
        # a mistaken handle (a proof that will not verify) still draws other nonces
        prove_none_of(X, PUB, HELD, (*HAND[:4], 48), [ABSENT], DECK, CTX, insecure_test_seed=seed),
    ]
    for o in others:
        assert o.s_r != base.s_r
        assert extract(base, o) != X
        assert not {p.data for p in o.ps + o.qs} & {p.data for p in base.ps + base.qs}
    again = prove_none_of(X, PUB, HELD, HAND, [ABSENT], DECK, CTX, insecure_test_seed=seed)
    assert again == base  # the very same statement: the very same proof, nothing new


def _face52(k: int):
    return index_face(k, 52)


def test_slave_gift_proof_costs_and_size_do_not_depend_on_the_lowest_given_card():
    """Slave, 4 seats: 13 cards, 2 given, 11 others.  For every lowest given card of a true
    gift, the same size, the same operation counts to make, decode and check.  Also pins
    the numbers the module docstring and design.md quote for this gift."""
    rule = SimpleNamespace(size=52, _face=_face52)
    st = SimpleNamespace(order="slave", given=(0, 1), rest=tuple(range(2, 13)))
    pad_to, pad_with = _padding(rule, st)  # type: ignore[arg-type]
    key = ORDERS["slave"]
    keys = [key(_face52(k)) for k in range(52)]
    assert pad_to == 52 - 11
    by_key = sorted(range(52), key=lambda k: keys[k])
    counts = set()
    for low_pos in (11, 20, 35, 50):  # the lowest given card's place in the order
        forbidden = by_key[low_pos:]
        rest = by_key[low_pos - 11 : low_pos]
        held = _hand(rest)
        COUNTERS.reset()
        proof = prove_none_of(
            X, PUB, held, rest, forbidden, DECK, CTX, pad_to=pad_to, pad_with=pad_with
        )
        made = COUNTERS.snapshot()
        raw = proof.encode()
        COUNTERS.reset()
        decoded = InequalityProof.decode(raw, len(rest), pad_to)
        verify_none_of(PUB, held, forbidden, DECK, decoded, CTX, pad_to=pad_to, pad_with=pad_with)
        checked = COUNTERS.snapshot()
        counts.add((len(raw), tuple(made.items()), tuple(checked.items())))
    assert len(counts) == 1
    ((size, _, checked),) = counts
    assert size == 32 * (41 + 11) + 96
    assert dict(checked)["mul"] == 2 * 41 + 3 * 11 + 1 == 116


# ---- the verifier's error surface -----------------------------------------------------------


def test_random_corruptions_raise_only_the_two_crypto_errors():
    """A peer's bytes, corrupted at random (several bytes at once, or scalars set to 0 or
    L - 1): decoding and checking raise InvalidEncoding or InvalidProof, never another
    exception, and nothing corrupted verifies."""
    rng = random.Random(20261202)
    hand, forbidden = HAND[:3], [ABSENT, 50]
    held = HELD[:3]
    raw = prove_none_of(X, PUB, held, hand, forbidden, DECK, CTX).encode()
    scalar_at = 32 * (len(hand) + len(forbidden))
    for trial in range(120):
        bad = bytearray(raw)
        if trial % 4 == 0:  # a scalar field set to 0 or L - 1
            at = scalar_at + 32 * rng.randrange(3)
            bad[at : at + 32] = rng.choice([0, L - 1]).to_bytes(32, "little")
        else:
            for _ in range(rng.randrange(1, 4)):
                bad[rng.randrange(len(bad))] ^= 1 << rng.randrange(8)
        if bytes(bad) == raw:
            continue
        with pytest.raises((InvalidEncoding, InvalidProof)):
            proof = InequalityProof.decode(bytes(bad), len(hand), len(forbidden))
            verify_none_of(PUB, held, forbidden, DECK, proof, CTX)


def test_a_memo_scope_changes_no_verdict():
    """``slaiga verify`` checks inside :func:`crypto.memo.remembering`: products and points
    remembered from an honest proof do not let a forgery built from its parts through."""
    honest = prove_none_of(X, PUB, HELD, HAND, [ABSENT], DECK, CTX)
    r = 4242
    ps, qs = _true_blinds(r)
    with remembering():
        verify_none_of(PUB, HELD, [ABSENT], DECK, honest, CTX)
        for _ in range(2):
            _refused(honest)
            _refused(dataclasses.replace(honest, ps=(ps[0],)))
            with pytest.raises(InvalidProof, match="forbidden card"):
                verify_none_of(PUB, HELD, [HELD_V], DECK, _forge(ps, qs, r), CTX)
            shifted = list(qs)
            shifted[2] = add(qs[2], G)
            _refused(_forge(ps, shifted, r))
        verify_none_of(PUB, HELD, [ABSENT], DECK, honest, CTX)
