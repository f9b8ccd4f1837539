"""Making rules in Aight of Spaides: the typed form and the step-by-step builder."""

from __future__ import annotations

import pytest

from cli.menus import Ask, Choice, MoveError, Number, is_plan, resolve
from cli.moves import moves_for, validate_plan
from cli.narrate import Names
from cli.screen import Prompter
from engine import registry, runner
from engine.dealer import LocalDealer
from engine.games.aight.rulebook import (
    EVENTS,
    AllowOn,
    Always,
    Amend,
    Announce,
    AnyCard,
    CreateRule,
    DrawNext,
    ForbidOn,
    FreeText,
    OnCard,
    OnColour,
    OnEvent,
    OnRank,
    OnSuit,
    PlayAgain,
    Repeal,
    Reverse,
    RuleBook,
    RuleSpec,
    SetPenalty,
    SetUnmauCount,
    SkipNext,
    Standings,
    Wild,
    WinCondition,
    catalogue,
    describe,
)
from engine.games.aight.rulebuilder import format_rule, parse_rule, rule_menu

TRIGGERS = (
    Always(),
    AnyCard(),
    OnCard(12, 2),
    OnCard(10, 0),
    OnRank(7),
    OnRank(14),
    OnSuit(3),
    OnColour("red"),
    OnColour("black"),
    *(OnEvent(e) for e in EVENTS),
)
EFFECTS = (
    SkipNext(),
    Reverse(),
    DrawNext(2),
    DrawNext(10, True),
    PlayAgain(),
    Wild(),
    Announce('Say "hi"'),
    AllowOn(OnSuit(1)),
    ForbidOn(OnCard(2, 3)),
    SetUnmauCount(0),
    SetPenalty(3),
    WinCondition("unmaus", 2),
    WinCondition("empty_no_pending"),
    WinCondition("rules_created", 5),
    CreateRule(),
    Repeal(4),
    Amend(5, RuleSpec(OnRank(9), Reverse())),
    FreeText("No talking: really"),
)


def every_spec():
    for t in TRIGGERS:
        for e in EFFECTS:
            spec = RuleSpec(t, e)
            try:
                spec.check()
            except Exception:
                continue
            yield spec


def test_every_kind_of_rule_round_trips_through_its_typed_form():
    specs = list(every_spec()) + list(catalogue())
    assert len(specs) > 60
    for spec in specs:
        text = format_rule(spec)
        assert parse_rule(text) == spec, text


@pytest.mark.parametrize(
    ("text", "spec"),
    [
        ("rank 7: draw 2 stacking", RuleSpec(OnRank(7), DrawNext(2, True))),
        ("Qh: skip", RuleSpec(OnCard(12, 2), SkipNext())),
        ('suit hearts: say "Hearts!"', RuleSpec(OnSuit(2), Announce("Hearts!"))),
        ("red: allow on black", RuleSpec(OnColour("red"), AllowOn(OnColour("black")))),
        ("penalty 2", RuleSpec(Always(), SetPenalty(2))),
        ("penalty: skip", RuleSpec(OnEvent("penalty"), SkipNext())),
        ("draw: reverse", RuleSpec(OnEvent("draw"), Reverse())),
        ("always: win unmaus 3", RuleSpec(Always(), WinCondition("unmaus", 3))),
        ("repeal 8", RuleSpec(Always(), Repeal(8))),
        (
            "amend 8 to rank 9: reverse",
            RuleSpec(Always(), Amend(8, RuleSpec(OnRank(9), Reverse()))),
        ),
        (
            '"No talking while a 3 is on top"',
            RuleSpec(Always(), FreeText("No talking while a 3 is on top")),
        ),
        ("turn: draw 1", RuleSpec(OnEvent("turn_start"), DrawNext(1))),
    ],
)
def test_the_documented_examples_read_as_meant(text, spec):
    assert parse_rule(text) == spec


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("rank 1: skip", "not a rank"),
        ("rank 7: draw 99", "1 to 10"),
        ("rank 7: dance", "not an effect"),
        ("unmau: wild", "cannot be triggered"),
        ('"unclosed', "not closed"),
        ("", "a rule is needed"),
        ("skip extra", "unexpected"),
    ],
)
def test_bad_typed_rules_say_why(text, words):
    with pytest.raises(MoveError, match=words):
        parse_rule(text)


# ---- the builder, walked with keys ------------------------------------------------------


def keys_for(node, target: RuleSpec, book: RuleBook, depth: int = 0) -> list[str] | None:
    """The keys (typed option numbers, values, words) that build ``target``, or None."""
    if depth > 12:
        return None
    if is_plan(node):
        return [] if node and node[0] == target else None
    if isinstance(node, Choice):
        if node.title.startswith("New rule:"):
            inner = [target.effect.spec] if isinstance(target.effect, Amend) else []
            if node.title not in [f"New rule: {describe(x)}" for x in (target, *inner)]:
                return None
        elif node.title.startswith("Step 2: ") and not any(w in node.title for w in whens(target)):
            return None
        if node.title.startswith("This rule cannot be made"):
            return None
        for i, o in enumerate(node.options):
            if o.label == "start again":
                continue
            rest = keys_for(resolve(o.then), target, book, depth + 1)
            if rest is not None:
                return [*str(i + 1), "enter", *rest]
        return None
    if isinstance(node, Number):
        e = target.effect.spec.effect if isinstance(target.effect, Amend) else target.effect
        for v in {getattr(e, "n", None), getattr(e, "k", None)} - {None}:
            if node.lo <= v <= node.hi:
                rest = keys_for(node.finish(v), target, book, depth + 1)
                if rest is not None:
                    return [*str(v), "enter", *rest]
        return None
    if isinstance(node, Ask):
        e = target.effect.spec.effect if isinstance(target.effect, Amend) else target.effect
        text = getattr(e, "words", None) or getattr(e, "text", None)
        if text is None:
            return None
        rest = keys_for(node.finish(text), target, book, depth + 1)
        return None if rest is None else [*text, "enter", *rest]
    return None


def whens(spec: RuleSpec) -> list[str]:
    """How the builder's second step names the trigger(s) of ``spec`` (nested: amend)."""
    if isinstance(spec.effect, FreeText):
        return []
    out = [
        "Step 2: Always,"
        if isinstance(spec.trigger, Always)
        else describe(RuleSpec(spec.trigger, SkipNext())).split(",")[0]
    ]
    if isinstance(spec.effect, Amend):
        out += whens(spec.effect.spec)
    return out


def press(node, keys: list[str]):
    prompter = Prompter(node, "rule", lambda text: ())
    result = None
    for k in keys:
        result = prompter.key(k)
    return result, prompter


CHANGES = (
    RuleSpec(Always(), Repeal(6)),
    RuleSpec(Always(), Amend(5, RuleSpec(Always(), SetUnmauCount(3)))),
    RuleSpec(OnColour("red"), AllowOn(OnColour("black"))),
    RuleSpec(OnEvent("turn_start"), SkipNext()),
)


@pytest.mark.parametrize("spec", catalogue() + CHANGES, ids=format_rule)
def test_every_catalogue_rule_can_be_made_from_the_menus(spec):
    book = RuleBook()
    root = rule_menu(book, Standings((0, 0), (0, 0)), lambda s: (s,))
    keys = keys_for(root, spec, book)
    assert keys is not None, f"cannot build {format_rule(spec)}"
    result, _ = press(root, keys)
    assert result == ("plan", (spec,))


def test_a_person_sees_the_rule_in_words_before_confirming():
    book = RuleBook()
    root = rule_menu(book, None, lambda s: (s,))
    # a card is played -> every card of a rank -> 7 -> the next seat draws cards -> 2 -> stacks
    keys = ["enter", "down", "down", "enter", *["down"] * 5, "enter", "down", "down", "enter"]
    keys += ["enter", "down", "enter"]
    result, prompter = press(root, keys)
    assert result is None
    view = prompter.view()
    assert view.title == "New rule: When a 7 is played, the next seat draws 2 (stackable)."
    assert view.options[0] == "create this rule"
    result = prompter.key("enter")
    assert result == ("plan", (RuleSpec(OnRank(7), DrawNext(2, True)),))


def test_a_rule_the_book_refuses_is_shown_with_the_reason():
    book = RuleBook()
    root = rule_menu(book, None, lambda s: (s,))
    # any card may not be played on any card: nothing could ever be played
    forbid = [
        i
        for i, o in enumerate(
            ["skip", "reverse", "draw", "again", "wild", "say", "allow", "forbid"]
        )
    ]
    keys = ["enter", "enter", str(forbid[-1] + 1), "enter", "enter"]
    result, prompter = press(root, keys)
    title = prompter.view().title
    assert title.startswith("This rule cannot be made: this rule would make every play illegal")
    assert prompter.view().options == ["start again"]


def test_a_rule_in_free_text():
    root = rule_menu(RuleBook(), None, lambda s: (s,))
    last = str(len(root.options))
    result, prompter = press(root, [last, "enter", *"No 3s on Sundays", "enter"])
    assert prompter.view().title == "New rule: (free text) No 3s on Sundays."
    assert prompter.key("enter") == ("plan", (RuleSpec(Always(), FreeText("No 3s on Sundays")),))


def aight_after_first_play(seed: int = 3):
    spec = registry.get("aight-of-spaides")
    game = spec.factory(3, {})
    dealer = LocalDealer(game.deck, seed)
    runner.start(game, dealer)
    play = next(a for a in game.legal_actions(0) if type(a).__name__ == "Play")
    runner.apply(game, dealer, play)
    return game, dealer


def test_improper_calls_can_cite_any_active_rule():
    game, dealer = aight_after_first_play()
    assert game.phase == "window" and 1 in game.to_move()
    moves = moves_for("aight-of-spaides", Names(["Ann", "Bob", "Cat"], 1))
    root = moves.menu(game, 1, None)
    labels = [o.label for o in root.options]
    assert labels[0] == "let the move stand"
    cite = resolve(root.options[2].then)
    assert [o.label for o in cite.options][:6] == list(game.view(1)["book"].lines()[:6])
    (call,) = moves.parse(game, 1, "improper 4")
    assert call.cite == 4 and validate_plan(game, 1, (call,)) is None
    runner.apply(game, dealer, call)  # the engine accepts the citation
    with pytest.raises(MoveError, match="no rule #99"):
        moves.parse(game, 2, "improper 99")


def test_the_eight_of_spades_asks_for_a_rule_and_sends_it_with_the_play():
    spec = registry.get("aight-of-spaides")
    for seed in range(200):
        game = spec.factory(2, {})
        dealer = LocalDealer(game.deck, seed)
        runner.start(game, dealer)
        eights = [c for c in game.view(0)["hand"] if str(c.face) == "8♠"]
        if eights:
            break
    else:
        pytest.skip("no deal with the 8♠")
    moves = moves_for("aight-of-spaides", Names(["Ann", "Bob"], 0))
    (play,) = moves.parse(game, 0, "8s rule rank 7: draw 2 stacking")
    assert play.card == eights[0].handle
    assert play.words == ("Aight of Spaides",) and play.rule == RuleSpec(
        OnRank(7), DrawNext(2, True)
    )
    assert validate_plan(game, 0, (play,)) is None
    root = moves.menu(game, 0, None)
    option = next(o for o in root.options if o.label.startswith("play 8♠"))
    assert "create a rule" in option.label
    builder = resolve(option.then)
    assert builder.tag == "rule"
