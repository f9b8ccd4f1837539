"""The game state-machine base that every game in ``engine`` builds on.

A game is a pure, deterministic state machine (h11's protocol state machine and
OpenSpiel's games are the models):

* ``start()`` runs the setup; ``apply(action)`` runs one action. Both return
  the ``Event`` list that resulted.
* Whenever the rules need hidden information or chance, the game *yields* an
  ``Obligation`` from inside its generator-based handlers and is suspended:
  ``pending()`` returns it, and ``resolve(answer)`` feeds the dealer's answer
  back in. The base class records what the answer taught this instance
  (which seats may see which faces) before the game continues.
* ``to_move()`` names the seats that owe an action (one actor, or several
  responders whose answers the game collects in a fixed order), and is empty
  while an obligation is pending or the game is over.
* ``legal_actions(seat)`` enumerates, ``view(seat)`` shows exactly what the
  seat may know, and ``state_hash()`` digests the public state so that two
  peers can compare.

Every game is written the same way: a subclass of ``Game`` with ``NAME``,
``MIN_SEATS``, ``MAX_SEATS``, ``OPTIONS`` and one phase table, ``PHASES``,
which maps each phase name to a ``Phase``: the actions the phase accepts, each
with its handler, the function listing a seat's legal actions, or, for a phase
that waits for nobody, its ``auto`` step. ``Game`` does every lookup: an action
that the current phase does not accept raises ``IllegalAction`` naming the
action, the phase and the seat, and no game dispatches by itself. The game
implements ``make_deck``, ``setup``, ``to_move``, ``view``, ``public_state``,
``is_over`` and ``outcome``. ``setup`` and the handlers may be plain methods
or generators that ``yield`` obligations and receive answers::

    def _on_play(self, action):
        if action.card not in self.zones[f"hand:{action.seat}"]:
            raise self.illegal(action, "you do not hold that card")   # validate first
        faces = yield Reveal((action.card,), reason="play")       # then act
        ...

    PHASES = {"play": Phase({PlayCard: _on_play}, legal=_legal_play)}

Handlers must validate everything they can *before* their first mutation or
obligation, so that an illegal action leaves the state exactly as it was.
Each action class is a frozen dataclass whose field annotations give exact
types and bounds (``engine.codec``): ``decode_action`` reads untrusted data
with them, and ``apply`` refuses an action whose fields break them before any
handler runs. ``docs/adding-a-game.md`` walks through a whole game.

**Leaving.** ``leave(seat)`` removes a seat that has left the table for good
(docs/design.md, "Surviving a lost player"): the game's ``on_leave`` hook applies its
leaving rule (written in each game's page under docs/rules/). The transition needs
nothing from the dealer for the leaving seat's cards: they stay face down, out of play
(``retire``), so every engine, the seatless one included, makes it alike. From then on
``to_move()`` never names the seat, and the game ends when its rules say so, at the
latest when one seat (or team) is left.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import hashlib
import inspect
import json
from collections.abc import Callable, Generator, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, NamedTuple

from engine import codec
from engine.cards import Card
from engine.codec import Seat
from engine.errors import (
    BadAnswer,
    BadSeats,
    DealerPending,
    EngineError,
    IllegalAction,
    NotYourTurn,
)
from engine.obligations import (
    Deal,
    JointRandom,
    Obligation,
    Prove,
    Reveal,
    Roll,
    Shuffle,
    Transfer,
    who_learns,
)
from engine.options import (
    TABLE_OPTION_NAMES,
    TABLE_OPTIONS,
    OptionSpec,
    check_table_options,
    hashed_options,
    resolve_options,
)

Handler = Generator[Obligation, Any, None]


@dataclass(frozen=True, slots=True)
class Action:
    """Base class of every action; ``seat`` is the acting seat.

    A game's actions are frozen dataclasses whose annotations give each field's exact
    type and bounds (see ``engine.codec``)."""

    seat: Seat


@dataclass(frozen=True, slots=True)
class Phase:
    """One entry of a game's phase table (``Game.PHASES``).

    ``actions`` maps each action class the phase accepts to its handler, a function
    ``(game, action)`` that may be a generator yielding obligations. ``legal`` is
    ``(game, seat) -> list[Action]``, called only for a seat in ``to_move()``.
    ``auto``, for a phase in which nobody acts, is ``(game)`` run as soon as the game
    reaches the phase (it may yield obligations too); such a phase has no actions.
    """

    actions: Mapping[type[Action], Callable[[Any, Any], Handler | None]] = field(
        default_factory=dict
    )
    legal: Callable[[Any, int], list[Action]] | None = None
    auto: Callable[[Any], Handler | None] | None = None

    def __post_init__(self) -> None:
        if self.auto is not None and (self.actions or self.legal is not None):
            raise TypeError("an automatic phase takes no actions")


NO_PHASE = Phase()
"""The phase-table entry of a phase in which nobody may act (``setup``, ``over``)."""


@dataclass(frozen=True, slots=True)
class Event:
    """Something that happened. ``audience`` ``None`` means public.

    ``kind`` is what statistics count (``slaiga simulate``, the baselines), ``text`` the
    event in engine words ("seat 2 plays 9♥"), ``data`` its numbers. ``detail``, where the
    game gives one, is the event as a typed value (a frozen dataclass of the game's own, one
    class per kind of event): the game's words tell the event from it, never from ``text``.
    """

    kind: str
    text: str
    seat: int | None = None
    audience: frozenset[int] | None = None
    data: Mapping[str, Any] = field(default_factory=dict)
    detail: Any = None

    def visible_to(self, seat: int) -> bool:
        return self.audience is None or seat in self.audience


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a game ended. ``ranking`` lists seats from best to worst."""

    ranking: tuple[int, ...]
    draw: bool = False
    reason: str = ""
    scores: tuple[int, ...] | None = None


class CardView(NamedTuple):
    """A handle as one seat sees it: ``face`` is ``None`` where it is hidden."""

    handle: int
    face: Card | None

    def __str__(self) -> str:
        return str(self.face) if self.face is not None else "▒▒"


class Zones:
    """Ordered piles of handles; every handle lives in exactly one zone.

    Index 0 of a pile is its *top* (docs/rules/slaiga.md: "position 0 = top").
    """

    __slots__ = ("_piles", "_where")

    def __init__(self) -> None:
        self._piles: dict[str, list[int]] = {}
        self._where: dict[int, str] = {}

    def add(self, name: str, handles: Iterable[int] = ()) -> None:
        if name in self._piles:
            raise EngineError(f"zone {name!r} exists")
        self._piles[name] = []
        for h in handles:
            self.put(h, name)

    def put(self, handle: int, zone: str, index: int | None = None) -> None:
        if handle in self._where:
            raise EngineError(f"handle {handle} is already in zone {self._where[handle]!r}")
        pile = self._piles[zone]
        if index is None:
            pile.append(handle)
        else:
            pile.insert(index, handle)
        self._where[handle] = zone

    def move(self, handle: int, dst: str, index: int | None = None) -> str:
        """Move ``handle`` to ``dst`` (at ``index``, default bottom); return the source."""
        src = self._where.pop(handle)
        self._piles[src].remove(handle)
        self.put(handle, dst, index)
        return src

    def __getitem__(self, name: str) -> Sequence[int]:
        return self._piles[name]

    def __contains__(self, name: str) -> bool:
        return name in self._piles

    def names(self) -> list[str]:
        return list(self._piles)

    def where(self, handle: int) -> str:
        return self._where[handle]

    def snapshot(self) -> dict[str, list[int]]:
        return {k: list(v) for k, v in self._piles.items()}

    def check(self, n_handles: int) -> None:
        """Card conservation: each of ``range(n_handles)`` is in exactly one place."""
        piles, where = self._piles, self._where
        inverse = {h: name for name, pile in piles.items() for h in pile}
        if (
            inverse == where
            and sum(map(len, piles.values())) == len(where) == n_handles
            and where.keys() == _all_handles(n_handles)
        ):
            return  # the index agrees with the piles, no handle twice, every handle once
        self._explain(n_handles)

    def _explain(self, n_handles: int) -> None:
        """Raise what :meth:`check` found broken, by handle and pile."""
        seen: dict[int, str] = {}
        for name, pile in self._piles.items():
            for h in pile:
                if h in seen:
                    raise EngineError(f"handle {h} is in both {seen[h]!r} and {name!r}")
                if self._where.get(h) != name:
                    raise EngineError(f"handle {h}: index says {self._where.get(h)!r}, is {name!r}")
                seen[h] = name
        if set(seen) != set(range(n_handles)) or len(self._where) != n_handles:
            missing = sorted(set(range(n_handles)) - set(seen))
            raise EngineError(f"card conservation broken; missing handles {missing}")


@functools.cache
def _all_handles(n_handles: int) -> frozenset[int]:
    """``range(n_handles)`` as a set, made once per deck size (conservation is checked
    after every action of the random-game tests)."""
    return frozenset(range(n_handles))


def canonical(obj: Any) -> Any:
    """A JSON-able, order-stable rendering of engine data (for hashing).

    A dataclass is rendered under its class name, or under its ``HASH_TAG`` if it has
    one: the state hash is a format that peers and saved records share, so renaming a
    class must not change it.
    """
    if obj is None or isinstance(obj, bool | int | str):
        return obj
    if isinstance(obj, Card):
        return obj.code
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        tag = getattr(type(obj), "HASH_TAG", None) or type(obj).__name__
        return [tag] + [[f.name, canonical(getattr(obj, f.name))] for f in dataclasses.fields(obj)]
    if isinstance(obj, Mapping):
        return sorted([str(k), canonical(v)] for k, v in obj.items())
    if isinstance(obj, set | frozenset):
        return sorted((canonical(v) for v in obj), key=lambda v: json.dumps(v, sort_keys=True))
    if isinstance(obj, tuple | list):
        return [canonical(v) for v in obj]
    raise TypeError(f"cannot canonicalise {type(obj).__name__}")


class Game:
    """Base class; see the module docstring for the contract."""

    NAME: ClassVar[str] = ""
    MIN_SEATS: ClassVar[int] = 2
    MAX_SEATS: ClassVar[int] = 8
    OPTIONS: ClassVar[tuple[OptionSpec, ...]] = TABLE_OPTIONS
    """The table options; each game lists its own and ``Game`` appends ``TABLE_OPTIONS``
    (options of the table, not of the rules: ``engine.options``)."""
    PHASES: ClassVar[Mapping[str, Phase]] = {}
    ACTIONS: ClassVar[tuple[type[Action], ...]] = ()
    """Every action class of the game, derived from ``PHASES``."""
    _BY_NAME: ClassVar[Mapping[str, type[Action]]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "OPTIONS" in cls.__dict__:
            own = tuple(o for o in cls.OPTIONS if o not in TABLE_OPTIONS)
            cls.OPTIONS = (*own, *TABLE_OPTIONS)
        if "PHASES" in cls.__dict__:
            cls.ACTIONS = tuple(dict.fromkeys(a for p in cls.PHASES.values() for a in p.actions))
            cls._BY_NAME = {a.__name__: a for a in cls.ACTIONS}
            if len(cls._BY_NAME) != len(cls.ACTIONS):
                raise TypeError(f"{cls.__name__}: two action classes share a name")
            for a in cls.ACTIONS:
                codec.schema(a)  # a field without a wire form fails here, at import

    def __init__(self, seats: int, options: Mapping[str, Any] | None = None) -> None:
        if not self.MIN_SEATS <= seats <= self.MAX_SEATS:
            raise BadSeats(
                f"{self.NAME} needs {self.MIN_SEATS}-{self.MAX_SEATS} seats, got {seats}"
            )
        self.seats = seats
        self.options: dict[str, Any] = resolve_options(self.OPTIONS, options)
        check_table_options(self.options, seats)
        self.deck: tuple[Card, ...] = tuple(self.make_deck())
        self.zones = Zones()
        self.faces: dict[int, Card] = {}
        self.seen: dict[int, int] = {}
        self.all_seats = (1 << seats) - 1
        self.phase = "setup"
        self.turns = 0
        self.started = False
        self._gen: Handler | None = None
        self._pending: Obligation | None = None
        self._events: list[Event] = []
        self.gone: tuple[int, ...] = ()
        """Seats that have left for good, in the order they left (``leave``)."""

    # ---- subclass hooks -------------------------------------------------------

    def make_deck(self) -> Sequence[Card]:
        """The faces of this game's handles, ``deck[h]`` being handle ``h``'s start."""
        return ()

    def setup(self) -> Handler | None:
        """Deal and prepare; may yield obligations."""
        return None

    def next_phase(self) -> str:
        """The phase the game is in once a handler (or setup, or an automatic phase) is
        done. Handlers usually set ``self.phase`` themselves and this returns it; a game
        that schedules its phases otherwise (Slaiga's agenda) computes it here."""
        return self.phase

    def to_move(self) -> tuple[int, ...]:
        raise NotImplementedError

    def view(self, seat: int) -> dict[str, Any]:
        raise NotImplementedError

    def public_state(self) -> Any:
        """Game-specific public state, JSON-able via ``canonical``, for ``state_hash``."""
        raise NotImplementedError

    def is_over(self) -> bool:
        raise NotImplementedError

    def outcome(self) -> Outcome:
        raise NotImplementedError

    def next_deal_size(self) -> int | None:
        """How many cards the next deal of this game will shuffle jointly, if one can still
        come (``None``: none will, or its size is not known yet).  A table prepares its
        share of that shuffle while the current deal is played
        (p2p/table/game_rule/shuffle.py); a game of one deal says ``None`` and nothing is
        prepared for nothing."""
        return None

    def on_leave(self, seat: int) -> Handler | None:
        """The game's leaving rule for ``seat`` (already in ``gone``); may be a generator
        like a handler. A game without one cannot go on without a seat."""
        raise EngineError(f"{self.NAME} has no rule for a seat that leaves the table")

    # ---- the driver -------------------------------------------------------------

    def start(self) -> list[Event]:
        if self.started:
            raise EngineError("game already started")
        self.started = True
        return self._run(self._then_automatic(self.setup()))

    def pending(self) -> Obligation | None:
        return self._pending

    def apply(self, action: Action) -> list[Event]:
        if not self.started:
            raise IllegalAction(action, self.phase, action.seat, "the game has not started")
        if self._pending is not None:
            raise DealerPending(
                action, self.phase, action.seat, f"waiting for the dealer: {self._pending}"
            )
        if self.is_over():
            raise IllegalAction(action, self.phase, action.seat, "the game is over")
        if not isinstance(action, self.ACTIONS):
            raise IllegalAction(action, self.phase, action.seat, "not an action of this game")
        problem = codec.problem(self, action)
        if problem is not None:
            raise IllegalAction(action, self.phase, action.seat, problem)
        if action.seat not in self.to_move():
            raise NotYourTurn(
                action,
                self.phase,
                action.seat,
                f"it is not this seat's move (to move: {list(self.to_move())})",
            )
        phase = self.PHASES.get(self.phase, NO_PHASE)
        handler = phase.actions.get(type(action))
        if handler is None:
            names = ", ".join(c.__name__ for c in phase.actions) or "none"
            raise self.illegal(
                action, f"{type(action).__name__} is not allowed now (allowed: {names})"
            )
        return self._run(self._then_automatic(handler(self, action)))

    def leave(self, seat: int) -> list[Event]:
        """``seat`` has left the table for good: apply the game's leaving rule.

        Allowed between obligations only (the table settles the one in flight first),
        while the game is not over, for a seat still at the table."""
        if not self.started or self.is_over():
            raise EngineError("a seat can leave only a game that is running")
        if self._pending is not None:
            raise EngineError(f"a seat cannot leave while the dealer owes {self._pending}")
        if type(seat) is not int or not 0 <= seat < self.seats:
            raise EngineError(f"no seat {seat!r} at this table")
        if seat in self.gone:
            raise EngineError(f"seat {seat} has already left")
        if type(self).on_leave is Game.on_leave:
            self.on_leave(seat)  # raises: no leaving rule
        self.gone = (*self.gone, seat)
        self.emit(
            "left",
            f"seat {seat} has left the table; the game goes on without it",
            seat,
            gone=self.gone,
        )
        return self._run(self._then_automatic(self.on_leave(seat)))

    def present(self) -> tuple[int, ...]:
        """The seats still at the table."""
        return tuple(s for s in range(self.seats) if s not in self.gone)

    def retire(self, handles: Iterable[int]) -> None:
        """Move ``handles`` face down out of play (the zone ``out-of-play``, made the first
        time, so a game nobody leaves keeps its state hash); nobody learns their faces."""
        if "out-of-play" not in self.zones:
            self.zones.add("out-of-play")
        for h in list(handles):
            self.zones.move(h, "out-of-play")

    def check(self, action: Action) -> str | None:
        """Why the rules would refuse ``action`` now, or ``None`` if they accept it.

        The one legality trial (the screen, the node and bots all ask here): the
        action is applied to a copy, so this instance is never changed.  Only what
        this instance knows is judged: a claim about cards it cannot see passes here
        and is judged when they are revealed."""
        trial = copy.deepcopy(self)
        try:
            trial.apply(action)
        except EngineError as exc:
            return str(getattr(exc, "reason", None) or exc)
        return None

    def legal_actions(self, seat: int) -> list[Action]:
        """The actions ``seat`` may take now (empty unless it is in ``to_move()``)."""
        if seat not in self.to_move():
            return []
        legal = self.PHASES.get(self.phase, NO_PHASE).legal
        return legal(self, seat) if legal is not None else []

    def resolve(self, answer: Any) -> list[Event]:
        ob = self._pending
        if ob is None or self._gen is None:
            raise BadAnswer("no obligation is pending")
        self._learn(ob, answer)
        self._pending = None
        self._advance(answer)
        return self._flush()

    def illegal(self, action: Action, reason: str) -> IllegalAction:
        """Build the error for an illegal ``action`` (``raise self.illegal(...)``)."""
        return IllegalAction(action, self.phase, action.seat, reason)

    def emit(
        self,
        kind: str,
        text: str,
        seat: int | None = None,
        audience: Iterable[int] | None = None,
        detail: Any = None,
        **data: Any,
    ) -> None:
        aud = frozenset(audience) if audience is not None else None
        self._events.append(Event(kind, text, seat, aud, data, detail))

    def _then_automatic(self, handler: Handler | None) -> Handler:
        """Run ``handler``, then every automatic phase the game reaches, until it is in a
        phase that waits for a seat (or is over)."""
        if inspect.isgenerator(handler):
            yield from handler
        while True:
            name = self.next_phase()
            auto = self.PHASES.get(name, NO_PHASE).auto
            if auto is None:
                self.phase = name
                return
            work = auto(self)
            if inspect.isgenerator(work):
                yield from work

    def _run(self, handler: Handler) -> list[Event]:
        self._gen = handler
        self._advance(None)
        return self._flush()

    def _advance(self, value: Any) -> None:
        assert self._gen is not None
        try:
            ob = self._gen.send(value)
        except StopIteration:
            self._gen = None
            return
        except BaseException:
            self._gen = None
            raise
        if not isinstance(ob, Obligation):
            self._gen = None
            raise EngineError(f"{self.NAME} handler yielded {ob!r}, not an obligation")
        self._pending = ob

    def _flush(self) -> list[Event]:
        events, self._events = self._events, []
        return events

    def _learn(self, ob: Obligation, answer: Any) -> None:
        """Check a dealer answer's shape and record what it teaches this instance."""
        if isinstance(ob, Shuffle):
            for h in ob.handles:
                self.seen.pop(h, None)
                self.faces.pop(h, None)
        elif isinstance(ob, Reveal | Deal | Transfer):
            handles = (ob.handle,) if isinstance(ob, Transfer) else ob.handles
            if not isinstance(answer, Mapping) or not set(answer) <= set(handles):
                raise BadAnswer(f"answer to {ob} must map some of {handles} to faces")
            for h, mask in who_learns(ob, self.all_seats).items():
                self.seen[h] = self.seen.get(h, 0) | mask
            for h, face in answer.items():
                if not isinstance(face, Card):
                    raise BadAnswer(f"answer to {ob}: {face!r} is not a card")
                self.faces[h] = face
        elif isinstance(ob, Roll):
            if (
                not isinstance(answer, tuple)
                or len(answer) != ob.count
                or not all(isinstance(v, int) and 1 <= v <= ob.sides for v in answer)
            ):
                raise BadAnswer(f"answer to {ob} must be {ob.count} dice in 1..{ob.sides}")
        elif isinstance(ob, JointRandom):
            if not isinstance(answer, int) or not 0 <= answer < ob.bound:
                raise BadAnswer(f"answer to {ob} must be an int in range({ob.bound})")
        elif isinstance(ob, Prove) and answer is not None:
            raise BadAnswer(f"answer to {ob} must be None")

    # ---- knowledge helpers -------------------------------------------------------

    def visible(self, seat: int, handle: int) -> bool:
        return bool((self.seen.get(handle, 0) >> seat) & 1)

    def face_for(self, seat: int, handle: int) -> Card | None:
        """The face of ``handle`` if ``seat`` may see it (and this instance knows it)."""
        if (self.seen.get(handle, 0) >> seat) & 1:
            return self.faces.get(handle)
        return None

    def card_view(self, seat: int, handle: int) -> CardView:
        return CardView(handle, self.face_for(seat, handle))

    def cards_view(self, seat: int, handles: Iterable[int]) -> tuple[CardView, ...]:
        if type(self).face_for is not Game.face_for:
            return tuple([CardView(h, self.face_for(seat, h)) for h in handles])
        # face_for inline: every view shows a hand this way, after every action
        seen, faces, bit = self.seen, self.faces, 1 << seat
        return tuple([CardView(h, faces.get(h) if seen.get(h, 0) & bit else None) for h in handles])

    def is_public(self, handle: int) -> bool:
        return self.seen.get(handle, 0) == self.all_seats

    # ---- helpers for handlers ------------------------------------------------------

    def shuffle_zone(self, zone: str, reason: str = "shuffle") -> Handler:
        yield Shuffle(tuple(self.zones[zone]), reason)

    def reveal(
        self, handles: Iterable[int], to: Iterable[int] | None = None, reason: str = "reveal"
    ) -> Handler:
        """Reveal and return the faces learnt (``faces = yield from self.reveal(...)``)."""
        hs = tuple(handles)
        target = frozenset(to) if to is not None else None
        answer = yield Reveal(hs, target, reason)
        return answer

    def deal(self, hands: Iterable[tuple[int, Iterable[int]]], reason: str = "deal") -> Handler:
        """Show each hand to its own seat, all at once (one :class:`Deal`); return the
        faces learnt (``faces = yield from self.deal(...)``)."""
        answer = yield Deal(tuple((seat, tuple(hand)) for seat, hand in hands), reason)
        return answer

    # ---- comparison and hashing ----------------------------------------------------

    def state_hash(self) -> str:
        """SHA-256 of the public state: equal on every honest peer at the same point."""
        blob = json.dumps(canonical(self.hashed_state()), separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(blob.encode()).hexdigest()

    def hashed_state(self) -> dict[str, Any]:
        """The public state that ``state_hash`` digests, as plain engine data (before
        ``canonical``). Two engines whose ``hashed_state()`` are equal (``==``) have
        equal state hashes, unless two values are equal in Python yet rendered apart
        (``True == 1``, a ``Card`` and a plain pair, a class whose own ``__eq__``
        ignores something); comparing them costs far less than hashing both, so a peer
        compares its seat engine with the table's this way after every action."""
        public_faces = {h: f for h, f in self.faces.items() if self.is_public(h)}
        data = {
            "game": self.NAME,
            "seats": self.seats,
            "options": hashed_options(
                self.OPTIONS,
                {k: v for k, v in self.options.items() if k not in TABLE_OPTION_NAMES},
            ),
            "phase": self.phase,
            "turns": self.turns,
            "zones": self.zones.snapshot(),
            "seen": dict(self.seen),
            "public_faces": public_faces,
            "pending": self._pending,
            "state": self.public_state(),
        }
        if self.gone:
            data["gone"] = list(self.gone)
        return data

    def check_conservation(self) -> None:
        self.zones.check(len(self.deck))

    # ---- wire form of actions --------------------------------------------------------

    def encode_action(self, action: Action) -> dict[str, Any]:
        """Plain data (msgpack-able) for ``action``: ``type`` and every field."""
        if not isinstance(action, self.ACTIONS):
            raise EngineError(f"{action!r} is not an action of {self.NAME}")
        return codec.encode(action)

    def decode_action(self, data: Any) -> Action:
        """Decode untrusted data (a peer's) into an action of this game, checking every
        field's exact type and bounds; anything else raises ``MalformedAction``."""
        return codec.decode(self, data, self._BY_NAME)
