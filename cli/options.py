"""``slaiga options``: the games and their table options, with defaults."""

from __future__ import annotations

import argparse
import json
from typing import Any

from rich.markup import escape

from cli import args as checked
from cli.rules import doc_ref, plain_help
from engine import registry
from engine.errors import EngineError
from engine.options import SURVIVE, SURVIVE_MIN_SEATS
from p2p.errors import NodeError

MAX_WIDTH = 100
"""The tables take the terminal's width up to this many columns (lines stay readable)."""


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "options",
        help="list the games, or one game's table options and defaults",
        description="Without GAME, list the games. With GAME, list its number of players, "
        "bots and table options (name, default, allowed values). The rules for players, "
        "options included, are in docs/rules/GAME.md (`slaiga rules GAME` prints them).",
        epilog=checked.EXIT_STATUS,
    )
    p.add_argument(
        "game", nargs="?", type=checked.game, help=f"one of: {', '.join(registry.names())}"
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def describe(name: str) -> dict:
    spec = registry.get(name)
    cls = spec.game_class
    return {
        "game": name,
        "description": spec.description,
        "rules": doc_ref(name),
        "seats": {"min": cls.MIN_SEATS, "max": cls.MAX_SEATS, "default": spec.default_seats},
        "bots": list(spec.bots),
        "options": [
            {
                "name": o.name,
                "default": o.default,
                "allowed": o.allowed(),
                "help": plain_help(_survive_help(name, cls) if o.name == "survive" else o.help),
                "house": "[house]" in o.help,
            }
            for o in cls.OPTIONS
        ],
    }


def _survive_help(name: str, cls: Any) -> str:
    """The ``survive`` row in this game's words: what the escrow could open (cards; a dice
    game hides none) and, while ``slaiga open`` refuses it, that a LAN table cannot play it."""
    seats = max(cls.MIN_SEATS, SURVIVE_MIN_SEATS)
    if len(cls(seats, {}).deck):
        text = SURVIVE.help
    else:
        text = (
            "go on without a seat that has left for good: each seat's key is escrowed with "
            "the others (this game deals no hidden cards, so there are none of yours to open;"
            " needs 3+ seats)"
        )
    from cli.net import table_options  # the check `slaiga open` makes, asked, not copied

    try:
        table_options(name, seats, ["survive=on"])
    except NodeError as exc:
        if "not played on the LAN" in str(exc):
            text += "; not yet playable over the network: `slaiga open` and `play` refuse it"
    return text


def run(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    out, err = Console(highlight=False), Console(stderr=True)
    try:
        infos = [describe(args.game)] if args.game else [describe(n) for n in registry.names()]
    except EngineError as exc:
        err.print(f"[bold red]error:[/] {escape(str(exc))}")
        return 2
    if args.json:
        print(json.dumps(infos[0] if args.game else infos))
        return 0
    if not args.game:
        # the about text takes the room left and wraps under its own column, the rules
        # file on a line of its own below it (a column of paths squeezed the about text)
        t = Table(title="games", show_header=True, width=min(out.width, MAX_WIDTH))
        t.add_column("game", no_wrap=True)
        t.add_column("players", no_wrap=True)
        t.add_column("about", ratio=1)
        for i in infos:
            s = i["seats"]
            about = f"{escape(i['description'])}\n[dim]rules: {escape(i['rules'])}[/]"
            t.add_row(i["game"], f"{s['min']}-{s['max']} ({s['default']})", about)
        out.print(t)
        out.print(
            "players: fewest-most (default). `slaiga rules GAME` prints a game's rules, "
            "`slaiga options GAME` its table options."
        )
        return 0
    i = infos[0]
    s = i["seats"]
    out.print(f"[bold]{i['game']}[/]: {i['description']}")
    out.print(
        f"players {s['min']}-{s['max']} (default {s['default']}); bots: {', '.join(i['bots'])}"
    )
    out.print(f"rules for players: {i['rules']} (or `slaiga rules {i['game']}`)")
    t = Table(show_header=True, width=min(out.width, MAX_WIDTH))
    t.add_column("option", no_wrap=True)
    t.add_column("default", no_wrap=True)
    t.add_column("allowed", ratio=2)
    t.add_column("meaning", ratio=5)  # the longest text: most of the room
    for o in i["options"]:
        default = o["default"]
        shown = ("on" if default else "off") if isinstance(default, bool) else str(default)
        t.add_row(o["name"], shown, o["allowed"], o["help"] + (" *" if o["house"] else ""))
    out.print(t)
    out.print(
        "set with --option NAME=VALUE; * marks a choice this project made where the "
        "original rules are silent (a house rule)"
    )
    return 0
