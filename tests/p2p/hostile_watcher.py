"""Hostile spectators for tests/p2p/test_watch_procs.py, run as a real process on loopback.

``python -m tests.p2p.hostile_watcher HOST:PORT KIND...`` links to the seat at
HOST:PORT once per KIND, asks to watch (``Watch``, named after the kind), waits for
the genesis, then misbehaves:

* ``flood``: sends ``Fetch`` requests as fast as the link takes them;
* ``deaf``: never reads again, while it asks for the whole record a few times a second
  and pings (so that it is not cut for silence);
* ``entries``: sends a signed entry, which a spectator never may.

Each kind prints one JSON line on stdout: whether the seat cut it off, how (a ``Reject``
it read, or the link closing under it), the bytes it sent and the seconds it took.
Every loop is bounded in count and time.
"""

from __future__ import annotations

import json
import sys
import time

import trio

from crypto.identity import IdentityKey
from p2p import wire
from p2p.errors import ConnectionClosed, HandshakeFailed
from p2p.net import netguard
from p2p.net.mesh import FramedStream, handshake_dialer, parse_address
from p2p.table.session import Finished, Links  # noqa: F401 - the seats' messages decode

LIMIT_S = 40.0
FLOOD_FRAMES = 20_000


async def _link(address: str, name: str) -> tuple[FramedStream, bytes]:
    host, port = parse_address(address)
    stream = await trio.open_tcp_stream(host, port)
    framed = FramedStream(stream)
    info = await handshake_dialer(framed, IdentityKey.generate(), None)
    await framed.send(wire.Watch(info.table_id, name))
    with trio.fail_after(10):
        while True:
            decoded = await framed.receive()
            if isinstance(decoded.message, wire.Genesis):
                return framed, info.table_id
            if isinstance(decoded.message, wire.Reject):
                raise HandshakeFailed(decoded.message.reason, decoded.message.detail)


async def _read_to_end(framed: FramedStream, limit: float) -> str:
    """Read what the seat still sends until it closes the link: the reason it gave."""
    with trio.move_on_after(limit):
        try:
            while True:
                decoded = await framed.receive()
                if isinstance(decoded.message, wire.Reject):
                    return f"reject {decoded.message.reason}: {decoded.message.detail}"
        except ConnectionClosed as exc:
            return f"closed: {exc.reason}"
    return ""


async def flood(framed: FramedStream, table_id: bytes) -> tuple[bool, str]:
    try:
        with trio.move_on_after(LIMIT_S):
            for _ in range(FLOOD_FRAMES):
                await framed.send(wire.Fetch(table_id, 1))
    except ConnectionClosed as exc:
        return True, f"closed while sending: {exc.reason}"
    how = await _read_to_end(framed, LIMIT_S)
    return bool(how), how


async def deaf(framed: FramedStream, table_id: bytes) -> tuple[bool, str]:
    start = time.monotonic()
    try:
        with trio.move_on_after(LIMIT_S):
            for i in range(int(LIMIT_S / 0.2)):
                await framed.send(wire.Fetch(table_id, 1))
                if i % 5 == 0:
                    await framed.send(wire.Ping(i))
                await trio.sleep(0.2)
    except ConnectionClosed as exc:
        return True, f"closed after {time.monotonic() - start:.1f}s: {exc.reason}"
    return False, "never cut"


async def entries(framed: FramedStream, table_id: bytes) -> tuple[bool, str]:
    try:
        await framed.send(wire.Signed(b"\x00" * 120, b"\x00" * 64))
    except ConnectionClosed as exc:
        return True, f"closed: {exc.reason}"
    how = await _read_to_end(framed, 15.0)
    return bool(how), how


KINDS = {"flood": flood, "deaf": deaf, "entries": entries}


async def one(address: str, kind: str) -> dict:
    start = time.monotonic()
    try:
        framed, table_id = await _link(address, kind)
    except (HandshakeFailed, ConnectionClosed, OSError, trio.TooSlowError) as exc:
        return {"kind": kind, "linked": False, "error": str(exc)}
    cut, how = await KINDS[kind](framed, table_id)
    await framed.aclose()
    return {
        "kind": kind,
        "linked": True,
        "cut": cut,
        "how": how,
        "sent": framed.bytes_out,
        "seconds": round(time.monotonic() - start, 2),
    }


async def main(address: str, kinds: list[str]) -> None:
    async def run(kind: str) -> None:
        print(json.dumps(await one(address, kind)), flush=True)

    async with trio.open_nursery() as nursery:
        for kind in kinds:
            nursery.start_soon(run, kind)


if __name__ == "__main__":
    netguard.arm_from_environment()
    trio.run(main, sys.argv[1], sys.argv[2:])
