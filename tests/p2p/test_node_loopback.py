"""Whole tables on loopback: in one Trio run and as separate processes (real TCP, zeroconf)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import trio

from p2p import wire
from p2p.record import store as store_module
from p2p.record.store import load
from tests.p2p._nethelpers import no_leaks
from tests.p2p._procs import CliPeers, run_cli
from tests.p2p._tables import run_table

TIMEOUT_S = 60
DEMO_STEPS = 300


def assert_same_records(results) -> None:
    heads = {r.record.head for r in results}
    assert len(heads) == 1
    assert all(r.record.finished for r in results)
    assert all(r.record.step - 1 == 2 + DEMO_STEPS for r in results)
    orders = {r.seat_order for r in results}
    assert len(orders) == 1 and sorted(next(iter(orders))) == list(range(len(results)))
    # the files on disk hold the same set of signed entries
    contents = {frozenset(s.entry for s in load(r.record_file).entries) for r in results}
    assert len(contents) == 1
    assert not any(r.cheats for r in results)


@pytest.mark.parametrize("n", [3, 8])
async def test_table_in_one_trio_run(tmp_path: Path, n: int) -> None:
    with trio.fail_after(TIMEOUT_S):
        async with no_leaks():
            results = await run_table(tmp_path, n, steps=DEMO_STEPS)
    assert_same_records(results)
    summary = results[0].summary()
    assert [s["fingerprint"] for s in summary["seats"]] == [
        s["fingerprint"] for s in results[-1].summary()["seats"]
    ]


async def test_table_found_through_zeroconf(tmp_path: Path) -> None:
    with trio.fail_after(TIMEOUT_S):
        async with no_leaks():
            results = await run_table(tmp_path, 4, steps=DEMO_STEPS, discovery=True)
    assert_same_records(results)


def test_table_as_separate_processes(tmp_path: Path) -> None:
    """Three `python -m cli.net` processes: open, lobby, join by id, join the only table."""
    common = ["--demo-steps", "200", "--json", "--linger", "10"]
    with CliPeers() as peers:
        peers.start(
            "open",
            "slaiga",
            "--seats",
            "3",
            "--name",
            "Ann",
            "--option",
            "jokers=off",
            "--state-dir",
            str(tmp_path / "a"),
            *common,
        )
        lobby = run_cli("lobby", "--timeout", "3", "--json")
        assert lobby.returncode == 0, lobby.stderr
        tables = [t for t in json.loads(lobby.stdout) if t["name"] == "Ann"]
        assert len(tables) == 1
        table = tables[0]
        assert (table["game"], table["seats_taken"], table["seats_total"]) == ("slaiga", 1, 3)
        peers.start(
            "join", table["table_id"], "--name", "Bob", "--state-dir", str(tmp_path / "b"), *common
        )
        peers.start(
            "join",
            "--peer",
            f"{table['addresses'][0]}:{table['port']}",
            "--name",
            "Cy",
            "--state-dir",
            str(tmp_path / "c"),
            *common,
        )
        outs = peers.results(peers.procs, timeout=60)
    assert len({o["table_id"] for o in outs}) == 1
    assert len({o["record_head"] for o in outs}) == 1
    assert all(o["record_steps"] == 202 for o in outs)
    seats = outs[0]["seats"]
    assert sorted(s["name"] for s in seats) == ["Ann", "Bob", "Cy"]
    assert all(o["seats"] == seats for o in outs)
    assert all(set(s) >= {"name", "fingerprint"} for s in seats)
    # every option, defaults included, is in the manifest all peers signed (docs/design.md)
    assert all(o["options"] == outs[0]["options"] for o in outs)
    assert outs[0]["options"]["jokers"] is False and outs[0]["options"]["max_turns"] == 1000


def test_join_errors_are_clear(tmp_path: Path) -> None:
    gone = run_cli(
        "join", "00" * 16, "--timeout", "1", "--json", "--state-dir", str(tmp_path / "x")
    )
    assert gone.returncode == 1
    assert "is gone" in json.loads(gone.stdout)["error"]
    refused = run_cli("join", "--peer", "127.0.0.1:9", "--json", "--state-dir", str(tmp_path / "x"))
    assert refused.returncode == 1
    assert "cannot reach" in json.loads(refused.stdout)["error"]


async def test_received_entries_are_stored_as_the_bytes_they_came_in(tmp_path, monkeypatch):
    """A peer writes another seat's entry to its record file as the canonical bytes it
    received (checked on decode), not encoded again: only its own entries are encoded."""
    encoded: list[int] = []
    real = store_module.encode_body

    def encode_body(msg):  # type: ignore[no-untyped-def]
        if isinstance(msg, wire.Signed):
            encoded.append(1)
        return real(msg)

    monkeypatch.setattr(store_module, "encode_body", encode_body)
    with trio.fail_after(TIMEOUT_S):
        results = await run_table(tmp_path, 3, steps=30)
    stored = sum(len(load(r.record_file).entries) for r in results)
    assert len({r.record.head for r in results}) == 1
    # each entry is stored by all three peers, and encoded for that only by its author
    assert 0 < len(encoded) <= stored // 3 + 3, (len(encoded), stored)
