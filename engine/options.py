"""Table options: named, typed, validated, with the rulebook's defaults.

Every **[house]** choice of a game's rules (docs/rules/) is an ``OptionSpec``
of the game. Values arrive as Python values or as ``key=value`` strings from
the command line; both are checked, and a bad one raises ``BadOption`` listing
what is allowed.

An option added after games were first recorded has ``hashed_at_default=False``: while
it holds its default it is left out of ``Game.state_hash``, so a record signed before
the option existed still replays to the hash it signed (p2p/RECORD_FORMAT.md, ``final``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from engine.errors import BadOption

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


@dataclass(frozen=True, slots=True)
class OptionSpec:
    """One option: ``kind`` is ``bool``, ``int`` or ``str``."""

    name: str
    kind: type
    default: Any
    help: str
    choices: tuple[Any, ...] | None = None
    minimum: int | None = None
    maximum: int | None = None
    hashed_at_default: bool = True

    def allowed(self) -> str:
        if self.choices is not None:
            return "one of " + ", ".join(str(c) for c in self.choices)
        if self.kind is bool:
            return "on or off"
        if self.kind is int:
            lo, hi = self.minimum, self.maximum
            if lo is not None and hi is not None:
                return f"a whole number from {lo} to {hi}"
            if lo is not None:
                return f"a whole number, {lo} or more"
            if hi is not None:
                return f"a whole number, {hi} or less"
            return "a whole number"
        return "a string"

    def coerce(self, value: Any) -> Any:
        v = value
        if isinstance(v, str) and self.kind is not str:
            text = v.strip().lower()
            if self.kind is bool:
                if text in _TRUE:
                    v = True
                elif text in _FALSE:
                    v = False
            elif self.kind is int:
                with contextlib.suppress(ValueError):
                    v = int(text)
        if self.kind is int and isinstance(v, bool):
            v = None  # a bool is not an int option value
        if not isinstance(v, self.kind):
            raise BadOption(f"option {self.name!r}: bad value {value!r}; expected {self.allowed()}")
        if self.choices is not None and v not in self.choices:
            raise BadOption(f"option {self.name!r}: bad value {value!r}; expected {self.allowed()}")
        if self.kind is int and (
            (self.minimum is not None and v < self.minimum)
            or (self.maximum is not None and v > self.maximum)
        ):
            raise BadOption(f"option {self.name!r}: bad value {value!r}; expected {self.allowed()}")
        return v


def resolve_options(specs: Iterable[OptionSpec], given: Mapping[str, Any] | None) -> dict[str, Any]:
    """Defaults overlaid with ``given``; unknown names and bad values raise."""
    by_name = {s.name: s for s in specs}
    out = {name: spec.default for name, spec in by_name.items()}
    for name, value in (given or {}).items():
        if name not in by_name:
            known = ", ".join(sorted(by_name)) or "none"
            raise BadOption(f"unknown option {name!r}; this game's options are: {known}")
        out[name] = by_name[name].coerce(value)
    return out


def hashed_options(specs: Iterable[OptionSpec], values: Mapping[str, Any]) -> dict[str, Any]:
    """The options a state hash covers: all but a later option still at its default."""
    late = {s.name: s.default for s in specs if not s.hashed_at_default}
    return {k: v for k, v in values.items() if k not in late or v != late[k]}


def parse_option_args(pairs: Iterable[str]) -> dict[str, str]:
    """Turn ``["k=v", ...]`` into a dict; malformed pairs raise ``BadOption``."""
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise BadOption(f"option {pair!r} is not of the form key=value")
        out[key.strip()] = value.strip()
    return out


# ---- options of the table, not of a game's rules ----------------------------------------

SURVIVE_MIN_SEATS = 3

SURVIVE = OptionSpec(
    "survive",
    bool,
    False,
    "go on without a seat that has left for good: each seat's key is escrowed with the "
    "others, so all the other players together could open your cards (needs 3+ seats)",
)
"""Issue 21: a table that survives a lost player (docs/design.md, "Surviving a lost
player"). The cost is in the help text, so `slaiga options GAME` says it plainly."""

ABSENT_AFTER = OptionSpec(
    "absent_after",
    int,
    60,
    "with survive: seconds a player owing a step may be silent before the others may "
    "sign that it has left for good (separate from the decision limit)",
    minimum=1,
    maximum=24 * 3600,
)
"""The absence limit (docs/design.md, "Surviving a lost player"): it is in the signed
manifest's options, so every seat and ``slaiga verify`` read the same limit."""

OPEN_HANDS = OptionSpec(
    "open_hands",
    bool,
    False,
    "when the game is over every seat publishes its key, so anyone holding the record can "
    "read every card ever dealt in this game, and checks that only one player could make "
    "(the Slave gift) become public; the game's cards are secret only until it ends "
    "(with survive, the others open the key of a player who left, from the escrow)",
    hashed_at_default=False,
)
"""Issue 20: hands opened after the game (docs/design.md, "Hands opened after the game";
p2p/RECORD_FORMAT.md, the ``open`` round).  Left out of the signed manifest while off
(:func:`manifest_options`), so a table without it signs the same bytes as before."""

TABLE_OPTIONS: tuple[OptionSpec, ...] = (SURVIVE, ABSENT_AFTER, OPEN_HANDS)
"""Options every game has (``engine.game.Game`` appends them to each game's own). They
change how the table runs, not the rules, so they stay out of the state hash."""

TABLE_OPTION_NAMES = frozenset(o.name for o in TABLE_OPTIONS)


def manifest_options(specs: Iterable[OptionSpec], values: Mapping[str, Any]) -> dict[str, Any]:
    """The options a table's manifest signs: all but a later option still at its default
    (``hashed_at_default=False``), so adding such an option leaves old tables' bytes
    alone; the engine resolves a missing option to its default."""
    return hashed_options(specs, values)


def check_table_options(options: Mapping[str, Any], seats: int) -> None:
    """Refuse table options that the seat count cannot support."""
    if options.get(SURVIVE.name) and seats < SURVIVE_MIN_SEATS:
        raise BadOption(
            f"option 'survive' needs at least {SURVIVE_MIN_SEATS} players; this table has {seats}"
        )
