"""Discovery over real zeroconf, bound to loopback only (multicast works on Linux ``lo``).

Rules (as in trio-websocket's tests): 127.0.0.1 only, a ``fail_after`` on every
test, and a check that no task or thread is left behind.
"""

from __future__ import annotations

import secrets
import threading

import pytest
import trio

from p2p.errors import InterfaceError, InvalidAdvert
from p2p.net.discovery import ENV_INTERFACE, TableAd, open_lobby, resolve_interface
from tests.p2p._nethelpers import LOOPBACK, assert_no_new_threads, no_leaks

TIMEOUT_S = 20


def make_ad(taken: int = 1, total: int = 4, name: str = "Ann", tid: str | None = None) -> TableAd:
    return TableAd(
        version=1,
        table_id=tid or secrets.token_hex(16),
        game="slave",
        variant="classic",
        options_digest="0badc0de",
        seats_taken=taken,
        seats_total=total,
        name=name,
        fingerprints=tuple(f"{i:02x}" * 8 for i in range(taken)),
        port=40000,
    )


def test_txt_round_trip() -> None:
    ad = make_ad(taken=3, total=6, name="Zoë")
    back = TableAd.from_txt(ad.to_txt(), addresses=["127.0.0.1"], port=ad.port)
    assert back.table_id == ad.table_id
    assert back.name == "Zoë"
    assert (back.seats_taken, back.seats_total) == (3, 6)
    assert back.fingerprints == ad.fingerprints
    assert back.to_json()["seats_total"] == 6


@pytest.mark.parametrize(
    ("key", "value", "words"),
    [
        ("v", "one", "'v'"),
        ("tid", "xyz", "table id"),
        ("game", "Bad Game!", "game"),
        ("seats", "5/4", "seats taken"),
        ("seats", "4", "taken/total"),
        ("seats", "1/99", "seats total"),
        ("fp", "", "fingerprints"),
        ("fp", "zz", "fingerprint"),
        ("opt", "not-hex", "options digest"),
    ],
)
def test_txt_rejects_each_bad_field(key: str, value: str, words: str) -> None:
    props: dict[str, str | None] = dict(make_ad(taken=1).to_txt())
    props[key] = value
    with pytest.raises(InvalidAdvert, match=words):
        TableAd.from_txt(props)


def test_txt_rejects_missing_field() -> None:
    props: dict[str, str | None] = dict(make_ad().to_txt())
    del props["tid"]
    with pytest.raises(InvalidAdvert, match="lacks 'tid'"):
        TableAd.from_txt(props)


def test_resolve_interface(monkeypatch: pytest.MonkeyPatch) -> None:
    assert resolve_interface("lo").addresses == (LOOPBACK,)
    assert resolve_interface(LOOPBACK).bind == [LOOPBACK]
    monkeypatch.setenv(ENV_INTERFACE, LOOPBACK)
    assert resolve_interface(None).addresses == (LOOPBACK,)
    with pytest.raises(InterfaceError, match="no network interface named"):
        resolve_interface("nosuchif0")
    with pytest.raises(InterfaceError, match="IPv4"):
        resolve_interface("::1")


async def test_announce_browse_update_withdraw() -> None:
    with trio.fail_after(TIMEOUT_S):
        async with no_leaks(), open_lobby(LOOPBACK) as opener, open_lobby(LOOPBACK) as watcher:
            browser = await watcher.browse()
            ad = make_ad(taken=1, total=3)
            announcement = await opener.announce(ad)
            assert await browser.wait_for(lambda t: announcement.service_name in t, 8)
            seen = browser.tables[announcement.service_name]
            assert seen.table_id == ad.table_id
            assert seen.addresses == (LOOPBACK,)
            assert seen.port == ad.port
            assert browser.find(ad.table_id) == seen

            fuller = make_ad(taken=2, total=3, tid=ad.table_id)
            await announcement.update(fuller)
            assert await browser.wait_for(
                lambda t: t.get(announcement.service_name, seen).seats_taken == 2, 8
            )
            assert browser.events is not None
            kinds = []
            while True:
                try:
                    kinds.append(browser.events.receive_nowait().kind)
                except trio.WouldBlock:
                    break
            assert kinds[0] == "added" and "updated" in kinds

            await announcement.withdraw()
            assert await browser.wait_for(lambda t: announcement.service_name not in t, 8)
            assert browser.find(ad.table_id) is None


async def test_name_conflict_is_renamed() -> None:
    with trio.fail_after(TIMEOUT_S):
        async with no_leaks(), open_lobby(LOOPBACK) as first, open_lobby(LOOPBACK) as second:
            browser = await first.browse()
            ad = make_ad()
            one = await first.announce(ad)
            assert await browser.wait_for(lambda t: one.service_name in t, 8)
            two = await second.announce(ad)  # same instance name on purpose
            assert two.service_name != one.service_name
            assert await browser.wait_for(
                lambda t: one.service_name in t and two.service_name in t, 8
            )


async def test_close_withdraws_and_joins_thread() -> None:
    """Closing the lobby sends goodbyes (others drop the table) and joins zeroconf's thread."""
    with trio.fail_after(TIMEOUT_S):
        async with no_leaks(), open_lobby(LOOPBACK) as watcher:
            browser = await watcher.browse()
            before = set(threading.enumerate())
            async with open_lobby(LOOPBACK) as opener:
                announcement = await opener.announce(make_ad())
                assert await browser.wait_for(lambda t: announcement.service_name in t, 8)
                # zeroconf's thread is new (a count compared a Trio worker thread that
                # ended meanwhile with zeroconf's, and could come out equal)
                assert set(threading.enumerate()) - before
            assert_no_new_threads(before)
            assert await browser.wait_for(lambda t: announcement.service_name not in t, 8)


async def test_cancelled_lobby_still_closes_cleanly() -> None:
    with trio.fail_after(TIMEOUT_S):
        async with no_leaks():
            with trio.move_on_after(0.3):
                async with open_lobby(LOOPBACK) as lobby:
                    await lobby.announce(make_ad())  # probing takes longer than 0.3 s
                    pytest.fail("announce should have been cancelled")


async def test_scan_sees_only_valid_tables() -> None:
    with trio.fail_after(TIMEOUT_S):
        async with no_leaks(), open_lobby(LOOPBACK) as a, open_lobby(LOOPBACK) as b:
            ad = make_ad(name="Scan")
            await a.announce(ad)
            tables = await b.scan(2.5)
            assert ad.table_id in [t.table_id for t in tables]
