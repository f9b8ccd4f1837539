"""Moves as players say them: typed shorthand, plain words, and short grouped menus.

For each game, :class:`Moves` turns the seat's legal actions into

* **shorthand** a person can type (``say``/``parse`` round-trip every legal
  action): ``3c 3h``, ``pass``, ``shoot bob Jc claim As``, ``check``,
  ``joker``, ``keep 6 6 6`` (dice named by value), ``steal bob 12``,
  ``8s rule rank 7: draw 2``, ``improper 7``;
* **words** for menus and for moves made for you (``describe``);
* **menus**: the card or cards first, then the target or position
  (``menu``), with the suggested move (if any) preselected;
* **help**: what this phase is about and every move it allows (``help``).

Everything is computed from what the seat may see (``view``, ``face_for``
and ``legal_actions`` of its own seat). A typed move may stand for several
actions (``shoot bob Jc claim As`` is the shot and then its card): the first is
sent now and the rest when the game asks for them.

Each game's words subclass ``Moves`` (or ``TableMoves``, whose words are one table) in
``engine/games/<game>/words.py``; ``GenericMoves`` serves a game without words of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from engine import codec
from engine.cards import JOKER_RANK, SUIT_NAMES, SUIT_SYMBOLS, Card
from engine.game import Action, Game
from engine.words.menus import MoveError, Node, Plan, one_of
from engine.words.names import Names
from engine.words.tokens import card_word, maybe_card, tokens

# ---- small helpers -------------------------------------------------------------------


def sym(suit: int) -> str:
    return SUIT_SYMBOLS[suit] if suit in range(4) else "?"


def suit_word(suit: int) -> str:
    return SUIT_NAMES[suit]


def hand_of(game: Game, seat: int) -> dict[int, Card]:
    """The seat's own hand: handle -> face, for the cards it may see."""
    return {c.handle: c.face for c in game.view(seat)["hand"] if c.face is not None}


def face(game: Game, seat: int, handle: int) -> Card | None:
    return game.face_for(seat, handle)


def face_str(game: Game, seat: int, handle: int) -> str:
    f = face(game, seat, handle)
    return str(f) if f is not None else "▒▒"


def code(game: Game, seat: int, handle: int) -> str:
    f = face(game, seat, handle)
    if f is None:
        raise MoveError(f"card #{handle} is hidden from you")
    return card_word(f)


def faces_sorted(faces: Iterable[Card], key: Callable[[Card], Any]) -> str:
    return " ".join(str(f) for f in sorted(faces, key=key))


def take_cards(
    toks: Sequence[str], pool: dict[int, Card], missing: str = "you do not hold {card}"
) -> list[int]:
    """The handles the card tokens name, each token taking one unused card of ``pool``.

    ``missing`` says why a card not in ``pool`` cannot be named (``{card}`` is filled in);
    a card named more often than ``pool`` holds it is "named twice"."""
    out: list[int] = []
    for tok in toks:
        card = maybe_card(tok)
        if card is None and tok in MOVE_WORDS:
            raise MoveError(
                f"{tok} is a move, not a card: type {tok} alone, or name cards like 9h 9s"
            )
        if card is None:
            raise MoveError(f"not a card: {tok!r} (cards are typed like 3c, 10h, Qs, As, jk)")
        found = [h for h, f in pool.items() if f == card and h not in out]
        if not found:
            if any(f == card for f in pool.values()):
                raise MoveError(f"{card} named twice")
            raise MoveError(missing.format(card=card))
        out.append(found[0])
    return out


MOVE_WORDS = frozenset({"pass", "play", "give", "draw", "take", "check", "keep", "call"})
"""Words that are moves in some game: typed among cards, they are told to stand alone."""


def one_card(
    toks: Sequence[str], pool: dict[int, Card], missing: str = "you do not hold {card}"
) -> int:
    if not toks:
        raise MoveError("name a card, like 9d")
    if len(toks) > 1:
        if all(t.isdigit() for t in toks):
            raise MoveError(
                f"{' '.join(toks)} are not cards: name one card by rank and suit, like 9d"
                " (? lists your moves)"
            )
        raise MoveError(f"name just one card, like 9d (not {len(toks)}: {' '.join(toks)})")
    return take_cards(toks, pool, missing)[0]


def words_of(text: str) -> list[str]:
    """Lower-case tokens, quotes kept."""
    return [t if t.startswith('"') else t.lower() for t in tokens(text)]


def same_move(game: Game, seat: int, a: Action, b: Action) -> bool:
    """Equal, or equal up to which of two identical faces (or dice) is meant."""
    if a == b:
        return True
    if type(a) is not type(b):
        return False
    return normal(game, seat, a) == normal(game, seat, b)


def normal(game: Game, seat: int, a: Action) -> tuple:
    """An action with its handles replaced by the faces the seat sees (which fields are
    handles, ``engine.codec`` knows), and whatever else the game's words say is the same
    (``Moves.normal_value``: kept dice by value)."""
    from engine.words import words_for

    moves = words_for(game.NAME).moves
    out: list[Any] = [type(a).__name__]
    kinds = codec.field_kinds(type(a))
    for name in a.__dataclass_fields__:
        v = getattr(a, name)
        if kinds[name] == "card" and isinstance(v, int):
            v = face(game, seat, v) or ("#", v)
        elif kinds[name] == "cards" and isinstance(v, tuple):
            v = tuple(sorted((face(game, seat, h) or ("#", h) for h in v), key=str))
        else:
            v = moves.normal_value(game, seat, name, v)
        out.append((name, v))
    return tuple(out)


def fill(preset: tuple[int, ...], n: int, size: int) -> tuple[int, ...]:
    """``preset`` topped up with the first other items to ``n`` ticks (a ready answer)."""
    out = list(preset[:n])
    for i in range(size):
        if len(out) >= n:
            break
        if i not in out:
            out.append(i)
    return tuple(sorted(out))


def pick_legal(legal: Sequence[Action], test: Callable[[Action], bool], why: str) -> Action:
    for a in legal:
        if test(a):
            return a
    raise MoveError(why)


def plan_of(legal: Sequence[Action], test: Callable[[Action], bool], why: str) -> Plan:
    """The plan of one action: the legal action that passes ``test`` (see ``pick_legal``)."""
    return (pick_legal(legal, test, why),)


def dry_run(game: Game, action: Action) -> str | None:
    """Why the game would refuse ``action`` now (tried on a copy), or ``None``."""
    return game.check(action)


def suit_order(f: Card | None) -> tuple[int, int]:
    """Suit-major order for menus: jokers after the suits, hidden cards last."""
    if f is None:
        return (9, 0)
    return (5, 0) if f.rank == JOKER_RANK else (f.suit, f.rank)


# ---- the interface -----------------------------------------------------------------------


class Moves:
    """One game's moves for one table (names known); every method is for one seat."""

    def __init__(self, names: Names) -> None:
        self.names = names

    @staticmethod
    def normal_value(game: Game, seat: int, name: str, value: Any) -> Any:
        """Field ``name``'s value as ``same_move`` compares it (cards are compared by face
        already); a game whose moves name other things by value says so here."""
        return value

    # shorthand and words
    def say(self, game: Game, seat: int, action: Action) -> str:
        raise NotImplementedError

    def describe(self, game: Game, seat: int, action: Action) -> str:
        raise NotImplementedError

    def parse(self, game: Game, seat: int, text: str) -> Plan:
        """The plan a typed move stands for; ``MoveError`` says why it does not fit."""
        raise NotImplementedError

    # menus
    def menu(self, game: Game, seat: int, hint: Action | None = None) -> Node | Plan:
        raise NotImplementedError

    def question(self, game: Game, seat: int) -> str:
        """The prompt's title: what the seat is asked now."""
        return "Your move"

    def window_default(self, game: Game, seat: int) -> Action | None:
        """In an answer window (several may answer; passing is allowed): the pass."""
        return None

    def always_ask(self, game: Game, seat: int) -> bool:
        """Ask even with one legal move (the question itself must not show what you hold)."""
        return False

    def automatic(
        self, game: Game, seat: int, legal: Sequence[Action], ask_reload: bool
    ) -> Action | None:
        """A move made for the seat without asking (one option only, or a reload)."""
        if len(legal) == 1 and not self.always_ask(game, seat):
            return legal[0]
        return None

    def phase_help(self, game: Game, seat: int) -> str:
        return ""

    def help(self, game: Game, seat: int) -> list[str]:
        """The ``?`` page: this phase in words, then every legal move and how to type it."""
        legal = game.legal_actions(seat)
        out = [self.phase_help(game, seat), ""]
        if not legal:
            out.append("You have no move now; the screen shows whom the table waits for.")
            return out
        out.append(f"Your {len(legal)} legal move{'s' if len(legal) != 1 else ''} now:")
        groups: dict[str, list[Action]] = {}
        for a in legal:
            groups.setdefault(type(a).__name__, []).append(a)
        for acts in groups.values():
            for a in acts[:HELP_PER_KIND]:
                out.append(f"  {self.say(game, seat, a):<28} {self.describe(game, seat, a)}")
            if len(acts) > HELP_PER_KIND:
                out.append(f"  … and {len(acts) - HELP_PER_KIND} more like these")
        out += ["", *COMMON_HELP]
        return out


HELP_PER_KIND = 8
COMMON_HELP = (
    "Choose with ↑ ↓ and Enter (or type the option's number and Enter); Esc goes back a step.",
    "Or type a move as above and press Enter. Cards are typed like 3c 10h Qs As jk;",
    "suits as c d h s or clubs diamonds hearts spades; players by name (or its start).",
    "Commands: ? this help · rules the game's rules · log (or PgUp) every event so far ·"
    " quit leave the game.",
)

# ---- words written once -------------------------------------------------------------


@dataclass(frozen=True)
class Words:
    """One action kind's words, written once: ``typed`` is how a person types it and ``told``
    how it is described, both templates over the action's fields (``{card}``, ``{target}``).
    In ``typed`` a card is its code (``9h``) and a seat its name as typed; in ``told`` a card
    is its face (``9♥``) and a seat its player's name; a flag is ``yes``/``no`` in both."""

    typed: str
    told: str


@dataclass(frozen=True)
class Phrase:
    """One action kind's words, written once, where a template is not enough: ``typed`` and
    ``told`` are functions ``(moves, game, seat, action) -> str`` (the ``Moves`` gives the
    table's names and the game's helpers)."""

    typed: Callable[[Any, Game, int, Any], str]
    told: Callable[[Any, Game, int, Any], str]


class TableMoves(Moves):
    """Moves whose words are one table, ``WORDS``: action class -> ``Words`` or ``Phrase``.
    ``say`` and ``describe`` read the table, and by default ``parse`` takes the legal action
    whose typed form is the text (spaces and case do not matter), so the three cannot
    disagree. A game whose typed moves take other forms too (aliases, several actions at
    once) writes its own ``parse`` (Slaiga's words do)."""

    WORDS: ClassVar[Mapping[type[Action], Words | Phrase]] = {}

    def _fill(self, game: Game, seat: int, a: Action, typed: bool) -> str:
        words = self.WORDS.get(type(a))
        if words is None:
            raise MoveError(f"no words for {type(a).__name__}")
        if isinstance(words, Phrase):
            return (words.typed if typed else words.told)(self, game, seat, a)
        kinds = codec.field_kinds(type(a))
        values: dict[str, str] = {}
        for name in a.__dataclass_fields__:
            v = getattr(a, name)
            kind = kinds[name] if v is not None else "value"
            if kind == "card":
                values[name] = code(game, seat, v) if typed else face_str(game, seat, v)
            elif kind == "cards":
                values[name] = " ".join(
                    code(game, seat, h) if typed else face_str(game, seat, h) for h in v
                )
            elif kind in ("seat", "seats"):
                show = self.names.token if typed else self.names
                values[name] = " ".join(show(t) for t in (v if kind == "seats" else (v,)))
            elif kind == "flag":
                values[name] = "yes" if v else "no"
            else:
                values[name] = str(v)
        return (words.typed if typed else words.told).format(**values)

    def say(self, game: Game, seat: int, a: Action) -> str:
        return self._fill(game, seat, a, typed=True)

    def describe(self, game: Game, seat: int, a: Action) -> str:
        return self._fill(game, seat, a, typed=False)

    def parse(self, game: Game, seat: int, text: str) -> Plan:
        want = " ".join(text.lower().split())
        if not want:
            raise MoveError("type a move (? lists them)")
        for a in game.legal_actions(seat):
            if " ".join(self.say(game, seat, a).lower().split()) == want:
                return (a,)
        raise MoveError("that is not a move now (? lists your moves)")

    def menu(self, game: Game, seat: int, hint: Action | None = None) -> Node | Plan:
        describe = lambda a: self.describe(game, seat, a)  # noqa: E731
        return one_of(self.question(game, seat), game.legal_actions(seat), describe, hint)


# ---- a game without words of its own -----------------------------------------------------------------------


class GenericMoves(Moves):
    """A game without words of its own: each action typed and named from its fields (cards
    by face and seats by name, as ``engine.codec`` reads their annotations), and chosen
    from one list. Enough to play it; a game worth playing brings its own ``Moves``."""

    def _fields(self, game: Game, seat: int, a: Action) -> list[str]:
        out = []
        kinds = codec.field_kinds(type(a))
        for name in a.__dataclass_fields__:
            if name == "seat":
                continue
            v = getattr(a, name)
            kind = kinds[name] if v is not None else "value"
            if kind == "card":
                f = face(game, seat, v)
                v = card_word(f) if f is not None else f"#{v}"
            elif kind == "cards":
                v = " ".join(code(game, seat, h) for h in v)
            elif kind == "flag":
                v = "yes" if v else "no"
            elif kind == "seat":
                v = self.names.token(v)
            elif kind == "seats":
                v = " ".join(self.names.token(t) for t in v)
            out.append(str(v))
        return out

    def say(self, game: Game, seat: int, a: Action) -> str:
        return " ".join([_words(type(a).__name__).replace(" ", "-"), *self._fields(game, seat, a)])

    def describe(self, game: Game, seat: int, a: Action) -> str:
        return " ".join([_words(type(a).__name__), *self._fields(game, seat, a)])

    def parse(self, game: Game, seat: int, text: str) -> Plan:
        want = " ".join(text.lower().split())
        for a in game.legal_actions(seat):
            said = self.say(game, seat, a).lower()
            if want in (said, said.split(" ", 1)[-1]):
                return (a,)
        raise MoveError("that is not a move now (? lists your moves)")

    def menu(self, game: Game, seat: int, hint: Action | None = None) -> Node | Plan:
        describe = lambda a: self.describe(game, seat, a)  # noqa: E731
        return one_of(self.question(game, seat), game.legal_actions(seat), describe, hint)


def _words(name: str) -> str:
    """ "PlayCard" -> "play card"."""
    return "".join(" " + c.lower() if c.isupper() else c for c in name).strip()


def validate_plan(game: Game, seat: int, plan: Plan) -> str | None:
    """Why the plan's first action cannot be sent now, or ``None``."""
    if not plan:
        return "nothing to do"
    first = plan[0]
    if first.seat != seat:
        return "that is not your move"
    if first in game.legal_actions(seat):
        return None
    return dry_run(game, first)
