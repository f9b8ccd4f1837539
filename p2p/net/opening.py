"""How a node comes to a table: opening it, joining it, or resuming it (the Trio shell).

* **Lobby.**  The opener listens, announces the table over zeroconf
  (:mod:`p2p.net.discovery`) and admits ``Join`` requests until the seats are
  full, by the lobby's rules (:mod:`p2p.table.lobby`); joiners find it by table id
  (zeroconf) or by ``--peer host:port``.  The lobby is a star around the opener.
* **Forming.**  With every seat taken the opener withdraws the announcement
  and offers the manifest bytes; every seat checks them against what it was
  told (:mod:`p2p.table.signing`), signs them, and the opener assembles the
  genesis (all signatures) and hands it out.
* **Resume.**  A restarted peer reloads its file (a torn tail is cut off by
  :mod:`p2p.record.store`), listens on its manifest address again, and replays
  its entries into a fresh session before it reconnects.

:class:`Opening` is the part of :class:`p2p.net.node.Node` that does this; the node
then runs the record (``Node._play``).
"""

from __future__ import annotations

import contextlib
import math
from typing import TYPE_CHECKING, Any

import trio

from crypto.identity import fingerprint
from p2p import wire
from p2p.errors import ConnectionClosed, HandshakeFailed, NodeError, RemoteProtocolError
from p2p.net import discovery
from p2p.net.mesh import Inbound, Mesh, PeerDown, PeerUp, cannot_reach, parse_address
from p2p.net.state import (
    _load_secret,
    already_played,
    options_digest,
    record_path,
    secret_path,
)
from p2p.record.store import RecordFile
from p2p.table.demo import DemoProtocol
from p2p.table.events import (
    Announced,
    Connecting,
    Forming,
    Joined,
    Listening,
    Resuming,
    Searching,
    Waiting,
    Welcomed,
    Withdrawn,
)
from p2p.table.forming import (
    Manifest,
    genesis_hash,
    make_genesis,
    manifest_bytes,
    new_table_id,
    open_genesis,
    sign_manifest,
    verify_manifest_signature,
)
from p2p.table.game_rule import GameProtocol
from p2p.table.lobby import Verdict
from p2p.table.signing import SignedManifests, offer_problems, play_problem, timeout_problem

if TYPE_CHECKING:
    from p2p.table.session import TableResult

JOIN_TIMEOUT_S = 30.0
FORM_TIMEOUT_S = 60.0
DEFAULT_LOBBY_SCAN_S = 3.0
OPEN_TIMEOUT_S = 1800.0
"""How long an opened table waits for its seats to fill before it closes itself."""


class Opening:
    """Open, join or resume a table, then run its record: the lobby half of
    :class:`p2p.net.node.Node` (a mixin; it uses the node's mesh, config and events)."""

    # what it uses of the node (set by ``Node.__init__``)
    cfg: Any
    identity: Any
    table_seal: Any
    mesh: Mesh | None
    genesis: wire.Genesis | None
    manifest: Manifest | None
    store: RecordFile | None
    my_seat: int
    table_secret: bytes | None
    session: Any

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
                raise NodeError(cannot_reach(address, exc)) from exc
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
        host, port = parse_address(self.manifest.seats[self.my_seat].address)
        async with contextlib.AsyncExitStack() as stack:
            self.cfg.port = port
            await self._open_mesh(stack, self.manifest.table_id, host, port)
            self.table_secret, self.table_seal = _load_secret(
                secret_path(self.cfg.state_dir, self.manifest.table_id)
            )
            self._new_record()
            session = self.session
            assert session is not None
            session.evidence.update(s.signature for s in loaded.entries)  # in the file already
            for signed in loaded.entries:
                self._offer(signed, via=None, persist=False)
            session.reload_votes(loaded.votes, loaded.closed)
            session.reload_notices(loaded.notices)
            if self.cfg.announce_back:  # a person took the seat up again: "Ann is back"
                self._run("back")
            return await self._play(stack, fresh=False)
        raise AssertionError("unreachable")  # pragma: no cover

    # -- the record -----------------------------------------------------


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
