"""The ``slaiga`` command line.

Each command lives in its own module, whose ``add_parser`` (``add_parsers`` for
``cli.net``'s four) registers it. They are imported only when needed: a command line that
names a command builds that command's parser alone, so ``slaiga verify`` does not pay for
Trio, zeroconf and the node at start-up (the test suite starts hundreds of these
processes). Anything else (no command, ``--help``, an unknown command) builds them all,
so that the program's own help and errors list every command.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from cli import args as checked

VERSION = "0.1.0"

COMMANDS = {
    # a newcomer's order: play, the games, a LAN table, its records, then the tools
    "play": "cli.play",
    "rules": "cli.rules",
    "options": "cli.options",
    "lobby": "cli.net",
    "open": "cli.net",
    "join": "cli.net",
    "resume": "cli.net",
    "watch": "cli.watch",
    "verify": "cli.verify",
    "replay": "cli.replay",
    "simulate": "cli.simulate",
    "bench": "cli.bench",
}
"""Each command, and the module that registers it (in the order ``--help`` lists them)."""


def _register(sub: argparse._SubParsersAction, module_name: str) -> None:
    module = importlib.import_module(module_name)
    add = getattr(module, "add_parsers", None) or module.add_parser
    add(sub)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``slaiga`` parser: with every command, or with ``command``'s module's alone."""
    parser = argparse.ArgumentParser(
        prog="slaiga",
        description="Slaiga: card and dice games for people on one local network, with "
        "hidden cards that nobody can cheat with, and a game record anyone can check. New "
        "here? `slaiga play slaiga` plays Slaiga against three bots at this terminal; "
        "`slaiga COMMAND --help` tells more about each command.",
        epilog=checked.EXIT_STATUS,
    )
    parser.add_argument("--version", action="version", version=f"slaiga {VERSION}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    if command in COMMANDS:
        _register(sub, COMMANDS[command])
    else:
        for module_name in dict.fromkeys(COMMANDS.values()):
            _register(sub, module_name)
    return parser


def _commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def main(argv: list[str] | None = None) -> int:
    if argv is None:
        argv = sys.argv[1:]
    # the command comes first (`slaiga verify FILE`): build its parser alone; anything
    # before it (an option, `--`) or no known command at all: every command's
    parser = build_parser(argv[0] if argv else None)
    args, extra = parser.parse_known_args(argv)
    more = getattr(args, "more_positionals", None)
    if extra and more and not any(e.startswith("-") for e in extra):
        # `slaiga verify A --json B`: argparse leaves a list's files after an option over
        getattr(args, more).extend(extra)
        extra = []
    if extra:
        # told with the command's own usage line, not the program's (which lists none of
        # the command's options)
        command = _commands(parser).get(getattr(args, "command", None) or "", parser)
        command.error(f"unrecognized arguments: {' '.join(extra)}")
    if not getattr(args, "func", None):
        build_parser().print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `slaiga ... | head`: the reader left, nothing to report
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
