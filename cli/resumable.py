"""Which tables ``slaiga resume`` can take up again, and the bot peers of ``slaiga play``.

A table can be resumed when its record file in the state folder
(``tables/<id>.rec``) is a game whose end nobody has signed yet. ``slaiga
resume`` with no id lists them; with an id (or a unique start of one) it
resumes that one.

``slaiga play`` seats bot peer processes, each with its own state folder under
``<state>/bots/``. They stop with the command, so a table played against them
could not go on after Ctrl-C. Their record files stay, though: on ``resume``
of such a table the bots are started again from their records (``slaiga
resume --bot heuristic`` in each bot folder), and the table goes on where it
stopped.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cli.state import StateInUse, StateLock

BOTS_DIR = "bots"
LOOPBACK = "127.0.0.1"


def start_bot_peer(*args: str) -> subprocess.Popen:
    """A bot peer of this machine's table: ``python -m cli.net ARGS`` on loopback, with no
    terminal (``slaiga play`` starts its bots this way, and ``resume`` starts them again)."""
    return subprocess.Popen(
        [sys.executable, "-m", "cli.net", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        env=dict(os.environ, SLAIGA_INTERFACE=LOOPBACK),
    )


BOT_PEER_WAIT_S = 60.0
RECORD_SUFFIX = ".rec"


@dataclass
class Resumable:
    """A game record in the state folder, as ``resume`` sees it."""

    table_id: str
    path: Path
    game: str
    names: list[str]
    steps: int
    finished: bool
    modified: float
    bot_folders: list[Path] = field(default_factory=list)

    @property
    def against_bots(self) -> bool:
        """Played in ``slaiga play``: the other seats are this folder's bot peers."""
        return bool(self.bot_folders)


def _read(path: Path, bots: Path) -> Resumable | None:
    from p2p.errors import UnreadableRecord
    from p2p.record.verify import verify_record_file

    try:
        report = verify_record_file(path)
    except (UnreadableRecord, OSError):
        return None
    if report.table_id is None:
        return None  # not even a manifest: nothing to resume
    table_id = report.table_id
    folders = sorted(
        f for f in bots.glob("*") if (f / "tables" / f"{table_id}{RECORD_SUFFIX}").exists()
    )
    return Resumable(
        table_id,
        path,
        report.game or "?",
        [s.name for s in report.seats],
        report.steps,
        report.finished,
        path.stat().st_mtime,
        folders,
    )


def scan(folder: Path) -> list[Resumable]:
    """Every unfinished game record in ``folder``, the most recently played first."""
    found = []
    for path in (folder / "tables").glob(f"*{RECORD_SUFFIX}"):
        r = _read(path, folder / BOTS_DIR)
        if r is not None and not r.finished:
            found.append(r)
    return sorted(found, key=lambda r: -r.modified)


def find(folder: Path, table_id: str) -> Resumable | str:
    """The table ``table_id`` (or a unique start of it) names, or why it cannot be resumed."""
    text = table_id.strip().lower()
    paths = sorted((folder / "tables").glob(f"{text}*{RECORD_SUFFIX}"))
    if not paths:
        return (
            f"no record of table {table_id} in {folder}; "
            "`slaiga resume` with no id lists the tables you can resume"
        )
    if len(paths) > 1:
        return f"{table_id} starts {len(paths)} table ids: type more of it"
    r = _read(paths[0], folder / BOTS_DIR)
    if r is None:
        return f"the record of table {table_id} cannot be read ({paths[0]})"
    if r.finished:
        return f"table {r.table_id} is finished: nothing to resume (its record: {r.path})"
    return r


def list_tables(folder: Path, args: argparse.Namespace, out: Any, as_json: bool = False) -> int:
    """``slaiga resume`` with no id: the tables that can be resumed, and the command."""
    from cli.render import slaiga_command

    tables = scan(folder)
    if as_json:
        rows = [
            {
                "table_id": t.table_id,
                "game": t.game,
                "players": t.names,
                "steps": t.steps,
                "against_bots": t.against_bots,
                "record": str(t.path),
            }
            for t in tables
        ]
        print(json.dumps(rows, sort_keys=True), flush=True)
        return 0
    if not tables:
        out.print(f"No table to resume in {folder}.")
        return 0
    extra = f" --state-dir {args.state_dir}" if getattr(args, "state_dir", None) else ""
    out.print(f"Tables you can resume ({folder}):")
    for t in tables:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(t.modified))
        who = ", ".join(t.names)
        bots = " · against bots (they start again)" if t.against_bots else ""
        out.print(f"  {t.table_id}  {t.game}  {who}  · last played {when}{bots}")
    out.print(f"Resume one with: {slaiga_command()} resume TABLE-ID{extra}")
    out.print("(the start of an id is enough when it is unique)")
    return 0


_procs: list[subprocess.Popen[bytes]] = []


def restart_bots(table: Resumable, folder: Path) -> str | None:
    """Start ``slaiga play``'s bot peers of ``table`` again from their own records
    (``None``), or say why the table cannot go on."""
    for bot in table.bot_folders:
        try:
            with StateLock(bot):
                pass  # free: that bot is not running
        except StateInUse:
            continue  # still running: it waits for us
        args = ["resume", table.table_id, "--bot", "heuristic"]
        try:
            _procs.append(start_bot_peer(*args, "--quiet", "--json", "--state-dir", str(bot)))
        except OSError as exc:
            reap_bots(0.0)
            return (
                f"table {table.table_id} was played against the bots of `slaiga play`, and "
                f"they cannot be started again ({exc}): the table cannot go on"
            )
    return None


def reap_bots(wait_s: float = BOT_PEER_WAIT_S) -> None:
    """After the game, give the restarted bots time to finish their records, then stop them."""
    deadline = time.monotonic() + wait_s
    while _procs:
        p = _procs.pop()
        try:
            p.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
