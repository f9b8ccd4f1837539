"""How one peer runs: :class:`NodeConfig`, the settings of :class:`p2p.net.node.Node`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.players import Player
from p2p.net.opening import DEFAULT_LOBBY_SCAN_S, JOIN_TIMEOUT_S, OPEN_TIMEOUT_S
from p2p.table.demo import DEFAULT_ROUND_EVERY
from p2p.table.events import NodeEvent
from p2p.table.forming import DEFAULT_MAX_WAIT_MS, DEFAULT_SPECTATORS, DEFAULT_STALL_AFTER_MS
from p2p.table.game_rule import DEFAULT_DECIDE_MAX_MS, DEFAULT_DECIDE_STALL_MS
from p2p.table.session import LINGER_S


@dataclass(slots=True)
class NodeConfig:
    """How one peer runs.  ``host`` is where it listens; ``interface`` where zeroconf runs."""

    name: str
    state_dir: Path
    host: str = "127.0.0.1"
    port: int = 0
    interface: str | None = None
    use_discovery: bool = True
    demo_steps: int = 0
    round_every: int = DEFAULT_ROUND_EVERY
    """The demo protocol's parameters; only the opener's count: they go into the signed
    manifest, and every seat (and any verifier) runs the record by the manifest."""
    stall_after_ms: int = DEFAULT_STALL_AFTER_MS
    max_wait_ms: int = DEFAULT_MAX_WAIT_MS
    keepalive_interval: float = 1.0
    keepalive_dead: float = 5.0
    linger_s: float = LINGER_S
    join_timeout_s: float = JOIN_TIMEOUT_S
    open_timeout_s: float = OPEN_TIMEOUT_S
    lobby_scan_s: float = DEFAULT_LOBBY_SCAN_S
    on_event: Callable[[NodeEvent], None] = field(default=lambda event: None)
    trace: Callable[[str, int, int], None] | None = None
    """Benchmark hook: called ("sent"|"accepted", step, seat) as entries are signed/accepted."""
    demo_pace_ms: int = 0
    """Wait this long between our own demo entries (stands in for a player's think time,
    so that tests can act on a table while its protocol is still running); 0: no wait."""
    behaviour: Any = None
    """Test hook for misbehaving peers (see tests/p2p/test_cheats_net.py); None is honest."""
    decide_stall_ms: int = DEFAULT_DECIDE_STALL_MS
    decide_max_ms: int = DEFAULT_DECIDE_MAX_MS
    """Stall limits for steps that wait for a person's decision (the opener's go into the
    manifest); machine steps use ``stall_after_ms``/``max_wait_ms``."""
    make_player: Callable[[list[str], int, str], Player] | None = None
    """Who plays our seat once the game starts: called with the seat names in engine-seat
    order, our engine seat and the game name.  ``None``: a heuristic bot."""
    bot_after_leave: bool = False
    """When our player leaves mid-game (its ``decide`` raises ``LeftTable``), a heuristic
    bot plays our seat to the end, so that the other seats can finish the game; ``False``:
    the leave ends this node (the others then see our seat silent)."""
    announce_back: bool = False
    """On resume, a person plays our seat again: sign a notice that we are back, which
    every seat tells its player ("Ann is back"; p2p/table/notice.py)."""
    trace_steps: bool = False
    """Emit a ``step`` event (number, kind) as each record step completes (benchmarks)."""
    offload: bool = True
    """Make and check shuffle proofs and tokens in worker threads (p2p/net/offload.py)."""
    spectators: int = DEFAULT_SPECTATORS
    """How many spectators may watch at once (the opener's goes into the manifest; 0: none;
    p2p/table/watchers.py)."""
    cheat: Any = None
    """Test hook for a cheating seat (tests/p2p/cheaters.py): replaces some of our game
    contributions; ``None`` is honest."""
