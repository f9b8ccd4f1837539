"""A peer's state on disk: its long-term keys, and each table's record file and secret.

The secrets are written with mode 0600 and fsynced before use; a table's secret (its key
share, dice, gift-box keys and the table's own seal key) is overwritten and removed once
its record is final (forward secrecy, docs/design.md).
"""

from __future__ import annotations

import hashlib
import os
import secrets
from pathlib import Path
from typing import Any

import msgpack

from crypto.identity import IdentityKey
from crypto.seal import SealKey
from p2p.errors import NodeError
from p2p.record.store import _fsync_dir

IDENTITY_FILE = "identity.key"
SEAL_FILE = "seal.key"
TABLES_DIR = "tables"
RECORD_SUFFIX = ".rec"
SECRET_SUFFIX = ".secret"
TABLE_SECRET_BYTES = 32
"""The per-table secret (key share, dice, gift-box keys); its file also holds the
table's own X25519 seal key (32 bytes more), and is erased when the table ends."""


def _write_secret(path: Path, data: bytes) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)


def load_identity(state_dir: Path) -> tuple[IdentityKey, SealKey]:
    """This peer's long-term Ed25519 identity and X25519 seal key (created on first use)."""
    state_dir.mkdir(parents=True, exist_ok=True)
    id_path, seal_path = state_dir / IDENTITY_FILE, state_dir / SEAL_FILE
    if not id_path.exists():
        _write_secret(id_path, IdentityKey.generate().private_bytes())
    if not seal_path.exists():
        _write_secret(seal_path, SealKey.generate().private_bytes())
    return (
        IdentityKey.from_private_bytes(id_path.read_bytes()),
        SealKey.from_private_bytes(seal_path.read_bytes()),
    )


def record_path(state_dir: Path, table_id: bytes) -> Path:
    return state_dir / TABLES_DIR / f"{table_id.hex()}{RECORD_SUFFIX}"


def already_played(state_dir: Path, table_id: bytes) -> str | None:
    """Why a table id must not be formed afresh here: this state folder already holds its
    record or its secret (an old manifest replayed, or a table to resume); else ``None``."""
    if record_path(state_dir, table_id).exists() or secret_path(state_dir, table_id).exists():
        return (
            f"table {table_id.hex()} was already played from this state folder;"
            f" use `slaiga resume {table_id.hex()}` to go on with it"
        )
    return None


def options_digest(options: dict[str, Any]) -> str:
    """Short digest of the table options for the lobby's TXT record."""
    blob = msgpack.packb(sorted(options.items()), use_bin_type=True)
    return hashlib.sha256(b"slaiga/v1/options" + blob).hexdigest()[:16]


def secret_path(state_dir: Path, table_id: bytes) -> Path:
    return state_dir / TABLES_DIR / f"{table_id.hex()}{SECRET_SUFFIX}"


def _create_secret(path: Path, seal: SealKey) -> tuple[bytes, SealKey]:
    """A fresh per-table secret, stored with the table's seal key ``seal`` and durable
    (fsynced) before any entry of ours leaves."""
    if path.exists():
        return _load_secret(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = secrets.token_bytes(TABLE_SECRET_BYTES)
    _write_secret(path, data + seal.private_bytes())
    return data, seal


def _load_secret(path: Path) -> tuple[bytes, SealKey]:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise NodeError(
            f"no table secret {path}: it is erased when a table ends (forward secrecy), so"
            " an ended table cannot be resumed; check its record with slaiga verify"
        ) from None
    except OSError as exc:
        raise NodeError(f"cannot read the table secret {path}: {exc}") from exc
    if len(data) != TABLE_SECRET_BYTES + 32:
        raise NodeError(f"table secret {path} is damaged ({len(data)} bytes)")
    return data[:TABLE_SECRET_BYTES], SealKey.from_private_bytes(data[TABLE_SECRET_BYTES:])


def _erase_secret(path: Path) -> None:
    """Overwrite, then remove, a table secret file (and make the removal durable)."""
    try:
        size = path.stat().st_size
        fd = os.open(path, os.O_WRONLY)
        try:
            os.write(fd, bytes(size))
            os.fsync(fd)
        finally:
            os.close(fd)
        path.unlink()
    except FileNotFoundError:
        return
    except OSError as exc:
        raise NodeError(f"cannot erase the table secret {path}: {exc}") from exc
    _fsync_dir(path.parent)
