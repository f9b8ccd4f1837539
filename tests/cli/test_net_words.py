"""What ``slaiga open``/``join`` print about other players: their names are text."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli import net
from p2p.table.events import SeatRecovered


def test_a_player_named_like_markup_is_printed_as_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A joiner named "[/dim]" once ended every other player's command in a traceback
    (rich read the name as a closing style tag); an escape sequence in a name reached the
    terminal.  Both are shown as text."""
    args = net.build_parser().parse_args(
        ["join", "--state-dir", str(tmp_path), "--name", "Ann", "--interface", "127.0.0.1"]
    )
    config = net._config(args, use_discovery=False)
    for name in ("[/dim]", "Eve\x1b[2J"):
        config.on_event(SeatRecovered(name=name, seat=1, slot=1))
    err = capsys.readouterr().err
    assert "[/dim]" in err and "Eve?[2J" in err and "\x1b[2J" not in err
