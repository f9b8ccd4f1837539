"""Wire format: frames, schemas, the sans-I/O decoder, and a fuzzer.

The fuzzer follows h11's rule: whatever bytes arrive, fed whole or one byte at
a time, the only outcomes are decoded messages or RemoteProtocolError, and
the decoder keeps working afterwards as documented in FrameDecoder.
"""

from __future__ import annotations

import contextlib
import os
import struct

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crypto.group import FIELD_P
from crypto.identity import IdentityKey
from crypto.seal import SealKey
from crypto.session import FrameMac
from p2p import wire
from p2p.errors import LocalProtocolError, RemoteProtocolError
from p2p.wire import (
    MAX_FRAME_BYTES,
    Auth,
    Decoded,
    Entry,
    Fetch,
    Fetched,
    FrameDecoder,
    Genesis,
    Hello,
    Join,
    Member,
    Ping,
    Pong,
    Reject,
    Sealed,
    Signed,
    Welcome,
    auth_transcript,
    authenticated_frame,
    decode_body,
    encode_body,
    encode_frame,
    fetched_batches,
    frame,
)
from tests.crypto._helpers import SMALL_ORDER

TID = bytes(range(16))
KEY = IdentityKey.from_private_bytes(bytes(range(32))).public
EPH = SealKey.from_private_bytes(bytes(range(1, 33))).public
NONCE = bytes(range(32, 64))
SIG = bytes(64)


def member(i: int = 0) -> Member:
    identity = IdentityKey.from_private_bytes(bytes([i]) * 32).public
    seal_key = SealKey.from_private_bytes(bytes([i + 100]) * 32).public
    return Member(f"player{i}", identity, seal_key, f"127.0.0.{i + 1}:4000")


def sample_messages() -> list:
    entry = Entry(TID, 3, 17, bytes(32), Sealed(1, b"ciphertext"))
    signed = Signed(encode_body(entry), SIG)
    return [
        Hello(3, TID, KEY, NONCE, EPH, b""),
        Hello(3, TID, KEY, NONCE, EPH, bytes(32)),
        Auth(SIG),
        Join(member(1)),
        Welcome("hearts", {"variant": "classic", "to": 100, "jokers": False}, 4, (member(0),)),
        Reject("full", "all 4 seats taken"),
        Genesis(b"manifest", (SIG, SIG)),
        Ping(7),
        Pong(7),
        entry,
        signed,
        Fetch(TID, 5),
        Fetched(TID, (signed, signed), False),
    ]


def stream() -> bytes:
    return b"".join(encode_frame(m) for m in sample_messages())


def test_round_trip_each_message_type():
    for msg in sample_messages():
        raw = encode_body(msg)
        assert decode_body(raw) == msg
        out = FrameDecoder().feed(encode_frame(msg))
        assert out == [Decoded(msg, raw)]


def test_coalesced_and_split_frames():
    msgs = sample_messages()
    data = stream()
    assert [d.message for d in FrameDecoder().feed(data)] == msgs
    dec = FrameDecoder()
    got = []
    for i in range(len(data)):
        got += dec.feed(data[i : i + 1])
    assert [d.message for d in got] == msgs
    assert dec.buffered == 0
    # arbitrary chunkings, deterministic
    for cut in (3, 5, 17, 100):
        dec = FrameDecoder()
        got = []
        for i in range(0, len(data), cut):
            got += dec.feed(data[i : i + cut])
        assert [d.message for d in got] == msgs


def test_raw_bytes_are_the_exact_bytes_sent():
    msg = Hello(3, TID, KEY, NONCE, EPH, b"")
    f = encode_frame(msg)
    (d,) = FrameDecoder().feed(f)
    assert d.raw == f[4:]
    assert frame(d.raw) == f


def test_local_construction_is_validated():
    with pytest.raises(LocalProtocolError, match="Hello.table_id: expected 16 bytes, got 3"):
        Hello(1, b"abc", KEY, NONCE, EPH, b"")
    with pytest.raises(LocalProtocolError, match="Hello.genesis: no alternative"):
        Hello(3, TID, KEY, NONCE, EPH, bytes(5))
    with pytest.raises(LocalProtocolError, match="expected int, got bool"):
        Ping(True)
    with pytest.raises(LocalProtocolError, match="not one of"):
        Reject("bored", "")
    with pytest.raises(LocalProtocolError, match="outside"):
        Ping(1 << 40)
    with pytest.raises(LocalProtocolError):
        Welcome("g", {"": 1}, 2, ())
    with pytest.raises(LocalProtocolError, match="not a top-level"):
        encode_frame(Sealed(1, b""))


def raw_body(tag, fields) -> bytes:
    return msgpack.packb([tag, fields], use_bin_type=True)


def hello_fields(**over):
    f = {
        "version": 3,
        "table_id": TID,
        "identity": KEY,
        "nonce": NONCE,
        "ephemeral": EPH,
        "genesis": b"",
    }
    f.update(over)
    return f


@pytest.mark.parametrize(
    ("body", "match"),
    [
        (raw_body("nope", {}), "(?i)unknown message type 'nope'"),
        (raw_body("hello", {"version": 1}), "missing field"),
        (raw_body("hello", hello_fields(extra=1)), "unexpected field.*'extra'"),
        (raw_body("hello", hello_fields(version="1")), r"hello.version: expected int, got str"),
        (raw_body("hello", hello_fields(version=-1)), "outside"),
        (raw_body("hello", hello_fields(version=True)), "expected int, got bool"),
        (raw_body("hello", hello_fields(nonce=b"x" * 31)), "expected 32 bytes, got 31"),
        (raw_body("hello", hello_fields(nonce="x" * 32)), "expected bytes, got str"),
        (raw_body("reject", {"reason": "full", "detail": "x" * 600}), "length 600"),
        (raw_body("hello", list(hello_fields().values())), "fields must be a map"),
        (msgpack.packb({"hello": 1}), "body must be"),
        (msgpack.packb([1, {}]), "tag must be str"),
        (msgpack.packb(["hello", hello_fields(), 3]), "body must be"),
        (raw_body("hello", hello_fields()) + b"\x00", "trailing bytes"),
        (raw_body("hello", hello_fields())[:-3], "truncated"),
        (b"\xc1", "invalid msgpack"),
        (raw_body("ping", {"nonce": 1.5}), "expected int, got float"),
        (msgpack.packb(["ping", {"nonce": msgpack.ExtType(5, b"ab")}]), "invalid msgpack"),
        (b"\x92\xa4ping\x81\xa5nonce\xcd\x00\x01", "non-canonical"),  # 1 as uint16
        # a map with keys out of schema order is non-canonical
        (
            raw_body("pong", {"nonce": 1}).replace(b"pong", b"ping"),
            None,
        ),
        (msgpack.packb(["ping", {1: 2}]), "invalid msgpack"),  # strict_map_key
        (b"\x92\xa4ping\x81\xa5nonce\xc0", "expected int, got NoneType"),
        (
            raw_body("hello", hello_fields())[:5] + b"\xff" + raw_body("hello", hello_fields())[6:],
            None,
        ),
        # fetched may only hold signed envelopes
        (
            raw_body(
                "fetched", {"table_id": TID, "entries": [["ping", {"nonce": 1}]], "more": False}
            ),
            "unknown Signed type 'ping'",
        ),
        # an entry body must be a record Body type, not a top-level message
        (
            raw_body(
                "entry",
                {
                    "table_id": TID,
                    "seat": 0,
                    "step": 1,
                    "prev": bytes(32),
                    "body": ["ping", {"nonce": 1}],
                },
            ),
            "unknown Body type 'ping'",
        ),
        (
            raw_body(
                "entry",
                {
                    "table_id": TID,
                    "seat": 99,
                    "step": 1,
                    "prev": bytes(32),
                    "body": ["sealed", {"to_seat": 0, "ciphertext": b""}],
                },
            ),
            "entry.seat: 99 outside",
        ),
    ],
)
def test_bad_bodies_raise_one_precise_error(body, match):
    if match is None:
        # the only requirement: it either decodes or raises RemoteProtocolError
        with contextlib.suppress(RemoteProtocolError):
            decode_body(body)
        return
    with pytest.raises(RemoteProtocolError, match=match):
        decode_body(body)
    # and through the framer: error raised, decoder still usable afterwards
    dec = FrameDecoder()
    with pytest.raises(RemoteProtocolError, match=match):
        dec.feed(frame(body) + encode_frame(Ping(1)))
    assert [d.message for d in dec.feed(b"")] == [Ping(1)]


def test_duplicate_map_keys_are_rejected():
    body = b"\x92\xa4ping\x82\xa5nonce\x01\xa5nonce\x02"
    with pytest.raises(RemoteProtocolError):
        decode_body(body)


def test_oversized_length_prefix_breaks_the_stream_immediately():
    dec = FrameDecoder()
    with pytest.raises(RemoteProtocolError, match="frame length"):
        dec.feed(struct.pack(">I", MAX_FRAME_BYTES + 1))
    assert dec.broken
    with pytest.raises(RemoteProtocolError, match="unusable"):
        dec.feed(encode_frame(Ping(1)))


def test_zero_length_frame_is_rejected():
    dec = FrameDecoder()
    with pytest.raises(RemoteProtocolError, match="frame length 0"):
        dec.feed(b"\x00\x00\x00\x00")


def test_good_messages_before_a_bad_frame_are_not_lost():
    dec = FrameDecoder()
    data = encode_frame(Ping(1)) + frame(b"\xc1") + encode_frame(Ping(2))
    assert [d.message for d in dec.feed(data)] == [Ping(1)]
    with pytest.raises(RemoteProtocolError):
        dec.feed(b"")
    assert [d.message for d in dec.feed(b"")] == [Ping(2)]


def test_max_size_frame_fits_a_104_card_shuffle_sized_blob():
    # 104 ciphertexts in, 104 out, ~6 vectors of 104 points/scalars: well under the cap
    blob = os.urandom(2 * 104 * 64 + 6 * 104 * 32)
    msg = Sealed(0, blob)
    entry = Entry(TID, 0, 1, bytes(32), msg)
    f = encode_frame(Signed(encode_body(entry), SIG))
    assert len(f) < MAX_FRAME_BYTES
    (d,) = FrameDecoder().feed(f)
    assert decode_body(d.message.entry) == entry
    # a body at exactly the cap frames; one byte more does not
    frame(b"\x00" * MAX_FRAME_BYTES)
    with pytest.raises(LocalProtocolError):
        frame(b"\x00" * (MAX_FRAME_BYTES + 1))


def test_fetched_batches_split_by_size_and_count():
    signed = Signed(b"x" * 300_000, SIG)
    batches = fetched_batches(TID, [signed] * 7)
    assert sum(len(b.entries) for b in batches) == 7
    assert [b.more for b in batches] == [True] * (len(batches) - 1) + [False]
    for b in batches:
        assert len(encode_frame(b)) <= MAX_FRAME_BYTES
    small = fetched_batches(TID, [Signed(b"e", SIG)] * 1500)
    assert [len(b.entries) for b in small] == [512, 512, 476]
    assert fetched_batches(TID, []) == [Fetched(TID, (), False)]


def test_auth_transcript_is_directional_and_unambiguous():
    h1 = encode_body(Hello(3, TID, KEY, NONCE, EPH, b""))
    h2 = encode_body(Hello(3, TID, KEY, bytes(32), EPH, b""))
    assert auth_transcript(h1, h2) != auth_transcript(h2, h1)
    assert auth_transcript(h1 + h2[:1], h2[1:]) != auth_transcript(h1, h2)  # lengths bound
    with pytest.raises(LocalProtocolError):
        auth_transcript(b"", h1)


def _macs() -> tuple[FrameMac, FrameMac]:
    key = bytes(range(32))
    return FrameMac(key), FrameMac(key)


def test_authenticated_frames_decode_in_order_and_any_change_breaks_the_stream():
    msgs = [Ping(i) for i in range(5)]
    send, recv = _macs()
    stream = b"".join(authenticated_frame(send, encode_frame(m)) for m in msgs)
    dec = FrameDecoder()
    dec.authenticate(recv)
    got = []
    for i in range(len(stream)):  # byte at a time
        got += dec.feed(stream[i : i + 1])
    assert [d.message for d in got] == msgs
    # a flipped bit anywhere in the body or tag, a replayed or dropped frame: refused
    one = [authenticated_frame(FrameMac(bytes(range(32))), encode_frame(m)) for m in msgs]
    cases = {
        "tag bit": one[0][:-1] + bytes([one[0][-1] ^ 1]),
        "body bit": one[0][:6] + bytes([one[0][6] ^ 4]) + one[0][7:],
        "replay": one[0] + one[0],
        "reorder": one[1] + one[0],
        "plain": encode_frame(msgs[0]),
    }
    for name, data in cases.items():
        dec = FrameDecoder()
        dec.authenticate(_macs()[1])
        with pytest.raises(RemoteProtocolError, match="authentication failed|length"):
            dec.feed(data)
            dec.feed(b"")
        assert dec.broken, name
        with pytest.raises(RemoteProtocolError, match="unusable"):
            dec.feed(b"")


# ---------------------------------------------------------------------------
# Fuzzing
# ---------------------------------------------------------------------------


def run_decoder(data: bytes, chunk: int) -> list:
    """Feed data in chunks; collect messages; only RemoteProtocolError may escape feed."""
    dec = FrameDecoder()
    got = []
    for i in range(0, len(data), chunk):
        piece = data[i : i + chunk]
        while True:
            try:
                got += dec.feed(piece)
                break
            except RemoteProtocolError:
                if dec.broken:
                    return got
                piece = b""  # documented: decoder continues with the next frame
    while True:  # drain any error deferred behind good messages
        try:
            more = dec.feed(b"")
        except RemoteProtocolError:
            if dec.broken:
                break
            continue
        got += more
        if not more:
            break
    return got


FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(st.binary(max_size=2000), st.sampled_from([1, 2, 7, 64, 4096]))
def test_fuzz_random_bytes(data, chunk):
    for d in run_decoder(data, chunk):
        assert isinstance(d, Decoded)


@FUZZ
@given(st.binary(max_size=300))
def test_fuzz_random_bodies_in_valid_frames(body):
    if not body:
        return
    got = run_decoder(frame(body) + encode_frame(Ping(9)), 1)
    assert got[-1].message == Ping(9)  # the stream survives a bad body


@FUZZ
@given(st.data())
def test_fuzz_mutated_valid_stream(data):
    s = bytearray(stream())
    for _ in range(data.draw(st.integers(1, 8))):
        i = data.draw(st.integers(0, len(s) - 1))
        s[i] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(s)))
    chunk = data.draw(st.sampled_from([1, 3, 50, 100_000]))
    whole = run_decoder(bytes(s[:cut]), 100_000)
    bytewise = run_decoder(bytes(s[:cut]), chunk)
    # whole vs. chunked feeding give the same messages
    assert [d.raw for d in whole] == [d.raw for d in bytewise]
    for d in whole:
        assert encode_body(d.message) == d.raw


msgpack_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.floats()
    | st.text(max_size=20)
    | st.binary(max_size=40),
    lambda inner: (
        st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner, max_size=5)
    ),
    max_leaves=20,
)


@FUZZ
@given(
    st.sampled_from(
        ["hello", "auth", "join", "welcome", "reject", "entry", "signed", "fetched", "ping"]
    ),
    st.dictionaries(
        st.sampled_from(
            [
                "version",
                "table_id",
                "identity",
                "nonce",
                "signature",
                "member",
                "entries",
                "more",
                "nonce",
                "reason",
                "detail",
                "body",
                "seat",
                "x",
            ]
        ),
        msgpack_values,
        max_size=6,
    ),
)
def test_fuzz_wrong_types_in_known_messages(tag, fields):
    body = raw_body(tag, fields)
    try:
        msg = decode_body(body)
    except RemoteProtocolError:
        return
    assert encode_body(msg) == body


def test_truncated_frames_never_decode():
    data = stream()
    for cut in range(len(data)):
        got = run_decoder(data[:cut], 1)
        full = FrameDecoder().feed(data)
        assert [d.message for d in got] == [d.message for d in full[: len(got)]]


def test_small_order_and_non_canonical_keys_are_refused_on_receipt():
    """Every received identity key (Hello, a Join's or manifest's Member) and seal key is
    checked by the schema, so no code behind the decoder ever sees a weak key."""
    weak_identities = [*SMALL_ORDER, (FIELD_P + 1).to_bytes(32, "little")]
    for key in weak_identities:
        with pytest.raises(RemoteProtocolError, match="identity key refused"):
            decode_body(raw_body("hello", hello_fields(identity=key)))
        good = member(1)
        join = {
            "member": {
                "name": good.name,
                "identity": key,
                "seal_key": good.seal_key,
                "address": good.address,
            }
        }
        with pytest.raises(RemoteProtocolError, match="identity key refused"):
            decode_body(raw_body("join", join))
    small_x25519 = [bytes(32), (1).to_bytes(32, "little"), (FIELD_P - 1).to_bytes(32, "little")]
    for key in small_x25519:
        good = member(2)
        join = {
            "member": {
                "name": good.name,
                "identity": good.identity,
                "seal_key": key,
                "address": good.address,
            }
        }
        with pytest.raises(RemoteProtocolError, match="seal key refused"):
            decode_body(raw_body("join", join))
    assert decode_body(encode_body(Join(member(3)))) == Join(member(3))


def test_a_frame_is_read_into_one_buffer_of_its_announced_length() -> None:
    """The decoder allocates a frame's body once, at its announced length, as soon as the
    length prefix has passed the check, and says how many bytes finish the frame, so a
    reader that asks for no more holds at most one frame (no buffer grown read by read)."""
    body = wire.encode_body(wire.Signed(bytes(100_000), bytes(64)))
    data = wire.frame(body)
    decoder = wire.FrameDecoder()
    assert decoder.wanted() == 4
    decoder.push(data[:3])
    assert decoder.next() is None and decoder.wanted() == 1
    decoder.push(data[3:10])
    assert decoder.next() is None
    assert decoder.buffered == 4 + len(body)  # allocated whole, not grown
    assert decoder.wanted() == len(data) - 10
    for i in range(10, len(data), 4096):
        decoder.push(data[i : i + 4096])
        got = decoder.next()
    assert got is not None and got.raw == body and decoder.buffered == 0


def test_a_length_prefix_over_the_current_limit_breaks_the_stream_before_any_body() -> None:
    decoder = wire.FrameDecoder(4096)
    decoder.push((8192).to_bytes(4, "big"))
    with pytest.raises(RemoteProtocolError, match=r"outside 1\.\.4096"):
        decoder.next()
    assert decoder.buffered == 0
