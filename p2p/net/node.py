"""The Trio shell of one peer at one table: it moves bytes and timers, nothing more.

A :class:`Node` comes to a table by opening, joining or resuming it
(:mod:`p2p.net.opening`); then it runs the record.  What the record run *decides*
(blame and forks, evidence, relay, silence, a vanished player and the end vote,
head claims, the linger) is the sans-I/O :class:`p2p.table.session.TableSession`:
the node feeds it what happens (a link up or down, a message, the time) and does
the effects it returns (send, persist, report, ask our player), in the manner of
h11 and trio-websocket.  Around it the node keeps only what needs I/O:

* **Record.**  Steps 1-2 are the commit-reveal seat-order rounds, then the
  protocol the manifest names.  Our own entries are fsynced before they leave, the
  record loop's ``fsync`` in a worker thread while the sends behind it wait
  (:mod:`p2p.net.durable`); received ones are written (one write for a batch) before
  the loop waits again and before an own entry that follows them leaves.
* **Our player.**  A bot answers at once; a person decides in a task of its own,
  while the loop keeps the table alive.
* **Time.**  A heartbeat notices when we were away; the loop sleeps until the
  session's next deadline or the next message; costly proofs run in worker threads
  (:mod:`p2p.net.offload`); fetches are answered off the loop (:mod:`p2p.net.fetch`).
"""

from __future__ import annotations

import contextlib
from typing import Any

import trio

from crypto.seal import SealKey
from engine.players import Player
from p2p import wire
from p2p.errors import NodeError, TableAbandoned
from p2p.net import discovery
from p2p.net.config import NodeConfig
from p2p.net.durable import SENDS, WRITES, Durable
from p2p.net.fetch import FetchServer
from p2p.net.mesh import Inbound, Mesh, PeerDown, PeerUp, open_mesh, open_task_nursery
from p2p.net.offload import Offload
from p2p.net.opening import Opening
from p2p.net.player import PlayerSeat
from p2p.net.state import (
    _create_secret,
    _erase_secret,
    already_played,
    load_identity,
    record_path,
    secret_path,
)
from p2p.net.watch_server import WatchServer
from p2p.record.chain import Record
from p2p.record.store import RecordFile
from p2p.table import effects
from p2p.table.events import Formed, Meshed, NodeEvent, SeatBack, SeatDropped, SeatLeft
from p2p.table.forming import Manifest, table_rule
from p2p.table.game_rule import GameProtocol, GameRule, SeatKeys
from p2p.table.game_rule.shuffle import OffRecord, take_proposal
from p2p.table.lobby import EarlyBuffer, LobbyGate
from p2p.table.seat import SeatDriver, game_of, rule_factory
from p2p.table.session import (
    HEARTBEAT_S,
    AwayClock,
    TableResult,
    TableSession,
    seat_order,
    who,
)

MESH_TIMEOUT_S = 20.0
_WRITE_TYPES = frozenset(WRITES)
_SEND_TYPES = frozenset(SENDS)


class Node(Opening, PlayerSeat):
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
        self.session: TableSession | None = None
        """The record run's policy (p2p/table/session/), once the table is formed."""
        self.store: RecordFile | None = None
        self.my_seat = -1
        self.early = EarlyBuffer()
        self.gate = LobbyGate()
        self.fetches: FetchServer | None = None
        self._lobby_ad: discovery.TableAd | None = None
        self._waiting: trio.CancelScope | None = None
        self._wake_now = False
        self._pace_until = 0.0
        self._announcement: discovery.Announcement | None = None
        self.table_secret: bytes | None = None
        self.driver: SeatDriver | None = None
        self.player: Player | None = None
        self._deciding: int | None = None
        self._nursery: trio.Nursery | None = None
        self._offload = Offload() if cfg.offload else None
        self._said: str | None = None
        self.clock = AwayClock()
        """Time we were away, from the heartbeat (which runs from the lobby on)."""
        self.watch: WatchServer | None = None
        """Our spectators once the record runs (p2p/net/watch_server.py)."""
        self.durable = Durable(lambda: self.store, self._send)
        """The record file's writes; our own entries leave only once on disk."""
        self._slots: tuple[Manifest | None, dict[bytes, int]] = (None, {})
        """The manifest and its slots by identity key (:meth:`_slot_of`)."""
        self._own_sent: dict[bytes, int] = {}
        """Our own entries broadcast so far (signature -> their number, in the order they
        left): a fetch answered on a link leaves out those queued on it already."""
        self._received: tuple[wire.Signed, bytes] | None = None
        """The entry being handed to the session and its bytes as received (canonical:
        :func:`p2p.wire.decode_body` checked it), written as they are, not encoded again."""

    # -- helpers --------------------------------------------------------

    def emit(self, event: NodeEvent) -> None:
        self.cfg.on_event(event)

    def member(self, address: str) -> wire.Member:
        return wire.Member(
            self.cfg.name[: wire.MAX_NAME_LEN],
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
        if self._offload is not None:
            stack.push_async_callback(self._offload.aclose)  # after the tasks below stop
        nursery = await stack.enter_async_context(open_task_nursery())
        nursery.start_soon(self._heartbeat)

        def entries_from(step: int) -> list[wire.Signed]:
            if self.record is None:
                return []
            return self.durable.leaving(self.record.signed_from(step))

        def dropped(peer: bytes, reason: str) -> None:
            self.emit(SeatDropped(**self._who(self._slot_of(peer)), reason=reason))

        def sent_on_link(peer: bytes, signed: wire.Signed) -> bool:
            """Is ``signed`` one of our own entries queued on the link to ``peer`` (the
            current one), so that it reaches the peer ahead of a fetch reply?"""
            conn = mesh.connections.get(peer)
            if conn is None or conn.own_from is None:
                return False
            mark = self._own_sent.get(signed.signature)
            return mark is not None and mark >= conn.own_from

        self.fetches = FetchServer(nursery, mesh, entries_from, dropped, sent_on_link)

    # -- no false blame: away time, a re-fetch before naming anyone --------

    async def _heartbeat(self) -> None:
        """Notice the time this peer itself was away (stopped, suspended, starved)."""
        while True:
            await trio.sleep(HEARTBEAT_S)
            self._do(self.clock.beat(trio.current_time()))

    def bytes_held(self) -> int:
        """Bytes held by this node's own queues and buffers: the mesh's (inbox, outboxes,
        decoders), early messages, and the record's held future entries."""
        held = self.mesh.bytes_held() if self.mesh is not None else 0
        held += self.early.bytes
        if self.record is not None:
            held += self.record.held_bytes()
        return held

    def _slot_of(self, peer: bytes) -> int | None:
        """The slot of ``peer`` in the manifest (``None``: no seat, or no manifest yet);
        looked up in a map made once per manifest (every message asks)."""
        manifest = self.manifest
        if manifest is None:
            return None
        if self._slots[0] is not manifest:
            slots: dict[bytes, int] = {}
            for i, m in enumerate(manifest.seats):
                slots.setdefault(m.identity, i)  # the first, as Manifest.seat_of
            self._slots = (manifest, slots)
        return self._slots[1].get(peer)

    def _seat_order(self) -> tuple[int, ...]:
        """Slots in the drawn seat order (empty before it is drawn)."""
        return seat_order(self.record)

    def _who(self, slot: int | None) -> dict[str, Any]:
        return who(self.manifest, self._seat_order(), slot)

    def _result(self) -> TableResult:
        assert self.session is not None
        return self.session.result(self.store.path if self.store is not None else None)

    def _seat_links(self) -> list[bytes]:
        """The peers we hold a link to that hold a seat (no spectator, no stranger)."""
        mesh = self.mesh
        if mesh is None:
            return []
        return [peer for peer in mesh.connections if self._slot_of(peer) is not None]

    def _linked(self) -> frozenset[int]:
        mesh = self.mesh
        if mesh is None:
            return frozenset()
        slots = (self._slot_of(peer) for peer in mesh.connections)
        return frozenset(s for s in slots if s is not None)

    # -- the session's effects --------------------------------------------

    def _do(self, todo: list[effects.Effect]) -> None:
        """Carry out the session's effects, in order (writes and sends through
        :attr:`durable`: a send waits for the fsync of an own entry written before it)."""
        for fx in todo:
            kind = type(fx)  # the common effects by their exact type: one set look-up each
            if kind in _WRITE_TYPES:
                self.durable.write(fx, self._received)
            elif kind in _SEND_TYPES:
                self.durable.send(fx)
            elif kind is effects.ShowPlayer:
                self._deliver()
            elif kind is effects.Trace:
                if self.cfg.trace is not None:
                    self.cfg.trace(fx.what, fx.step, fx.seat)  # type: ignore[attr-defined]
            else:
                self._do_other(fx)

    def _do_other(self, fx: effects.Effect) -> None:
        """One effect :meth:`_do` did not match by its exact type: events, and the rare
        ones (the effects are final classes, so the writes, sends, traces and screen
        updates are all matched there)."""
        if isinstance(fx, NodeEvent):
            self.emit(fx)
            if isinstance(fx, SeatLeft | SeatBack) and self.player is not None:
                self._mark_bots()  # the table screen shows who a bot plays now
        elif isinstance(fx, effects.Tell):
            if self.player is not None:
                self.player.progress(fx.text)
        elif isinstance(fx, effects.AskEnd):
            self._ask_end(fx)
        elif isinstance(fx, effects.Wake):
            self._wake()

    def _send(self, fx: effects.Effect) -> None:
        """Carry out one of :data:`SENDS`."""
        mesh = self.mesh
        if isinstance(fx, effects.SendOwn):
            self._send_own(fx.kind, fx.accepted)
        elif isinstance(fx, effects.Serve):
            if self.fetches is not None:
                self.fetches.request(fx.peer, fx.msg)  # answered off this loop
        elif mesh is None:
            return
        elif isinstance(fx, effects.Broadcast):
            if fx.skip is None:
                mesh.broadcast(fx.msg)
            elif targets := [  # seats and spectators; strangers get nothing of ours
                p for p, c in mesh.connections.items() if p not in fx.skip and not c.stranger
            ]:
                received = self._received
                if received is not None and received[0] is fx.msg:
                    # the entry just received, on to our spectators: its bytes as they came
                    # (canonical, p2p/wire/schema.py), not encoded again
                    mesh.broadcast_raw(received[1], targets)
                else:
                    mesh.broadcast(fx.msg, targets)
        elif isinstance(fx, effects.Send):
            mesh.send_nowait(fx.peer, fx.msg)
        elif isinstance(fx, effects.SendEach):
            for peer in self._seat_links():  # a refetch: a spectator holds no record
                mesh.send_nowait(peer, fx.msg)

    def _run(self, event: str, *args: Any) -> Any:
        """Give the session an event (its method ``event``); its effects are carried out
        even when it raises."""
        session = self.session
        assert session is not None
        try:
            out = getattr(session, event)(*args)
        finally:
            self._do(session.drain())  # what it queued before it raised, or left queued
        if isinstance(out, list):
            self._do(out)
            out = None
        rec = self.record
        if rec is not None and rec.defer_held and rec.held_ready():
            self._wake()  # a step completed: the record loop offers the held ones before it waits
        return out

    def _offer(self, signed: wire.Signed, via: int | None, persist: bool = True) -> None:
        self._run("offer", signed, via, persist)

    def _take_vote(self, vote: wire.EndVote, via: int) -> None:
        self._run("take_vote", vote, via)

    def _take_fetched(self, msg: wire.Fetched, peer: bytes, via: int) -> None:
        self._run("message", peer, msg)

    def _settle_heads(self, rec: Record) -> bool:
        return bool(self._run("settle_heads"))

    def _ended(self) -> bool:
        return self.session is not None and self.session.ended()

    # -- the record -----------------------------------------------------

    def _new_record(self) -> TableSession:
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
        cfg = self.cfg
        self.session = TableSession(
            self.record,
            self.identity,
            self.my_seat,
            linger_s=cfg.linger_s,
            trace=cfg.trace is not None,
            trace_steps=cfg.trace_steps,
            clock=self.clock,
        )
        return self.session

    async def _play(self, stack: contextlib.AsyncExitStack, fresh: bool) -> TableResult:
        assert self.mesh is not None and self.manifest is not None and self.genesis is not None
        mesh, manifest = self.mesh, self.manifest
        keys = {m.identity for m in manifest.seats}
        # from now on every message of a peer that holds no seat goes to the spectators' server
        self.watch = WatchServer.open(
            mesh,
            self.genesis,
            manifest,
            self.fetches,
            self.emit,
            lambda: self.session.notices.all() if self.session is not None else [],
        )
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
        self.emit(Meshed(connected=len(self._seat_links()), of=len(others)))  # seats only
        up = mesh.inbox.queued_up()  # the session asks those as it takes their link-up
        for peer in self._seat_links():
            if peer not in up:
                mesh.send_nowait(peer, wire.Fetch(manifest.table_id, self.record.step))
        for event in self.early:
            await self._handle(event)
        self.early.clear()
        await self._run_record()
        if self.record.finished or self.session.convicted is not None:  # type: ignore[union-attr]
            # the record is final and we lingered: nothing more needs the table's secrets,
            # and without them the record opens no card we held or received
            _erase_secret(secret_path(self.cfg.state_dir, manifest.table_id))
        return self._result()

    def _send_own(self, kind: str, accepted: Any) -> None:
        """Our own entry, fsynced: send it (through the test hooks of ``behaviour``)."""
        assert self.mesh is not None
        behaviour = self.cfg.behaviour
        if behaviour is not None and hasattr(behaviour, "send_own"):
            behaviour.send_own(self, kind, accepted)
        else:
            mark = self._own_sent[accepted.signed.signature] = len(self._own_sent)
            self.mesh.broadcast(accepted.signed, mark=mark)
        if behaviour is not None and hasattr(behaviour, "after_send"):
            behaviour.after_send(self, kind, accepted)

    async def _handle(self, event: Inbound | PeerUp | PeerDown) -> None:
        rec, manifest = self.record, self.manifest
        assert rec is not None and manifest is not None
        if self.watch is not None and self._slot_of(event.peer) is None:
            self.watch.handle(event)  # a spectator, or a stranger that may become one
            return
        if isinstance(event, PeerUp):
            self._run("peer_up", event.peer, self._linked())
        elif isinstance(event, PeerDown):
            self._run("peer_down", event.peer, event.reason, self._linked())
        elif isinstance(event.message, wire.ShuffleProposal):  # off the record: to the rule
            rule = self._offrecord(game_of(rec))
            slot = self._slot_of(event.peer)
            if rule is not None and slot is not None and event.message.table_id == rec.table_id:
                take_proposal(rule, slot, event.message)
        elif self._slot_of(event.peer) is not None:
            msg = event.message
            if isinstance(msg, wire.Signed) and self._offload is not None:
                # its proof checked in a worker thread first
                await self._offload.prework(game_of(rec), msg, manifest.table_id, rec.keys)
            if isinstance(msg, wire.Signed):
                # its canonical bytes as received are what the record file stores
                self._received = (msg, event.raw)
            try:
                self._run("message", event.peer, msg)
            finally:
                self._received = None

    def _offrecord(self, rule: GameRule | None) -> GameRule | None:
        """``rule``, once given how to send and schedule its off-record work (shuffles
        proposed ahead: p2p/table/game_rule/shuffle.py), if its background work runs."""
        if rule is None or self._offload is None or rule.offrecord is not None:
            return rule
        token = trio.lowlevel.current_trio_token()

        def send(msg: wire.Message) -> None:
            if self.mesh is not None:
                for peer in self._seat_links():
                    self.mesh.send_nowait(peer, msg)

        off = self._offload
        rule.offrecord = OffRecord(token.run_sync_soon, send, off.ahead, off.ahead_checks)
        return rule

    def vote_end(self, slot: int) -> str | None:
        """Sign, persist (fsync) and send our vote to end the table for ``slot``: it owes
        the current step at our head and has had no link to anyone, as we see it, for the
        machine steps' limit.  Returns why not (``None``: voted).  Final: we sign no
        further entry at this table."""
        if self.session is None or self.store is None or self.mesh is None:
            return "the table is not running"
        return self._run("vote", slot, trio.current_time())

    def _wake(self) -> None:
        """Make the record loop look again now (a vote ended the table from a task)."""
        self._wake_now = True
        if self._waiting is not None:
            self._waiting.cancel()

    async def _run_record(self) -> None:
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            try:
                await self._record_loop()
            except TableAbandoned as exc:
                exc.result = self._result()  # who was absent, the table, our record file
                raise
            finally:
                if self.record is not None:
                    self.record.defer_held = False
                self.durable.loop_task = None
                self.durable.settle_now()  # nothing we wrote stays held back, however the loop ended
                self._nursery = None
                nursery.cancel_scope.cancel()

    async def _record_loop(self) -> None:
        mesh, rec, session = self.mesh, self.record, self.session
        assert mesh is not None and rec is not None and session is not None
        if self.cfg.demo_pace_ms > 0:  # think time before our first entry too
            self._pace_until = trio.current_time() + self.cfg.demo_pace_ms / 1000
        self.durable.loop_task = trio.lowlevel.current_task()
        # entries held for a later step are checked in worker threads when it comes
        rec.defer_held = self._offload is not None
        self._run("tell_links", self._linked())
        self._deliver()
        # the loop settles (one fsync in a worker thread, then the held sends) before each
        # of its awaits, so nothing it wrote waits on a wait of its own
        while True:
            self._offrecord(game_of(rec))
            await self._offer_held()
            self._act(ahead=True)
            await self.durable.settle()
            while self._offload is not None and await self._offload.premake(game_of(rec)):
                self._act(ahead=True)  # our own shuffle was made in a worker thread
                await self.durable.settle()
            now = trio.current_time()
            linked = self._linked()  # links to seats: a spectator's is no sign we are not cut off
            watching = self.watch.watching if self.watch is not None else 0  # spectators
            tick = self._run("tick", now, linked, len(linked), watching)
            await self.durable.settle()  # the tick may sign (a lane entry)
            if tick.done:
                return
            deadline = tick.deadline
            if rec.owes(self.my_seat) and self._pace_until > now:
                deadline = min(deadline or self._pace_until, self._pace_until)
            if self._wake_now:  # something ended the table meanwhile: look again now
                self._wake_now = False
                continue
            event = None
            self.durable.flush()  # what the loop took is in the file before it waits
            with trio.move_on_at(deadline if deadline is not None else now + 3600) as waiting:
                self._waiting = waiting
                event = await mesh.inbox.receive()
            self._waiting = None
            if event is not None:
                # take what is already queued too before acting again (batching); entries
                # that arrived together have their proofs checked side by side
                batch = mesh.inbox.drain(event)
                signed = [e.message for e in batch if self._entry_from_seat(e)]
                if self._offload is not None and len(signed) > 1:  # checked side by side
                    await self._offload.prework_many(game_of(rec), signed, rec.table_id, rec.keys)
                for event in batch:
                    await self._handle(event)
                    await self.durable.settle()
                    await self._offer_held()

    async def _offer_held(self) -> None:
        """Offer again the entries held for the record's step (``Record.defer_held``), their
        proofs first checked side by side in worker threads (p2p/net/offload.py)."""
        rec, session = self.record, self.session
        assert rec is not None and session is not None
        while rec.defer_held and rec.held_ready() and not session.ended():
            held = session.take_held()
            if self._offload is not None:
                signed = [s for s, _ in held]
                await self._offload.prework_many(game_of(rec), signed, rec.table_id, rec.keys)
            for signed, via in held:
                self._offer(signed, via)
                await self.durable.settle()

    def _entry_from_seat(self, e: Inbound | PeerUp | PeerDown) -> bool:
        ok = isinstance(e, Inbound) and isinstance(e.message, wire.Signed)
        return ok and self._slot_of(e.peer) is not None  # type: ignore[union-attr]


__all__ = ["Node", "NodeConfig", "NodeError", "TableResult"]
