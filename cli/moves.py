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
sent now and the rest when the game asks for them (see ``cli.human``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from cli.menus import (
    Ask,
    Choice,
    MoveError,
    Node,
    Number,
    Option,
    Pick,
    Plan,
    branch,
    choose,
    grouped,
    leaf,
    one_of,
)
from cli.narrate import Names
from cli.render import aight_move_text, dice_text
from cli.rulebuilder import (
    card_word,
    format_rule,
    maybe_card,
    parse_rule,
    parse_suit,
    quoted,
    rule_menu,
    tokens,
    unquote,
)
from engine.cards import ACE, JOKER_RANK, SUIT_NAMES, SUIT_SYMBOLS, Card, slave_key
from engine.game import Action, Game

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
        if card is None:
            raise MoveError(f"not a card: {tok!r} (cards are typed like 3c, 10h, Qs, As, jk)")
        found = [h for h, f in pool.items() if f == card and h not in out]
        if not found:
            if any(f == card for f in pool.values()):
                raise MoveError(f"{card} named twice")
            raise MoveError(missing.format(card=card))
        out.append(found[0])
    return out


def one_card(
    toks: Sequence[str], pool: dict[int, Card], missing: str = "you do not hold {card}"
) -> int:
    if len(toks) != 1:
        raise MoveError("name one card, like 9d")
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
    """An action with its handles replaced by the faces the seat sees, and kept dice by value."""
    out: list[Any] = [type(a).__name__]
    view = game.view(seat)
    for name in a.__dataclass_fields__:
        v = getattr(a, name)
        if name in ("card", "give", "pile_card", "joker") and isinstance(v, int):
            v = face(game, seat, v) or ("#", v)
        elif name == "cards" and isinstance(v, tuple):
            v = tuple(sorted((face(game, seat, h) or ("#", h) for h in v), key=str))
        elif name == "keep" and isinstance(v, tuple) and "dice" in view:
            v = tuple(sorted(view["dice"][i] for i in v))
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


# ---- the interface -----------------------------------------------------------------------


class Moves:
    """One game's moves for one table (names known); every method is for one seat."""

    def __init__(self, names: Names) -> None:
        self.names = names

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


# ---- Slave ----------------------------------------------------------------------------------


class SlaveMoves(Moves):
    def _faces(self, game: Game, seat: int, hs: Sequence[int]) -> list[Card]:
        return [f for f in (face(game, seat, h) for h in hs) if f is not None]

    def say(self, game: Game, seat: int, a: Action) -> str:
        kind = type(a).__name__
        if kind in ("Pass", "NotOpener"):
            return "pass"
        words = " ".join(
            card_word(f) for f in sorted(self._faces(game, seat, a.cards), key=slave_key)
        )
        return f"give {words}" if kind == "Give" else words

    def receiver(self, game: Game, seat: int) -> int | None:
        titles = game.view(seat)["titles"]
        want = {"SLAVE": "KING", "KING": "SLAVE", "VICE SLAVE": "QUEEN", "QUEEN": "VICE SLAVE"}.get(
            titles[seat]
        )
        return titles.index(want) if want in titles else None

    def describe(self, game: Game, seat: int, a: Action) -> str:
        kind = type(a).__name__
        if kind == "Pass":
            return "pass (you may not play on this pile again)"
        if kind == "NotOpener":
            return "say you do not hold 3♣ (proved without showing your hand)"
        text = faces_sorted(self._faces(game, seat, a.cards), slave_key)
        if kind == "Give":
            return f"give {self.names(self.receiver(game, seat))} {text}"
        return f"play {text}"

    def parse(self, game: Game, seat: int, text: str) -> Plan:
        legal = game.legal_actions(seat)
        toks = words_of(text)
        if toks == ["pass"]:
            return plan_of(
                legal,
                lambda a: type(a).__name__ in ("Pass", "NotOpener"),
                self._no_pass(game, seat),
            )
        if toks and toks[0] in ("play", "give"):
            exchange = game.view(seat)["phase"] == "exchange"
            if toks[0] == "give" and not exchange:
                raise MoveError("give is for the exchange before a deal; to play, name the cards")
            if toks[0] == "play" and exchange:
                raise MoveError("this is the exchange: give the cards, like give 9h 9s")
            toks = toks[1:]
        if not toks:
            raise MoveError("name the cards, like 9h 9s")
        handles = set(take_cards(toks, hand_of(game, seat)))
        return plan_of(
            legal,
            lambda a: set(getattr(a, "cards", ())) == handles,
            self._why_not(game, seat, handles),
        )

    def _no_pass(self, game: Game, seat: int) -> str:
        v = game.view(seat)
        if v["phase"] == "exchange":
            return "you cannot pass in the exchange: give the cards"
        if v["phase"] == "opening":
            return "you hold 3♣, so you open the game"
        return "you lead a new pile, so you must play a set"

    def _why_not(self, game: Game, seat: int, handles: set[int]) -> str:
        from engine.games.slave.rules import beats, set_problem

        v = game.view(seat)
        faces = self._faces(game, seat, sorted(handles))
        if v["phase"] == "exchange":
            legal = game.legal_actions(seat)
            n = len(legal[0].cards) if legal else 0
            cards = f"{n} card" if n == 1 else f"{n} cards"
            return f"give exactly {cards}" + (" — your highest" if len(legal) == 1 else "")
        problem = set_problem(faces)
        if problem:
            return problem
        if v["phase"] == "opening":
            return "the first deal opens with 3♣ (alone or with other 3s)"
        top = [c.face for c in v["top"]]
        if top and not beats(faces, top):
            return f"{faces_sorted(faces, slave_key)} does not beat {faces_sorted(top, slave_key)}"
        return "that is not a legal play now (? lists your moves)"

    def question(self, game: Game, seat: int) -> str:
        v = game.view(seat)
        if v["phase"] == "exchange":
            return f"Exchange: give {self.names(self.receiver(game, seat))} cards"
        if v["phase"] == "opening":
            return "First deal: the holder of 3♣ opens"
        if not v["top"]:
            return "Your move: lead any set"
        return "Your move: beat the pile, or pass"

    def menu(self, game: Game, seat: int, hint: Action | None = None) -> Node | Plan:
        legal = game.legal_actions(seat)
        v = game.view(seat)
        if v["phase"] == "exchange" and len(legal) == 1:  # your highest cards: no choice
            return (legal[0],)
        if v["phase"] == "exchange":
            hand = sorted(hand_of(game, seat).items(), key=lambda kv: slave_key(kv[1]))
            n = len(legal[0].cards)
            hinted = getattr(hint, "cards", ())
            preset = fill(tuple(i for i, (h, _) in enumerate(hand) if h in hinted), n, len(hand))

            def give(chosen: tuple[int, ...]) -> Plan:
                hs = {hand[i][0] for i in chosen}
                return (
                    pick_legal(legal, lambda a: set(a.cards) == hs, "give exactly those cards"),
                )

            return Pick(
                f"Give {self.names(self.receiver(game, seat))} {n} card{'s' if n != 1 else ''} of your choice",
                [str(f) for _, f in hand],
                give,
                count=n,
                preset=preset,
            )
        plays = [a for a in legal if type(a).__name__ == "Play"]
        by_rank: dict[int, list[Action]] = {}
        for a in plays:
            rank = self._faces(game, seat, a.cards)[0].rank
            by_rank.setdefault(rank, []).append(a)
        opts: list[Option] = []
        for acts in by_rank.values():
            if len(acts) == 1:
                opts.append(leaf(self.describe(game, seat, acts[0]), acts[0]))
                continue
            sub = [leaf(self.describe(game, seat, a), a) for a in acts]
            cards = sorted(
                {f for a in acts for f in self._faces(game, seat, a.cards)}, key=slave_key
            )
            opts.append(
                branch(
                    f"play {card_word(cards[0])[:-1]}s ({' '.join(map(str, cards))})…",
                    Choice("Which set?", sub).point_at(hint),
                    acts,
                )
            )
        for a in legal:
            if type(a).__name__ in ("Pass", "NotOpener"):
                opts.append(leaf(self.describe(game, seat, a), a))
        return choose(self.question(game, seat), opts, hint)

    def phase_help(self, game: Game, seat: int) -> str:
        v = game.view(seat)
        return {
            "opening": "First deal: whoever holds 3♣ opens with it, alone or with other 3s. "
            "Everyone else shows, by proof, that they do not hold it.",
            "exchange": "Before the deal: SLAVE gives KING its two highest cards and KING gives "
            "back two of its choice; VICE SLAVE and QUEEN swap one the same way.",
            "play": "Beat the pile with a higher set of the same size (a four beats any single), "
            "or pass and sit out the rest of this pile. Ranks run 3 … K A 2; between equal "
            "ranks the suits decide (♣ < ♦ < ♥ < ♠). Leading a new pile, play any set.",
        }.get(v["phase"], "")


# ---- Slaiga ----------------------------------------------------------------------------------


class SlaigaMoves(Moves):
    ANSWER_WORDS = ("check", "miss", "concede")

    def step(self, game: Game, seat: int) -> Any:
        return game.view(seat)["task"]

    def _opponents(self, game: Game, seat: int) -> list[int]:
        active = game.view(seat)["active"]
        return [t for t, a in enumerate(active) if a and t != seat]

    def _target(self, game: Game, seat: int, toks: list[str]) -> tuple[int, list[str]]:
        """The opponent named in ``toks`` (or the only one), and the other tokens."""
        opps = self._opponents(game, seat)
        rest = []
        found = None
        for tok in toks:
            plain = maybe_card(tok) is None and tok not in SUIT_ALIASES and tok not in RESERVED
            s = self.names.find(tok) if plain else None
            if s is not None and found is None:
                found = s
            else:
                rest.append(tok)
        if found is None:
            if len(opps) == 1:
                return opps[0], rest
            raise MoveError("say whom: " + ", ".join(self.names.token(t) for t in opps))
        if found not in opps:
            raise MoveError(f"{self.names(found)} is not an opponent in play")
        return found, rest

    # -- words
    def say(self, game: Game, seat: int, a: Action) -> str:
        kind = type(a).__name__
        step = self.step(game, seat)
        tok = self.names.token
        if kind == "Draw":
            return "draw" if a.source == "draw" else "draw discard"
        if kind == "Shoot":
            return f"shoot {tok(a.target)} {suit_word(a.suit)}"
        if kind == "JackShot":
            return f"jack {tok(a.target)} {code(game, seat, a.card)}"
        if kind in ("ShotCard", "Answer"):
            return code(game, seat, a.card) + (" ace" if a.ace else "")
        if kind == "Discard":
            return code(game, seat, a.card) + (" use" if a.declare else "")
        if kind == "ClaimWin":
            return f"slaiga {code(game, seat, a.card)}"
        if kind in ("Concede", "Miss", "Check", "Pass"):
            return kind.lower()
        if kind == "CancelCheck":
            return "joker"
        if kind == "AcceptCheck":
            return "accept"
        if kind == "MissVerdict":
            return "show"
        if kind in ("Give", "GiveBack"):
            return code(game, seat, a.card)
        if kind == "Place":
            return f"place {code(game, seat, a.card)} {a.position}"
        if kind == "Swap":
            return f"swap {code(game, seat, a.card)} for {code(game, seat, a.pile_card)}"
        if kind == "KingLook":
            return f"look {a.count}"
        if kind == "QueenSwap":
            return f"swap {code(game, seat, a.give)} for {self._discard_ref(game, seat, a.take)}"
        raise MoveError(f"no shorthand for {kind} in {step.kind if step else '?'}")

    def _discard_ref(self, game: Game, seat: int, handle: int) -> str:
        discard = [c.handle for c in game.view(seat)["discard"]]
        return f"#{discard.index(handle) + 1}"

    def describe(self, game: Game, seat: int, a: Action) -> str:
        kind = type(a).__name__
        v = game.view(seat)
        n = self.names
        if kind == "Draw":
            pile = v[a.source]
            top = str(pile[0]) if pile else "?"
            return (
                f"draw from the draw pile (top {top})"
                if a.source == "draw"
                else f"take the discard pile's top {top}"
            )
        if kind == "Shoot":
            return f"shoot {n(a.target)}: {sym(a.suit)} target, a {sym((a.suit + 1) % 4)} shot"
        if kind == "JackShot":
            return f"jack-shoot {n(a.target)} with {face_str(game, seat, a.card)}"
        if kind == "ShotCard":
            step = v["task"]
            return f"shoot with {face_str(game, seat, a.card)}, claimed {'an ace' if a.ace else 'a shoot card'} of {sym((step.n + 1) % 4)}"
        if kind == "Answer":
            return self._answer_words(game, seat, a)
        if kind == "Discard":
            f = face(game, seat, a.card)
            power = (
                " and use the king (reveal draw-pile cards)"
                if f and f.rank == 13
                else " and use the queen (swap with the discards)"
            )
            return f"discard {f}" + (power if a.declare else "")
        if kind == "ClaimWin":
            return (
                f"say slaiga: put {face_str(game, seat, a.card)} face down (claim a straight flush)"
            )
        if kind == "Concede":
            vol = v["volley"]
            if vol is not None and vol[0] == "jack":
                return "concede (the winner takes one of your cards, blind; it gives one back)"
            shots = vol[5] if vol else 0
            return f"concede (pay {shots} penalty card{'' if shots == 1 else 's'})"
        if kind == "Miss":
            vol = v["volley"]
            return f"miss: say you hold fewer than 3 {sym(vol[3]) if vol else ''}"
        if kind == "Check":
            step = v["task"]
            what = {
                "answer": "the face-down card",
                "miss_answer": "the miss",
                "win_ask": f"{n(step.other)}'s slaiga",
            }.get(step.kind, "it")
            return f"check {what} (a wrong check costs you)"
        if kind == "Pass":
            step = v["task"]
            return {
                "miss_answer": "accept the miss",
                "win_ask": "let the slaiga stand",
                "swap": "stop swapping",
            }.get(step.kind, "pass")
        if kind == "CancelCheck":
            return "play a joker: cancel the check"
        if kind == "AcceptCheck":
            tag = getattr(v["task"], "tag", "")
            if tag == "win":
                return "accept the check (your hand is shown)"
            return "accept the check (the card is shown)"
        if kind == "MissVerdict":
            return "show your hand to the checker (the verdict is proved)"
        if kind == "Give":
            return f"give {n(v['task'].other)} {face_str(game, seat, a.card)}"
        if kind == "GiveBack":
            return f"give {n(v['task'].other)} {face_str(game, seat, a.card)} back"
        if kind == "Place":
            return f"place {face_str(game, seat, a.card)} at position {a.position} ({position_words(a.position, len(v['draw']))})"
        if kind == "Swap":
            return f"swap {face_str(game, seat, a.card)} for {face_str(game, seat, a.pile_card)}"
        if kind == "KingLook":
            return f"reveal the next {a.count} draw-pile card{'s' if a.count != 1 else ''}"
        if kind == "QueenSwap":
            return f"give {face_str(game, seat, a.give)}, take {self._discard_words(game, seat, a.take)}"
        return kind

    def _discard_words(self, game: Game, seat: int, handle: int) -> str:
        discard = [c.handle for c in game.view(seat)["discard"]]
        i = discard.index(handle)
        f = face(game, seat, handle)
        where = "the top" if i == 0 else f"{i + 1} from the top"
        return f"{f} ({where})" if f is not None else f"the face-down card {where}"

    def _answer_words(self, game: Game, seat: int, a: Action) -> str:
        v = game.view(seat)
        vol = v["volley"]
        f = face_str(game, seat, a.card)
        if vol is None or vol[0] == "jack":
            return f"answer with {f}"
        last = vol[4][-1]
        role = "block" if seat == vol[2] else "shoot back"
        claim = f"{'an ace' if a.ace else ('a card' if role == 'block' else 'a shoot card')} of {sym((last.suit + 1) % 4)}"
        return f"{role} with {f}" + (f", claimed {claim}" if game.LYING else "")

    # -- typing
    def parse(self, game: Game, seat: int, text: str) -> Plan:
        legal = game.legal_actions(seat)
        step = self.step(game, seat)
        toks = words_of(text)
        if not toks or step is None:
            raise MoveError("type a move (? lists them)")
        kind = step.kind
        hand = hand_of(game, seat)
        first = toks[0]
        simple = {
            "check": "Check",
            "miss": "Miss",
            "concede": "Concede",
            "pass": "Pass",
            "accept": "AcceptCheck" if kind == "check_response" else "Pass",
            "done": "Pass",
            "stop": "Pass",
            "show": "MissVerdict",
            "joker": "CancelCheck",
        }
        if len(toks) == 1 and first in simple:
            want = simple[first]
            return (
                pick_legal(legal, lambda a: type(a).__name__ == want, f"you cannot {first} now"),
            )
        if first in ("draw", "take", "reload"):
            source = "discard" if first == "take" or "discard" in toks[1:] else "draw"
            return plan_of(
                legal,
                lambda a: type(a).__name__ == "Draw" and a.source == source,
                f"you cannot draw from the {source} pile now",
            )
        if first == "shoot" and kind == "turn":
            return self._parse_shoot(game, seat, toks[1:], legal)
        if first == "jack" and kind == "turn":
            target, rest = self._target(game, seat, toks[1:])
            h = one_card(rest, hand)
            return plan_of(
                legal,
                lambda a: type(a).__name__ == "JackShot" and a.target == target and a.card == h,
                "a jack shot needs one of your jacks",
            )
        if first == "slaiga":
            h = one_card(toks[1:], hand)
            return plan_of(
                legal,
                lambda a: type(a).__name__ == "ClaimWin" and a.card == h,
                "you cannot say slaiga now",
            )
        if first == "look":
            if len(toks) != 2 or not toks[1].isdigit():
                raise MoveError("look N: how many draw-pile cards the king reveals")
            n = int(toks[1])
            return plan_of(
                legal,
                lambda a: type(a).__name__ == "KingLook" and a.count == n,
                "the king reveals 1 to 6 cards (no more than the pile holds)",
            )
        if first == "swap":
            return self._parse_swap(game, seat, toks[1:], legal, kind)
        if first in ("place",) or kind in ("place", "place_hand"):
            return self._parse_place(game, seat, toks[1:] if first == "place" else toks, legal)
        if first in ("discard", "block", "answer", "counter", "give", "play", "shoot"):
            toks = toks[1:]
        if kind == "give":
            hs = take_cards(toks, hand)
            if len(hs) > step.n:
                raise MoveError(f"give {step.n} card{'' if step.n == 1 else 's'}, not {len(hs)}")
            return tuple(
                pick_legal(
                    legal,
                    lambda a, h=h: type(a).__name__ == "Give" and a.card == h,
                    "give cards from your hand",
                )
                for h in hs
            )
        ace = "ace" in toks
        use = "use" in toks
        toks = [t for t in toks if t not in ("ace", "use", "claim")]
        h = one_card(
            toks, {**hand, **{c.handle: c.face for c in game.view(seat)["to_place"] if c.face}}
        )
        for a in legal:
            name = type(a).__name__
            if getattr(a, "card", None) != h:
                continue
            if name in ("ShotCard", "Answer") and a.ace == ace:
                return (a,)
            if name == "Discard" and a.declare == use:
                return (a,)
            if name in ("Give", "GiveBack"):
                return (a,)
        raise MoveError(self._why_not(game, seat, h, ace))

    def _why_not(self, game: Game, seat: int, h: int, ace: bool) -> str:
        step = self.step(game, seat)
        f = face(game, seat, h)
        if step.kind == "answer":
            vol = game.view(seat)["volley"]
            if vol and vol[4][-1].ace and not ace:
                return "an ace can only be answered with an ace: add `ace`"
            need = sym((vol[4][-1].suit + 1) % 4) if vol and vol[0] == "suit" else "a bullet"
            return f"{f} cannot answer now (it needs {need}); ? lists your moves"
        if step.kind == "discard":
            return f"{f} has no power to use" if f else "discard a card from your hand"
        return f"{f} is not a move now (? lists your moves)"

    def _parse_shoot(self, game: Game, seat: int, toks: list[str], legal: Sequence[Action]) -> Plan:
        target, rest = self._target(game, seat, toks)
        if len(rest) == 1 and rest[0] in SUIT_ALIASES:
            suit = parse_suit(rest[0])
            return plan_of(
                legal,
                lambda a: type(a).__name__ == "Shoot" and a.target == target and a.suit == suit,
                f"you cannot shoot at {sym(suit)} now",
            )
        claim_at = rest.index("claim") if "claim" in rest else len(rest)
        card_toks, claim = rest[:claim_at], rest[claim_at + 1 :]
        hand = hand_of(game, seat)
        h = one_card(card_toks, hand)
        real = hand[h]
        suit, ace = real.suit, real.rank == ACE
        if claim:
            ace = "ace" in claim
            for tok in claim:
                c = maybe_card(tok)
                if c is not None and c.rank != JOKER_RANK:
                    suit, ace = c.suit, c.rank == ACE
                elif tok in SUIT_ALIASES:
                    suit = parse_suit(tok)
                elif tok != "ace":
                    raise MoveError(f"claim a card (As), a suit (spades) or ace, not {tok!r}")
        if not game.LYING and (real.suit != suit or real.rank < 11 or ace != (real.rank == ACE)):
            raise MoveError(
                f"honest slaiga: shoot with a J, Q, K or A and claim what it is ({real})"
            )
        target_suit = (suit - 1) % 4
        shoot = pick_legal(
            legal,
            lambda a: type(a).__name__ == "Shoot" and a.target == target and a.suit == target_suit,
            f"you cannot shoot {self.names(target)} with a {sym(suit)} shot now",
        )
        from engine.games.slaiga.actions import ShotCard

        return (shoot, ShotCard(seat, h, ace))

    def _parse_swap(
        self, game: Game, seat: int, toks: list[str], legal: Sequence[Action], kind: str
    ) -> Plan:
        if "for" not in toks:
            raise MoveError("swap CARD for CARD (or for #N, the Nth discard from the top)")
        i = toks.index("for")
        give = one_card(toks[:i], hand_of(game, seat))
        ref = toks[i + 1 :]
        if kind == "queen":
            discard = game.view(seat)["discard"][:6]
            if len(ref) == 1 and ref[0].startswith("#") and ref[0][1:].isdigit():
                n = int(ref[0][1:]) - 1
                if not 0 <= n < len(discard):
                    raise MoveError(f"the queen reaches discards #1 to #{len(discard)}")
                take = discard[n].handle
            else:
                take = one_card(
                    ref,
                    {c.handle: c.face for c in discard if c.face is not None},
                    "{card} is not among the discards the queen reaches",
                )
            return plan_of(
                legal,
                lambda a: type(a).__name__ == "QueenSwap" and a.give == give and a.take == take,
                "you cannot swap those",
            )
        step = self.step(game, seat)
        pile = {h: face(game, seat, h) for h in step.handles}
        take = one_card(
            ref,
            {h: f for h, f in pile.items() if f is not None},
            "{card} is not among the draw pile cards you may swap with",
        )
        return plan_of(
            legal,
            lambda a: type(a).__name__ == "Swap" and a.card == give and a.pile_card == take,
            "you cannot swap those",
        )

    def _parse_place(self, game: Game, seat: int, toks: list[str], legal: Sequence[Action]) -> Plan:
        v = game.view(seat)
        pool = {a.card: face(game, seat, a.card) for a in legal if type(a).__name__ == "Place"}
        pool = {h: f for h, f in pool.items() if f is not None}
        size = len(v["draw"])
        plan: list[Action] = []
        used: list[int] = []
        if len(toks) % 2:
            raise MoveError("place CARD POSITION (0 is the top; top and bottom work too)")
        for i in range(0, len(toks), 2):
            if any(pool.get(k) == maybe_card(toks[i]) for k in used) and not any(
                f == maybe_card(toks[i]) for k, f in pool.items() if k not in used
            ):
                raise MoveError(f"{maybe_card(toks[i])} named twice")
            h = one_card(
                [toks[i]],
                {k: f for k, f in pool.items() if k not in used},
                "{card} is not one of the cards you are to place",
            )
            pos_tok = toks[i + 1]
            grow = len(plan)
            if pos_tok == "top":
                pos = 0
            elif pos_tok == "bottom":
                pos = size + grow
            elif pos_tok.isdigit():
                pos = int(pos_tok)
            else:
                raise MoveError(f"a position is a number (0 = top), top or bottom, not {pos_tok!r}")
            if not 0 <= pos <= size + grow:
                raise MoveError(f"positions run from 0 (top) to {size + grow} (bottom)")
            used.append(h)
            from engine.games.slaiga.actions import Place

            plan.append(Place(seat, h, pos))
        if not plan:
            raise MoveError("place CARD POSITION")
        if plan[0] not in legal:
            raise MoveError("you cannot place that card now")
        return tuple(plan)

    # -- menus
    def question(self, game: Game, seat: int) -> str:
        v = game.view(seat)
        step, n = v["task"], self.names
        vol = v["volley"]
        if step is None:
            return "Your move"
        texts = {
            "turn": "Your turn: draw, or shoot",
            "shot_card": f"Shoot {n(step.other)}: which card?",
            "discard": "Discard a card (or say slaiga)",
            "king": "King: reveal how many draw-pile cards?",
            "queen": "Queen: swap a card with one of the last 6 discards",
            "miss_answer": f"{n(step.other)} calls miss. Check it?",
            "check_response": "You are checked",
            "give": f"Penalty: give {n(step.other)} {step.n} card{'s' if step.n != 1 else ''}",
            "place": "Place the penalty cards in the draw pile",
            "place_hand": f"Place {step.n} card{'s' if step.n != 1 else ''} from your hand in the draw pile",
            "swap": f"You may swap up to {step.n} cards with the draw pile",
            "reload": "Reload: draw a card",
            "give_back": f"Give {n(step.other)} a card back",
            "win_ask": f"{n(step.other)} says slaiga. Check it?",
        }
        if step.kind == "answer" and vol is not None:
            last = vol[4][-1]
            if vol[0] == "jack":
                return f"Jack volley: answer {n(last.seat)} with a bullet, or concede"
            claim = f"{'ace ' if last.ace else ''}{sym(last.suit)} {last.role}"
            return f"{n(last.seat)} plays a {claim}: answer"
        return texts.get(step.kind, "Your move")

    def window_default(self, game: Game, seat: int) -> Action | None:
        step = self.step(game, seat)
        if step is not None and step.kind in ("miss_answer", "win_ask"):
            for a in game.legal_actions(seat):
                if type(a).__name__ == "Pass":
                    return a
        return None

    def always_ask(self, game: Game, seat: int) -> bool:
        # answering a check is asked even without a joker, so the pause says nothing
        step = self.step(game, seat)
        return (
            step is not None and step.kind == "check_response" and game.options.get("jokers", False)
        )

    def automatic(
        self, game: Game, seat: int, legal: Sequence[Action], ask_reload: bool
    ) -> Action | None:
        step = self.step(game, seat)
        if step is not None and step.kind == "reload" and not ask_reload:
            for a in legal:
                if type(a).__name__ == "Draw" and a.source == "draw":
                    return a
        return super().automatic(game, seat, legal, ask_reload)

    def menu(self, game: Game, seat: int, hint: Action | None = None) -> Node | Plan:
        legal = game.legal_actions(seat)
        step = self.step(game, seat)
        kind = step.kind
        q = self.question(game, seat)
        d = lambda a: self.describe(game, seat, a)  # noqa: E731
        by = lambda name: [a for a in legal if type(a).__name__ == name]  # noqa: E731
        if kind == "turn":
            opts = [leaf(d(a), a) for a in by("Draw")]
            shoots = by("Shoot")
            if shoots:
                opts.append(
                    branch(
                        "shoot an opponent…",
                        lambda: self._shoot_menu(game, seat, legal, hint),
                        shoots,
                    )
                )
            jacks = by("JackShot")
            if jacks:
                opts.append(
                    branch(
                        "jack-shoot an opponent…",
                        lambda: self._by_target(game, seat, jacks, hint),
                        jacks,
                    )
                )
            return choose(q, opts, hint)
        if kind == "discard":
            opts = [leaf(d(a), a) for a in by("Discard")]
            claims = by("ClaimWin")
            if claims:
                opts.append(
                    branch(
                        "say slaiga (claim a straight flush)…",
                        Choice(
                            "Put which card face down?",
                            [leaf(face_str(game, seat, a.card), a) for a in claims],
                        ).point_at(hint),
                        claims,
                    )
                )
            return choose(q, opts, hint)
        if kind in ("shot_card", "answer"):
            return self._card_with_claim(game, seat, legal, hint, q)
        if kind == "give":
            hand = sorted(hand_of(game, seat).items(), key=lambda kv: _suit_order(kv[1]))
            n = min(step.n, len(hand))
            hinted = {hint.card} if hint is not None and type(hint).__name__ == "Give" else set()

            def give(chosen: tuple[int, ...]) -> Plan:
                return tuple(
                    pick_legal(
                        legal, lambda a, h=hand[i][0]: a.card == h, "give cards from your hand"
                    )
                    for i in chosen
                )

            return Pick(
                q,
                [str(f) for _, f in hand],
                give,
                count=n,
                preset=fill(tuple(i for i, (h, _) in enumerate(hand) if h in hinted), n, len(hand)),
            )
        if kind in ("place", "place_hand"):
            return self._place_menu(game, seat, legal, hint, q)
        by_face = lambda h: _suit_order(face(game, seat, h))  # noqa: E731
        if kind == "swap":
            swap = grouped(
                "Swap which of your cards?",
                by("Swap"),
                lambda a: a.card,
                lambda h: f"swap {face_str(game, seat, h)} for a draw-pile card…",
                lambda h, acts: one_of(
                    "Take which draw-pile card?",
                    acts,
                    lambda a: face_str(game, seat, a.pile_card),
                    hint,
                ),
                hint,
                by_face,
            )
            opts = [leaf("stop swapping", *by("Pass"))]
            opts += swap.options if isinstance(swap, Choice) else [Option("swap…", swap)]
            return choose(q, opts, hint)
        if kind == "queen":
            return grouped(
                q,
                by("QueenSwap"),
                lambda a: a.give,
                lambda h: f"give {face_str(game, seat, h)}…",
                lambda h, acts: one_of(
                    "Take which discard?",
                    acts,
                    lambda a: self._discard_words(game, seat, a.take),
                    hint,
                ),
                hint,
                by_face,
            )
        if kind == "give_back":
            acts = sorted(legal, key=lambda a: by_face(a.card))
            return one_of(q, acts, lambda a: face_str(game, seat, a.card), hint)
        return one_of(q, legal, d, hint)

    def _by_target(
        self, game: Game, seat: int, jacks: list[Action], hint: Action | None
    ) -> Node | Plan:
        return grouped(
            "Jack-shoot whom?",
            jacks,
            lambda a: a.target,
            self.names,
            lambda t, acts: one_of(
                "With which jack?", acts, lambda a: face_str(game, seat, a.card), hint
            ),
            hint,
            order=int,
        )

    def _shoot_menu(
        self, game: Game, seat: int, legal: Sequence[Action], hint: Action | None
    ) -> Node | Plan:
        from engine.games.slaiga.actions import ShotCard
        from engine.games.slaiga.hands import is_shoot

        shoots = [a for a in legal if type(a).__name__ == "Shoot"]
        hand = sorted(hand_of(game, seat).items(), key=lambda kv: _suit_order(kv[1]))

        def claims_for(t: int, h: int, real: Card) -> Node | Plan:
            opts = []
            for suit in range(4):
                for ace in (False, True):
                    shoot = next(
                        (a for a in shoots if a.target == t and a.suit == (suit - 1) % 4), None
                    )
                    if shoot is None:
                        continue
                    true = real.suit == suit and is_shoot(real) and ace == (real.rank == ACE)
                    if not game.LYING and not true:
                        continue
                    label = (
                        f"claim {'an ace' if ace else 'a shoot card'} of {sym(suit)}: {sym((suit - 1) % 4)} target"
                        + (" (true)" if true else " (a lie)")
                    )
                    opts.append(leaf(label, shoot, ShotCard(seat, h, ace)))
            truth = next((i for i, o in enumerate(opts) if o.label.endswith("(true)")), None)
            if truth is None:
                truth = next(
                    (i for i, o in enumerate(opts) if f"of {sym(real.suit)}:" in o.label), 0
                )
            node = choose(f"Shoot {self.names(t)} with {real}: what do you claim?", opts)
            if isinstance(node, Choice):
                node.default = truth
            return node

        def card_for(t: int) -> Node | Plan:
            opts = []
            for h, f in hand:
                if not game.LYING and not is_shoot(f):
                    continue
                if not game.LYING and not any(
                    a.target == t and a.suit == (f.suit - 1) % 4 for a in shoots
                ):
                    continue
                note = "" if is_shoot(f) else " (not a shoot card: a bluff)"
                opts.append(Option(f"with {f}{note}", (lambda h=h, f=f: claims_for(t, h, f))))
            return choose(f"Shoot {self.names(t)} with which card?", opts)

        return grouped(
            "Shoot whom?",
            shoots,
            lambda a: a.target,
            self.names,
            lambda t, _: card_for(t),
            hint,
            int,
        )

    def _card_with_claim(
        self, game: Game, seat: int, legal: Sequence[Action], hint: Action | None, q: str
    ) -> Node | Plan:
        opts: list[Option] = []
        d = lambda a: self.describe(game, seat, a)  # noqa: E731
        words = [a for a in legal if type(a).__name__ in ("Check", "Miss", "Concede")]
        opts += [leaf(d(a), a) for a in words]
        cards = [a for a in legal if type(a).__name__ in ("ShotCard", "Answer")]
        by_card: dict[int, list[Action]] = {}
        for a in cards:
            by_card.setdefault(a.card, []).append(a)
        order = sorted(by_card, key=lambda h: _suit_order(face(game, seat, h)))
        card_opts = []
        for h in order:
            acts = by_card[h]
            if len(acts) == 1:
                card_opts.append(leaf(d(acts[0]), acts[0]))
            else:
                card_opts.append(
                    branch(
                        f"{d(acts[0]).split(',')[0]}…",
                        Choice(
                            f"Play {face_str(game, seat, h)}, claimed as?",
                            [leaf(d(a), a) for a in acts],
                        ).point_at(hint),
                        acts,
                    )
                )
        if words and len(card_opts) > 4:
            opts.append(
                branch(
                    "answer with a card…", Choice("Which card?", card_opts).point_at(hint), cards
                )
            )
        else:
            opts += card_opts
        return choose(q, opts, hint)

    def _place_menu(
        self, game: Game, seat: int, legal: Sequence[Action], hint: Action | None, q: str
    ) -> Node | Plan:
        size = len(game.view(seat)["draw"])
        cards = sorted({a.card for a in legal}, key=lambda h: _suit_order(face(game, seat, h)))
        from engine.games.slaiga.actions import Place

        def position(h: int) -> Number:
            default = (
                hint.position if hint is not None and getattr(hint, "card", None) == h else size
            )
            return Number(
                f"Place {face_str(game, seat, h)} at which position? 0 is the top, {size} the bottom",
                0,
                size,
                lambda p: (Place(seat, h, p),),
                default,
                lambda p: position_words(p, size),
            )

        if len(cards) == 1:
            return position(cards[0])
        return grouped(
            q,
            legal,
            lambda a: a.card,
            lambda h: f"place {face_str(game, seat, h)}…",
            lambda h, _acts: position(h),
            hint,
            lambda h: _suit_order(face(game, seat, h)),
        )

    def phase_help(self, game: Game, seat: int) -> str:
        step = self.step(game, seat)
        kind = step.kind if step else ""
        lying = game.LYING
        base = {
            "turn": "Your turn: draw a card (from the draw pile or the discard pile's top) and then "
            "discard one, or start a volley: shoot an opponent you think collects a suit T with a "
            "shoot card (J, Q, K, A) of the suit after T, or jack-shoot with a jack."
            + (
                " Your shot is face down: you may claim what you like, and may be checked."
                if lying
                else ""
            ),
            "shot_card": "Choose the card for your shot. The claim is a shoot card of the suit after the target suit"
            + (
                "; it is face down, so it may be a bluff (add `ace` to claim an ace)."
                if lying
                else "."
            ),
            "discard": "Discard a card face up. A discarded king or queen may use its power. "
            "Say slaiga to put your sixth card face down and claim a straight flush"
            + (" (others may check the claim)." if lying else " (it is proved)."),
            "answer": "Answer the volley: block (defender) or shoot back (attacker) with a card of the "
            "suit after the last card, concede (pay one card per shot), or, as the defender's first "
            "answer, call miss (fewer than three of the target suit)."
            + (
                " You may also check the face-down card: a lie costs its maker one more card than a true claim costs you."
                if lying
                else ""
            ),
            "miss_answer": "Your opponent called miss. Accept it (you give one card), or check it: "
            "they show you their hand; a true miss costs you 4 cards placed, a false one costs them 3.",
            "win_ask": "Someone says slaiga. Check it (their hand is shown) or let it stand. "
            "A false claim sends their hand into the draw pile; a true one costs you 4 cards.",
            "check_response": "You are checked. A joker cancels the check; otherwise accept it.",
            "give": "You pay a penalty: give cards of your choice; your opponent places them in the draw pile.",
            "place": "Place the penalty cards you received in the draw pile: 0 is the top.",
            "place_hand": "Place cards from your hand in the draw pile: 0 is the top.",
            "swap": "Your miss was true: you may swap up to 3 of your cards with the draw-pile cards you saw.",
            "king": "Your king reveals the next cards of the draw pile to everyone.",
            "queen": "Your queen swaps a card of your hand with one of the six newest discards.",
            "reload": "Reload: draw until you hold six cards.",
            "give_back": "You won the jack volley and took a card blind; give one of yours back.",
        }
        return base.get(kind, "")


RESERVED = frozenset({"claim", "ace", "for", "at", "use", "top", "bottom"})
SUIT_ALIASES = frozenset(
    {
        "c",
        "d",
        "h",
        "s",
        "♣",
        "♦",
        "♥",
        "♠",
        "club",
        "clubs",
        "diamond",
        "diamonds",
        "heart",
        "hearts",
        "spade",
        "spades",
    }
)


def _suit_order(f: Card | None) -> tuple[int, int]:
    if f is None:
        return (9, 0)
    return (5, 0) if f.rank == JOKER_RANK else (f.suit, f.rank)


def position_words(p: int, size: int) -> str:
    if p == 0:
        return "the top"
    if p >= size:
        return "the bottom"
    return f"{p} card{'s' if p != 1 else ''} under the top"


# ---- Aight of Spaides ---------------------------------------------------------------------------


class AightMoves(Moves):
    def _book(self, game: Game, seat: int) -> Any:
        return game.view(seat)["book"]

    def _context(self, game: Game, seat: int) -> Any:
        from engine.games.aight.rulebook import Standings

        v = game.view(seat)
        return Standings(tuple(v["unmaus"]), tuple(v["created"]))

    def _required(self, game: Game, seat: int, kind: str, f: Card | None) -> tuple[str, ...]:
        v = game.view(seat)
        emptying = len(v["hand"]) == 1
        words = v["book"].required_words(kind, f, emptying)
        if kind == "draw_play":
            words = tuple(w for w in words if w not in v["draw_words"])
        return words

    def _card(self, game: Game, seat: int, a: Action) -> Card | None:
        if type(a).__name__ == "PlayDrawn":
            d = game.view(seat)["drawn"]
            return d.face if d is not None else None
        return face(game, seat, a.card)

    def _extras(self, game: Game, seat: int, a: Action, kind: str) -> str:
        """The suit, words and rule of a play, as typed (only what differs from the plain play)."""
        f = self._card(game, seat, a)
        out = ""
        if a.suit is not None:
            out += f" {suit_word(a.suit)}"
        if a.words != self._required(game, seat, kind, f):
            out += " silent" if not a.words else " say " + " ".join(quoted(w) for w in a.words)
        if a.rule is not None:
            out += " rule " + format_rule(a.rule)
        return out

    def say(self, game: Game, seat: int, a: Action) -> str:
        kind = type(a).__name__
        if kind == "Play":
            return code(game, seat, a.card) + self._extras(game, seat, a, "play")
        if kind == "PlayDrawn":
            return "play" + self._extras(game, seat, a, "draw_play")
        if kind == "Draw":
            req = self._required(game, seat, "draw", None)
            if a.words == req:
                return "draw"
            return (
                "draw silent" if not a.words else "draw say " + " ".join(quoted(w) for w in a.words)
            )
        if kind in AIGHT_WORDS:
            return AIGHT_WORDS[kind][_yes(a)][0]
        if kind == "Call":
            return "improper" + (f" {a.cite}" if a.cite else "")
        if kind == "Spend":
            deal = " ".join(self.names.token(s) for s in a.deal)
            return f"spend {deal} rule {format_rule(a.rule)}"
        raise MoveError(f"no shorthand for {kind}")

    def describe(self, game: Game, seat: int, a: Action) -> str:
        kind = type(a).__name__
        v = game.view(seat)
        if kind in ("Play", "PlayDrawn"):
            f = self._card(game, seat, a)
            top = v["top"].face if v["top"] is not None else None
            verb = "play the drawn" if kind == "PlayDrawn" else "play"
            text = f"{verb} {f}"
            if a.suit is not None:
                text += f", naming {sym(a.suit)}"
            if a.words:
                text += ", saying “" + "”, “".join(a.words) + "”"
            if a.rule is not None:
                text += f", creating: {rule_text(a.rule)}"
            if f is not None and top is not None and not self._proper(v, f):
                text += " (improper: it may be called)"
            return text
        if kind == "Draw":
            return "draw a card" + (", saying “" + "”, “".join(a.words) + "”" if a.words else "")
        if kind in AIGHT_WORDS:
            return AIGHT_WORDS[kind][_yes(a)][1]
        if kind == "Call":
            if a.cite:
                return f"Improper!, citing rule {v['book'].get(a.cite).describe()}"
            return "Improper! (a rule was broken)"
        if kind == "Spend":
            deal = ", ".join(f"{self.names(s)} {n}" for s, n in sorted(Counter(a.deal).items()))
            return f"spend your pending rule: {rule_text(a.rule)} (deal: {deal})"
        return kind

    def _proper(self, v: dict[str, Any], f: Card) -> bool:
        book, top = v["book"], v["top"].face
        if v["stack"] and not book.stacks(f):
            return False
        return book.can_play(f, top, v["named_suit"])

    # -- typing
    def parse(self, game: Game, seat: int, text: str) -> Plan:
        from engine.games.aight.actions import Call, Draw, Play, PlayDrawn, Spend

        v = game.view(seat)
        legal = game.legal_actions(seat)
        toks = tokens(text)
        low = [t.lower() if not t.startswith('"') else t for t in toks]
        if not low:
            raise MoveError("type a move (? lists them)")
        phase = v["phase"]
        one = " ".join(low)
        fixed = {
            "pass": "Pass",
            "keep": "EndTurn",
            "keep rule": "KeepRule",
            "later": "KeepRule",
            "propose end": "ProposeEnd",
            "end game": "ProposeEnd",
        }
        if one in fixed:
            want = fixed[one]
            return (pick_legal(legal, lambda a: type(a).__name__ == want, f"you cannot {one} now"),)
        if one in ("yes", "no", "uphold", "reject"):
            yes = one in ("yes", "uphold")
            return plan_of(
                legal,
                lambda a: getattr(a, "upheld", getattr(a, "yes", None)) is yes,
                "there is no vote now",
            )
        if low[0] in ("improper", "improper!", "call"):
            if phase != "window":
                raise MoveError("you can call Improper! only right after a move")
            cite = 0
            if len(low) > 1:
                n = low[1].lstrip("#")
                if len(low) > 2 or not n.isdigit():
                    raise MoveError("improper, or improper N to cite rule #N")
                cite = int(n)
                problem = self._cite_problem(v, cite)
                if problem:
                    raise MoveError(problem)
            return (Call(seat, cite),)
        if low[0] == "spend":
            if phase != "interlude":
                raise MoveError("you can spend a pending rule only between moves, when asked")
            if "rule" not in low:
                raise MoveError("spend NAME NAME NAME rule RULE (three cards dealt, then the rule)")
            i = low.index("rule")
            deal = []
            for tok in low[1:i]:
                s = self.names.find(tok)
                if s is None:
                    raise MoveError(
                        f"who is {tok!r}? players: {', '.join(self.names.token(s) for s in range(len(self.names)))}"
                    )
                deal.append(s)
            if len(deal) != 3:
                raise MoveError("deal exactly 3 cards: name 3 players (the same one may repeat)")
            rule = self._rule(game, seat, toks[i + 1 :])
            return (Spend(seat, rule, tuple(deal)),)
        if low[0] == "draw" and phase == "turn":
            return (Draw(seat, self._words(low[1:], self._required(game, seat, "draw", None))),)
        if phase in ("turn", "drawn"):
            drawn = low[0] == "play" and phase == "drawn"
            if drawn:
                f = v["drawn"].face
                rest = toks[1:]
                kind = "draw_play"
                h = None
            else:
                if phase != "turn":
                    raise MoveError("play (the drawn card) or keep")
                hand = hand_of(game, seat)
                h = one_card([toks[0]], hand)
                f = hand[h]
                rest = toks[1:]
                kind = "play"
            suit, words, rule = self._play_extras(game, seat, rest, kind, f)
            action = (
                PlayDrawn(seat, words, suit, rule) if drawn else Play(seat, h, words, suit, rule)
            )
            return (action,)
        raise MoveError("that is not a move now (? lists your moves)")

    def _cite_problem(self, v: dict[str, Any], cite: int) -> str | None:
        book = v["book"]
        if not 1 <= cite <= len(book.rules):
            return f"there is no rule #{cite} (rules are #1-#{len(book.rules)})"
        rule = book.get(cite)
        if not rule.active:
            return f"rule #{cite} is {rule.status}"
        return None

    def _rule(self, game: Game, seat: int, toks: Sequence[str]) -> Any:
        from cli.rulebuilder import rule_problem

        spec = parse_rule(list(toks))
        problem = rule_problem(self._book(game, seat), spec, self._context(game, seat))
        if problem:
            raise MoveError(f"that rule cannot be made: {problem}")
        return spec

    def _words(self, toks: Sequence[str], required: tuple[str, ...]) -> tuple[str, ...]:
        if not toks:
            return required
        if list(toks) == ["silent"]:
            return ()
        if toks[0] == "say":
            said = [unquote(t) for t in toks[1:]]
            if not said or None in said:
                raise MoveError('say "WORDS" "MORE WORDS" (each in quotes)')
            return tuple(said)
        raise MoveError(f'unexpected {toks[0]!r} (silent, or say "WORDS")')

    def _play_extras(
        self, game: Game, seat: int, toks: Sequence[str], kind: str, f: Card | None
    ) -> tuple[int | None, tuple[str, ...], Any]:
        rule = None
        toks = list(toks)
        if "rule" in [t.lower() for t in toks]:
            i = [t.lower() for t in toks].index("rule")
            rule = self._rule(game, seat, toks[i + 1 :])
            toks = toks[:i]
        suit = None
        if toks and toks[0].lower() in SUIT_ALIASES:
            suit = parse_suit(toks[0])
            toks = toks[1:]
        words = self._words(
            [t.lower() if not t.startswith('"') else t for t in toks],
            self._required(game, seat, kind, f),
        )
        return suit, words, rule

    # -- menus
    def question(self, game: Game, seat: int) -> str:
        v = game.view(seat)
        phase = v["phase"]
        if phase == "window":
            return aight_move_text(v["move"], self.names) if v["move"] else "Improper?"
        return {
            "turn": "Your turn: play a card, or draw",
            "drawn": "You drew a card: play it, or keep it",
            "vote": "Vote on the Improper! call",
            "end_vote": "Vote: end the game now?",
            "interlude": "You hold a pending rule: spend it now?",
        }.get(phase, "Your move")

    def window_default(self, game: Game, seat: int) -> Action | None:
        v = game.view(seat)
        want = {"window": "Pass", "vote": "Vote", "end_vote": "VoteEnd"}.get(v["phase"])
        if want is None:
            return None
        for a in game.legal_actions(seat):
            if (
                type(a).__name__ == want
                and not getattr(a, "upheld", False)
                and not getattr(a, "yes", False)
            ):
                return a
        return None

    def always_ask(self, game: Game, seat: int) -> bool:
        return game.view(seat)["phase"] == "interlude"  # a custom rule is always possible

    def menu(self, game: Game, seat: int, hint: Action | None = None) -> Node | Plan:
        from engine.games.aight.actions import Call, KeepRule, Spend

        legal = game.legal_actions(seat)
        v = game.view(seat)
        phase = v["phase"]
        q = self.question(game, seat)
        d = lambda a: self.describe(game, seat, a)  # noqa: E731
        book, ctx = v["book"], self._context(game, seat)
        if phase in ("turn", "drawn"):
            plays = [a for a in legal if type(a).__name__ in ("Play", "PlayDrawn")]
            opts: list[Option] = []
            by_card: dict[Any, list[Action]] = {}
            for a in plays:
                by_card.setdefault(getattr(a, "card", "drawn"), []).append(a)
            cards = sorted(
                by_card,
                key=lambda h: (
                    not self._proper(v, self._card(game, seat, by_card[h][0])),
                    _suit_order(self._card(game, seat, by_card[h][0])),
                ),
            )
            for h in cards:
                acts = by_card[h]
                f = self._card(game, seat, acts[0])
                needs_rule = f is not None and book.creates_rule(f, len(v["hand"]) == 1)
                mark = "" if self._proper(v, f) else " (improper!)"
                label = f"{'play the drawn' if h == 'drawn' else 'play'} {f}{mark}"

                def finish_for(
                    acts: list[Action] = acts, needs_rule: bool = needs_rule
                ) -> Node | Plan:
                    def with_rule(a: Action) -> Node | Plan:
                        if not needs_rule:
                            return (a,)
                        return rule_menu(book, ctx, lambda spec, a=a: (_with(a, rule=spec),))

                    if len(acts) == 1:
                        return with_rule(acts[0])
                    return Choice(
                        "Name which suit?",
                        [
                            Option(
                                f"{sym(a.suit)} {suit_word(a.suit)}",
                                (lambda a=a: with_rule(a)),
                                frozenset({a}),
                            )
                            for a in acts
                        ],
                    ).point_at(hint)

                if len(acts) == 1 and not needs_rule:
                    opts.append(leaf(label + self._said(acts[0]), acts[0]))
                else:
                    opts.append(
                        branch(
                            label + ("… (create a rule)" if needs_rule else "…"), finish_for, acts
                        )
                    )
            for a in legal:
                if type(a).__name__ in ("Draw", "EndTurn", "ProposeEnd"):
                    opts.append(leaf(d(a), a))
            if plays:
                opts.append(
                    branch(
                        "play, announcing differently…",
                        lambda: self._say_differently(game, seat, plays),
                        (),
                    )
                )
            return choose(q, opts, hint)
        if phase == "window":
            opts = [leaf(d(a), a) for a in legal if type(a).__name__ == "Pass"]
            opts.append(leaf(d(Call(seat, 0)), Call(seat, 0)))
            active = [r for r in book.rules if r.active]
            opts.append(
                branch(
                    "Improper!, citing a rule…",
                    Choice(
                        "Which rule was broken?",
                        [leaf(r.describe(), Call(seat, r.number)) for r in active],
                    ),
                    [Call(seat, r.number) for r in active],
                )
            )
            return choose(q, opts, hint)
        if phase == "interlude":
            keep = [a for a in legal if isinstance(a, KeepRule)]

            def deal(spec: Any, chosen: tuple[int, ...] = ()) -> Node | Plan:
                if len(chosen) == 3:
                    return (Spend(seat, spec, chosen),)
                return Choice(
                    f"Deal card {len(chosen) + 1} of 3 to whom?",
                    [
                        Option(
                            self.names(s) + (" (you)" if s == seat else ""),
                            (lambda s=s: deal(spec, (*chosen, s))),
                        )
                        for s in range(len(self.names))
                    ],
                )

            spends = [a for a in legal if isinstance(a, Spend)]
            return choose(
                q,
                [
                    *[leaf(d(a), a) for a in keep],
                    branch(
                        "spend it: create a rule and deal 3 cards…",
                        lambda: rule_menu(book, ctx, deal),
                        spends,
                    ),
                ],
                hint,
            )
        return choose(q, [leaf(d(a), a) for a in legal], hint)

    def _said(self, a: Action) -> str:
        w = getattr(a, "words", ())
        return ", saying “" + "”, “".join(w) + "”" if w else ""

    def _say_differently(self, game: Game, seat: int, plays: list[Action]) -> Node | Plan:
        def words_for(a: Action) -> Ask:
            def done(text: str) -> Node | Plan:
                said = tuple(w.strip() for w in text.split(",") if w.strip())
                return (_with(a, words=said),)

            return Ask(
                "Announce what? (words separated by commas; nothing for silence)",
                done,
                ", ".join(a.words),
            )

        return Choice(
            "Play which card?",
            [
                Option(
                    self.describe(game, seat, _with(a, words=())).replace(
                        " (improper: it may be called)", ""
                    ),
                    (lambda a=a: words_for(a)),
                )
                for a in plays
            ],
        )

    def phase_help(self, game: Game, seat: int) -> str:
        v = game.view(seat)
        return {
            "turn": "Play a card that matches the top card's rank or suit (unless the rules say "
            "otherwise), or draw one. Moves are not blocked: a wrong one may be called Improper! "
            "The 8♠ makes you announce “Aight of Spaides” and create a rule.",
            "drawn": "You drew: play that card now if you like, or keep it and end your turn.",
            "window": "Was that move improper? Call Improper! (citing a rule if you like) or let it "
            "stand. A wrong call costs you the penalty. When the clock runs out you let it stand.",
            "vote": "A call cites a rule in free text: vote whether it was broken. When the clock runs out you vote no.",
            "end_vote": "Someone proposed to end the game: everyone must agree. When the clock runs out you vote no.",
            "interlude": "Spend your pending rule: create a rule and deal 3 cards from the deck to "
            "players of your choice, or keep it for later.",
        }.get(v["phase"], "")


# Aight of Spaides' moves without cards: (typed, in words), for a "no" and a "yes" vote.
AIGHT_WORDS: dict[str, tuple[tuple[str, str], tuple[str, str]]] = {
    "EndTurn": (("keep", "keep the drawn card (your turn ends)"),) * 2,
    "Pass": (("pass", "let the move stand"),) * 2,
    "KeepRule": (("keep rule", "keep your pending rule for later"),) * 2,
    "ProposeEnd": (("propose end", "propose to end the game (everyone votes)"),) * 2,
    "Vote": (("no", "reject the call"), ("yes", "uphold the call")),
    "VoteEnd": (("no", "play on"), ("yes", "end the game now (everyone must agree)")),
}


def _yes(a: Action) -> int:
    return int(bool(getattr(a, "upheld", getattr(a, "yes", False))))


def _with(a: Action, **changes: Any) -> Action:
    import dataclasses

    return dataclasses.replace(a, **changes)


def rule_text(spec: Any) -> str:
    from engine.games.aight.rulebook import describe

    return describe(spec)


# ---- Slåjens --------------------------------------------------------------------------------


class SlajensMoves(Moves):
    def say(self, game: Game, seat: int, a: Action) -> str:
        kind = type(a).__name__
        v = game.view(seat)
        if kind == "RollDice":
            if a.target < 0:
                return "roll"
            return f"steal {self.names.token(a.target)} {a.amount}"
        if kind == "Keep":
            if not a.keep:
                return "keep none"
            return "keep " + " ".join(str(v["dice"][i]) for i in a.keep)
        if kind == "Stop":
            return "stop"
        if kind == "Respond":
            return "defend" if a.defend else "accept"
        raise MoveError(f"no shorthand for {kind}")

    def describe(self, game: Game, seat: int, a: Action) -> str:
        kind = type(a).__name__
        v = game.view(seat)
        if kind == "RollDice":
            if a.target < 0:
                return "roll the five dice"
            return f"declare a steal of {a.amount} from {self.names(a.target)}, then roll"
        if kind == "Keep":
            kept = [v["dice"][i] for i in a.keep]
            return (
                f"keep {' '.join(map(str, kept))} and reroll {5 - len(kept)}"
                if kept
                else "reroll all five"
            )
        if kind == "Stop":
            return "stop and score " + dice_text(v["dice"])
        if kind == "Respond":
            st = v["respond_to"]
            return (
                (
                    f"defend: score at least {st.amount} on your next turn"
                    if a.defend
                    else f"accept: give up {st.amount} now"
                )
                if st
                else kind
            )
        return kind

    def parse(self, game: Game, seat: int, text: str) -> Plan:
        legal = game.legal_actions(seat)
        v = game.view(seat)
        toks = words_of(text)
        if not toks:
            raise MoveError("type a move (? lists them)")
        first = toks[0]
        if toks in (["roll"], ["reroll"], ["keep", "none"]):
            if v["phase"] == "rolling":
                return plan_of(
                    legal, lambda a: getattr(a, "keep", None) == (), "you cannot reroll now"
                )
            return plan_of(
                legal,
                lambda a: type(a).__name__ == "RollDice" and a.target < 0,
                "you cannot roll now",
            )
        if toks == ["stop"]:
            return plan_of(
                legal, lambda a: type(a).__name__ == "Stop", "you have no dice to score yet"
            )
        if toks in (["defend"], ["accept"]):
            yes = first == "defend"
            return plan_of(
                legal,
                lambda a: getattr(a, "defend", None) is yes,
                "nobody is stealing from you now",
            )
        if first == "steal":
            if len(toks) != 3 or not toks[2].isdigit():
                raise MoveError("steal NAME AMOUNT, e.g. steal bob 12")
            target = self.names.find(toks[1])
            if target is None:
                raise MoveError(f"who is {toks[1]!r}?")
            amount = int(toks[2])
            problem = game.steal_problem(seat, target, amount)
            if problem:
                raise MoveError(self.names.replace(problem))
            return plan_of(
                legal,
                lambda a: (
                    getattr(a, "target", None) == target and getattr(a, "amount", None) == amount
                ),
                "you cannot steal now",
            )
        if toks in (["keep", "all"], ["all"]):
            return plan_of(
                legal, lambda a: type(a).__name__ == "Stop", "you have no dice to score yet"
            )
        if first == "keep":
            if v["phase"] != "rolling":
                raise MoveError("roll first")
            left = list(enumerate(v["dice"]))
            keep = []
            for tok in toks[1:]:
                if not tok.isdigit():
                    raise MoveError(f"name dice by value, like keep 6 6 1 (not {tok!r})")
                hit = next((i for i, d in left if d == int(tok)), None)
                if hit is None:
                    raise MoveError(
                        f"there is no {tok} to keep among {' '.join(map(str, v['dice']))}"
                    )
                keep.append(hit)
                left = [(i, d) for i, d in left if i != hit]
            keep_t = tuple(sorted(keep))
            if len(keep_t) == 5:
                return (pick_legal(legal, lambda a: type(a).__name__ == "Stop", "stop"),)
            return plan_of(
                legal,
                lambda a: getattr(a, "keep", None) == keep_t,
                "keep some dice, reroll the rest",
            )
        raise MoveError(
            "roll, keep VALUES (e.g. keep 6 6 1), keep all (or stop), steal NAME AMOUNT, "
            "defend or accept"
        )

    def question(self, game: Game, seat: int) -> str:
        v = game.view(seat)
        if v["phase"] == "rolling":
            return f"Roll {v['rolls']} of 3: {dice_text(v['dice'])}. Keep which dice?"
        if v["phase"] == "respond":
            st = v["respond_to"]
            return f"{self.names(st.stealer)} steals {st.amount} from you: defend or accept?"
        return "Your turn: roll"

    def menu(self, game: Game, seat: int, hint: Action | None = None) -> Node | Plan:
        from engine.games.slajens.actions import Keep, RollDice, Stop

        legal = game.legal_actions(seat)
        v = game.view(seat)
        if v["phase"] == "rolling":
            dice = v["dice"]
            preset: tuple[int, ...] = ()
            if isinstance(hint, Keep):
                preset = hint.keep
            elif isinstance(hint, Stop):
                preset = tuple(range(len(dice)))

            def done(chosen: tuple[int, ...]) -> Plan:
                if len(chosen) == len(dice):
                    return (Stop(seat),)
                return (Keep(seat, tuple(sorted(chosen))),)

            return Pick(
                self.question(game, seat) + " (tick all five to stop)",
                [f"{dice_text([d])}" for d in dice],
                done,
                preset=preset,
                typed="keep",
            )
        if v["phase"] == "start":
            rolls = [a for a in legal if isinstance(a, RollDice) and a.target < 0]
            steals = [a for a in legal if isinstance(a, RollDice) and a.target >= 0]
            opts = [leaf(self.describe(game, seat, a), a) for a in rolls]

            def amount_for(t: int, acts: list[Action]) -> Number:
                most = max(a.amount for a in acts)
                return Number(
                    f"Steal how much from {self.names(t)}? (1 to {most})",
                    1,
                    most,
                    lambda n: (RollDice(seat, t, n),),
                    most,
                )

            if steals:
                whom = grouped(
                    "Steal from whom?",
                    steals,
                    lambda a: a.target,
                    self.names,
                    amount_for,
                    hint,
                    int,
                )
                opts.append(branch("declare a steal, then roll…", whom, steals))
            return choose(self.question(game, seat), opts, hint)
        return one_of(
            self.question(game, seat), legal, lambda a: self.describe(game, seat, a), hint
        )

    def phase_help(self, game: Game, seat: int) -> str:
        return (
            "Roll five dice up to three times; after each roll keep any dice and reroll the rest, "
            "or stop. A 1 scores 10, the others their face. Three or more of a kind (Berserker) "
            "scores the plain sum and rerolls the other two dice once, adding them. "
            "Type keep with the values to keep (keep 6 6 1), stop, or roll."
        )


# ---- any other game -----------------------------------------------------------------------


class GenericMoves(Moves):
    """A game without moves of its own here yet: each action typed and named from its fields
    (cards by face), and chosen from one list. Enough to play it; a game worth playing
    gets a class above."""

    def _fields(self, game: Game, seat: int, a: Action) -> list[str]:
        out = []
        for name in a.__dataclass_fields__:
            if name == "seat":
                continue
            v = getattr(a, name)
            if name in ("card", "give", "take", "joker") and isinstance(v, int):
                f = face(game, seat, v)
                v = card_word(f) if f is not None else f"#{v}"
            elif name == "cards" and isinstance(v, tuple):
                v = " ".join(code(game, seat, h) for h in v)
            elif isinstance(v, bool):
                v = "yes" if v else "no"
            elif name in ("target", "to") and isinstance(v, int):
                v = self.names.token(v)
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


MOVES: dict[str, type[Moves]] = {
    "slave": SlaveMoves,
    "slaiga": SlaigaMoves,
    "honest-slaiga": SlaigaMoves,
    "aight-of-spaides": AightMoves,
    "slajens": SlajensMoves,
}


def moves_for(game_name: str, names: Names) -> Moves:
    return MOVES.get(game_name, GenericMoves)(names)


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


__all__ = ["Moves", "MoveError", "moves_for", "same_move", "validate_plan"]
