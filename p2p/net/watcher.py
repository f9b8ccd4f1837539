"""Watch a table with no seat: find it, link to its seats, check every entry live.

The Trio shell around :class:`p2p.table.spectator.Spectator` (which checks every
signature, turn and proof exactly as a seat does and keeps only the public view):

* **Finding the table.**  By table id over zeroconf, like ``slaiga join`` (a table that
  lets spectators watch stays announced while it plays, :mod:`p2p.net.discovery`), the
  one watchable table in sight, or ``--peer HOST:PORT``.
* **Links.**  The watcher makes a fresh identity key for this watch alone (it signs
  nothing with it but the handshake), dials one seat and sends ``Watch``; the seat
  answers with the signed genesis (checked: every seat's signature, the table id we
  asked for) or a ``Reject``.  It then links to up to ``links`` seats in all (the
  manifest names their addresses and keys), each redialled after an outage, so one seat
  that goes away or cheats does not blind it.
* **Catching up, then following.**  It fetches the record so far in bounded pieces
  (``Fetch`` from the step it needs), then takes the entries every linked seat relays as
  it accepts them; on a stall it asks again.  Entries may come twice or out of order: the
  record holds future ones and ignores copies.
* **Checking off the loop.**  As a seat does (:mod:`p2p.net.offload`, the very same
  :class:`~p2p.net.offload.Offload`), the costly part of an entry of the step the record
  is at (a shuffle proof, reveal tokens) is checked in a worker thread before the entry is
  offered, side by side for entries that arrived together, so keepalives and the screen
  are not held up by a shuffle step.
* **Who left, who is back.**  The seats pass every signed seat notice on to their
  spectators (p2p/table/notice.py); each is checked (this table, that seat's signature)
  and told once, in the words the players see ("Ann left; a bot now plays their seat").
* **Verdicts.**  The first proven cheat ends the watch (as it ends the game for the
  seats); a forged or foreign entry blames only the link that carried it; a broken chain
  makes it fetch the whole record from that seat and the author, like a seat.

Bounded: each wait has a deadline (no relay and no fetch answer for ``quiet_s`` ends
the watch as lost), and the redial loop ends with the watch.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import trio

from crypto.identity import IdentityKey
from p2p import wire
from p2p.errors import BadNotice, ConnectionClosed, HandshakeFailed, NodeError, P2PError
from p2p.net import discovery
from p2p.net.mesh import Connection, Mesh, cannot_reach, open_mesh
from p2p.net.offload import Offload
from p2p.record.verify import Failure
from p2p.table.events import SeatBack, SeatLeft
from p2p.table.forming import Manifest, genesis_hash, open_genesis, order_at_verdict
from p2p.table.notice import Notices
from p2p.table.session import Finished, Links  # noqa: F401 - registers the seats' messages
from p2p.table.session import who as seat_who
from p2p.table.spectator import Spectator, Update
from p2p.wire.events import Inbound, PeerDown, PeerUp

DEFAULT_LINKS = 2
"""Seats a watcher links to at once: one more than needed, so a seat that leaves or
withholds entries does not blind it."""
GENESIS_WITHIN_S = 10.0
"""How long the first seat may take to answer ``Watch``."""
QUIET_S = 120.0
"""With no entry, relay or fetch answer for this long (and the table not over), the
watch ends as lost."""
REFETCH_S = 2.0
"""With no progress for this long, ask every linked seat for the record again."""
FORMED_POLL_S = 0.5
"""How often a seat still in its lobby is asked again whether its table has formed."""
FULL_RETRY_S = 15.0
"""How long a seat that says its table is full is asked again (it may be forming)."""
FORM_WAIT_S = 300.0
"""How long to wait for a table still in its lobby to form."""
FINISHED_LINGER_S = 1.0
"""Once the game is over, how long to wait for the entries still in flight (none are
needed; this only lets a late verdict of the last step arrive)."""


class WatchError(NodeError):
    """The table could not be watched (not found, refused, lost): one line for a person."""


@dataclass(slots=True)
class WatchConfig:
    """How ``slaiga watch`` runs."""

    name: str = "a spectator"
    interface: str | None = None
    table_id: str | None = None
    peer: str | None = None
    scan_s: float = 3.0
    links: int = DEFAULT_LINKS
    quiet_s: float = QUIET_S
    form_wait_s: float = FORM_WAIT_S
    keepalive_interval: float = 1.0
    keepalive_dead: float = 5.0
    on_update: Callable[[Spectator, Update], None] = field(default=lambda s, u: None)
    """Called after every envelope offered (the display draws from the spectator)."""
    on_note: Callable[[str], None] = field(default=lambda text: None)
    """Progress in player words (found, linked, a link lost)."""
    on_seat: Callable[[Spectator, SeatLeft | SeatBack], None] = field(default=lambda s, e: None)
    """A player left (a bot plays the seat now) or is back: the event the seats tell their
    players, from a checked seat notice (once per notice, the latest of its seat only)."""
    offload: bool = True
    """Check shuffle proofs and tokens in worker threads, as a seat does (p2p/net/offload.py)."""
    trace: Callable[[int, float], None] | None = None
    """Benchmark hook: (step, monotonic time) as each record step completes here."""


@dataclass(slots=True)
class WatchResult:
    """How the watch ended: the spectator (its record, view and verdict) and the table."""

    spectator: Spectator
    manifest: Manifest
    junk: list[str] = field(default_factory=list)
    """Why envelopes were dropped that no seat answers for (a link's fault, never a seat's)."""

    def summary(self) -> dict:
        """What ``slaiga watch --json`` prints."""
        s, m = self.spectator, self.manifest
        verdict = s.verdict
        order = order_at_verdict(s.seat_order or (), verdict.step if verdict else None)
        order = order or tuple(range(m.n_seats))
        result = s.result() or {}
        culprit = None
        if verdict is not None and verdict.culprit is not None and verdict.culprit in order:
            culprit = order.index(verdict.culprit)
        out = {
            "table_id": m.table_id.hex(),
            "game": m.game,
            "options": dict(m.options),
            "seats": [m.seats[slot].name for slot in order],
            "ranking": list(result.get("ranking", [])),
            "scores": list(result.get("scores", [])),
            "state_hash": result.get("state_hash"),
            "record_head": s.head.hex(),
            "steps": s.step - 1,
            "finished": s.record.finished and verdict is None,
            "entries": s.entries,
            "proofs": s.proofs,
            "culprit": culprit,
            "culprit_name": m.seats[verdict.culprit].name
            if verdict is not None and verdict.culprit is not None
            else None,
        }
        if verdict is not None:
            out["cheat"] = {"kind": verdict.kind, "step": verdict.step, "reason": verdict.message}
        return out


class Watcher:
    """One watch of one table (see the module docstring); :meth:`run` does it all."""

    def __init__(self, cfg: WatchConfig) -> None:
        self.cfg = cfg
        self.identity = IdentityKey.generate()
        self.mesh: Mesh | None = None
        self.spectator: Spectator | None = None
        self.manifest: Manifest | None = None
        self.genesis: wire.Genesis | None = None
        self.junk: list[str] = []
        self._progress_at = 0.0
        self._asked_at = 0.0
        self._linked: set[bytes] = set()
        self._fork_fetches: set[tuple[bytes, int]] = set()
        self.refused: dict[str, str] = {}
        self.offload = Offload() if cfg.offload else None
        """Checks proofs ahead in worker threads (``None``: on the event loop)."""
        self.notices: Notices | None = None
        """The seat notices told so far (checked; one per seat and number)."""
        self.ignored: dict[str, int] = {}
        """Messages from seats that are none of a spectator's business, by tag (a seat should
        send it none but entries, fetched pieces, notices and its own bookkeeping)."""

    # ---- finding the table ---------------------------------------------------------------

    async def _find(self) -> tuple[str, str | None, bytes | None]:
        """(address, expected fingerprint, expected table id) of a seat to dial first."""
        cfg = self.cfg
        if cfg.peer is not None:
            return cfg.peer, None, None
        async with discovery.open_lobby(cfg.interface) as lobby:
            browser = await lobby.browse()
            self.cfg.on_note(f"looking for tables for {cfg.scan_s:g}s…")
            if cfg.table_id is not None:
                wanted = cfg.table_id.lower()
                await browser.wait_for(
                    lambda t: any(ad.table_id == wanted for ad in t.values()), cfg.scan_s
                )
                ad = browser.find(wanted)
                if ad is None:
                    raise WatchError(f"table {cfg.table_id} is not in sight on the LAN")
            else:
                await trio.sleep(cfg.scan_s)
                ads = [a for a in browser.tables.values() if a.spectators > 0]
                if not ads:
                    raise WatchError(
                        "no table that lets spectators watch is in sight;"
                        " give a TABLE-ID or --peer HOST:PORT"
                    )
                if len(ads) > 1:
                    ids = ", ".join(f"{a.table_id} ({a.game}, {a.name})" for a in ads)
                    raise WatchError(f"{len(ads)} tables in sight, pick one: {ids}")
                ad = ads[0]
        if ad.spectators == 0:
            raise WatchError(f"table {ad.table_id} lets nobody watch")
        if ad.version != wire.PROTOCOL_VERSION:
            raise WatchError(
                f"version mismatch: table {ad.table_id} speaks protocol {ad.version},"
                f" we speak {wire.PROTOCOL_VERSION}"
            )
        if not ad.addresses:
            raise WatchError(f"table {ad.table_id} announced no address")
        expect = ad.fingerprints[0] if ad.fingerprints else None
        return f"{ad.addresses[0]}:{ad.port}", expect, bytes.fromhex(ad.table_id)

    # ---- running ---------------------------------------------------------------------------

    async def run(self) -> WatchResult:
        try:
            return await self._run()
        finally:
            if self.offload is not None:
                await self.offload.aclose()  # its background check, if one runs, ends first

    async def _run(self) -> WatchResult:
        address, expect_fp, table_id = await self._find()
        async with open_mesh(
            self.identity,
            table_id,
            keepalive_interval=self.cfg.keepalive_interval,
            keepalive_dead=self.cfg.keepalive_dead,
        ) as mesh:
            self.mesh = mesh
            await self._first_link(mesh, address, expect_fp)
            assert self.manifest is not None and self.spectator is not None
            self._link_more(mesh)
            await self._follow(mesh)
            mesh.closing = True
            for peer in list(mesh.connections):
                mesh.disconnect(peer, "done watching")
        assert self.spectator is not None and self.manifest is not None
        return WatchResult(self.spectator, self.manifest, self.junk)

    async def _dial_formed(self, mesh: Mesh, address: str, expect_fp: str | None) -> Connection:
        """Dial the seat at ``address`` once its table has formed: a seat still in its lobby
        (its hello names no genesis) is asked again every :data:`FORMED_POLL_S`, for at most
        ``form_wait_s``."""
        self.cfg.on_note(f"connecting to {address}…")
        start = trio.current_time()
        deadline = start + self.cfg.form_wait_s
        told = False
        while True:
            try:
                conn = await mesh.dial(address, expect_fingerprint=expect_fp)
            except HandshakeFailed as exc:
                # a full lobby refuses everyone while its seats sign the manifest: that
                # takes a moment; a table that lets nobody watch keeps saying it
                if exc.kind != "full" or trio.current_time() - start > FULL_RETRY_S:
                    raise WatchError(_refusal(exc.kind, exc.detail)) from exc
                await trio.sleep(FORMED_POLL_S)
                continue
            except ConnectionClosed as exc:
                raise WatchError(cannot_reach(address, exc)) from exc
            if conn.hello_genesis:
                return conn
            conn.abort("the table has not formed yet")
            await conn.closed.wait()
            if trio.current_time() >= deadline:
                raise WatchError(
                    f"the table at {address} did not start within {self.cfg.form_wait_s:g}s"
                )
            if not told:
                told = True
                self.cfg.on_note("the table is still waiting for players; watching once it starts")
            await trio.sleep(FORMED_POLL_S)

    async def _first_link(self, mesh: Mesh, address: str, expect_fp: str | None) -> None:
        conn = await self._dial_formed(mesh, address, expect_fp)
        assert mesh.table_id is not None
        await conn.send(wire.Watch(mesh.table_id, self.cfg.name))
        with trio.move_on_after(GENESIS_WITHIN_S):
            while self.genesis is None:
                event = await mesh.inbox.receive()
                if isinstance(event, PeerDown) and event.peer == conn.peer and conn.closed.is_set():
                    reason = self.refused.get(event.peer.hex(), event.reason)
                    raise WatchError(f"the player at {address} closed the link: {reason}")
                if not isinstance(event, Inbound) or event.peer != conn.peer:
                    continue
                msg = event.message
                if isinstance(msg, wire.Reject):
                    raise WatchError(_refusal(msg.reason, msg.detail))
                if isinstance(msg, wire.Genesis):
                    self._take_genesis(msg, mesh)
        if self.genesis is None:
            raise WatchError(f"the player at {address} did not answer within {GENESIS_WITHIN_S:g}s")
        assert self.manifest is not None
        if self.manifest.seat_of(conn.peer) is None:
            raise WatchError(f"the peer at {address} holds no seat at the table it showed us")
        self._linked.add(conn.peer)
        self._ask(conn.peer)

    def _take_genesis(self, genesis: wire.Genesis, mesh: Mesh) -> None:
        try:
            manifest = open_genesis(genesis)
        except P2PError as exc:
            raise WatchError(f"the table's genesis does not verify: {exc}") from exc
        if mesh.table_id is not None and manifest.table_id != mesh.table_id:
            raise WatchError("the player sent the genesis of another table")
        self.genesis, self.manifest = genesis, manifest
        self.spectator = Spectator(genesis)
        self.notices = Notices(manifest)
        mesh.genesis = genesis_hash(genesis)  # a redial now refuses a seat on another fork
        self.cfg.on_note(
            f"watching {manifest.game} at table {manifest.table_id.hex()}"
            f" ({', '.join(m.name for m in manifest.seats)})"
        )

    def _link_more(self, mesh: Mesh) -> None:
        """Keep links to up to ``links`` seats (the first one included), each redialled after
        an outage for as long as the watch runs."""
        assert self.manifest is not None
        seats = [m for m in self.manifest.seats if m.identity not in self._linked]
        first = next(iter(self._linked))
        for member in self.manifest.seats:
            if member.identity == first:
                mesh.keep_connected(member.identity, member.address)
        for member in seats[: max(0, self.cfg.links - 1)]:
            mesh.keep_connected(member.identity, member.address)

    def _ask(self, peer: bytes, from_step: int | None = None) -> None:
        assert self.mesh is not None and self.manifest is not None and self.spectator is not None
        step = self.spectator.step if from_step is None else from_step
        self.mesh.send_nowait(peer, wire.Fetch(self.manifest.table_id, step))

    async def _follow(self, mesh: Mesh) -> None:
        spectator = self.spectator
        assert spectator is not None
        self._progress_at = trio.current_time()
        ended_at: float | None = None
        last_step = spectator.step
        while True:
            now = trio.current_time()
            if spectator.step != last_step:
                last_step = spectator.step
                self._progress_at = now
            if spectator.finished or spectator.failure is not None:
                if ended_at is None:
                    ended_at = now
                if spectator.verdict is not None or now >= ended_at + FINISHED_LINGER_S:
                    return
            elif now - self._progress_at > self.cfg.quiet_s:
                raise WatchError(
                    f"nothing new from the table for {self.cfg.quiet_s:g}s"
                    f" (step {spectator.step}); it may be over or unreachable"
                )
            if ended_at is not None:
                deadline = ended_at + FINISHED_LINGER_S
            else:
                deadline = max(self._progress_at, self._asked_at) + REFETCH_S
                if deadline <= now:  # a stall: ask every linked seat again
                    self._asked_at = now
                    for peer in list(self._linked):
                        self._ask(peer)
                    deadline = now + REFETCH_S
            event = None
            with trio.move_on_at(deadline):
                event = await mesh.inbox.receive()
            if event is None:
                continue
            # take what is already queued too (as a seat does): entries that arrived
            # together have their proofs checked side by side, off the loop
            batch = [event]
            while True:
                try:
                    batch.append(mesh.inbox.receive_nowait())
                except trio.WouldBlock:
                    break
            await self._check_ahead(
                [e.message for e in batch if isinstance(e, Inbound) and self._entry_from_seat(e)]
            )
            for event in batch:
                await self._handle(event)
                if spectator.verdict is not None:
                    return

    def _entry_from_seat(self, event: Inbound) -> bool:
        assert self.manifest is not None
        return isinstance(event.message, wire.Signed) and (
            self.manifest.seat_of(event.peer) is not None
        )

    async def _check_ahead(self, entries: list[wire.Signed]) -> None:
        """Check the costly part of these entries (those of the step the record is at)
        in worker threads, side by side, before they are offered (p2p/net/offload.py)."""
        spectator = self.spectator
        if self.offload is None or spectator is None or not entries:
            return
        rec = spectator.record
        await self.offload.prework_many(spectator.game, entries, rec.table_id, rec.keys)

    async def _handle(self, event: Inbound | PeerUp | PeerDown) -> None:
        mesh, manifest, spectator = self.mesh, self.manifest, self.spectator
        assert mesh is not None and manifest is not None and spectator is not None
        if isinstance(event, PeerUp):
            if manifest.seat_of(event.peer) is None:
                mesh.disconnect(event.peer, "holds no seat at this table")
                return
            self._linked.add(event.peer)
            mesh.send_nowait(event.peer, wire.Watch(manifest.table_id, self.cfg.name))
            return
        if isinstance(event, PeerDown):
            if event.peer in self._linked:
                self._linked.discard(event.peer)
                if spectator.finished:
                    return  # the seats leave once the game is over
                slot = manifest.seat_of(event.peer)
                name = manifest.seats[slot].name if slot is not None else "a player"
                self.cfg.on_note(f"link to {name} lost ({event.reason}); redialling")
            return
        slot = manifest.seat_of(event.peer)
        if slot is None:
            return
        msg = event.message
        if isinstance(msg, wire.Genesis):
            if msg != self.genesis:
                self.junk.append(f"{manifest.seats[slot].name} sent another genesis")
                mesh.disconnect(event.peer, "another genesis")
                return
            self._ask(event.peer)  # (re)linked: catch up from where we are
        elif isinstance(msg, wire.Signed):
            self._offer(msg, event.peer)
        elif isinstance(msg, wire.Fetched):
            if msg.table_id != manifest.table_id:
                return
            before = spectator.step, spectator.entries
            for signed in msg.entries:
                await self._check_ahead([signed])  # a piece of the record, step by step
                self._offer(signed, event.peer)
                if spectator.verdict is not None:
                    return
            if msg.more and (spectator.step, spectator.entries) != before:
                self._ask(event.peer)
        elif isinstance(msg, wire.Reject):
            self.refused[event.peer.hex()] = _refusal(msg.reason, msg.detail)
            self.cfg.on_note(f"{manifest.seats[slot].name}: {_refusal(msg.reason, msg.detail)}")
        elif isinstance(msg, wire.SeatNotice):
            self._take_notice(msg, slot)
        else:
            # Finished, Links, votes: the seats' business, not ours (counted, by kind)
            self.ignored[msg.TAG] = self.ignored.get(msg.TAG, 0) + 1

    def _take_notice(self, notice: wire.SeatNotice, via: int) -> None:
        """A seat notice a seat passed on: checked and told once, as the seats tell their
        players (only a seat's latest notice: an older one arriving late is no news)."""
        manifest, spectator, notices = self.manifest, self.spectator, self.notices
        assert manifest is not None and spectator is not None and notices is not None
        try:
            new = notices.add(notice)
        except BadNotice as exc:  # the link's fault, never the seat's: a notice proves nothing
            self.junk.append(f"from {manifest.seats[via].name}'s link: {exc}")
            return
        if new and notices.is_latest(notice):
            kind = SeatBack if notice.back else SeatLeft
            order = spectator.seat_order or ()
            event = kind(**seat_who(manifest, order, notice.seat), step=notice.step)
            self.cfg.on_seat(spectator, event)

    def _offer(self, signed: wire.Signed, peer: bytes) -> None:
        spectator = self.spectator
        assert spectator is not None and self.manifest is not None
        update = spectator.offer(signed)
        if update.junk is not None:
            slot = self.manifest.seat_of(peer)
            via = self.manifest.seats[slot].name if slot is not None else "a link"
            self.junk.append(f"from {via}'s link: {update.junk}")
        if update.suspect is not None:
            # a fork: fetch the whole record from the link and from the entry's author
            for who in {peer, self.manifest.seats[update.suspect].identity}:
                key = (who, spectator.step)
                if key not in self._fork_fetches and self.mesh is not None:
                    self._fork_fetches.add(key)
                    self._ask(who, 1)
        if update.completed and self.cfg.trace is not None:
            for step in update.completed:
                self.cfg.trace(step, time.monotonic())
        if update.accepted:
            self._progress_at = trio.current_time()
        self.cfg.on_update(spectator, update)


def _refusal(kind: str, detail: str) -> str:
    prefix = {
        "full": "no room to watch",
        "gone": "table is gone",
        "version": "version mismatch",
        "identity": "identity failed the handshake",
        "busy": "table is busy",
        "stranger": "refused",
        "fork": "another version of the table",
    }.get(kind, kind)
    return f"{prefix}: {detail}" if detail and detail != kind else prefix


async def watch(cfg: WatchConfig) -> WatchResult:
    """Watch one table to its end (or to a proven cheat); see :class:`Watcher`."""
    return await Watcher(cfg).run()


def checked_line(spectator: Spectator) -> str:
    """The running status line: "N entries and N proofs checked, no cheat"."""
    return spectator.status_line()


def verdict_line(failure: Failure, manifest: Manifest, order: tuple[int, ...]) -> str:
    """A proven cheat in player words: who (seat from 1), where, what."""
    culprit = failure.culprit
    who = manifest.seats[culprit].name if culprit is not None else "nobody"
    seat = f" (seat {order.index(culprit) + 1})" if culprit is not None and culprit in order else ""
    where = f" at step {failure.step}" if failure.step is not None else ""
    return f"cheat proven{where}: {who}{seat} broke the rules ({failure.kind}: {failure.message})"
