"""An independent verifier written from p2p/RECORD_FORMAT.md alone, run on real record files.

It imports nothing of ours (only hashlib, msgpack and ``cryptography``), so
if the code and the document drift apart this test fails.  The files come
from a real table over loopback TCP.
"""

from __future__ import annotations

import hashlib
import struct
from pathlib import Path

import msgpack
import pytest
import trio
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from tests.p2p._nethelpers import no_leaks
from tests.p2p._tables import run_table

TIMEOUT_S = 30
DEMO_STEPS = 25
MAGIC = b"SLAIGA-RECORD-2\n"
MAX_LEN = 1 << 20
HEADER = 16
P = 2**255 - 19
ORDER = 2**252 + 27742317777372353535851937790883648493
D = -121665 * pow(121666, -1, P) % P


class Bad(Exception):
    pass


def _canonical(raw: bytes) -> list:
    value = msgpack.unpackb(raw, raw=False, use_list=True, strict_map_key=True)
    if msgpack.packb(value, use_bin_type=True) != raw:
        raise Bad("non-canonical body")
    return value


def _body(raw: bytes, tag: str, keys: list[str]) -> dict:
    value = _canonical(raw)
    if value[0] != tag or list(value[1]) != keys:
        raise Bad(f"expected {tag} with fields {keys}")
    return value[1]


def _point(enc: bytes) -> tuple[int, int, int, int] | None:
    """Decode an edwards25519 encoding (RFC 8032 5.1.3), strictly; None if invalid."""
    y = int.from_bytes(enc, "little") & ((1 << 255) - 1)
    sign = enc[31] >> 7
    if y >= P:
        return None
    u, v = (y * y - 1) % P, (D * y * y + 1) % P
    x = u * pow(v, 3, P) * pow(u * pow(v, 7, P), (P - 5) // 8, P) % P
    if v * x * x % P == (-u) % P:
        x = x * pow(2, (P - 1) // 4, P) % P
    if v * x * x % P != u:
        return None
    if x == 0 and sign:
        return None
    if x & 1 != sign:
        x = P - x
    return (x, y, 1, x * y % P)


def _add(a, b):
    (x1, y1, z1, t1), (x2, y2, z2, t2) = a, b
    aa, bb = (y1 - x1) * (y2 - x2) % P, (y1 + x1) * (y2 + x2) % P
    cc, dd = 2 * D * t1 * t2 % P, 2 * z1 * z2 % P
    e, f, g, h = bb - aa, dd - cc, dd + cc, bb + aa
    return (e * f % P, g * h % P, f * g % P, e * h % P)


def _strict_key(enc: bytes) -> None:
    """RECORD_FORMAT.md section 3: canonical, and L times the point is the identity but
    the point is not (so it lies in the prime-order subgroup, never of small order)."""
    pt = _point(enc)
    if pt is None:
        raise Bad("identity key does not decode")
    acc, base, k = (0, 1, 1, 0), pt, ORDER
    while k:
        if k & 1:
            acc = _add(acc, base)
        base, k = _add(base, base), k >> 1
    x, y, z, _ = acc
    identity = x % P == 0 and (y - z) % P == 0
    x, y, z, _ = pt
    if not identity or (x % P == 0 and (y - z) % P == 0):
        raise Bad("identity key is not in the prime-order subgroup")


def _verify(key: bytes, msg: bytes, sig: bytes) -> None:
    try:
        Ed25519PublicKey.from_public_bytes(key).verify(sig, msg)
    except InvalidSignature:
        raise Bad("signature") from None


def _lp(b: bytes) -> bytes:
    return len(b).to_bytes(8, "little") + b


def _seat_order(table_id: bytes, values: dict[int, bytes]) -> list[int]:
    ctx = b"slaiga/v1/seat-order" + table_id
    h = hashlib.sha512(
        b"slaiga/v1/joint-random/seed" + _lp(ctx) + len(values).to_bytes(8, "little")
    )
    for s in sorted(values):
        h.update(s.to_bytes(8, "little") + _lp(values[s]))
    seed, stream, counter = h.digest(), b"", 0

    def take(n: int) -> bytes:
        nonlocal stream, counter
        while len(stream) < n:
            block = b"slaiga/v1/joint-random/stream" + seed + counter.to_bytes(8, "little")
            stream += hashlib.sha512(block).digest()
            counter += 1
        out, stream = stream[:n], stream[n:]
        return out

    def below(m: int) -> int:
        if m == 1:
            return 0
        bits = (m - 1).bit_length()
        while True:
            x = int.from_bytes(take((bits + 7) // 8), "little") & ((1 << bits) - 1)
            if x < m:
                return x

    perm = list(range(len(values)))
    for i in range(len(values) - 1, 0, -1):
        j = below(i + 1)
        perm[i], perm[j] = perm[j], perm[i]
    return perm


def verify_file(path: Path) -> tuple[bytes, list[int]]:
    """Check a record file as RECORD_FORMAT.md says; return (head, seat order).

    Every rule parameter comes from the signed manifest (its ``protocol``)."""
    data = path.read_bytes()
    if data[:16] != MAGIC:
        raise Bad("magic")
    pos, payloads = 16, []
    while pos < len(data):
        if len(data) - pos < HEADER:
            break  # torn tail: a short header
        length, check, hcheck = struct.unpack_from(">I8s4s", data, pos)
        if hashlib.blake2b(data[pos : pos + 12], digest_size=4).digest() != hcheck:
            if not any(data[pos:]):
                break  # torn tail: zero bytes to the end
            raise Bad("corrupt frame header")
        if not 1 <= length <= MAX_LEN:
            raise Bad("frame length")
        end = pos + HEADER + length
        if end > len(data):
            break  # torn tail: the payload runs past the end
        payload = data[pos + HEADER : end]
        if hashlib.blake2b(payload, digest_size=8).digest() != check:
            if end == len(data):
                break  # torn tail: the last payload, written partly
            raise Bad("corrupt frame")
        payloads.append(payload)
        pos = end
    genesis = _body(payloads[0], "genesis", ["manifest", "signatures"])
    raw_manifest = genesis["manifest"]
    manifest = _body(
        raw_manifest,
        "table_manifest",
        [
            "version",
            "table_id",
            "game",
            "options",
            "seats",
            "stall_after_ms",
            "max_wait_ms",
            "protocol",
            "spectators",
        ],
    )
    assert manifest["version"] == 4
    protocol_kind, params = manifest["protocol"]
    if protocol_kind != "demo" or list(params) != ["steps", "round_every"]:
        raise Bad(f"unknown protocol {protocol_kind!r}")
    demo_steps, round_every = params["steps"], params["round_every"]
    keys = [m["identity"] for m in manifest["seats"]]
    n, table_id = len(keys), manifest["table_id"]
    assert len(genesis["signatures"]) == n
    for key in keys:
        _strict_key(key)
    for key, sig in zip(keys, genesis["signatures"], strict=True):
        _verify(key, b"slaiga/v1/manifest" + raw_manifest, sig)
    hashes = [hashlib.sha256(b"slaiga/v1/genesis" + raw_manifest).digest()]
    by_step: dict[int, dict[int, bytes]] = {}
    for payload in payloads[1:]:
        env = _body(payload, "signed", ["entry", "signature"])
        entry = _body(env["entry"], "entry", ["table_id", "seat", "step", "prev", "body"])
        _verify(keys[entry["seat"]], b"slaiga/v1/entry" + env["entry"], env["signature"])
        if entry["table_id"] != table_id:
            raise Bad("wrong table")
        seats = by_step.setdefault(entry["step"], {})
        if entry["seat"] in seats and seats[entry["seat"]] != env["entry"]:
            raise Bad("equivocation")
        seats[entry["seat"]] = env["entry"]
    commitments: dict[int, bytes] = {}
    values: dict[int, bytes] = {}
    order: list[int] = []
    count = turns = 0
    total = 2 + demo_steps
    if by_step and max(by_step) > total:
        raise Bad(f"entries for step {max(by_step)} after the last step {total}")
    for k in range(1, total + 1):
        d = k - 2
        if k <= 2 or (round_every > 0 and d % round_every == 0):
            owed = {s: ("commit" if k == 1 else "reveal" if k == 2 else "echo") for s in range(n)}
        else:
            owed = {order[turns % n]: "count"}
        got = by_step.get(k, {})
        if set(got) != set(owed):
            raise Bad(f"step {k}: entries from {sorted(got)}, owed by {sorted(owed)}")
        h = hashlib.sha256(b"slaiga/v1/step" + k.to_bytes(8, "big") + hashes[-1])
        for s in sorted(got):
            entry = _canonical(got[s])[1]
            kind, fields = entry["body"]
            if entry["prev"] != hashes[-1] or kind != owed[s]:
                raise Bad(f"step {k} seat {s}: chain or kind")
            if kind == "commit":
                commitments[s] = fields["commitment"]
            elif kind == "reveal":
                ctx = b"slaiga/v1/seat-order" + table_id + bytes([s])
                opened = hashlib.sha256(
                    b"slaiga/v1/commit" + _lp(ctx) + fields["nonce"] + _lp(fields["value"])
                ).digest()
                if opened != commitments[s]:
                    raise Bad(f"seat {s}: reveal does not open its commitment")
                values[s] = fields["value"]
            elif kind == "echo" and fields["value"] != count:
                raise Bad("echo value")
            elif kind == "count" and fields["value"] != count + 1:
                raise Bad("count value")
            h.update(bytes([s]) + hashlib.sha256(got[s]).digest())
        if k == 2:
            order = _seat_order(table_id, values)
        elif owed.get(next(iter(owed))) == "count":
            count, turns = count + 1, turns + 1
        hashes.append(h.digest())
    return hashes[-1], order


async def test_independent_verifier_agrees_with_the_peers(tmp_path: Path) -> None:
    with trio.fail_after(TIMEOUT_S):
        async with no_leaks():
            results = await run_table(tmp_path, 3, steps=DEMO_STEPS)
    for r in results:
        head, order = verify_file(r.record_file)
        assert head == r.record.head
        assert tuple(order) == r.seat_order
    # a changed signature byte in a stored entry, with a matching checksum: the signature fails
    path = results[0].record_file
    data = bytearray(path.read_bytes())
    (genesis_len,) = struct.unpack_from(">I", data, 16)
    frame = 16 + HEADER + genesis_len  # the first entry's frame
    (length,) = struct.unpack_from(">I", data, frame)
    data[frame + HEADER + length - 1] ^= 0x01  # last byte of the payload: in the signature
    payload = bytes(data[frame + HEADER : frame + HEADER + length])
    data[frame + 4 : frame + 12] = hashlib.blake2b(payload, digest_size=8).digest()
    data[frame + 12 : frame + 16] = hashlib.blake2b(
        data[frame : frame + 12], digest_size=4
    ).digest()
    path.write_bytes(bytes(data))
    with pytest.raises(Bad, match="signature"):
        verify_file(path)
