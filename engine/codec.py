"""The wire form of actions: one schema per action class, read from its annotations.

Actions travel between peers as plain data (a map with ``type`` and one entry per
field), and a peer may send anything at all. Every action is a frozen dataclass whose
field annotations say exactly what each value may be, so one decoder serves every game:

=====================================================  =================================
annotation                                             accepted value
=====================================================  =================================
``Seat``                                               ``int`` in ``range(game.seats)``
``Handle``                                             ``int`` in ``range(len(game.deck))``
``Annotated[int, Range(lo, stop)]``                    ``int`` with ``lo <= v < stop``
``bool``                                               ``True`` or ``False``, never 0/1
``Annotated[str, Text(n)]``                            1..n printable characters
``Annotated[str, Choice(("a", "b"))]``                 one of the listed strings
``Annotated[tuple[X, ...], Size(lo, hi)]``             lo..hi items, each an ``X``
``X | None``                                           ``None`` or an ``X``
``Annotated[C, Nested(C, encode, decode, check, w)]``  a value of class ``C`` with its own
                                                       wire form (Aight's rule specs)
=====================================================  =================================

``stop`` may be a table size (``SEATS``, ``CARDS``, ``CARDS + 1``) read from the game the
action is decoded for. An ``int`` or ``str`` without bounds, or any other annotation, is a
programming error reported when the game class is defined.

``decode(game, data)`` turns untrusted data into an action or raises ``MalformedAction``,
whatever the data is (never ``TypeError``, ``KeyError``, ``RecursionError`` and the like).
``problem(game, action)`` checks an action built in this process the same way; ``Game.apply``
runs it first, so a ``True`` or ``1.0`` where a handle is due is refused as an
``IllegalAction`` instead of slipping through ``in`` tests (``True == 1``).
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Union

from engine.errors import EngineError, MalformedAction

BRIEF_LEN = 60  # how much of an untrusted value an error message quotes


def brief(value: Any) -> str:
    """A short, safe rendering of an untrusted value for an error message.

    ``repr`` is unsafe on hostile data: deep nesting overflows the stack, a huge
    integer raises ``ValueError`` (CPython's digit limit), and a huge string or
    list makes a huge message. Only scalars are shown, and only briefly.
    """
    if value is None or isinstance(value, bool | float):
        return repr(value)
    if isinstance(value, int):
        if value.bit_length() > 4 * BRIEF_LEN:
            return f"<int of {value.bit_length()} bits>"
        return repr(value)
    if isinstance(value, str):
        cut = value[:BRIEF_LEN]
        return repr(cut) + ("…" if len(value) > BRIEF_LEN else "")
    return f"<{type(value).__name__}>"


# ---- bounds, as annotation metadata ---------------------------------------------------


@dataclass(frozen=True, slots=True)
class TableSize:
    """A bound read from the game: its seat count or its number of cards, plus ``extra``."""

    what: str  # "seats" | "cards"
    extra: int = 0

    def __add__(self, n: int) -> TableSize:
        return TableSize(self.what, self.extra + n)

    def of(self, game: Any) -> int:
        base = game.seats if self.what == "seats" else len(game.deck)
        return base + self.extra

    def __str__(self) -> str:
        return self.what + (f" + {self.extra}" if self.extra else "")


SEATS = TableSize("seats")
CARDS = TableSize("cards")


@dataclass(frozen=True, slots=True)
class Range:
    """An ``int`` with ``lo <= v < stop``."""

    lo: int
    stop: int | TableSize


@dataclass(frozen=True, slots=True)
class Size:
    """A tuple of ``lo`` to ``hi`` items."""

    lo: int
    hi: int


@dataclass(frozen=True, slots=True)
class Text:
    """A non-empty printable ``str`` of at most ``limit`` characters."""

    limit: int


@dataclass(frozen=True, slots=True)
class Choice:
    """A ``str`` that is one of ``values``."""

    values: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Nested:
    """A value with its own wire form: ``encode`` makes plain data, ``decode`` reads it
    back (raising an ``EngineError`` on bad data), ``check`` vets an instance (raising an
    ``EngineError``); ``cls`` is its class and ``what`` its name in messages."""

    cls: type
    encode: Callable[[Any], Any]
    decode: Callable[[Any], Any]
    check: Callable[[Any], None]
    what: str


Seat = Annotated[int, Range(0, SEATS)]
"""A seat number of this table."""

Handle = Annotated[int, Range(0, CARDS)]
"""A card of this table (its handle)."""


# ---- field codecs ------------------------------------------------------------------------


class _Bad(Exception):
    """A value does not fit its field (turned into MalformedAction or IllegalAction)."""


class _Field:
    """Checks, encodes and decodes one kind of value."""

    def check(self, v: Any, game: Any) -> None:  # raise _Bad
        raise NotImplementedError

    def decode(self, v: Any, game: Any) -> Any:
        self.check(v, game)
        return v

    def encode(self, v: Any) -> Any:
        return v


class _Int(_Field):
    def __init__(self, bound: Range) -> None:
        self.lo = bound.lo
        stop = bound.stop
        # on the path of every action applied, so the table size is read inline
        self.fixed = stop if isinstance(stop, int) else None
        self.seats = isinstance(stop, TableSize) and stop.what == "seats"
        self.extra = stop.extra if isinstance(stop, TableSize) else 0

    def check(self, v: Any, game: Any) -> None:
        stop = self.fixed
        if stop is None:
            stop = (game.seats if self.seats else len(game.deck)) + self.extra
        if type(v) is not int or not self.lo <= v < stop:
            raise _Bad(f"must be an integer in {self.lo}..{stop - 1}, not {brief(v)}")


class _Bool(_Field):
    def check(self, v: Any, game: Any) -> None:
        if type(v) is not bool:
            raise _Bad(f"must be true or false, not {brief(v)}")


class _Text(_Field):
    def __init__(self, text: Text) -> None:
        self.limit = text.limit

    def check(self, v: Any, game: Any) -> None:
        if type(v) is not str or not 1 <= len(v) <= self.limit or not v.isprintable():
            raise _Bad(f"must be 1-{self.limit} printable characters, not {brief(v)}")


class _Choice(_Field):
    def __init__(self, choice: Choice) -> None:
        self.values = choice.values

    def check(self, v: Any, game: Any) -> None:
        if type(v) is not str or v not in self.values:
            raise _Bad(f"must be one of {', '.join(self.values)}, not {brief(v)}")


class _Tuple(_Field):
    def __init__(self, item: _Field, size: Size) -> None:
        self.item, self.lo, self.hi = item, size.lo, size.hi

    def _size(self, v: Any) -> None:
        if not self.lo <= len(v) <= self.hi:
            span = f"{self.lo}-{self.hi}" if self.lo != self.hi else str(self.lo)
            raise _Bad(f"must hold {span} items, not {len(v)}")

    def check(self, v: Any, game: Any) -> None:
        if type(v) is not tuple:
            raise _Bad(f"must be a tuple, not {brief(v)}")
        self._size(v)
        for i, x in enumerate(v):
            try:
                self.item.check(x, game)
            except _Bad as exc:
                raise _Bad(f"item {i} {exc}") from None

    def decode(self, v: Any, game: Any) -> Any:
        if type(v) not in (list, tuple):
            raise _Bad(f"must be a list, not {brief(v)}")
        self._size(v)
        out = []
        for i, x in enumerate(v):
            try:
                out.append(self.item.decode(x, game))
            except _Bad as exc:
                raise _Bad(f"item {i} {exc}") from None
        return tuple(out)

    def encode(self, v: Any) -> Any:
        return [self.item.encode(x) for x in v]


class _Optional(_Field):
    def __init__(self, inner: _Field) -> None:
        self.inner = inner

    def check(self, v: Any, game: Any) -> None:
        if v is not None:
            self.inner.check(v, game)

    def decode(self, v: Any, game: Any) -> Any:
        return None if v is None else self.inner.decode(v, game)

    def encode(self, v: Any) -> Any:
        return None if v is None else self.inner.encode(v)


class _Nested(_Field):
    def __init__(self, nested: Nested) -> None:
        self.nested = nested

    def check(self, v: Any, game: Any) -> None:
        if not isinstance(v, self.nested.cls):
            raise _Bad(f"must be a {self.nested.what}, not {brief(v)}")
        try:
            self.nested.check(v)
        except EngineError as exc:
            raise _Bad(f"is a bad {self.nested.what}: {exc}") from None

    def decode(self, v: Any, game: Any) -> Any:
        try:
            out = self.nested.decode(v)
        except EngineError as exc:
            raise _Bad(f"is a bad {self.nested.what}: {exc}") from None
        self.check(out, game)
        return out

    def encode(self, v: Any) -> Any:
        return self.nested.encode(v)


def _compile(tp: Any, where: str) -> _Field:
    """The codec of annotation ``tp``; ``where`` names the field for a programming error."""
    meta: tuple[Any, ...] = ()
    if typing.get_origin(tp) is Annotated:
        tp, *rest = typing.get_args(tp)
        meta = tuple(rest)
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(args) != 1 or len(typing.get_args(tp)) != 2:
            raise TypeError(f"{where}: only 'X | None' unions are supported")
        return _Optional(_compile(args[0], where))

    def only(kind: type) -> Any:
        found = [m for m in meta if isinstance(m, kind)]
        return found[0] if len(found) == 1 else None

    if tp is bool:
        return _Bool()
    if tp is int and (r := only(Range)) is not None:
        return _Int(r)
    if tp is str and (t := only(Text)) is not None:
        return _Text(t)
    if tp is str and (c := only(Choice)) is not None:
        return _Choice(c)
    if origin is tuple and (s := only(Size)) is not None:
        args = typing.get_args(tp)
        if len(args) != 2 or args[1] is not Ellipsis:
            raise TypeError(f"{where}: a tuple field must be tuple[X, ...]")
        return _Tuple(_compile(args[0], where), s)
    if (n := only(Nested)) is not None and tp is n.cls:
        return _Nested(n)
    raise TypeError(
        f"{where}: annotation {tp!r} {list(meta)!r} has no wire form "
        "(bound ints with Range, strs with Text or Choice, tuples with Size)"
    )


class Schema:
    """The codecs of one action class's fields, in field order."""

    __slots__ = ("cls", "fields", "names")

    def __init__(self, cls: type) -> None:
        hints = typing.get_type_hints(cls, include_extras=True)
        self.cls = cls
        self.fields = tuple(
            (f.name, _compile(hints[f.name], f"{cls.__name__}.{f.name}"))
            for f in dataclasses.fields(cls)
        )
        self.names = frozenset(name for name, _ in self.fields)


_SCHEMAS: dict[type, Schema] = {}


def schema(cls: type) -> Schema:
    """The (cached) schema of action class ``cls``; a bad annotation raises ``TypeError``."""
    s = _SCHEMAS.get(cls)
    if s is None:
        s = _SCHEMAS[cls] = Schema(cls)
    return s


def field_kinds(cls: type) -> dict[str, str]:
    """What each field of action class ``cls`` holds, read from its annotation (for words
    that name cards by face and seats by name): ``"card"`` (a ``Handle``), ``"cards"`` (a
    tuple of them), ``"seat"`` (a ``Seat``), ``"seats"``, ``"flag"`` (a ``bool``) or
    ``"value"``; an optional field is named by what it holds when present."""

    def kind(f: _Field) -> str:
        if isinstance(f, _Optional):
            return kind(f.inner)
        if isinstance(f, _Bool):
            return "flag"
        if isinstance(f, _Int) and f.lo == 0 and f.extra == 0 and f.fixed is None:
            return "seat" if f.seats else "card"
        if isinstance(f, _Tuple) and kind(f.item) in ("card", "seat"):
            return kind(f.item) + "s"
        return "value"

    return {name: kind(f) for name, f in schema(cls).fields}


# ---- the three operations --------------------------------------------------------------


def problem(game: Any, action: Any) -> str | None:
    """Why ``action`` (built in this process) breaks its schema, or ``None``."""
    for name, codec in schema(type(action)).fields:
        try:
            codec.check(getattr(action, name), game)
        except _Bad as exc:
            return f"field {name!r} {exc}"
    return None


def encode(action: Any) -> dict[str, Any]:
    """The plain-data form of ``action``: ``type`` and every field."""
    out: dict[str, Any] = {"type": type(action).__name__}
    for name, codec in schema(type(action)).fields:
        out[name] = codec.encode(getattr(action, name))
    return out


def decode(game: Any, data: Any, actions: Mapping[str, type]) -> Any:
    """Decode untrusted ``data`` into one of ``actions`` (by class name) for ``game``.

    Raises ``MalformedAction`` for anything that is not exactly an action of the game.
    """
    name = getattr(game, "NAME", "this game")
    if not isinstance(data, Mapping):
        raise MalformedAction(f"an action must be a map, not {brief(data)}")
    kind = data.get("type")
    if type(kind) is not str or kind not in actions:
        raise MalformedAction(f"unknown action type {brief(kind)} for {name}")
    s = schema(actions[kind])
    given = [k for k in data if k != "type"]
    if len(given) != len(s.names) or not all(type(k) is str and k in s.names for k in given):
        keys = sorted(brief(k) for k in given[: len(s.names) + 1])
        raise MalformedAction(f"action {kind}: fields {keys} != {sorted(s.names)}")
    values = {}
    for field_name, codec in s.fields:
        try:
            values[field_name] = codec.decode(data[field_name], game)
        except _Bad as exc:
            raise MalformedAction(f"action {kind}: field {field_name!r} {exc}") from None
        except RecursionError:
            raise MalformedAction(
                f"action {kind}: field {field_name!r} is nested too deeply"
            ) from None
    return s.cls(**values)
