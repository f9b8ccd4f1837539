"""``slaiga watch [TABLE-ID | --peer HOST:PORT]``: follow a table live with no seat.

The watch itself is :mod:`p2p.net.watcher` (find the table, link to its seats, fetch
the record so far, then follow), checked through a spectator
(:class:`p2p.table.spectator.Spectator`): every signature and proof as a seat checks
it.  This module shows it: on the table screen from the public view (the very screen
``slaiga replay`` draws: who is to move, every public card, every event, and a running
"N signatures and N proofs checked, no cheat"), or without a terminal (``--plain``) as one
line per step.  ``--json`` prints the end (ranking, state hash, record head) as one JSON
object.  Exit status: 0 the game ended and checks out; 4 a player is proven to have
cheated (named the moment it is proven); 1 the table could not be found, refused us, or
was lost; 2 usage errors.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import json
import os
import shutil
import sys
import textwrap
import time
from typing import Any

import trio
from rich.text import Text

from cli import args as checked
from cli.narrate import Names, narrate
from cli.netplay import player_event_text
from cli.render import PromptView, TableView, plain, render_screen, result_lines
from cli.replay import KIND_WORDS, SEAT_VIEW_KEYS
from engine.words.names import printable
from p2p.errors import DiscoveryError, NodeError, P2PError
from p2p.net import discovery, netguard
from p2p.net.mesh import unwrap_single_error
from p2p.net.watcher import (
    DEFAULT_LINKS,
    QUIET_S,
    WatchConfig,
    WatchError,
    WatchResult,
    verdict_line,
    watch,
)
from p2p.table.events import SeatBack, SeatLeft
from p2p.table.game_rule import ACTION_KIND
from p2p.table.spectator import Spectator, Update

EXIT_OK = checked.EXIT_OK
EXIT_FAILED = checked.EXIT_FAILED
EXIT_USAGE = checked.EXIT_USAGE
EXIT_CHEAT = 4
REDRAW_S = 0.1
"""The screen is redrawn at most this often while entries pour in (and at every move)."""
HINT = "watching: public cards only · q quit"
SEAT_DRAW_WORDS = {"commit": "seat draw commitments", "reveal": "seat draw openings"}
"""Steps 1 and 2 of every table draw the seat order (RECORD_FORMAT.md §5)."""


class Show:
    """What the watcher shows, drawn from the spectator after every envelope."""

    def __init__(self, out: Any, mode: str, term: Any = None) -> None:
        self.out = out
        self.mode = mode  # "plain", "screen" or "json" (nothing until the end)
        self.term = term
        self.events: list[str] = []
        self.names: Names | None = None
        self.told = 0
        self.drawn_at = 0.0
        self.seated = False
        self.trace: list[tuple[int, float]] = []
        self.notes: list[str] = []
        """What the watch did so far (shown on the screen until the table is)."""
        self.spectator: Spectator | None = None
        self.table_shown = False

    def note(self, text: str) -> None:
        """What the watch is doing (looking for the table, connecting, waiting for it to
        start, a link lost): a line of its own, or on the screen at once."""
        if self.mode == "plain":
            print(f"· {text}", file=self.out, flush=True)
        elif self.mode == "json":
            print(f"· {text}", file=sys.stderr, flush=True)
        else:
            self.notes.append(text)
            if self.table_shown:
                self.events.append(text)  # among the game's events, once the table is up
            self.draw(self.spectator)

    def seat(self, s: Spectator, event: SeatLeft | SeatBack) -> None:
        """A player left (a bot plays the seat now) or is back: told in the words the players
        see, among the events on the screen, on its own line otherwise."""
        text = player_event_text(event, None)
        if text is None:
            return
        if self.mode == "screen":
            self.events.append(text)
            self.draw(s)
        else:
            self.note(text)

    def _names(self, s: Spectator) -> Names | None:
        if self.names is None and s.seat_order is not None:
            self.names = Names([s.manifest.seats[slot].name for slot in s.seat_order], 0)
            self.names.me = -1  # nobody's "you": a spectator holds no seat
        return self.names

    def update(self, s: Spectator, u: Update) -> None:
        self.spectator = s
        names = self._names(s)
        if names is not None:
            self.events.extend(narrate(e, names) for e in u.events)
        if self.mode == "plain":
            self._plain(s, u)
        elif self.mode == "screen":
            moved = any(_kinds(s, step).get(ACTION_KIND) for step in u.completed)
            if u.verdict is not None or moved or time.monotonic() - self.drawn_at > REDRAW_S:
                self.draw(s)

    def _plain(self, s: Spectator, u: Update) -> None:
        out = self.out
        names = self._names(s)
        if names is not None and not self.seated:
            self.seated = True
            order = ", ".join(f"{i}. {n}" for i, n in enumerate(names.names, 1))
            print(f"seats in the drawn order: {order}", file=out)
        for step in u.completed:
            words = SEAT_DRAW_WORDS if step <= 2 else KIND_WORDS
            what = "; ".join(
                f"{words.get(kind, kind)} from {', '.join(who)}"
                for kind, who in _kinds(s, step).items()
            )
            print(f"step {step}: {what}", file=out)
            for e in self.events[self.told :]:
                print(f"  · {e}", file=out)
            self.told = len(self.events)
            if ACTION_KIND in _kinds(s, step) or s.finished:
                print(f"  {s.status_line()}", file=out)
        if u.verdict is not None:
            order = s.seat_order or ()
            print(verdict_line(u.verdict, s.manifest, order), file=out)
        out.flush()

    def draw(self, s: Spectator | None) -> None:
        if self.term is None:
            return
        self.drawn_at = time.monotonic()
        width, height = self.term.size()
        game = s.game if s is not None else None
        names = self._names(s) if s is not None else None
        if s is None or game is None or game.joint is None or names is None:
            self.term.draw(self._preface(s, width, height))
            return
        self.table_shown = True
        view = copy.deepcopy(game.engine.view(0))
        view.update({k: v for k, v in SEAT_VIEW_KEYS.items() if k in view})
        if "seat" in view:
            view["seat"] = -1
        to_move = () if game.done else tuple(game.engine.to_move())
        t = TableView(s.manifest.game, view, names, to_move, self.events, over=game.done)
        verdict = ""
        if s.verdict is not None:
            verdict = verdict_line(s.verdict, s.manifest, s.seat_order or ())
        title = f"step {s.step - 1} · {s.status_line()}"
        prompt = PromptView(title, (), 0, None, "", verdict, None, HINT)
        out = render_screen(t, prompt, width, height)
        head = out[0].plain.split(" · you are ")[0]
        out[0] = Text(f"{head} · watching, public view"[:width], style="bold")
        self.term.draw(out)

    def _preface(self, s: Spectator | None, width: int, height: int) -> list[Text]:
        """The screen until the table is: what the watch did so far, and what the table
        is doing (drawing the seat order, exchanging keys), with the running count."""
        lines = [Text("Slaiga watch · public view"[:width], style="bold"), Text("")]
        for note in self.notes:
            lines += [Text(x) for x in fit(f"· {note}", width, indent="  ")]
        if s is not None:
            if s.seat_order is None:
                doing = "the players are drawing the seat order"
            else:
                doing = "the players are exchanging keys; the deal follows"
            lines.append(Text(""))
            lines += [Text(x) for x in fit(f"step {s.step}: {doing}", width)]
            lines += [Text(x, style="dim") for x in fit(s.status_line(), width)]
        lines = lines[: height - 1]
        return lines + [Text("")] * (height - 1 - len(lines)) + [Text(HINT[:width], style="dim")]


def fit(text: str, width: int, indent: str = "") -> list[str]:
    """``text`` wrapped on words to ``width`` columns (a word longer than the width, such as
    a hash, stays whole on a line of its own)."""
    return textwrap.wrap(
        text,
        max(width, 20),
        subsequent_indent=indent,
        break_long_words=False,
        break_on_hyphens=False,
    ) or [""]


def _kinds(s: Spectator, step: int) -> dict[str, list[str]]:
    steps = s.record.steps
    entries = steps[step] if 0 < step < len(steps) else {}
    order = s.seat_order or ()
    kinds: dict[str, list[str]] = {}
    for slot in sorted(entries, key=lambda x: order.index(x) if x in order else x):
        kinds.setdefault(entries[slot].entry.kind, []).append(s.manifest.seats[slot].name)
    return kinds


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register ``watch`` on a subparsers object."""
    p = sub.add_parser(
        "watch",
        help="watch a table on the LAN live, checking every proof (you hold no seat)",
        description="Follow a table live from the public view: find it on the local network "
        "(by TABLE-ID, or the one watchable table in sight) or at --peer HOST:PORT, fetch the "
        "record so far, check every signature and proof as a seat does, then follow each "
        "move as it is made. Only cards the rules make public are shown; you sign nothing. "
        "Exit 0: the game ended and checks out; 4: a player is proven to have cheated; 1: "
        "the table was not found, refused you, or was lost; 2: a usage error.",
        epilog=checked.EXIT_STATUS,
    )
    p.add_argument("table_id", nargs="?", default=None, help="table id from `slaiga lobby`")
    p.add_argument("--peer", default=None, metavar="HOST:PORT", help="watch through this seat")
    p.add_argument(
        "--name",
        type=checked.player_name,
        default="a spectator",
        help="the name the players see (default: a spectator)",
    )
    p.add_argument(
        "--links",
        type=checked.positive,
        default=DEFAULT_LINKS,
        metavar="N",
        help=f"how many players to follow the table through (default {DEFAULT_LINKS})",
    )
    p.add_argument(
        "--timeout",
        type=checked.seconds,
        default=3.0,
        metavar="SECONDS",
        help="seconds to look for tables (default 3)",
    )
    p.add_argument(
        "--interface",
        default=None,
        help=f"network interface to use: a name (eth0), one of this machine's IPv4 "
        f"addresses, or all (default ${discovery.ENV_INTERFACE}, else all)",
    )
    p.add_argument(
        "--plain",
        action="store_true",
        help="print every step as plain lines instead of the screen (the default when the "
        "output is not a terminal)",
    )
    p.add_argument(
        "--json", action="store_true", help="print the end as one JSON object, nothing else"
    )
    p.add_argument(
        "--priority",
        choices=("low", "normal"),
        default="normal",
        help="CPU priority of the watch (default normal; low: on a machine where a player "
        "also plays, checking the table's proofs for you takes only the CPU their game "
        "leaves, and on a busy machine the watch may fall behind)",
    )
    p.add_argument("--quiet-after", type=checked.seconds, default=QUIET_S, help=argparse.SUPPRESS)
    p.add_argument("--keepalive", type=float, default=1.0, help=argparse.SUPPRESS)
    p.add_argument("--keepalive-dead", type=float, default=5.0, help=argparse.SUPPRESS)
    # slaiga bench table: one "watch_trace" JSON line on stderr at the end, (step, time)
    p.add_argument("--trace", action="store_true", help=argparse.SUPPRESS)
    p.set_defaults(func=run_watch)


WATCH_NICENESS = 10
"""How much ``slaiga watch --priority low`` lowers its CPU priority."""


def lower_priority() -> None:
    """Lower this process's CPU priority by :data:`WATCH_NICENESS`, before any thread is
    started, so that the worker threads that check proofs inherit it: a spectator's checks
    (every proof of every seat) then take only the CPU the players' processes leave.  On
    a LAN, where each has a machine of its own, it changes nothing.  A system that does
    not allow it leaves the priority as it is."""
    with contextlib.suppress(OSError, AttributeError):
        os.nice(WATCH_NICENESS)


def _usage_problem(args: argparse.Namespace) -> str | None:
    if args.table_id and args.peer:
        return "give a TABLE-ID or --peer, not both"
    problem = checked.interface_problem(args.interface)
    if problem:
        return problem
    if args.peer is not None:
        host, sep, port_text = args.peer.rpartition(":")
        if not sep or not host or not port_text.isdigit() or not 1 <= int(port_text) <= 65535:
            return f"--peer {args.peer!r}: give HOST:PORT with a port from 1 to 65535"
    return None


def run_watch(args: argparse.Namespace) -> int:
    problem = _usage_problem(args)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return EXIT_USAGE
    netguard.arm_from_environment()
    if args.priority == "low":
        lower_priority()
    screen = not (args.plain or args.json) and sys.stdin.isatty() and sys.stdout.isatty()
    mode = "json" if args.json else "screen" if screen else "plain"
    term = None
    if screen:
        from cli.screen import Terminal

        term = Terminal()
    show = Show(sys.stdout, mode, term)

    def trace(step: int, at: float) -> None:
        show.trace.append((step, at))

    cfg = WatchConfig(
        name=args.name,
        interface=args.interface,
        table_id=args.table_id,
        peer=args.peer,
        scan_s=args.timeout,
        links=args.links,
        quiet_s=args.quiet_after,
        keepalive_interval=args.keepalive,
        keepalive_dead=args.keepalive_dead,
        on_update=show.update,
        on_note=show.note,
        on_seat=show.seat,
        trace=trace if args.trace else None,
    )
    result: WatchResult | None = None
    try:
        if term is not None:
            term.start()
            show.draw(None)  # at once: the screen says what the watch does from the start
        try:
            result = trio.run(_watch_until_quit, cfg, term)
        finally:
            if term is not None:
                term.stop()
    except (WatchError, DiscoveryError, NodeError) as exc:
        return _fail(str(exc), args.json)
    except P2PError as exc:
        return _fail(f"the watch failed: {exc}", args.json)
    except KeyboardInterrupt:
        return checked.EXIT_INTERRUPTED
    if args.trace:
        line = {"watch_trace": [[step, round(at, 6)] for step, at in show.trace]}
        print(json.dumps(line), file=sys.stderr, flush=True)
    if result is None:
        return EXIT_OK  # the person quit
    return _print_end(result, show, args.json)


async def _watch_until_quit(cfg: WatchConfig, term: Any) -> WatchResult | None:
    """The watch, and (at a terminal) q to stop it."""
    result: WatchResult | None = None
    with unwrap_single_error():
        async with trio.open_nursery() as nursery:

            async def keys() -> None:
                while True:
                    key = await trio.to_thread.run_sync(term.read_key, 0.25, abandon_on_cancel=True)
                    if key in ("q", "Q", "esc", "eof"):
                        nursery.cancel_scope.cancel()
                        return

            if term is not None:
                nursery.start_soon(keys)
            result = await watch(cfg)
            nursery.cancel_scope.cancel()
    return result


def _fail(message: str, as_json: bool) -> int:
    if as_json:
        print(json.dumps({"error": message}), flush=True)
    else:
        print(f"error: {message}", file=sys.stderr)
    return EXIT_FAILED


def _print_end(result: WatchResult, show: Show, as_json: bool) -> int:
    s = result.spectator
    summary = result.summary()
    code = EXIT_CHEAT if s.verdict is not None else EXIT_OK
    if s.verdict is None and not s.record.finished:
        code = EXIT_FAILED
    deals = s.opened_hands()  # a table with the open_hands option, once every key is out
    if as_json:
        if deals:
            summary = {**summary, "opened_hands": deals}
        print(json.dumps(summary, sort_keys=True), flush=True)
        return code
    names = show._names(s) or Names([m.name for m in result.manifest.seats], 0)
    page = {
        "game": summary["game"],
        "ranking": summary["ranking"],
        "scores": summary["scores"],
        "culprit": summary["culprit"],
    }
    if s.verdict is not None:
        verdict = verdict_line(s.verdict, result.manifest, s.seat_order or ())
        print("\n".join(fit(verdict, _width(), indent="  ")), flush=True)
    elif s.record.finished:
        print(plain(result_lines(page, names)), flush=True)
        for n, d in enumerate(deals, start=1):
            print(f"hands opened after the game, deal {n}:", flush=True)
            for e, cards in sorted(d["hands"].items()):
                who = names.names[e] if e < len(names.names) else f"seat {e + 1}"
                print(printable(f"  {e + 1}. {who}: {' '.join(cards)}"), flush=True)
    else:
        print(f"the watch stopped at step {s.step}", flush=True)
    print(f"{s.status_line()}.", flush=True)
    for line in closing_lines(summary["table_id"], summary["record_head"], _width()):
        print(line, flush=True)
    for junk in result.junk[:5]:
        print(f"· dropped (no player's fault): {junk}", file=sys.stderr)
    return code


def _width() -> int:
    """The terminal's width, or no limit when the output is not a terminal (a file or a
    pipe gets whole lines)."""
    if not sys.stdout.isatty():
        return 1 << 16
    return shutil.get_terminal_size((80, 24)).columns


def closing_lines(table_id: str, head: str, width: int) -> list[str]:
    """The watch's last words: the table and the last step's hash (whole), then where the
    record is, each wrapped on words to ``width``."""
    record = (
        "Every player keeps the record file: `slaiga verify` checks it, `slaiga replay`"
        " steps through it."
    )
    return fit(f"table {table_id}, the last step's hash {head}.", width) + fit(record, width)
