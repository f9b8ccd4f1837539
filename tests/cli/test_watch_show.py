"""What ``slaiga watch`` shows (cli/watch.py), fed in process with the entries of a game played
with every seat's real protocol code, as a live watch gets them from the seats.

The watch over real processes (links, catching up, hostile spectators) is in
tests/p2p/test_watch_procs.py."""

from __future__ import annotations

import io

import pytest

from cli.watch import Show
from p2p.net.watcher import WatchResult
from p2p.table import local_table
from p2p.table.spectator import Spectator
from tests.cli._screens import FakeTerminal


@pytest.fixture(scope="module")
def played():
    return local_table.run(local_table.new_table("high-card", 2, {}))


def follow(table, show: Show) -> Spectator:
    spectator = Spectator(table.genesis)
    for signed in table.records[0].signed_from(1):
        show.update(spectator, spectator.offer(signed))
    return spectator


def test_plain_lines_tell_every_step_and_a_running_check(played):
    out = io.StringIO()
    spectator = follow(played, Show(out, "plain"))
    text = out.getvalue()
    assert spectator.finished and spectator.verdict is None
    assert "seats in the drawn order: 1. " in text
    steps = [line for line in text.splitlines() if line.startswith("step ")]
    assert len(steps) == spectator.step - 1  # every step once (the seat order's too)
    assert "a move from" in text
    assert f"{spectator.entries} signatures and {spectator.proofs} proofs checked, no cheat" in text


def test_the_screen_shows_the_public_view_and_the_count(played):
    term = FakeTerminal(size=(100, 30))
    spectator = follow(played, Show(io.StringIO(), "screen", term))
    assert term.frame_count > 0
    last = "\n".join(x.plain for x in term.frames[-1])
    assert "watching, public view" in last
    assert "checked, no cheat" in last
    assert "you are" not in last  # a spectator holds no seat
    summary = WatchResult(spectator, spectator.manifest).summary()
    assert summary["ranking"] == spectator.result()["ranking"]
    assert summary["record_head"] == spectator.head.hex() and summary["finished"]


def test_the_end_says_who_won_and_what_was_checked(played, capsys):
    from cli.watch import _print_end

    show = Show(io.StringIO(), "plain")
    spectator = follow(played, show)
    code = _print_end(WatchResult(spectator, spectator.manifest), show, as_json=False)
    out = capsys.readouterr().out
    assert code == 0
    assert "Game over" in out and "Winner:" in out
    assert f"{spectator.status_line()}." in out
    assert spectator.head.hex() in out


def test_who_left_or_is_back_is_told_as_the_players_see_it(played, capsys):
    from p2p.table.events import SeatBack, SeatLeft

    spectator = Spectator(played.genesis)
    name = spectator.manifest.seats[1].name
    left, back = SeatLeft(name, 0, 1, 5), SeatBack(name, 0, 1, 9)
    out = io.StringIO()
    plain = Show(out, "plain")
    plain.seat(spectator, left)
    plain.seat(spectator, back)
    assert out.getvalue().splitlines() == [
        f"· {name} left; a bot now plays their seat",
        f"· {name} is back",
    ]
    term = FakeTerminal(size=(100, 30))
    screen = Show(io.StringIO(), "screen", term)
    screen.seat(follow(played, screen), left)
    assert f"{name} left; a bot now plays their seat" in "\n".join(x.plain for x in term.frames[-1])
    Show(io.StringIO(), "json").seat(spectator, left)  # --json: on stderr, stdout stays JSON
    assert capsys.readouterr().err == f"· {name} left; a bot now plays their seat\n"


def test_the_screen_says_what_the_watch_does_before_the_table_is_up(played):
    """No blank screen while the watch looks for the table, connects, waits for it to start
    and the seats draw their order and keys: each note is on the screen at once, then
    the stage the table is at, with the running count."""
    term = FakeTerminal(size=(80, 24))
    show = Show(io.StringIO(), "screen", term)
    show.draw(None)  # as `slaiga watch` does at once
    assert "Slaiga watch" in "\n".join(x.plain for x in term.frames[-1])
    show.note("connecting to 192.0.2.10:7431…")
    show.note("the table is still waiting for players; watching once it starts")
    screen = "\n".join(x.plain for x in term.frames[-1])
    assert "· connecting to 192.0.2.10:7431…" in screen
    assert "· the table is still waiting for players" in screen
    assert "q quit" in screen.splitlines()[-1]
    spectator = Spectator(played.genesis)
    seen = []
    for signed in played.records[0].signed_from(1):
        show.drawn_at = 0.0  # every envelope redraws (the screen draws at most every 0.1 s)
        show.update(spectator, spectator.offer(signed))
        seen.append("\n".join(x.plain for x in term.frames[-1]))
    assert "step 1: the players are drawing the seat order" in seen[0]
    assert "connecting to 192.0.2.10:7431…" in seen[0]
    assert any("the players are exchanging keys" in f for f in seen)
    assert "watching, public view" in seen[-1]  # then the table itself
    assert all(len(line) <= 80 for f in seen for line in f.splitlines())


def test_the_last_words_wrap_on_words_at_the_terminal_width(played, capsys, monkeypatch):
    from cli import watch

    show = Show(io.StringIO(), "plain")
    spectator = follow(played, show)
    monkeypatch.setattr(watch, "_width", lambda: 80, raising=False)
    watch._print_end(WatchResult(spectator, spectator.manifest), show, as_json=False)
    lines = capsys.readouterr().out.splitlines()
    assert all(len(line) <= 80 for line in lines), lines
    assert spectator.head.hex() + "." in [w for line in lines for w in line.split()]
    assert lines[-2:] == [
        "Every player keeps the record file: `slaiga verify` checks it, `slaiga replay`",
        "steps through it.",
    ]
