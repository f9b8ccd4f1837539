"""The ``slaiga`` command line."""

from __future__ import annotations

import argparse
import sys

from cli import args as checked
from cli import bench, net, options, play, replay, rules, simulate, verify, watch

VERSION = "0.1.0"


def build_parser() -> argparse.ArgumentParser:
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
    # a newcomer's order: play, the games, a LAN table, its records, then the tools
    play.add_parser(sub)
    rules.add_parser(sub)
    options.add_parser(sub)
    net.add_parsers(sub)
    watch.add_parser(sub)
    verify.add_parser(sub)
    replay.add_parser(sub)
    simulate.add_parser(sub)
    bench.add_parser(sub)
    return parser


def _commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:
        # told with the command's own usage line, not the program's (which lists none of
        # the command's options)
        command = _commands(parser).get(getattr(args, "command", None) or "", parser)
        command.error(f"unrecognized arguments: {' '.join(extra)}")
    if not getattr(args, "func", None):
        parser.print_help()
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
