"""Zeroconf lobby: announce and browse Slaiga tables on the LAN.

Tables are DNS-SD services of type ``_slaiga._tcp.local.`` (RFC 6763 over
multicast DNS, RFC 6762).  The TXT record carries what a person needs to pick
a table before connecting to it: protocol version, table id, game, variant,
a digest of the options, seats taken and total, the opener's display name and
the fingerprints of the identities already seated.

python-zeroconf runs its own asyncio event loop in a thread of its own.  This
module never blocks the Trio thread on it: every zeroconf coroutine is
submitted to that loop with :func:`asyncio.run_coroutine_threadsafe`, and its
completion, like every browser callback, comes back into Trio through the
Trio token (``TrioToken.run_sync_soon``).  Browser events reach Trio code
through a bounded memory channel.  No helper threads other than zeroconf's
own loop thread are created, and that one is joined on close.

Interfaces: the caller chooses where mDNS runs (an IPv4 address or an
interface name; ``--interface`` or ``SLAIGA_INTERFACE``).  Tests pass
``127.0.0.1`` (Linux delivers multicast on ``lo``) or an address inside a
network namespace they created.
"""

from __future__ import annotations

import contextlib
import fcntl
import ipaddress
import os
import re
import socket
import struct
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import trio

from p2p.errors import DiscoveryError, InterfaceError, InvalidAdvert
from p2p.net import netguard

if TYPE_CHECKING:
    import asyncio

    from zeroconf import ServiceInfo, ServiceStateChange, Zeroconf
    from zeroconf.asyncio import AsyncServiceBrowser

# zeroconf (and asyncio, which it runs on) is imported by the functions that start or
# talk to it: a peer given --peer HOST:PORT or --no-announce never does, and the import
# costs each peer process a few hundredths of a CPU second (the tests start hundreds)

SERVICE_TYPE = "_slaiga._tcp.local."
ENV_INTERFACE = "SLAIGA_INTERFACE"
ALL_INTERFACES = "all"

MAX_SEATS = 8
"""Largest table any Slaiga game allows; ads claiming more are rejected."""

TABLE_ID_HEX_LEN = 32
"""Table ids are 16 random bytes, shown as 32 hex digits."""

MAX_NAME_BYTES = 48
"""Display names are cut to this many UTF-8 bytes in the TXT record (DNS-SD
keeps each key=value pair under 255 bytes)."""

MAX_SPECTATORS = 16
"""Most spectators a table may allow (as :data:`p2p.table.forming.MAX_SPECTATORS`)."""

MAX_TXT_VALUE_BYTES = 200
RESOLVE_TIMEOUT_MS = 3000
"""How long to wait for a discovered service's SRV/TXT/A records."""

CLOSE_TIMEOUT_S = 3.0
"""Upper bound on goodbye broadcasts and browser cancellation at shutdown."""

EVENT_CHANNEL_SIZE = 256
CALL_TIMEOUT_S = 15.0
"""Upper bound on one call into zeroconf's loop (registering a name probes for ~1-2 s)."""

_GAME_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,31}$")
_HEX_RE = re.compile(r"^[0-9a-f]+$")
_SIOCGIFADDR = 0x8915
_INSTANCE_SAFE = re.compile(r"[^A-Za-z0-9 _-]")
_MAX_INSTANCE_BYTES = 40


@dataclass(frozen=True, slots=True)
class InterfaceSpec:
    """Where zeroconf listens and which addresses a table announces.

    ``bind`` is what python-zeroconf's ``interfaces=`` gets; ``addresses`` are
    the IPv4 addresses put into the A records of our own announcements.
    """

    label: str
    bind: Any
    addresses: tuple[str, ...]


def _ipv4_of_interface(name: str) -> str:
    """IPv4 address of a named interface (SIOCGIFADDR); raises InterfaceError."""
    try:
        socket.if_nametoindex(name)
    except OSError as exc:
        raise InterfaceError(f"no network interface named {name!r}") from exc
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        try:
            packed = fcntl.ioctl(
                sock.fileno(), _SIOCGIFADDR, struct.pack("256s", name.encode()[:15])
            )
        except OSError as exc:
            raise InterfaceError(f"interface {name!r} has no IPv4 address") from exc
    return socket.inet_ntoa(packed[20:24])


def _all_ipv4_addresses() -> tuple[str, ...]:
    """Every non-loopback IPv4 address of this host (for the default interface choice)."""
    import ifaddr  # zeroconf's own dependency

    found: list[str] = []
    for adapter in ifaddr.get_adapters():
        for ip in adapter.ips:
            if isinstance(ip.ip, str) and not ip.ip.startswith("127."):
                found.append(ip.ip)
    return tuple(found) or ("127.0.0.1",)


def resolve_interface(choice: str | None = None) -> InterfaceSpec:
    """Turn ``--interface`` (or ``$SLAIGA_INTERFACE``) into an InterfaceSpec.

    Accepts an IPv4 address, an interface name such as ``lo`` or ``eth1``, or
    ``all``.  Without a choice the environment variable decides, and without
    that every interface is used (the normal case on a real LAN).
    """
    if choice is None:
        choice = os.environ.get(ENV_INTERFACE) or ALL_INTERFACES
    choice = choice.strip()
    if choice == ALL_INTERFACES:
        from zeroconf import InterfaceChoice

        _refuse_in_loopback_mode(choice)
        return InterfaceSpec(ALL_INTERFACES, InterfaceChoice.Default, _all_ipv4_addresses())
    try:
        address = ipaddress.ip_address(choice)
    except ValueError:
        address_text = _ipv4_of_interface(choice)
        _refuse_in_loopback_mode(choice, address_text)
        return InterfaceSpec(choice, [address_text], (address_text,))
    if address.version != 4:
        raise InterfaceError(f"interface {choice!r}: only IPv4 is supported for the lobby")
    _refuse_in_loopback_mode(choice, str(address))
    return InterfaceSpec(choice, [str(address)], (str(address),))


def _refuse_in_loopback_mode(choice: str, address: str | None = None) -> None:
    """In loopback-only mode (tests, :mod:`p2p.net.netguard`) only a loopback interface will do.

    Refusing here gives a clear error at start-up, before zeroconf has opened
    a single socket, instead of refused sends deep inside its thread.
    """
    if not netguard.armed():
        return
    if address is not None and ipaddress.ip_address(address).is_loopback:
        return
    where = choice if address is None else f"{choice} ({address})"
    raise InterfaceError(
        f"interface {where} is not loopback, and this process runs in loopback-only mode"
        f" (${netguard.ENV_LOOPBACK_ONLY})"
    )


def _cut_utf8(text: str, limit: int) -> str:
    data = text.encode("utf-8")[:limit]
    return data.decode("utf-8", errors="ignore")


@dataclass(frozen=True, slots=True)
class TableAd:
    """One announced table, as carried in the TXT record plus SRV/A records."""

    version: int
    table_id: str
    game: str
    variant: str
    options_digest: str
    seats_taken: int
    seats_total: int
    name: str
    fingerprints: tuple[str, ...]
    addresses: tuple[str, ...] = ()
    port: int = 0
    service_name: str = ""
    spectators: int = 0
    """How many spectators may watch (``slaiga watch``); a full table that allows any stays
    announced while it plays."""

    def __post_init__(self) -> None:
        _check_ad_fields(self)

    @property
    def is_full(self) -> bool:
        return self.seats_taken >= self.seats_total

    def to_txt(self) -> dict[str, str]:
        """The TXT properties for this ad (short keys: the record is size limited)."""
        return {
            "v": str(self.version),
            "tid": self.table_id,
            "game": self.game,
            "var": self.variant,
            "opt": self.options_digest,
            "seats": f"{self.seats_taken}/{self.seats_total}",
            "name": _cut_utf8(self.name, MAX_NAME_BYTES),
            "fp": ",".join(self.fingerprints),
            "watch": str(self.spectators),
        }

    @classmethod
    def from_txt(
        cls,
        props: dict[str, str | None],
        addresses: Sequence[str] = (),
        port: int = 0,
        service_name: str = "",
    ) -> TableAd:
        """Parse and validate a TXT record; raises InvalidAdvert naming the bad field."""

        def need(key: str) -> str:
            value = props.get(key)
            if value is None:
                raise InvalidAdvert(f"TXT record lacks {key!r}")
            if len(value.encode()) > MAX_TXT_VALUE_BYTES:
                raise InvalidAdvert(f"TXT field {key!r} is too long")
            return value

        try:
            version = int(need("v"))
        except ValueError as exc:
            raise InvalidAdvert(f"TXT field 'v' is not an integer: {props.get('v')!r}") from exc
        seats = need("seats")
        match = re.fullmatch(r"(\d{1,2})/(\d{1,2})", seats)
        if match is None:
            raise InvalidAdvert(f"TXT field 'seats' is not taken/total: {seats!r}")
        watch = props.get("watch") or "0"  # absent: an older peer, nobody may watch
        if not watch.isdigit() or int(watch) > MAX_SPECTATORS:
            raise InvalidAdvert(f"TXT field 'watch' is not a spectator count: {watch!r}")
        fp_text = need("fp")
        fingerprints = tuple(f for f in fp_text.split(",") if f) if fp_text else ()
        try:
            return cls(
                version=version,
                table_id=need("tid"),
                game=need("game"),
                variant=need("var"),
                options_digest=need("opt"),
                seats_taken=int(match.group(1)),
                seats_total=int(match.group(2)),
                name=need("name"),
                fingerprints=fingerprints,
                addresses=tuple(addresses),
                port=port,
                service_name=service_name,
                spectators=int(watch),
            )
        except InvalidAdvert:
            raise
        except (TypeError, ValueError) as exc:  # pragma: no cover - defensive
            raise InvalidAdvert(f"bad TXT record: {exc}") from exc

    def to_json(self) -> dict[str, Any]:
        return {
            "table_id": self.table_id,
            "game": self.game,
            "variant": self.variant,
            "options_digest": self.options_digest,
            "seats_taken": self.seats_taken,
            "seats_total": self.seats_total,
            "name": self.name,
            "version": self.version,
            "fingerprints": list(self.fingerprints),
            "addresses": list(self.addresses),
            "port": self.port,
            "spectators": self.spectators,
        }


def _check_ad_fields(ad: TableAd) -> None:
    if ad.version < 0:
        raise InvalidAdvert(f"negative protocol version {ad.version}")
    if len(ad.table_id) != TABLE_ID_HEX_LEN or not _HEX_RE.match(ad.table_id):
        raise InvalidAdvert(f"table id {ad.table_id!r} is not {TABLE_ID_HEX_LEN} hex digits")
    if not _GAME_RE.match(ad.game):
        raise InvalidAdvert(f"game {ad.game!r} is not a game name")
    if len(ad.variant) > MAX_TXT_VALUE_BYTES:
        raise InvalidAdvert("variant is too long")
    if ad.options_digest and not _HEX_RE.match(ad.options_digest):
        raise InvalidAdvert(f"options digest {ad.options_digest!r} is not hex")
    if not 1 <= ad.seats_total <= MAX_SEATS:
        raise InvalidAdvert(f"seats total {ad.seats_total} is outside 1..{MAX_SEATS}")
    if not 0 <= ad.seats_taken <= ad.seats_total:
        raise InvalidAdvert(f"seats taken {ad.seats_taken} is outside 0..{ad.seats_total}")
    if len(ad.fingerprints) != ad.seats_taken:
        raise InvalidAdvert(f"{len(ad.fingerprints)} fingerprints for {ad.seats_taken} seats taken")
    for fp in ad.fingerprints:
        if not _HEX_RE.match(fp) or len(fp) > 64:
            raise InvalidAdvert(f"fingerprint {fp!r} is not hex")
    if not 0 <= ad.spectators <= MAX_SPECTATORS:
        raise InvalidAdvert(f"spectators {ad.spectators} is outside 0..{MAX_SPECTATORS}")
    if not 0 <= ad.port <= 65535:
        raise InvalidAdvert(f"port {ad.port} is out of range")


@dataclass(frozen=True, slots=True)
class LobbyEvent:
    """A change seen by a browser: ``kind`` is ``added``, ``updated`` or ``removed``."""

    kind: str
    service_name: str
    ad: TableAd | None


def _instance_label(display: str, table_id: str) -> str:
    """A DNS-SD instance name: readable, unique per table, within DNS label limits."""
    safe = _INSTANCE_SAFE.sub("", display).strip() or "table"
    safe = _cut_utf8(safe, _MAX_INSTANCE_BYTES - 9)
    return f"{safe} {table_id[:8]}"


class Announcement:
    """A table we announce; update seats as they fill, withdraw when full/started/closed."""

    def __init__(self, lobby: Lobby, info: ServiceInfo, ad: TableAd) -> None:
        self._lobby = lobby
        self._info = info
        self.ad = ad
        self.withdrawn = False

    @property
    def service_name(self) -> str:
        """The registered name (zeroconf renames it on a name conflict)."""
        return self._info.name

    async def update(self, ad: TableAd) -> None:
        """Publish a new TXT record (seats taken changed)."""
        if self.withdrawn:
            raise DiscoveryError(f"announcement {self.service_name!r} was already withdrawn")
        self._info = _make_info(self._info.name, ad, self._lobby.spec, self._info.server)
        self.ad = ad
        info = self._info

        async def _update() -> None:
            await (await self._lobby.zeroconf.async_update_service(info))

        await self._lobby.call(_update)

    async def withdraw(self) -> None:
        """Send goodbye records so browsers drop the table; idempotent."""
        if self.withdrawn:
            return
        self.withdrawn = True
        self._lobby._announcements.discard(self)
        info = self._info

        async def _unregister() -> None:
            await (await self._lobby.zeroconf.async_unregister_service(info))

        await self._lobby.call(_unregister)


def _make_info(name: str, ad: TableAd, spec: InterfaceSpec, server: str | None) -> ServiceInfo:
    from zeroconf import ServiceInfo

    return ServiceInfo(
        SERVICE_TYPE,
        name,
        addresses=[socket.inet_aton(a) for a in spec.addresses],
        port=ad.port,
        properties=ad.to_txt(),
        server=server,
    )


@dataclass(slots=True)
class Browser:
    """Tables currently in sight, kept up to date from zeroconf's callbacks.

    ``tables`` is the authoritative snapshot (service name -> ad); ``events``
    is the receive side of the bounded channel fed from zeroconf's thread.
    If a consumer does not drain it, notifications beyond the channel's size
    are dropped (counted in ``dropped``) but ``tables`` stays right.
    """

    lobby: Lobby
    tables: dict[str, TableAd] = field(default_factory=dict)
    invalid: dict[str, str] = field(default_factory=dict)
    dropped: int = 0
    changed: trio.Event = field(default_factory=trio.Event)
    _send: trio.MemorySendChannel[LobbyEvent] | None = None
    events: trio.MemoryReceiveChannel[LobbyEvent] | None = None
    _zc_browser: AsyncServiceBrowser | None = None
    _generation: dict[str, int] = field(default_factory=dict)
    _tasks: set[asyncio.Task[None]] = field(default_factory=set)

    # -- called in zeroconf's loop thread ------------------------------------

    def _on_state_change(
        self,
        zeroconf: Zeroconf,
        service_type: str,
        name: str,
        state_change: ServiceStateChange,
    ) -> None:
        import asyncio

        from zeroconf import ServiceStateChange

        generation = self._generation.get(name, 0) + 1
        self._generation[name] = generation
        if state_change is ServiceStateChange.Removed:
            self.lobby._post(self._deliver, LobbyEvent("removed", name, None))
            return
        kind = "added" if state_change is ServiceStateChange.Added else "updated"
        task = asyncio.ensure_future(self._resolve(zeroconf, name, kind, generation))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _resolve(self, zc: Zeroconf, name: str, kind: str, generation: int) -> None:
        from zeroconf import IPVersion
        from zeroconf.asyncio import AsyncServiceInfo

        info = AsyncServiceInfo(SERVICE_TYPE, name)
        if not await info.async_request(zc, RESOLVE_TIMEOUT_MS):
            return
        if self._generation.get(name) != generation:
            return  # a newer change (e.g. removal) overtook this lookup
        try:
            ad = TableAd.from_txt(
                info.decoded_properties,
                addresses=info.parsed_addresses(IPVersion.V4Only),
                port=info.port or 0,
                service_name=name,
            )
        except InvalidAdvert as exc:
            self.lobby._post(self._deliver_invalid, name, str(exc))
            return
        self.lobby._post(self._deliver, LobbyEvent(kind, name, ad))

    # -- called in the Trio thread --------------------------------------------

    def _deliver(self, event: LobbyEvent) -> None:
        if event.ad is None:
            self.tables.pop(event.service_name, None)
            self.invalid.pop(event.service_name, None)
        else:
            self.tables[event.service_name] = event.ad
        changed, self.changed = self.changed, trio.Event()
        changed.set()
        if self._send is not None:
            try:
                self._send.send_nowait(event)
            except trio.WouldBlock:
                self.dropped += 1
            except (trio.ClosedResourceError, trio.BrokenResourceError):
                pass

    def _deliver_invalid(self, name: str, reason: str) -> None:
        self.invalid[name] = reason

    async def wait_for(
        self, predicate: Callable[[dict[str, TableAd]], bool], timeout: float
    ) -> bool:
        """Wait until ``predicate(tables)`` holds or ``timeout`` seconds pass."""
        with trio.move_on_after(timeout):
            while not predicate(self.tables):
                await self.changed.wait()
            return True
        return predicate(self.tables)

    def find(self, table_id: str) -> TableAd | None:
        for ad in self.tables.values():
            if ad.table_id == table_id:
                return ad
        return None


class Lobby:
    """One zeroconf instance bridged into Trio; open with :func:`open_lobby`."""

    def __init__(self, spec: InterfaceSpec, zeroconf: Zeroconf, token: trio.lowlevel.TrioToken):
        self.spec = spec
        self.zeroconf = zeroconf
        self._token = token
        self._announcements: set[Announcement] = set()
        self._browsers: list[Browser] = []

    # -- the bridge -----------------------------------------------------------

    def _post(self, fn: Callable[..., None], *args: Any) -> None:
        """From zeroconf's thread: run ``fn(*args)`` in the Trio thread."""
        with contextlib.suppress(trio.RunFinishedError):
            self._token.run_sync_soon(fn, *args)

    async def call(self, coro_fn: Callable[[], Any]) -> Any:
        """Run ``coro_fn()`` on zeroconf's asyncio loop and await it from Trio."""
        import asyncio

        loop = self.zeroconf.loop
        if loop is None or loop.is_closed():
            raise DiscoveryError("zeroconf is not running")
        future = asyncio.run_coroutine_threadsafe(coro_fn(), loop)
        done = trio.Event()
        future.add_done_callback(lambda _f: self._post(done.set))
        try:
            with trio.fail_after(CALL_TIMEOUT_S):
                await done.wait()
        except trio.TooSlowError:
            future.cancel()
            raise DiscoveryError(f"zeroconf did not answer within {CALL_TIMEOUT_S:g}s") from None
        except BaseException:
            future.cancel()
            raise
        return future.result()

    # -- announcing -----------------------------------------------------------

    async def announce(self, ad: TableAd) -> Announcement:
        """Register the table; a name conflict renames our instance (RFC 6762 §9)."""
        label = _instance_label(ad.name, ad.table_id)
        server = f"slaiga-{ad.table_id[:12]}-{ad.port}.local."
        info = _make_info(f"{label}.{SERVICE_TYPE}", ad, self.spec, server)

        async def _register() -> None:
            await self.zeroconf.async_register_service(info, allow_name_change=True)

        await self.call(_register)
        announcement = Announcement(self, info, ad)
        self._announcements.add(announcement)
        return announcement

    # -- browsing -------------------------------------------------------------

    async def browse(self) -> Browser:
        """Start watching for tables; the browser lives until the lobby closes."""
        from zeroconf.asyncio import AsyncServiceBrowser

        send, receive = trio.open_memory_channel[LobbyEvent](EVENT_CHANNEL_SIZE)
        browser = Browser(self, _send=send, events=receive)

        async def _start() -> AsyncServiceBrowser:
            return AsyncServiceBrowser(
                self.zeroconf, [SERVICE_TYPE], handlers=[browser._on_state_change]
            )

        browser._zc_browser = await self.call(_start)
        self._browsers.append(browser)
        return browser

    async def scan(self, timeout: float) -> list[TableAd]:
        """Collect the tables seen within ``timeout`` seconds."""
        browser = await self.browse()
        await trio.sleep(timeout)
        return sorted(browser.tables.values(), key=lambda ad: (ad.name, ad.table_id))

    # -- shutdown -------------------------------------------------------------

    async def aclose(self) -> None:
        """Withdraw announcements, stop browsers, close zeroconf and join its thread."""
        with trio.CancelScope(shield=True), trio.move_on_after(CLOSE_TIMEOUT_S):
            for announcement in list(self._announcements):
                with contextlib.suppress(DiscoveryError, RuntimeError):
                    await announcement.withdraw()
            for browser in self._browsers:
                zc_browser = browser._zc_browser
                if zc_browser is not None:

                    async def _cancel(b: AsyncServiceBrowser = zc_browser) -> None:
                        await b.async_cancel()

                    with contextlib.suppress(DiscoveryError, RuntimeError):
                        await self.call(_cancel)
                    for task in list(browser._tasks):
                        self.zeroconf.loop.call_soon_threadsafe(task.cancel)
                if browser._send is not None:
                    browser._send.close()
        # Everything is withdrawn, so close() only stops the engine and joins the thread.
        self.zeroconf.close()


@contextlib.asynccontextmanager
async def open_lobby(interface: str | InterfaceSpec | None = None) -> AsyncIterator[Lobby]:
    """Start zeroconf on the chosen interface; closes it (and joins its thread) on exit."""
    from zeroconf import IPVersion, Zeroconf

    spec = interface if isinstance(interface, InterfaceSpec) else resolve_interface(interface)
    try:
        zc = Zeroconf(interfaces=spec.bind, ip_version=IPVersion.V4Only)
    except OSError as exc:
        raise DiscoveryError(f"cannot start zeroconf on {spec.label}: {exc}") from exc
    lobby = Lobby(spec, zc, trio.lowlevel.current_trio_token())
    try:
        yield lobby
    finally:
        await lobby.aclose()
