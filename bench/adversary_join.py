"""``python -m bench.adversary_join FILE <cli.net arguments>``: a joining peer that the
bench starts beside its table's opener, before the opener's address is known.

A peer process spends most of its start-up importing; the bench starts the joiners
together with the opener, so that these start-ups overlap.  Each joiner waits for
``FILE`` (written by the bench once the opener listens: its address) and then runs
``cli.net`` with ``--peer`` that address; nothing else differs from ``python -m cli.net``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

WAIT_S = 120.0
"""How long a joiner waits for the address at most (the bench kills it sooner)."""
POLL_S = 0.02


def await_address(path: str, timeout: float = WAIT_S) -> str:
    """The address in ``path`` once the bench wrote it (whole: it renames it into place)."""
    file = Path(path)
    deadline = time.monotonic() + timeout
    while not file.exists():
        if time.monotonic() > deadline:
            raise SystemExit(f"no table address in {path} after {timeout:g} s")
        time.sleep(POLL_S)
    return file.read_text().strip()


def main(argv: list[str]) -> int:
    from cli import net  # imported while the opener starts

    address = await_address(argv[0])
    return net.main([*argv[1:], "--peer", address])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
