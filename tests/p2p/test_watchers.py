"""Who may watch a table (p2p/table/watchers.py), and how a table says it may be watched.

The whole story over real processes is tests/p2p/test_watch_procs.py; these are the seat's
rules one message at a time."""

from __future__ import annotations

import msgpack
import pytest

from crypto.identity import IdentityKey
from p2p import wire
from p2p.errors import RemoteProtocolError
from p2p.net.discovery import TableAd
from p2p.table.watchers import Decision, WatchGate

TID = bytes(range(16))


def key() -> bytes:
    return IdentityKey.generate().public


def test_watch_admits_up_to_the_manifest_number_then_refuses():
    gate = WatchGate(TID, slots=2)
    a, b, c = key(), key(), key()
    assert gate.judge(a, wire.Watch(TID, "Ann")).decision is Decision.WELCOME
    assert gate.judge(b, wire.Watch(TID, "Bo")).decision is Decision.WELCOME
    full = gate.judge(c, wire.Watch(TID, "Cy"))
    assert full.decision is Decision.REFUSE and full.reason == "full"
    assert "2 spectators already watch" in full.detail
    assert gate.describe(a)["name"] == "Ann" and gate.describe(a)["watching"] == 2
    # one leaves: there is room again
    assert gate.gone(a) == "Ann"
    assert gate.judge(c, wire.Watch(TID, "Cy")).decision is Decision.WELCOME


def test_a_table_that_lets_nobody_watch_refuses_and_another_table_is_gone():
    gate = WatchGate(TID, slots=0)
    v = gate.judge(key(), wire.Watch(TID, "Ann"))
    assert v.decision is Decision.REFUSE and v.reason == "full" and "nobody" in v.detail
    other = WatchGate(TID, slots=4).judge(key(), wire.Watch(bytes(16), "Ann"))
    assert other.decision is Decision.REFUSE and other.reason == "gone"


def test_a_spectator_may_fetch_and_nothing_else():
    gate = WatchGate(TID, slots=4)
    a = key()
    gate.judge(a, wire.Watch(TID, "Ann"))
    assert gate.judge(a, wire.Fetch(TID, 1)).decision is Decision.SERVE
    assert gate.judge(a, wire.Fetch(bytes(16), 1)).decision is Decision.IGNORE
    assert gate.judge(a, wire.Watch(TID, "Ann")).decision is Decision.IGNORE
    cut = gate.judge(a, wire.Signed(b"x" * 10, b"\0" * 64))
    assert cut.decision is Decision.CUT and "sends no 'signed'" in cut.detail
    assert gate.cut == 1


def test_a_stranger_that_asks_nothing_is_cut_and_a_late_joiner_is_told():
    gate = WatchGate(TID, slots=4)
    v = gate.judge(key(), wire.Fetch(TID, 1))
    assert v.decision is Decision.CUT and v.reason == "stranger"
    assert gate.watching == {}
    me = key()
    late = gate.judge(me, wire.Join(wire.Member("Eve", me, key(), "127.0.0.1:1")))
    assert late.decision is Decision.REFUSE and late.reason == "full"
    assert "slaiga watch" in late.detail


def ad(**over) -> TableAd:
    fields = dict(
        version=wire.PROTOCOL_VERSION,
        table_id=TID.hex(),
        game="slave",
        variant="",
        options_digest="ab",
        seats_taken=4,
        seats_total=4,
        name="Ann",
        fingerprints=("aa", "bb", "cc", "dd"),
        port=1234,
    )
    fields.update(over)
    return TableAd(**fields)


def test_the_lobby_announces_how_many_may_watch():
    a = ad(spectators=3)
    back = TableAd.from_txt(a.to_txt(), port=1234)
    assert back.spectators == 3 and back.is_full
    assert back.to_json()["spectators"] == 3
    old = a.to_txt()
    del old["watch"]  # an older peer says nothing: nobody may watch
    assert TableAd.from_txt(old).spectators == 0
    with pytest.raises(Exception, match="watch"):
        TableAd.from_txt({**a.to_txt(), "watch": "99"})


def test_the_manifest_carries_the_spectator_limit():
    from p2p.table.forming import MAX_SPECTATORS, Manifest

    assert "spectators" in Manifest.__dataclass_fields__
    assert MAX_SPECTATORS == 16
    raw = msgpack.packb(["watch", {"table_id": TID, "name": "x" * 200}], use_bin_type=True)
    with pytest.raises(RemoteProtocolError, match="length 200"):
        wire.decode_body(raw, wire.Watch)
