"""``slaiga bench fuzz``: random, mutated, truncated and byte-at-a-time frames against the
frame decoder, the record, and a live node on loopback.

The rule is h11's (``fuzz/afl-server.py``): whatever bytes arrive, the only
outcomes are decoded messages or the one remote-protocol error
(:class:`p2p.errors.RemoteProtocolError`); a record refuses bad entries with
a protocol error naming the fault (:class:`p2p.errors.P2PError`); a node
drops a bad link and goes on.  Anything else is a bug, and the input that
caused it is reported (hex) so it can be replayed.

Inputs come from a corpus of valid frames of every top-level message type
(handshake, lobby, forming, record, keepalive), each then

* sent whole, or fed to the decoder one byte at a time;
* mutated: bits flipped, bytes replaced, inserted or deleted, the length
  prefix changed, msgpack type bytes swapped, frames spliced together;
* truncated at a random point;
* or replaced by random bytes with a random or plausible length prefix.

Targets:

* **decoder**: :class:`p2p.wire.FrameDecoder` on every input (``--frames``);
* **record**: :meth:`p2p.record.chain.Record.offer` on mutated signed entries of a
  real demo record (a tenth of ``--frames``);
* **live node**: a real opener (:class:`p2p.net.node.Node`) in its lobby on
  loopback; ``--live`` connections each send one input, half before the
  handshake (raw TCP) and half after a real handshake (MAC'd frames, which
  reach the node's message handling).  At the end an honest peer joins and
  the table must form and finish.
"""

from __future__ import annotations

import argparse
import json
import random
import secrets
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio

from bench import help_text
from crypto.identity import IdentityKey
from crypto.seal import SealKey
from p2p import wire
from p2p.errors import P2PError, RemoteProtocolError
from p2p.net import netguard
from p2p.net.mesh import FramedStream, handshake_dialer
from p2p.net.node import Node, NodeConfig
from p2p.record.chain import Record
from p2p.table.demo import Count, DemoProtocol, Echo
from p2p.table.forming import (
    Commit,
    Manifest,
    make_genesis,
    manifest_bytes,
    new_table_id,
    seat_order_commit,
    sign_manifest,
    table_rule,
)
from p2p.table.session import Finished

DEFAULT_FRAMES = 100_000
DEFAULT_LIVE = 2_000
BYTE_AT_A_TIME_SHARE = 0.1
RECORD_SHARE = 0.1
MAX_RANDOM_BYTES = 2048
LIVE_TIMEOUT_S = 600.0
LOOPBACK = "127.0.0.1"
LIVE_PARALLEL = 8
"""Connections to the live node at once (well under its per-address and stranger caps)."""
LINGER_S = 0.2
"""How long a connection waits, after sending its input, for the node to answer or close."""
HANDSHAKE_S = 5.0
MSGPACK_TYPE_BYTES = bytes([0xC0, 0xC2, 0xC3, 0xC4, 0xCC, 0xCD, 0xCE, 0xCF, 0xD9, 0xDC, 0xDE])
SAMPLE_KEPT = 10
"""Offending inputs kept in the report (the count is exact)."""


@dataclass(slots=True)
class TargetReport:
    inputs: int = 0
    byte_at_a_time: int = 0
    accepted: int = 0
    refused: int = 0
    unexpected: int = 0
    samples: list[dict[str, str]] = field(default_factory=list)

    def bad(self, data: bytes, exc: BaseException) -> None:
        self.unexpected += 1
        if len(self.samples) < SAMPLE_KEPT:
            self.samples.append({"input": data.hex(), "error": f"{type(exc).__name__}: {exc}"})

    def to_json(self) -> dict[str, Any]:
        return {
            "inputs": self.inputs,
            "byte_at_a_time": self.byte_at_a_time,
            "accepted": self.accepted,
            "refused": self.refused,
            "unexpected": self.unexpected,
            "samples": self.samples,
        }


# ---------------------------------------------------------------------------
# The corpus and the mutators
# ---------------------------------------------------------------------------


def _demo_table() -> tuple[Record, list[wire.Signed]]:
    """A finished 3-seat demo record and its signed entries (the record target's seed)."""
    keys = [IdentityKey.generate() for _ in range(3)]
    members = tuple(
        wire.Member(f"p{i}", k.public, SealKey.generate().public, f"127.0.0.1:{4000 + i}")
        for i, k in enumerate(keys)
    )
    manifest = Manifest(
        wire.PROTOCOL_VERSION, new_table_id(), "slave", {}, members, 5000, 60_000,
        DemoProtocol(6, 3),
    )  # fmt: skip
    raw = manifest_bytes(manifest)
    genesis = make_genesis(raw, {i: sign_manifest(k, raw) for i, k in enumerate(keys)})
    records = [Record(genesis, table_rule) for _ in keys]
    reveals: dict[int, wire.Body] = {}
    entries: list[wire.Signed] = []
    while not records[0].finished:
        for seat, rec in enumerate(records):
            for kind in sorted(rec.owes(seat)):
                if kind == "commit":
                    body, reveals[seat] = seat_order_commit(rec.table_id, seat)
                elif kind == "reveal":
                    body = reveals[seat]
                else:
                    rule = rec.rule.next_rule
                    body = Count(rule.count + 1) if kind == "count" else Echo(rule.count)
                signed = rec.sign(keys[seat], seat, body).accepted[0].signed
                entries.append(signed)
                for other, peer in enumerate(records):
                    if other != seat:
                        peer.offer(signed)
    return records[0], entries


def corpus(entries: list[wire.Signed], genesis: wire.Genesis) -> list[bytes]:
    """Valid frames of every top-level message type."""
    key, seal = IdentityKey.generate(), SealKey.generate()
    table = new_table_id()
    member = wire.Member("fuzz", key.public, seal.public, "127.0.0.1:4000")
    entry = wire.decode_body(entries[-1].entry, wire.Entry)
    msgs: list[wire.Message] = [
        wire.Hello(wire.HANDSHAKE_VERSION, table, key.public, bytes(32), seal.public, b""),
        wire.Hello(wire.HANDSHAKE_VERSION, table, key.public, bytes(32), seal.public, bytes(32)),
        wire.Auth(bytes(64)),
        wire.Join(member),
        wire.Welcome("slave", {"variant": "classic", "n": 3, "x": True}, 4, (member,)),
        wire.Reject("full", "all seats taken"),
        wire.ManifestOffer(genesis.manifest),
        wire.ManifestSignature(table, 1, bytes(64)),
        genesis,
        wire.Ping(7),
        wire.Pong(7),
        entry,  # type: ignore[list-item]
        *entries[:4],
        wire.Fetch(table, 3),
        wire.Fetched(table, tuple(entries[:3]), True),
        Finished(table, 12, bytes(32)),
        wire.Entry(table, 1, 9, bytes(32), Commit(bytes(32))),
        wire.Entry(table, 1, 9, bytes(32), wire.Sealed(2, b"ciphertext")),
    ]
    return [wire.encode_frame(m) for m in msgs]


def _mutate(rng: random.Random, data: bytes, pool: list[bytes]) -> bytes:
    b = bytearray(data)
    for _ in range(rng.choice((1, 1, 1, 2, 3, 8))):
        op = rng.randrange(8)
        pos = rng.randrange(len(b)) if b else 0
        if op == 0 and b:  # flip a bit
            b[pos] ^= 1 << rng.randrange(8)
        elif op == 1 and b:  # replace a byte
            b[pos] = rng.randrange(256)
        elif op == 2:  # insert bytes
            b[pos:pos] = secrets.token_bytes(rng.randint(1, 4))
        elif op == 3 and b:  # delete bytes
            del b[pos : pos + rng.randint(1, 8)]
        elif op == 4 and b:  # swap in a msgpack type byte
            b[pos] = rng.choice(MSGPACK_TYPE_BYTES)
        elif op == 5 and len(b) >= 4:  # change the length prefix
            n = rng.choice((0, 1, len(b) - 4 + rng.randint(-3, 3), 2**32 - 1, 1 << 20, 1 << 24))
            b[:4] = (n % 2**32).to_bytes(4, "big")
        elif op == 6:  # splice with another frame
            other = rng.choice(pool)
            cut = rng.randrange(len(other) + 1)
            b = b[:pos] + bytearray(other[cut:])
        else:  # duplicate a slice
            b[pos:pos] = b[pos : pos + rng.randint(1, 16)]
    return bytes(b)


def fuzz_input(rng: random.Random, pool: list[bytes]) -> bytes:
    """One input: a valid frame, mutated, truncated, or random bytes."""
    roll = rng.random()
    base = rng.choice(pool)
    if roll < 0.05:
        return base
    if roll < 0.65:
        return _mutate(rng, base, pool)
    if roll < 0.8:
        return base[: rng.randrange(len(base))]
    body = secrets.token_bytes(rng.randint(0, MAX_RANDOM_BYTES))
    n = len(body) if rng.random() < 0.7 else rng.randrange(2**32)
    return n.to_bytes(4, "big") + body


# ---------------------------------------------------------------------------
# Targets
# ---------------------------------------------------------------------------


def _drain(decoder: wire.FrameDecoder, data: bytes, whole: bool, report: TargetReport) -> None:
    chunks = [data] if whole else [data[i : i + 1] for i in range(len(data))]
    for chunk in [*chunks, b""]:
        try:
            report.accepted += len(decoder.feed(chunk))
        except RemoteProtocolError:
            report.refused += 1
            if decoder.broken:
                return


def fuzz_decoder(rng: random.Random, pool: list[bytes], n: int) -> TargetReport:
    report = TargetReport()
    for _ in range(n):
        data = fuzz_input(rng, pool)
        whole = rng.random() >= BYTE_AT_A_TIME_SHARE
        report.inputs += 1
        report.byte_at_a_time += not whole
        try:
            _drain(wire.FrameDecoder(), data, whole, report)
        except Exception as exc:  # anything but the remote-protocol error is a bug
            report.bad(data, exc)
    return report


def fuzz_record(rng: random.Random, entries: list[wire.Signed], genesis, n: int) -> TargetReport:
    """Mutated entry bytes (and signatures) offered to a fresh record, in and out of order."""
    report = TargetReport()
    raws = [s.entry for s in entries]
    for _ in range(n):
        rec = Record(genesis, table_rule)
        victim = rng.randrange(len(entries))
        for signed in entries[:victim]:
            rec.offer(signed)
        original = entries[victim]
        if rng.random() < 0.8:
            forged = wire.Signed(_mutate(rng, original.entry, raws), original.signature)
        else:
            sig = bytearray(original.signature)
            sig[rng.randrange(64)] ^= 1 << rng.randrange(8)
            forged = wire.Signed(original.entry, bytes(sig))
        report.inputs += 1
        try:
            rec.offer(forged)
            report.accepted += 1
        except P2PError:
            report.refused += 1
        except Exception as exc:
            report.bad(forged.entry + forged.signature, exc)
    return report


async def _raw_connection(port: int, _table: bytes, data: bytes) -> None:
    """Send ``data`` as the first bytes of a connection, then read until closed (bounded)."""
    stream = await trio.open_tcp_stream(LOOPBACK, port)
    try:
        with trio.move_on_after(LINGER_S):
            await stream.send_all(data)
            await stream.send_eof()
            while await stream.receive_some(65536):
                pass
    except (trio.BrokenResourceError, OSError):
        pass
    finally:
        await stream.aclose()


async def _after_handshake(port: int, table: bytes, data: bytes) -> None:
    """A real handshake by a stranger, then ``data`` split into frames as sent (MAC'd)."""
    stream = await trio.open_tcp_stream(LOOPBACK, port)
    framed = FramedStream(stream)
    try:
        with trio.move_on_after(HANDSHAKE_S):
            await handshake_dialer(framed, IdentityKey.generate(), table)
        with trio.move_on_after(LINGER_S):
            await framed.send_frame(data if len(data) >= 4 else data + bytes(4))
            while True:
                await framed.receive()
    except Exception:  # the node closing the link is the expected outcome
        pass
    finally:
        await framed.aclose()


async def _live(rng: random.Random, pool: list[bytes], n: int, workdir: Path) -> dict[str, Any]:
    report = TargetReport()
    failure: list[BaseException] = []
    outcome: dict[str, Any] = {}

    def cfg(i: int) -> NodeConfig:
        return NodeConfig(
            name=f"fuzz{i}",
            state_dir=workdir / f"p{i}",
            use_discovery=False,
            demo_steps=4,
            linger_s=2.0,
        )

    opener = Node(cfg(0))
    with trio.fail_after(LIVE_TIMEOUT_S):
        async with trio.open_nursery() as nursery:

            async def run_opener() -> None:
                try:
                    outcome["result"] = await opener.open("slave", 2, {"variant": "classic"})
                except BaseException as exc:  # a crash is what we look for
                    failure.append(exc)
                    raise

            nursery.start_soon(run_opener)
            while opener.mesh is None or opener.mesh.listen_port is None:
                await trio.sleep(0.01)
            port, table = opener.mesh.listen_port, opener.mesh.table_id
            assert table is not None
            inputs = [fuzz_input(rng, pool) for _ in range(n)]
            for first in range(0, n, LIVE_PARALLEL):
                async with trio.open_nursery() as batch:
                    for i in range(first, min(n, first + LIVE_PARALLEL)):
                        attack = _after_handshake if i % 2 else _raw_connection
                        batch.start_soon(attack, port, table, inputs[i])  # type: ignore[arg-type]
                        report.inputs += 1
                if failure:
                    report.bad(b"".join(inputs[first : first + LIVE_PARALLEL]), failure[0])
                    break
            joiner = Node(cfg(1))
            try:
                joined = await joiner.join(peer=opener.mesh.address)
            except BaseException as exc:
                report.bad(b"", exc)
                nursery.cancel_scope.cancel()
                joined = None
    result = outcome.get("result")
    alive = result is not None and joined is not None and result.record.head == joined.record.head
    report.refused = opener.mesh.handshake_failure_count if opener.mesh else 0
    out = report.to_json()
    out.update(
        node_alive=alive,
        strangers_dropped_messages=opener.gate.dropped,
        table_finished=bool(result and result.record.finished),
    )
    return out


def run(frames: int = DEFAULT_FRAMES, live: int = DEFAULT_LIVE, seed: int = 0) -> dict[str, Any]:
    """Run all three targets; the result's ``unexpected`` must be 0."""
    rng = random.Random(seed)
    start = time.perf_counter()
    record, entries = _demo_table()
    pool = corpus(entries, record.genesis)
    decoder = fuzz_decoder(rng, pool, frames)
    rec = fuzz_record(rng, entries, record.genesis, max(1, int(frames * RECORD_SHARE)))
    with tempfile.TemporaryDirectory(prefix="slaiga-fuzz-") as tmp:
        node = trio.run(_live, rng, pool, live, Path(tmp))
    unexpected = decoder.unexpected + rec.unexpected + node["unexpected"]
    return {
        "frames": decoder.inputs + rec.inputs + node["inputs"],
        "seed": seed,
        "decoder": decoder.to_json(),
        "record": rec.to_json(),
        "live_node": node,
        "unexpected": unexpected + (0 if node["node_alive"] else 1),
        "seconds": round(time.perf_counter() - start, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="slaiga bench fuzz", description=help_text(__doc__, True))
    parser.add_argument(
        "--frames", type=int, default=DEFAULT_FRAMES, help="inputs for the frame decoder"
    )
    parser.add_argument(
        "--live", type=int, default=DEFAULT_LIVE, help="connections to a live node on loopback"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the input generator")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    netguard.arm_from_environment()  # tests run it loopback-only
    if args.frames < 1 or args.live < 0:
        parser.error("--frames must be >= 1 and --live >= 0")
    if not args.json:
        print(f"fuzzing: {args.frames} frames, {args.live} live connections...", file=sys.stderr)
    result = run(args.frames, args.live, args.seed)
    if args.json:
        print(json.dumps(result, sort_keys=True))
    else:
        _print(result)
    return 0 if result["unexpected"] == 0 else 1


def _print(result: dict[str, Any]) -> None:
    line: Callable[[str], None] = print
    line(f"inputs: {result['frames']} in {result['seconds']}s (seed {result['seed']})")
    for name in ("decoder", "record", "live_node"):
        r = result[name]
        extra = f", {r['byte_at_a_time']} byte at a time" if r.get("byte_at_a_time") else ""
        line(
            f"  {name}: {r['inputs']} inputs{extra}, {r['accepted']} accepted,"
            f" {r['refused']} refused, {r['unexpected']} unexpected"
        )
        for sample in r["samples"]:
            line(f"    {sample['error']}: {sample['input'][:200]}")
    live = result["live_node"]
    line(f"  live node survived and finished a table: {live['node_alive']}")
    line(f"unexpected: {result['unexpected']} (expected 0)")
