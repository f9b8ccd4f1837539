"""When a joiner signs a manifest (p2p/table/signing.py): a scripted opener over loopback offers
manifests the joiner must refuse, and the signing ledger survives restarts.

The opener here is a bare mesh driven by the test, so it can do what an
honest opener never does: offer a second manifest for the same table id
(to fork the table), skip the Welcome, or set absurd timeouts.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import trio

from crypto.identity import IdentityKey
from crypto.seal import SealKey
from p2p import wire
from p2p.errors import NodeError
from p2p.net.mesh import Inbound, PeerDown, open_mesh
from p2p.net.node import Node
from p2p.net.state import RECORD_SUFFIX, SECRET_SUFFIX, TABLES_DIR
from p2p.table.demo import DemoProtocol
from p2p.table.forming import Manifest, manifest_bytes, new_table_id
from p2p.table.game_rule import GameProtocol
from p2p.table.signing import SignedManifests, timeout_problem
from tests.p2p._nethelpers import LOOPBACK, no_leaks
from tests.p2p._tables import config

TIMEOUT_S = 20
GAME, OPTIONS = "slave", {"variant": "classic"}


async def _next(mesh, cls):
    while True:
        event = await mesh.inbox.receive()
        if isinstance(event, Inbound) and isinstance(event.message, cls):
            return event


async def _signature_or_hang_up(mesh, peer: bytes) -> wire.ManifestSignature | None:
    """The joiner's next ManifestSignature, or None once its link is down. Frames arrive in
    order, so a signature sent before it hung up is always seen first: waiting for the
    hang-up misses nothing that a longer wait would catch."""
    while True:
        event = await mesh.inbox.receive()
        if event.peer != peer:
            continue
        if isinstance(event, PeerDown):
            return None
        if isinstance(event, Inbound) and isinstance(event.message, wire.ManifestSignature):
            return event.message


async def _script(
    tmp_path: Path,
    offers,
    *,
    welcome: bool = True,
    game: str = GAME,
    options=None,
    others: int = 0,
    table: bytes | None = None,
):
    """Run a joiner against a scripted opener that sends ``offers`` (functions of the
    members giving a Manifest) one by one; return (signatures received, joiner error).
    The Welcome names ``game`` and ``options``, and ``others`` more seats after ours."""
    key, seal = IdentityKey.generate(), SealKey.generate()
    table = table or new_table_id()
    signatures: list[wire.ManifestSignature] = []
    outcome: dict[str, str] = {}
    with trio.fail_after(TIMEOUT_S):
        async with no_leaks(), open_mesh(key, table, host=LOOPBACK) as m:
            joiner = Node(config(tmp_path, 1, join_timeout_s=5.0))
            joiner_done = trio.Event()
            async with trio.open_nursery() as nursery:

                async def run_joiner() -> None:
                    try:
                        await joiner.join(peer=m.address)
                    except NodeError as exc:
                        outcome["error"] = str(exc)
                    finally:
                        joiner_done.set()

                nursery.start_soon(run_joiner)
                join = await _next(m, wire.Join)
                members = (wire.Member("opener", key.public, seal.public, m.address),)
                members += (join.message.member,)
                members += tuple(
                    wire.Member(
                        f"o{i}",
                        IdentityKey.generate().public,
                        SealKey.generate().public,
                        f"{LOOPBACK}:{41000 + i}",
                    )
                    for i in range(others)
                )
                if welcome:
                    told = OPTIONS if options is None else options
                    m.send_nowait(join.peer, wire.Welcome(game, told, len(members), members))
                for make in offers:
                    m.send_nowait(
                        join.peer, wire.ManifestOffer(manifest_bytes(make(table, members)))
                    )
                    signature = await _signature_or_hang_up(m, join.peer)
                    if signature is None:  # the joiner refused and left: say why
                        await joiner_done.wait()
                        break
                    signatures.append(signature)
                nursery.cancel_scope.cancel()
    return signatures, outcome.get("error")


def _manifest(
    table, members, *, stall_after_ms=5000, protocol=None, game=GAME, options=None
) -> Manifest:
    return Manifest(
        wire.PROTOCOL_VERSION,
        table,
        game,
        OPTIONS if options is None else options,
        members,
        stall_after_ms,
        60_000,
        protocol or DemoProtocol(4, 2),
    )


async def test_a_second_manifest_for_one_table_id_is_never_signed(tmp_path: Path) -> None:
    first = _manifest
    second = lambda t, m: _manifest(t, m, stall_after_ms=6000)  # noqa: E731 - differs only here
    signatures, error = await _script(tmp_path, [first, second])
    assert len(signatures) == 1
    assert error is not None and "already signed another manifest" in error
    # and after a restart too: the ledger is in the state directory
    ledger = SignedManifests(tmp_path / "p1")
    assert ledger.problem(signatures[0].table_id, b"anything else") is not None


async def test_a_manifest_without_a_welcome_is_not_signed(tmp_path: Path) -> None:
    signatures, error = await _script(tmp_path, [_manifest], welcome=False)
    assert not signatures and error is not None and "no Welcome" in error


async def test_absurd_timeouts_are_not_signed(tmp_path: Path) -> None:
    absurd = lambda t, m: _manifest(t, m, stall_after_ms=1)  # noqa: E731
    signatures, error = await _script(tmp_path, [absurd])
    assert not signatures and error is not None and "stall_after_ms 1 outside" in error


def test_timeout_bounds() -> None:
    assert timeout_problem(5000, 120_000) is None
    assert timeout_problem(5000, 120_000, GameProtocol(60_000, 1_800_000)) is None
    assert "stall_after_ms 1 " in timeout_problem(1, 120_000)
    assert "max_wait_ms" in timeout_problem(5000, 10**9)
    assert "decide_stall_ms 0 " in timeout_problem(5000, 120_000, GameProtocol(0, 1000))
    assert "below" in timeout_problem(5000, 120_000, GameProtocol(60_000, 30_000))
    assert "demo steps" in timeout_problem(5000, 120_000, DemoProtocol(10**7, 0))


def test_the_ledger_allows_the_same_bytes_again_and_persists(tmp_path: Path) -> None:
    ledger = SignedManifests(tmp_path)
    table = new_table_id()
    ledger.remember(table, b"manifest one")
    ledger.remember(table, b"manifest one")  # the same bytes: the same signature, fine
    with pytest.raises(ValueError, match="already signed"):
        ledger.remember(table, b"manifest two")
    again = SignedManifests(tmp_path)
    assert again.problem(table, b"manifest two") is not None
    assert again.problem(new_table_id(), b"manifest two") is None


async def test_an_opener_refuses_limits_its_joiners_would_refuse(tmp_path: Path) -> None:
    with trio.fail_after(TIMEOUT_S):
        node = Node(config(tmp_path, 0, stall_after_ms=1))
        with pytest.raises(NodeError, match="stall_after_ms 1 outside"):
            await node.open(GAME, 2, OPTIONS)


GAME_PROTOCOL = GameProtocol(60_000, 1_800_000)


@pytest.mark.parametrize(
    ("game", "seats", "options", "reason"),
    [
        ("slave", 4, {"games": 0}, "option 'games': bad value 0"),
        ("slave", 4, {"games": True}, "option 'games': bad value True"),
        ("slave", 4, {"jokers": True}, "unknown option 'jokers'"),
        ("no-such-game", 2, {}, "unknown game 'no-such-game'"),
        ("slave", 2, {}, "slave needs 4-6 seats"),
    ],
)
async def test_a_manifest_for_a_game_that_cannot_be_played_is_not_signed(
    tmp_path: Path, game: str, seats: int, options: dict, reason: str
) -> None:
    """The joiner builds the game from the registry before signing (issue 22): a
    manifest it could not play is refused with the engine's reason, not signed and
    then failed after forming."""

    def offer(t, m):
        return _manifest(t, m, game=game, options=options, protocol=GAME_PROTOCOL)

    signatures, error = await _script(
        tmp_path, [offer], game=game, options=options, others=seats - 2
    )
    assert not signatures
    assert error is not None and "refusing to sign" in error and reason in error, error


async def test_an_opener_refuses_a_game_its_joiners_would_refuse(tmp_path: Path) -> None:
    with trio.fail_after(TIMEOUT_S):
        node = Node(config(tmp_path, 0))
        with pytest.raises(NodeError, match="option 'games': bad value 0"):
            await node.open("slave", 4, {"games": 0})


@pytest.mark.parametrize("kept", [RECORD_SUFFIX, SECRET_SUFFIX])
async def test_a_table_id_already_played_is_refused_not_signed_again(
    tmp_path: Path, kept: str
) -> None:
    """An opener replaying an old table id and its manifest finds a joiner that holds
    that table's record (or secret): it refuses, pointing at ``slaiga resume``, instead
    of signing again and crashing on the existing file (issue 22)."""
    table = new_table_id()
    old = tmp_path / "p1" / TABLES_DIR / f"{table.hex()}{kept}"
    old.parent.mkdir(parents=True)
    old.write_bytes(b"from the first time")
    signatures, error = await _script(tmp_path, [_manifest], table=table)
    assert not signatures
    assert error is not None and "already played" in error, error
    assert f"slaiga resume {table.hex()}" in error
    assert old.read_bytes() == b"from the first time"
