"""Slåjens in players' words: dice kept by value (``keep 6 6 1``), steals (``steal bob
12``), and the dice on the table (docs/rules/slajens.md)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engine.cards import Card
from engine.game import Action, Event, Game
from engine.games.slajens.actions import Keep, Respond, RollDice, Stop
from engine.games.slajens.events import Berserker, GameOver
from engine.words import GameWords, register_words
from engine.words.look import (
    Look,
    SeatRow,
    Styled,
    TableView,
)
from engine.words.menus import (
    MoveError,
    Node,
    Number,
    Pick,
    Plan,
    branch,
    choose,
    grouped,
    leaf,
    one_of,
)
from engine.words.moves import (
    Moves,
    Phrase,
    TableMoves,
    pick_legal,
    plan_of,
    words_of,
)
from engine.words.names import Names


def _respond_told(m: Moves, game: Game, seat: int, a: Respond) -> str:
    st = game.view(seat)["respond_to"]
    if not st:
        return "Respond"
    if a.defend:
        return f"defend: score at least {st.amount} on your next turn"
    return f"accept: give up {st.amount} now"


def _kept(game: Game, seat: int, a: Keep) -> list[int]:
    return [game.view(seat)["dice"][i] for i in a.keep]


# Every move's words, once: how it is typed, and how it is told.
WORDS = {
    RollDice: Phrase(
        lambda m, g, s, a: (
            "roll" if a.target < 0 else f"steal {m.names.token(a.target)} {a.amount}"
        ),
        lambda m, g, s, a: (
            "roll the five dice"
            if a.target < 0
            else f"declare a steal of {a.amount} from {m.names(a.target)}, then roll"
        ),
    ),
    Keep: Phrase(
        lambda m, g, s, a: "keep " + (" ".join(map(str, _kept(g, s, a))) or "none"),
        lambda m, g, s, a: (
            f"keep {' '.join(map(str, _kept(g, s, a)))} and reroll {5 - len(a.keep)}"
            if a.keep
            else "reroll all five"
        ),
    ),
    Stop: Phrase(
        lambda m, g, s, a: "stop",
        lambda m, g, s, a: "stop and score " + dice_text(g.view(s)["dice"]),
    ),
    Respond: Phrase(
        lambda m, g, s, a: "defend" if a.defend else "accept",
        _respond_told,
    ),
}


class SlajensMoves(TableMoves):
    @staticmethod
    def normal_value(game: Game, seat: int, name: str, value: Any) -> Any:
        """Kept dice by value: keeping either of two 6s is the same move."""
        view = game.view(seat)
        if name == "keep" and isinstance(value, tuple) and "dice" in view:
            return tuple(sorted(view["dice"][i] for i in value))
        return value

    WORDS = WORDS

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
                lambda a: isinstance(a, RollDice) and a.target < 0,
                "you cannot roll now",
            )
        if toks == ["stop"]:
            return plan_of(legal, lambda a: isinstance(a, Stop), "you have no dice to score yet")
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
            return plan_of(legal, lambda a: isinstance(a, Stop), "you have no dice to score yet")
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
                return (pick_legal(legal, lambda a: isinstance(a, Stop), "stop"),)
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


DIE_FACES = {1: "⚀", 2: "⚁", 3: "⚂", 4: "⚃", 5: "⚄", 6: "⚅"}


class SlajensLook(Look):
    def header(self, v: dict[str, Any]) -> str:
        return f"round {v['round']} of {v['rounds']}"

    def seats(self, t: TableView) -> list[SeatRow]:
        v = t.view
        teams = dict(v["options"]).get("teams", 0)
        rows = []
        for s in range(v["seats"]):
            status = []
            sc = v["scores"][s]
            if sc:
                status.append(f"last {sc[-1]}")
            if teams:
                status.append(f"team {v['team_of'][s] + 1}")
            for st in v["defences"]:
                if st.target == s:
                    status.append(f"must score {st.amount} to keep it")
            rows.append(SeatRow(s, f"{v['totals'][s]:>4}", ", ".join(status)))
        return rows

    def table(self, t: TableView) -> list[Styled]:
        v, names = t.view, t.names
        line = Styled(f"{names(v['current'])}: ")
        if v["dice"]:
            line.append(dice_text(v["dice"]))
            line.append(f"  (roll {v['rolls']} of 3)")
        else:
            line.append("about to roll")
        out = [line]
        if v["steal"] is not None:
            st = v["steal"]
            hit = "three in a row shown!" if v["hit"] else "needs three in a row"
            out.append(
                Styled(f"Steal: {names(st.stealer)} → {names(st.target)}, {st.amount} ({hit})")
            )
        if v["respond_to"] is not None:
            st = v["respond_to"]
            out.append(Styled(f"{names(st.target)} must answer {names(st.stealer)}'s steal"))
        return out

    def hand(self, t: TableView) -> list[Card | None] | None:
        return None


def dice_text(dice: Sequence[int]) -> str:
    return " ".join(f"{DIE_FACES.get(d, '?')}{d}" for d in dice)


def tell_end(g: GameOver, event: Event, names: Names) -> str:
    return f"Game over. Totals: {names.per_seat(g.totals)}"


def tell_berserker(b: Berserker, event: Event, names: Names) -> str:
    """ "Cat has a Berserker of 6s: 24, and rerolls two dice (2 and 6) for 32"."""
    extra = " and ".join(map(str, b.extra))
    return (
        f"{names(event.seat)} has a Berserker of {b.face}s: {b.base}, and rerolls two dice"
        f" ({extra}) for {b.score}"
    )


register_words(
    "slajens",
    GameWords(
        title="Slåjens",
        moves=SlajensMoves,
        look=SlajensLook(),
        tells={GameOver: tell_end, Berserker: tell_berserker},
    ),
)
