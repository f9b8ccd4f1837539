"""``slaiga play``: play a game at this terminal against bots.

You see exactly what your seat may see: your view and the events visible to
your seat, never the bots' hidden cards. Moves are chosen from a numbered
list of your legal actions.
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import sys
from typing import Any

from cli.simulate import derive_seed, style_cards
from engine import registry, runner
from engine.cards import SUIT_SYMBOLS
from engine.dealer import LocalDealer
from engine.errors import EngineError
from engine.game import Action, CardView, Game
from engine.options import parse_option_args

HANDLE_FIELDS = ("card", "cards", "handle", "handles")


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "play",
        help="play a game at this terminal against bots",
        description="Play against bots on this machine with a trusted local dealer. "
        "Type the number of a move; 'v' shows your view again, 'q' quits.",
    )
    p.add_argument("game", help=f"one of: {', '.join(registry.names())}")
    p.add_argument("--seats", type=int, default=None, help="number of seats (game default)")
    p.add_argument("--seat", type=int, default=0, help="your seat (default 0)")
    p.add_argument("--bot", default="heuristic", help="bot kind for the other seats")
    p.add_argument("--seed", type=int, default=None, help="seed (default: random)")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE")
    p.set_defaults(func=run)


def describe(game: Game, seat: int, action: Action) -> str:
    """A readable action: handles are shown as the faces this seat may see."""
    parts = []
    for f in dataclasses.fields(action):
        if f.name == "seat":
            continue
        value = getattr(action, f.name)
        if any(f.name == n or f.name.endswith("_" + n) for n in HANDLE_FIELDS):
            value = _faces(game, seat, value)
        elif (f.name == "suit" or f.name.endswith("_suit")) and value in range(len(SUIT_SYMBOLS)):
            value = SUIT_SYMBOLS[value]
        parts.append(f"{f.name}={value}")
    name = type(action).__name__
    return f"{name}({', '.join(parts)})" if parts else name


def _faces(game: Game, seat: int, value: Any) -> Any:
    if isinstance(value, int) and not isinstance(value, bool):
        return str(game.card_view(seat, value))
    if isinstance(value, tuple) and all(isinstance(v, int) for v in value):
        return "[" + " ".join(str(game.card_view(seat, v)) for v in value) + "]"
    return value


def render_view(view: Any, indent: int = 0) -> str:
    pad = "  " * indent
    if isinstance(view, dict):
        lines = []
        for k, v in view.items():
            inner = render_view(v, indent + 1)
            sep = "\n" if "\n" in inner else " "
            lines.append(f"{pad}{k}:{sep}{inner.strip() if sep == ' ' else inner}")
        return "\n".join(lines)
    if isinstance(view, CardView):
        return str(view)
    if isinstance(view, tuple | list):
        if all(isinstance(v, CardView) for v in view):
            return pad + (" ".join(str(v) for v in view) or "—")
        if all(not isinstance(v, dict | list | tuple) for v in view):
            return pad + ", ".join(str(v) for v in view)
        return "\n".join(render_view(v, indent) for v in view)
    return pad + str(view)


def run(args: argparse.Namespace) -> int:
    from rich.console import Console

    out = Console(highlight=False)
    try:
        spec = registry.get(args.game)
        seats = args.seats if args.seats is not None else spec.default_seats
        game = spec.factory(seats, parse_option_args(args.option))
        if not 0 <= args.seat < seats:
            raise EngineError(f"--seat must be in 0..{seats - 1}")
        if args.bot not in spec.bots:
            raise EngineError(f"unknown bot {args.bot!r}; choose from {', '.join(spec.bots)}")
    except (EngineError, ValueError) as exc:
        Console(stderr=True).print(f"[bold red]error:[/] {exc}")
        return 2
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)
    me = args.seat
    dealer = LocalDealer(game.deck, derive_seed(seed, 0, "dealer"))
    bots = {
        s: spec.bots[args.bot](s, random.Random(derive_seed(seed, 0, f"bot{s}")))
        for s in range(seats)
        if s != me
    }
    out.rule(f"{spec.name}: you are seat {me} of {seats} (seed {seed})")

    def publish(events) -> None:
        for ev in events:
            for bot in bots.values():
                if ev.visible_to(bot.seat):
                    bot.observe(ev)
            if ev.visible_to(me):
                out.print("  " + style_cards(ev.text))

    publish(runner.start(game, dealer))
    while not game.is_over():
        movers = game.to_move()
        if not movers:
            raise EngineError(f"nobody to move in phase {game.phase!r}")
        seat = movers[0]
        if seat != me:
            action = bots[seat].act(game.view(seat), game.legal_actions(seat))
        else:
            action = _ask(out, game, me)
            if action is None:
                out.print("bye")
                return 0
        publish(runner.step(game, dealer, action))
    result = game.outcome()
    out.rule("game over")
    if result.draw:
        out.print(f"draw: {result.reason}")
    out.print(
        "ranking: "
        + " > ".join(f"seat {s}" + (" (you)" if s == me else "") for s in result.ranking)
    )
    return 0


def _ask(out, game: Game, me: int) -> Action | None:
    legal = game.legal_actions(me)
    out.print(f"\n[bold]your move[/] (phase {game.phase})")
    out.print(style_cards(render_view(game.view(me), 1)))
    for i, a in enumerate(legal, 1):
        out.print(f"  [cyan]{i:3d}[/] {style_cards(describe(game, me, a))}")
    while True:
        line = sys.stdin.readline()
        if not line:
            return None
        choice = line.strip().lower()
        if choice in ("q", "quit", "exit"):
            return None
        if choice == "v":
            out.print(style_cards(render_view(game.view(me), 1)))
            continue
        if choice.isdigit() and 1 <= int(choice) <= len(legal):
            return legal[int(choice) - 1]
        out.print(f"type a number from 1 to {len(legal)}, 'v' for your view, or 'q' to quit")
