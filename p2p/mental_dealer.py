"""A mental-poker ``Dealer`` with no trusted party, sans-I/O, all seats in one process.

This module shows that the engine's obligation interface (``engine.obligations``)
suits a dealer in which nobody knows the cards: ``MentalTable`` holds, *per seat*,
that seat's secret key share and what that seat has learnt, and runs every
protocol step of the Barnett-Smart card protocol (Barnett and Smart, "Mental
poker revisited", IMA 2003) honestly for each seat; every proof a seat makes is
verified by every other seat that the step concerns.  ``SeatDealer(table, seat)``
is the ``engine.dealer.Dealer`` of *one* seat's engine instance: it hands that
engine only the faces its seat may learn.

Why one table for many engines: every seat's engine runs the same game on the
same actions, so each hits the same sequence of obligations.  The table runs
the protocol step for obligation ``i`` once, when the first engine asks for it,
records every seat's share of the answer, and gives each later engine its own
share.  It checks that every engine asked for the *identical* obligation at
step ``i``; a divergence means game code branched on something one instance
knows and another does not, and raises ``ObligationMismatch``.

How each obligation becomes protocol steps (``Context(table, game, step, seat)``
binds every proof; step 0 is the key set-up):

* key set-up: each seat draws ``x_j`` and publishes ``x_j G`` with a Schnorr
  proof (``crypto.keys``), verified by all others; the joint key is the sum.
  Handle ``h`` starts as the public masking ``(G, M + PK)`` of its card
  encoding (``crypto.elgamal.public_mask``), so the ordered deck is public.
* ``Shuffle(handles)``: every seat in turn permutes and re-masks the pile with
  a Terelius-Wikstrom proof (commitment form); every other seat verifies all
  the others' shuffles in one batch (``crypto.shuffle_proof_tw_batch``) before
  anything is revealed, and on failure re-checks each to name the culprit.
* ``Reveal(handles, to=None)``: each seat whose token is not yet public
  publishes its reveal tokens with one batched DLEQ proof, verified by all.
* ``Reveal(handles, to=S)``: seats outside ``S`` publish their tokens (a token
  without the receiver's own share opens nothing); a seat in ``S`` sends its
  tokens only to the other receivers.  Each receiver unmasks with its secret.
* ``Transfer(h, src, dst)``: ``src`` re-masks ``h`` with a remask proof
  verified by all (the old tokens no longer open it), then a private reveal to
  ``dst``.
* ``Prove(statement)``: the statement's seat builds CDS OR/threshold proofs
  (``crypto.hand_proofs``) over its held cards ``X = c2 - sum(other tokens)``;
  every other seat verifies.  ``NoneOfFace`` ("none of my cards is ``face``")
  instead uses one Camenisch-Shoup inequality proof per card
  (``crypto.inequality``), constant work per card rather than an OR over the
  other 51 faces.  ``HighestGiven`` is verified by its verifier
  only: the prover first sends the verifier its tokens for the given cards,
  the verifier opens them and takes the lowest given face ``v`` under the
  named order, and the prover shows every other card of its hand lies in
  "below ``v``" (an AND of ORs).  Nobody else learns ``v``.
* ``Roll`` / ``JointRandom``: commit-reveal joint randomness (``crypto.commit``);
  each reveal is checked against its own commitment; values by rejection
  sampling, so dice are unbiased.

Faces: engine ``Card`` faces are mapped explicitly to crypto card indices.
Handle ``h`` is crypto index ``k`` where ``deck[h]`` is the face of index ``k``
and copies of a face take that face's indices in order (two copies in the
104-card deck are distinct encodings with equal faces).

A seat that breaks the protocol -- a wrong token, a bad shuffle or remask, a
hand proof that does not verify, or a commitment it does not open -- makes
the verifying seats raise ``DealerCheat`` naming it (a subclass of the engine's
``FalseClaim``, which a false ``Prove`` is meant to raise).  ``cheats`` lets
tests make a seat misbehave once, at its first chance, in a named way.
"""

from __future__ import annotations

import hashlib
import secrets
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from crypto.commit import NONCE_BYTES, JointStream, check_reveals, commit
from crypto.deck import STANDARD_FACES, Deck, deck_points
from crypto.elgamal import Ciphertext, public_mask
from crypto.errors import CommitmentMismatch, CryptoError, InvalidProof
from crypto.group import COUNTERS, Point, add, mul, random_scalar
from crypto.hand_proofs import (
    CompositeProof,
    HeldCard,
    held_card,
    prove_cards_in_set,
    verify_cards_in_set,
)
from crypto.inequality import prove_none_of, verify_none_of
from crypto.keys import KeyShare, joint_key, make_key_share, verify_key_share
from crypto.reveal import make_tokens, reveal_index, unmask, verify_tokens
from crypto.shuffle import remask_with, shuffle_deck
from crypto.shuffle_proof_tw_batch import (
    ShuffleStatement,
    prove_shuffle_batchable,
    verify_shuffles_batch,
)
from crypto.transcript import Context
from crypto.transfer import start_transfer, verify_transfer
from engine.cards import JOKER, ORDERS, RANKS, SUITS, Card
from engine.errors import BadAnswer, EngineError, FalseClaim
from engine.obligations import (
    AtLeastInSet,
    HighestGiven,
    JointRandom,
    NoneOfFace,
    Obligation,
    Prove,
    Reveal,
    Roll,
    Shuffle,
    Statement,
    Transfer,
)

KEY_STEP = 0
"""Step number of the key set-up; obligation ``i`` (counted from 0) is step ``i + 1``."""

VALUE_BYTES = 32
"""Bytes each seat contributes to joint randomness (256 bits)."""

CHEAT_KINDS = frozenset({"token", "shuffle", "remask", "hand-proof", "commit"})
"""Ways ``cheats`` can make a seat misbehave (once, at its first chance)."""

_JOINT_LABEL = b"slaiga/v1/mental/joint-random"
_SEED_LABEL = b"slaiga/v1/mental/insecure-test-seed"
WIDE_BYTES = 64
SEED_BYTES = 32


# ---- errors ------------------------------------------------------------------------


class DealerCheat(FalseClaim):
    """A seat broke the protocol; ``seat`` is the culprit, ``step`` where it happened."""

    def __init__(self, seat: int, step: int, what: str, detail: str = "") -> None:
        self.step = step
        self.what = what
        self.detail = detail
        super().__init__(seat, f"{what} at step {step}" + (f" ({detail})" if detail else ""))


class ObligationMismatch(EngineError):
    """Two seats' engines asked for different obligations at the same step (a game bug)."""


class CannotProve(EngineError):
    """A proof the protocol cannot carry out (e.g. the prover does not know a card it holds)."""


# ---- faces <-> crypto indices ----------------------------------------------------------


def index_face(index: int, size: int) -> Card:
    """The engine face of crypto card index ``index`` in a deck of ``size`` (crypto.deck)."""
    f = index % STANDARD_FACES if size == 2 * STANDARD_FACES else index
    if f >= STANDARD_FACES:
        return JOKER
    return Card(RANKS[f % len(RANKS)], SUITS[f // len(RANKS)])


def handle_indices(deck_faces: Sequence[Card], size: int) -> tuple[int, ...]:
    """Crypto index of each handle: copies of a face take that face's indices in order."""
    free: dict[Card, list[int]] = {}
    for k in range(size):
        free.setdefault(index_face(k, size), []).append(k)
    out = []
    for h, face in enumerate(deck_faces):
        pool = free.get(face)
        if not pool:
            raise EngineError(f"handle {h}: face {face} has no free card in the {size}-card deck")
        out.append(pool.pop(0))
    return tuple(out)


# ---- one seat ---------------------------------------------------------------------------


class _Randomness:
    """Where one seat's secret randomness comes from: ``secrets``, or a seed.

    The seeded form exists only so that tests can replay a whole game
    (``MentalTable(insecure_seed=...)``); a seed known to anyone else gives
    away every card, so real tables never pass one.
    """

    __slots__ = ("_seed", "_counter")

    def __init__(self, seed: bytes | None, seat: int) -> None:
        self._seed = None if seed is None else seed + seat.to_bytes(8, "little")
        self._counter = 0

    def bytes(self, n: int) -> bytes:
        if self._seed is None:
            return secrets.token_bytes(n)
        self._counter += 1
        block = hashlib.sha512(
            _SEED_LABEL + self._seed + self._counter.to_bytes(8, "little")
        ).digest()
        return block[:n]

    def scalar(self) -> int:
        if self._seed is None:
            return random_scalar()
        return random_scalar(self.bytes(WIDE_BYTES))

    def seed(self) -> bytes | None:
        """The ``insecure_test_seed`` for crypto provers (``None``: fresh randomness)."""
        return None if self._seed is None else self.bytes(SEED_BYTES)


class _Seat:
    """What one seat holds: its secret share, the faces it learnt, tokens sent to it."""

    __slots__ = ("seat", "secret", "share", "known", "private_tokens", "cheat", "rand")

    def __init__(self, seat: int, context: Context, cheat: str | None, rand: _Randomness) -> None:
        self.seat = seat
        self.rand = rand
        self.secret = rand.scalar()
        self.share = make_key_share(context, self.secret, insecure_test_seed=rand.seed())
        self.known: dict[int, int] = {}  # handle -> crypto index
        self.private_tokens: dict[int, dict[int, Point]] = {}  # handle -> seat -> token
        self.cheat = cheat

    @property
    def public(self) -> Point:
        return self.share.public

    def take_cheat(self, kind: str) -> bool:
        """True once, if this seat was told to cheat this way."""
        if self.cheat == kind:
            self.cheat = None
            return True
        return False

    def forget(self, h: int) -> None:
        self.known.pop(h, None)
        self.private_tokens.pop(h, None)


@dataclass
class _Step:
    """The record of one obligation: every seat's answer, or the error it raised."""

    ob: Obligation
    answers: list[Any]
    error: BaseException | None = None


@dataclass
class TableStats:
    """Counts for reports: obligations by kind and group operations by obligation kind."""

    obligations: Counter[str] = field(default_factory=Counter)
    statements: Counter[str] = field(default_factory=Counter)
    rekeys: int = 0
    ops: dict[str, Counter[str]] = field(default_factory=dict)

    def add_ops(self, kind: str, before: Mapping[str, int]) -> None:
        after = COUNTERS.snapshot()
        c = self.ops.setdefault(kind, Counter())
        for name, v in after.items():
            c[name] += v - before[name]


# ---- the table --------------------------------------------------------------------------


class MentalTable:
    """All seats of one game, each acting honestly (unless told to cheat) and verifying."""

    def __init__(
        self,
        seats: int,
        deck_faces: Sequence[Card],
        table_id: bytes = b"mental-table",
        game: int = 1,
        cheats: Mapping[int, str] | None = None,
        insecure_seed: bytes | None = None,
    ) -> None:
        cheats = dict(cheats or {})
        for s, kind in cheats.items():
            if kind not in CHEAT_KINDS or not 0 <= s < seats:
                raise EngineError(f"bad cheat {kind!r} for seat {s}; kinds: {sorted(CHEAT_KINDS)}")
        self.n = seats
        self.table_id = table_id
        self.game = game
        self.stats = TableStats()
        self.steps: list[_Step] = []
        self._cursor = [0] * seats
        before = COUNTERS.snapshot()
        self.seats = [
            _Seat(s, self._ctx(KEY_STEP, s), cheats.get(s), _Randomness(insecure_seed, s))
            for s in range(seats)
        ]
        for share in (p.share for p in self.seats):
            for v in range(seats):
                if v != share.seat:
                    self._verify_key(share, v)
        self.joint_key = joint_key([p.public for p in self.seats])
        self.size = len(deck_faces)
        self.deck: Deck | None = deck_points(self.size) if self.size else None
        self.index_of_handle = handle_indices(deck_faces, self.size) if self.size else ()
        self.cts: list[Ciphertext] = [
            public_mask(self.deck.points[k], self.joint_key)  # type: ignore[union-attr]
            for k in self.index_of_handle
        ]
        self.public_tokens: list[dict[int, Point]] = [{} for _ in range(self.size)]
        self.stats.add_ops("keys", before)

    # ---- helpers ------------------------------------------------------------------------

    def _ctx(self, step: int, seat: int) -> Context:
        return Context(self.table_id, self.game, step, seat)

    def _verify_key(self, share: KeyShare, verifier: int) -> None:
        try:
            verify_key_share(share, self._ctx(KEY_STEP, share.seat))
        except CryptoError as exc:
            raise DealerCheat(share.seat, KEY_STEP, "bad key share", str(exc)) from exc

    def face(self, index: int) -> Card:
        return index_face(index, self.size)

    def _indices_where(self, pred) -> list[int]:
        return [k for k in range(self.size) if pred(self.face(k))]

    def oracle_face(self, h: int) -> Card:
        """Omniscient face of handle ``h`` from every secret: for tests only, never for play."""
        ct = self.cts[h]
        point = unmask(ct, [mul(p.secret, ct.c1) for p in self.seats])
        return self.face(reveal_index(point, self.deck))  # type: ignore[arg-type]

    def known_faces(self, seat: int) -> dict[int, Card]:
        """The faces ``seat`` has learnt through the protocol (its own knowledge)."""
        return {h: self.face(k) for h, k in self.seats[seat].known.items()}

    # ---- the dealer seam -------------------------------------------------------------------

    def fulfil(self, seat: int, ob: Obligation) -> Any:
        """``seat``'s engine asks for its next obligation; answer with its share."""
        i = self._cursor[seat]
        if i == len(self.steps):
            self._run(ob)
        rec = self.steps[i]
        if rec.ob != ob:
            raise ObligationMismatch(
                f"step {i + 1}: seat {seat}'s engine asks for {ob!r}, "
                f"but the table ran {rec.ob!r} for an earlier seat"
            )
        self._cursor[seat] = i + 1
        if rec.error is not None:
            raise rec.error
        return rec.answers[seat]

    def cursors(self) -> tuple[int, ...]:
        return tuple(self._cursor)

    def _run(self, ob: Obligation) -> None:
        step = len(self.steps) + 1
        kind = type(ob).__name__
        self.stats.obligations[kind] += 1
        before = COUNTERS.snapshot()
        rec = _Step(ob, [None] * self.n)
        self.steps.append(rec)
        try:
            if isinstance(ob, Shuffle):
                self._shuffle(step, ob.handles)
            elif isinstance(ob, Reveal):
                to = None if ob.to is None else frozenset(ob.to)
                self._check_handles(ob.handles)
                self._reveal(step, ob.handles, to)
                for s in range(self.n):
                    if to is None or s in to:
                        rec.answers[s] = {h: self.face(self.seats[s].known[h]) for h in ob.handles}
                    else:
                        rec.answers[s] = {}
            elif isinstance(ob, Transfer):
                self._transfer(step, ob)
                rec.answers = [{} for _ in range(self.n)]
                rec.answers[ob.dst] = {ob.handle: self.face(self.seats[ob.dst].known[ob.handle])}
            elif isinstance(ob, Prove):
                self._prove(step, ob.statement)
            elif isinstance(ob, Roll):
                stream = self._joint(step)
                value = tuple(stream.below(ob.sides) + 1 for _ in range(ob.count))
                rec.answers = [value] * self.n
            elif isinstance(ob, JointRandom):
                if ob.bound < 1:
                    raise BadAnswer(f"joint random bound must be positive, got {ob.bound}")
                rec.answers = [self._joint(step).below(ob.bound)] * self.n
            else:
                raise BadAnswer(f"mental dealer cannot discharge {ob!r}")
        except (EngineError, CryptoError) as exc:
            rec.error = exc
        finally:
            self.stats.add_ops(kind, before)

    def _check_handles(self, handles: Iterable[int]) -> None:
        for h in handles:
            if type(h) is not int or not 0 <= h < self.size:
                raise BadAnswer(f"no card #{h} at this table")

    # ---- shuffle ---------------------------------------------------------------------------

    def _shuffle(self, step: int, handles: Sequence[int]) -> None:
        self._check_handles(handles)
        if len(set(handles)) != len(handles):
            raise BadAnswer(f"shuffle repeats a handle: {handles}")
        if not handles:
            return
        pile = tuple(self.cts[h] for h in handles)
        made: list[ShuffleStatement] = []
        for p in self.seats:  # every seat in turn re-masks and permutes
            ctx = self._ctx(step, p.seat)
            out, witness = shuffle_deck(pile, self.joint_key, insecure_test_seed=p.rand.seed())
            proof = prove_shuffle_batchable(
                pile, out, self.joint_key, witness, ctx, insecure_test_seed=p.rand.seed()
            )
            if p.take_cheat("shuffle"):  # swap in a different card: a substitution
                out = (_substitute(out[0], self.deck, self.joint_key), *out[1:])  # type: ignore[arg-type]
            made.append(ShuffleStatement(pile, tuple(out), self.joint_key, proof, ctx))
            pile = tuple(out)
        for v in range(self.n):  # each seat checks every other seat's shuffle
            self._verify_shuffles([st for st in made if st.context.seat != v], step)
        for h, ct in zip(handles, pile, strict=True):
            self.cts[h] = ct
            self.public_tokens[h] = {}
            for p in self.seats:
                p.forget(h)

    def _verify_shuffles(self, statements: list[ShuffleStatement], step: int) -> None:
        if not statements:
            return
        try:
            verify_shuffles_batch(statements)
        except CryptoError:
            for st in statements:  # name the culprit
                try:
                    verify_shuffles_batch([st])
                except CryptoError as exc:
                    raise DealerCheat(st.context.seat, step, "bad shuffle", str(exc)) from exc
            raise  # pragma: no cover - the batch failed but no single proof did

    # ---- reveal ------------------------------------------------------------------------------

    def _tokens_from(self, p: _Seat, handles: Sequence[int], step: int):
        cts = [self.cts[h] for h in handles]
        tokens, proof = make_tokens(
            p.secret, p.public, cts, self._ctx(step, p.seat), insecure_test_seed=p.rand.seed()
        )
        if p.take_cheat("token"):
            tokens[0] = add(tokens[0], self.joint_key)  # a wrong decryption share
        return cts, tokens, proof

    def _check_tokens(self, p: _Seat, cts, tokens, proof, step: int) -> None:
        try:
            verify_tokens(p.public, cts, tokens, proof, self._ctx(step, p.seat))
        except CryptoError as exc:
            raise DealerCheat(p.seat, step, "bad reveal token", str(exc)) from exc

    def openers(self, h: int, also_public: Iterable[int] = ()) -> set[int]:
        """Seats that can open handle ``h``'s current ciphertext from the tokens they have
        (plus, hypothetically, tokens of ``also_public`` made public)."""
        public = set(self.public_tokens[h]) | set(also_public)
        out = set()
        for p in self.seats:
            have = public | set(p.private_tokens.get(h, ())) | {p.seat}
            if len(have) == self.n:
                out.add(p.seat)
        return out

    def _rekey(self, step: int, h: int, by: int) -> None:
        """Seat ``by`` re-masks ``h`` with a proof verified by all: every token so far
        stops opening it, so a later private reveal reaches exactly its receivers."""
        old = self.cts[h]
        ctx = self._ctx(step, by)
        rand = self.seats[by].rand
        new, proof = start_transfer(
            old, self.joint_key, ctx, rand.scalar(), insecure_test_seed=rand.seed()
        )
        if self.seats[by].take_cheat("remask"):
            new = _substitute(new, self.deck, self.joint_key)  # type: ignore[arg-type]
        for v in range(self.n):
            if v != by:
                try:
                    verify_transfer(old, new, self.joint_key, proof, ctx)
                except CryptoError as exc:
                    raise DealerCheat(by, step, "bad remask", str(exc)) from exc
        self.cts[h] = new
        self.public_tokens[h] = {}
        for p in self.seats:
            p.private_tokens.pop(h, None)
        self.stats.rekeys += 1

    def _reveal(self, step: int, handles: Sequence[int], to: frozenset[int] | None) -> None:
        """Publish or send tokens so that every seat of ``to`` (all if ``None``) can open.

        A private reveal must not let anyone outside ``to`` open the card.  If a
        receiver's token for the current ciphertext is already public (the card
        was shown to another seat before, e.g. handed over and then drawn back),
        publishing the other seats' tokens would open it for everyone, so the
        card is first re-masked by a receiver (a fresh ciphertext, no tokens).
        """
        if to is not None:
            outside = [s for s in range(self.n) if s not in to]
            for h in handles:
                before = self.openers(h)
                if self.openers(h, outside) - before - to:
                    self._rekey(step, h, min(to))
        for p in self.seats:
            need = [h for h in handles if p.seat not in self.public_tokens[h]]
            if to is not None and p.seat in to:
                others = sorted(to - {p.seat})
                need = [
                    h
                    for h in need
                    if any(p.seat not in self.seats[r].private_tokens.get(h, {}) for r in others)
                ]
                if not need:
                    continue
                cts, tokens, proof = self._tokens_from(p, need, step)
                for r in others:  # sealed to the other receivers only
                    self._check_tokens(p, cts, tokens, proof, step)
                    for h, tok in zip(need, tokens, strict=True):
                        self.seats[r].private_tokens.setdefault(h, {})[p.seat] = tok
            elif need:
                cts, tokens, proof = self._tokens_from(p, need, step)
                for v in range(self.n):
                    if v != p.seat:
                        self._check_tokens(p, cts, tokens, proof, step)
                for h, tok in zip(need, tokens, strict=True):
                    self.public_tokens[h][p.seat] = tok
        for p in self.seats:
            if to is None or p.seat in to:
                for h in handles:
                    if h not in p.known:
                        p.known[h] = self._open(p, h, step)

    def _open(self, p: _Seat, h: int, step: int) -> int:
        """Seat ``p`` unmasks handle ``h`` from the tokens it has and its own share."""
        ct = self.cts[h]
        tokens = []
        for j in range(self.n):
            if j == p.seat:
                tokens.append(self.public_tokens[h].get(j) or mul(p.secret, ct.c1))
            elif j in self.public_tokens[h]:
                tokens.append(self.public_tokens[h][j])
            elif j in p.private_tokens.get(h, {}):
                tokens.append(p.private_tokens[h][j])
            else:
                raise CannotProve(f"step {step}: seat {p.seat} lacks seat {j}'s token for #{h}")
        try:
            return reveal_index(unmask(ct, tokens), self.deck)  # type: ignore[arg-type]
        except InvalidProof as exc:  # tokens were verified, so the ciphertext is not a card
            raise DealerCheat(p.seat, step, "card does not open to a card", str(exc)) from exc

    # ---- transfer -----------------------------------------------------------------------------

    def _transfer(self, step: int, ob: Transfer) -> None:
        h = ob.handle
        self._check_handles((h,))
        if not (0 <= ob.src < self.n and 0 <= ob.dst < self.n):
            raise BadAnswer(f"transfer between unknown seats: {ob}")
        old = self.cts[h]
        ctx = self._ctx(step, ob.src)
        src = self.seats[ob.src].rand
        new, proof = start_transfer(
            old, self.joint_key, ctx, src.scalar(), insecure_test_seed=src.seed()
        )
        if self.seats[ob.src].take_cheat("remask"):
            new = _substitute(new, self.deck, self.joint_key)  # type: ignore[arg-type]
        for v in range(self.n):
            if v != ob.src:
                try:
                    verify_transfer(old, new, self.joint_key, proof, ctx)
                except CryptoError as exc:
                    raise DealerCheat(ob.src, step, "bad transfer remask", str(exc)) from exc
        self.cts[h] = new
        self.public_tokens[h] = {}
        for p in self.seats:
            p.private_tokens.pop(h, None)  # the old tokens no longer open the card
        self.seats[ob.dst].known.pop(h, None)
        self._reveal(step, (h,), frozenset((ob.dst,)))

    # ---- hand proofs ------------------------------------------------------------------------------

    def _held(self, prover: int, handles: Sequence[int], step: int) -> list[HeldCard]:
        """``X = c2 - sum(other seats' tokens)`` for each card, from public tokens only.

        A card the prover knows but whose current ciphertext is keyed to another
        seat (it was handed on and came back through a pile, with no Transfer)
        lacks some of those tokens; it is re-keyed to the prover first, which
        tells nobody anything new (only the prover can open the result).
        """
        out = []
        for h in handles:
            toks = self.public_tokens[h]
            missing = [j for j in range(self.n) if j != prover and j not in toks]
            if missing and h in self.seats[prover].known:
                self._reveal(step, (h,), frozenset((prover,)))
                toks = self.public_tokens[h]
                missing = [j for j in range(self.n) if j != prover and j not in toks]
            if missing:
                raise CannotProve(
                    f"step {step}: seats {missing} have not published tokens for card #{h} "
                    f"that seat {prover} holds, so nobody can check a proof about it"
                )
            out.append(held_card(self.cts[h], [toks[j] for j in range(self.n) if j != prover]))
        return out

    def _prover_indices(self, p: _Seat, handles: Sequence[int], step: int) -> list[int]:
        missing = [h for h in handles if h not in p.known]
        if missing:
            raise CannotProve(
                f"step {step}: seat {p.seat} must prove about cards {missing} it has never seen"
            )
        return [p.known[h] for h in handles]

    def _prove(self, step: int, st: Statement) -> None:
        if not 0 <= st.seat < self.n:
            raise BadAnswer(f"statement by unknown seat: {st}")
        self.stats.statements[type(st).__name__] += 1
        st = st.shape()
        if isinstance(st, HighestGiven):
            self._prove_highest(step, st)
            return
        if isinstance(st, NoneOfFace):
            self._prove_lacks(step, st)
            return
        handles, allowed, at_least = self._claim(st)
        self._check_handles(handles)
        if at_least <= 0:
            return  # nothing to prove: the claim holds for any faces
        verifiers = [v for v in range(self.n) if v != st.seat]
        self._prove_in_set(step, st, handles, allowed, at_least, verifiers)

    def _claim(self, st: Statement) -> tuple[tuple[int, ...], list[int], int]:
        """Map a statement onto "at least ``t`` of these cards lie in ``allowed``"."""
        if isinstance(st, AtLeastInSet):
            return st.handles, self._indices_where(lambda f: f in st.faces), st.at_least
        raise CannotProve(f"no hand proof for statement type {type(st).__name__}: {st}")

    def _prove_in_set(
        self,
        step: int,
        st: Statement,
        handles: Sequence[int],
        allowed: list[int],
        at_least: int,
        verifiers: Sequence[int],
    ) -> None:
        p = self.seats[st.seat]
        ctx = self._ctx(step, p.seat)
        if at_least > len(handles) or not allowed:
            raise DealerCheat(p.seat, step, "false claim", f"{st}: cannot hold for any faces")
        held = self._held(p.seat, handles, step)
        indices = self._prover_indices(p, handles, step)
        proof = self._make_hand_proof(p, held, indices, allowed, at_least, ctx, st, step)
        for _v in verifiers:
            try:
                verify_cards_in_set(p.public, held, allowed, at_least, self.deck, proof, ctx)
            except CryptoError as exc:
                raise DealerCheat(
                    p.seat, step, "hand proof does not verify", f"{st}: {exc}"
                ) from exc

    def _make_hand_proof(
        self, p: _Seat, held, indices, allowed, at_least, ctx, st, step
    ) -> CompositeProof:
        if p.take_cheat("hand-proof"):
            # a forged proof: a true claim (every card is some card) passed off as this one
            everything = list(range(self.size))
            return prove_cards_in_set(
                p.secret,
                p.public,
                held,
                indices,
                everything,
                len(held),
                self.deck,
                ctx,
                insecure_test_seed=p.rand.seed(),
            )
        try:
            return prove_cards_in_set(
                p.secret,
                p.public,
                held,
                indices,
                allowed,
                at_least,
                self.deck,
                ctx,
                insecure_test_seed=p.rand.seed(),
            )
        except InvalidProof as exc:  # an honest prover cannot prove a false claim
            raise DealerCheat(p.seat, step, "false claim", f"{st}: {exc}") from exc

    def _prove_lacks(self, step: int, st: NoneOfFace) -> None:
        """Prove ``NoneOfFace`` ("none of my cards is ``face``") with one Camenisch-Shoup
        inequality proof per card and encoding of the face (``crypto.inequality``), under
        one challenge, verified by every other seat: constant work per card instead of an
        OR over every other face."""
        self._check_handles(st.handles)
        forbidden = self._indices_where(lambda f: f == st.face)
        if not st.handles or not forbidden:
            return  # nothing to prove: the claim holds for any faces
        p = self.seats[st.seat]
        ctx = self._ctx(step, p.seat)
        held = self._held(p.seat, st.handles, step)
        indices = self._prover_indices(p, st.handles, step)
        # a forged proof: the same true-looking claim, made for another step (a replay)
        made_for = ctx.with_step(step + 1) if p.take_cheat("hand-proof") else ctx
        try:
            proof = prove_none_of(
                p.secret,
                p.public,
                held,
                indices,
                forbidden,
                self.deck,
                made_for,
                insecure_test_seed=p.rand.seed(),
            )
        except InvalidProof as exc:  # an honest prover cannot prove a false claim
            raise DealerCheat(p.seat, step, "false claim", f"{st}: {exc}") from exc
        for v in range(self.n):
            if v == p.seat:
                continue
            try:
                verify_none_of(p.public, held, forbidden, self.deck, proof, ctx)
            except CryptoError as exc:
                raise DealerCheat(
                    p.seat, step, "hand proof does not verify", f"{st}: {exc}"
                ) from exc

    def _prove_highest(self, step: int, st: HighestGiven) -> None:
        self._check_handles((*st.given, *st.rest))
        if not st.given or not st.rest:
            return
        if st.order not in ORDERS:
            raise CannotProve(f"unknown card order {st.order!r} in {st}")
        p, v = self.seats[st.seat], self.seats[st.verifier]
        self._prover_indices(p, st.given, step)
        if v.seat != p.seat:  # the prover shows the given cards to the verifier only
            need = [
                h
                for h in st.given
                if p.seat not in self.public_tokens[h] and p.seat not in v.private_tokens.get(h, {})
            ]
            if need:
                cts, tokens, proof = self._tokens_from(p, need, step)
                self._check_tokens(p, cts, tokens, proof, step)
                for h, tok in zip(need, tokens, strict=True):
                    v.private_tokens.setdefault(h, {})[p.seat] = tok
            for h in st.given:
                if h not in v.known:
                    v.known[h] = self._open(v, h, step)
            given = [v.known[h] for h in st.given]
        else:
            given = [p.known[h] for h in st.given]
        key = ORDERS[st.order]
        low = min(key(self.face(k)) for k in given)
        allowed = self._indices_where(lambda f: key(f) < low)
        self._prove_in_set(step, st, st.rest, allowed, len(st.rest), [v.seat])

    # ---- joint randomness ----------------------------------------------------------------------------

    def _joint(self, step: int) -> JointStream:
        contexts = {s: self._ctx(step, s).encode() for s in range(self.n)}
        values = {p.seat: p.rand.bytes(VALUE_BYTES) for p in self.seats}
        commitments, nonces = {}, {}
        for p in self.seats:  # commit round
            s = p.seat
            commitments[s], nonces[s] = commit(values[s], contexts[s], p.rand.bytes(NONCE_BYTES))
        reveals = {}
        for p in self.seats:  # reveal round
            value = values[p.seat]
            if p.take_cheat("commit"):
                value = bytes(b ^ 1 for b in value)  # opens to something else
            reveals[p.seat] = (value, nonces[p.seat])
        for _v in range(self.n):  # every seat checks every opening
            try:
                check_reveals(commitments, reveals, contexts)
            except CommitmentMismatch as exc:
                raise DealerCheat(exc.seat, step, "bad commitment opening", str(exc)) from exc
        label = _JOINT_LABEL + self._ctx(step, 0).encode()
        return JointStream.from_reveals(label, {s: r[0] for s, r in reveals.items()})


def _substitute(ct: Ciphertext, deck: Deck, joint_key: Point) -> Ciphertext:
    """A ciphertext of some other card than ``ct`` holds (for cheating tests)."""
    shifted = Ciphertext(ct.c1, add(ct.c2, deck.points[0]))
    return remask_with(shifted, joint_key, random_scalar())


class SeatDealer:
    """The ``engine.dealer.Dealer`` of one seat's engine instance at a ``MentalTable``."""

    def __init__(self, table: MentalTable, seat: int) -> None:
        if not 0 <= seat < table.n:
            raise EngineError(f"no seat {seat} at a table of {table.n}")
        self.table = table
        self.seat = seat

    def fulfil(self, ob: Obligation) -> Any:
        return self.table.fulfil(self.seat, ob)
