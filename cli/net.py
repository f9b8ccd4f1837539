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
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import trio
from rich.console import Console
from rich.table import Table

from cli.netplay import BOT_KINDS, player_factory
from engine import registry
from engine.errors import EngineError
from engine.options import parse_option_args, resolve_options
from p2p import discovery, netguard
from p2p.demo import DEFAULT_ROUND_EVERY
from p2p.errors import ProtocolError, TableAbandoned
from p2p.forming import DEFAULT_MAX_WAIT_MS, DEFAULT_STALL_AFTER_MS
from p2p.game_rule import DEFAULT_DECIDE_MAX_MS, DEFAULT_DECIDE_STALL_MS, GameProtocol
from p2p.node import OPEN_TIMEOUT_S, Node, NodeConfig, NodeError, TableResult

ENV_HOME = "SLAIGA_HOME"
DEFAULT_HOME = Path.home() / ".slaiga"
EXIT_OK = 0
EXIT_FAILED = 1
EXIT_ABANDONED = 3
EXIT_CHEATER = 4
"""The table ended early because a seat was proven to cheat (our record file holds the
signed evidence)."""
QUIET_EVENTS = frozenset({"peer_up", "peer_down", "welcome"})

_err = Console(stderr=True)
_out = Console()


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--interface",
        default=None,
        help=f"interface name or IPv4 address for the lobby and connections "
        f"(default ${discovery.ENV_INTERFACE} or all interfaces)",
    )
    p.add_argument("--json", action="store_true", help="print machine-readable JSON")


def _seat_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--name", default=None, help="your display name")
    p.add_argument("--port", type=int, default=0, help="TCP port to listen on (default: any)")
    p.add_argument(
        "--state-dir",
        type=Path,
        default=None,
        help=f"where identity keys and record files live (default ${ENV_HOME} or ~/.slaiga)",
    )
    p.add_argument(
        "--demo-steps",
        type=int,
        default=0,
        help="run the demonstration protocol for N steps after forming (the opener's"
        " choice is signed into the manifest; joiners and resumers follow the manifest)",
    )
    p.add_argument("--round-every", type=int, default=DEFAULT_ROUND_EVERY, help=argparse.SUPPRESS)
    p.add_argument(
        "--demo-pace-ms",
        type=int,
        default=0,
        help="wait this long between your own demo entries (mimics think time)",
    )
    p.add_argument(
        "--stall-after-ms",
        type=int,
        default=DEFAULT_STALL_AFTER_MS,
        help="silence before a seat counts as stalled",
    )
    p.add_argument(
        "--max-wait-ms",
        type=int,
        default=DEFAULT_MAX_WAIT_MS,
        help="silence before the table is abandoned",
    )
    p.add_argument(
        "--bot",
        choices=BOT_KINDS,
        default=None,
        help="let a bot play your seat (default: you play it at this terminal)",
    )
    p.add_argument(
        "--bot-think-ms",
        type=int,
        default=0,
        help="with --bot: pause this long before each decision, like a person",
    )
    p.add_argument(
        "--decide-stall-ms",
        type=int,
        default=DEFAULT_DECIDE_STALL_MS,
        help="how long a player may think before the table says it is waiting for them",
    )
    p.add_argument(
        "--decide-max-ms",
        type=int,
        default=DEFAULT_DECIDE_MAX_MS,
        help="how long a player may think before the table is abandoned",
    )
    p.add_argument("--trace-steps", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--keepalive", type=float, default=1.0, help=argparse.SUPPRESS)
    p.add_argument("--keepalive-dead", type=float, default=5.0, help=argparse.SUPPRESS)
    p.add_argument("--linger", type=float, default=10.0, help=argparse.SUPPRESS)
    p.add_argument("--quiet", action="store_true", help="no progress messages")
    p.add_argument(
        "--events",
        action="store_true",
        help="print every progress event as one JSON object per line on stderr"
        " (for scripts and tests: stalls, recoveries, cheats, finish)",
    )


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """Register ``lobby``, ``open``, ``join`` and ``resume`` on a subparsers object."""
    p = sub.add_parser("lobby", help="list the tables announced on the LAN")
    _common(p)
    p.add_argument("--timeout", type=float, default=3.0, help="seconds to listen (default 3)")
    p.set_defaults(func=_guarded(run_lobby))

    p = sub.add_parser("open", help="open a table on the LAN and wait for players")
    p.add_argument("game", help=f"one of: {', '.join(registry.names())}")
    p.add_argument("--seats", type=int, default=4, help="number of seats (default 4)")
    p.add_argument(
        "--option", action="append", default=[], metavar="K=V", help="table option (repeatable)"
    )
    p.add_argument(
        "--no-announce", action="store_true", help="do not announce over zeroconf (--peer only)"
    )
    p.add_argument(
        "--open-timeout",
        type=float,
        default=OPEN_TIMEOUT_S,
        help=f"close the table if its seats are not all taken within this many seconds"
        f" (default {OPEN_TIMEOUT_S:g})",
    )
    _common(p)
    _seat_options(p)
    p.set_defaults(func=_guarded(run_open))

    p = sub.add_parser("join", help="join a table by id, by --peer host:port, or the only one")
    p.add_argument("table_id", nargs="?", default=None, help="table id from `slaiga lobby`")
    p.add_argument("--peer", default=None, metavar="HOST:PORT", help="connect directly")
    p.add_argument("--timeout", type=float, default=3.0, help="seconds to look for tables")
    _common(p)
    _seat_options(p)
    p.set_defaults(func=_guarded(run_join))

    p = sub.add_parser("resume", help="rejoin a table after a crash, from the record file")
    p.add_argument("table_id", help="table id")
    _common(p)
    _seat_options(p)
    p.set_defaults(func=_guarded(run_resume))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="slaiga", description="Slaiga tables on the LAN")
    add_parsers(parser.add_subparsers(dest="command", metavar="COMMAND", required=True))
    return parser


# ---------------------------------------------------------------------------


def table_options(game: str, seats: int, pairs: list[str]) -> dict[str, Any]:
    """Check the game, seat count and options against the rules; return every option.

    The full set (defaults included) goes into the signed manifest, so every
    peer agrees on each table option before the game starts (RULES.md §5).
    """
    try:
        spec = registry.get(game)
        given = parse_option_args(pairs)
        spec.game_class(seats, given)  # validates the seat count and each option
        return resolve_options(spec.game_class.OPTIONS, given)
    except EngineError as exc:
        raise NodeError(str(exc)) from exc


def _listen_host(interface: str | None) -> str:
    spec = discovery.resolve_interface(interface)
    return spec.addresses[0]


def _config(args: argparse.Namespace, use_discovery: bool) -> NodeConfig:
    state_dir = args.state_dir or Path(os.environ.get(ENV_HOME) or DEFAULT_HOME)
    name = args.name or os.environ.get("USER") or "player"
    quiet = args.quiet or args.json

    def on_event(kind: str, data: dict[str, Any]) -> None:
        if not quiet and kind not in QUIET_EVENTS:
            _err.print(f"[dim]·[/dim] {_describe(kind, data)}")

    if getattr(args, "events", False):
        # machine-readable progress: one JSON object per line, flushed at once
        def on_event(kind: str, data: dict[str, Any]) -> None:  # noqa: F811
            line = json.dumps(
                {"event": kind, "t": round(time.monotonic(), 3), **data},
                sort_keys=True,
                default=str,
            )
            sys.stderr.write(line + "\n")
            sys.stderr.flush()

    elif quiet:
        # even with --json, say what is going on during long waits, on stderr
        def on_event(kind: str, data: dict[str, Any]) -> None:  # noqa: F811
            if kind in ("stalled", "cheat", "abandoned") and not args.quiet:
                _err.print(f"{_describe(kind, data)}")

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
        make_player=player_factory(args.bot, think_ms=max(0, args.bot_think_ms)),
        trace_steps=args.trace_steps,
    )


def _describe(kind: str, data: dict[str, Any]) -> str:
    texts = {
        "listening": "listening on {address}, table {table_id}",
        "announced": "announced on the LAN as {service!r}",
        "joined": "{name} ({fingerprint}) joined",
        "withdrawn": "all seats taken; announcement withdrawn",
        "forming": "every seat signs the manifest ({seats} seats)",
        "searching": "looking for tables on the LAN…",
        "connecting": "connecting to {address}",
        "waiting": "seated at table {table_id}; waiting for the other players",
        "formed": "table {table_id} formed; we are slot {slot}; connecting to every seat",
        "meshed": "connected to {connected} of {of} seats; drawing the seat order",
        "finished": "record complete: {steps} steps, head {head}",
        "stalled": "seat {seat} owes step {step} and has been silent {silent_for:.1f}s",
        "recovered": "seat {seat} is back",
        "cheat": "CHEAT by seat {culprit}: {kind}: {reason}",
        "abandoned": "table abandoned: seat {seat} silent for {waited:.1f}s",
        "resuming": "resuming from the record file ({entries} entries, {torn_bytes} torn bytes dropped)",
        "divergent": "seat {slot} finished with a different record head",
        "fork": "seat {seat}'s entry chains to a step we do not know; fetching records to see why",
        "aborted": "table ended: seat {seat} is proven to have cheated ({reason})",
        "linger_timeout": "{missing} seat(s) did not confirm the end in time",
        "convicted": "CHEAT PROVEN: seat {culprit} ({kind}): {reason}",
        "dispute": "table ended by a dispute nobody can settle: {reason}",
        "ended": "the game is over early",
    }
    template = texts.get(kind)
    if template is None:
        return f"{kind} {data}"
    try:
        return template.format(**data)
    except (KeyError, ValueError):
        return f"{kind} {data}"


def _print_game_result(result: TableResult, as_json: bool) -> None:
    summary = result.game_summary()
    if as_json:
        print(json.dumps(summary, sort_keys=True), flush=True)
        return
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
        _out.print(
            f"[red]cheat proven: {names[summary['culprit']]} — {cheat.get('reason', '')}[/red]"
        )
    elif summary.get("dispute"):
        _out.print(f"[yellow]ended by a dispute: {summary['dispute']}[/yellow]")
    else:
        _out.print(f"{summary['entries']} entries and {summary['proofs']} proofs checked, no cheat")
    _out.print(f"record: {summary['record']}")
    _out.print(f"check it yourself: slaiga verify {summary['record']}")


def _print_result(result: TableResult, as_json: bool) -> None:
    if isinstance(result.manifest.protocol, GameProtocol):
        _print_game_result(result, as_json)
        return
    summary = result.summary()
    if as_json:
        print(json.dumps(summary, sort_keys=True), flush=True)
        return
    table = Table(title=f"Table {summary['table_id']} — {summary['game']}")
    table.add_column("seat", justify="right")
    table.add_column("name")
    table.add_column("fingerprint")
    for i, seat in enumerate(summary["seats"]):
        me = " (you)" if seat["slot"] == result.my_seat else ""
        table.add_row(str(i + 1), seat["name"] + me, seat["fingerprint"])
    _out.print(table)
    if "record_steps" in summary:
        _out.print(f"record: {summary['record_steps']} steps, head {summary['record_head']}")
    for cheat in summary.get("cheats", []):
        _out.print(f"[red]cheat by slot {cheat['culprit']}: {cheat['kind']}: {cheat['reason']}")


def _fail(message: str, as_json: bool, code: int = EXIT_FAILED) -> int:
    if as_json:
        print(json.dumps({"error": message}), flush=True)
    _err.print(f"[red]error:[/red] {message}")
    return code


def _run_node(args: argparse.Namespace, action) -> int:  # type: ignore[no-untyped-def]
    try:
        result = trio.run(action)
    except TableAbandoned as exc:
        return _fail(str(exc), args.json, EXIT_ABANDONED)
    except (NodeError, discovery.DiscoveryError, ProtocolError, ValueError) as exc:
        return _fail(str(exc), args.json)
    except trio.TooSlowError:
        return _fail("timed out while forming the table", args.json)
    _print_result(result, args.json)
    if result.aborted is not None or result.convicted is not None:
        return EXIT_CHEATER
    return EXIT_OK if not result.divergent else EXIT_FAILED


def run_lobby(args: argparse.Namespace) -> int:
    async def scan() -> list[discovery.TableAd]:
        async with discovery.open_lobby(args.interface) as lobby:
            if not args.json:
                _err.print(f"[dim]·[/dim] listening for tables for {args.timeout:g}s…")
            return await lobby.scan(args.timeout)

    try:
        tables = trio.run(scan)
    except discovery.DiscoveryError as exc:
        return _fail(str(exc), args.json)
    if args.json:
        print(json.dumps([t.to_json() for t in tables], sort_keys=True), flush=True)
        return EXIT_OK
    if not tables:
        _out.print("no tables in sight")
        return EXIT_OK
    table = Table(title="Tables on the LAN")
    for col in ("table id", "game", "seats", "opened by", "address"):
        table.add_column(col)
    for t in tables:
        addr = f"{t.addresses[0]}:{t.port}" if t.addresses else "?"
        table.add_row(t.table_id, t.game, f"{t.seats_taken}/{t.seats_total}", t.name, addr)
    _out.print(table)
    return EXIT_OK


def run_open(args: argparse.Namespace) -> int:
    try:
        options = table_options(args.game, args.seats, args.option)
        cfg = _config(args, use_discovery=not args.no_announce)
    except (NodeError, discovery.DiscoveryError) as exc:
        return _fail(str(exc), args.json)
    node = Node(cfg)
    return _run_node(args, lambda: node.open(args.game, args.seats, options))


def run_join(args: argparse.Namespace) -> int:
    if args.table_id and args.peer:
        return _fail("give a TABLE-ID or --peer, not both", args.json)
    try:
        cfg = _config(args, use_discovery=args.peer is None)
    except discovery.DiscoveryError as exc:
        return _fail(str(exc), args.json)
    node = Node(cfg)
    return _run_node(args, lambda: node.join(args.table_id, args.peer))


def run_resume(args: argparse.Namespace) -> int:
    try:
        cfg = _config(args, use_discovery=False)
    except discovery.DiscoveryError as exc:
        return _fail(str(exc), args.json)
    node = Node(cfg)
    return _run_node(args, lambda: node.resume(args.table_id))


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args))


def _guarded(run):  # type: ignore[no-untyped-def]
    """Arm loopback-only mode first when ``$SLAIGA_LOOPBACK_ONLY`` is set (tests set it)."""

    def wrapper(args: argparse.Namespace) -> int:
        netguard.arm_from_environment()
        return int(run(args))

    wrapper.__doc__ = run.__doc__
    return wrapper


if __name__ == "__main__":
    sys.exit(main())
