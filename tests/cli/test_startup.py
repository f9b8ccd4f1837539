"""What a ``slaiga`` process imports before it does anything: only what its command needs.

The test suite starts hundreds of these processes (``slaiga verify`` on every record,
a ``cli.net`` bot peer for every seat), and each one paid for every command's imports.
Each check runs in a fresh interpreter and reads its ``sys.modules``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

NETWORK = ("trio", "zeroconf", "asyncio", "p2p.net.node", "cli.net")
"""What a table on the network needs, and ``slaiga verify`` does not."""

SCREEN = ("cli.human", "cli.render", "cli.screen", "zeroconf", "asyncio")
"""What a person's terminal (and the lobby) needs, and a bot peer given --peer does not.
(``rich`` itself a peer does import at start: a peer prints waits and cheats on stderr
during the game, and a first import there blocked its event loop for 40-80 ms.)"""


def loaded_after(code: str, watched: tuple[str, ...]) -> list[str]:
    """Which of ``watched`` are imported once ``code`` has run in a fresh interpreter."""
    probe = (
        "import json, sys\n"
        f"{code}\n"
        f"print(json.dumps([m for m in {list(watched)!r} if m in sys.modules]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=ROOT,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(out.stdout.splitlines()[-1])


def test_slaiga_verify_builds_its_own_parser_without_the_network():
    code = (
        "from cli.main import main\n"
        "try:\n"
        "    main(['verify', '--help'])\n"
        "except SystemExit as exc:\n"
        "    assert exc.code == 0, exc.code\n"
    )
    assert loaded_after(code, NETWORK) == []


def test_a_bot_peer_imports_no_screen_and_no_lobby():
    assert loaded_after("import cli.net", SCREEN) == []


def test_the_programs_own_help_still_names_every_command():
    code = (
        "import contextlib, io\n"
        "from cli.main import COMMANDS, main\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        "    assert main([]) == 2\n"
        "missing = [c for c in COMMANDS if f'    {c} ' not in out.getvalue()]\n"
        "assert not missing, missing\n"
    )
    assert "cli.net" in loaded_after(code, NETWORK)
