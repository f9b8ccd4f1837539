"""``slaiga simulate``: play games with bots through the trusted local dealer."""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import statistics
from collections import Counter
from typing import Any

from rich.markup import escape

from cli import args as checked
from engine import registry, runner
from engine.dealer import LocalDealer
from engine.errors import EngineError
from engine.game import Event
from engine.options import parse_option_args

SUIT_STYLE = {"♥": "red", "♦": "red", "♣": "bright_white", "♠": "bright_white"}


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "simulate",
        help="play games between bots on this computer and report statistics",
        description="Play N full games between bots with the trusted local dealer and report "
        "statistics. The same seed and options always give the same results.",
        epilog=checked.EXIT_STATUS,
    )
    p.add_argument("game", type=checked.game, help=f"one of: {', '.join(registry.names())}")
    p.add_argument(
        "--games", type=checked.positive, default=1, help="how many games to play (default 1)"
    )
    p.add_argument("--seed", type=checked.count, default=0, help="master seed (default 0)")
    p.add_argument(
        "--seats", type=checked.positive, default=None, help="number of players (game default)"
    )
    p.add_argument(
        "--bot",
        action="append",
        default=None,
        metavar="KIND",
        help="bot kind (heuristic or random); give once for all seats or once per seat",
    )
    p.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="table option, repeatable (see `slaiga options GAME`)",
    )
    p.add_argument(
        "--bot-param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a bot setting passed to every bot, e.g. bluff=0.2 (repeatable; unknown names "
        "are refused with the list of settings)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    p.add_argument("--verbose", action="store_true", help="show every move of every game")
    p.set_defaults(func=run)


def derive_seed(master: int, game_index: int, role: str) -> int:
    digest = hashlib.sha256(f"slaiga-sim:{master}:{game_index}:{role}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def style_cards(text: str) -> str:
    from rich.markup import escape

    out = escape(text)
    for sym, colour in SUIT_STYLE.items():
        out = out.replace(sym, f"[{colour}]{sym}[/]")
    return out


def run(args: argparse.Namespace) -> int:
    from rich.console import Console

    err = Console(stderr=True)
    out = Console(highlight=False)
    try:
        spec = registry.get(args.game)
        options = parse_option_args(args.option)
        seats = args.seats if args.seats is not None else spec.default_seats
        spec.game_class(seats, options)  # validate seats and options up front
        kinds = args.bot or ["heuristic"]
        if len(kinds) == 1:
            kinds = kinds * seats
        if len(kinds) != seats:
            raise EngineError(f"give --bot once, or once per seat ({seats}); got {len(kinds)}")
        for k in kinds:
            if k not in spec.bots:
                raise EngineError(f"unknown bot {k!r}; choose from {', '.join(spec.bots)}")
        bot_params: dict[str, Any] = {}
        for k in sorted(set(kinds)):  # each name must be a setting of every bot kind used
            bot_params.update(checked.parse_bot_params(spec.bots[k], args.bot_param, k))
    except (EngineError, ValueError) as exc:
        err.print(f"[bold red]error:[/] {escape(str(exc))}")
        return 2

    results = []
    for i in range(args.games):
        game = spec.factory(seats, options)
        dealer = LocalDealer(game.deck, derive_seed(args.seed, i, "dealer"))
        bots = [
            spec.bots[k](s, random.Random(derive_seed(args.seed, i, f"bot{s}")), **bot_params)
            for s, k in enumerate(kinds)
        ]
        on_event = None
        if args.verbose and not args.json:
            out.rule(f"{spec.name} — game {i + 1} of {args.games}, seats {seats}")
            on_event = _printer(out)
        elif not args.json and args.games >= 20 and i % max(1, args.games // 10) == 0:
            err.print(f"[dim]playing game {i + 1}/{args.games}…[/]")
        results.append(runner.play(game, dealer, bots, on_event=on_event))

    if args.json:
        print(json.dumps(_json(spec.name, args, seats, kinds, options, results, spec)))
    else:
        _summary(out, spec, seats, kinds, results)
    return 0


def _printer(out):
    def show(ev: Event) -> None:
        who = "" if ev.audience is None else f"[dim](seen by {_seats(ev.audience)})[/] "
        out.print(f"  {who}{style_cards(ev.text)}")

    return show


def _seats(aud) -> str:
    return ", ".join(f"seat {s}" for s in sorted(aud))


def _summary_extra(spec, results) -> dict[str, Any]:
    return spec.summarise(results) if spec.summarise is not None else {}


def _json(name, args, seats, kinds, options, results, spec) -> dict[str, Any]:
    return {
        "game": name,
        "games": args.games,
        "seed": args.seed,
        "seats": seats,
        "bots": kinds,
        "options": options,
        "results": [
            {
                "ranking": list(r.outcome.ranking),
                "turns": r.turns,
                "actions": r.actions,
                "state_hash": r.state_hash,
                "draw": r.outcome.draw,
                "reason": r.outcome.reason,
                "scores": list(r.outcome.scores) if r.outcome.scores is not None else None,
                "events": dict(sorted(r.events.items())),
            }
            for r in results
        ],
        "summary": _summary_extra(spec, results),
    }


def _summary(out, spec, seats, kinds, results) -> None:
    from rich.table import Table

    n = len(results)
    draws = sum(1 for r in results if r.outcome.draw)
    # "first" counts decided games; games stopped by a cap may still have placed
    # seats (a seat that went out before the cap), counted apart as "led"
    firsts = Counter(
        r.outcome.ranking[0] for r in results if r.outcome.ranking and not r.outcome.draw
    )
    led = Counter(r.outcome.ranking[0] for r in results if r.outcome.ranking and r.outcome.draw)
    t = Table(title=f"{spec.name}: {n} game(s), {seats} seats", show_header=False)
    t.add_row("average turns", f"{statistics.mean(r.turns for r in results):.1f}")
    t.add_row("average actions", f"{statistics.mean(r.actions for r in results):.1f}")
    t.add_row("draws", str(draws))
    for s in range(seats):
        extra = f", led {led[s]} draw(s)" if led[s] else ""
        t.add_row(
            f"seat {s} ({kinds[s]}) first", f"{firsts[s]} ({100 * firsts[s] / n:.0f}%){extra}"
        )
    for k in sorted(set(kinds)):
        won = sum(c for s, c in firsts.items() if kinds[s] == k)
        ahead = sum(c for s, c in led.items() if kinds[s] == k)
        extra = f", led {ahead} draw(s)" if ahead else ""
        t.add_row(f"{k} bots first", f"{won} ({kinds.count(k)} seat(s)){extra}")
    events = Counter()
    for r in results:
        events.update(r.events)
    for kind, count in sorted(events.items()):
        t.add_row(f"event {kind}", f"{count} ({count / n:.1f}/game)")
    for key, value in _summary_extra(spec, results).items():
        t.add_row(str(key), str(value))
    if n == 1:
        r = results[0]
        t.add_row("ranking", " > ".join(f"seat {s}" for s in r.outcome.ranking) or "-")
        t.add_row("state hash", r.state_hash[:16])
    out.print(t)
