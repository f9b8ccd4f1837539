"""``slaiga lobby``, ``slaiga open``, ``slaiga join`` (and ``resume``): tables on the LAN.

Human output goes through ``rich`` (progress on stderr, the result on
stdout); ``--json`` prints one JSON document on stdout and nothing else there.
Until game play over the network lands, a formed table prints its agreed
manifest (seat order with names and fingerprints) and exits 0; ``--demo-steps``
runs the demonstration protocol over the mesh first.

Runnable on its own as ``python -m cli.net SUBCOMMAND ...``; ``add_parsers``
registers the same subcommands on the main ``slaiga`` parser.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shlex
import signal
import sys
import time
from pathlib import Path
from typing import Any

import trio
from rich.console import Console

from cli import args as checked
from cli import state
from cli.netplay import (
    BOT_KINDS,
    close_player,
    player_event_text,
    player_factory,
    tell_at_table,
)
from engine import registry
from engine.errors import EngineError
from engine.options import manifest_options, parse_option_args, resolve_options
from engine.players import LeftTable
from engine.words.names import printable
from p2p.errors import DiscoveryError, NodeError, P2PError, TableAbandoned
from p2p.net import discovery, netguard
from p2p.net.loopwatch import LoopWatch, watched
from p2p.net.node import Node, NodeConfig
from p2p.net.opening import OPEN_TIMEOUT_S
from p2p.net.state import RECORD_SUFFIX
from p2p.table.demo import DEFAULT_ROUND_EVERY
from p2p.table.events import (
    Abandoned,
    CheatSeen,
    HandedOver,
    NodeEvent,
    NoticeRefused,
    SeatBack,
    SeatDown,
    SeatLeft,
    SeatRecovered,
    SeatStalled,
    SeatUp,
    SpectatorJoined,
    SpectatorLeft,
    StepDone,
    Vanished,
    Welcomed,
)
from p2p.table.forming import (
    DEFAULT_MAX_WAIT_MS,
    DEFAULT_SPECTATORS,
    DEFAULT_STALL_AFTER_MS,
    MAX_SPECTATORS,
)
from p2p.table.game_rule import DEFAULT_DECIDE_MAX_MS, DEFAULT_DECIDE_STALL_MS, GameProtocol
from p2p.table.results import TableResult

ENV_HOME = state.ENV_HOME
EXIT_OK = checked.EXIT_OK
EXIT_FAILED = checked.EXIT_FAILED
EXIT_USAGE = checked.EXIT_USAGE
EXIT_ABANDONED = 3
EXIT_CHEATER = 4
"""The table ended early because a seat was proven to cheat (our record file holds the
signed evidence)."""
QUIET_EVENTS = (SeatUp, SeatDown, Welcomed, StepDone)
TOLD_WHEN_QUIET = (
    SeatStalled,
    Vanished,
    CheatSeen,
    Abandoned,
    HandedOver,
    SeatLeft,
    SeatBack,
    NoticeRefused,
)
"""Events said on stderr even with ``--json``: long waits, cheats, who left or is back."""
"""Events a person need not see (links flapping, lobby counts, step traces)."""

_err = Console(stderr=True, markup=False)
_out = Console(markup=False)
"""No markup: names, reasons and paths come from the players and the network, and a name
like "[/dim]" is text to show, not a style (it made every other player's command end in a
traceback); a style is given as ``style=``."""


def spectator_count(text: str) -> int:
    """``--spectators N``: 0 to :data:`MAX_SPECTATORS`."""
    n = checked.count(text)
    if n > MAX_SPECTATORS:
        raise argparse.ArgumentTypeError(
            f"{n} spectators: a table lets at most {MAX_SPECTATORS} watch (0: nobody)"
        )
    return n


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--interface",
        default=None,
        help=f"network interface to use: a name (eth0), one of this machine's IPv4 "
        f"addresses, or all (default ${discovery.ENV_INTERFACE}, else all)",
    )
    p.add_argument("--json", action="store_true", help="print the result as one JSON object")


def _seat_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--name", type=checked.player_name, default=None, help="your name at the table")
    p.add_argument(
        "--bot",
        choices=BOT_KINDS,
        default=None,
        help="let a bot play your seat (default: you play it at this terminal)",
    )
    p.add_argument(
        "--state-dir",
        metavar="DIR",
        type=Path,
        default=None,
        help=f"folder for your identity key and game records (default ${ENV_HOME}, else "
        f"{state.state_dir(None) if not os.environ.get(ENV_HOME) else 'the user data folder'}); "
        "two players on one machine need one each",
    )
    p.add_argument(
        "--port",
        type=checked.port,
        default=0,
        help="TCP port to listen on, 1-65535 (default 0: any free port)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress messages")
    # what a player rarely sets: listed apart, so the few options above stand out
    more = p.add_argument_group("timing, scripts and testing (rarely needed)")
    more.add_argument(
        "--bot-think-ms",
        metavar="MS",
        type=checked.count,
        default=0,
        help="with --bot: pause this long before each decision, like a person",
    )
    more.add_argument(
        "--decide-stall-ms",
        metavar="MS",
        type=checked.count,
        default=DEFAULT_DECIDE_STALL_MS,
        help="how long a player may think before the table says it is waiting for them"
        f" (default {DEFAULT_DECIDE_STALL_MS})",
    )
    more.add_argument(
        "--decide-max-ms",
        metavar="MS",
        type=checked.count,
        default=DEFAULT_DECIDE_MAX_MS,
        help=f"how long a player may think before the table is abandoned (default"
        f" {DEFAULT_DECIDE_MAX_MS})",
    )
    more.add_argument(
        "--stall-after-ms",
        metavar="MS",
        type=checked.count,
        default=DEFAULT_STALL_AFTER_MS,
        help=f"milliseconds of silence before a player counts as slow (default {DEFAULT_STALL_AFTER_MS})",
    )
    more.add_argument(
        "--max-wait-ms",
        metavar="MS",
        type=checked.count,
        default=DEFAULT_MAX_WAIT_MS,
        help=f"milliseconds of silence before the table is given up (default {DEFAULT_MAX_WAIT_MS})",
    )
    more.add_argument(
        "--events",
        action="store_true",
        help="print every progress event as one JSON object per line on stderr"
        " (for scripts: slow players, recoveries, cheats, the end)",
    )
    more.add_argument(
        "--demo-steps",
        metavar="N",
        type=checked.count,
        default=0,
        help="for testing the network: exchange N signed practice messages once the table "
        "has formed (the opener's choice holds for every player)",
    )
    more.add_argument(
        "--demo-pace-ms",
        metavar="MS",
        type=checked.count,
        default=0,
        help="with --demo-steps: milliseconds to wait between your own practice messages",
    )
    p.add_argument("--round-every", type=int, default=DEFAULT_ROUND_EVERY, help=argparse.SUPPRESS)
    p.add_argument("--trace-steps", action="store_true", help=argparse.SUPPRESS)
    # slaiga bench table: sample the event loop's lateness (p2p/net/loopwatch.py) and print
    # the samples as one "loop_watch" JSON line on stderr at the end
    p.add_argument("--loop-watch", action="store_true", help=argparse.SUPPRESS)
    # slaiga bench table --offload: proofs made and checked on the event loop (p2p/net/offload.py)
    p.add_argument("--no-offload", action="store_true", help=argparse.SUPPRESS)
    # the seat handed to a bot in the background waits for the person's process to exit
    p.add_argument("--wait-state", type=checked.seconds, default=0.0, help=argparse.SUPPRESS)
    p.add_argument("--keepalive", type=float, default=1.0, help=argparse.SUPPRESS)
    p.add_argument("--keepalive-dead", type=float, default=5.0, help=argparse.SUPPRESS)
    p.add_argument("--linger", type=float, default=10.0, help=argparse.SUPPRESS)


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """Register ``lobby``, ``open``, ``join`` and ``resume`` on a subparsers object."""
    p = sub.add_parser(
        "lobby",
        help="list the tables open on the local network",
        description="Listen for tables announced on the local network and list them.",
        epilog=checked.EXIT_STATUS,
    )
    _common(p)
    p.add_argument(
        "--timeout",
        type=checked.seconds,
        default=3.0,
        metavar="SECONDS",
        help="seconds to listen (default 3)",
    )
    p.set_defaults(func=_guarded(run_lobby))

    p = sub.add_parser(
        "open",
        help="open a table on the local network and wait for players",
        description="Open a table for GAME, announce it on the local network, and wait until "
        "every seat is taken.",
        epilog=checked.EXIT_STATUS,
    )
    p.add_argument("game", type=checked.game, help=f"one of: {', '.join(registry.names())}")
    p.add_argument(
        "--seats", type=checked.positive, default=4, help="number of players (default 4)"
    )
    p.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="K=V",
        help="table option, repeatable (see `slaiga options GAME`)",
    )
    p.add_argument(
        "--spectators",
        type=spectator_count,
        default=DEFAULT_SPECTATORS,
        metavar="N",
        help=f"how many people may watch the game with `slaiga watch` (0 to {MAX_SPECTATORS};"
        f" default {DEFAULT_SPECTATORS}; 0: nobody). They see only public cards and sign"
        " nothing",
    )
    p.add_argument(
        "--no-announce",
        action="store_true",
        help="do not announce the table; players join with --peer HOST:PORT",
    )
    p.add_argument(
        "--open-timeout",
        metavar="SECONDS",
        type=checked.seconds,
        default=OPEN_TIMEOUT_S,
        help=f"close the table if its seats are not all taken within this many seconds"
        f" (default {OPEN_TIMEOUT_S:g})",
    )
    _common(p)
    _seat_options(p)
    p.set_defaults(func=_guarded(run_open))

    p = sub.add_parser(
        "join",
        help="join a table: by its id, by --peer HOST:PORT, or the one in sight",
        description="Join a table on the local network: the one with TABLE-ID, the one at "
        "--peer HOST:PORT, or (with neither) the open table in sight; at a terminal, when "
        "several are open, you pick one from a list.",
        epilog=checked.EXIT_STATUS,
    )
    p.add_argument("table_id", nargs="?", default=None, help="table id from `slaiga lobby`")
    p.add_argument(
        "--peer", default=None, metavar="HOST:PORT", help="connect to this address directly"
    )
    p.add_argument(
        "--timeout",
        type=checked.seconds,
        default=3.0,
        metavar="SECONDS",
        help="seconds to look for tables (default 3)",
    )
    _common(p)
    _seat_options(p)
    p.set_defaults(func=_guarded(run_join))

    p = sub.add_parser(
        "resume",
        help="rejoin a table after a crash, from its record file",
        description="Rejoin table TABLE-ID after this program stopped, from the record file "
        "kept in the state folder.",
        epilog=checked.EXIT_STATUS,
    )
    p.add_argument(
        "table_id",
        nargs="?",
        default=None,
        help="table id (without it: list the tables you can resume)",
    )
    _common(p)
    _seat_options(p)
    p.set_defaults(func=_guarded(run_resume))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="slaiga", description="Slaiga tables on the LAN", epilog=checked.EXIT_STATUS
    )
    add_parsers(parser.add_subparsers(dest="command", metavar="COMMAND", required=True))
    return parser


# ---------------------------------------------------------------------------


def table_options(game: str, seats: int, pairs: list[str]) -> dict[str, Any]:
    """Check the game, seat count and options against the rules; return every option.

    The full set (defaults included) goes into the signed manifest, so every
    peer agrees on each table option before the game starts.
    """
    try:
        spec = registry.get(game)
        given = parse_option_args(pairs)
        spec.game_class(seats, given)  # validates the seat count and each option
        options = manifest_options(
            spec.game_class.OPTIONS, resolve_options(spec.game_class.OPTIONS, given)
        )
    except EngineError as exc:
        raise NodeError(str(exc)) from exc
    return options


def _state_dir(args: argparse.Namespace) -> Path:
    """The state folder, locked for this process (``cli.state``)."""
    return state.hold(state.state_dir(args.state_dir), getattr(args, "wait_state", 0.0))


def _usage_problem(args: argparse.Namespace) -> str | None:
    """Checks of the command line that need more than one value, before any network use."""
    problem = checked.interface_problem(args.interface)
    if problem:
        return problem
    peer = getattr(args, "peer", None)
    if peer is not None:
        host, sep, port_text = peer.rpartition(":")
        if not sep or not host or not port_text.isdigit() or not 1 <= int(port_text) <= 65535:
            return f"--peer {peer!r}: give HOST:PORT with a port from 1 to 65535"
    return None


def _listen_host(interface: str | None) -> str:
    spec = discovery.resolve_interface(interface)
    return spec.addresses[0]


def _config(args: argparse.Namespace, use_discovery: bool, resuming: bool = False) -> NodeConfig:
    state_dir = _state_dir(args)
    ask = args.bot is None and not args.json and sys.stdin.isatty() and sys.stdout.isatty()
    name = state.player_name(state_dir, args.name, ask=ask)
    quiet = args.quiet or args.json

    def on_event(event: NodeEvent) -> None:
        if quiet or isinstance(event, QUIET_EVENTS):
            return
        node = _running.get("node")
        text = player_event_text(event, node)
        if text is None:
            return
        if isinstance(event, SeatStalled | Vanished) and tell_at_table(node, text):
            return  # on its own line of the table screen, not printed over it
        told = SeatRecovered | SeatLeft | SeatBack | SpectatorJoined | SpectatorLeft
        if isinstance(event, told) and tell_at_table(node, text, as_event=True):
            return  # among the events and in the log: "Ann left; a bot now plays their seat"
        _err.print(printable(f"· {text}"), style="dim")

    if getattr(args, "events", False):
        # machine-readable progress: one JSON object per line, flushed at once
        def on_event(event: NodeEvent) -> None:  # noqa: F811
            line = json.dumps(
                {
                    "event": event.KIND,
                    "t": round(time.monotonic(), 3),
                    "cpu": round(time.process_time(), 4),  # this process, every thread
                    **event.data(),
                },
                sort_keys=True,
                default=str,
            )
            sys.stderr.write(line + "\n")
            sys.stderr.flush()

    elif quiet:
        # even with --json, say what is going on during long waits, on stderr
        def on_event(event: NodeEvent) -> None:  # noqa: F811
            if isinstance(event, TOLD_WHEN_QUIET) and not args.quiet:
                _err.print(printable(event.describe()))

    return NodeConfig(
        name=name,
        state_dir=state_dir,
        host=_listen_host(args.interface),
        port=args.port,
        interface=args.interface,
        use_discovery=use_discovery,
        demo_steps=args.demo_steps,
        round_every=args.round_every,
        demo_pace_ms=args.demo_pace_ms,
        stall_after_ms=args.stall_after_ms,
        max_wait_ms=args.max_wait_ms,
        keepalive_interval=args.keepalive,
        keepalive_dead=args.keepalive_dead,
        linger_s=args.linger,
        lobby_scan_s=getattr(args, "timeout", 3.0),
        open_timeout_s=getattr(args, "open_timeout", OPEN_TIMEOUT_S),
        on_event=on_event,
        decide_stall_ms=args.decide_stall_ms,
        decide_max_ms=args.decide_max_ms,
        make_player=player_factory(
            args.bot, think_ms=max(0, args.bot_think_ms), quiet=args.json or args.quiet
        ),
        bot_after_leave=False,  # a person who leaves gets the shell back (see _leave)
        announce_back=resuming and args.bot is None,  # a person is back: everyone hears it
        trace_steps=args.trace_steps,
        offload=not getattr(args, "no_offload", False),
        spectators=getattr(args, "spectators", DEFAULT_SPECTATORS),
    )


def _print_game_result(result: TableResult, as_json: bool) -> None:
    summary = result.game_summary()
    if as_json:
        print(json.dumps(summary, sort_keys=True), flush=True)
        return
    from rich.table import Table

    from cli.render import verify_command

    names = summary["seats"]
    title = f"{summary['game']} at table {summary['table_id']}"
    table = Table(title=title)
    table.add_column("place", justify="right")
    table.add_column("player")
    scores = summary["scores"]
    if scores:
        table.add_column("score", justify="right")
    for place, seat in enumerate(summary["ranking"], 1):
        me = " (you)" if seat == summary["seat"] else ""
        row = [str(place), names[seat] + me]
        if scores:
            row.append(str(scores[seat]))
        table.add_row(*row)
    _out.print(table)
    if summary["culprit"] is not None:
        cheat = summary.get("cheat", {})
        said = cheat.get("said") or f"{names[summary['culprit']]} — {cheat.get('reason', '')}"
        _out.print(printable(f"cheat proven: {said}"), style="red")
    else:
        _out.print(
            f"{summary['entries']} signatures and {summary['proofs']} proofs checked, no cheat"
        )
    left = [p["name"] for p in summary.get("left", [])]
    if left and summary.get("left_abandoned"):
        _out.print(f"{' and '.join(left)} left the table; nobody can act for two, so it ended")
    elif left:
        _out.print(f"{left[0]} left the table; the game went on without them")
    _out.print(f"record: {summary['record']}")
    _out.print(f"check it yourself: {verify_command(summary['record'])}")


def _print_result(result: TableResult, as_json: bool) -> None:
    if isinstance(result.manifest.protocol, GameProtocol):
        _print_game_result(result, as_json)
        return
    summary = result.summary()
    if as_json:
        print(json.dumps(summary, sort_keys=True), flush=True)
        return
    from rich.table import Table

    table = Table(title=f"Table {summary['table_id']} — {summary['game']}")
    table.add_column("seat", justify="right")
    table.add_column("name")
    table.add_column("fingerprint")
    for i, seat in enumerate(summary["seats"]):
        me = " (you)" if seat["slot"] == result.my_seat else ""
        table.add_row(str(i + 1), seat["name"] + me, seat["fingerprint"])
    _out.print(table)
    if "record_steps" in summary:
        _out.print(
            f"record: {summary['record_steps']} steps, the last one's hash {summary['record_head']}"
        )
    for cheat in summary.get("cheats", []):
        _out.print(f"cheat by {cheat['name']}: {cheat['kind']}: {cheat['reason']}", style="red")


def _abandoned(exc: TableAbandoned, as_json: bool) -> int:
    """A table given up for a silent player: who was absent (seat and name), the table
    and our record file, as the full result object with ``--json``."""
    result = exc.result
    if not isinstance(result, TableResult):
        return _fail(str(exc), as_json, EXIT_ABANDONED)
    if isinstance(result.manifest.protocol, GameProtocol):
        summary = result.game_summary()
    else:
        summary = result.summary()
        summary["record"] = str(result.record_file) if result.record_file else None
    summary["error"] = str(exc)
    if as_json:
        print(json.dumps(summary, sort_keys=True), flush=True)
    _err.print(f"error: {exc}", style="red")
    if not as_json and summary.get("record"):
        _out.print(f"record: {summary['record']}")
        _out.print(f"check it yourself: slaiga verify {summary['record']}")
    return EXIT_ABANDONED


def _fail(message: str, as_json: bool, code: int = EXIT_FAILED) -> int:
    if as_json:
        print(json.dumps({"error": message}), flush=True)
    _err.print(f"error: {message}", style="red")
    return code


def resume_hint(node: Node, state_dir: Any, bot: str | None = None) -> str:
    """What Ctrl-C says: the exact command that takes this seat back to its table."""
    from cli.render import slaiga_command

    manifest = node.manifest
    if manifest is None or not isinstance(manifest.protocol, GameProtocol):
        return "Interrupted before the table formed: nothing to resume."
    cmd = f"{slaiga_command()} resume {manifest.table_id.hex()}"
    if state_dir is not None:
        cmd += f" --state-dir {shlex.quote(str(state_dir))}"
    if bot:
        cmd += f" --bot {bot}"
    return f"Interrupted. To go back to this table, run:\n  {cmd}"


HAND_OVER_WAIT_S = 30.0
"""How long the background bot waits for the person's process to let go of the state folder."""


def _leave(node: Node, args: argparse.Namespace) -> int:
    """The person typed quit at a LAN table: they get the shell back at once, and a bot
    takes the seat in the background (``slaiga resume --bot heuristic`` from our record
    file), so that the others can finish the game."""
    import subprocess

    from cli.render import verify_command

    manifest = node.manifest
    if manifest is None or not isinstance(manifest.protocol, GameProtocol) or node.store is None:
        _err.print("You left the table.")
        return EXIT_OK
    table_id = manifest.table_id.hex()
    folder = node.cfg.state_dir
    log = folder / "tables" / f"{table_id}.bot.log"
    cmd = [sys.executable, "-m", "cli.net", "resume", table_id, "--bot", "heuristic"]
    cmd += ["--json", "--state-dir", str(folder), "--wait-state", str(HAND_OVER_WAIT_S)]
    if args.interface:
        cmd += ["--interface", args.interface]
    try:
        with log.open("ab") as out:
            bot = subprocess.Popen(
                cmd,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=out,
                start_new_session=True,  # not stopped by this terminal's Ctrl-C or hang-up
            )
    except OSError as exc:
        _err.print(f"You left the table; no bot could take your seat ({exc}).")
        return EXIT_ABANDONED
    with contextlib.suppress(OSError):  # so that `slaiga resume` can take the seat back
        bot_pid_path(folder, table_id).write_text(f"{bot.pid}\n")
    record = folder / "tables" / f"{table_id}{RECORD_SUFFIX}"
    _err.print(
        "You left; a bot plays your seat to the end (the others were told). Check the game"
        f" later with: {verify_command(str(record))}  (table {table_id}; the bot's log: {log})",
        soft_wrap=True,
    )
    return EXIT_OK


def bot_pid_path(folder: Path, table_id: str) -> Path:
    """Where ``_leave`` notes the process id of the bot that plays our seat."""
    return folder / "tables" / f"{table_id}.bot.pid"


def take_back(folder: Path, table_id: str) -> bool:
    """A person resumes a seat that a bot plays since they left (``_leave``): stop that bot,
    our own process, so that the person plays on from the same record (its entries are
    fsynced before they are sent, so stopping it is as safe as a crash).  Only the process
    noted at the hand-over, and only while it still holds the state folder."""

    note = bot_pid_path(folder, table_id)
    try:
        pid = int(note.read_text().strip())
        holder = (folder / state.LOCK_NAME).read_text().strip()
    except (OSError, ValueError):
        return False
    note.unlink(missing_ok=True)
    if holder != str(pid):
        return False  # that bot is gone; the folder is free or another peer's
    try:
        os.kill(pid, signal.SIGTERM)
    except OSError:
        return False
    return True


def discovery_problem(exc: Exception) -> str:
    """Zeroconf could not start or answer: say so, and the two ways around it."""
    return (
        f"{exc}\n  hint: pick the network with --interface (eth0, or one of this machine's "
        "addresses), or do without the lobby: open with --no-announce and join with "
        "--peer HOST:PORT"
    )


_running: dict[str, Node] = {}
"""The node this command runs (its events are told in player words, on the table screen)."""


def _crash_line(exc: BaseException, node: Node) -> str:
    """One line for a bug of this program (never a peer's fault: every peer input is
    judged before it is used), with the full traceback written to the state folder."""
    import traceback

    crash = node.cfg.state_dir / "crash.log"
    where = ""
    try:
        crash.parent.mkdir(parents=True, exist_ok=True)
        with open(crash, "a", encoding="utf-8") as f:
            f.write(f"--- {time.strftime('%Y-%m-%d %H:%M:%S')}\n")
            f.write("".join(traceback.format_exception(exc)))
        where = f"; details in {crash}"
    except OSError:
        pass
    record = ""
    if node.store is not None:
        record = f"; the record file {node.store.path} is intact"
    return (
        f"this program failed ({type(exc).__name__}: {exc}){record}{where}."
        " Please report it; `slaiga resume` may go on."
    )


LEAVE_ON_CTRL_C_S = 2.0
"""How long Ctrl-C at a game table may take to sign our "left" notice and send it to every
linked seat before this process stops (a second Ctrl-C does not wait)."""


def _mid_game(node: Node) -> bool:
    """A game is running at our table and has not ended (Ctrl-C there is a leave)."""
    session, record = node.session, node.record
    return (
        session is not None
        and record is not None
        and session.is_game()
        and not session.ended()
        and not record.finished
    )


async def _tell_left_on_ctrl_c(node: Node, action, told: dict[str, bool]):  # type: ignore[no-untyped-def]
    """Run ``action``; on Ctrl-C in the middle of a game, first sign our "left" notice
    and send it to every linked seat (fsynced first; bounded by :data:`LEAVE_ON_CTRL_C_S`),
    so that the others read "Bob left" at once rather than wait for a silent seat; then
    stop as Ctrl-C does (``KeyboardInterrupt``).  ``told["left"]``: the notice went out."""
    interrupted = False
    result = None

    async def on_ctrl_c(cancel: trio.CancelScope) -> None:
        nonlocal interrupted
        with trio.open_signal_receiver(signal.SIGINT) as signals:
            async for _ in signals:
                interrupted = True
                break
        if _mid_game(node):
            with trio.move_on_after(LEAVE_ON_CTRL_C_S):
                await node._tell_left()
                told["left"] = True
        cancel.cancel()

    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(on_ctrl_c, nursery.cancel_scope)
            try:
                result = await action()
            finally:
                nursery.cancel_scope.cancel()
    except BaseExceptionGroup as group:
        leaves = _leaves(group)
        if len(leaves) == 1:
            raise leaves[0] from None
        raise
    if interrupted:
        raise KeyboardInterrupt
    return result


def _leaves(group: BaseExceptionGroup) -> list[BaseException]:
    out: list[BaseException] = []
    for exc in group.exceptions:
        out.extend(_leaves(exc) if isinstance(exc, BaseExceptionGroup) else [exc])
    return out


def _run_node(args: argparse.Namespace, node: Node, action) -> int:  # type: ignore[no-untyped-def]
    _running["node"] = node
    result = None
    watch = LoopWatch() if getattr(args, "loop_watch", False) else None
    told: dict[str, bool] = {}
    if getattr(args, "bot", None) is None:  # a person's seat: Ctrl-C tells the others first
        inner = action

        async def action():  # type: ignore[no-untyped-def]
            return await _tell_left_on_ctrl_c(node, inner, told)

    try:
        result = trio.run(action) if watch is None else trio.run(watched, action, watch)
    except KeyboardInterrupt:
        close_player(node.player, None)
        if told.get("left"):
            _leave(node, args)  # the notice says a bot plays our seat: one does, to the end
        _err.print(resume_hint(node, args.state_dir, getattr(args, "bot", None)))
        return checked.EXIT_INTERRUPTED
    except LeftTable:  # our person left (cli.human's PlayerQuit: typed quit, closed the input)
        close_player(node.player, None)
        return _leave(node, args)
    except TableAbandoned as exc:
        close_player(node.player, None)
        return _abandoned(exc, args.json)
    except DiscoveryError as exc:
        close_player(node.player, None)
        return _fail(discovery_problem(exc), args.json)
    except (P2PError, ValueError) as exc:
        close_player(node.player, None)
        return _fail(str(exc), args.json)
    except trio.TooSlowError:
        close_player(node.player, None)
        return _fail("timed out while forming the table", args.json)
    except Exception as exc:  # noqa: BLE001 - a bug of ours: one line, the details in a file
        close_player(node.player, None)
        return _fail(_crash_line(exc, node), args.json)
    finally:
        if watch is not None:
            line = {"event": "loop_watch", "t": round(time.monotonic(), 3)}
            line["interval_ms"] = watch.interval_s * 1000
            sys.stderr.write(json.dumps({**line, "samples": watch.samples}) + "\n")
            sys.stderr.flush()
    if isinstance(result.manifest.protocol, GameProtocol):
        close_player(node.player, result.game_summary())  # it may print the result itself
    if args.json or not getattr(node.player, "told_result", False):
        _print_result(result, args.json)
    if result.aborted is not None or result.convicted is not None:
        return EXIT_CHEATER
    return EXIT_OK if not result.divergent else EXIT_FAILED


def _scan(args: argparse.Namespace) -> list[discovery.TableAd]:
    """The tables announced on ``--interface`` within ``--timeout`` seconds."""

    async def scan() -> list[discovery.TableAd]:
        async with discovery.open_lobby(args.interface) as lobby:
            if not args.json:
                _err.print(f"· looking for tables for {args.timeout:g}s…", style="dim")
            return await lobby.scan(args.timeout)

    return trio.run(scan)


def run_lobby(args: argparse.Namespace) -> int:
    try:
        tables = _scan(args)
    except DiscoveryError as exc:
        return _fail(discovery_problem(exc), args.json)
    if args.json:
        print(json.dumps([t.to_json() for t in tables], sort_keys=True), flush=True)
        return EXIT_OK
    if not tables:
        _out.print("no tables in sight")
        return EXIT_OK
    from rich.table import Table

    table = Table(title="Tables on the LAN")
    for col in ("table id", "game", "seats", "watch", "opened by", "address"):
        table.add_column(col)
    for t in tables:
        addr = f"{t.addresses[0]}:{t.port}" if t.addresses else "?"
        watch = str(t.spectators) if t.spectators else "no"
        seats = f"{t.seats_taken}/{t.seats_total}" + (" playing" if t.is_full else "")
        table.add_row(t.table_id, t.game, seats, watch, t.name, addr)
    _out.print(table)
    return EXIT_OK


def run_open(args: argparse.Namespace) -> int:
    try:
        options = table_options(args.game, args.seats, args.option)
    except NodeError as exc:  # a bad game, seat count or option: the command line's fault
        return _fail(str(exc), args.json, EXIT_USAGE)
    try:
        cfg = _config(args, use_discovery=not args.no_announce)
    except DiscoveryError as exc:
        return _fail(discovery_problem(exc), args.json)
    except NodeError as exc:
        return _fail(str(exc), args.json)
    node = Node(cfg)
    return _run_node(args, node, lambda: node.open(args.game, args.seats, options))


def _pick_table(args: argparse.Namespace) -> str | None:
    """At a terminal, with no TABLE-ID or --peer: list the open tables in sight and let the
    person pick one when there are several.  With one, that one (the node then finds it
    without a second full scan); with none, ``None`` (the node looks once more, and says
    so if there is still none)."""
    tables = [t for t in _scan(args) if not t.is_full]
    if len(tables) < 2:
        return tables[0].table_id if tables else None
    _err.print(f"{len(tables)} open tables in sight:")
    for i, t in enumerate(tables, 1):
        _err.print(
            f"  {i}  {t.game:<17} {t.seats_taken}/{t.seats_total} seats"
            f"  opened by {t.name}  (table {t.table_id})"
        )
    for _ in range(5):
        answer = input(f"Which table? [1-{len(tables)}, Enter to stop] ").strip()
        if not answer:
            raise NodeError("no table chosen")
        if answer.isdigit() and 1 <= int(answer) <= len(tables):
            return tables[int(answer) - 1].table_id
        _err.print(f"  type a number from 1 to {len(tables)}")
    raise NodeError("no table chosen")


def run_join(args: argparse.Namespace) -> int:
    if args.table_id and args.peer:
        return _fail("give a TABLE-ID or --peer, not both", args.json)
    if not args.table_id and not args.peer and not args.json and sys.stdin.isatty():
        try:
            args.table_id = _pick_table(args)
        except DiscoveryError as exc:
            return _fail(discovery_problem(exc), args.json)
        except NodeError as exc:
            return _fail(str(exc), args.json)
        except EOFError:
            return _fail("no table chosen", args.json)
    try:
        cfg = _config(args, use_discovery=args.peer is None)
    except DiscoveryError as exc:
        return _fail(discovery_problem(exc), args.json)
    node = Node(cfg)
    return _run_node(args, node, lambda: node.join(args.table_id, args.peer))


def run_resume(args: argparse.Namespace) -> int:
    from cli import resumable

    folder = state.state_dir(args.state_dir)
    if args.table_id is None:
        return resumable.list_tables(folder, args, _out, as_json=args.json)
    found = resumable.find(folder, args.table_id)
    if isinstance(found, str):
        return _fail(found, args.json)
    if found.against_bots:
        problem = resumable.restart_bots(found, folder)
        if problem:
            return _fail(problem, args.json)
    args.table_id = found.table_id
    if args.bot is None and take_back(folder, found.table_id):
        args.wait_state = max(args.wait_state, HAND_OVER_WAIT_S)  # until the bot has stopped
        if not args.json:
            _err.print("A bot played your seat since you left; you take it back now.")
    try:
        cfg = _config(args, use_discovery=False, resuming=True)
    except DiscoveryError as exc:
        return _fail(discovery_problem(exc), args.json)
    node = Node(cfg)
    code = None
    try:
        code = _run_node(args, node, lambda: node.resume(args.table_id))
        return code
    finally:
        # after a game the bots finish their records; else nobody is left to play with
        resumable.reap_bots(resumable.BOT_PEER_WAIT_S if code == EXIT_OK else 0.0)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args))


def _guarded(run):  # type: ignore[no-untyped-def]
    """Arm loopback-only mode first when ``$SLAIGA_LOOPBACK_ONLY`` is set (tests set it)."""

    def wrapper(args: argparse.Namespace) -> int:
        netguard.arm_from_environment()
        problem = _usage_problem(args)
        if problem:
            return _fail(problem, args.json, EXIT_USAGE)
        try:
            return int(run(args))
        except state.StateInUse as exc:
            return _fail(str(exc), args.json)

    wrapper.__doc__ = run.__doc__
    return wrapper


if __name__ == "__main__":
    sys.exit(main())
