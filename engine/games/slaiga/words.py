"""Slaiga and Honest Slaiga in players' words: shots, answers, checks and penalties as
typed (``shoot bob Jc claim As``, ``check``, ``place 9h 3``) and in menus, the volley on
the table, and its events told from their data (docs/rules/slaiga.md)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import engine.games.slaiga.actions as act
from engine.cards import ACE, JOKER_RANK, SUIT_SYMBOLS, Card
from engine.game import Action, Event, Game
from engine.games.slaiga.events import CheckCalled, Dealt, Handed, Played, Verdict, VolleyEnded
from engine.games.slaiga.hands import is_shoot
from engine.words import GameWords, register_words
from engine.words.look import (
    Look,
    SeatRow,
    Styled,
    TableView,
    by_suit,
    cards_text,
    face_text,
    marked_cards,
    ordinal,
    suit_text,
)
from engine.words.menus import (
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
from engine.words.moves import (
    Phrase,
    TableMoves,
    code,
    face,
    face_str,
    fill,
    hand_of,
    one_card,
    pick_legal,
    plan_of,
    suit_word,
    sym,
    take_cards,
    words_of,
)
from engine.words.moves import (
    suit_order as _suit_order,
)
from engine.words.names import Names, article, capital, words
from engine.words.tokens import SUIT_ALIASES, maybe_card, parse_suit


def _concede_told(m: SlaigaMoves, g: Game, s: int, a: act.Concede) -> str:
    vol = g.view(s)["volley"]
    if vol is not None and vol[0] == "jack":
        return "concede (the winner takes one of your cards, blind; it gives one back)"
    shots = vol[5] if vol else 0
    return f"concede (pay {shots} penalty card{'' if shots == 1 else 's'})"


def _check_told(m: SlaigaMoves, g: Game, s: int, a: act.Check) -> str:
    step = g.view(s)["task"]
    what = {
        "answer": "the face-down card",
        "miss_answer": "the miss",
        "win_ask": f"{m.names(step.other)}'s slaiga",
    }.get(step.kind, "it")
    return f"check {what} (a wrong check costs you)"


def _pass_told(m: SlaigaMoves, g: Game, s: int, a: act.Pass) -> str:
    step = g.view(s)["task"]
    return {
        "miss_answer": "accept the miss",
        "win_ask": "let the slaiga stand",
        "swap": "stop swapping",
    }.get(step.kind, "pass")


def _accept_told(m: SlaigaMoves, g: Game, s: int, a: act.AcceptCheck) -> str:
    if getattr(g.view(s)["task"], "tag", "") == "win":
        return "accept the check (your hand is shown)"
    return "accept the check (the card is shown)"


def _draw_told(m: SlaigaMoves, g: Game, s: int, a: act.Draw) -> str:
    pile = g.view(s)[a.source]
    top = str(pile[0]) if pile else "?"
    if a.source == "draw":
        return f"draw from the draw pile (top {top})"
    return f"take the discard pile's top {top}"


def _discard_told(m: SlaigaMoves, g: Game, s: int, a: act.Discard) -> str:
    f = face(g, s, a.card)
    power = (
        " and use the king (reveal draw-pile cards)"
        if f and f.rank == 13
        else " and use the queen (swap with the discards)"
    )
    return f"discard {f}" + (power if a.declare else "")


def _shot_card_told(m: SlaigaMoves, g: Game, s: int, a: act.ShotCard) -> str:
    step = g.view(s)["task"]
    claimed = "an ace" if a.ace else "a shoot card"
    return f"shoot with {face_str(g, s, a.card)}, claimed {claimed} of {sym((step.n + 1) % 4)}"


def _place_told(m: SlaigaMoves, g: Game, s: int, a: act.Place) -> str:
    where = position_words(a.position, len(g.view(s)["draw"]))
    return f"place {face_str(g, s, a.card)} at position {a.position} ({where})"


def _card_ace(m: SlaigaMoves, g: Game, s: int, a: act.ShotCard | act.Answer) -> str:
    return code(g, s, a.card) + (" ace" if a.ace else "")


def _said(word: str) -> Callable[..., str]:
    return lambda m, g, s, a: word


def _card(m: SlaigaMoves, g: Game, s: int, a: act.Give | act.GiveBack) -> str:
    return code(g, s, a.card)


# Every move's words, once: how it is typed, and how it is told.
WORDS: dict[type[Action], Phrase] = {
    act.Draw: Phrase(
        lambda m, g, s, a: "draw" if a.source == "draw" else "draw discard", _draw_told
    ),
    act.Shoot: Phrase(
        lambda m, g, s, a: f"shoot {m.names.token(a.target)} {suit_word(a.suit)}",
        lambda m, g, s, a: (
            f"shoot {m.names(a.target)}: {sym(a.suit)} target, a {sym((a.suit + 1) % 4)} shot"
        ),
    ),
    act.JackShot: Phrase(
        lambda m, g, s, a: f"jack {m.names.token(a.target)} {code(g, s, a.card)}",
        lambda m, g, s, a: f"jack-shoot {m.names(a.target)} with {face_str(g, s, a.card)}",
    ),
    act.ShotCard: Phrase(_card_ace, _shot_card_told),
    act.Answer: Phrase(_card_ace, lambda m, g, s, a: m._answer_words(g, s, a)),
    act.Discard: Phrase(
        lambda m, g, s, a: code(g, s, a.card) + (" use" if a.declare else ""), _discard_told
    ),
    act.ClaimWin: Phrase(
        lambda m, g, s, a: f"slaiga {code(g, s, a.card)}",
        lambda m, g, s, a: (
            f"say slaiga: put {face_str(g, s, a.card)} face down (claim a straight flush)"
        ),
    ),
    act.Concede: Phrase(_said("concede"), _concede_told),
    act.Miss: Phrase(
        _said("miss"),
        lambda m, g, s, a: (
            "miss: say you hold fewer than 3 "
            + (sym(g.view(s)["volley"][3]) if g.view(s)["volley"] else "")
        ),
    ),
    act.Check: Phrase(_said("check"), _check_told),
    act.Pass: Phrase(_said("pass"), _pass_told),
    act.CancelCheck: Phrase(_said("joker"), _said("play a joker: cancel the check")),
    act.AcceptCheck: Phrase(_said("accept"), _accept_told),
    act.MissVerdict: Phrase(
        _said("show"), _said("show your hand to the checker (the verdict is proved)")
    ),
    act.Give: Phrase(
        _card,
        lambda m, g, s, a: f"give {m.names(g.view(s)['task'].other)} {face_str(g, s, a.card)}",
    ),
    act.GiveBack: Phrase(
        _card,
        lambda m, g, s, a: f"give {m.names(g.view(s)['task'].other)} {face_str(g, s, a.card)} back",
    ),
    act.Place: Phrase(lambda m, g, s, a: f"place {code(g, s, a.card)} {a.position}", _place_told),
    act.Swap: Phrase(
        lambda m, g, s, a: f"swap {code(g, s, a.card)} for {code(g, s, a.pile_card)}",
        lambda m, g, s, a: f"swap {face_str(g, s, a.card)} for {face_str(g, s, a.pile_card)}",
    ),
    act.KingLook: Phrase(
        lambda m, g, s, a: f"look {a.count}",
        lambda m, g, s, a: f"reveal the next {a.count} draw-pile card{'s' if a.count != 1 else ''}",
    ),
    act.QueenSwap: Phrase(
        lambda m, g, s, a: f"swap {code(g, s, a.give)} for {m._discard_ref(g, s, a.take)}",
        lambda m, g, s, a: f"give {face_str(g, s, a.give)}, take {m._discard_words(g, s, a.take)}",
    ),
}


class SlaigaMoves(TableMoves):
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

    WORDS = WORDS

    def _discard_ref(self, game: Game, seat: int, handle: int) -> str:
        discard = [c.handle for c in game.view(seat)["discard"]]
        return f"#{discard.index(handle) + 1}"

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
        simple: dict[str, type[Action]] = {
            "check": act.Check,
            "miss": act.Miss,
            "concede": act.Concede,
            "pass": act.Pass,
            "accept": act.AcceptCheck if kind == "check_response" else act.Pass,
            "done": act.Pass,
            "stop": act.Pass,
            "show": act.MissVerdict,
            "joker": act.CancelCheck,
        }
        if len(toks) == 1 and first in simple:
            want = simple[first]
            return (pick_legal(legal, lambda a: isinstance(a, want), f"you cannot {first} now"),)
        if first in ("draw", "take", "reload"):
            source = "discard" if first == "take" or "discard" in toks[1:] else "draw"
            return plan_of(
                legal,
                lambda a: isinstance(a, act.Draw) and a.source == source,
                f"you cannot draw from the {source} pile now",
            )
        if first == "shoot" and kind == "turn":
            return self._parse_shoot(game, seat, toks[1:], legal)
        if first == "jack" and kind == "turn":
            target, rest = self._target(game, seat, toks[1:])
            h = one_card(rest, hand)
            return plan_of(
                legal,
                lambda a: isinstance(a, act.JackShot) and a.target == target and a.card == h,
                "a jack shot needs one of your jacks",
            )
        if first == "slaiga":
            h = one_card(toks[1:], hand)
            return plan_of(
                legal,
                lambda a: isinstance(a, act.ClaimWin) and a.card == h,
                "you cannot say slaiga now",
            )
        if first == "look":
            if len(toks) != 2 or not toks[1].isdigit():
                raise MoveError("look N: how many draw-pile cards the king reveals")
            n = int(toks[1])
            return plan_of(
                legal,
                lambda a: isinstance(a, act.KingLook) and a.count == n,
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
                    lambda a, h=h: isinstance(a, act.Give) and a.card == h,
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
            if getattr(a, "card", None) != h:
                continue
            if isinstance(a, act.ShotCard | act.Answer) and a.ace == ace:
                return (a,)
            if isinstance(a, act.Discard) and a.declare == use:
                return (a,)
            if isinstance(a, act.Give | act.GiveBack):
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
                lambda a: isinstance(a, act.Shoot) and a.target == target and a.suit == suit,
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
            lambda a: isinstance(a, act.Shoot) and a.target == target and a.suit == target_suit,
            f"you cannot shoot {self.names(target)} with a {sym(suit)} shot now",
        )
        return (shoot, act.ShotCard(seat, h, ace))

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
                lambda a: isinstance(a, act.QueenSwap) and a.give == give and a.take == take,
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
            lambda a: isinstance(a, act.Swap) and a.card == give and a.pile_card == take,
            "you cannot swap those",
        )

    def _parse_place(self, game: Game, seat: int, toks: list[str], legal: Sequence[Action]) -> Plan:
        v = game.view(seat)
        pool = {a.card: face(game, seat, a.card) for a in legal if isinstance(a, act.Place)}
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
            plan.append(act.Place(seat, h, pos))
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
                if isinstance(a, act.Pass):
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
                if isinstance(a, act.Draw) and a.source == "draw":
                    return a
        return super().automatic(game, seat, legal, ask_reload)

    def menu(self, game: Game, seat: int, hint: Action | None = None) -> Node | Plan:
        legal = game.legal_actions(seat)
        step = self.step(game, seat)
        kind = step.kind
        q = self.question(game, seat)
        d = lambda a: self.describe(game, seat, a)  # noqa: E731
        by = lambda cls: [a for a in legal if isinstance(a, cls)]  # noqa: E731
        if kind == "turn":
            opts = [leaf(d(a), a) for a in by(act.Draw)]
            shoots = by(act.Shoot)
            if shoots:
                opts.append(
                    branch(
                        "shoot an opponent…",
                        lambda: self._shoot_menu(game, seat, legal, hint),
                        shoots,
                    )
                )
            jacks = by(act.JackShot)
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
            opts = [leaf(d(a), a) for a in by(act.Discard)]
            claims = by(act.ClaimWin)
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
            hinted = {hint.card} if hint is not None and isinstance(hint, act.Give) else set()

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
                by(act.Swap),
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
            opts = [leaf("stop swapping", *by(act.Pass))]
            opts += swap.options if isinstance(swap, Choice) else [Option("swap…", swap)]
            return choose(q, opts, hint)
        if kind == "queen":
            return grouped(
                q,
                by(act.QueenSwap),
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
        shoots = [a for a in legal if isinstance(a, act.Shoot)]
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
                    opts.append(leaf(label, shoot, act.ShotCard(seat, h, ace)))
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
        words = [a for a in legal if isinstance(a, act.Check | act.Miss | act.Concede)]
        opts += [leaf(d(a), a) for a in words]
        cards = [a for a in legal if isinstance(a, act.ShotCard | act.Answer)]
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

        def position(h: int) -> Number:
            default = (
                hint.position if hint is not None and getattr(hint, "card", None) == h else size
            )
            return Number(
                f"Place {face_str(game, seat, h)} at which position? 0 is the top, {size} the bottom",
                0,
                size,
                lambda p: (act.Place(seat, h, p),),
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


def position_words(p: int, size: int) -> str:
    if p == 0:
        return "the top"
    if p >= size:
        return "the bottom"
    return f"{p} card{'s' if p != 1 else ''} under the top"


QUEEN_REACH = 6  # discards shown (the queen reaches this many)


class SlaigaLook(Look):
    names_gains = True

    def secret(self, game: Game, seat: int) -> frozenset[int]:
        v = game.view(seat)
        table = (*v.get("volley_cards", ()), *v.get("discard", ())[:QUEEN_REACH])
        return frozenset(
            c.handle for c in table if c.face is not None and not game.is_public(c.handle)
        )

    def gains(self, event: Event, me: int) -> bool:
        """A card moves into our hand by this event, face known to us only (the jack volley)."""
        d = event.detail
        return isinstance(d, Handed) and d.receiver == me and d.giver != me

    def header(self, v: dict[str, Any]) -> str:
        return f"turn {v['turns'] + 1}"

    def seats(self, t: TableView) -> list[SeatRow]:
        v = t.view
        volley = v["volley"]
        rows = []
        for s, hand in enumerate(v["hands"]):
            status = []
            if s in v["places"]:
                status.append(f"out {ordinal(v['places'].index(s) + 1)}")
            if volley is not None and s in (volley[1], volley[2]):
                status.append("attacking" if s == volley[1] else "defending")
            if s != v["seat"]:
                seen = [c.face for c in hand if c.face is not None]
                if seen:
                    status.append("holds " + cards_text(sorted(seen, key=by_suit)).plain)
            rows.append(SeatRow(s, str(len(hand)), ", ".join(status)))
        return rows

    def table(self, t: TableView) -> list[Styled]:
        v, names = t.view, t.names
        draw, discard = v["draw"], v["discard"]
        line = Styled(f"Draw pile {len(draw)}")
        if draw:
            line.append(", top ")
            line.append_text(face_text(draw[0].face))
        line.append(f" · Discard {len(discard)}")
        if discard:
            line.append(", top→ ")
            line.append_text(marked_cards(discard[:QUEEN_REACH], t.secret))
            if len(discard) > QUEEN_REACH:
                line.append(" …")
        out = [line]
        volley = v["volley"]
        if volley is not None:
            kind, attacker, defender, target, plays, shots, _checked = volley
            vl = Styled(f"Volley {names(attacker)} → {names(defender)}")
            if kind == "suit":
                vl.append(" · target ")
                vl.append_text(suit_text(target))
            else:
                vl.append(" · jack volley")
            vl.append(f" · {shots} shot{'s' if shots != 1 else ''}:")
            cards = v["volley_cards"]
            for i, p in enumerate(plays):
                vl.append(" ")
                if kind == "suit":
                    vl.append_text(suit_text(p.suit))
                    vl.append(f"{' ace' if p.ace else ''} {p.role} ")
                face = cards[i].face if i < len(cards) else None
                if i < len(cards) and cards[i].handle in t.secret:
                    vl.append_text(marked_cards([cards[i]], t.secret))
                else:
                    vl.append_text(face_text(face))
            out.append(vl)
        if any(c.handle in t.secret for c in (*v["volley_cards"], *discard[:QUEEN_REACH])):
            out.append(Styled("[ ]: a card you see that lies face down to the others", style="dim"))
        if v["to_place"]:
            tp = Styled("Cards for you to place in the draw pile: ")
            tp.append_text(cards_text([c.face for c in v["to_place"]]))
            out.append(tp)
        step = v["task"]
        if step is not None:
            out.append(Styled(slaiga_task_text(step, names, v), style="dim"))
        return out


def slaiga_task_text(step: Any, names: Names, v: dict[str, Any]) -> str:
    """What the task at the head of Slaiga's agenda waits for, in words."""
    who, other = names(step.seat), names(step.other)
    texts = {
        "turn": f"{who}'s turn: draw, shoot, or jack-shoot",
        "shot_card": f"{who} chooses the card to shoot {other} with",
        "discard": f"{who} discards (or says slaiga)",
        "king": f"{who} chooses how many cards the king reveals",
        "queen": f"{who} swaps a card with the discard pile (queen)",
        "answer": f"{who} must answer",
        "miss_answer": f"{who} may check {other}'s miss",
        "check_response": f"{who} answers the check (a joker cancels it)",
        "give": f"{who} gives {other} {step.n} penalty card{'s' if step.n != 1 else ''}",
        "place": f"{who} places penalty cards in the draw pile",
        "place_hand": f"{who} places {step.n} card{'s' if step.n != 1 else ''} in the draw pile",
        "swap": f"{who} may swap up to {step.n} cards with the draw pile",
        "reload": f"{who} reloads to {step.n} cards",
        "give_back": f"{who} gives {other} a card back",
        "win_ask": f"{who} may check {other}'s slaiga",
        # automatic steps: shown while the table proves what they reveal
        "setup": "the players shuffle and deal",
        "over": "the game is over",
        "volley_discard": "the volley's cards go to the discard pile",
        "jack_pick": f"{who} takes a blind card from {other}",
        "look": f"{who} looks at the top of the draw pile",
        "resolve_check": "the check is settled",
        "finish": f"{who} goes out",
        "next_turn": "the turn passes",
    }
    return texts.get(step.kind, step.kind)


# ---- events ------------------------------------------------------------------------


def _claim(p: Played) -> str:
    """ "a ♦ shot", "an ace ♦ block", then how it lies: " with 9♦" or ", face down"."""
    claim = f"{'ace ' if p.ace else ''}{SUIT_SYMBOLS[p.suit]} {p.role}"
    return article(claim) + (f" with {p.shown}" if p.shown is not None else ", face down")


def tell_played(p: Played, event: Event, names: Names) -> str:
    who = names(event.seat)
    if p.target is not None:
        target_suit = SUIT_SYMBOLS[p.target_suit] if p.target_suit in range(4) else "?"
        return f"{who} shoots {names(p.target)}: {target_suit} target, claims {_claim(p)}"
    verb = "shoots back" if p.back else "blocks"
    return f"{who} {verb}: claims {_claim(p)}"


def tell_check(c: CheckCalled, event: Event, names: Names) -> str:
    return f"{names(event.seat)} checks the {c.what}"


def tell_verdict(v: Verdict, event: Event, names: Names) -> str:
    what = "a true claim" if v.true else "a lie"
    return f"It was {v.face}: {what} — {names(event.seat)} pays {v.pay}"


def tell_volley_end(v: VolleyEnded, event: Event, names: Names) -> str:
    volley = "jack volley" if v.jack else "volley"
    return capital(
        words(
            f"the {volley} between {names(v.attacker)} and {names(v.defender)} ends: "
            f"{v.cards} card(s), {v.shots} shot(s)"
        )
    )


def tell_dealt(d: Dealt, event: Event, names: Names) -> str:
    """ "Ann, Bob and Cy are dealt 6 cards each" (in the order they play)."""
    who = [names(s) for s in range(d.seats)]
    listed = f"{', '.join(who[:-1])} and {who[-1]}" if len(who) > 1 else who[0]
    return words(f"{listed} are dealt {d.cards} card(s) each")


TELLS = {
    Dealt: tell_dealt,
    Played: tell_played,
    CheckCalled: tell_check,
    Verdict: tell_verdict,
    VolleyEnded: tell_volley_end,
}


ENDINGS = {
    "one seat left": "the game ends when only one player is left in play: the others went out",
    "turn cap reached": "the turn limit was reached before the others went out",
}
"""The engine's end reasons (``agenda.Agenda.outcome``) in player words."""


LOOK = SlaigaLook()
register_words(
    "slaiga",
    GameWords(title="Slaiga", moves=SlaigaMoves, look=LOOK, tells=TELLS, endings=ENDINGS),
)
register_words(
    "honest-slaiga",
    GameWords(title="Honest Slaiga", moves=SlaigaMoves, look=LOOK, tells=TELLS, endings=ENDINGS),
)
