"""Slave in players' words: typed sets (``3c 3h``, ``give 9h 9s``, ``pass``), menus
by rank, and the pile, titles and points on the table (docs/rules/slave.md)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engine.cards import Card, slave_key
from engine.game import Action, Event, Game
from engine.games.slave.actions import Give, NotOpener, Pass, Play
from engine.games.slave.events import MatchOver
from engine.games.slave.rules import beats, set_problem
from engine.words import GameWords, register_words
from engine.words.look import (
    Look,
    SeatRow,
    Styled,
    TableView,
    cards_text,
    ordinal,
)
from engine.words.menus import (
    Choice,
    MoveError,
    Node,
    Option,
    Pick,
    Plan,
    branch,
    choose,
    leaf,
)
from engine.words.moves import (
    Phrase,
    TableMoves,
    face,
    faces_sorted,
    fill,
    hand_of,
    pick_legal,
    plan_of,
    take_cards,
    words_of,
)
from engine.words.names import Names
from engine.words.tokens import card_word


def _typed(m: SlaveMoves, game: Game, seat: int, a: Play | Give) -> str:
    return " ".join(card_word(f) for f in sorted(m._faces(game, seat, a.cards), key=slave_key))


def _told(m: SlaveMoves, game: Game, seat: int, a: Play | Give) -> str:
    return faces_sorted(m._faces(game, seat, a.cards), slave_key)


# Every move's words, once: how it is typed, and how it is told.
WORDS = {
    Play: Phrase(_typed, lambda m, g, s, a: f"play {_told(m, g, s, a)}"),
    Give: Phrase(
        lambda m, g, s, a: f"give {_typed(m, g, s, a)}",
        lambda m, g, s, a: f"give {m.names(m.receiver(g, s))} {_told(m, g, s, a)}",
    ),
    Pass: Phrase(
        lambda m, g, s, a: "pass", lambda m, g, s, a: "pass (you may not play on this pile again)"
    ),
    NotOpener: Phrase(
        lambda m, g, s, a: "pass",
        lambda m, g, s, a: "say you do not hold 3♣ (proved without showing your hand)",
    ),
}
PASSES = (Pass, NotOpener)


class SlaveMoves(TableMoves):
    def _faces(self, game: Game, seat: int, hs: Sequence[int]) -> list[Card]:
        return [f for f in (face(game, seat, h) for h in hs) if f is not None]

    def receiver(self, game: Game, seat: int) -> int | None:
        titles = game.view(seat)["titles"]
        want = {"SLAVE": "KING", "KING": "SLAVE", "VICE SLAVE": "QUEEN", "QUEEN": "VICE SLAVE"}.get(
            titles[seat]
        )
        return titles.index(want) if want in titles else None

    WORDS = WORDS

    def parse(self, game: Game, seat: int, text: str) -> Plan:
        legal = game.legal_actions(seat)
        toks = words_of(text)
        if toks == ["pass"]:
            return plan_of(
                legal,
                lambda a: isinstance(a, PASSES),
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
        plays = [a for a in legal if isinstance(a, Play)]
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
            if isinstance(a, PASSES):
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


class SlaveLook(Look):
    hand_order = staticmethod(slave_key)

    def header(self, v: dict[str, Any]) -> str:
        return f"deal {v['deal']} of {v['games']}"

    def seats(self, t: TableView) -> list[SeatRow]:
        v = t.view
        rows = []
        for s in range(v["seats"]):
            status = []
            if v["titles"][s]:
                status.append(v["titles"][s])
            if s in v["out"]:
                status.append(f"out {ordinal(v['out'].index(s) + 1)}")
            elif s == v["toppled"]:
                status.append("toppled")
            elif s in v["passed"]:
                status.append("passed")
            if s == v["last"]:
                status.append("played the pile's top")
            if v["games"] > 1:
                pts = v["points"][s]
                status.append(f"{pts} pt" if pts == 1 else f"{pts} pts")
            rows.append(SeatRow(s, str(v["hand_sizes"][s]), ", ".join(status)))
        return rows

    def table(self, t: TableView) -> list[Styled]:
        v, names = t.view, t.names
        line = Styled("Pile: ")
        if v["top"]:
            line.append_text(cards_text([c.face for c in v["top"]]))
            line.append(f"  (top, by {names(v['last'])}; {v['pile_size']} cards on the pile)")
        elif v["phase"] == "exchange":
            line.append("exchange before the deal")
        else:
            line.append(f"empty: {names(v['current'])} leads any set")
        way = "ascending ↓" if v["direction"] == 1 else "descending ↑"
        return [line, Styled(f"Play runs {way} the seat list", style="dim")]


def tell_match(m: MatchOver, event: Event, names: Names) -> str:
    return f"Match over. Points: {names.per_seat(m.points)}"


register_words(
    "slave",
    GameWords(title="Slave", moves=SlaveMoves, look=SlaveLook(), tells={MatchOver: tell_match}),
)
