"""Obligations: every step of a game that needs hidden information or chance.

The engine never peeks at a face it may not see and never draws randomness
itself. When the rules need one of those, the game states an *obligation* and
waits; a ``Dealer`` discharges it and the answer comes back as an input
(OpenSpiel's chance nodes are the model). Two dealers implement the same
contract: the trusted ``LocalDealer`` in ``engine.dealer`` and, on a real
table, the mental-poker dealer in ``p2p``, which turns each obligation into a
verified protocol step between the peers.

How each need of the four games maps onto the kinds below:

=====================================  ==========================================
need                                   obligation
=====================================  ==========================================
private deal of every hand at once     ``Deal(((seat, hand), ...))``
private deal of one hand               ``Reveal(hand, to={seat})``
public reveal, face-up draw pile top   ``Reveal(handles, to=None)``
show a hand to one seat (miss check)   ``Reveal(hand, to={attacker})``
look at the next 6 pile cards          ``Reveal(pile[:6], to={seat})``
transfer a card between seats          ``Transfer(handle, src, dst)``
insert into a pile at a position       none: locations are public, and the
                                       identity stays known only to those who
                                       knew it (a zone move in the engine)
joint reshuffle of a pile              ``Shuffle(handles)``
blind pick from a hand                 ``JointRandom(len(hand))``, then
                                       ``Transfer``
proofs about hidden cards              ``Prove(statement)``
dice                                   ``Roll(count)``
=====================================  ==========================================

Answers, by kind (``answer_type``): ``Reveal``, ``Deal`` and ``Transfer`` answer with a
``dict`` from handle to ``Card`` holding the faces *this engine instance* may
learn (all of them for the omniscient local dealer, only the entitled ones on
a real peer); ``Shuffle`` and ``Prove`` answer ``None`` (a false proof makes
the dealer raise ``FalseClaim``); ``Roll`` answers a tuple of die faces and
``JointRandom`` an ``int`` in ``range(bound)``.

Location and knowledge are separate. A handle's zone is public and moves
freely; who may *see* its face only grows (``Reveal``, ``Transfer``) until a
``Shuffle`` clears it. So a card can physically come back to a seat that
already knows it (a penalty card placed in the draw pile and drawn again by
its giver) with no new obligation. A cryptographic dealer must therefore
track, per card, which seats can open its current ciphertext, and re-key a
card (re-mask it and privately reveal it afresh) before any reveal or proof
that would otherwise open it to seats outside its audience; the
mental-poker game rule in ``p2p.table.game_rule`` does this.

Statements are data, so they can go into a signed record and be evaluated by
any verifier. Each has ``holds(face_of)`` for dealers that know the faces.

Proof shapes. A dealer proves statements of exactly three *shapes*, defined
here: ``AtLeastInSet`` (at least t of these cards have a face in a set: a CDS
threshold proof), ``NoneOfFace`` (none of these cards is this face: one
inequality proof about them all) and ``HighestGiven`` (checked by one receiver).
Every statement reduces to one of them through ``Statement.shape()``, so a
game may define its own statements (Slave's ``LacksCard``, Slaiga's
``AtLeastOfSuit``) and no dealer needs to know them: a sixth game with a new
statement needs no change in ``p2p``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from engine.cards import JOKER, ORDERS, RANKS, SUIT_NAMES, SUITS, Card

FaceOf = Callable[[int], Card]

ALL_FACES: frozenset[Card] = frozenset([Card(r, s) for s in SUITS for r in RANKS] + [JOKER])
"""Every face a card can have (the 52 standard faces and the joker)."""


def faces_where(pred: Callable[[Card], bool]) -> frozenset[Card]:
    """The faces of ``ALL_FACES`` for which ``pred`` holds."""
    return frozenset(f for f in ALL_FACES if pred(f))


# ---- statements about hidden cards --------------------------------------------


@dataclass(frozen=True, slots=True)
class Statement:
    """A claim by ``seat`` about cards it holds, provable without revealing them."""

    seat: int

    def holds(self, face_of: FaceOf) -> bool:  # pragma: no cover - abstract
        raise NotImplementedError

    def shape(self) -> Statement:
        """This statement as one of the three proof shapes (see the module docstring)."""
        raise NotImplementedError(f"{type(self).__name__} has no proof shape")


@dataclass(frozen=True, slots=True)
class AtLeastInSet(Statement):
    """Proof shape: at least ``at_least`` of ``handles`` have a face in ``faces``."""

    handles: tuple[int, ...]
    faces: frozenset[Card]
    at_least: int

    def holds(self, face_of: FaceOf) -> bool:
        return sum(1 for h in self.handles if face_of(h) in self.faces) >= self.at_least

    def shape(self) -> Statement:
        return self

    def __str__(self) -> str:
        return (
            f"seat {self.seat} holds at least {self.at_least} of {len(self.handles)} cards "
            f"in a set of {len(self.faces)} faces"
        )


@dataclass(frozen=True, slots=True)
class NoneOfFace(Statement):
    """Proof shape: none of ``handles`` is ``face``."""

    handles: tuple[int, ...]
    face: Card

    def holds(self, face_of: FaceOf) -> bool:
        return all(face_of(h) != self.face for h in self.handles)

    def shape(self) -> Statement:
        return self

    def __str__(self) -> str:
        return f"seat {self.seat} does not hold {self.face} among {len(self.handles)} cards"


@dataclass(frozen=True, slots=True)
class FewerOfSuit(Statement):
    """Fewer than ``limit`` of ``handles`` are of ``suit`` (Honest Slaiga's miss).

    Proved with a threshold proof: at least ``len(handles) - limit + 1`` of the
    cards are *not* of the suit.
    """

    handles: tuple[int, ...]
    suit: int
    limit: int

    def holds(self, face_of: FaceOf) -> bool:
        return sum(1 for h in self.handles if face_of(h).suit == self.suit) < self.limit

    def shape(self) -> Statement:
        # at most limit-1 of the suit: at least n-limit+1 cards are of another suit
        others = faces_where(lambda f: f.suit != self.suit)
        return AtLeastInSet(self.seat, self.handles, others, len(self.handles) - self.limit + 1)

    def __str__(self) -> str:
        return (
            f"seat {self.seat} holds fewer than {self.limit} {SUIT_NAMES[self.suit]} "
            f"among {len(self.handles)} cards"
        )


@dataclass(frozen=True, slots=True)
class HighestGiven(Statement):
    """The ``given`` cards rank at least as high as every card in ``rest``.

    Slave's exchange: SLAVE gives KING its highest cards. Verified by the
    receiver alone, who is shown the given faces as part of the proof (the
    transfers follow it): each card of ``rest`` is lower than the lowest given
    card under the named ``order``. Other seats must not verify it, since the
    proof would tell them that lowest face.
    """

    given: tuple[int, ...]
    rest: tuple[int, ...]
    order: str
    verifier: int

    def holds(self, face_of: FaceOf) -> bool:
        key = ORDERS[self.order]
        if not self.given:
            return True
        low = min(key(face_of(h)) for h in self.given)
        return all(key(face_of(h)) < low for h in self.rest)

    def shape(self) -> Statement:
        return self

    def __str__(self) -> str:
        return f"seat {self.seat} gave its {len(self.given)} highest card(s) by {self.order} order"


@dataclass(frozen=True, slots=True)
class InSet(Statement):
    """Card ``handle`` is one of ``faces`` (a CDS OR-proof)."""

    handle: int
    faces: frozenset[Card]

    def holds(self, face_of: FaceOf) -> bool:
        return face_of(self.handle) in self.faces

    def shape(self) -> Statement:
        return AtLeastInSet(self.seat, (self.handle,), self.faces, 1)

    def __str__(self) -> str:
        return f"seat {self.seat}'s card #{self.handle} is one of {len(self.faces)} faces"


# ---- obligations -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Obligation:
    """Base class. ``reason`` is a short human note for logs."""


@dataclass(frozen=True, slots=True)
class Shuffle(Obligation):
    """Shuffle these handles jointly: their faces are permuted secretly.

    Afterwards nobody knows any of their faces, whoever knew them before.
    """

    handles: tuple[int, ...]
    reason: str = "shuffle"


@dataclass(frozen=True, slots=True)
class Reveal(Obligation):
    """Reveal the faces of ``handles`` to the seats in ``to`` (``None``: everyone)."""

    handles: tuple[int, ...]
    to: frozenset[int] | None = None
    reason: str = "reveal"

    @property
    def public(self) -> bool:
        return self.to is None


@dataclass(frozen=True, slots=True)
class Deal(Obligation):
    """Reveal each hand to its own seat: ``hands`` pairs a seat with its handles.

    It means what one private ``Reveal(hand, to={seat})`` per pair, in order, means;
    stated at once, a table deals every hand in one round instead of one round a
    hand (every seat's tokens for all the cards of the others in one entry)."""

    hands: tuple[tuple[int, tuple[int, ...]], ...]
    reason: str = "deal"

    @property
    def handles(self) -> tuple[int, ...]:
        """Every dealt handle, hand after hand."""
        return tuple(h for _, hand in self.hands for h in hand)


@dataclass(frozen=True, slots=True)
class Transfer(Obligation):
    """Move ``handle`` from seat ``src`` to seat ``dst``; ``dst`` learns its face."""

    handle: int
    src: int
    dst: int
    reason: str = "transfer"


@dataclass(frozen=True, slots=True)
class Prove(Obligation):
    """Have the statement proved by its seat; a false one raises ``FalseClaim``."""

    statement: Statement
    reason: str = "proof"


@dataclass(frozen=True, slots=True)
class Roll(Obligation):
    """Roll ``count`` fair dice with ``sides`` sides jointly, for ``seat``."""

    seat: int
    count: int
    sides: int = 6
    reason: str = "roll"


@dataclass(frozen=True, slots=True)
class JointRandom(Obligation):
    """A uniform integer in ``range(bound)`` that no seat can bias (blind picks)."""

    bound: int
    reason: str = "random"


def who_learns(ob: Reveal | Deal | Transfer, all_seats: int) -> dict[int, int]:
    """For each handle ``ob`` shows, the bit mask of the seats that learn its face
    (``all_seats``: the mask of every seat, for a public reveal)."""
    if isinstance(ob, Transfer):
        return {ob.handle: 1 << ob.dst}
    if isinstance(ob, Deal):
        return {h: 1 << seat for seat, hand in ob.hands for h in hand}
    mask = all_seats if ob.to is None else sum(1 << s for s in ob.to)
    return dict.fromkeys(ob.handles, mask)


def answer_type(ob: Obligation) -> type | None:
    """The Python type of the answer a dealer must give to ``ob``."""
    if isinstance(ob, Reveal | Deal | Transfer):
        return dict
    if isinstance(ob, Roll):
        return tuple
    if isinstance(ob, JointRandom):
        return int
    return None
