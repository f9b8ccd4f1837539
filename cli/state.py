"""Where a peer keeps its state (identity keys, record files), and one peer per folder.

The folder is, in order: ``--state-dir``, ``$SLAIGA_HOME``, or the platform's
user data folder (``platformdirs``: ``~/.local/share/slaiga`` on Linux,
``~/Library/Application Support/slaiga`` on macOS, ``%LOCALAPPDATA%\\slaiga``
on Windows).

Two peers sharing one folder would share one identity key and one set of
record files, and their table would refuse them ("peer presented our own
identity key"). So a running peer holds an exclusive lock on ``lock`` in its
folder (``fcntl.flock``, released by the system when the process ends, even
after a crash), and a second peer is told to use a folder of its own.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO

import platformdirs

ENV_HOME = "SLAIGA_HOME"
NAME_FILE = "name"
APP_NAME = "slaiga"
LOCK_NAME = "lock"


class StateInUse(Exception):
    """Another running peer holds this state folder."""


def state_dir(explicit: Path | str | None = None) -> Path:
    """The state folder: ``explicit``, else ``$SLAIGA_HOME``, else the user data folder."""
    if explicit:
        return Path(explicit).expanduser()
    env = os.environ.get(ENV_HOME)
    if env:
        return Path(env).expanduser()
    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


class StateLock:
    """An exclusive hold on a state folder for this process's lifetime (or until ``release``)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._file: IO[str] | None = None

    def acquire(self) -> StateLock:
        import fcntl

        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.folder / LOCK_NAME
        f = path.open("a+", encoding="utf-8")
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            f.seek(0)
            holder = f.read().strip() or "?"
            f.close()
            raise StateInUse(
                f"the state folder {self.folder} is in use by another running slaiga peer "
                f"(process {holder}). Each peer on one machine needs a folder of its own: "
                f"add --state-dir DIR (or set ${ENV_HOME}) for this one"
            ) from None
        f.seek(0)
        f.truncate()
        f.write(f"{os.getpid()}\n")
        f.flush()
        self._file = f
        return self

    def release(self) -> None:
        if self._file is not None:
            self._file.close()  # closing drops the lock
            self._file = None

    def __enter__(self) -> StateLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


_held: list[StateLock] = []


def hold(folder: Path, wait_s: float = 0.0) -> Path:
    """Lock ``folder`` for the rest of this process; raise ``StateInUse`` if it is still
    taken after ``wait_s`` seconds (a process that hands its seat over exits first)."""
    import time

    if any(lock.folder == folder for lock in _held):
        return folder
    deadline = time.monotonic() + wait_s
    while True:
        try:
            _held.append(StateLock(folder).acquire())
            return folder
        except StateInUse:
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.1)


def remembered_name(folder: Path) -> str | None:
    """The name this player gave last time (``<state>/name``), if any."""
    try:
        name = (folder / NAME_FILE).read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return name or None


def remember_name(folder: Path, name: str) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / NAME_FILE).write_text(name + "\n", encoding="utf-8")
    except OSError:
        pass  # not remembered: asked again next time, nothing worse


def player_name(folder: Path, given: str | None, ask: bool) -> str:
    """The player's name: ``--name`` (remembered for next time), else the remembered one,
    else asked once at the terminal (``ask``) and remembered, else the login name."""
    from cli.args import NAME_MAX

    if given:
        remember_name(folder, given)
        return given
    known = remembered_name(folder)
    if known:
        return known
    login = os.environ.get("USER") or os.environ.get("USERNAME") or ""
    if ask:
        for _ in range(3):
            try:
                typed = input(f"Your name at the table{f' [{login}]' if login else ''}: ")
            except EOFError:
                break
            name = " ".join(typed.split()) or login
            if name and len(name) <= NAME_MAX and name.isprintable():
                remember_name(folder, name)
                print(f"Welcome, {name}. (Remembered in {folder}; --name changes it.)")
                return name
            print(f"A name has 1 to {NAME_MAX} printable characters.")
    return login or "Player"
