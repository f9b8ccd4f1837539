"""An independent verifier written from p2p/RECORD_FORMAT.md alone, run on real record files.

The checker (everything down to :func:`verify_file`) imports nothing of ours (only
hashlib, msgpack and ``cryptography``), so if the code and the document drift apart
this test fails.  The files come from a real table over loopback TCP (a demo record,
folded whole), and from game tables played in process by every seat's real protocol
code and written by the peers' own record writer: one where a seat is lost for good
and the others close a step by absence, with a player's notices (sections 11 and 12),
and one ended by vote (section 10); and closes by absence forged from the first with the
seats' own keys, which only section 12's two-signer rule and 16-round bound refuse.  A game
record is checked in everything but the game's own fold (section 9).
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass, field
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


def _frames(path: Path) -> list[bytes]:
    """The payloads of a record file's frames, a torn tail dropped (section 1)."""
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
    return payloads


VOTE_FIELDS = ["table_id", "seat", "step", "head", "absent", "signature"]
NOTICE_FIELDS = ["table_id", "seat", "number", "step", "back", "signature"]
LANE = ("absent", "present")
MAX_LANE_ROUNDS = 16  # section 12: lane rounds 0 to 15 per step


@dataclass
class Checked:
    """What a file says, checked: the head, the seat order, and the rest of sections
    10 to 12 (for a ``game`` record every check but the game's own fold, section 9)."""

    head: bytes
    order: list[int]
    current: int
    """The first step that never completed (one past the last step)."""
    removed: dict[int, int] = field(default_factory=dict)
    """Slots out by absence (section 12), and the step that closed them out."""
    notices: list[tuple[int, int, int, bool]] = field(default_factory=list)
    """Every notice that holds, as (seat, number, step, back), by seat and number."""
    ended_by_vote: int | None = None
    """The absent slot, when every other seat's vote holds (section 10)."""


def _vote(raw: list, table_id: bytes, keys: list[bytes]) -> dict:
    """An ``end_vote`` body (section 10) whose fields and signature hold."""
    if raw[0] != "end_vote" or list(raw[1]) != VOTE_FIELDS:
        raise Bad("end_vote fields")
    v = raw[1]
    n = len(keys)
    if v["table_id"] != table_id or not v["seat"] < n or not v["absent"] < n:
        raise Bad("vote of another table or seat")
    if v["seat"] == v["absent"]:
        raise Bad("a vote naming its own voter")
    msg = b"slaiga/v1/end" + table_id + v["step"].to_bytes(8, "big") + v["head"]
    _verify(keys[v["seat"]], msg + bytes([v["absent"]]), v["signature"])
    return v


def _notice(raw: list, table_id: bytes, keys: list[bytes]) -> dict:
    """A ``seat_notice`` body (section 11) whose fields and signature hold."""
    if raw[0] != "seat_notice" or list(raw[1]) != NOTICE_FIELDS:
        raise Bad("seat_notice fields")
    v = raw[1]
    if v["table_id"] != table_id or not v["seat"] < len(keys):
        raise Bad("notice of another table or seat")
    msg = (
        b"slaiga/v1/notice"
        + table_id
        + bytes([v["seat"]])
        + v["number"].to_bytes(4, "big")
        + v["step"].to_bytes(8, "big")
        + bytes([int(v["back"])])
    )
    _verify(keys[v["seat"]], msg, v["signature"])
    return v


def _step_hash(k: int, prev: bytes, entries: dict[int, bytes]) -> bytes:
    h = hashlib.sha256(b"slaiga/v1/step" + k.to_bytes(8, "big") + prev)
    for s in sorted(entries):
        h.update(bytes([s]) + hashlib.sha256(entries[s]).digest())
    return h.digest()


def _completing(rounds: dict[int, dict[int, bytes]], at_table: set[int]) -> dict[int, bytes]:
    """The ``absent`` entries of the round of a step that completes (section 12), if any:
    every slot still at the table outside a set ``S`` signed, in that round, ``absent``
    naming exactly ``S``."""
    for r in sorted(rounds):
        said = {s: _canonical(raw)[1]["body"] for s, raw in rounds[r].items()}
        for kind, fields in said.values():
            if kind != "absent":
                continue
            named = set(fields["seats"])
            voters = at_table - named
            if voters and all(
                said.get(s, ("", {}))[0] == "absent" and set(said[s][1]["seats"]) == named
                for s in voters
            ):
                return {s: rounds[r][s] for s in voters}
    return {}


def _two_signers(k: int, rounds: dict[int, dict[int, bytes]], at_table: set[int]) -> None:
    """Section 12: an ``absent`` must leave at least two slots at the table to sign it
    (else one seat alone could end the table for everyone).  A seat already out signs
    nothing that counts."""
    for r, said in sorted(rounds.items()):
        for s, raw in sorted(said.items()):
            kind, fields = _canonical(raw)[1]["body"]
            left = at_table - set(fields["seats"])
            if kind == "absent" and s in at_table and len(left) < 2:
                raise Bad(
                    f"step {k} round {r} seat {s}: absent naming {sorted(fields['seats'])} "
                    f"leaves {len(left)} seat to sign it (at least 2)"
                )


def check_file(path: Path) -> Checked:
    """Check a record file as RECORD_FORMAT.md says.

    Every rule parameter comes from the signed manifest (its ``protocol``).  A ``demo``
    record is folded whole (section 5); a ``game`` record is checked in everything but
    the game's fold (section 9): frames, signatures, equivocation, the hash chain with
    its steps closed by absence (section 12), end votes (section 10) and notices
    (section 11)."""
    payloads = _frames(path)
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
    assert manifest["version"] == 6
    protocol_kind, params = manifest["protocol"]
    if protocol_kind == "demo" and list(params) == ["steps", "round_every"]:
        demo = True
    elif protocol_kind == "game" and list(params) == ["decide_stall_ms", "decide_max_ms"]:
        demo = False
    else:
        raise Bad(f"unknown protocol {protocol_kind!r}")
    keys = [m["identity"] for m in manifest["seats"]]
    n, table_id = len(keys), manifest["table_id"]
    assert len(genesis["signatures"]) == n
    for key in keys:
        _strict_key(key)
    for key, sig in zip(keys, genesis["signatures"], strict=True):
        _verify(key, b"slaiga/v1/manifest" + raw_manifest, sig)
    hashes = [hashlib.sha256(b"slaiga/v1/genesis" + raw_manifest).digest()]
    by_step: dict[int, dict[int, bytes]] = {}
    lanes: dict[int, dict[int, dict[int, bytes]]] = {}  # step -> round -> seat -> entry
    votes: dict[int, bytes] = {}  # voter -> its vote's bytes
    notices: dict[tuple[int, int], bytes] = {}  # (seat, number) -> the notice's bytes
    for i, payload in enumerate(payloads[1:], start=1):
        tag = _canonical(payload)[0]
        if tag == "end_votes":
            if i != len(payloads) - 1:
                raise Bad("a frame after the closing end_votes frame")
            closing = _body(payload, "end_votes", ["votes"])
            raws = [msgpack.packb(v, use_bin_type=True) for v in closing["votes"]]
        elif tag in ("end_vote", "seat_notice"):
            raws = [payload]
        elif tag == "signed":
            raws = []
        else:
            raise Bad(f"a frame of unknown kind {tag!r}")
        for raw in raws:
            value = _canonical(raw)
            if value[0] == "end_vote":
                v = _vote(value, table_id, keys)
                if votes.setdefault(v["seat"], raw) != raw:
                    raise Bad("BadVote: one seat signed two different votes")
            else:
                v = _notice(value, table_id, keys)
                if notices.setdefault((v["seat"], v["number"]), raw) != raw:
                    raise Bad("BadNotice: two different notices under one number")
        if tag != "signed":
            continue
        env = _body(payload, "signed", ["entry", "signature"])
        entry = _body(env["entry"], "entry", ["table_id", "seat", "step", "prev", "body"])
        if entry["table_id"] != table_id:
            raise Bad("wrong table")
        _verify(keys[entry["seat"]], b"slaiga/v1/entry" + env["entry"], env["signature"])
        kind, fields = entry["body"]
        if kind in LANE:
            if demo or list(fields) != ["seats", "round"]:
                raise Bad(f"a lane entry {kind!r} out of place")
            if fields["round"] >= MAX_LANE_ROUNDS:
                raise Bad(
                    f"step {entry['step']} seat {entry['seat']}: {kind} in lane round "
                    f"{fields['round']}, past the last ({MAX_LANE_ROUNDS - 1})"
                )
            seats = lanes.setdefault(entry["step"], {}).setdefault(fields["round"], {})
        else:
            seats = by_step.setdefault(entry["step"], {})
        if entry["seat"] in seats and seats[entry["seat"]] != env["entry"]:
            raise Bad("equivocation")
        seats[entry["seat"]] = env["entry"]
    if demo:
        head, order, current = _demo(by_step, params, n, table_id, hashes)
        removed: dict[int, int] = {}
    else:
        # the fold alone knows what a step owes: a file ended by vote says where it stops
        steps = {_canonical(raw)[1]["step"] for raw in votes.values()}
        until = steps.pop() if len(steps) == 1 else None
        head, order, current, removed = _chain(by_step, lanes, n, table_id, hashes, until)
    checked = Checked(head, order, current, removed)
    for (seat, number), raw in sorted(notices.items()):
        v = _canonical(raw)[1]
        checked.notices.append((seat, number, v["step"], v["back"]))
    if votes:
        said = [_canonical(raw)[1] for raw in votes.values()]
        for v in said:
            # the absent seat owes the current step, which the file does not hold from it
            if v["step"] != current or v["head"] != hashes[current - 1]:
                raise Bad("BadVote: a vote for another step or head")
            if v["absent"] in by_step.get(current, {}):
                raise Bad("BadVote: a vote for a seat whose entry the file holds")
        absent = {v["absent"] for v in said}
        if len(absent) != 1:
            raise Bad("BadVote: votes naming different players")
        (gone,) = absent
        if set(votes) == set(range(n)) - {gone}:
            checked.ended_by_vote = gone
    return checked


def _seat_order_steps(
    k: int, got: dict[int, bytes], n: int, table_id: bytes, state: dict, hashes: list[bytes]
) -> list[int] | None:
    """Steps 1 and 2 (section 5): every slot commits, then opens its commitment; each step
    hashed onto ``hashes``.  The seat order, once step 2 is in."""
    if set(got) != set(range(n)):
        raise Bad(f"step {k}: entries from {sorted(got)}, owed by every seat")
    for s in sorted(got):
        kind, fields = _canonical(got[s])[1]["body"]
        if kind != ("commit" if k == 1 else "reveal"):
            raise Bad(f"step {k} seat {s}: kind")
        if kind == "commit":
            state.setdefault("commitments", {})[s] = fields["commitment"]
        else:
            ctx = b"slaiga/v1/seat-order" + table_id + bytes([s])
            opened = hashlib.sha256(
                b"slaiga/v1/commit" + _lp(ctx) + fields["nonce"] + _lp(fields["value"])
            ).digest()
            if opened != state["commitments"][s]:
                raise Bad(f"seat {s}: reveal does not open its commitment")
            state.setdefault("values", {})[s] = fields["value"]
    hashes.append(_step_hash(k, hashes[-1], got))
    return _seat_order(table_id, state["values"]) if k == 2 else None


def _chained(k: int, entries: dict[int, bytes], prev: bytes) -> None:
    for s, raw in entries.items():
        if _canonical(raw)[1]["prev"] != prev:
            raise Bad(f"step {k} seat {s}: chain")


def _chain(by_step, lanes, n: int, table_id: bytes, hashes: list[bytes], until: int | None):  # type: ignore[no-untyped-def]
    """A game record's chain (sections 5 and 12) without its fold: the seat order, then
    each step closed by the absence round that completes, else by every entry of the
    seats still at the table.  The last step with entries is taken as complete, unless
    the file's end votes name the step it stops at (``until``)."""
    state: dict = {}
    removed: dict[int, int] = {}
    order: list[int] = []
    last = max([*by_step, *lanes], default=0)
    current = last + 1
    if until is not None:
        if last > until:
            raise Bad(f"entries for step {last}, after step {until} that the votes end at")
        last, current = until - 1, until
    for k in range(1, last + 1):
        got = by_step.get(k, {})
        rounds = lanes.get(k, {})
        for r in rounds.values():
            _chained(k, r, hashes[-1])
        _chained(k, got, hashes[-1])
        if k <= 2:
            order = _seat_order_steps(k, got, n, table_id, state, hashes) or order
            continue
        at_table = set(range(n)) - set(removed)
        _two_signers(k, rounds, at_table)
        closing = _completing(rounds, at_table)
        if closing:
            for s in at_table - set(closing):
                removed[s] = k
            hashes.append(_step_hash(k, hashes[-1], closing))
            continue
        contributing = {s: raw for s, raw in got.items() if s in at_table}
        if not contributing:
            current = k
            break
        hashes.append(_step_hash(k, hashes[-1], contributing))
    if until is not None and current == until:
        _chained(until, by_step.get(until, {}), hashes[-1])  # the step the votes end at
    return hashes[-1], order, current, removed


def _demo(by_step, params, n: int, table_id: bytes, hashes: list[bytes]):  # type: ignore[no-untyped-def]
    """A demo record folded whole (section 5)."""
    demo_steps, round_every = params["steps"], params["round_every"]
    state: dict = {}
    order: list[int] = []
    count = turns = 0
    total = 2 + demo_steps
    if by_step and max(by_step) > total:
        raise Bad(f"entries for step {max(by_step)} after the last step {total}")
    for k in range(1, total + 1):
        got = by_step.get(k, {})
        _chained(k, got, hashes[-1])
        if k <= 2:
            order = _seat_order_steps(k, got, n, table_id, state, hashes) or order
            continue
        d = k - 2
        if round_every > 0 and d % round_every == 0:
            owed = {s: "echo" for s in range(n)}
        else:
            owed = {order[turns % n]: "count"}
        if set(got) != set(owed):
            raise Bad(f"step {k}: entries from {sorted(got)}, owed by {sorted(owed)}")
        for s in sorted(got):
            kind, fields = _canonical(got[s])[1]["body"]
            if kind != owed[s]:
                raise Bad(f"step {k} seat {s}: chain or kind")
            if kind == "echo" and fields["value"] != count:
                raise Bad("echo value")
            if kind == "count" and fields["value"] != count + 1:
                raise Bad("count value")
        if "count" in owed.values():
            count, turns = count + 1, turns + 1
        hashes.append(_step_hash(k, hashes[-1], got))
    return hashes[-1], order, total + 1


def verify_file(path: Path) -> tuple[bytes, list[int]]:
    """Check a record file as RECORD_FORMAT.md says; return (head, seat order)."""
    checked = check_file(path)
    return checked.head, checked.order


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
    _fix_checksums(data, frame + HEADER)
    path.write_bytes(bytes(data))
    with pytest.raises(Bad, match="signature"):
        verify_file(path)


# ---- records with a lost seat, notices and end votes (sections 10 to 12) -------------------
# Played in process by every seat's real protocol code (p2p.table.local_table) and written
# by the peers' own record writer (p2p.record.store.RecordFile): the frames are the bytes a
# peer's file holds. Only the checks above read them.

LOST = 2


@pytest.fixture(scope="module")
def lane_table():  # type: ignore[no-untyped-def]
    """A Slave table with ``survive`` on whose seat ``LOST`` goes silent for good: the
    others sign ``absent`` and play on (played once for the tests below)."""
    from p2p.table import local_table

    options = {"games": 1, "survive": True, "absent_after": 30}
    return local_table.run(local_table.new_table("slave", 4, options), lost={LOST: 40})


def _lane_record(tmp_path: Path, table):  # type: ignore[no-untyped-def]
    """``lane_table``'s record file, with seat 1's player leaving and back (its notices)."""
    from p2p.record.store import RecordFile
    from p2p.table.notice import sign_notice
    from p2p.wire import Entry, decode_body

    path = tmp_path / "lane.rec"
    told = []
    with RecordFile.create(path, table.genesis) as f:
        for i, signed in enumerate(table.log):  # every entry, in the order it was signed
            f.append(signed)
            if i in (30, 60):
                step = decode_body(signed.entry, Entry).step  # type: ignore[attr-defined]
                number = len(told)
                notice = sign_notice(
                    table.drivers[1].identity, table.records[0].table_id, 1, number, step, i == 60
                )
                f.append_notice(notice)
                f.append_notice(notice)  # a relayed copy counts once
                told.append((1, number, step, i == 60))
    return path, table, told


def test_the_independent_verifier_follows_a_seat_out_by_absence_and_its_notices(
    tmp_path: Path, lane_table
) -> None:
    from p2p.record.verify import verify_record_file
    from p2p.table.seat import game_of

    path, table, told = _lane_record(tmp_path, lane_table)
    record = table.records[0]
    assert record.finished and LOST in record.removed
    lanes = 0
    for payload in _frames(path)[1:]:
        value = _canonical(payload)
        if value[0] == "signed":
            entry = _canonical(value[1]["entry"])[1]
            lanes += entry["body"][0] in LANE
    assert lanes >= 3  # the file holds the absence lane's entries
    checked = check_file(path)
    assert checked.head == record.head
    assert tuple(checked.order) == game_of(record).order
    assert checked.removed == {LOST: record.removed[LOST]}
    assert checked.notices == told
    ours = verify_record_file(path)  # and our own verifier says the same
    assert ours.ok and ours.absent == (LOST,)
    assert [(n.slot, n.number, n.step, n.back) for n in ours.notices] == told
    # a notice whose signature does not hold fails the file
    data = bytearray(path.read_bytes())
    raw = _notice_bytes(path)
    at = bytes(data).index(raw)
    data[at + len(raw) - 1] ^= 0x01
    _fix_checksums(data, at)
    path.write_bytes(bytes(data))
    with pytest.raises(Bad, match="signature"):
        check_file(path)


def _closed_by(tmp_path: Path, table, bodies: dict) -> Path:  # type: ignore[no-untyped-def]
    """``table``'s record up to the step that closed ``LOST`` out, with that step's entries
    replaced by ``bodies`` (lane bodies by seat), each signed by its seat's own key."""
    from p2p.record.store import RecordFile
    from p2p.wire import Entry, Signed, decode_body, encode_body

    k = table.records[0].removed[LOST]
    entries = [(decode_body(s.entry, Entry), s) for s in table.log]
    prev = next(e.prev for e, _ in entries if e.step == k)  # the hash of step k - 1
    path = tmp_path / f"forged-{len(list(tmp_path.iterdir()))}.rec"
    with RecordFile.create(path, table.genesis) as f:
        for e, signed in entries:
            if e.step < k:
                f.append(signed)
        for seat, body in bodies.items():
            raw = encode_body(Entry(table.records[0].table_id, seat, k, prev, body))
            f.append(Signed(raw, table.drivers[seat].identity.sign(b"slaiga/v1/entry" + raw)))
    return path


def test_the_independent_verifier_holds_absent_to_two_signers_and_sixteen_rounds(
    tmp_path: Path, lane_table
) -> None:
    """Section 12: an ``absent`` leaves at least two slots at the table to sign it, and a
    step has at most 16 lane rounds.  Each forged close below is signed by the seats' own
    keys and chained right; only these two rules tell it from the table's own close."""
    from p2p.record.verify import verify_record_file
    from p2p.table.game_rule.survive import AbsentBody

    k = lane_table.records[0].removed[LOST]
    others = [s for s in range(4) if s != LOST]
    # the table's own close, in round 0 and in the last round allowed: it holds
    for r in (0, MAX_LANE_ROUNDS - 1):
        path = _closed_by(tmp_path, lane_table, {s: AbsentBody((LOST,), r) for s in others})
        assert check_file(path).removed == {LOST: k}
        assert verify_record_file(path).failure.kind == "Unfinished"  # type: ignore[union-attr]
    # the same close one round later: past the last round, an invalid move
    path = _closed_by(
        tmp_path, lane_table, {s: AbsentBody((LOST,), MAX_LANE_ROUNDS) for s in others}
    )
    with pytest.raises(Bad, match="lane round 16, past the last"):
        check_file(path)
    assert verify_record_file(path).failure.culprit == 0  # type: ignore[union-attr]  # ours too
    # two seats naming the other two leave two to sign it: that close holds (abandoned)
    path = _closed_by(tmp_path, lane_table, {s: AbsentBody((2, 3), 0) for s in (0, 1)})
    assert check_file(path).removed == {2: k, 3: k}
    # one seat naming every other would close the step with its own entry alone
    path = _closed_by(tmp_path, lane_table, {0: AbsentBody((1, 2, 3), 0)})
    with pytest.raises(Bad, match="leaves 1 seat to sign it"):
        check_file(path)
    assert verify_record_file(path).failure.culprit == 0  # type: ignore[union-attr]  # ours too


def _notice_bytes(path: Path) -> bytes:
    return next(p for p in _frames(path) if _canonical(p)[0] == "seat_notice")


def _fix_checksums(data: bytearray, payload_at: int) -> None:
    """Make the frame whose payload starts at ``payload_at`` read as intact again."""
    frame = payload_at - HEADER
    (length,) = struct.unpack_from(">I", data, frame)
    payload = bytes(data[payload_at : payload_at + length])
    data[frame + 4 : frame + 12] = hashlib.blake2b(payload, digest_size=8).digest()
    data[frame + 12 : frame + 16] = hashlib.blake2b(
        data[frame : frame + 12], digest_size=4
    ).digest()


def _vote_record(tmp_path: Path, other_step: bool = False) -> tuple[Path, object]:
    """A Slajens table whose seat ``LOST`` vanishes while it owes a step: the two others
    vote to end it (an ``end_vote`` frame, then the closing ``end_votes`` frame)."""
    from p2p.errors import LocalProtocolError
    from p2p.record.store import RecordFile
    from p2p.table import local_table
    from p2p.table.endvote import sign_vote
    from p2p.wire import EndVotes

    table = local_table.new_table("slajens", 3, {"rounds": 1})
    with pytest.raises(LocalProtocolError, match="stuck"):
        local_table.run(table, lost={LOST: 15}, name_absent=False)
    record = table.records[0]
    assert sorted(record.waiting_on()) == [LOST]
    step = record.step + (1 if other_step else 0)
    voters = [s for s in range(3) if s != LOST]
    votes = [
        sign_vote(table.drivers[s].identity, record.table_id, s, step, record.head, LOST)
        for s in voters
    ]
    path = tmp_path / "vote.rec"
    with RecordFile.create(path, table.genesis) as f:
        for signed in record.signed_from(1):  # the steps, then the pending entries
            f.append(signed)
        f.append_vote(votes[0])
        f.close_with_votes(EndVotes(tuple(votes)))
    return path, record


def test_the_independent_verifier_reads_end_votes(tmp_path: Path) -> None:
    from p2p.record.verify import verify_record_file

    path, record = _vote_record(tmp_path)
    checked = check_file(path)
    assert checked.ended_by_vote == LOST
    assert checked.current == record.step and checked.head == record.head  # type: ignore[attr-defined]
    assert verify_record_file(path).ended_by_vote == LOST  # ours agrees
    # votes for a step the record is not at do not hold
    (tmp_path / "other").mkdir()
    bad, _ = _vote_record(tmp_path / "other", other_step=True)
    with pytest.raises(Bad, match="BadVote"):
        check_file(bad)
    # no frame may follow the closing frame: here, a copy of the genesis frame
    data = path.read_bytes()
    (genesis_len,) = struct.unpack_from(">I", data, 16)
    with path.open("ab") as f:
        f.write(data[16 : 16 + HEADER + genesis_len])
    with pytest.raises(Bad, match="after the closing"):
        check_file(path)
