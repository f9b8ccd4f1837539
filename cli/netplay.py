"""Who plays our seat at a LAN table, and how a finished game is reported.

``--bot heuristic`` (or ``random``) makes this process a bot peer: it keeps
its own identity key and key share like any other peer, and its bot sees
only its own seat's view.  Without ``--bot`` the person at the terminal
plays the seat on the table screen (``cli.human``); when stdin is not a
terminal a bot plays it and the game is printed as it goes.
"""

from __future__ import annotations

import random
import secrets
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import trio

from cli.resumable import LOOPBACK, start_bot_peer
from engine import registry
from engine.game import Action, Event, Game
from engine.players import BotPlayer, Player
from p2p.table.events import Listening, NodeEvent

if TYPE_CHECKING:
    from p2p.net.node import TableResult

BOT_KINDS = ("heuristic", "random")


class ThinkingBot:
    """A bot that takes its time like a person (``--bot-think-ms``): its decisions go
    through the same path as a person's, while the table keeps running."""

    def __init__(self, bot: BotPlayer, think_s: float) -> None:
        self.bot = bot
        self.think_s = think_s

    def observe(self, game: Game, seat: int, events: Sequence[Event]) -> None:
        self.bot.observe(game, seat, events)

    async def decide(self, game: Game, seat: int) -> Action:
        await trio.sleep(self.think_s)
        return self.bot.choose(game, seat)

    def progress(self, text: str) -> None:
        pass

    def finish(self, summary: Mapping[str, Any]) -> None:
        pass


def player_factory(
    bot: str | None,
    seed: int | None = None,
    params: Mapping[str, Any] | None = None,
    think_ms: int = 0,
    answer_timeout: float = 20.0,
    quiet: bool = False,
    **human: Any,
) -> Callable[[list[str], int, str], Player]:
    """Build the ``NodeConfig.make_player`` for ``--bot`` (or a person without it;
    ``human`` holds more ``HumanPlayer`` settings: ``ask_reload``, ``hints``, ``trace``)."""

    def make(names: list[str], seat: int, game: str) -> Player:
        spec = registry.get(game)
        if bot is not None:
            rng = random.Random(secrets.randbits(64) if seed is None else seed)
            player = BotPlayer.make(spec.bots[bot], seat, rng, params)
            return ThinkingBot(player, think_ms / 1000) if think_ms > 0 else player
        from cli.human import HumanPlayer, WatchingPlayer

        if not (sys.stdin.isatty() and sys.stdout.isatty()):
            # nobody at a terminal: a bot plays the seat and the game is printed
            watcher = spec.bots["heuristic"](seat, random.Random(secrets.randbits(64)))
            return WatchingPlayer(watcher, names, seat, quiet=quiet)
        return HumanPlayer(names, seat, game, answer_timeout=answer_timeout, **human)

    return make


def stall_words(name: str | None, silent_for: float) -> str:
    """A silent seat in player words: "waiting for Bob (silent 60 s, may have left)"."""
    return f"waiting for {name or 'a player'} (silent {round(silent_for)} s, may have left)"


NOT_FOR_PLAYERS = frozenset({"finished", "peer_finished", "step", "peer_up", "peer_down"})
"""Node events a person need not read (the end screen tells the record; links flap)."""


def player_event_text(event: NodeEvent, node: Any) -> str | None:
    """A node event in player words: names for seats, no slots, steps or hashes
    (``None``: not worth a person's attention)."""
    from cli.narrate import words
    from p2p.table.events import CheatSeen, Convicted, SeatStalled

    kind = getattr(event, "KIND", "")
    if kind in NOT_FOR_PLAYERS:
        return None
    if isinstance(event, SeatStalled):
        return stall_words(event.name, event.silent_for)
    if isinstance(event, Convicted):
        return "CHEAT PROVEN: " + convicted_words(event, node)
    session = getattr(node, "session", None)
    if isinstance(event, CheatSeen) and event.kind in PROVEN_KINDS and _is_game(session):
        return None  # a game table convicts it at once: the "CHEAT PROVEN" line says it
    if kind == "formed":
        return "the table is formed; connecting to every player"
    if kind == "resuming":  # not "entries" and "torn bytes"
        n = event.entries
        text = f"going back to the table from its record ({n} signature{'s' if n != 1 else ''})"
        if event.torn_bytes:
            text += "; the last one was only half written and is left out"
        return text
    text = event.describe()  # events about a player name them
    return words(text.replace("every seat", "every player").replace("seats", "players"))


PROVEN_KINDS = frozenset(
    {"InvalidMove", "OutOfTurn", "Replay", "Equivocation", "Impersonation", "MalformedEntry"}
)
"""Cheats a game table convicts as soon as it sees them (its "convicted" event follows)."""


def _is_game(session: Any) -> bool:
    is_game = getattr(session, "is_game", None)
    return bool(is_game()) if is_game is not None else False


def convicted_words(event: Any, node: Any) -> str:
    """A proven cheat as ``slaiga verify`` says it: who (name, seat counted from 1), what
    they did in player words, and at which step (``p2p.record.verify.cheat_sentence``)."""
    from p2p.record.verify import cheat_sentence, player_names
    from p2p.table.session import seat_order

    session = getattr(node, "session", None)
    manifest = getattr(session, "manifest", None)
    if manifest is None:
        return f"{event.name}: {event.reason} (kind: {event.kind})"
    order = seat_order(getattr(session, "record", None)) or None
    who = player_names(manifest)
    return cheat_sentence(event.kind, event.reason, event.culprit_slot, event.step, who, order)


def tell_at_table(node: Any, text: str, as_event: bool = False) -> bool:
    """Show ``text`` on the person's table screen: on the waiting line, or (``as_event``)
    among the events and in the log. ``False``: no screen is up, the caller prints it."""
    player = getattr(node, "player", None)
    term = getattr(player, "term", None)
    if term is None or not getattr(term, "started", False):
        return False
    if as_event:
        player.tell(text)
    else:
        player.progress(text)
    return True


def close_player(player: Any, summary: Mapping[str, Any] | None) -> None:
    """Show the end of the game to our player and give the terminal back."""
    if player is None:
        return
    try:
        if summary is not None:
            player.finish(summary)
    finally:
        close = getattr(player, "close", None)
        if close is not None:
            close()


# ---------------------------------------------------------------------------
# ``slaiga play GAME``: you against bot peers, a real table on loopback
# ---------------------------------------------------------------------------

BOT_PEER_WAIT_S = 60.0
"""How long the bot peers may take to finish after the game (then they are killed)."""


def play_networked(
    game: str,
    seats: int,
    options: dict[str, Any],
    names: Sequence[str],
    me: int,
    make_player: Callable[[list[str], int, str], Player],
    state: Path,
    bot: str = "heuristic",
    on_event: Callable[[NodeEvent], None] | None = None,
    node_box: dict[str, Any] | None = None,
) -> TableResult:
    """Open a table on loopback, start ``seats - 1`` bot peer processes that join it
    (each with its own identity and key share, in folders under ``state/bots``), play
    our seat with ``make_player`` and reap the bots.  Full crypto: every proof is
    checked by every peer, exactly as at a LAN table."""
    from p2p.net.node import Node, NodeConfig

    procs: list[subprocess.Popen[bytes]] = []
    bots_dir = state / "bots"

    def started(event: NodeEvent) -> None:
        if on_event is not None:
            on_event(event)
        if not isinstance(event, Listening) or procs:
            return
        for i, name in enumerate(n for s, n in enumerate(names) if s != me):
            folder = bots_dir / f"bot{i}"
            folder.mkdir(parents=True, exist_ok=True)
            args = ["join", "--peer", event.address, "--bot", bot, "--name", name]
            procs.append(start_bot_peer(*args, "--quiet", "--json", "--state-dir", str(folder)))

    cfg = NodeConfig(
        name=names[me],
        state_dir=state,
        host=LOOPBACK,
        port=0,
        use_discovery=False,
        on_event=started,
        make_player=make_player,
    )
    node = Node(cfg)
    if node_box is not None:
        node_box["node"] = node  # for the caller's event handler (names of silent seats)
    result = None
    try:
        result = trio.run(node.open, game, seats, options)
    except BaseException:
        close_player(node.player, None)  # give the terminal back before anything is said
        raise
    finally:
        # after a game, the bots finish their own records (briefly); if the person left
        # or the game failed, nobody is left to play with: stop them at once
        deadline = time.monotonic() + (BOT_PEER_WAIT_S if result is not None else 0.0)
        for p in procs:
            try:
                p.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
    close_player(node.player, result.game_summary())
    return result
