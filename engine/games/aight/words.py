"""Aight of Spaides in players' words: plays with their suit, words and rule as typed
(``8s rule rank 7: draw 2``, ``improper 7``) and in menus (the rule builder is
``rulebuilder``), the move open to Improper! calls on the table, and its events
(docs/rules/aight-of-spaides.md)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import engine.games.aight.actions as act
from engine.cards import SUIT_SYMBOLS, Card
from engine.game import Action, Event, Game
from engine.games.aight.events import Unmau
from engine.games.aight.rulebuilder import (
    format_rule,
    parse_rule,
    rule_menu,
    rule_problem,
)
from engine.words import GameWords, register_words
from engine.words.look import (
    Look,
    SeatRow,
    Styled,
    TableView,
    face_text,
    suit_text,
)
from engine.words.menus import (
    Ask,
    Choice,
    MoveError,
    Node,
    Option,
    Plan,
    branch,
    choose,
    leaf,
)
from engine.words.moves import (
    Phrase,
    TableMoves,
    Words,
    code,
    face,
    hand_of,
    one_card,
    pick_legal,
    plan_of,
    suit_word,
    sym,
)
from engine.words.moves import (
    suit_order as _suit_order,
)
from engine.words.names import Names, words
from engine.words.tokens import SUIT_ALIASES, parse_suit, quoted, tokens, unquote


def _spend_told(m: AightMoves, g: Game, s: int, a: act.Spend) -> str:
    deal = ", ".join(f"{m.names(t)} {n}" for t, n in sorted(Counter(a.deal).items()))
    return f"spend your pending rule: {rule_text(a.rule)} (deal: {deal})"


def _call_told(m: AightMoves, g: Game, s: int, a: act.Call) -> str:
    if a.cite:
        return f"Improper!, citing rule {g.view(s)['book'].get(a.cite).describe()}"
    return "Improper! (a rule was broken)"


def _vote(no: tuple[str, str], yes: tuple[str, str]) -> Phrase:
    """A vote's words: (typed, told) for a "no" and for a "yes"."""
    return Phrase(
        lambda m, g, s, a: (yes if _yes(a) else no)[0],
        lambda m, g, s, a: (yes if _yes(a) else no)[1],
    )


def _said(words: tuple[str, ...]) -> str:
    return ", saying “" + "”, “".join(words) + "”" if words else ""


# Every move's words, once: how it is typed, and how it is told.
WORDS: dict[type[Action], Words | Phrase] = {
    act.Play: Phrase(
        lambda m, g, s, a: code(g, s, a.card) + m._extras(g, s, a, "play"),
        lambda m, g, s, a: m._play_told(g, s, a),
    ),
    act.PlayDrawn: Phrase(
        lambda m, g, s, a: "play" + m._extras(g, s, a, "draw_play"),
        lambda m, g, s, a: m._play_told(g, s, a),
    ),
    act.Draw: Phrase(
        lambda m, g, s, a: m._draw_typed(g, s, a),
        lambda m, g, s, a: "draw a card" + _said(a.words),
    ),
    act.Call: Phrase(lambda m, g, s, a: "improper" + (f" {a.cite}" if a.cite else ""), _call_told),
    act.Spend: Phrase(
        lambda m, g, s, a: (
            f"spend {' '.join(m.names.token(t) for t in a.deal)} rule {format_rule(a.rule)}"
        ),
        _spend_told,
    ),
    act.EndTurn: Words("keep", "keep the drawn card (your turn ends)"),
    act.Pass: Words("pass", "let the move stand"),
    act.KeepRule: Words("keep rule", "keep your pending rule for later"),
    act.ProposeEnd: Words("propose end", "propose to end the game (everyone votes)"),
    act.Vote: _vote(("no", "reject the call"), ("yes", "uphold the call")),
    act.VoteEnd: _vote(("no", "play on"), ("yes", "end the game now (everyone must agree)")),
}


class AightMoves(TableMoves):
    WORDS = WORDS

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
        if isinstance(a, act.PlayDrawn):
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

    def _play_told(self, game: Game, seat: int, a: act.Play | act.PlayDrawn) -> str:
        v = game.view(seat)
        f = self._card(game, seat, a)
        top = v["top"].face if v["top"] is not None else None
        verb = "play the drawn" if isinstance(a, act.PlayDrawn) else "play"
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

    def _draw_typed(self, game: Game, seat: int, a: act.Draw) -> str:
        if a.words == self._required(game, seat, "draw", None):
            return "draw"
        return "draw silent" if not a.words else "draw say " + " ".join(quoted(w) for w in a.words)

    def _proper(self, v: dict[str, Any], f: Card) -> bool:
        book, top = v["book"], v["top"].face
        if v["stack"] and not book.stacks(f):
            return False
        return book.can_play(f, top, v["named_suit"])

    # -- typing
    def parse(self, game: Game, seat: int, text: str) -> Plan:
        v = game.view(seat)
        legal = game.legal_actions(seat)
        toks = tokens(text)
        low = [t.lower() if not t.startswith('"') else t for t in toks]
        if not low:
            raise MoveError("type a move (? lists them)")
        phase = v["phase"]
        one = " ".join(low)
        fixed: dict[str, type[Action]] = {
            "pass": act.Pass,
            "keep": act.EndTurn,
            "keep rule": act.KeepRule,
            "later": act.KeepRule,
            "propose end": act.ProposeEnd,
            "end game": act.ProposeEnd,
        }
        if one in fixed:
            want = fixed[one]
            return (pick_legal(legal, lambda a: isinstance(a, want), f"you cannot {one} now"),)
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
            return (act.Call(seat, cite),)
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
            return (act.Spend(seat, rule, tuple(deal)),)
        if low[0] == "draw" and phase == "turn":
            return (act.Draw(seat, self._words(low[1:], self._required(game, seat, "draw", None))),)
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
                if low[0] == "play" and len(toks) > 1:
                    toks = toks[1:]  # "play 6d", as the menu says it: the same as "6d"
                hand = hand_of(game, seat)
                h = one_card([toks[0]], hand)
                f = hand[h]
                rest = toks[1:]
                kind = "play"
            suit, words, rule = self._play_extras(game, seat, rest, kind, f)
            action = (
                act.PlayDrawn(seat, words, suit, rule)
                if drawn
                else act.Play(seat, h, words, suit, rule)
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
        want = {"window": act.Pass, "vote": act.Vote, "end_vote": act.VoteEnd}.get(v["phase"])
        if want is None:
            return None
        for a in game.legal_actions(seat):
            if (
                isinstance(a, want)
                and not getattr(a, "upheld", False)
                and not getattr(a, "yes", False)
            ):
                return a
        return None

    def always_ask(self, game: Game, seat: int) -> bool:
        return game.view(seat)["phase"] == "interlude"  # a custom rule is always possible

    def menu(self, game: Game, seat: int, hint: Action | None = None) -> Node | Plan:
        legal = game.legal_actions(seat)
        v = game.view(seat)
        phase = v["phase"]
        q = self.question(game, seat)
        d = lambda a: self.describe(game, seat, a)  # noqa: E731
        book, ctx = v["book"], self._context(game, seat)
        if phase in ("turn", "drawn"):
            plays = [a for a in legal if isinstance(a, act.Play | act.PlayDrawn)]
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
                if isinstance(a, act.Draw | act.EndTurn | act.ProposeEnd):
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
            opts = [leaf(d(a), a) for a in legal if isinstance(a, act.Pass)]
            opts.append(leaf(d(act.Call(seat, 0)), act.Call(seat, 0)))
            active = [r for r in book.rules if r.active]
            opts.append(
                branch(
                    "Improper!, citing a rule…",
                    Choice(
                        "Which rule was broken?",
                        [leaf(r.describe(), act.Call(seat, r.number)) for r in active],
                    ),
                    [act.Call(seat, r.number) for r in active],
                )
            )
            return choose(q, opts, hint)
        if phase == "interlude":
            keep = [a for a in legal if isinstance(a, act.KeepRule)]

            def deal(spec: Any, chosen: tuple[int, ...] = ()) -> Node | Plan:
                if len(chosen) == 3:
                    return (act.Spend(seat, spec, chosen),)
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

            spends = [a for a in legal if isinstance(a, act.Spend)]
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


def _yes(a: Action) -> int:
    return int(bool(getattr(a, "upheld", getattr(a, "yes", False))))


def _with(a: Action, **changes: Any) -> Action:
    import dataclasses

    return dataclasses.replace(a, **changes)


def rule_text(spec: Any) -> str:
    from engine.games.aight.rulebook import describe

    return describe(spec)


class AightLook(Look):
    def header(self, v: dict[str, Any]) -> str:
        return f"turn {v['turns']} · {len(v['rules'])} rules (type `rules`)"

    def seats(self, t: TableView) -> list[SeatRow]:
        v = t.view
        answers = dict(v["answers"])
        rows = []
        for s in range(v["seats"]):
            status = []
            if v["pending_rules"][s]:
                n = v["pending_rules"][s]
                status.append(f"{n} pending rule{'s' if n != 1 else ''}")
            if v["unmaus"][s]:
                status.append(f"Unmau ×{v['unmaus'][s]}")
            if v["created"][s]:
                status.append(f"made {v['created'][s]} rule{'s' if v['created'][s] != 1 else ''}")
            if v["lost"][s]:
                status.append(f"loses {v['lost'][s]} turn{'s' if v['lost'][s] != 1 else ''}")
            if s in answers:
                cite = answers[s]
                status.append(
                    "lets it stand"
                    if cite is None
                    else "calls Improper!" + (f" (rule #{cite})" if cite else "")
                )
            rows.append(SeatRow(s, str(v["hand_sizes"][s]), ", ".join(status)))
        return rows

    def table(self, t: TableView) -> list[Styled]:
        v, names = t.view, t.names
        line = Styled("Pile: ")
        line.append_text(face_text(v["top"].face if v["top"] is not None else None))
        line.append(" (top)")
        if v["named_suit"] is not None:
            line.append(", suit named ")
            line.append_text(suit_text(v["named_suit"]))
        line.append(f" · {v['pile_size']} played · deck {v['deck_size']}")
        if v["stack"]:
            line.append(f" · stack: draw {v['stack']}")
        line.append(" · play runs " + ("↓" if v["direction"] == 1 else "↑"))
        out = [line]
        move = v["move"]
        if move is not None and v["phase"] in ("window", "vote"):
            out.append(Styled(aight_move_text(move, names), style="bold"))
        if v["voting"] is not None:
            caller, cite = v["voting"]
            out.append(Styled(f"Vote: does {names(caller)}'s call under rule #{cite} stand?"))
        if v["drawn"] is not None:
            dl = Styled("You drew ")
            dl.append_text(face_text(v["drawn"].face))
            dl.append(": play it now, or keep it")
            out.append(dl)
        newest = [r for r in v["book"].rules if r.author is not None][-2:]
        for r in newest:
            out.append(Styled(words(f"Rule {r.describe()} (by {names(r.author)})"), style="dim"))
        return out


def aight_move_text(move: Any, names: Names) -> str:
    """The move now open to Improper! calls, in words."""
    who = names(move.seat)
    said = f", saying “{'”, “'.join(move.words)}”" if move.words else ", saying nothing"
    if move.kind == "draw":
        return f"{who} drew{said}. Improper?"
    named = f", naming {SUIT_SYMBOLS[move.suit]}" if move.suit is not None else ""
    rule = ", with a new rule" if move.has_rule else ""
    return f"{who} played {move.card} on {move.top}{said}{named}{rule}. Improper?"


def tell_unmau(u: Unmau, event: Event, names: Names) -> str:
    return f"{names(u.seat)}: Unmau!"


register_words(
    "aight-of-spaides",
    GameWords(
        title="Aight of Spaides", moves=AightMoves, look=AightLook(), tells={Unmau: tell_unmau}
    ),
)
