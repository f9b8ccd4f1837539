"""When a joiner signs a manifest: one per table id ever, and only one it was told about.

A joiner that signs every manifest offered lets an opener collect
signatures on two manifests with one table id and fork the table; the
honest seats would then be blamed with ``BrokenChain``.  So before signing:

* **The Welcome came first**, and the manifest says what it said (game,
  options, seat count, every member), what the lobby announcement said
  (game, options digest, seats, version) when we joined through it, and
  names the table id we dialled.
* **Sane timeouts** (:func:`timeout_problem`): ``stall_after_ms = 1`` would
  make every peer cry "stalled" at once and fetch from everyone all the time.
* **A game it can play** (:func:`game_problem`): the game is built from the
  registry with the manifest's seats and options, so a manifest naming an
  unknown game, an unknown option, a value of the wrong type or out of range
  (``games: 0``) is refused with the engine's reason, before forming, not after.
* **One manifest per table id, ever** (:class:`SignedManifests`): the
  table id and a hash of the manifest bytes are written (fsynced) to the
  state directory before the signature leaves, and a different manifest
  for a table id already signed is refused, across restarts.  The same
  bytes may be signed again (Ed25519 is deterministic: the same signature).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from engine import registry
from engine.errors import EngineError
from p2p import wire
from p2p.table.demo import DemoProtocol
from p2p.table.forming import Manifest
from p2p.table.game_rule import GameProtocol

STALL_AFTER_MS = (250, 10 * 60_000)
"""Allowed ``stall_after_ms`` (inclusive): a quarter second to ten minutes."""
MAX_WAIT_MS = (1_000, 2 * 3_600_000)
"""Allowed ``max_wait_ms``: one second to two hours (and at least ``stall_after_ms``)."""
DECIDE_STALL_MS = (1_000, 3_600_000)
"""Allowed decision stall limit of a game: one second to an hour."""
DECIDE_MAX_MS = (1_000, 24 * 3_600_000)
"""Allowed decision maximum wait: one second to a day (and at least the stall limit)."""
MAX_DEMO_STEPS = 1_000_000
LEDGER_FILE = "signed-manifests"


def _outside(name: str, value: int, bounds: tuple[int, int]) -> str | None:
    low, high = bounds
    if not low <= value <= high:
        return f"{name} {value} outside {low}..{high}"
    return None


def timeout_problem(
    stall_after_ms: int, max_wait_ms: int, protocol: Any | None = None
) -> str | None:
    """Why these silence limits (and the protocol's own) are absurd, or ``None``."""
    checks = [
        _outside("stall_after_ms", stall_after_ms, STALL_AFTER_MS),
        _outside("max_wait_ms", max_wait_ms, MAX_WAIT_MS),
    ]
    if isinstance(protocol, GameProtocol):
        checks += [
            _outside("decide_stall_ms", protocol.decide_stall_ms, DECIDE_STALL_MS),
            _outside("decide_max_ms", protocol.decide_max_ms, DECIDE_MAX_MS),
        ]
        if protocol.decide_max_ms < protocol.decide_stall_ms:
            checks.append("decide_max_ms below decide_stall_ms")
    elif isinstance(protocol, DemoProtocol) and protocol.steps > MAX_DEMO_STEPS:
        checks.append(f"{protocol.steps} demo steps (at most {MAX_DEMO_STEPS})")
    elif protocol is not None and not isinstance(protocol, GameProtocol | DemoProtocol):
        checks.append(f"unknown protocol {type(protocol).__name__}")
    problems = [c for c in checks if c]
    return "; ".join(problems) if problems else None


def game_problem(manifest: Manifest) -> str | None:
    """Why the game a manifest names cannot be played with its seats and options, or
    ``None``: the game is built from the registry exactly as the game rule will build it
    once the table has formed (a demonstration table plays no game)."""
    if not isinstance(manifest.protocol, GameProtocol):
        return None
    return play_problem(manifest.game, manifest.n_seats, manifest.options)


def play_problem(game: str, seats: int, options: Any) -> str | None:
    """Why ``game`` cannot be built for ``seats`` with ``options``, or ``None``."""
    try:
        registry.get(game).factory(seats, dict(options))
    except EngineError as exc:
        return str(exc)
    except (TypeError, ValueError) as exc:  # an engine's own check of an odd value
        return f"{game}: {exc}"
    return None


def offer_problems(
    manifest: Manifest,
    *,
    table_id: bytes | None,
    opener: bytes,
    me: bytes,
    my_seal_key: bytes,
    welcome: wire.Welcome | None,
    announced: Any | None = None,
    options_digest: Any = None,
) -> list[str]:
    """Everything wrong with an offered manifest, as short phrases (empty: sign it).

    ``announced`` is the lobby's :class:`p2p.net.discovery.TableAd` when we found
    the table through it, and ``options_digest`` the function that made its
    digest.
    """
    problems = []
    if welcome is None:
        problems.append("no Welcome before the manifest")
    if manifest.table_id != table_id:
        problems.append("table id")
    if manifest.version != wire.PROTOCOL_VERSION:
        problems.append("protocol version")
    if welcome is not None:
        if (manifest.game, dict(manifest.options)) != (welcome.game, dict(welcome.options)):
            problems.append("game or options")
        if manifest.n_seats != welcome.seats_total:
            problems.append("seat count")
        if tuple(welcome.members) != manifest.seats:
            problems.append("members (not those of the Welcome)")
    if announced is not None:
        if manifest.game != announced.game or manifest.n_seats != announced.seats_total:
            problems.append("game or seat count announced in the lobby")
        if options_digest is not None and options_digest(manifest.options) != (
            announced.options_digest
        ):
            problems.append("options announced in the lobby")
    if manifest.seats[0].identity != opener:
        problems.append("opener identity")
    mine = manifest.seat_of(me)
    if mine is None or manifest.seats[mine].seal_key != my_seal_key:
        problems.append("our own seat")
    timeouts = timeout_problem(manifest.stall_after_ms, manifest.max_wait_ms, manifest.protocol)
    if timeouts:
        problems.append(f"timeouts ({timeouts})")
    unplayable = game_problem(manifest)
    if unplayable:
        problems.append(f"game ({unplayable})")
    return problems


class SignedManifests:
    """The manifests this identity has signed, one per table id, kept in the state directory.

    The file is append-only, one line per signature: ``table_id_hex
    sha256_of_manifest_hex``.
    """

    def __init__(self, state_dir: Path) -> None:
        self.path = state_dir / LEDGER_FILE
        self._signed: dict[str, str] = {}
        if self.path.exists():
            for line in self.path.read_text().splitlines():
                parts = line.split()
                if len(parts) == 2:
                    self._signed.setdefault(parts[0], parts[1])

    def problem(self, table_id: bytes, raw: bytes) -> str | None:
        """Why signing ``raw`` for ``table_id`` would be a second manifest, or ``None``."""
        known = self._signed.get(table_id.hex())
        if known is not None and known != hashlib.sha256(raw).hexdigest():
            return f"we already signed another manifest for table {table_id.hex()}"
        return None

    def remember(self, table_id: bytes, raw: bytes) -> None:
        """Record (durably) that we sign ``raw`` for ``table_id``; call before signing."""
        problem = self.problem(table_id, raw)
        if problem is not None:
            raise ValueError(problem)
        key, digest = table_id.hex(), hashlib.sha256(raw).hexdigest()
        if self._signed.get(key) == digest:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            os.write(fd, f"{key} {digest}\n".encode())
            os.fsync(fd)
        finally:
            os.close(fd)
        self._signed[key] = digest
