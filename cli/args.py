"""Checked command-line values: one place for ports, counts, times, names and bot settings.

Each checker is an ``argparse`` ``type=``: a bad value becomes a usage error
(exit status 2) with a sentence that says what would be accepted, never a
traceback. ``EXIT_STATUS`` is the one exit-code convention of every
``slaiga`` command, printed at the end of ``--help``.
"""

from __future__ import annotations

import argparse
import inspect
import ipaddress
import random
import re
from collections.abc import Callable, Mapping
from typing import Any

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
EXIT_STATUS = (
    "exit status: 0 done; 1 failed (network, files, a table that did not form); "
    "2 bad command line (usage error); 3 table abandoned (a player went silent); "
    "4 a player was caught cheating; 130 interrupted (Ctrl-C)"
)
PORT_MAX = 65535
NAME_MAX = 32


def port(text: str) -> int:
    """A TCP port: 1-65535, or 0 to let the system pick a free one."""
    n = _int(text, "a port")
    if not 0 <= n <= PORT_MAX:
        raise argparse.ArgumentTypeError(
            f"port {n} is out of range: use 1 to {PORT_MAX} (or 0 for any free port)"
        )
    return n


def seconds(text: str) -> float:
    """A time in seconds, 0 or more."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not v >= 0 or v == float("inf"):  # also refuses NaN
        raise argparse.ArgumentTypeError(f"{text} seconds: a time must be 0 or more")
    return v


def count(text: str) -> int:
    """A whole number, 0 or more."""
    n = _int(text, "a count")
    if n < 0:
        raise argparse.ArgumentTypeError(f"{n}: a count must be 0 or more")
    return n


def positive(text: str) -> int:
    """A whole number, 1 or more."""
    n = _int(text, "a number")
    if n < 1:
        raise argparse.ArgumentTypeError(f"{n}: must be at least 1")
    return n


def player_name(text: str) -> str:
    """A display name: 1 to 32 printable characters."""
    name = " ".join(text.split())
    if not name:
        raise argparse.ArgumentTypeError("a name cannot be empty")
    if len(name) > NAME_MAX or not name.isprintable():
        raise argparse.ArgumentTypeError(f"a name has 1 to {NAME_MAX} printable characters")
    return name


def which_game(command: str) -> int:
    """``slaiga play`` or ``rules`` with no game: list the games to choose from, each with
    its players and what it is, and the command to type (exit 2, a usage error)."""
    import sys

    from engine import registry

    lines = [f"slaiga {command}: which game? Type slaiga {command} GAME, GAME one of:"]
    for name in registry.names():
        spec = registry.get(name)
        cls = spec.game_class
        players = f"{cls.MIN_SEATS}-{cls.MAX_SEATS} players"
        lines.append(f"  {name:<17} {players:<13} {spec.description}")
    lines.append("(slaiga options GAME lists a game's table options)")
    print("\n".join(lines), file=sys.stderr)
    return EXIT_USAGE


def game(text: str) -> str:
    """A game's name as a person may type it: any case, å for a, spaces for dashes
    (``Slave``, ``slåjens``, ``Aight of Spaides``); a near miss suggests the name meant."""
    import difflib
    import unicodedata

    from engine import registry

    known = registry.names()
    key = unicodedata.normalize("NFKD", text.strip().lower())
    key = "".join(c for c in key if not unicodedata.combining(c))
    key = "-".join(key.replace("_", " ").split())
    try:
        registry.get(key)  # listed, or a game kept for tests (high-card)
        return key
    except Exception:  # noqa: BLE001 (an unknown name: say which were meant)
        pass
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]}?" if close else ""
    raise argparse.ArgumentTypeError(f"unknown game {text!r}{hint} (the games: {', '.join(known)})")


def _int(text: str, what: str) -> int:
    try:
        return int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not {what} (a whole number)") from None


def with_exit_status(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Print the exit-code convention at the end of ``--help``."""
    parser.epilog = ((parser.epilog + "\n\n") if parser.epilog else "") + EXIT_STATUS
    return parser


# ---- network interfaces ---------------------------------------------------------------


def local_addresses() -> tuple[str, ...]:
    """Every IPv4 address of this machine (loopback included)."""
    import ifaddr  # zeroconf's own dependency

    found = []
    for adapter in ifaddr.get_adapters():
        for ip in adapter.ips:
            if isinstance(ip.ip, str):
                found.append(ip.ip)
    return tuple(found)


def interface_problem(choice: str | None) -> str | None:
    """Why ``--interface`` cannot be used, checked before any socket is opened."""
    if choice is None:
        return None
    text = choice.strip()
    if not text:
        return "--interface is empty: give an interface name (eth0), an IPv4 address, or all"
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None  # a name: the lobby code checks that the interface exists
    if address.version != 4:
        return f"--interface {text}: only IPv4 addresses are supported"
    if address.is_loopback:
        return None
    mine = local_addresses()
    if text not in mine:
        listed = ", ".join(a for a in mine if not a.startswith("127.")) or "none besides loopback"
        return (
            f"--interface {text}: this machine has no such address, so nothing can be sent "
            f"or received there (its IPv4 addresses: {listed}; or use 127.0.0.1, an "
            "interface name, or all)"
        )
    return None


# ---- bot settings ----------------------------------------------------------------------

_PARAM_GET = re.compile(r"params\.get\(\s*[\"'](\w+)[\"']")


def bot_class(factory: Callable[..., Any]) -> type:
    """The class a bot factory builds (some factories import it lazily)."""
    if inspect.isclass(factory):
        return factory
    return type(factory(0, random.Random(0)))


def bot_params(factory: Callable[..., Any]) -> dict[str, Any]:
    """The tuning settings a bot reads, with their defaults where known.

    Bots take ``**params``; the names they read are found in their own source
    (``params.get("name", default)``, or a module ``DEFAULTS`` table merged in).
    """
    names: dict[str, Any] = {}
    for cls in bot_class(factory).__mro__:
        init = cls.__dict__.get("__init__")
        if init is None:
            continue
        try:
            source = inspect.getsource(init)
        except (OSError, TypeError):
            continue
        for name in _PARAM_GET.findall(source):
            names.setdefault(name, None)
        if "DEFAULTS" in source:
            module = inspect.getmodule(cls)
            defaults = getattr(module, "DEFAULTS", {})
            if isinstance(defaults, Mapping):
                names.update(defaults)
    return names


def parse_bot_params(factory: Callable[..., Any], pairs: list[str], kind: str) -> dict[str, Any]:
    """``KEY=VALUE`` settings for a bot, each name checked against what the bot reads."""
    known = bot_params(factory)
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ValueError(f"--bot-param {pair!r} is not of the form NAME=VALUE")
        if key not in known:
            listed = ", ".join(sorted(known)) or "none"
            raise ValueError(f"the {kind} bot has no setting {key!r}; its settings are: {listed}")
        out[key] = _number(value.strip())
    return out


def _number(text: str) -> int | float | str:
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text
