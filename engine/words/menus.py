"""The questions a move is made of: short menus, several-item picks, numbers, text.

A move is chosen by walking a small tree of questions (each game's words build
one per phase from the legal actions): pick the card or cards first,
then the target or position. A question's answer is either the next question
or a *plan*: the actions to send, the first one now and the rest when the
game asks for them (a shot is "shoot Bob" then "this card, claimed as ♦").

``Option.then`` may be a callable, so that deep trees (the rule builder, every
position in the draw pile) are only built when a person goes there.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Union

from engine.game import Action

Plan = tuple[Action, ...]


class MoveError(ValueError):
    """A typed move or an answer that does not fit; the message says what would."""


@dataclass
class Option:
    """One menu line; ``covers`` lists the actions reachable through it (for hints)."""

    label: str
    then: Node | Plan | Callable[[], Node | Plan]
    covers: frozenset[Action] = frozenset()


@dataclass
class Choice:
    """Choose one option."""

    title: str
    options: list[Option]
    default: int = 0
    tag: str = ""  # what kind of question ("rule": the rule builder's first step)
    source: Any = None  # what built it (the rule builder, for its ``finish``)

    def point_at(self, hint: Action | None) -> Choice:
        """Start on the option that leads to ``hint`` (a suggested move), if any."""
        if hint is not None:
            for i, o in enumerate(self.options):
                if hint in o.covers:
                    self.default = i
                    break
        return self


@dataclass
class Pick:
    """Tick several items: exactly ``count``, or any number from ``least`` when ``count`` is None."""

    title: str
    items: Sequence[str]
    finish: Callable[[tuple[int, ...]], Node | Plan]
    count: int | None = None
    least: int = 0
    preset: tuple[int, ...] = ()
    typed: str = ""  # typed numbers are values, sent as "<typed> N N" to the game's parser

    def problem(self, chosen: Sequence[int]) -> str | None:
        n = len(chosen)
        if self.count is not None and n != self.count:
            return f"tick exactly {self.count} (Space ticks, Enter confirms); {n} ticked"
        if n < self.least:
            return f"tick at least {self.least}; {n} ticked"
        return None


@dataclass
class Number:
    """Choose a whole number in ``lo..hi`` (↑↓ or type it)."""

    title: str
    lo: int
    hi: int
    finish: Callable[[int], Node | Plan]
    default: int = 0
    describe: Callable[[int], str] = field(default=lambda n: str(n))


@dataclass
class Ask:
    """Type a line of text."""

    title: str
    finish: Callable[[str], Node | Plan]
    example: str = ""


Node = Union[Choice, Pick, Number, Ask]  # noqa: UP007 (a runtime alias)


def resolve(then: Node | Plan | Callable[[], Node | Plan]) -> Node | Plan:
    return then() if callable(then) else then


def is_plan(x: object) -> bool:
    return isinstance(x, tuple)


def choose(title: str, options: Sequence[Option], hint: Action | None = None) -> Node | Plan:
    """A ``Choice``, or the plan itself when there is only one way to go."""
    opts = list(options)
    if len(opts) == 1 and is_plan(opts[0].then):
        return opts[0].then
    return Choice(title, opts).point_at(hint)


def leaf(label: str, *plan: Action) -> Option:
    """An option that ends the move with ``plan``."""
    return Option(label, tuple(plan), frozenset(plan[:1]))


def branch(
    label: str, node: Node | Plan | Callable[[], Node | Plan], covers: Sequence[Action]
) -> Option:
    return Option(label, node, frozenset(covers))


def one_of(
    title: str,
    actions: Sequence[Action],
    label: Callable[[Action], str],
    hint: Action | None = None,
) -> Node | Plan:
    """Choose one of ``actions`` (each labelled by ``label``)."""
    return choose(title, [leaf(label(a), a) for a in actions], hint)


def grouped(
    title: str,
    actions: Sequence[Action],
    key: Callable[[Action], Any],
    label: Callable[[Any], str],
    inner: Callable[[Any, list[Action]], Node | Plan],
    hint: Action | None = None,
    order: Callable[[Any], Any] | None = None,
) -> Node | Plan:
    """First choose a group (the card, the target...), then ``inner(group, its actions)``."""
    groups: dict[Any, list[Action]] = {}
    for a in actions:
        groups.setdefault(key(a), []).append(a)
    keys = sorted(groups, key=order) if order is not None else list(groups)
    return choose(
        title,
        [branch(label(k), (lambda k=k: inner(k, groups[k])), groups[k]) for k in keys],
        hint,
    )


__all__ = [
    "Ask",
    "Choice",
    "MoveError",
    "Node",
    "Number",
    "Option",
    "Pick",
    "Plan",
    "branch",
    "choose",
    "grouped",
    "is_plan",
    "leaf",
    "one_of",
    "resolve",
]
