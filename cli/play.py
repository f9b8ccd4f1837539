"""``slaiga play GAME``: you against bots, on the table screen.

The table is a loop of *players* (``engine.players.Player``): a
:class:`~cli.human.HumanPlayer` for you and bots for the other seats. Where
the moves go is a *backend*: ``--local`` plays through the trusted local
dealer (``engine.dealer.LocalDealer``) in this process, on the one game loop
``engine.runner.play_async``; a networked backend (bot peer processes on
loopback, full crypto) drives the same players through the table node. A backend is an async callable
``(players, table) -> summary`` (see :func:`local_backend`), so the screen and
the moves are the same whichever plays the table.

When stdin is not a terminal your seat is played by a bot and the game is
printed line by line (``--json``: only the final object).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import trio
from rich.markup import escape

from cli import args as checked
from cli.human import DEFAULT_ANSWER_TIMEOUT_S, HumanPlayer, PlayerQuit, WatchingPlayer
from cli.narrate import BOT_NAMES, unique_names
from cli.netplay import ThinkingBot
from cli.simulate import derive_seed
from engine import registry, runner
from engine.dealer import LocalDealer
from engine.errors import EngineError
from engine.game import Game
from engine.options import manifest_options, parse_option_args, resolve_options
from engine.players import BotPlayer, Player

DEFAULT_BOT_DELAY_S = 0.3
MAX_ACTIONS = runner.DEFAULT_MAX_ACTIONS


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "play",
        help="play a game at this terminal against bots",
        description="Play GAME against bots at this terminal. Choose moves with the arrow "
        "keys and Enter, or type them (press ? in the game for help, type rules for the "
        "rules). When the input is not a terminal, a bot plays your seat and the game is "
        "printed move by move.",
        epilog=checked.EXIT_STATUS,
    )
    p.add_argument(
        "game",
        nargs="?",
        type=checked.game,
        help=f"one of: {', '.join(registry.names())} (with none, they are listed)",
    )
    p.add_argument(
        "--local",
        action="store_true",
        help="quick practice with a trusted dealer inside this program (no network); "
        "without it the bots are peer processes at a real table on this machine, with "
        "every shuffle, card and claim proved and checked",
    )
    p.add_argument(
        "--state-dir",
        default=None,
        help="where your identity key and game records live (default: $SLAIGA_HOME or "
        "the user data folder)",
    )
    p.add_argument(
        "--seats", type=checked.positive, default=None, help="number of players (game default)"
    )
    p.add_argument(
        "--seat",
        type=checked.positive,
        default=1,
        help="your seat with --local, counted from 1 (default 1)",
    )
    p.add_argument(
        "--name",
        type=checked.player_name,
        default=None,
        help="your name (default: your login name)",
    )
    p.add_argument(
        "--bot",
        default="heuristic",
        help="kind of bot for the other seats: heuristic (default) or random",
    )
    p.add_argument(
        "--bot-param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a bot setting, e.g. bluff=0.3 (repeatable; unknown names are refused with the list)",
    )
    p.add_argument(
        "--seed",
        type=checked.count,
        default=None,
        help="seed for the deal and the bots (default: random)",
    )
    p.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="table option, repeatable (see `slaiga options GAME`)",
    )
    p.add_argument(
        "--answer-timeout",
        type=checked.seconds,
        default=DEFAULT_ANSWER_TIMEOUT_S,
        help="seconds you have to answer when others may answer too (checks, Improper!, "
        f"votes) before you pass; 0 waits forever (default {DEFAULT_ANSWER_TIMEOUT_S:g})",
    )
    p.add_argument(
        "--bot-delay",
        type=checked.seconds,
        default=DEFAULT_BOT_DELAY_S,
        help=f"seconds to pause before each bot move, to follow the game (default {DEFAULT_BOT_DELAY_S:g})",
    )
    p.add_argument(
        "--ask-reload",
        action="store_true",
        help="Slaiga: choose the pile for every reload draw (default: the draw pile)",
    )
    p.add_argument("--no-hints", action="store_true", help="do not preselect a suggested move")
    p.add_argument("--json", action="store_true", help="print the final result as one JSON object")
    p.add_argument(
        "--trace", default=None, help=argparse.SUPPRESS
    )  # tests: a JSON line per question
    p.set_defaults(func=run)


@dataclass
class Table:
    """What a backend needs to play one game."""

    game_name: str
    seats: int
    options: dict[str, str]
    me: int
    names: tuple[str, ...]
    seed: int
    bot_delay: float = 0.0
    bots: dict[int, Any] = field(default_factory=dict)


Backend = Callable[[Sequence[Player], Table], Awaitable[dict[str, Any]]]


async def local_backend(
    players: Sequence[Player], table: Table, game_no: int = 0
) -> dict[str, Any]:
    """Play one game through the trusted local dealer; return the final summary.

    The game loop is ``engine.runner.play_async``: every player is told only the
    events its seat may see, and each seat's decision is awaited in turn. The
    summary has the keys of a networked table's (``record`` and ``record_head``
    are ``None``: a local game keeps no record).
    """
    spec = registry.get(table.game_name)
    game: Game = spec.factory(table.seats, table.options)
    dealer = LocalDealer(game.deck, derive_seed(table.seed, game_no, "dealer"))
    seated = [
        ThinkingBot(p, table.bot_delay)
        if s != table.me and table.bot_delay and isinstance(p, BotPlayer)
        else p
        for s, p in enumerate(players)
    ]
    about: dict[str, Any] = {
        "table_id": "local",
        "game": table.game_name,
        "names": list(table.names),
        "record_head": None,
        "record": None,
        "culprit": None,
        "seed": table.seed,
    }
    result = await runner.play_async(game, dealer, seated, max_actions=MAX_ACTIONS, about=about)
    return {**about, **result.summary(), "seat": table.me}


def make_table(args: argparse.Namespace) -> Table:
    """Check the command line against the game; raise ``EngineError``/``ValueError`` if bad."""
    spec = registry.get(args.game)
    seats = args.seats if args.seats is not None else spec.default_seats
    options = parse_option_args(args.option)
    spec.game_class(seats, options)  # validates the seat count and every option
    if not 1 <= args.seat <= seats:
        raise EngineError(f"--seat must be 1 to {seats} at a table of {seats}")
    me_seat = args.seat - 1
    if args.bot not in spec.bots:
        raise EngineError(f"unknown bot {args.bot!r}; choose from {', '.join(spec.bots)}")
    bot_params = checked.parse_bot_params(spec.bots[args.bot], args.bot_param, args.bot)
    from cli import state

    interactive = sys.stdin.isatty() and sys.stdout.isatty() and not args.json
    me = state.player_name(state.state_dir(args.state_dir), args.name, ask=interactive)
    others = [n for n in BOT_NAMES if n.lower() != me.lower()]
    names = [others[(i - (1 if i > me_seat else 0)) % len(others)] for i in range(seats)]
    names[me_seat] = me
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)
    return Table(
        args.game, seats, options, me_seat, unique_names(names), seed, args.bot_delay, bot_params
    )


def bot_players(table: Table, kind: str, skip: int | None, game_no: int = 0) -> dict[int, Player]:
    spec = registry.get(table.game_name)
    return {
        s: BotPlayer.make(
            spec.bots[kind],
            s,
            random.Random(derive_seed(table.seed, game_no, f"bot{s}")),
            table.bots,
        )
        for s in range(table.seats)
        if s != skip
    }


def run(args: argparse.Namespace) -> int:
    if args.game is None:
        return checked.which_game("play")
    from rich.console import Console

    err = Console(stderr=True, highlight=False)
    try:
        table = make_table(args)
    except (EngineError, ValueError) as exc:
        err.print(f"[bold red]error:[/] {escape(str(exc))}")
        return checked.EXIT_USAGE
    if not args.local:
        from cli.net import table_options
        from p2p.errors import NodeError

        try:  # what `slaiga open` refuses (survive, for now) a table of peers refuses too
            table_options(table.game_name, table.seats, args.option)
        except NodeError as exc:
            err.print(f"[bold red]error:[/] {escape(str(exc))}")
            return checked.EXIT_USAGE
        return play_networked_table(table, args, err)
    interactive = sys.stdin.isatty() and sys.stdout.isatty()
    if not interactive:
        return watch(table, args)
    return play_here(table, args, local_backend)


def play_networked_table(table: Table, args: argparse.Namespace, err: Any) -> int:
    """You against bot peer processes on loopback: a real table with every proof checked
    (the seat order is drawn at the table, so ``--seat`` does not apply here)."""
    from cli import state
    from cli.netplay import play_networked, player_factory
    from p2p.errors import NodeError
    from p2p.table.events import Forming, Joined, Listening, Meshed, NodeEvent, SeatStalled

    interactive = sys.stdin.isatty() and sys.stdout.isatty()
    try:
        folder = state.hold(state.state_dir(getattr(args, "state_dir", None)))
    except state.StateInUse as exc:
        err.print(f"[bold red]error:[/] {escape(str(exc))}")
        return checked.EXIT_USAGE
    if not interactive and not args.json:
        err.print(f"a bot plays your seat; watching {table.game_name} at a table of {table.seats}")
    game_no = 0
    node_of: dict[str, Any] = {}
    while True:
        make = player_factory(
            None,
            answer_timeout=args.answer_timeout,
            quiet=args.json,
            ask_reload=args.ask_reload,
            hints=not args.no_hints,
            trace=args.trace,
        )

        def progress(event: NodeEvent) -> None:
            if args.json or not interactive:
                return
            if isinstance(event, SeatStalled):
                from cli.netplay import stall_words, tell_at_table

                text = stall_words(event.name, event.silent_for)
                if not tell_at_table(node_of.get("node"), text):
                    err.print(f"[dim]· {text}[/]")
            elif isinstance(event, Listening):
                err.print("[dim]· starting the bot peers…[/]")
            elif isinstance(event, Joined):
                err.print(f"[dim]· {event.name} sat down[/]")
            elif isinstance(event, Forming):
                err.print("[dim]· every seat signs the table's manifest…[/]")
            elif isinstance(event, Meshed):
                err.print("[dim]· table formed; drawing the seat order and shuffling…[/]")

        try:
            result = play_networked(
                table.game_name,
                table.seats,
                manifest_options(
                    registry.get(table.game_name).game_class.OPTIONS,
                    resolve_options(
                        registry.get(table.game_name).game_class.OPTIONS, table.options
                    ),
                ),
                table.names,
                table.me,
                make,
                folder,
                bot=args.bot,
                on_event=progress,
                node_box=node_of,
            )
        except PlayerQuit:
            print("You left the table.")
            return checked.EXIT_OK
        except KeyboardInterrupt:
            from cli.net import resume_hint

            node = node_of.get("node")
            if node is None:
                err.print("Interrupted before the table formed: nothing to resume.")
            else:
                err.print(resume_hint(node, args.state_dir))
            return checked.EXIT_INTERRUPTED
        except (NodeError, OSError) as exc:
            err.print(f"[bold red]error:[/] {escape(str(exc))}")
            return 1
        summary = result.game_summary()
        if args.json:
            print(json.dumps(summary, sort_keys=True), flush=True)
        if summary["culprit"] is not None:
            return 4
        if not interactive:
            return checked.EXIT_OK
        again = input("Play again at a new table? [y/N] ").strip().lower() == "y"
        if not again:
            return checked.EXIT_OK
        game_no += 1


def watch(table: Table, args: argparse.Namespace) -> int:
    """A bot plays your seat; the game is printed (or only the JSON result)."""
    table.bot_delay = 0.0
    players = bot_players(table, args.bot, skip=table.me)
    mine = bot_players(table, args.bot, skip=None)[table.me]
    players[table.me] = WatchingPlayer(mine.bot, table.names, table.me, quiet=args.json)
    seated = [players[s] for s in range(table.seats)]
    summary = trio.run(local_backend, seated, table)
    if args.json:
        print(json.dumps(summary, sort_keys=True), flush=True)
    return checked.EXIT_OK


def play_here(table: Table, args: argparse.Namespace, backend: Any) -> int:
    """You at this terminal, as many games as you like (each with a fresh deal)."""
    game_no = 0
    while True:
        human = HumanPlayer(
            table.names,
            table.me,
            table.game_name,
            answer_timeout=args.answer_timeout,
            ask_reload=args.ask_reload,
            hints=not args.no_hints,
            trace=args.trace,
        )
        players = bot_players(table, args.bot, skip=table.me, game_no=game_no)
        players[table.me] = human
        seated = [players[s] for s in range(table.seats)]
        try:
            with human:
                summary = trio.run(backend, seated, table, game_no)
        except PlayerQuit:
            print("You left the table.")
            return checked.EXIT_OK
        if args.json:
            print(json.dumps(summary, sort_keys=True), flush=True)
        again = trio.run(human.offer_again)
        if not again:
            return checked.EXIT_OK
        game_no += 1
