"""``slaiga rules GAME``: the rules for players, from ``docs/rules/<game>.md``.

The same pages are shown inside a game (type ``rules``); in Aight of Spaides
the table's current rule book comes first. The game's table options, with
their defaults, are always appended from the engine itself, so the listing
cannot drift from what the game accepts.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from rich.markup import escape

from cli import args as checked
from engine import registry
from engine.errors import EngineError

RULES_DIR = Path(__file__).resolve().parent.parent / "docs" / "rules"


def rules_path(game: str) -> Path:
    """Where a game's rules for players live (``docs/rules/<game>.md``)."""
    registry.get(game)  # an unknown game raises, naming the known ones
    return RULES_DIR / f"{game}.md"


def rules_text(game: str) -> str:
    path = rules_path(game)
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise EngineError(
            f"the rules of {game} are not installed ({path}: {exc.strerror})"
        ) from exc


def doc_ref(game: str) -> str:
    """How the command line cites a game's rules (a path inside the repository)."""
    return f"docs/rules/{game}.md"


def options_lines(game: str) -> list[str]:
    cls = registry.get(game).game_class
    out = ["", f"Table options of {game} (set with --option NAME=VALUE):"]
    for o in cls.OPTIONS:
        default = ("on" if o.default else "off") if isinstance(o.default, bool) else str(o.default)
        out.append(f"  {o.name} = {default}: {plain_help(o.help)} ({o.allowed()})")
    return out


def plain_help(text: str) -> str:
    """An option's help without the rulebook's "[house]" mark."""
    return " ".join(text.replace("[house]", "").split())


def table_rules(game: str, view: dict[str, Any] | None = None) -> list[str]:
    """The lines of the in-game rules page."""
    out: list[str] = []
    if view is not None and "book" in view:
        out += ["This table's rule book:", *(f"  {line}" for line in view["book"].lines()), ""]
    try:
        out += _markdown_lines(rules_text(game))
    except EngineError as exc:
        out.append(str(exc))
    return out + options_lines(game)


def _markdown_lines(text: str) -> list[str]:
    """Markdown, lightly flattened for a plain text page."""
    out = []
    for line in text.splitlines():
        s = line.rstrip()
        if s.startswith("#"):
            s = s.lstrip("#").strip().upper()
        s = s.replace("**", "").replace("`", "")
        if s.startswith("|---"):
            continue
        if s.startswith("|"):
            cells = [c.strip() for c in s.strip("|").split("|")]
            s = "  " + " · ".join(cells)
        out.append(s)
    return out


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "rules",
        help="print a game's rules for players",
        description="Print the rules of GAME, with its table options and their defaults.",
        epilog=checked.EXIT_STATUS,
    )
    p.add_argument(
        "game",
        nargs="?",
        type=checked.game,
        help=f"one of: {', '.join(registry.names())} (with none, they are listed)",
    )
    p.add_argument("--plain", action="store_true", help="print the text as it is, without styling")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.game is None:
        return checked.which_game("rules")
    from rich.console import Console
    from rich.markdown import Markdown

    try:
        text = rules_text(args.game)
    except EngineError as exc:
        Console(stderr=True).print(f"[bold red]error:[/] {escape(str(exc))}")
        return 2
    extra = "\n".join(options_lines(args.game))
    if args.plain or not sys.stdout.isatty():
        print(text.rstrip() + "\n" + extra)
        return 0
    import os

    out = Console()
    os.environ.setdefault("LESS", "-RFX")  # colours kept; a page that fits is just printed
    with out.pager(styles=True):  # a long page is paged ($PAGER, else less), not scrolled off
        out.print(Markdown(text))
        out.print(extra)
    return 0
