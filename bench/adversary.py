"""``slaiga bench adversary``: real tables where one seat deviates, checked on every game.

Each game is a real table of one of the five games (Slave, Slåjens, Slaiga,
Honest Slaiga, Aight of Spaides) with every seat's own protocol code
(:mod:`p2p.table.local_table`'s per-seat records and drivers).  One seat, the
*deviator*, plays honestly until a random entry of its own, and there does
one of these (``kind``):

* ``field``: changes one field of its body (a card, a count or a seat inside
  an action; a proof byte, a token, a pile, a commitment opening, a flag, the
  signed result) or of the entry around it (seat, step, previous hash, table);
* ``raw``: signs entry bytes with one byte changed (they may not decode);
* ``kind``: sends a body of another kind (taken from this table's record);
* ``replay``: resends an older entry of its own verbatim, or re-signs an older
  body of its own for the current step;
* ``foreign``: resends an entry signed at an earlier table of the same
  players (its own, or relays another seat's: identities live long);
* ``equivocate``: signs two different valid entries for one step and sends
  each to different peers (the others relay, as the mesh does);
* ``lie``: an action the table's seatless engine accepts now but the
  deviator's own cards make false (it surfaces at a later reveal);
* ``withhold``: sends its entry to only some peers (the others get it relayed);
* ``stop``: stops for good.

Delivery is a small in-memory mesh with the node's rules (:mod:`p2p.net.node`):
every accepted entry is relayed to the seats other than its author and the
one it came from; a chain break fetches the whole record of the relay and the
author; an equivocation's two envelopes are spread to every seat; a seat that
convicts keeps the refused signed entry as evidence, spreads its last steps
and stops.

The property, checked on every game:

* an entry that is still valid is accepted and the game goes on
  (``accepted_valid``; an action's validity is judged by the deviator's own
  engine, which knows its cards);
* otherwise every honest seat convicts the deviator (``convicted``) at the
  same step, with the signed entry as evidence;
* a seat that stops is named as silent, never as a cheat (``silence``);
* no honest seat is ever named (``wrong_blame``);
* nothing raises anything but a :class:`p2p.errors.P2PError` (``crashes``)
  and no table waits on an honest seat (``hangs``);
* ``slaiga verify`` (:func:`p2p.record.verify.verify_record_file`) on every honest
  seat's record file (its accepted entries, then the evidence it kept)
  reaches the same verdict, seat and step (``verify_mismatch``).

Failures also counted: ``missed`` (an invalid entry accepted to the end),
``refused_valid`` (a valid entry refused), ``split`` (honest seats disagree).
A complaint that nobody can settle (a ``Dispute``, in versions that had one) is counted
as ``dispute``.  Every failure is listed with its table seed: ``--replay SEED``
plays that table again with all its forked games, and ``--replay SEED --turn N``
only the games forked at the deviator's turn N (a failure's detail ends
``(turn N)``), minutes instead of an hour for a long table.  A run with
``--game`` draws each table's game among those: its failures replay with the
same ``--game`` options (or only the failure's game).

Forked games.  With ``--fork-rate`` above 0 (the default) each table is the
parent of its deviating games: it plays honestly to its end, and at each of the
deviator's turns it forks this process (``os.fork``) for each of
``--forks-per-turn`` games; the child deviates (a kind drawn at random), plays
that game to its conclusion, judges it as above (``slaiga verify`` on every honest
seat's file included) and sends its report back (:meth:`Table._spawn`).  A
deviation that changes no seat's record, or leaves every seat where the honest
entry would, goes on as the parent's game, and ends as the parent ends
(:meth:`Table.judge_parent`).  docs/design.md says why a forked prefix is the same
game as one replayed.  ``tables`` counts tables, ``games`` every deviating game;
``verified_files`` the record files checked by ``slaiga verify`` itself.

``--procs`` plays over peer processes instead (``cli.net`` bot peers on
loopback; the deviating seat runs :mod:`bench.adversary_peer`), including
*twins*: two processes running one seat with the same keys and state.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import hashlib
import json
import os
import pickle
import random
import secrets
import signal
import sys
import tempfile
import time
import traceback
from collections import Counter, deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgpack

from bench import help_text
from bench.memo import Memo, active_memo, memo, seeded
from crypto.identity import IdentityKey
from crypto.seal import SealKey
from engine import registry
from engine.errors import EngineError
from engine.players import BotPlayer
from p2p.errors import (
    BrokenChain,
    CheatDetected,
    Equivocation,
    ForgedSignature,
    P2PError,
)
from p2p.record.chain import Record, Status, entry_signing_input
from p2p.record.store import RecordFile
from p2p.record.verify import verify_record_file
from p2p.table.forming import table_rule
from p2p.table.game_rule import ACTION_KIND, ActionBody, SeatKeys
from p2p.table.local_table import game_genesis
from p2p.table.seat import SeatDriver, rule_factory
from p2p.wire import Body, Entry, Signed, decode_body, encode_body

GAMES = ("slave", "slajens", "slaiga", "honest-slaiga", "aight-of-spaides")
SEATS = {"slave": (4,)}
SEATS_DEFAULT = (3, 4)
OPTIONS: dict[str, dict[str, Any]] = {"slave": {"games": 1}, "slajens": {"rounds": 3}}
"""Short games: a deviation is as likely early as late in them."""
TURNS = {"slave": 30, "slajens": 36, "slaiga": 100, "honest-slaiga": 100, "aight-of-spaides": 80}
"""About the deviator's turns in a game of each (measured): the table's own deviation
comes at a turn drawn below this, so that most tables reach it."""
KINDS = (
    "field",
    "raw",
    "kind",
    "replay",
    "foreign",
    "equivocate",
    "lie",
    "withhold",
    "stop",
)
FAILURES = (
    "wrong_blame",
    "crashes",
    "hangs",
    "verify_mismatch",
    "missed",
    "refused_valid",
    "split",
    "unconvicted",
)
DEFAULT_SECONDS = 60.0
DEFAULT_FORK_RATE = 1.0
DEFAULT_FORKS_PER_TURN = 8
"""A table's own honest game costs most of a run (measured: a forked game's child takes
~30 ms, an Honest Slaiga table 5-60 s); eight games per deviator turn share it."""
MAX_ENTRIES = 20_000
CHILD_SECONDS = 600
"""A forked game still running after this long is killed and counted as a hang."""
SAMPLE_KEPT = 20


def _sign(identity: IdentityKey, entry: Entry) -> Signed:
    raw = encode_body(entry)
    return Signed(raw, identity.sign(entry_signing_input(raw)))


def _sign_raw(identity: IdentityKey, raw: bytes) -> Signed:
    return Signed(raw, identity.sign(entry_signing_input(raw)))


def _entry_of(signed: Signed) -> Entry | None:
    try:
        entry = decode_body(signed.entry, Entry)
    except P2PError:
        return None
    return entry if isinstance(entry, Entry) else None


@dataclass
class Deviation:
    """One deviation: what the deviator sends, to whom, and what it should cause."""

    kind: str
    detail: str
    step: int
    sends: list[tuple[Signed, tuple[int, ...]]]
    """(envelope, target slots) in order."""
    believe: Signed | None = None
    """The envelope the deviator's own record takes (``None``: it keeps its honest one)."""
    must_convict: bool | None = None
    """True: invalid (a conviction is owed); False: valid (it must be accepted);
    None: either is right (e.g. a commitment that is never opened)."""
    innocent: int | None = None
    """A seat whose foreign entry the deviator relays: it must never be named."""


@dataclass
class GameReport:
    seed: int
    game: str
    seats: int
    kind: str
    detail: str
    outcome: str
    failures: list[str] = field(default_factory=list)
    note: str = ""
    forked: bool = False

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


class _Crash(Exception):
    """Something other than a P2PError escaped a seat's code (wrapped with its seat)."""

    def __init__(self, slot: int, exc: BaseException) -> None:
        super().__init__(f"seat {slot}: {type(exc).__name__}: {exc}")
        self.slot = slot
        self.text = "".join(traceback.format_exception(exc))[-1500:]


class Circle:
    """Players who meet at table after table with the same long-lived keys.

    With a ``seed``, the keys come from it and so does the circle's previous table
    (an honest table of the same players, played when a deviation first wants its
    entries): a table seed then fixes every byte of its game (:func:`circle_for`)."""

    def __init__(self, size: int = 4, seed: int | None = None) -> None:
        self.seed = seed
        if seed is None:
            self.ids = [IdentityKey.generate() for _ in range(size)]
            self.seals = [SealKey.generate() for _ in range(size)]
        else:
            rng = random.Random(f"slaiga bench circle {seed}")
            self.ids = [IdentityKey.from_private_bytes(rng.randbytes(32)) for _ in range(size)]
            self.seals = [SealKey.from_private_bytes(rng.randbytes(32)) for _ in range(size)]
        self.previous: list[Signed] = []
        """Every envelope of the circle's previous table (for cross-table replays)."""
        self._built = seed is None

    def previous_pool(self) -> list[Signed]:
        """The previous table's envelopes (played now, seeded, if not yet)."""
        if not self._built:
            self._built = True
            assert self.seed is not None
            rng = random.Random(f"slaiga bench circle table {self.seed}")
            game = rng.choice(GAMES)
            seats = rng.choice(SEATS.get(game, SEATS_DEFAULT))
            bare = Circle.__new__(Circle)
            bare.ids, bare.seals, bare.previous, bare._built, bare.seed = (
                self.ids,
                self.seals,
                [],
                True,
                None,
            )
            with seeded(rng.randrange(1 << 62)):
                table = Table(game, seats, rng.randrange(1 << 62), bare, 0.0, "stop")
                table.deviate_at = MAX_ENTRIES + 1  # an honest table
                table.play()
            self.previous = table.log
        return self.previous


CIRCLE_TABLES = 64
"""Tables of one circle of players: a table seed's circle is ``seed // CIRCLE_TABLES``."""
_CIRCLES: dict[int, Circle] = {}


def circle_for(table_seed: int) -> Circle:
    """The seeded circle of a table seed (kept for the next tables of the circle)."""
    key = table_seed // CIRCLE_TABLES
    circle = _CIRCLES.get(key)
    if circle is None:
        _CIRCLES.clear()
        circle = _CIRCLES[key] = Circle(seed=key)
    return circle


class Table:
    """One table with a deviating seat; see the module docstring."""

    def __init__(
        self,
        game: str,
        seats: int,
        seed: int,
        circle: Circle,
        fork_rate: float,
        kind: str | None = None,
        forks_per_turn: int = 1,
    ) -> None:
        self.forks_per_turn = forks_per_turn
        self.rng = random.Random(seed)
        self.seed = seed
        self.game = game
        self.n = seats
        self.circle = circle
        self.fork_rate = fork_rate
        self.spec = registry.get(game)
        genesis, ids, sls = game_genesis(
            game, seats, OPTIONS.get(game), circle.ids[:seats], circle.seals[:seats]
        )
        self.genesis = genesis
        self.drivers = []
        for slot in range(seats):
            secret = self.rng.randbytes(32)
            keys = SeatKeys(slot, ids[slot], sls[slot], secret)
            self.drivers.append(SeatDriver(Record(genesis, rule_factory(keys)), ids[slot], slot))
        self.verifier = Record(genesis, table_rule)
        self.dev = self.rng.randrange(seats)
        self.honest = [s for s in range(seats) if s != self.dev]
        self.kind = kind or self.rng.choice(KINDS)
        self.players: dict[int, BotPlayer] = {}
        self.log: list[Signed] = []
        # per seat: envelopes in the order its record accepted them, evidence kept
        self.accepted: dict[int, list[Signed]] = {s: [] for s in range(seats)}
        self.evidence: dict[int, list[Signed]] = {s: [] for s in range(seats)}
        self.verdict: dict[int, tuple[CheatDetected, int]] = {}
        self.suspects: dict[int, list[BrokenChain]] = {s: [] for s in range(seats)}
        self.fetched: set[tuple[int, int, int]] = set()
        self.spread: set[tuple[int, int]] = set()
        self.queue: deque[tuple[int, Signed, int | None]] = deque()
        self.crash: _Crash | None = None
        self.dev_stopped = False
        self.turns = 0
        self.deviate_at = self.rng.randrange(1, TURNS[game])
        self.deviation: Deviation | None = None
        self.forks: list[GameReport] = []
        """Reports of the forked games (one child process each; see :meth:`_spawn`)."""
        self.children = fork_rate > 0 and hasattr(os, "fork")
        """Forked games: this table is their parent and plays honestly to its end."""
        if self.children:
            self.deviate_at = MAX_ENTRIES + 1
        self.as_parent: list[GameReport] = []
        self.honest_after: Any = None
        """The table's state after this turn's honest entry (:meth:`_probe`)."""
        self.spawned = 0
        self.child_files = 0
        self.child_memo: Counter[str] = Counter()
        self.tmp_dir = ""
        self.deadline: float | None = None
        self.quota: int | None = None
        self.verified: dict[bytes, Any] = {}
        self.field_only: tuple[str, str | None] | None = None
        """Tests: the one field a ``field`` deviation changes, e.g. ``("entry", "prev")``."""
        self.only_turn: int | None = None
        """Replays: fork games only at this turn of the deviator (``--replay SEED --turn N``);
        the draws of the other turns are made all the same, so its games are the run's."""
        self.step_shifts: tuple[int, ...] = (-1, 1, 2)
        self.prev_old_share = 0.5
        """A changed ``prev``: the share of older hashes of this record (else random)."""

    # ---- delivery, as the node does it --------------------------------------------------

    def deliver(self, signed: Signed, targets: tuple[int, ...] | list[int], via: int) -> None:
        for t in targets:
            if t != via:
                self.queue.append((t, signed, via))
        self.pump()

    def pump(self) -> None:
        while self.queue:
            t, signed, via = self.queue.popleft()
            if t in self.verdict or (t == self.dev and self.dev_stopped):
                continue
            rec = self.drivers[t].record
            try:
                offer = rec.offer(signed)
            except CheatDetected as exc:
                if t != self.dev:
                    self._cheat(t, exc, signed, via)
                continue
            except P2PError:
                continue  # junk no seat signed: the connection's fault, nobody convicted
            except Exception as exc:  # noqa: BLE001 - anything else is a crash of seat t
                if t == self.dev:
                    self.dev_stopped = True
                    continue
                self.crash = self.crash or _Crash(t, exc)
                self.verdict.setdefault(t, (CheatDetected(-1, "crash"), -1))
                continue
            failure = getattr(rec, "failure", None)
            if failure is not None and t != self.dev:
                # our own code failed folding a step (FoldFailed): a crash, whoever sent it
                cause = failure.__cause__ or failure
                self.crash = self.crash or _Crash(t, cause)
                self.verdict.setdefault(t, (CheatDetected(-1, "crash"), -1))
                continue
            if offer.status is not Status.ACCEPTED:
                continue
            for acc in offer.accepted:
                self.accepted[t].append(acc.signed)
                if t == self.honest[0]:
                    self._follow(acc.signed)
                if acc.seat != t:
                    for other in range(self.n):
                        if other not in (t, acc.seat, via):
                            self.queue.append((other, acc.signed, t))
            if t != self.dev:
                # a held entry refused at its step is evidence like any refused entry
                refused = {id(exc): env for exc, env in getattr(offer, "refused", ())}
                for exc in offer.cheats:
                    self._cheat(t, exc, refused.get(id(exc)), via, offered=signed)

    def _follow(self, signed: Signed) -> None:
        """The seatless verifier takes what the first honest seat accepted."""
        with contextlib.suppress(CheatDetected):  # judged when the game ends (verify the file)
            self.verifier.offer(signed)

    def _cheat(
        self,
        t: int,
        exc: CheatDetected,
        signed: Signed | None,
        via: int | None,
        offered: Signed | None = None,
    ) -> None:
        rec = self.drivers[t].record
        if isinstance(exc, ForgedSignature):
            return
        if isinstance(exc, BrokenChain):
            self.suspects[t].append(exc)
            for slot in {via, exc.seat}:
                if slot is None or slot == t:
                    continue
                key = (t, slot, rec.step)
                if key in self.fetched:
                    continue
                self.fetched.add(key)
                for env in self.drivers[slot].record.signed_from(1):
                    self.queue.append((t, env, slot))
            return
        if signed is not None:
            kept = [signed]
            if isinstance(exc, Equivocation):
                # both versions, as the node keeps them (p2p/table/session/blame.py, keep_evidence)
                kept.insert(0, Signed(exc.evidence[0], exc.evidence[1]))
            for env in kept:
                if env not in self.evidence[t]:
                    self.evidence[t].append(env)
                    # and relayed, as the node does: a seat the deviator never showed it
                    # must not be left waiting on the seats that convicted and stopped
                    for other in range(self.n):
                        if other != t:
                            self.queue.append((other, env, t))
        if isinstance(exc, Equivocation):
            first, first_sig, second, second_sig = exc.evidence[:4]
            step = _entry_of(Signed(first, first_sig))
            key = (exc.seat, step.step if step is not None else -1)
            if key not in self.spread:
                self.spread.add(key)
                for env in (Signed(first, first_sig), Signed(second, second_sig)):
                    for other in range(self.n):
                        if other != t:
                            self.queue.append((other, env, t))
            self.suspects[t].clear()
        if t in self.verdict:
            return
        # the step as slaiga verify names it: the entry refused, or for a violation found
        # when a step completed, the entry its evidence names (else the one completing it)
        located = _entry_of(Signed(exc.evidence[0], b"\0" * 64)) if exc.evidence else None
        if signed is not None:
            entry = _entry_of(signed)
            step = entry.step if entry is not None else -1
        elif located is not None:
            step = located.step
        elif offered is not None and (completing := _entry_of(offered)) is not None:
            step = completing.step
        else:
            step = rec.step - 1
        self.verdict[t] = (exc, step)
        for env in rec.signed_from(max(1, rec.step - 1)):
            for other in range(self.n):
                if other != t:
                    self.queue.append((other, env, t))

    # ---- the game ----------------------------------------------------------------------

    def _player(self, d: SeatDriver) -> BotPlayer:
        view = d.seat_view()
        assert view is not None
        _, seat = view
        player = self.players.get(d.slot)
        if player is None:
            bot = self.spec.bots["heuristic" if self.rng.random() < 0.7 else "random"]
            player = BotPlayer.make(bot, seat, random.Random(self.seed * 7 + seat))
            self.players[d.slot] = player
        return player

    def _body(self, d: SeatDriver) -> Body | None:
        try:
            body = d.machine_body()
            if body is None and d.owes_decision():
                view = d.seat_view()
                assert view is not None
                body = d.decision_body(self._player(d).choose(*view))
            return body
        except P2PError as exc:
            raise _Crash(d.slot, exc) from exc
        except Exception as exc:  # noqa: BLE001
            raise _Crash(d.slot, exc) from exc

    def _observe(self) -> None:
        for d in self.drivers:
            view = d.seat_view()
            events = d.take_events()
            if view is not None and events and d.slot in self.players:
                self.players[d.slot].observe(view[0], view[1], events)

    def play(self) -> None:
        for _ in range(MAX_ENTRIES):
            if self.crash is not None:
                return
            if all(s in self.verdict for s in self.honest):
                return
            if all(self.drivers[s].record.finished for s in self.honest):
                return
            moved = False
            for d in self.drivers:
                if d.slot in self.verdict or (d.slot == self.dev and self.dev_stopped):
                    continue
                try:
                    body = self._body(d)
                except _Crash as exc:
                    if d.slot == self.dev:
                        self.dev_stopped = True
                        continue
                    self.crash = exc
                    return
                if body is None:
                    continue
                moved = True
                if d.slot == self.dev:
                    self._dev_turn(d, body)
                else:
                    try:
                        offer = d.sign(body)
                    except Exception as exc:  # noqa: BLE001 - our own entry refused: a bug
                        self.crash = _Crash(d.slot, exc)
                        return
                    signed = offer.accepted[0].signed
                    self.accepted[d.slot].append(signed)
                    if d.slot == self.honest[0]:
                        self._follow(signed)
                    self.log.append(signed)
                    # our own entry may complete a step whose fold convicts someone (a bad
                    # shuffle in the batch our last shuffle closes): the node routes those
                    # verdicts too (p2p/table/session/core.py, own -> _after_offer)
                    refused = {id(exc): env for exc, env in getattr(offer, "refused", ())}
                    for exc in offer.cheats:
                        self._cheat(d.slot, exc, refused.get(id(exc)), None, offered=signed)
                    self.deliver(signed, range(self.n), d.slot)
                self._observe()
                if self.crash is not None:
                    return
            if not moved and not self._refetch():
                return

    def _refetch(self) -> bool:
        """The table stalls: every seat still playing asks every other seat for what it
        holds from its own step on (the node's refetch on a stall); whether any moved."""
        before = ([_state(d.record) for d in self.drivers], len(self.verdict))
        for t in range(self.n):
            if t in self.verdict or (t == self.dev and self.dev_stopped):
                continue
            rec = self.drivers[t].record
            if rec.finished:
                continue
            for other in range(self.n):
                if other != t and not (other == self.dev and self.dev_stopped):
                    for env in self.drivers[other].record.signed_from(rec.step):
                        self.queue.append((t, env, other))
        self.pump()
        return ([_state(d.record) for d in self.drivers], len(self.verdict)) != before

    def _send_honest(self, d: SeatDriver, body: Body) -> None:
        """The deviator's own entry as its code made it; an entry its own record refuses
        (its earlier deviation made it wrong) is signed and sent all the same, and then
        the deviator stops: the honest seats judge it."""
        try:
            offer = d.sign(body)
            signed = offer.accepted[0].signed
            self.accepted[d.slot].append(signed)
        except Exception:  # noqa: BLE001 - its own record refuses: sign it as it stands
            rec = d.record
            signed = _sign(d.identity, Entry(rec.table_id, d.slot, rec.step, rec.head, body))
            self.dev_stopped = True
        self.log.append(signed)
        self.deliver(signed, range(self.n), d.slot)

    def _dev_turn(self, d: SeatDriver, body: Body) -> None:
        self.turns += 1
        if self.children and not self.verdict and self.crash is None and self._more():
            self.honest_after = None
            for _ in range(self.forks_per_turn):
                if self.rng.random() < self.fork_rate:
                    kind = self.rng.choice(KINDS)
                    seed = self.rng.randrange(1 << 62)
                    if self.only_turn is not None and self.turns != self.only_turn:
                        continue  # drawn all the same: the turns after it fork as in the run
                    if kind == "withhold" and self.honest_after is None:
                        self.honest_after = self._probe(d, body)
                    self._spawn(d, body, kind, seed)
        if self.deviation is None and self.turns >= self.deviate_at:
            dev = self._make(self.kind, d, body)
            if dev is not None:
                self.deviation = dev
                self._carry_on(d, body, dev, sent=False)
                return
        self._send_honest(d, body)

    def _carry_on(self, d: SeatDriver, body: Body, dev: Deviation, sent: bool) -> None:
        """Carry out the table's own deviation (``sent``: its first envelope is out), then
        play on: the deviator's record takes what it chose to believe, or its honest body."""
        if dev.kind == "stop":
            self.dev_stopped = True
            return
        own = dev.believe
        if own is not None:
            try:
                d.record.offer(own)
            except Exception:  # noqa: BLE001 - its record refuses its own lie: it stops after
                self.dev_stopped = True
        for i, (signed, targets) in enumerate(dev.sends):
            self.log.append(signed)
            if not (sent and i == 0):
                self.deliver(signed, targets, d.slot)
        if own is None and not any(s in self.verdict for s in self.honest):
            self._send_honest(d, body)

    # ---- forked games (one process each) ---------------------------------------------------

    def _more(self) -> bool:
        """Whether more forked games are wanted (the run's quota and time)."""
        if self.quota is not None and len(self.forks) + len(self.as_parent) >= self.quota:
            return False
        return self.deadline is None or time.perf_counter() < self.deadline

    def _spawn(self, d: SeatDriver, body: Body, kind: str, seed: int) -> None:
        """One forked game: this process is forked here, at the deviator's turn with
        ``body`` made and not yet sent; the child deviates (``kind``), plays the game to
        its conclusion, judges it (every honest seat, ``slaiga verify`` on every honest
        seat's file) and sends its report back; this process then goes on honestly."""
        if not self.tmp_dir:
            return
        if kind == "foreign":
            # the one deviation that resends the previous table's entries: that table is
            # played once, here, not in every child (and not at all for a table whose
            # forks never want it: an honest table of a random game, seconds of proofs)
            self.circle.previous_pool()
        data = _in_child(lambda: self._child_payload(d, body, kind, seed), CHILD_SECONDS)
        self.spawned += 1
        turn = f"turn {self.turns}"
        if not data:
            rep = GameReport(self.seed, self.game, self.n, kind, turn, "hang", ["hangs"])
            rep.note = f"the forked game did not end within {CHILD_SECONDS} s"
            rep.forked = True
            self.forks.append(rep)
            return
        payload = pickle.loads(data)
        if isinstance(payload, tuple) and payload[0] == "error":
            rep = GameReport(self.seed, self.game, self.n, kind, turn, "crash", ["crashes"])
            rep.note, rep.forked = payload[1], True
            self.forks.append(rep)
            return
        reports, files, as_parent, memo_used = payload
        self.child_files += files
        self.child_memo.update(memo_used)
        for r in reports:
            self.forks.append(GameReport(**r))
        self.as_parent.extend(GameReport(**r) for r in as_parent)

    def _table_state(self) -> Any:
        """Every seat's record as it stands: its chain head and step, the envelopes of its
        open step, what it holds for later steps."""
        return [
            (
                r.step,
                r.head,
                frozenset((e.entry, e.signature) for e in r.signed_from(r.step)),
                r.held_count(),
            )
            for r in (x.record for x in self.drivers)
        ]

    def _probe(self, d: SeatDriver, body: Body) -> Any:
        """The table's state after the deviator's honest entry of this turn reaches every
        seat (found in a child process, so that this one has not sent it yet)."""

        def state() -> Any:
            self._send_honest(d, body)
            return None if self.verdict else self._table_state()

        data = _in_child(state)
        payload = pickle.loads(data) if data else None
        return None if isinstance(payload, tuple) else payload

    def _child_payload(self, d: SeatDriver, body: Body, kind: str, seed: int) -> Any:
        """What the child sends back: :meth:`_child_game`'s three parts, and what the memo
        spared in the child (counted into the run's ``memo`` figures)."""
        m = active_memo()
        before = Counter(m.stats()) if m is not None else Counter()
        reports, files, as_parent = self._child_game(d, body, kind, seed)
        used = Counter(m.stats()) - before if m is not None else Counter()
        return reports, files, as_parent, dict(used)

    def _child_game(self, d: SeatDriver, body: Body, kind: str, seed: int) -> Any:
        """The forked game, in the child: (reports, files verified, games whose deviation
        every seat let pass without a trace, which go on as this table's own game)."""
        self.rng = random.Random(seed)
        self.children = False
        self.kind = kind
        dev = self._make(kind, d, body)
        if dev is None:
            return [], 0, []
        dev.detail += f" (turn {self.turns})"
        self.deviation = dev
        files_before = self.verified.get("__files__", 0)
        if dev.kind != "stop" and dev.believe is None:
            before = [_state(x.record) for x in self.drivers]
            for signed, targets in dev.sends:
                self.log.append(signed)
                self.deliver(signed, targets, d.slot)
            if (
                [_state(x.record) for x in self.drivers] == before
                and not self.verdict
                and not any(self.suspects.values())
                and self.crash is None
                and not self.dev_stopped
            ):
                # nothing changed anywhere: the deviator sends its honest entry next, as
                # the parent table does; the rest of this game is the parent's game
                report = GameReport(self.seed, self.game, self.n, dev.kind, dev.detail, "")
                report.forked = True
                report.note = "must_convict" if dev.must_convict is True else ""
                return [], 0, [report.to_json()]
            if not any(s in self.verdict for s in self.honest):
                self._send_honest(d, body)
        else:
            self._carry_on(d, body, dev, sent=False)
            if (
                self.honest_after is not None
                and not self.verdict
                and not any(self.suspects.values())
                and self.crash is None
                and not self.dev_stopped
                and self._table_state() == self.honest_after
            ):
                # every seat now holds what the honest entry would have given it (a withheld
                # entry relayed): the rest of this game is the parent's game
                report = GameReport(self.seed, self.game, self.n, dev.kind, dev.detail, "")
                report.forked = True
                report.note = "must_convict" if dev.must_convict is True else ""
                return [], 0, [report.to_json()]
        try:
            self._observe()
            self.play()
        except _Crash as exc:
            self.crash = exc
        except Exception as exc:  # noqa: BLE001 - the bench itself must report, not die
            self.crash = _Crash(-1, exc)
        report = self.judge(Path(self.tmp_dir), self.verified)
        report.forked = True
        files = self.verified.get("__files__", 0) - files_before
        return [report.to_json()], files, []

    def judge_parent(self, tmp: Path, verified: dict[bytes, Any]) -> list[GameReport]:
        """The parent table of forked games played honestly to its end: it must end with
        every seat finished, nobody named, and ``slaiga verify`` content with every seat's
        file.  The forked games whose deviation every seat let pass without a trace end
        as it does (``accepted_valid``, or ``missed`` for an entry owed a conviction)."""
        failures: list[str] = []
        note = ""
        if self.crash is not None:
            failures, note = ["crashes"], self.crash.text
        elif self.verdict:
            failures = ["wrong_blame"]
            note = "honest table: " + ", ".join(
                f"seat {t} named seat {exc.seat}" for t, (exc, _) in self.verdict.items()
            )
        elif not all(x.record.finished for x in self.drivers):
            waiting = {w for x in self.drivers for w in x.record.waiting_on()}
            failures, note = ["hangs"], f"honest table waits on {sorted(waiting)}"
        else:
            for t in range(self.n):
                got = self._verify_file(t, tmp, verified)
                if got is not None:
                    failures = ["crashes" if got[0] == "crash" else "verify_mismatch"]
                    note = f"honest table, seat {t}'s file: verify {got}"
                    break
        out = []
        for r in self.as_parent:
            r.outcome = "accepted_valid" if not failures else "failed"
            r.failures = list(failures)
            if r.note == "must_convict":
                r.failures.append("missed")
            r.note = note
            out.append(r)
        if failures:
            out.append(
                GameReport(self.seed, self.game, self.n, "none", "honest", "failed", failures, note)
            )
        return out

    # ---- deviations ------------------------------------------------------------------------

    def _make(self, kind: str, d: SeatDriver, body: Body) -> Deviation | None:
        rec = d.record
        entry = Entry(rec.table_id, d.slot, rec.step, rec.head, body)
        others = tuple(s for s in range(self.n) if s != d.slot)
        try:
            make = getattr(self, "_dev_" + kind)
            return make(d, body, entry, others)
        except _NotHere:
            return None

    def _dev_stop(self, d, body, entry, others) -> Deviation:  # type: ignore[no-untyped-def]
        return Deviation("stop", "stop", entry.step, [], None, None)

    def _dev_withhold(self, d, body, entry, others) -> Deviation:  # type: ignore[no-untyped-def]
        signed = _sign(d.identity, entry)
        k = self.rng.randrange(1, len(others))
        some = tuple(self.rng.sample(others, k))
        return Deviation(
            "withhold",
            f"to {len(some)} of {len(others)}",
            entry.step,
            [(signed, some)],
            signed,
            False,
        )

    def _dev_equivocate(self, d, body, entry, others) -> Deviation:  # type: ignore[no-untyped-def]
        alt = self._alternative(d, body)
        if alt is None or alt == body:
            raise _NotHere
        a = _sign(d.identity, entry)
        b = _sign(d.identity, dataclasses.replace(entry, body=alt))
        honest = list(others)
        self.rng.shuffle(honest)
        cut = self.rng.randrange(1, len(honest))
        ga, gb = tuple(honest[:cut]), tuple(honest[cut:])
        return Deviation("equivocate", body.TAG, entry.step, [(a, ga), (b, gb)], a, True)

    def _alternative(self, d: SeatDriver, body: Body) -> Body | None:
        """A second valid body for this step: another legal action, or the same machine
        step made again (fresh randomness: another shuffle, other proof nonces)."""
        if body.TAG == ACTION_KIND:
            view = d.seat_view()
            assert view is not None
            engine, seat = view
            legal = engine.legal_actions(seat)
            game = d.game
            assert game is not None
            bodies = [game.action_body(a) for a in legal]
            bodies = [b for b in bodies if b != body]
            return self.rng.choice(bodies) if bodies else None
        try:
            return d.machine_body()
        except Exception:  # noqa: BLE001
            return None

    def _dev_lie(self, d, body, entry, others) -> Deviation:  # type: ignore[no-untyped-def]
        if body.TAG != ACTION_KIND:
            raise _NotHere
        game = d.game
        view = d.seat_view()
        assert game is not None and view is not None
        mine, seat = view
        try:
            lies = lie_candidates(game.engine, mine, seat)
        except Exception:  # noqa: BLE001
            raise _NotHere from None
        if not lies:
            raise _NotHere
        action = self.rng.choice(lies)
        signed = _sign(d.identity, dataclasses.replace(entry, body=game.action_body(action)))
        return Deviation("lie", type(action).__name__, entry.step, [(signed, others)], signed, True)

    def _dev_field(self, d, body, entry, others) -> Deviation:  # type: ignore[no-untyped-def]
        rng = self.rng
        names = [name for name, _ in body.FIELDS]
        choices = [("body", n) for n in names] + [
            ("entry", n) for n in ("seat", "step", "prev", "table_id")
        ]
        if body.TAG == ACTION_KIND:
            choices += [("action", None)] * 6
        where, name = self.field_only or rng.choice(choices)
        must: bool | None = True
        if where == "entry":
            if name == "seat":
                new = dataclasses.replace(entry, seat=rng.choice(others))
            elif name == "step":
                new = dataclasses.replace(entry, step=entry.step + rng.choice(self.step_shifts))
                must = None
            elif name == "prev":
                rec = d.record
                old = (
                    rec.hashes[rng.randrange(len(rec.hashes) - 1)] if len(rec.hashes) > 1 else None
                )
                new = dataclasses.replace(
                    entry,
                    prev=old
                    if old is not None and rng.random() < self.prev_old_share
                    else rng.randbytes(32),
                )
            else:
                new = dataclasses.replace(entry, table_id=rng.randbytes(len(entry.table_id)))
                must = None  # a foreign entry: refused, convicts nobody or its signer
            detail = f"entry.{name}"
        elif where == "action":
            action, detail = _mutate_action(rng, body.action)
            new_body = ActionBody(action)
            new = dataclasses.replace(entry, body=new_body)
            must = _action_owed(d, action)
        else:
            value = getattr(body, name)
            new_value, detail = _mutate_value(rng, value)
            detail = f"{body.TAG}.{name}:{detail}"
            try:
                new_body = dataclasses.replace(body, **{name: new_value})
                new = dataclasses.replace(entry, body=new_body)
                encode_body(new)
            except Exception:  # noqa: BLE001 - breaks the schema: flip a bit instead
                new_value = _flip(rng, value) if isinstance(value, bytes) else value
                if new_value == value:
                    raise _NotHere from None
                new = dataclasses.replace(
                    entry, body=dataclasses.replace(body, **{name: new_value})
                )
                detail += ":flip"
            if body.TAG == "dice" and name == "next":
                must = None  # caught when the next draw opens it, if there is one
            if body.TAG == "sealed-proof":
                must = None  # the receiver's complaint: a dispute today (issue 16, item 3)
            if body.TAG == ACTION_KIND and isinstance(new.body, ActionBody):
                # its bytes changed: maybe another legal action (a flipped bit made
                # ``Place(card 42, position 5)`` position 4 at table seed 721420289)
                must = _action_owed(d, new.body.action)
        if new == entry:
            raise _NotHere
        signed = _sign(d.identity, new)
        believe = signed if where != "entry" or name == "step" else None
        return Deviation("field", detail, entry.step, [(signed, others)], believe, must)

    def _dev_raw(self, d, body, entry, others) -> Deviation:  # type: ignore[no-untyped-def]
        raw = bytearray(encode_body(entry))
        i = self.rng.randrange(len(raw))
        raw[i] ^= 1 << self.rng.randrange(8)
        signed = _sign_raw(d.identity, bytes(raw))
        decoded = _entry_of(signed)
        must: bool | None = True
        if decoded is not None and decoded.table_id != entry.table_id:
            must = None
        if decoded is not None and decoded.body.TAG == "sealed-proof":
            must = None
        if decoded is not None and decoded.body.TAG == "dice":
            must = None
        if decoded is not None and decoded.body.TAG == ACTION_KIND:
            must = None  # may decode as another legal action
            if body.TAG == ACTION_KIND and decoded == dataclasses.replace(entry, body=decoded.body):
                must = _action_owed(d, decoded.body.action)  # only its action changed
        if decoded is not None and decoded.step != entry.step:
            must = None
        # another legal action is the deviator's move: it plays on from it (its honest
        # entry after it would be a second version of the step, an equivocation)
        believe = signed if must is False else None
        return Deviation("raw", f"byte {i}", entry.step, [(signed, others)], believe, must)

    def _dev_kind(self, d, body, entry, others) -> Deviation:  # type: ignore[no-untyped-def]
        pool = []
        for env in self.log[-200:]:
            e = _entry_of(env)
            if e is not None and e.body.TAG != body.TAG:
                pool.append(e.body)
        if not pool:
            raise _NotHere
        other = self.rng.choice(pool)
        signed = _sign(d.identity, dataclasses.replace(entry, body=other))
        return Deviation(
            "kind", f"{body.TAG}->{other.TAG}", entry.step, [(signed, others)], None, True
        )

    def _dev_replay(self, d, body, entry, others) -> Deviation:  # type: ignore[no-untyped-def]
        mine = [env for env in d.record.signed_from(1) if (_entry_of(env) or entry).seat == d.slot]
        if not mine:
            raise _NotHere
        old = self.rng.choice(mine)
        if self.rng.random() < 0.4:
            return Deviation("replay", "verbatim", entry.step, [(old, others)], None, False)
        e = _entry_of(old)
        assert e is not None
        new = dataclasses.replace(entry, body=e.body)
        if new.body == body:
            raise _NotHere
        must: bool | None = True
        if e.body.TAG == ACTION_KIND and body.TAG == ACTION_KIND:
            view = d.seat_view()
            game = d.game
            assert view is not None and game is not None
            try:
                act = game.engine.decode_action(msgpack.unpackb(e.body.action, raw=False))
                must = not _valid_action(view[0], act)
            except Exception:  # noqa: BLE001
                must = True
        signed = _sign(d.identity, new)
        # a still-valid re-signed action is the deviator's move: it plays on from it (its
        # honest entry after it would be a second version of the step, an equivocation)
        believe = signed if must is False else None
        return Deviation(
            "replay", f"re-signed {e.body.TAG}", entry.step, [(signed, others)], believe, must
        )

    def _dev_foreign(self, d, body, entry, others) -> Deviation:  # type: ignore[no-untyped-def]
        pool = self.circle.previous_pool()
        if not pool:
            raise _NotHere
        old = self.rng.choice(pool)
        e = _entry_of(old)
        innocent = e.seat if e is not None and e.seat != d.slot else None
        detail = "own" if innocent is None else "relayed"
        return Deviation("foreign", detail, entry.step, [(old, others)], None, None, innocent)

    # ---- the verdict ----------------------------------------------------------------------

    def judge(self, tmp: Path, verified: dict[bytes, Any]) -> GameReport:
        dev = self.deviation
        kind = dev.kind if dev is not None else self.kind
        detail = dev.detail if dev is not None else "no chance"
        report = GameReport(self.seed, self.game, self.n, kind, detail, "")
        # chain breaks no equivocation explained are reported as what they look like, but
        # convict nobody (the node does the same; p2p/table/session/blame.py, blame_suspects)
        reported = {
            exc.seat for t in self.honest if t not in self.verdict for exc in self.suspects[t]
        }
        if self.crash is not None:
            report.outcome = "crash"
            report.failures.append("crashes")
            report.note = self.crash.text
            return report
        named = {exc.seat for exc, _ in self.verdict.values()}
        disputes = [exc for exc, _ in self.verdict.values() if type(exc).__name__ == "Dispute"]
        finished = [t for t in self.honest if self.drivers[t].record.finished]
        if dev is not None and dev.innocent is not None and dev.innocent in named:
            report.failures.append("wrong_blame")
            report.note = f"seat {dev.innocent} named for an entry of another table"
        if disputes:
            report.outcome = "dispute"
        elif named - {self.dev}:
            if "wrong_blame" not in report.failures:
                report.failures.append("wrong_blame")
                report.note = f"named {sorted(named)}; deviator {self.dev}"
            report.outcome = "wrong_blame"
        elif self.verdict:
            report.outcome = "convicted"
            missing = [t for t in self.honest if t not in self.verdict]
            steps = {step for _, step in self.verdict.values()}
            if missing or len(steps) != 1:
                report.failures.append("split")
                report.note = f"convicted by {sorted(self.verdict)}, steps {sorted(steps)}"
            if dev is not None and dev.must_convict is False:
                report.failures.append("refused_valid")
                exc = next(iter(self.verdict.values()))[0]
                report.note = f"{type(exc).__name__}: {exc}"
        elif reported - {self.dev}:
            report.outcome = "wrong_blame"
            report.failures.append("wrong_blame")
            report.note = f"chain break reported against {sorted(reported)}; deviator {self.dev}"
        elif reported:
            report.outcome = "unconvicted"
            report.failures.append("unconvicted")
            report.note = (
                "a signed entry that chains to an unknown hash is reported live but kept as"
                " no evidence, so nobody is convicted and verify names nobody"
            )
        elif len(finished) == len(self.honest):
            report.outcome = "accepted_valid"
            if dev is not None and dev.must_convict is True:
                report.failures.append("missed")
        else:
            waiting = set()
            for t in self.honest:
                waiting |= set(self.drivers[t].record.waiting_on())
            if waiting and waiting <= {self.dev}:
                report.outcome = "silence"
            else:
                report.outcome = "hang"
                report.failures.append("hangs")
                report.note = f"waiting on {sorted(waiting)}"
        if not report.failures or report.failures == ["missed"]:
            self._verify(report, tmp, verified)
        return report

    def _verify_file(self, t: int, tmp: Path, verified: dict[bytes, Any]) -> Any:
        """``slaiga verify`` (:func:`verify_record_file`) on seat ``t``'s record file, as a
        node writes it (its accepted entries, then the evidence it kept): (kind, culprit,
        step) of its failure, or ``None``.  Files of the same bytes are verified once."""
        envs = self.accepted[t] + self.evidence[t]
        h = hashlib.sha256(self.genesis.manifest)
        for env in envs:
            h.update(env.entry + env.signature)
        key = h.digest()
        if key in verified:
            return verified[key]
        path = tmp / f"{os.getpid()}-{secrets.token_hex(8)}.slaiga"
        with RecordFile.create(path, self.genesis) as f:
            for env in envs:
                f.append(env)
        try:
            vr = verify_record_file(path)
            f_ = vr.failure
            got = (f_.kind, f_.culprit, f_.step) if f_ is not None else None
        except Exception as exc:  # noqa: BLE001 - verify must never crash
            got = ("crash", None, f"{type(exc).__name__}: {exc}")
        path.unlink()
        verified[key] = got
        verified["__files__"] = verified.get("__files__", 0) + 1
        return got

    def _verify(self, report: GameReport, tmp: Path, verified: dict[bytes, Any]) -> None:
        for t in self.honest:
            got = self._verify_file(t, tmp, verified)
            live = self.verdict.get(t)
            if report.outcome == "accepted_valid":
                ok = got is None
            elif report.outcome == "silence":
                ok = got is not None and got[0] == "Unfinished" and got[1] is None
            elif report.outcome == "dispute":
                ok = got is not None and got[0] == "Dispute" and got[1] is None
            elif live is not None:
                exc, step = live
                # an entry that does not decode has no step: live -1, verify None
                vstep = -1 if got is None or got[2] is None else got[2]
                ok = got is not None and got[1] == exc.seat and vstep == step
            else:
                ok = False
            if got is not None and got[0] == "crash":
                report.failures.append("crashes")
                report.note = f"verify crashed: {got[2]}"
                return
            if not ok:
                report.failures.append("verify_mismatch")
                live_text = (
                    f"{type(live[0]).__name__} seat {live[0].seat} step {live[1]}"
                    if live
                    else "none"
                )
                report.note = f"seat {t}: live {live_text}, verify {got}"
                return


def _in_child(fn: Any, seconds: int | None = None) -> bytes:
    """Run ``fn`` in a forked copy of this process and return its result pickled (empty
    if the child died first: killed by the ``seconds`` alarm, for one).  An exception in
    the child comes back as ``("error", traceback)``: the bench reports, never dies."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        os.close(read_end)
        payload: Any
        try:
            if seconds:
                signal.alarm(seconds)
            payload = fn()
        except BaseException as exc:  # noqa: BLE001 - reported, the bench never dies
            payload = ("error", "".join(traceback.format_exception(exc))[-1500:])
        try:
            with os.fdopen(write_end, "wb") as out:
                out.write(pickle.dumps(payload))
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as inp:
        data = inp.read()
    os.waitpid(pid, 0)
    return data


class _NotHere(Exception):
    """This deviation has no chance at this entry."""


def exc_step(exc: CheatDetected) -> int:
    if exc.evidence:
        entry = _entry_of(Signed(exc.evidence[0], b"\0" * 64))
        if entry is not None:
            return entry.step
    return -1


def _state(rec: Record) -> tuple[int, bytes, int, int]:
    return (rec.step, rec.head, len(rec.signed_from(rec.step)), rec.held_count())


def _action_owed(d: SeatDriver, raw: bytes) -> bool:
    """Whether the action ``raw`` (an action body's bytes, the deviator's at its turn) is
    owed a conviction: the table's rule does not take it as an action of the deviator's
    seat (it does not decode, or names another seat), or the deviator's own engine, which
    knows its cards, refuses it.  Another legal action is owed none."""
    view = d.seat_view()
    game = d.game
    assert view is not None and game is not None
    try:
        decoded = game._check_action(view[1], ActionBody(raw))  # the table's own decoding
    except Exception:  # noqa: BLE001 - junk: must be refused
        return True
    return not _valid_action(view[0], decoded)


def _valid_action(engine: Any, action: Any) -> bool:
    """Whether ``action`` is legal for the engine that knows the actor's own cards."""
    try:
        return engine.check(action) is None
    except EngineError:
        return False


def lie_candidates(public: Any, own: Any, seat: int) -> list[Any]:
    """Actions the table's seatless engine (``public``) accepts now but the seat's own
    engine, which sees its cards, refuses: claims that only a later reveal shows false.
    Candidates: what the public engine lists, and in Slaiga every action naming one of the
    seat's cards whatever it is (a face-down claim)."""
    if seat not in public.to_move():
        return []
    candidates = list(public.legal_actions(seat))
    if public.NAME in ("slaiga", "honest-slaiga"):
        from engine.games.slaiga.actions import CancelCheck, card_actions, jack_shots

        opps = tuple(t for t in range(own.seats) if t != seat)
        for h in own.hand(seat):
            candidates.extend(card_actions(seat, h))
            candidates.extend(jack_shots(seat, h, opps))
            candidates.append(CancelCheck(seat, h))
    elif public.NAME == "slave":
        from engine.games.slave.actions import Play

        hand = list(own.zones[f"hand:{seat}"])
        candidates.extend(Play(seat, (h,)) for h in hand)
        candidates.extend(Play(seat, (a, b)) for a, b in zip(hand, hand[1:], strict=False))
    return [a for a in candidates if _valid_action(public, a) and not _valid_action(own, a)]


def _flip(rng: random.Random, value: bytes) -> bytes:
    if not value:
        return b"\x01"
    raw = bytearray(value)
    i = rng.randrange(len(raw))
    raw[i] ^= 1 << rng.randrange(8)
    return bytes(raw)


def _mutate_value(rng: random.Random, value: Any) -> tuple[Any, str]:
    if isinstance(value, bool):
        return (not value), "flip"
    if isinstance(value, bytes):
        r = rng.random()
        if r < 0.7 or not value:
            return _flip(rng, value), "bit"
        if r < 0.85:
            return value[:-1], "short"
        return value + bytes([rng.randrange(256)]), "long"
    if isinstance(value, int):
        return max(0, value + rng.choice((-1, 1, 7))), "int"
    if isinstance(value, tuple):
        if value and rng.random() < 0.5:
            lst = list(value)
            i = rng.randrange(len(lst))
            lst[i] = (lst[i] + 1) % 8
            return tuple(lst), "item"
        return tuple(reversed(value)) if len(value) > 1 else (*value, 0), "order"
    return value, "same"


def _mutate_action(rng: random.Random, raw: bytes) -> tuple[bytes, str]:
    """One field of an encoded action changed: a card, a count, a seat, its type."""
    data = msgpack.unpackb(raw, raw=False, strict_map_key=True)
    if not isinstance(data, dict) or not data:
        return raw + b"\x00", "junk"
    key = rng.choice(sorted(data, key=str))
    value = data[key]
    if key == "type":
        data[key] = rng.choice(
            ("play", "pass", "give", "miss", "claim", "shot", "bid", str(value) + "x")
        )
    elif isinstance(value, bool):
        data[key] = not value
    elif isinstance(value, int):
        data[key] = rng.choice((value + 1, value - 1, rng.randrange(0, 110), -1))
    elif isinstance(value, list):
        lst = list(value)
        r = rng.random()
        if lst and r < 0.4:
            i = rng.randrange(len(lst))
            lst[i] = lst[i] + 1 if isinstance(lst[i], int) else lst[i]
            if isinstance(lst[i], int) and rng.random() < 0.5:
                lst[i] = rng.randrange(0, 110)
        elif lst and r < 0.6:
            lst.pop(rng.randrange(len(lst)))
        elif lst and r < 0.8:
            lst.append(lst[0])
        else:
            lst.append(rng.randrange(0, 110))
        data[key] = lst
    elif isinstance(value, str):
        data[key] = value + "x"
    elif value is None:
        data[key] = 0
    else:
        data[key] = None
    return msgpack.packb(data, use_bin_type=True), f"action.{key}"


# ---------------------------------------------------------------------------
# The run
# ---------------------------------------------------------------------------


@dataclass
class Totals:
    tables: int = 0
    games: int = 0
    forked: int = 0
    outcomes: Counter = field(default_factory=Counter)
    deviations: Counter = field(default_factory=Counter)
    details: Counter = field(default_factory=Counter)
    failures: Counter = field(default_factory=Counter)
    per_game: dict[str, Counter] = field(default_factory=dict)
    per_kind: dict[str, Counter] = field(default_factory=dict)
    samples: list[dict[str, Any]] = field(default_factory=list)

    def add(self, r: GameReport) -> None:
        self.games += 1
        self.forked += r.forked
        self.deviations[r.kind] += 1
        self.details[f"{r.kind}:{r.detail.split(':')[0]}"] += 1
        self.outcomes[r.outcome] += 1
        self.per_game.setdefault(r.game, Counter())[r.outcome] += 1
        self.per_game[r.game]["games"] += 1
        self.per_kind.setdefault(r.kind, Counter())[r.outcome] += 1
        for f in r.failures:
            self.failures[f] += 1
            self.per_game[r.game][f] += 1
            self.per_kind[r.kind][f] += 1
        if r.failures and len(self.samples) < SAMPLE_KEPT:
            self.samples.append(r.to_json())

    def merge(self, other: Totals) -> None:
        self.tables += other.tables
        self.games += other.games
        self.forked += other.forked
        for mine, theirs in (
            (self.outcomes, other.outcomes),
            (self.deviations, other.deviations),
            (self.details, other.details),
            (self.failures, other.failures),
        ):
            mine.update(theirs)
        for per_mine, per_theirs in (
            (self.per_game, other.per_game),
            (self.per_kind, other.per_kind),
        ):
            for k, c in per_theirs.items():
                per_mine.setdefault(k, Counter()).update(c)
        self.samples.extend(other.samples[: max(0, SAMPLE_KEPT - len(self.samples))])


def play_one(
    seed: int,
    circle: Circle | None,
    tmp: Path,
    verified: dict[bytes, Any],
    fork_rate: float,
    game: str | None = None,
    kind: str | None = None,
    forks_per_turn: int = DEFAULT_FORKS_PER_TURN,
    deadline: float | None = None,
    quota: int | None = None,
    turn: int | None = None,
) -> list[GameReport]:
    """One table from ``seed``: its forked games, then its own game.  Forked games
    stop at ``deadline`` (:func:`time.perf_counter`) or after ``quota`` games; with
    ``turn``, only the games forked at that turn of the deviator are played.

    With ``circle`` ``None`` the table's players are its seeded circle
    (:func:`circle_for`) and every byte of the game comes from ``seed``, the deal
    included (:func:`bench.memo.seeded`): ``--replay SEED`` plays it again exactly."""
    rng = random.Random(seed)
    game = game or rng.choice(GAMES)
    seats = rng.choice(SEATS.get(game, SEATS_DEFAULT))
    legacy = circle is not None and circle.seed is None
    if circle is None:
        circle = circle_for(seed)
    with seeded(seed):
        table = Table(game, seats, seed, circle, fork_rate, kind, forks_per_turn)
        table.tmp_dir, table.verified = str(tmp), verified
        table.deadline, table.quota = deadline, quota
        table.only_turn = turn
        try:
            table.play()
        except _Crash as exc:
            table.crash = exc
        except Exception as exc:  # noqa: BLE001 - the bench itself must report, not die
            table.crash = _Crash(-1, exc)
        reports = list(table.forks)
        verified["__files__"] = verified.get("__files__", 0) + table.child_files
        verified.setdefault("__memo__", Counter()).update(table.child_memo)
        if table.children:
            reports.extend(table.judge_parent(tmp, verified))
        elif table.deviation is not None or table.crash is not None:
            reports.append(table.judge(tmp, verified))
    if legacy:
        circle.previous = table.log
    return reports


def _scratch() -> str | None:
    """Where the record files ``slaiga verify`` reads are written: memory if the system
    has a memory file system (the store's fsync costs nothing there), else the default."""
    shm = Path("/dev/shm")
    return str(shm) if shm.is_dir() and os.access(shm, os.W_OK) else None


def table_seed(seed: int, i: int) -> int:
    """The seed of the run's ``i``-th table (a run's tables fill whole circles)."""
    return seed * (1 << 24) + i


def _table_game(ts: int, only: tuple[str, ...]) -> str:
    """The game of table seed ``ts`` in a run of only these games (``--game``)."""
    return random.Random(ts).choice(only)


@dataclass
class Share:
    """What one worker of an in-process run played."""

    totals: Totals
    files: int
    memo: dict[str, int]


def _play_share(
    worker: int,
    workers: int,
    games: int | None,
    seconds: float,
    seed: int,
    fork_rate: float,
    forks_per_turn: int,
    only: tuple[str, ...] | None,
    progress: bool = False,
) -> Share:
    """Worker ``worker`` of ``workers``: the blocks of :data:`CIRCLE_TABLES` tables whose
    number is ``worker`` modulo ``workers``, until its share of the games is played."""
    totals = Totals()
    verified: dict[bytes, Any] = {}
    start = time.perf_counter()
    block = worker
    quota = None if games is None else -(-games // workers)
    limit = seconds > 0
    seconds = seconds if limit else DEFAULT_SECONDS
    with (
        memo(Memo()) as m,
        tempfile.TemporaryDirectory(prefix="slaiga-adversary-", dir=_scratch()) as tmp,
    ):
        while True:
            for j in range(CIRCLE_TABLES):
                if quota is not None and totals.games >= quota:
                    break
                if (quota is None or limit) and time.perf_counter() - start >= seconds:
                    break
                ts = table_seed(seed, block * CIRCLE_TABLES + j)
                game = _table_game(ts, only) if only else None
                reports = play_one(
                    ts,
                    None,
                    Path(tmp),
                    verified,
                    fork_rate,
                    game,
                    None,
                    forks_per_turn,
                    start + seconds if quota is None or limit else None,
                    None if quota is None else quota - totals.games,
                )
                for r in reports:
                    totals.add(r)
                totals.tables += 1
                if progress:
                    spent = time.perf_counter() - start
                    print(
                        f"worker {worker + 1}/{workers}: table {totals.tables}"
                        f" ({reports[-1].game if reports else game or 'no game'}, {len(reports)} games)"
                        f" done; {totals.games:,} games, {sum(totals.failures.values())}"
                        f" failures, {spent:,.0f} s, {totals.games / max(spent, 1e-9):.1f} games/s",
                        file=sys.stderr,
                        flush=True,
                    )
            else:
                block += workers
                continue
            break
    used = Counter(m.stats()) + verified.get("__memo__", Counter())
    return Share(totals, verified.get("__files__", 0), dict(used))


def run_inprocess(
    games: int | None,
    seconds: float | None,
    seed: int,
    fork_rate: float = DEFAULT_FORK_RATE,
    forks_per_turn: int = DEFAULT_FORKS_PER_TURN,
    only: tuple[str, ...] | None = None,
    workers: int = 1,
    progress: bool = False,
) -> dict[str, Any]:
    """An in-process run over ``workers`` processes (1: this one); with ``progress`` each
    worker says on stderr when it ends a table, and where the run stands."""
    start = time.perf_counter()
    args = (games, seconds or 0.0, seed, fork_rate, forks_per_turn, only, progress)
    if workers <= 1:
        shares = [_play_share(0, 1, *args)]
    else:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        ctx = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(workers, mp_context=ctx) as pool:
            futures = [pool.submit(_play_share, w, workers, *args) for w in range(workers)]
            shares = [f.result() for f in futures]
    totals = Totals()
    for share in shares:
        totals.merge(share.totals)
    elapsed = time.perf_counter() - start
    out = _summary(totals, elapsed, seed, "in-process", sum(s.files for s in shares))
    out["workers"] = max(1, workers)
    out["memo"] = dict(sum((Counter(s.memo) for s in shares), Counter()))
    return out


def _summary(totals: Totals, elapsed: float, seed: int, mode: str, files: int) -> dict[str, Any]:
    failures = {k: totals.failures.get(k, 0) for k in FAILURES}
    return {
        "mode": mode,
        "seed": seed,
        "tables": totals.tables,
        "games": totals.games,
        "forked_games": totals.forked,
        "deviations": dict(sorted(totals.deviations.items())),
        "deviation_details": dict(sorted(totals.details.items())),
        "convicted": totals.outcomes.get("convicted", 0),
        "accepted_valid": totals.outcomes.get("accepted_valid", 0),
        "silence": totals.outcomes.get("silence", 0),
        "dispute": totals.outcomes.get("dispute", 0),
        **failures,
        "failures": sum(failures.values()),
        "verified_files": files,
        "per_game": {g: dict(c) for g, c in sorted(totals.per_game.items())},
        "per_kind": {k: dict(c) for k, c in sorted(totals.per_kind.items())},
        "elapsed_s": round(elapsed, 2),
        "games_per_s": round(totals.games / elapsed, 2) if elapsed else None,
        "samples": totals.samples,
    }


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="slaiga bench adversary",
        allow_abbrev=False,
        description=help_text(__doc__, first_paragraph_only=True),
    )
    p.add_argument(
        "--games",
        type=int,
        default=None,
        help="deviating games to play (default: as many as fit in about a minute)",
    )
    p.add_argument(
        "--seconds",
        type=float,
        default=None,
        help="stop after about this many seconds, even before --games are played",
    )
    p.add_argument("--seed", type=int, default=None, help="seed of the run (default: random)")
    p.add_argument(
        "--game", action="append", choices=GAMES, default=None, help="only this game (repeatable)"
    )
    p.add_argument(
        "--procs",
        action="store_true",
        help="play over peer processes on loopback (twins among them)",
    )
    p.add_argument(
        "--workers",
        type=int,
        default=min(2, os.cpu_count() or 1),
        help="in process: worker processes (default: 2, or 1 on one core)",
    )
    p.add_argument(
        "--parallel", type=int, default=1, help="with --procs: tables at a time (default 1)"
    )
    p.add_argument(
        "--fork-rate",
        type=float,
        default=DEFAULT_FORK_RATE,
        help="chance of each forked game at the deviator's turns (default 1.0)",
    )
    p.add_argument(
        "--forks-per-turn",
        type=int,
        default=DEFAULT_FORKS_PER_TURN,
        help=f"forked games tried at each of the deviator's turns (default {DEFAULT_FORKS_PER_TURN})",
    )
    p.add_argument(
        "--replay",
        type=int,
        default=None,
        help="play the one table of this table seed (from a failure) and show it; a failure"
        " of a run with --game: give the same --game options, or only the failure's game",
    )
    p.add_argument(
        "--turn",
        type=int,
        default=None,
        help="with --replay: play only the games forked at this turn of the deviator"
        " (a failure's detail ends '(turn N)'); the table's own game is played too",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    return p


def _print_human(out: dict[str, Any]) -> None:
    print(
        f"adversary ({out['mode']}, seed {out['seed']}): {out['games']} deviating games"
        f" over {out['tables']} tables in {out['elapsed_s']} s"
    )
    print("  deviations: " + ", ".join(f"{k} {v}" for k, v in out["deviations"].items()))
    print(
        f"  convicted {out['convicted']}, accepted valid {out['accepted_valid']},"
        f" silence {out['silence']}, dispute {out['dispute']}"
    )
    print("  failures: " + ", ".join(f"{k} {out[k]}" for k in FAILURES))
    for s in out["samples"]:
        print(
            f"  FAIL seed {s['seed']} {s['game']} {s['kind']} {s['detail']}: "
            f"{s['failures']} {s['note'].splitlines()[-1] if s['note'] else ''}"
        )


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    seed = args.seed if args.seed is not None else secrets.randbelow(1 << 31)
    if args.turn is not None and args.replay is None:
        build_parser().error("--turn goes with --replay SEED")
    if args.replay is not None:
        # a run with --game chose each table's game as this does (see _play_share)
        game = _table_game(args.replay, tuple(args.game)) if args.game else None
        with tempfile.TemporaryDirectory() as tmp, memo():
            reports = play_one(
                args.replay,
                None,
                Path(tmp),
                {},
                args.fork_rate,
                game,
                forks_per_turn=args.forks_per_turn,
                turn=args.turn,
            )
        for r in reports:
            print(json.dumps(r.to_json()))
        return 1 if any(r.failures for r in reports) else 0
    if args.procs:
        from bench import adversary_procs

        out = adversary_procs.run(args.games or 10, seed, args.parallel)
    else:
        only = tuple(args.game) if args.game else None
        out = run_inprocess(
            args.games,
            args.seconds,
            seed,
            args.fork_rate,
            args.forks_per_turn,
            only,
            args.workers,
            progress=True,
        )
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        _print_human(out)
    return 1 if out["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
