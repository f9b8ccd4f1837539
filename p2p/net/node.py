"""The Trio runner of one peer at one table: lobby, forming, record, resume, silence.

This is the shell that drives the sans-I/O parts (wire, record, rules, silence) with
real I/O:

* **Lobby.**  The opener listens, announces the table over zeroconf
  (:mod:`p2p.net.discovery`) and admits ``Join`` requests until the seats are
  full; joiners find it by table id (zeroconf) or by ``--peer host:port``.
  The lobby is a star around the opener.
* **Forming.**  With every seat taken the opener withdraws the announcement
  and offers the manifest bytes; every seat checks them against what it was
  told, signs them, and the opener assembles the genesis (all signatures)
  and hands it out.  From then on the table is a full mesh: each seat dials
  every seat that joined before it (the same rule redials after an outage).
* **Record.**  Steps 1-2 are the commit-reveal seat-order rounds, then the
  protocol the manifest names: a game (:mod:`p2p.table.game_rule`) or the
  demonstration protocol (:mod:`p2p.table.demo`).  Each peer acts when the rule
  says it owes an entry.  Our own entries are fsynced before they are sent
  (so a restart can never sign something else for the same step:
  equivocation); received ones are written before they are acted on and
  fsynced at step boundaries.
* **Resume.**  A restarted peer reloads its file (a torn tail is cut off by
  :mod:`p2p.record.store`), listens on its manifest address again, reconnects and
  sends ``Fetch``; any peer may answer, since every entry is signed.
* **Silence.**  :class:`p2p.table.silence.SilenceMonitor` gets the real clock
  (``trio.current_time``); a stalled seat triggers a re-fetch from everyone
  and is reported; past the maximum wait the table ends as abandoned.
* **Ending.**  A peer whose record is finished broadcasts :class:`Finished`
  with its head hash and lingers (bounded) until every other seat has said
  the same, so nobody leaves while another still needs its entries.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import random
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgpack
import trio

from crypto.identity import IdentityKey, fingerprint
from crypto.seal import SealKey
from engine.players import BotPlayer, LeftTable, Player
from p2p import wire
from p2p.errors import (
    BadVote,
    BrokenChain,
    CheatDetected,
    ConnectionClosed,
    Equivocation,
    ForgedSignature,
    HandshakeFailed,
    NodeError,
    RemoteProtocolError,
    TableAbandoned,
)
from p2p.net import discovery
from p2p.net.fetch import FetchServer
from p2p.net.mesh import (
    Inbound,
    Mesh,
    PeerDown,
    PeerUp,
    open_mesh,
    open_task_nursery,
)
from p2p.net.offload import Offload
from p2p.net.watch_server import WatchServer
from p2p.record.chain import Offer, Record, Status
from p2p.record.store import RecordFile, _fsync_dir
from p2p.table.demo import DEFAULT_ROUND_EVERY, DemoProtocol, DemoRule, next_body
from p2p.table.endvote import check_vote, sign_vote, tally
from p2p.table.events import (
    Abandoned,
    Aborted,
    Announced,
    Away,
    CheatSeen,
    Connecting,
    Convicted,
    Divergent,
    EndedByVote,
    EndedEarly,
    FalseHead,
    Forked,
    Formed,
    Forming,
    HandedOver,
    HeadClaimed,
    Joined,
    LingerTimeout,
    Listening,
    Meshed,
    NodeEvent,
    RecordFinished,
    Refetching,
    Resuming,
    Searching,
    SeatDown,
    SeatDropped,
    SeatFinished,
    SeatRecovered,
    SeatStalled,
    SeatUp,
    StepDone,
    Vanished,
    VoteCast,
    VoteRefused,
    Waiting,
    Welcomed,
    Withdrawn,
)
from p2p.table.forming import (
    DEFAULT_MAX_WAIT_MS,
    DEFAULT_SPECTATORS,
    DEFAULT_STALL_AFTER_MS,
    FormingRule,
    Manifest,
    genesis_hash,
    make_genesis,
    manifest_bytes,
    new_table_id,
    open_genesis,
    sign_manifest,
    table_rule,
    verify_manifest_signature,
)
from p2p.table.game_rule import (
    DEFAULT_DECIDE_MAX_MS,
    DEFAULT_DECIDE_STALL_MS,
    GameProtocol,
    SeatKeys,
    SeatList,
    decide_limits,
    describe,
)
from p2p.table.lobby import EarlyBuffer, LobbyGate, Verdict
from p2p.table.seat import SeatDriver, game_of, rule_factory
from p2p.table.signing import SignedManifests, offer_problems, play_problem, timeout_problem
from p2p.table.silence import Recovered, SilenceMonitor, Stalled
from p2p.wire import Hash, Step, TableId

IDENTITY_FILE = "identity.key"
SEAL_FILE = "seal.key"
TABLES_DIR = "tables"
RECORD_SUFFIX = ".rec"
SECRET_SUFFIX = ".secret"
TABLE_SECRET_BYTES = 32
"""The per-table secret (key share, dice, gift-box keys); its file also holds the
table's own X25519 seal key (32 bytes more), and is erased when the table ends."""
JOIN_TIMEOUT_S = 30.0
FORM_TIMEOUT_S = 60.0
MESH_TIMEOUT_S = 20.0
HEARTBEAT_S = 0.25
AWAY_AFTER_S = 1.0
"""A heartbeat this much later than due means we were away (stopped, suspended, starved);
that time counts against no seat."""
ISOLATED_ROUNDS = 3
"""Re-fetch rounds waited out while we hold no link at all before a silent seat is named."""
LINGER_S = 10.0
"""How long a finished peer waits for the others to say they finished too."""
DEFAULT_LOBBY_SCAN_S = 3.0
OPEN_TIMEOUT_S = 1800.0
"""How long an opened table waits for its seats to fill before it closes itself."""


# ---------------------------------------------------------------------------
# A message of our own: "my record is finished, and this is its head"
# ---------------------------------------------------------------------------


@wire.message("finished")
@dataclass(frozen=True, slots=True)
class Finished(wire.Message):
    """Sent when a peer's record is complete; peers linger until all have said it."""

    table_id: TableId
    step: Step
    head: Hash


@wire.message("links")
@dataclass(frozen=True, slots=True)
class Links(wire.Message):
    """The slots a peer holds a link to now, sent to every linked seat when that changes.

    Unsigned, so only a hint: it lets each peer tell a player whose machine is gone
    (no link to anyone) from one who is merely thinking, and say so by name."""

    table_id: TableId
    slots: SeatList


# ---------------------------------------------------------------------------
# Identity and state on disk
# ---------------------------------------------------------------------------


def _write_secret(path: Path, data: bytes) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)


def load_identity(state_dir: Path) -> tuple[IdentityKey, SealKey]:
    """This peer's long-term Ed25519 identity and X25519 seal key (created on first use)."""
    state_dir.mkdir(parents=True, exist_ok=True)
    id_path, seal_path = state_dir / IDENTITY_FILE, state_dir / SEAL_FILE
    if not id_path.exists():
        _write_secret(id_path, IdentityKey.generate().private_bytes())
    if not seal_path.exists():
        _write_secret(seal_path, SealKey.generate().private_bytes())
    return (
        IdentityKey.from_private_bytes(id_path.read_bytes()),
        SealKey.from_private_bytes(seal_path.read_bytes()),
    )


def record_path(state_dir: Path, table_id: bytes) -> Path:
    return state_dir / TABLES_DIR / f"{table_id.hex()}{RECORD_SUFFIX}"


def already_played(state_dir: Path, table_id: bytes) -> str | None:
    """Why a table id must not be formed afresh here: this state folder already holds its
    record or its secret (an old manifest replayed, or a table to resume); else ``None``."""
    if record_path(state_dir, table_id).exists() or secret_path(state_dir, table_id).exists():
        return (
            f"table {table_id.hex()} was already played from this state folder;"
            f" use `slaiga resume {table_id.hex()}` to go on with it"
        )
    return None


def options_digest(options: dict[str, Any]) -> str:
    """Short digest of the table options for the lobby's TXT record."""
    blob = msgpack.packb(sorted(options.items()), use_bin_type=True)
    return hashlib.sha256(b"slaiga/v1/options" + blob).hexdigest()[:16]


# ---------------------------------------------------------------------------
# Configuration, events and results
# ---------------------------------------------------------------------------


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


@dataclass(frozen=True, slots=True)
class CheatReport:
    """A rejected or detected cheat: who is to blame and what the record said."""

    culprit: int
    kind: str
    reason: str
    via_peer: int | None


@dataclass(slots=True)
class TableResult:
    manifest: Manifest
    my_seat: int
    seat_order: tuple[int, ...]
    record: Record | None
    record_file: Path | None
    cheats: list[CheatReport] = field(default_factory=list)
    stalls: list[Stalled] = field(default_factory=list)
    recoveries: list[Recovered] = field(default_factory=list)
    peers_finished: set[int] = field(default_factory=set)
    divergent: list[int] = field(default_factory=list)
    aborted: int | None = None
    """The seat whose proven equivocation ended the table early (``None``: it did not)."""
    absent: int | None = None
    """The slot whose silence abandoned the table (``None``: it was not abandoned)."""
    ended_by_vote: int | None = None
    """The vanished slot for which every other seat voted to end the table (``None``: no
    such vote); ``absent`` is then that slot too, and nobody is convicted."""
    convicted: CheatReport | None = None
    """The proven cheat that ended the game (its signed entry is in our record file)."""
    game: dict[str, Any] | None = None
    """The game's agreed result once played (``GameRule.result``), engine seats."""
    entries: int = 0
    proofs: int = 0

    @property
    def names(self) -> list[str]:
        """Seat names in engine-seat order (seat order), or manifest order before it."""
        order = self.seat_order or tuple(range(self.manifest.n_seats))
        return [self.manifest.seats[s].name for s in order]

    def engine_seat(self, slot: int | None) -> int | None:
        if slot is None or not self.seat_order:
            return slot
        return self.seat_order.index(slot)

    def _culprit(self, slot: int) -> dict[str, Any]:
        return {
            "culprit": self.engine_seat(slot) if slot in self.seat_order else None,
            "culprit_slot": slot,
            "name": self.manifest.seats[slot].name,
        }

    def player(self, slot: int | None) -> dict[str, Any] | None:
        """A player as the results name it: ``seat`` (place in the seat order, from 0;
        ``None`` before the draw), ``slot`` (join order) and ``name``."""
        if slot is None:
            return None
        seat = self.seat_order.index(slot) if slot in self.seat_order else None
        return {"seat": seat, "slot": slot, "name": self.manifest.seats[slot].name}

    def game_summary(self) -> dict[str, Any]:
        """The final object of ``slaiga open/join/resume/play --json``."""
        culprit = self.convicted.culprit if self.convicted is not None else self.aborted
        out: dict[str, Any] = {
            "table_id": self.manifest.table_id.hex(),
            "game": self.manifest.game,
            "options": dict(self.manifest.options),
            "seat": self.engine_seat(self.my_seat),
            "seats": self.names,
            "ranking": list(self.game["ranking"]) if self.game else [],
            "scores": list(self.game.get("scores", [])) if self.game else [],
            "draw": bool(self.game.get("draw")) if self.game else False,
            "state_hash": self.game["state_hash"] if self.game else None,
            "record_head": self.record.head.hex() if self.record is not None else None,
            "record": str(self.record_file) if self.record_file is not None else None,
            "culprit": self.engine_seat(culprit),
            "culprit_name": self.manifest.seats[culprit].name if culprit is not None else None,
            "absent": self.player(self.absent),
            "ended_by_vote": self.player(self.ended_by_vote),
            "finished": bool(self.game) and self.convicted is None and self.absent is None,
            "entries": self.entries,
            "proofs": self.proofs,
        }
        if self.convicted is not None:
            out["cheat"] = {"kind": self.convicted.kind, "reason": self.convicted.reason}
        return out

    def summary(self) -> dict[str, Any]:
        """The agreed manifest in seat order (what ``slaiga open/join --json`` prints)."""
        seats = []
        for slot in self.seat_order:
            member = self.manifest.seats[slot]
            seats.append(
                {
                    "name": member.name,
                    "fingerprint": fingerprint(member.identity),
                    "slot": slot,
                    "address": member.address,
                }
            )
        out: dict[str, Any] = {
            "table_id": self.manifest.table_id.hex(),
            "game": self.manifest.game,
            "options": dict(self.manifest.options),
            "seats": seats,
            "my_slot": self.my_seat,
        }
        if self.record is not None:
            out["record_steps"] = self.record.step - 1
            out["record_head"] = self.record.head.hex()
            out["finished"] = self.record.finished
        # players as everywhere else: culprit/seat in the seat order, *_slot, name
        if self.cheats:
            out["cheats"] = [
                {**self._culprit(c.culprit), "kind": c.kind, "reason": c.reason}
                for c in self.cheats
            ]
        if self.stalls:
            out["stalls"] = [self.player(s.seat) for s in self.stalls]
        if self.aborted is not None:
            out["aborted"] = {**self._culprit(self.aborted), "reason": "equivocation"}
        if self.absent is not None:
            out["absent"] = self.player(self.absent)
        if self.ended_by_vote is not None:
            out["ended_by_vote"] = self.player(self.ended_by_vote)
        return out


# ---------------------------------------------------------------------------
# The node
# ---------------------------------------------------------------------------


class Node:
    """One peer's run at one table (opener, joiner or resumer)."""

    def __init__(self, cfg: NodeConfig) -> None:
        self.cfg = cfg
        self.identity, self.seal_key = load_identity(cfg.state_dir)
        self.table_seal = SealKey.generate()
        """This table's own seal key (the manifest names it; gifts are sealed to it),
        kept in the table secret file and erased with it: forward secrecy."""
        self.mesh: Mesh | None = None
        self.genesis: wire.Genesis | None = None
        self.manifest: Manifest | None = None
        self.record: Record | None = None
        self.store: RecordFile | None = None
        self.my_seat = -1
        self.early = EarlyBuffer()
        self.gate = LobbyGate()
        self.fetches: FetchServer | None = None
        self._lobby_ad: discovery.TableAd | None = None
        self._last_beat: float | None = None
        self._away = 0.0
        self._blame_round: tuple[int, float, int] | None = None  # (step, when, rounds)
        self.cheats: list[CheatReport] = []
        self.stalls: list[Stalled] = []
        self.recoveries: list[Recovered] = []
        self.finished_peers: dict[int, bytes] = {}
        self.divergent: list[int] = []
        self.aborted: int | None = None
        self.absent: int | None = None
        """The slot whose silence abandoned the table (``None``: it was not abandoned)."""
        self._suspects: list[tuple[BrokenChain, int | None]] = []
        self._fork_fetches: set[tuple[int, int]] = set()
        self._head_checks: dict[int, int] = {}
        """Seats whose claimed head differs from ours, and the step their record is fetched
        from next to compare it with ours (a head claim is a hint, not evidence)."""
        self._head_checked: set[int] = set()
        self._head_forks: set[int] = set()
        self._false_heads: set[int] = set()
        self._links: dict[int, frozenset[int]] = {}
        """The slots each seat last said it holds a link to (:class:`Links`)."""
        self._unlinked_since: dict[int, float] = {}
        """Slots nobody we hear from holds a link to, and since when."""
        self._vanished: set[tuple[int, int]] = set()
        self._votes: dict[int, wire.EndVote] = {}
        """The first validly signed end vote of each other seat (p2p/table/endvote.py)."""
        self._my_vote: wire.EndVote | None = None
        """Our own end vote once signed: final, we sign no further entry at this table."""
        self.ended_by_vote: int | None = None
        """The vanished slot every other seat voted to end the table for."""
        self._asked_end: set[tuple[int, int]] = set()
        self._waiting: trio.CancelScope | None = None
        self._wake_now = False
        self._equivocations: set[tuple[int, int]] = set()
        self._pace_until = 0.0
        self._announcement: discovery.Announcement | None = None
        self.convicted: CheatReport | None = None
        self.table_secret: bytes | None = None
        self.driver: SeatDriver | None = None
        self.player: Player | None = None
        self._deciding: int | None = None
        self._nursery: trio.Nursery | None = None
        self._offload = Offload() if cfg.offload else None
        self._evidence: set[bytes] = set()
        self._said: str | None = None
        self.watch: WatchServer | None = None
        """Our spectators once the record runs (p2p/net/watch_server.py)."""

    # -- helpers --------------------------------------------------------

    def emit(self, event: NodeEvent) -> None:
        self.cfg.on_event(event)

    def member(self, address: str) -> wire.Member:
        return wire.Member(
            _cut(self.cfg.name, wire.MAX_NAME_LEN),
            self.identity.public,
            self.table_seal.public,
            address,
        )

    async def _open_mesh(
        self, stack: contextlib.AsyncExitStack, table_id: bytes | None, host: str | None, port: int
    ) -> Mesh:
        """Open this node's mesh for ``table_id`` on ``host:port`` with the configured
        keepalive, closed with ``stack``; it becomes ``self.mesh``."""
        self.mesh = await stack.enter_async_context(
            open_mesh(
                self.identity,
                table_id,
                host=host,
                port=port,
                keepalive_interval=self.cfg.keepalive_interval,
                keepalive_dead=self.cfg.keepalive_dead,
            )
        )
        self.mesh.members = self.gate.members  # everyone else who dials us is a stranger
        if self.genesis is not None:  # resuming
            self._arm_mesh(self.mesh)
        await self._start_background(stack, self.mesh)
        return self.mesh

    async def _start_background(self, stack: contextlib.AsyncExitStack, mesh: Mesh) -> None:
        """Tasks that run beside the main loop until the mesh closes: fetch replies
        (p2p/net/fetch.py) and the heartbeat that notices when we were away."""
        nursery = await stack.enter_async_context(open_task_nursery())
        nursery.start_soon(self._heartbeat)

        def entries_from(step: int) -> list[wire.Signed]:
            return self.record.signed_from(step) if self.record is not None else []

        def dropped(peer: bytes, reason: str) -> None:
            self.emit(SeatDropped(**self._who(self._slot_of(peer)), reason=reason))

        self.fetches = FetchServer(nursery, mesh, entries_from, dropped)

    # -- no false blame: away time, a re-fetch before naming anyone --------

    async def _heartbeat(self) -> None:
        """Notice the time this peer itself was away (stopped, suspended, starved)."""
        while True:
            await trio.sleep(HEARTBEAT_S)
            self._account_away(trio.current_time())

    def _account_away(self, now: float) -> None:
        gap = now - (self._last_beat if self._last_beat is not None else now)
        if gap > HEARTBEAT_S + AWAY_AFTER_S:
            self._away += gap - HEARTBEAT_S
            self.emit(Away(seconds=round(gap, 3)))
        self._last_beat = now

    def _silence(self, monitor: SilenceMonitor, now: float) -> list[Stalled | Recovered]:
        """``monitor.update`` guarded against false blame.

        * Time we were away counts against no seat (the silence clocks move on
          by it), and on coming back we re-fetch from everyone.
        * Nobody is named abandoned before a re-fetch from every connected
          seat has had ``stall_after`` to be answered; and while we hold no
          link at all it may be us who are cut off, so that is waited out
          for a few such rounds before anyone is named.
        """
        rec = self.record
        assert rec is not None
        self._account_away(now)
        if self._away:
            monitor.pause(self._away)
            self._away = 0.0
            self._refetch_everyone()
        try:
            return monitor.update(now, rec.step, rec.waiting_on())
        except TableAbandoned as exc:
            if not self._ready_to_blame(now, monitor):
                return []
            self.emit(Abandoned(**self._who(exc.seat), waited=exc.waited))
            self.absent = exc.seat
            raise TableAbandoned(exc.seat, exc.waited, self._who(exc.seat)["name"]) from None

    def _ready_to_blame(self, now: float, monitor: SilenceMonitor) -> bool:
        rec, mesh = self.record, self.mesh
        assert rec is not None and mesh is not None
        last = self._blame_round if self._blame_round and self._blame_round[0] == rec.step else None
        answered = last is not None and now - last[1] >= monitor.stall_after
        if answered and (mesh.connections or last[2] >= ISOLATED_ROUNDS):
            return True
        rounds = last[2] + 1 if last is not None else 1
        self._blame_round = (rec.step, now, rounds)
        self._refetch_everyone()
        monitor.pause(monitor.stall_after)
        self.emit(Refetching(step=rec.step, connected=len(mesh.connections)))
        return False

    def _refetch_everyone(self) -> None:
        rec, mesh, manifest = self.record, self.mesh, self.manifest
        if rec is None or mesh is None or manifest is None:
            return
        for peer in list(mesh.connections):
            mesh.send_nowait(peer, wire.Fetch(manifest.table_id, rec.step))

    def _relay(self, offer: Offer, via: int | None) -> None:
        """Pass entries we accepted on to the other seats (not back to where they came from,
        nor to their author), so a table with one link down goes on at full pace: the two
        ends of the broken link get each other's entries through everyone else.  A copy
        that arrives twice is a duplicate, checked by its bytes alone (p2p/record/chain.py)."""
        mesh, manifest = self.mesh, self.manifest
        if mesh is None or manifest is None:
            return
        for acc in offer.accepted:
            if acc.seat == self.my_seat:
                continue
            skip = {manifest.seats[acc.seat].identity}
            if via is not None:
                skip.add(manifest.seats[via].identity)
            # seats and spectators; strangers get nothing of the table's
            targets = [p for p, c in mesh.connections.items() if p not in skip and not c.stranger]
            if targets:
                mesh.broadcast_raw(wire.encode_body(acc.signed), targets)

    def bytes_held(self) -> int:
        """Bytes held by this node's own queues and buffers: the mesh's (inbox, outboxes,
        decoders), early messages, and the record's held future entries."""
        held = self.mesh.bytes_held() if self.mesh is not None else 0
        held += self.early.bytes
        if self.record is not None:
            held += self.record.held_bytes()
        return held

    def _slot_of(self, peer: bytes) -> int | None:
        return self.manifest.seat_of(peer) if self.manifest is not None else None

    def _seat_order(self) -> tuple[int, ...]:
        """Slots in the drawn seat order (empty before it is drawn)."""
        if self.record is not None and isinstance(self.record.rule, FormingRule):
            return self.record.rule.seat_order or ()
        return ()

    def _who(self, slot: int | None) -> dict[str, Any]:
        """How events name the player in ``slot``: ``name``, ``seat`` (its place in the
        seat order, from 0, like the results; ``None`` before the draw) and ``slot``."""
        manifest = self.manifest
        if slot is None or manifest is None or not 0 <= slot < manifest.n_seats:
            return {"name": "a peer not yet seated", "seat": None, "slot": slot}
        order = self._seat_order()
        seat = order.index(slot) if slot in order else None
        return {"name": manifest.seats[slot].name, "seat": seat, "slot": slot}

    def _culprit(self, slot: int) -> dict[str, Any]:
        who = self._who(slot)
        return {"name": who["name"], "culprit": who["seat"], "culprit_slot": slot}

    def _result(self) -> TableResult:
        assert self.manifest is not None
        order = self._seat_order()
        game = game_of(self.record) if self.record is not None else None
        return TableResult(
            convicted=self.convicted,
            game=game.result() if game is not None and game.done else None,
            entries=game.entries_checked if game is not None else 0,
            proofs=game.proofs_checked if game is not None else 0,
            manifest=self.manifest,
            my_seat=self.my_seat,
            seat_order=order,
            record=self.record,
            record_file=self.store.path if self.store is not None else None,
            cheats=list(self.cheats),
            stalls=list(self.stalls),
            recoveries=list(self.recoveries),
            peers_finished=set(self.finished_peers),
            divergent=list(self.divergent),
            aborted=self.aborted,
            absent=self.absent,
            ended_by_vote=self.ended_by_vote,
        )

    # -- opening --------------------------------------------------------

    async def open(self, game: str, seats: int, options: dict[str, Any]) -> TableResult:
        """Open a table, wait for ``seats - 1`` joiners, form it, run the record."""
        if not 1 <= seats <= discovery.MAX_SEATS:
            raise NodeError(f"seats must be 1..{discovery.MAX_SEATS}, not {seats}")
        protocol = (
            DemoProtocol(self.cfg.demo_steps, self.cfg.round_every)
            if self.cfg.demo_steps > 0
            else GameProtocol(self.cfg.decide_stall_ms, self.cfg.decide_max_ms)
        )
        absurd = timeout_problem(self.cfg.stall_after_ms, self.cfg.max_wait_ms, protocol)
        if absurd:
            raise NodeError(f"the joiners would refuse these limits: {absurd}")
        unplayable = (
            play_problem(game, seats, options) if isinstance(protocol, GameProtocol) else None
        )
        if unplayable:
            raise NodeError(f"the joiners would refuse this game: {unplayable}")
        table_id = new_table_id()
        async with contextlib.AsyncExitStack() as stack:
            mesh = await self._open_mesh(stack, table_id, self.cfg.host, self.cfg.port)
            members = [self.member(mesh.address)]
            self.emit(Listening(address=mesh.address, table_id=table_id.hex()))

            def admit(peer: bytes) -> tuple[str, str] | None:
                if any(m.identity == peer for m in members):
                    return None
                if len(members) >= seats or self.genesis is not None:
                    return ("full", f"all {seats} seats at table {table_id.hex()} are taken")
                return self.gate.admit(peer, trio.current_time())

            self.gate.joined(self.identity.public)

            mesh.admit = admit
            lobby = None
            if self.cfg.use_discovery:
                lobby = await stack.enter_async_context(discovery.open_lobby(self.cfg.interface))
                self._announcement = await lobby.announce(
                    self._ad(table_id, game, options, members, seats, mesh.listen_port or 0)
                )
                self.emit(Announced(service=self._announcement.service_name))
            with trio.move_on_after(self.cfg.open_timeout_s):
                while len(members) < seats:
                    event = await self._lobby_event(mesh)
                    if event is None:
                        continue
                    await self._admit_join(event, members, seats, game, options)
                    if self._announcement is not None and len(members) < seats:
                        await self._announcement.update(
                            self._ad(table_id, game, options, members, seats, mesh.listen_port)
                        )
            if len(members) < seats:
                raise NodeError(
                    f"only {len(members)} of {seats} seats were taken within"
                    f" {self.cfg.open_timeout_s:g}s; table {table_id.hex()} closed"
                )
            if self._announcement is not None and self.cfg.spectators:
                # full, but still in sight for spectators (slaiga watch) while it plays
                await self._announcement.update(
                    self._ad(table_id, game, options, members, seats, mesh.listen_port or 0)
                )
            elif self._announcement is not None:
                await self._announcement.withdraw()
                self.emit(Withdrawn())
            manifest = Manifest(
                wire.PROTOCOL_VERSION,
                table_id,
                game,
                options,
                tuple(members),
                self.cfg.stall_after_ms,
                self.cfg.max_wait_ms,
                protocol,
                self.cfg.spectators,
            )
            await self._collect_signatures(manifest)
            return await self._play(stack, fresh=True)
        raise AssertionError("unreachable")  # pragma: no cover

    def _ad(
        self,
        table_id: bytes,
        game: str,
        options: dict[str, Any],
        members: list[wire.Member],
        seats: int,
        port: int,
    ) -> discovery.TableAd:
        return discovery.TableAd(
            version=wire.PROTOCOL_VERSION,
            table_id=table_id.hex(),
            game=game,
            variant=str(options.get("variant", "")),
            options_digest=options_digest(options),
            seats_taken=len(members),
            seats_total=seats,
            name=self.cfg.name,
            fingerprints=tuple(fingerprint(m.identity) for m in members),
            port=port,
            spectators=self.cfg.spectators,
        )

    async def _admit_join(
        self,
        event: Inbound,
        members: list[wire.Member],
        seats: int,
        game: str,
        options: dict[str, Any],
    ) -> None:
        assert self.mesh is not None and isinstance(event.message, wire.Join)
        member = event.message.member
        if member.identity != event.peer:
            self.mesh.send_nowait(
                event.peer, wire.Reject("identity", "join names another identity than yours")
            )
            self.mesh.disconnect(event.peer, "join with a foreign identity")
            return
        if not any(m.identity == member.identity for m in members):
            if len(members) >= seats:
                self.mesh.send_nowait(event.peer, wire.Reject("full", "the table is full"))
                return
            members.append(member)
            self.gate.joined(member.identity)
            self.emit(Joined(name=member.name, fingerprint=fingerprint(member.identity)))
        welcome = wire.Welcome(game, options, seats, tuple(members))
        for m in members[1:]:
            self.mesh.send_nowait(m.identity, welcome)

    async def _collect_signatures(self, manifest: Manifest) -> None:
        assert self.mesh is not None
        raw = manifest_bytes(manifest)
        sigs: dict[int, bytes] = {0: sign_manifest(self.identity, raw)}
        others = [m.identity for m in manifest.seats[1:]]
        self.mesh.broadcast(wire.ManifestOffer(raw), others)
        self.emit(Forming(seats=manifest.n_seats))
        with trio.fail_after(FORM_TIMEOUT_S):
            while len(sigs) < manifest.n_seats:
                event = await self.mesh.inbox.receive()
                if not isinstance(event, Inbound):
                    continue
                msg = event.message
                if isinstance(msg, wire.ManifestSignature):
                    seat = manifest.seat_of(event.peer)
                    if seat is None or msg.seat != seat or msg.table_id != manifest.table_id:
                        continue
                    verify_manifest_signature(manifest, raw, seat, msg.signature)
                    sigs[seat] = msg.signature
                else:
                    self._buffer(event)
        genesis = make_genesis(raw, sigs)
        self.mesh.broadcast(genesis, others)
        self._set_genesis(genesis)

    def _set_genesis(self, genesis: wire.Genesis) -> None:
        self.genesis = genesis
        self.manifest = open_genesis(genesis)
        if self.mesh is not None:
            self._arm_mesh(self.mesh)
        seat = self.manifest.seat_of(self.identity.public)
        if seat is None:
            raise NodeError("our identity is not seated in the genesis manifest")
        self.my_seat = seat

    def _arm_mesh(self, mesh: Mesh) -> None:
        """The table is formed: peers on another fork are refused, and so is any host
        that holds no seat in the manifest."""
        assert self.genesis is not None and self.manifest is not None
        mesh.genesis = genesis_hash(self.genesis)
        mesh.seat_hosts_only([m.address for m in self.manifest.seats])
        mesh.members = frozenset(m.identity for m in self.manifest.seats)

    def _buffer(self, event: Inbound) -> None:
        self.early.add(event)

    async def _lobby_event(self, mesh: Mesh) -> Inbound | None:
        """The next ``Join`` in the lobby, or ``None`` after handling anything else by the
        lobby's rules (p2p/table/lobby.py): strangers send only ``Join``, within a deadline."""
        deadline = self.gate.next_deadline()
        event = None
        with trio.move_on_at(deadline if deadline is not None else math.inf):
            event = await mesh.inbox.receive()
        now = trio.current_time()
        for peer in self.gate.overdue(now):
            self.gate.gone(peer)
            mesh.disconnect(peer, "did not join in time")
        if isinstance(event, PeerUp):
            self.gate.connected(event.peer, now)
        elif isinstance(event, PeerDown):
            self.gate.gone(event.peer)
        elif isinstance(event, Inbound):
            verdict = self.gate.judge(event)
            if verdict is Verdict.JOIN:
                return event
            if verdict is Verdict.KEEP:
                self._buffer(event)
            elif verdict is Verdict.CUT:
                self.gate.gone(event.peer)
                mesh.disconnect(event.peer, "sent too much before joining")
        return None

    # -- joining --------------------------------------------------------

    async def join(self, table_id: str | None = None, peer: str | None = None) -> TableResult:
        """Join by table id (zeroconf), by ``host:port``, or the only open table in sight."""
        async with contextlib.AsyncExitStack() as stack:
            address, expect_fp, expect_tid = peer, None, None
            if peer is None:
                ad = await self._find_table(stack, table_id)
                if not ad.addresses:
                    raise NodeError(f"table {ad.table_id} announced no address")
                address = f"{ad.addresses[0]}:{ad.port}"
                self._lobby_ad = ad
                expect_fp = ad.fingerprints[0] if ad.fingerprints else None
                expect_tid = bytes.fromhex(ad.table_id)
            assert address is not None
            mesh = await self._open_mesh(stack, expect_tid, self.cfg.host, self.cfg.port)
            self.emit(Connecting(address=address))
            try:
                opener = await mesh.dial(address, expect_fingerprint=expect_fp)
            except HandshakeFailed as exc:
                raise NodeError(_reject_text(exc.kind, exc.detail)) from exc
            except ConnectionClosed as exc:
                raise NodeError(f"cannot reach the table at {address}: {exc.reason}") from exc
            assert mesh.table_id is not None
            await opener.send(wire.Join(self.member(mesh.address)))
            self.emit(Waiting(table_id=mesh.table_id.hex()))
            await self._await_genesis(opener.peer)
            return await self._play(stack, fresh=True)
        raise AssertionError("unreachable")  # pragma: no cover

    async def _find_table(
        self, stack: contextlib.AsyncExitStack, table_id: str | None
    ) -> discovery.TableAd:
        lobby = await stack.enter_async_context(discovery.open_lobby(self.cfg.interface))
        browser = await lobby.browse()
        self.emit(Searching(table_id=table_id))
        if table_id is not None:
            wanted = table_id.lower()
            await browser.wait_for(
                lambda t: any(ad.table_id == wanted for ad in t.values()), self.cfg.lobby_scan_s
            )
            ad = browser.find(wanted)
            if ad is None:
                raise NodeError(f"table {table_id} is gone (not announced on the LAN)")
        else:
            await trio.sleep(self.cfg.lobby_scan_s)
            open_tables = [a for a in browser.tables.values() if not a.is_full]
            if not open_tables:
                raise NodeError("no open table in sight; give a TABLE-ID or --peer host:port")
            if len(open_tables) > 1:
                ids = ", ".join(f"{a.table_id} ({a.name})" for a in open_tables)
                raise NodeError(f"{len(open_tables)} open tables in sight, pick one: {ids}")
            ad = open_tables[0]
        if ad.version != wire.PROTOCOL_VERSION:
            raise NodeError(
                f"version mismatch: table {ad.table_id} speaks protocol {ad.version},"
                f" we speak {wire.PROTOCOL_VERSION}"
            )
        if ad.is_full:
            raise NodeError(f"table {ad.table_id} is full ({ad.seats_taken}/{ad.seats_total})")
        return ad

    async def _await_genesis(self, opener: bytes) -> None:
        assert self.mesh is not None
        welcome: wire.Welcome | None = None
        offered: bytes | None = None
        with trio.fail_after(self.cfg.join_timeout_s + FORM_TIMEOUT_S):
            while self.genesis is None:
                event = await self.mesh.inbox.receive()
                if isinstance(event, PeerDown) and event.peer == opener:
                    raise NodeError(f"the opener closed the connection: {event.reason}")
                if not isinstance(event, Inbound):
                    continue
                msg = event.message
                if event.peer != opener:
                    self._buffer(event)
                    continue
                if isinstance(msg, wire.Reject):
                    raise NodeError(_reject_text(msg.reason, msg.detail))
                if isinstance(msg, wire.Welcome):
                    welcome = msg
                    self.emit(Welcomed(taken=len(msg.members), total=msg.seats_total))
                elif isinstance(msg, wire.ManifestOffer):
                    manifest = self._check_offer(msg.manifest, welcome, opener)
                    offered = msg.manifest
                    # one manifest per table id, ever: remembered (fsynced) before we sign
                    SignedManifests(self.cfg.state_dir).remember(manifest.table_id, offered)
                    sig = sign_manifest(self.identity, msg.manifest)
                    seat = manifest.seat_of(self.identity.public)
                    assert seat is not None
                    self.mesh.send_nowait(
                        opener, wire.ManifestSignature(manifest.table_id, seat, sig)
                    )
                elif isinstance(msg, wire.Genesis):
                    if offered is None or msg.manifest != offered:
                        raise NodeError("the opener sent a genesis for a manifest we did not sign")
                    self._set_genesis(msg)

    def _check_offer(self, raw: bytes, welcome: wire.Welcome | None, opener: bytes) -> Manifest:
        """Refuse to sign a manifest that differs from what we were told in the lobby."""
        assert self.mesh is not None
        try:
            manifest = wire.decode_body(raw, Manifest)
        except RemoteProtocolError as exc:
            raise NodeError(f"the opener offered an invalid manifest: {exc}") from exc
        assert isinstance(manifest, Manifest)
        problems = offer_problems(
            manifest,
            table_id=self.mesh.table_id,
            opener=opener,
            me=self.identity.public,
            my_seal_key=self.table_seal.public,
            welcome=welcome,
            announced=self._lobby_ad,
            options_digest=options_digest,
        )
        played = already_played(self.cfg.state_dir, manifest.table_id)
        if played:
            raise NodeError(f"refusing to sign the manifest: {played}")
        twice = SignedManifests(self.cfg.state_dir).problem(manifest.table_id, raw)
        if twice:
            problems.append(twice)
        if problems:
            raise NodeError(f"refusing to sign the manifest: wrong {'; '.join(problems)}")
        return manifest

    # -- resuming -------------------------------------------------------

    async def resume(self, table_id: str) -> TableResult:
        """Restart after a crash: reload the record file, reconnect, fetch what we missed."""
        path = record_path(self.cfg.state_dir, bytes.fromhex(table_id))
        if not path.exists():
            raise NodeError(f"no record file for table {table_id} in {self.cfg.state_dir}")
        store, loaded = RecordFile.open(path)
        self.store = store
        self._set_genesis(loaded.genesis)
        assert self.manifest is not None
        self.emit(Resuming(entries=len(loaded.entries), torn_bytes=loaded.torn_bytes))
        from p2p.net.mesh import parse_address

        host, port = parse_address(self.manifest.seats[self.my_seat].address)
        async with contextlib.AsyncExitStack() as stack:
            self.cfg.port = port
            await self._open_mesh(stack, self.manifest.table_id, host, port)
            self.table_secret, self.table_seal = _load_secret(
                secret_path(self.cfg.state_dir, self.manifest.table_id)
            )
            self._new_record()
            self._evidence.update(s.signature for s in loaded.entries)  # in the file already
            for signed in loaded.entries:
                self._offer(signed, via=None, persist=False)
            self._reload_votes(loaded.votes, loaded.closed)
            return await self._play(stack, fresh=False)
        raise AssertionError("unreachable")  # pragma: no cover

    # -- the record -----------------------------------------------------

    def _new_record(self) -> None:
        assert self.genesis is not None and self.manifest is not None
        # steps 1-2 draw the seat order; then the protocol the signed manifest names
        if isinstance(self.manifest.protocol, GameProtocol):
            if self.table_secret is None:
                raise NodeError("no table secret: cannot play this seat's game")
            keys = SeatKeys(
                self.my_seat, self.identity, self.table_seal, self.table_secret, self.cfg.cheat
            )
            self.record = Record(self.genesis, rule_factory(keys))
        else:
            self.record = Record(self.genesis, table_rule)
        self.driver = SeatDriver(self.record, self.identity, self.my_seat)

    async def _play(self, stack: contextlib.AsyncExitStack, fresh: bool) -> TableResult:
        assert self.mesh is not None and self.manifest is not None and self.genesis is not None
        mesh, manifest = self.mesh, self.manifest
        keys = {m.identity for m in manifest.seats}
        mesh.admit = lambda peer: (
            None if peer in keys or manifest.spectators else ("full", "not seated at this table")
        )
        self._open_to_spectators()
        if fresh:
            played = already_played(self.cfg.state_dir, manifest.table_id)
            if played:
                raise NodeError(played)
            path = record_path(self.cfg.state_dir, manifest.table_id)
            path.parent.mkdir(parents=True, exist_ok=True)
            # the per-table secret (our key share, our dice, our seal key) is durable
            # before any entry
            self.table_secret, self.table_seal = _create_secret(
                secret_path(self.cfg.state_dir, manifest.table_id), self.table_seal
            )
            self.store = RecordFile.create(path, self.genesis)
            self._new_record()
        assert self.store is not None
        stack.callback(self.store.close)
        self.emit(Formed(table_id=manifest.table_id.hex(), slot=self.my_seat))
        for slot in range(self.my_seat):
            member = manifest.seats[slot]
            mesh.keep_connected(member.identity, member.address)
        others = keys - {self.identity.public}
        with trio.move_on_after(MESH_TIMEOUT_S):
            await mesh.wait_connected(frozenset(others))
        self.emit(Meshed(connected=len(mesh.connections), of=len(others)))
        for peer in list(mesh.connections):
            mesh.send_nowait(peer, wire.Fetch(manifest.table_id, self.record.step))
        for event in self.early:
            await self._handle(event)
        self.early.clear()
        await self._run_record()
        if self.record.finished or self.convicted is not None:
            # the record is final and we lingered: nothing more needs the table's secrets,
            # and without them the record opens no card we held or received
            _erase_secret(secret_path(self.cfg.state_dir, manifest.table_id))
        return self._result()

    def _produce(self, kind: str) -> wire.Body | None:
        """Our body for a step we owe; ``None`` when it is a decision (the player's)."""
        rec, driver = self.record, self.driver
        assert rec is not None and driver is not None
        rule = rec.rule
        if isinstance(rule, FormingRule) and isinstance(rule.next_rule, DemoRule):
            return next_body(rule.next_rule, kind)
        # the seat-order commitment is derived from our identity key (a deterministic
        # Ed25519 signature over the table id), so a restart re-derives the very same
        # commitment and opening; game secrets come from the table secret (SeatKeys)
        return driver.machine_body()

    def _ended(self) -> bool:
        return self.convicted is not None or self.ended_by_vote is not None

    def _act(self, ahead: bool = False) -> None:
        """Sign, persist (fsync) and send every entry we owe, as long as we owe one.

        Decisions go to our player: a bot answers at once, a person in a task of its
        own while this loop keeps the table alive.  With ``demo_pace_ms`` set, at
        most one demo entry goes out per pace interval.  With ``ahead`` (the record
        loop), an entry that can be made in a worker thread is left to the loop.
        """
        rec, driver = self.record, self.driver
        assert rec is not None and driver is not None
        pace = self.cfg.demo_pace_ms / 1000
        while not self._ended() and self._my_vote is None:  # a voter signs nothing more
            kinds = rec.owes(self.my_seat)
            if not kinds:
                return
            if pace > 0:
                now = trio.current_time()
                if now < self._pace_until:
                    return
                self._pace_until = now + pace
            if ahead and self._offload is not None and self._offload.wants_premake(game_of(rec)):
                return  # the record loop makes it in a worker thread (p2p/net/offload.py)
            body = self._produce(sorted(kinds)[0])
            if body is None:
                player = self._player()
                if not isinstance(player, BotPlayer):
                    self._start_decision()
                    return
                engine, seat = driver.seat_view()  # type: ignore[misc]
                body = driver.decision_body(player.choose(engine, seat))
            self._send_own(body)

    def _send_own(self, body: wire.Body) -> None:
        rec, mesh, store = self.record, self.mesh, self.store
        assert rec is not None and mesh is not None and store is not None
        if self._my_vote is not None:
            return  # we voted to end the table: voting is final, we sign no further entry
        kind = body.TAG
        offer = rec.sign(self.identity, self.my_seat, body)
        own = offer.accepted[0].signed
        store.append(own, sync=True)
        if self.cfg.trace is not None:
            self.cfg.trace("sent", own_step := offer.accepted[0].step, self.my_seat)
            self.cfg.trace("accepted", own_step, self.my_seat)
        behaviour = self.cfg.behaviour
        if behaviour is not None and hasattr(behaviour, "send_own"):
            behaviour.send_own(self, kind, offer.accepted[0])
        else:
            mesh.broadcast(own)
        if behaviour is not None and hasattr(behaviour, "after_send"):
            behaviour.after_send(self, kind, offer.accepted[0])
        self._after_offer(offer, via=None, skip_first=True)

    # -- our player -------------------------------------------------------

    def _player(self) -> Player:
        if self.player is None:
            game = game_of(self.record) if self.record is not None else None
            assert game is not None and game.mine is not None and self.manifest is not None
            names = [self.manifest.seats[slot].name for slot in game.order]
            if self.cfg.make_player is not None:
                self.player = self.cfg.make_player(names, game.mine.seat, self.manifest.game)
            else:
                self.player = self._bot()
        return self.player

    def _bot(self) -> Player:
        game = game_of(self.record) if self.record is not None else None
        assert game is not None and game.mine is not None
        rng = random.Random(secrets.randbits(64))
        return BotPlayer.make(game.spec.bots["heuristic"], game.mine.seat, rng)

    def _hand_over(self, left: Player) -> Player:
        """Our player left: a bot takes the seat so that the table can finish."""
        close = getattr(left, "close", None)
        if close is not None:
            close()  # give the terminal back before saying anything
        self.player = self._bot()
        self.emit(HandedOver())
        return self.player

    def _start_decision(self) -> None:
        rec = self.record
        assert rec is not None
        if self._deciding == rec.step or self._nursery is None:
            return
        self._deciding = rec.step
        self._nursery.start_soon(self._decide, rec.step)

    async def _decide(self, step: int) -> None:
        """Ask our (human) player; send the decision if it is still owed."""
        driver, rec = self.driver, self.record
        assert driver is not None and rec is not None
        player = self._player()
        while True:
            view = driver.seat_view()
            assert view is not None
            engine, seat = view
            try:
                action = await player.decide(engine, seat)
            except LeftTable:
                if not self.cfg.bot_after_leave or self.player is not player:
                    raise
                player = self._hand_over(player)
                continue
            if rec.step != step or not driver.owes_decision() or self._ended():
                self._deciding = None
                return
            problem = engine.check(action)
            if problem is None:
                break
            player.progress(f"that move is not allowed: {problem}")
        self._deciding = None
        self._send_own(driver.decision_body(action))
        self._act()

    def _deliver(self) -> None:
        """Hand our player what its seat saw happen, and say what the table waits for."""
        driver = self.driver
        if driver is None or driver.game is None or driver.game.mine is None:
            return
        player = self._player()
        events = driver.take_events()
        engine, seat = driver.seat_view()  # type: ignore[misc]
        if events:
            player.observe(engine, seat, events)
        game = driver.game
        assert self.manifest is not None
        names = {slot: m.name for slot, m in enumerate(self.manifest.seats)}
        text = describe(game, names)
        if game.need is not None and game.my_seat in game.need.seats:
            text = None if game.waits_for_decision() else text
        if text is not None and text != self._said:
            self._said = text
            player.progress(text)

    def _after_offer(self, offer: Offer, via: int | None, skip_first: bool = False) -> None:
        store = self.store
        assert store is not None
        trace = self.cfg.trace
        for i, acc in enumerate(offer.accepted):
            if not (skip_first and i == 0):
                store.append(acc.signed)
                if trace is not None:
                    trace("accepted", acc.step, acc.seat)
        # Each append is flushed; the fsync that makes it durable is the one done
        # before our own next entry leaves (see ``_act``), i.e. before we act on it.
        if self.cfg.trace_steps:
            for view in offer.completed:
                kind = view.entries[0].kind if view.entries else ""
                self.emit(StepDone(step=view.number, kind=kind))
        # a held entry refused at its step is evidence like any refused entry: kept first
        for exc, signed in offer.refused:
            self._keep_evidence(signed, exc)
        for cheat in offer.cheats:
            self._on_cheat(cheat, via)
        self._stop_if_fold_failed()
        self._relay(offer, via)
        self._deliver()

    def _offer(self, signed: wire.Signed, via: int | None, persist: bool = True) -> None:
        rec = self.record
        assert rec is not None
        try:
            offer = rec.offer(signed)
        except ForgedSignature as exc:
            # the claimed seat did not sign it; the connection that carried it is to blame
            self._report_cheat(exc, via, blame_via=True)
            return
        except CheatDetected as exc:
            self._keep_evidence(signed, exc)
            self._on_cheat(exc, via)
            return
        except RemoteProtocolError as exc:
            # junk, or an entry of another table (ForeignEntry): nothing any seat signed is
            # evidence here; only the link that carried it is at fault, and only to us
            if via is not None:
                kind = type(exc).__name__
                self.cheats.append(CheatReport(via, kind, str(exc), via))
                self.emit(CheatSeen(**self._culprit(via), kind=kind, reason=str(exc)))
            return
        if offer.status is Status.ACCEPTED:
            if persist:
                self._after_offer(offer, via)
            else:
                for cheat in offer.cheats:
                    self._on_cheat(cheat, via)
                self._stop_if_fold_failed()

    def _stop_if_fold_failed(self) -> None:
        """Our own code failed folding a step (never a peer's fault): every entry is on
        disk, and the table stops here with one clear line (``FoldFailed``)."""
        rec = self.record
        if rec is not None and rec.failure is not None:
            if self.store is not None:
                self.store.sync()
            raise rec.failure

    def _on_cheat(self, exc: CheatDetected, via: int | None) -> None:
        """Route a detected violation: forks are investigated, equivocation is spread.

        *Split view.*  A seat that signs two versions of one step and shows each
        to different peers forks the record: nobody holds both versions, and
        the symptom is an honest seat's next entry chaining to a hash we do not
        know (:class:`BrokenChain`).  Such a break is not blamed at once: we ask
        the peer that delivered it and the entry's author for their whole
        record (``Fetch`` from step 1, once per peer and step of ours).  Its
        copy of the forked step conflicts with ours, which :class:`Record`
        reports as :class:`Equivocation` with both signed envelopes, naming the
        seat that signed both.  Chain breaks still unexplained when the table
        stalls or ends are reported as what they look like.

        *Equivocation* is reported once per seat and step, and both signed
        envelopes are relayed to every peer, so each honest peer holds the
        proof even if it only ever saw one version.
        """
        if isinstance(exc, BrokenChain):
            if self._equivocations:
                return  # the proven fork explains it
            self._suspects.append((exc, via))
            self.emit(Forked(**self._who(exc.seat), via=via))
            for slot in {via, exc.seat}:
                if slot is not None and slot != self.my_seat:
                    self._fetch_whole_record(slot)
            return
        if isinstance(exc, Equivocation):
            first, first_sig, second, second_sig = exc.evidence[:4]
            step = wire.decode_body(first, wire.Entry).step  # type: ignore[attr-defined]
            if (exc.seat, step) in self._equivocations:
                return
            self._equivocations.add((exc.seat, step))
            if self.mesh is not None:
                self.mesh.broadcast(wire.Signed(first, first_sig))
                self.mesh.broadcast(wire.Signed(second, second_sig))
            # the fork this equivocation causes explains the chain breaks seen so far
            self._suspects.clear()
        self._report_cheat(exc, via)
        self._convict(exc, via)

    def _keep_evidence(self, signed: wire.Signed, exc: CheatDetected) -> None:
        """Write a refused, validly signed entry to our record file: the signed evidence
        that ``slaiga verify`` re-checks (its own signer is the one it convicts)."""
        if isinstance(exc, ForgedSignature | BrokenChain) or self.store is None:
            return
        if not self._is_game() or self._ended():
            # once a cheat has ended the game its evidence is kept; more from a convicted
            # seat would only let it grow every peer's file and flood every link
            return
        envelopes = [signed]
        if isinstance(exc, Equivocation):
            # both versions: the other one may be held for a future step (so not in the
            # file), and one envelope alone proves nothing
            first, first_sig = exc.evidence[0], exc.evidence[1]
            envelopes.insert(0, wire.Signed(first, first_sig))
        rec = self.record
        for env in envelopes:
            if env.signature in self._evidence or (rec is not None and rec.holds(env)):
                continue  # already in the file (as evidence, or accepted)
            self._evidence.add(env.signature)
            self.store.append(env, sync=True)
            if self.mesh is not None:
                # every seat gets the evidence itself: one the deviator never showed it
                # (a held entry refused at its step) must not leave it waiting on us
                self.mesh.broadcast(env)

    def _is_game(self) -> bool:
        return self.manifest is not None and isinstance(self.manifest.protocol, GameProtocol)

    def _convict(self, exc: CheatDetected, via: int | None) -> None:
        """On a game table a proven cheat ends the game: name the seat, spread the evidence."""
        if not self._is_game() or self._ended():
            return
        self.convicted = CheatReport(exc.seat, type(exc).__name__, exc.reason, via)
        self.emit(Convicted(**self._culprit(exc.seat), kind=type(exc).__name__, reason=exc.reason))
        if self.mesh is not None and self.record is not None:
            # relay what convicts it, so a seat it fed a different story convicts it too
            for signed in self.record.signed_from(max(1, self.record.step - 1)):
                self.mesh.broadcast(signed)

    def _fetch_whole_record(self, slot: int) -> None:
        rec, mesh, manifest = self.record, self.mesh, self.manifest
        assert rec is not None and mesh is not None and manifest is not None
        key = (slot, rec.step)
        if key in self._fork_fetches:
            return
        self._fork_fetches.add(key)
        mesh.send_nowait(manifest.seats[slot].identity, wire.Fetch(manifest.table_id, 1))

    def _blame_suspects(self) -> None:
        """Chain breaks that no equivocation explained are reported as broken chains."""
        suspects, self._suspects = self._suspects, []
        for exc, via in suspects:
            self._report_cheat(exc, via)

    def _report_cheat(self, exc: CheatDetected, via: int | None, blame_via: bool = False) -> None:
        culprit = via if blame_via and via is not None else exc.seat
        report = CheatReport(culprit, type(exc).__name__, exc.reason, via)
        self.cheats.append(report)
        self.emit(CheatSeen(**self._culprit(culprit), kind=report.kind, reason=exc.reason))

    def _open_to_spectators(self) -> None:
        """The record runs: spectators may watch as the manifest allows (every message of a
        peer that holds no seat goes to :attr:`watch` from now on)."""
        assert self.mesh is not None and self.manifest is not None and self.genesis is not None
        self.watch = WatchServer(
            self.mesh,
            self.genesis,
            self.manifest.table_id,
            self.manifest.spectators,
            self.fetches,
            self.emit,
        )

    async def _handle(self, event: Inbound | PeerUp | PeerDown) -> None:
        mesh, rec, manifest = self.mesh, self.record, self.manifest
        assert mesh is not None and rec is not None and manifest is not None
        if self.watch is not None and self._slot_of(event.peer) is None:
            self.watch.handle(event)  # a spectator, or a stranger that may become one
            return
        if isinstance(event, PeerUp):
            slot = self._slot_of(event.peer)
            self.emit(SeatUp(**self._who(slot)))
            mesh.send_nowait(event.peer, wire.Fetch(manifest.table_id, rec.step))
            if rec.finished:
                mesh.send_nowait(event.peer, Finished(manifest.table_id, rec.step, rec.head))
            for vote in self._all_votes():  # a seat back on line hears every vote we hold
                mesh.send_nowait(event.peer, vote)
            self._tell_links()
            return
        if isinstance(event, PeerDown):
            self.emit(SeatDown(**self._who(self._slot_of(event.peer)), reason=event.reason))
            self._tell_links()
            return
        via = self._slot_of(event.peer)
        if via is None:
            return
        msg = event.message
        if isinstance(msg, wire.Signed):
            if self._offload is not None:  # its proof checked in a worker thread first
                await self._offload.prework(game_of(rec), msg, manifest.table_id, rec.keys)
            self._offer(msg, via)
        elif isinstance(msg, wire.Fetched):
            if msg.table_id == manifest.table_id:
                self._take_fetched(msg, event.peer, via)
        elif isinstance(msg, wire.Fetch):
            if msg.table_id == manifest.table_id and self.fetches is not None:
                self.fetches.request(event.peer, msg)  # answered off this loop (p2p/net/fetch.py)
        elif isinstance(msg, Links) and msg.table_id == manifest.table_id:
            self._links[via] = frozenset(msg.slots)
        elif isinstance(msg, wire.EndVote):
            self._take_vote(msg, via)
        elif isinstance(msg, Finished) and msg.table_id == manifest.table_id:
            self.finished_peers[via] = msg.head
            self.emit(SeatFinished(**self._who(via), step=msg.step))
        # lobby leftovers (Welcome, Genesis copies...) are ignored once the record runs

    # -- a vanished player -------------------------------------------------

    def _linked(self) -> frozenset[int]:
        mesh = self.mesh
        if mesh is None:
            return frozenset()
        slots = (self._slot_of(peer) for peer in mesh.connections)
        return frozenset(s for s in slots if s is not None)

    def _tell_links(self) -> None:
        """Tell every linked seat whom we hold a link to (on every change of our links)."""
        mesh, manifest = self.mesh, self.manifest
        if mesh is None or manifest is None:
            return
        mesh.broadcast(Links(manifest.table_id, tuple(sorted(self._linked()))))

    def _track_links(self, now: float) -> None:
        """Which seats no one we hear from holds a link to (we included), and since when.

        While we hold no link at all it may be us who are cut off, so nobody is
        judged then (the clocks start again when a link is back)."""
        manifest = self.manifest
        assert manifest is not None
        mine = self._linked()
        if not mine:
            self._unlinked_since.clear()
            return
        heard = set(mine)
        for slot in mine:
            heard |= self._links.get(slot, frozenset())
        for slot in range(manifest.n_seats):
            if slot == self.my_seat or slot in heard:
                self._unlinked_since.pop(slot, None)
            else:
                self._unlinked_since.setdefault(slot, now)

    def _tell_vanished(self, monitor: SilenceMonitor, now: float) -> float | None:
        """Say by name which player owing a decision has had no link to anyone for the
        machine steps' limit (its machine is most likely gone, while the table would
        wait the whole decision limit); returns when to look again (``None``: no need).

        Ending the table early is the remaining players' call (a signed vote,
        docs/design.md); until then the table waits, as the manifest says."""
        rec, manifest = self.record, self.manifest
        assert rec is not None and manifest is not None
        self._track_links(now)
        limit = manifest.max_wait_ms / 1000
        if monitor.max_wait <= limit:
            return None  # a machine step: the table gives up at this limit anyway
        wake: float | None = None
        for slot in sorted(rec.waiting_on()):
            since = self._unlinked_since.get(slot)
            if since is None or (slot, rec.step) in self._vanished:
                continue
            if now - since < limit:
                wake = min(wake or math.inf, since + limit)
                continue
            self._vanished.add((slot, rec.step))
            silent = monitor.silent_for(slot, now) or 0.0
            event = Vanished(
                **self._who(slot),
                step=rec.step,
                silent_for=round(now - since, 1),
                gives_up_in=round(max(0.0, monitor.max_wait - silent), 1),
            )
            self.emit(event)
            if self.player is not None:
                self.player.progress(event.describe())  # the person at this seat hears it
            self._ask_end(slot, now - since)
        return wake

    # -- ending the table by a signed vote (p2p/table/endvote.py) -----------------

    def _all_votes(self) -> list[wire.EndVote]:
        votes = list(self._votes.values())
        if self._my_vote is not None:
            votes.append(self._my_vote)
        return votes

    def _ask_end(self, slot: int, silent_for: float) -> None:
        """The player owing the step vanished: ask ours whether to end the table.  A
        person answers on the table screen (``ask_end``; not answering is waiting); a
        bot, or a player that cannot be asked, votes yes at once."""
        rec = self.record
        assert rec is not None
        key = (slot, rec.step)
        if key in self._asked_end or self._my_vote is not None or self._ended():
            return
        self._asked_end.add(key)
        ask = getattr(self.player, "ask_end", None)
        if ask is None or self._nursery is None:
            self.vote_end(slot)
            return
        self._nursery.start_soon(self._ask_player, ask, slot, rec.step, silent_for)

    async def _ask_player(
        self, ask: Callable[[str, float], Any], slot: int, step: int, silent_for: float
    ) -> None:
        """Ask until the person says end; not voting is waiting, and while the player
        stays gone the question comes back after each further machine steps' limit."""
        assert self.manifest is not None
        limit = self.manifest.max_wait_ms / 1000
        while not await ask(self._who(slot)["name"], round(silent_for)):
            await trio.sleep(limit)
            rec, since = self.record, self._unlinked_since.get(slot)
            if rec is None or rec.step != step or self._ended() or since is None:
                return  # the table moved on, or the player is back
            if self._my_vote is not None:
                return
            silent_for = trio.current_time() - since
        rec = self.record
        if rec is None or rec.step != step or self._ended():
            return  # the table moved on meanwhile
        problem = self.vote_end(slot)
        if problem is not None and self.player is not None:
            self.player.progress(f"no vote sent: {problem}")

    def _vote_problem(self, slot: int, now: float) -> str | None:
        """Why we may not vote now to end the table for ``slot`` (``None``: we may)."""
        rec, manifest = self.record, self.manifest
        if rec is None or manifest is None or self.store is None or self.mesh is None:
            return "the table is not running"
        if self._ended() or rec.finished:
            return "the table has ended"
        if self._my_vote is not None:
            return "you already voted"
        if not 0 <= slot < manifest.n_seats or slot == self.my_seat:
            return "that is not another player of this table"
        name = self._who(slot)["name"]
        if slot not in rec.waiting_on():
            return f"{name} does not owe step {rec.step}"
        since = self._unlinked_since.get(slot)
        limit = manifest.max_wait_ms / 1000
        if since is None or now - since < limit:
            return f"{name} has not been without a link to anyone for {limit:g}s"
        return None

    def vote_end(self, slot: int) -> str | None:
        """Sign, persist (fsync) and send our vote to end the table for ``slot``: it owes
        the current step at our head and has had no link to anyone, as we see it, for the
        machine steps' limit.  Returns why not (``None``: voted).  Final: we sign no
        further entry at this table."""
        problem = self._vote_problem(slot, trio.current_time())
        if problem is not None:
            return problem
        rec, manifest, store, mesh = self.record, self.manifest, self.store, self.mesh
        assert rec is not None and manifest is not None and store is not None
        assert mesh is not None
        vote = sign_vote(self.identity, manifest.table_id, self.my_seat, rec.step, rec.head, slot)
        store.append_vote(vote)  # durable before it leaves: after a restart we still voted
        self._my_vote = vote
        mesh.broadcast(vote)
        self._emit_vote(vote)
        self._tally()
        return None

    def _take_vote(self, vote: wire.EndVote, via: int) -> None:
        """A vote from the link of slot ``via``: checked, kept (one per seat), relayed
        and counted.  A bad one is refused with the reason; it convicts no one."""
        rec, manifest = self.record, self.manifest
        assert rec is not None and manifest is not None
        if self.ended_by_vote is not None or vote == self._my_vote:
            return
        try:
            check_vote(manifest, vote)
            if vote.seat == self.my_seat:
                raise BadVote("a vote in our own name that we never sent")
            if vote.step <= rec.step:  # not ahead of us: it must be for exactly our record
                check_vote(manifest, vote, step=rec.step, head=rec.head, owing=rec.waiting_on())
            known = self._votes.get(vote.seat)
            if known is not None and known != vote:
                raise BadVote(f"{self._who(vote.seat)['name']} already voted; a second vote")
        except BadVote as exc:
            self.emit(VoteRefused(**self._who(via), reason=str(exc)))
            return
        if vote.seat in self._votes:
            return  # a copy
        self._votes[vote.seat] = vote
        mesh = self.mesh
        if mesh is not None:  # relayed like entries: not back, not to its voter
            skip = {manifest.seats[via].identity, manifest.seats[vote.seat].identity}
            targets = [peer for peer in mesh.connections if peer not in skip]
            if targets:
                mesh.broadcast(vote, targets)
        self._emit_vote(vote)
        self._tally()

    def _emit_vote(self, vote: wire.EndVote) -> None:
        assert self.manifest is not None
        same = [
            v
            for v in self._all_votes()
            if (v.step, v.head, v.absent) == (vote.step, vote.head, vote.absent)
        ]
        self.emit(
            VoteCast(
                voter=self._who(vote.seat)["name"],
                voter_slot=vote.seat,
                **self._who(vote.absent),
                step=vote.step,
                votes=len(same),
                needed=self.manifest.n_seats - 1,
            )
        )

    def _tally(self) -> None:
        """With our vote and every other remaining seat's for our very step and head, write
        them as the record file's closing frame and end the table (nobody convicted)."""
        mine, rec, manifest, store = self._my_vote, self.record, self.manifest, self.store
        if mine is None or self.ended_by_vote is not None:
            return
        assert rec is not None and manifest is not None and store is not None
        key = (mine.step, mine.head, mine.absent)
        votes = {v.seat: v for v in self._all_votes() if (v.step, v.head, v.absent) == key}
        count = tally(manifest, votes.values(), rec.step, rec.head, rec.waiting_on())
        if not count.ended:
            return
        store.close_with_votes(wire.EndVotes(tuple(votes[s] for s in count.voters)))
        self.ended_by_vote = self.absent = mine.absent
        self.emit(EndedByVote(**self._who(mine.absent), step=mine.step))
        self._wake()

    def _reload_votes(self, votes: tuple[wire.EndVote, ...], closed: bool) -> None:
        """Votes in our file on resume: our own stays final (we sign nothing more)."""
        manifest = self.manifest
        assert manifest is not None
        if closed:
            raise NodeError(
                f"table {manifest.table_id.hex()} was ended by vote; there is nothing to"
                " resume (slaiga verify shows its record)"
            )
        for vote in votes:
            try:
                check_vote(manifest, vote)
            except BadVote:
                continue
            if vote.seat == self.my_seat:
                self._my_vote = vote
            else:
                self._votes.setdefault(vote.seat, vote)

    def _wake(self) -> None:
        """Make the record loop look again now (a vote ended the table from a task)."""
        self._wake_now = True
        if self._waiting is not None:
            self._waiting.cancel()

    def _take_fetched(self, msg: wire.Fetched, peer: bytes, via: int) -> None:
        """Offer a fetched piece; if the peer holds more and this piece moved us on, ask it
        for the next piece (replies come in bounded pieces, p2p/net/fetch.py).  While we
        compare a seat's record with ours (:meth:`_check_head`), its pieces are walked to
        the end whether or not they move us on."""
        rec, mesh = self.record, self.mesh
        assert rec is not None and mesh is not None
        before = rec.step, len(rec.signed_from(rec.step))
        forks = len(self._equivocations), len(self._suspects)
        for signed in msg.entries:
            self._offer(signed, via)
        if (len(self._equivocations), len(self._suspects)) != forks and via in self._head_checks:
            self._head_forks.add(via)  # its signed entries fork from ours
        cursor = self._head_checks.get(via)
        if cursor is not None:
            last = max((_entry_step(s) for s in msg.entries), default=cursor)
            if msg.more:
                self._head_checks[via] = max(last, cursor + 1)
                mesh.send_nowait(peer, wire.Fetch(msg.table_id, self._head_checks[via]))
            else:
                del self._head_checks[via]
            return
        if msg.more and (rec.step, len(rec.signed_from(rec.step))) != before:
            mesh.send_nowait(peer, wire.Fetch(msg.table_id, rec.step))

    def _check_head(self, slot: int, head: bytes) -> None:
        """A finished seat claims another head than ours.  The claim is not signed, so it
        proves nothing: fetch that seat's whole record and compare.  Only signed entries
        that fork from ours (equivocation, a chain we do not know) make it divergent; a
        record that matches ours leaves the claim a false one, and the game stands."""
        mesh, manifest = self.mesh, self.manifest
        assert mesh is not None and manifest is not None
        if slot in self._head_checked:
            return
        self._head_checked.add(slot)
        self._head_checks[slot] = 1
        self.emit(HeadClaimed(**self._who(slot), head=head.hex()))
        mesh.send_nowait(manifest.seats[slot].identity, wire.Fetch(manifest.table_id, 1))

    def _settle_heads(self, rec: Record) -> bool:
        """Judge every head claim that differs from ours; ``True`` once none is still being
        compared (a seat whose record forks from ours is then in :attr:`divergent`)."""
        for slot, head in self.finished_peers.items():
            if head != rec.head:
                self._check_head(slot, head)
        for slot in sorted(self._head_checked - set(self._head_checks)):
            if slot in self.divergent or slot in self._false_heads:
                continue
            if slot in self._head_forks or self._equivocations:
                self.divergent.append(slot)
                self.emit(Divergent(**self._who(slot)))
            else:
                self._false_heads.add(slot)
                self.emit(FalseHead(**self._who(slot)))
        return not self._head_checks

    async def _run_record(self) -> None:
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            try:
                await self._record_loop()
            except TableAbandoned as exc:
                exc.result = self._result()  # who was absent, the table, our record file
                raise
            finally:
                self._nursery = None
                nursery.cancel_scope.cancel()

    async def _record_loop(self) -> None:
        mesh, rec, manifest = self.mesh, self.record, self.manifest
        assert mesh is not None and rec is not None and manifest is not None
        monitor = SilenceMonitor.from_manifest(manifest)
        machine_limits = (monitor.stall_after, monitor.max_wait)
        decide = decide_limits(manifest) or machine_limits
        ended_at: float | None = None
        if self.cfg.demo_pace_ms > 0:  # think time before our first entry too
            self._pace_until = trio.current_time() + self.cfg.demo_pace_ms / 1000
        others = manifest.n_seats - 1
        announced_finish = False
        linger_until: float | None = None
        self._tell_links()
        self._deliver()
        while True:
            self._act(ahead=True)
            while self._offload is not None and await self._offload.premake(game_of(rec)):
                self._act(ahead=True)  # our own shuffle was made in a worker thread
            now = trio.current_time()
            if self._ended():
                # linger a moment so the evidence we relayed reaches every seat
                if ended_at is None:
                    ended_at = now
                    if self.convicted is not None:
                        self.emit(EndedEarly(**self._culprit(self.convicted.culprit)))
                    elif self.ended_by_vote is None:
                        self.emit(EndedEarly(name=None, culprit=None, culprit_slot=None))
                if now >= ended_at + min(self.cfg.linger_s, 2.0):
                    if self.ended_by_vote is not None:
                        gone = self.ended_by_vote
                        waited = now - self._unlinked_since.get(gone, now)
                        name = self._who(gone)["name"]
                        raise TableAbandoned(gone, waited, name, by_vote=True)
                    return
            game = game_of(rec)
            limits = decide if game is not None and game.waits_for_decision() else machine_limits
            monitor.stall_after, monitor.max_wait = limits
            events = self._silence(monitor, now)
            vanish_check = self._tell_vanished(monitor, now)
            for ev in events:
                if isinstance(ev, Stalled):
                    self.stalls.append(ev)
                    self.emit(
                        SeatStalled(**self._who(ev.seat), step=ev.step, silent_for=ev.silent_for)
                    )
                    if self._equivocations:
                        # a proven equivocator and a record that cannot go on: end the table
                        culprit = min(seat for seat, _ in self._equivocations)
                        self.aborted = culprit
                        self.emit(Aborted(**self._who(culprit), reason="equivocation"))
                        return
                    self._blame_suspects()
                    for peer in list(mesh.connections):
                        mesh.send_nowait(peer, wire.Fetch(manifest.table_id, rec.step))
                else:
                    self.recoveries.append(ev)
                    self.emit(SeatRecovered(**self._who(ev.seat)))
            if rec.finished:
                if not announced_finish:
                    announced_finish = True
                    linger_until = now + self.cfg.linger_s
                    mesh.broadcast(Finished(manifest.table_id, rec.step, rec.head))
                    self.emit(RecordFinished(steps=rec.step - 1, head=rec.head.hex()))
                # a head unlike ours is compared entry by entry before anything is said
                settled = self._settle_heads(rec)
                if len(self.finished_peers) >= others and settled:
                    self._blame_suspects()
                    return
                assert linger_until is not None
                if now >= linger_until:
                    self.emit(LingerTimeout(missing=others - len(self.finished_peers)))
                    self._blame_suspects()
                    return
            deadline = monitor.next_deadline() if not rec.finished else linger_until
            if vanish_check is not None and not rec.finished:
                deadline = min(deadline or vanish_check, vanish_check)
            if ended_at is not None:
                deadline = ended_at + min(self.cfg.linger_s, 2.0)
            if rec.owes(self.my_seat) and self._pace_until > now:
                deadline = min(deadline or self._pace_until, self._pace_until)
            if self._wake_now:  # something ended the table meanwhile: look again now
                self._wake_now = False
                continue
            event = None
            with trio.move_on_at(deadline if deadline is not None else now + 3600) as waiting:
                self._waiting = waiting
                event = await mesh.inbox.receive()
            self._waiting = None
            if event is not None:
                await self._handle(event)
                # drain what is already queued before acting again (batching)
                while True:
                    try:
                        event = mesh.inbox.receive_nowait()
                    except trio.WouldBlock:
                        break
                    await self._handle(event)


def _entry_step(signed: wire.Signed) -> int:
    """The step an envelope's entry claims (0 when it does not decode)."""
    try:
        entry = wire.decode_body(signed.entry, wire.Entry)
    except RemoteProtocolError:
        return 0
    return entry.step  # type: ignore[attr-defined]


def _cut(text: str, limit: int) -> str:
    return text[:limit]


def secret_path(state_dir: Path, table_id: bytes) -> Path:
    return state_dir / TABLES_DIR / f"{table_id.hex()}{SECRET_SUFFIX}"


def _create_secret(path: Path, seal: SealKey) -> tuple[bytes, SealKey]:
    """A fresh per-table secret, stored with the table's seal key ``seal`` and durable
    (fsynced) before any entry of ours leaves."""
    if path.exists():
        return _load_secret(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = secrets.token_bytes(TABLE_SECRET_BYTES)
    _write_secret(path, data + seal.private_bytes())
    return data, seal


def _load_secret(path: Path) -> tuple[bytes, SealKey]:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise NodeError(
            f"no table secret {path}: it is erased when a table ends (forward secrecy), so"
            " an ended table cannot be resumed; check its record with slaiga verify"
        ) from None
    except OSError as exc:
        raise NodeError(f"cannot read the table secret {path}: {exc}") from exc
    if len(data) != TABLE_SECRET_BYTES + 32:
        raise NodeError(f"table secret {path} is damaged ({len(data)} bytes)")
    return data[:TABLE_SECRET_BYTES], SealKey.from_private_bytes(data[TABLE_SECRET_BYTES:])


def _erase_secret(path: Path) -> None:
    """Overwrite, then remove, a table secret file (and make the removal durable)."""
    try:
        size = path.stat().st_size
        fd = os.open(path, os.O_WRONLY)
        try:
            os.write(fd, bytes(size))
            os.fsync(fd)
        finally:
            os.close(fd)
        path.unlink()
    except FileNotFoundError:
        return
    except OSError as exc:
        raise NodeError(f"cannot erase the table secret {path}: {exc}") from exc
    _fsync_dir(path.parent)


def _reject_text(kind: str, detail: str) -> str:
    prefix = {
        "full": "table is full",
        "gone": "table is gone",
        "version": "version mismatch",
        "identity": "identity failed the handshake",
        "busy": "table is busy",
        "stranger": "not a seat of this table",
    }.get(kind, kind)
    return f"{prefix}: {detail}" if detail and detail != kind else prefix


def result_json(result: TableResult) -> str:
    return json.dumps(result.summary(), sort_keys=True)


__all__ = [
    "Finished",
    "Node",
    "NodeConfig",
    "NodeError",
    "TableResult",
    "CheatReport",
    "load_identity",
    "record_path",
]
