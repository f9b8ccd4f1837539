"""End to end under tmux: a scripted person plays ``slaiga play`` through keystrokes.

The real command runs in a real terminal (a tmux pane of 80x24) and the test
only sends keys and reads the screen, like a person. ``--trace`` makes the
command write one JSON line per question (what the engine says the seat holds,
may see and may do, and the screen it drew); at every question the test
checks that the terminal shows exactly that screen, the person's hand, whose
turn it is, and no card face the seat has not been allowed to see.

Games: a whole match of Slave (2 deals) at a real networked table (three bot
peer processes on loopback, every proof checked), a whole game of Slaiga in
which the person lies (a bluffed shot) and is checked and also checks, and a
game of Aight of Spaides in which the person creates a rule with the 8♠ through
the rule builder, then breaks it and is called Improper!. The last two use
``--local`` (the trusted local dealer), because they need a known deal (the 8♠
in hand) and bots tuned to check everything (``--bot-param``); bots there answer
at once (``--bot-delay 0``).

Also ``slaiga join`` at a terminal with two open tables in sight: it lists
them and the person picks one by number.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from cli.simulate import derive_seed
from engine import registry, runner
from engine.dealer import LocalDealer
from tests.cli._screens import faces_on

ROOT = Path(__file__).resolve().parents[2]
WAIT_S = 30  # the most any single step may take before the test gives up
POLL_S = 0.01
pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
SPECIAL = {"enter": "Enter", "down": "Down", "up": "Up", "esc": "Escape", "space": "Space"}
SPECIAL |= {"right": "Right", "left": "Left", "home": "Home", "end": "End"}


class Pane:
    """``slaiga play ...`` in a private tmux server, read and typed at like a person."""

    def __init__(self, tmp: Path, *args: str, command: str = "play") -> None:
        self.server = f"slaiga-test-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.trace = tmp / "trace.jsonl"
        self.trace.touch()
        self.status = tmp / "status"
        cmd = [sys.executable, "-m", "cli", command, *args]
        if command == "play":
            cmd += ["--trace", str(self.trace)]
        shell = " ".join(_quote(c) for c in cmd)
        env = f"PYTHONPATH={_quote(str(ROOT))} LANG=C.UTF-8 LC_ALL=C.UTF-8"
        env += f" SLAIGA_HOME={_quote(str(tmp / 'home'))} SLAIGA_INTERFACE=127.0.0.1"
        env += " SLAIGA_LOOPBACK_ONLY=1"  # the networked table stays on loopback
        # slaiga installed on the PATH, as for a player (the printed commands say `slaiga`)
        env += f' PATH={_quote(str(Path(sys.executable).parent))}:"$PATH"'
        run = f"cd {_quote(str(ROOT))} && env {env} {shell}; echo $? > {_quote(str(self.status))}"
        self.tmux("new-session", "-d", "-x", "80", "-y", "24", "-s", "t", run)
        self.tmux("set-option", "-t", "t", "remain-on-exit", "on")
        self.read = 0
        self.keys = 0

    def tmux(self, *args: str) -> str:
        out = subprocess.run(
            ["tmux", "-L", self.server, "-f", "/dev/null", *args],
            capture_output=True,
            text=True,
            timeout=WAIT_S,
        )
        if out.returncode != 0:
            raise AssertionError(f"tmux {args[0]}: {out.stderr}")
        return out.stdout

    def close(self) -> None:
        subprocess.run(
            ["tmux", "-L", self.server, "kill-server"], capture_output=True, timeout=WAIT_S
        )

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "t")

    def ended(self) -> int | None:
        """The command's exit status once it has ended (written by the shell around it)."""
        text = self.status.read_text() if self.status.exists() else ""
        return int(text) if text.strip().isdigit() else None

    def send(self, *keys: str) -> None:
        """Keys: "enter", "down", ... or literal text (each character is one key)."""
        for k in keys:
            if k in SPECIAL:
                self.tmux("send-keys", "-t", "t", SPECIAL[k])
                self.keys += 1
            else:
                self.tmux("send-keys", "-t", "t", "-l", k)
                self.keys += len(k)

    def next_event(self) -> dict:
        """The next trace line (waiting for the program to ask or answer)."""
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            # whole lines only: the writer may be mid-line (even mid-character)
            lines = self.trace.read_bytes().split(b"\n")[:-1]
            if len(lines) > self.read:
                self.read += 1
                return json.loads(lines[self.read - 1].decode("utf-8"))
            if self.ended() is not None:
                raise AssertionError("the program ended early:\n" + self.screen())
            time.sleep(POLL_S)
        raise AssertionError("no question within the time limit:\n" + self.screen())

    def shows(self, expected: str) -> str:
        """Wait until the terminal shows exactly ``expected`` (the frame the program drew)."""
        want = [x.rstrip() for x in expected.split("\n")]
        deadline = time.monotonic() + WAIT_S
        got = ""
        while time.monotonic() < deadline:
            got = self.screen()
            if [x.rstrip() for x in got.split("\n")][: len(want)] == want:
                return got
            time.sleep(POLL_S)
        raise AssertionError(f"the terminal shows\n{got}\ninstead of\n{expected}")

    def wait_for(self, text: str) -> str:
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            got = self.screen()
            if text in got:
                return got
            time.sleep(POLL_S)
        raise AssertionError(f"{text!r} never appeared:\n{self.screen()}")

    def exit_status(self) -> int:
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            status = self.ended()
            if status is not None:
                return status
            time.sleep(POLL_S)
        raise AssertionError("the program did not end:\n" + self.screen())


def _quote(s: str) -> str:
    return "'" + s.replace("'", "'\\''") + "'"


def check_screen(pane: Pane, ev: dict, rule_faces: set[str] = frozenset()) -> str:
    """The terminal shows the drawn frame, the hand, whose turn it is, nothing unseen."""
    screen = pane.shows(ev["screen"])
    hand_line = next((x for x in screen.splitlines() if x.startswith("Your hand (")), None)
    if ev["hand"]:
        assert hand_line is not None, screen
        assert faces_on(hand_line) == set(ev["hand"]), (hand_line, ev["hand"])
        assert hand_line.startswith(f"Your hand ({len(ev['hand'])}):")
    marked = [
        x[2:].split("  ")[0].replace(" (you)", "").strip()
        for x in screen.splitlines()
        if x.startswith("▶ ")
    ]
    assert sorted(marked) == sorted(ev["to_move"]), (marked, ev["to_move"], screen)
    leaked = faces_on(screen) - set(ev["seen"]) - set(rule_faces)
    assert not leaked, f"{leaked} shown but never seen by the seat:\n{screen}"
    return screen


def code(face: str) -> str:
    """ "9♦" -> "9d" (as a person types it)."""
    return face[:-1] + {"♣": "c", "♦": "d", "♥": "h", "♠": "s"}[face[-1]] if face != "🃏" else "jk"


def play_to_the_end(pane: Pane, decide, rule_faces=frozenset()) -> tuple[dict, list[str]]:
    """Answer every question with ``decide(event, screen)`` until the game ends."""
    screens = []
    while True:
        ev = pane.next_event()
        if ev["event"] == "finish":
            return ev, screens
        if ev["event"] == "answer":
            continue
        screen = check_screen(pane, ev, rule_faces)
        screens.append(screen)
        pane.send(*decide(ev, screen))


def finish_and_leave(pane: Pane, game_title: str, networked: bool = False) -> str:
    end = pane.wait_for("Play again at")
    assert f"Game over: {game_title}" in end
    if networked:  # the record, what was checked in it, and how to check it again
        flat = " ".join(end.split())
        assert "checked, no cheat" in flat and "slaiga verify " in flat, end
    else:
        assert "no record was kept" in end
    pane.send("n", "enter")
    assert pane.exit_status() == 0
    return end


@pytest.fixture
def pane_factory(tmp_path):
    panes: list[Pane] = []

    def make(*args: str) -> Pane:
        pane = Pane(tmp_path, *args)
        panes.append(pane)
        return pane

    yield make
    for p in panes:
        p.close()


def test_a_whole_match_of_slave_by_keys_at_a_networked_table(pane_factory):
    """Against three bot peer processes on loopback: every card dealt by the mental-poker
    protocol, every proof checked; the person plays through the same screen."""
    pane = pane_factory(
        "slave", "--seats", "4", "--option", "games=2", "--name", "Ann", "--answer-timeout", "0",
    )  # fmt: skip
    typed = 0

    def decide(ev, screen):
        nonlocal typed
        if ev["event"] == "ask" and ev["n"] % 2 == 0 and ev["legal"]:
            typed += 1
            return [ev["legal"][0], "enter"]  # say it
        return ["enter"]  # or take the menu's preselected choice

    end_ev, screens = play_to_the_end(pane, decide, rule_faces={"3♣"})
    assert any("deal 2 of 2" in s for s in screens) and typed > 3  # the header
    assert any(" plays " in s for s in screens)
    end = finish_and_leave(pane, "Slave", networked=True)
    assert all(name in end for name in ("Ann", "Bob", "Cat", "Dan"))
    assert end_ev["record"] and end_ev["culprit"] is None
    print(f"\nSlave match (2 deals, 4 players): {len(screens)} screens, {pane.keys} keys")


def test_slaiga_with_a_lie_a_check_and_the_whole_game(pane_factory):
    pane = pane_factory(
        "slaiga", "--local", "--seed", "5", "--seats", "3", "--name", "Ann",
        "--bot-delay", "0", "--answer-timeout", "0", "--bot-param", "check_below=1.01",
    )  # fmt: skip
    lied = checked = False

    def decide(ev, screen):
        nonlocal lied, checked
        legal = ev.get("legal", [])
        if ev["event"] == "ask" and not lied and any(x.startswith("shoot ") for x in legal):
            low = next((f for f in ev["hand"] if f[0] in "23456789" and f != "🃏"), None)
            if low is not None:
                lied = True
                return [f"shoot bob {code(low)} claim Js", "enter"]  # a bluff: not a jack
        if ev["event"] == "ask" and not checked and "check" in legal and "concede" in legal:
            checked = True
            return ["check", "enter"]
        return ["enter"]

    end_ev, screens = play_to_the_end(pane, decide)
    text = "\n".join(screens)
    assert lied and "Ann shoots Bob" in text and "claims a ♠ shot, face down" in text
    assert "Bob checks the shot" in text and "a lie — Ann pays" in text
    if checked:
        assert "Ann checks the" in text
    finish_and_leave(pane, "Slaiga")
    print(f"\nSlaiga game (3 players): {len(screens)} screens, {pane.keys} keys")


def aight_seed_with_a_playable_eight() -> int:
    """A seed whose deal gives seat 0 the 8♠ with a ♠ or an 8 on the pile."""
    spec = registry.get("aight-of-spaides")
    for seed in range(2000):
        game = spec.factory(3, {})
        runner.start(game, LocalDealer(game.deck, derive_seed(seed, 0, "dealer")))
        v = game.view(0)
        top = v["top"].face
        if any(str(c.face) == "8♠" for c in v["hand"]) and (top.suit == 3 or top.rank == 8):
            return seed
    raise AssertionError("no such seed")


def test_aight_a_rule_made_with_the_eight_of_spades_then_called_improper(pane_factory):
    seed = aight_seed_with_a_playable_eight()
    pane = pane_factory(
        "aight-of-spaides", "--local", "--seed", str(seed), "--seats", "3", "--name", "Ann",
        "--bot-delay", "0", "--answer-timeout", "0",
    )  # fmt: skip
    ev = pane.next_event()
    assert ev["event"] == "ask" and ev["phase"] == "turn"
    check_screen(pane, ev)

    def choose(ev: dict, label_start: str) -> list[str]:
        i = next(i for i, o in enumerate(ev["options"]) if o.startswith(label_start))
        return ["down"] * (i - ev["selected"]) + ["enter"]

    pane.send(*choose(ev, "play 8♠"))
    steps = [
        ("New rule, step 1", "a card is played"),
        ("When which card", "any card"),
        ("Step 2: When any card is played", "the player must announce"),
    ]
    for title, option in steps:
        ev = pane.next_event()
        assert ev["event"] == "menu" and ev["title"].startswith(title), ev
        check_screen(pane, ev)
        pane.send(*choose(ev, option))
    ev = pane.next_event()
    assert ev["title"].startswith("Step 3: which words")
    pane.send("Spaides", "enter")
    ev = pane.next_event()
    screen = check_screen(pane, ev)
    assert ev["title"] == "New rule: When any card is played, the player must announce “Spaides”."
    assert ev["title"] in screen  # the person reads the rule before confirming
    pane.send("enter")
    assert pane.next_event()["answer"].startswith("8s rule any: say")
    broke = False
    while True:
        ev = pane.next_event()
        if ev["event"] == "answer":
            continue
        screen = check_screen(pane, ev)
        if broke and "is right: missing announcement “Spaides”" in " ".join(screen.split()):
            break
        if ev["phase"] == "turn" and not broke and ev["event"] == "ask":
            assert "Ann creates #7: When any card is played" in " ".join(screen.split())
            broke = True  # play a matching card, but without the words the new rule asks for
            proper = next(o for o in ev["options"] if o.startswith("play ") and "improper" not in o)
            card = faces_on(proper.split(",")[0]).pop()
            pane.send(f"{code(card)} silent", "enter")
        else:
            pane.send("enter")
    assert "Ann takes back" in screen
    pane.send("quit", "enter")
    pane.wait_for("Leave the game?")
    pane.send("y")
    assert pane.exit_status() == 0


def test_join_at_a_terminal_lets_the_person_pick_among_open_tables(tmp_path: Path) -> None:
    """Two tables announced on loopback; ``slaiga join`` lists both and joins the one picked
    (the Slave table stays open: ``CliPeers`` stops it at the end)."""
    from tests.p2p._procs import CliPeers, run_cli

    def opener(name: str, *args: str):  # type: ignore[no-untyped-def]
        folder = ["--state-dir", str(tmp_path / name), "--name", name]
        return peers.start("open", *args, "--bot", "heuristic", "--json", "--linger", "2", *folder)

    with CliPeers() as peers:
        opener("Pia", "slave", "--seats", "4")
        dice = opener("Quin", "slajens", "--seats", "2", "--option", "rounds=1")
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:  # both tables announced before the person looks
            # a scan as long as the lobby's default: with two tables announced on one
            # machine, their answers can take more than a second to resolve
            seen = json.loads(run_cli("lobby", "--json", "--timeout", "3").stdout or "[]")
            if {t["name"] for t in seen} >= {"Pia", "Quin"}:
                break
        else:
            raise AssertionError("the two tables were never announced")
        pane = Pane(tmp_path, "--name", "Bob", "--bot", "heuristic", command="join")
        try:
            menu = pane.wait_for("Which table?")
            assert "open tables in sight" in menu and "Pia" in menu and "Quin" in menu
            pick = next(line for line in menu.splitlines() if "opened by Quin" in line)
            pane.send(pick.split()[0], "enter")
            assert pane.exit_status() == 0, pane.screen()
            out, err = dice.communicate(timeout=120)
            assert dice.returncode == 0, err
            result = json.loads(out)
            assert result["game"] == "slajens" and result["finished"]
            assert sorted(result["seats"]) == ["Bob", "Quin"]
        finally:
            pane.close()


def test_a_person_who_leaves_a_lan_table_is_replaced_by_a_bot(tmp_path: Path) -> None:
    """At a LAN table (``slaiga join``), a person who quits gets the shell back at once and
    hands the seat to a bot, so the other peers finish the game: same record head, nobody
    named, the record verifies.  The others are told by a signed notice ("Bob left; a bot
    now plays their seat"), which every record file keeps and ``slaiga verify`` shows.
    ``slaiga resume`` takes the seat back from that bot, and the others hear "Bob is back"."""
    from tests.p2p._procs import CliPeers
    from tests.p2p.test_resume import _free_port

    port = _free_port()
    with CliPeers() as peers:
        opener = peers.start(
            "open", "slajens", "--seats", "2", "--option", "rounds=3", "--bot", "heuristic",
            "--bot-think-ms", "400",  # Ann takes her time: Bob comes back before the end
            "--no-announce", "--port", str(port), "--json", "--linger", "5",
            "--state-dir", str(tmp_path / "ann"), "--name", "Ann",
        )  # fmt: skip
        deadline = time.monotonic() + WAIT_S
        while True:  # the opener listens before the person joins
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        pane = Pane(tmp_path, "--peer", f"127.0.0.1:{port}", "--name", "Bob", command="join")
        try:
            pane.wait_for("Keep which dice?")
            pane.send("quit", "enter")
            pane.wait_for("Leave the game?")
            pane.send("y")
            pane.wait_for("a bot plays your seat to the end")
            # the shell is back at once, long before the game ends, saying how to check it
            assert pane.exit_status() == 0, pane.screen()
            assert "the others were told" in pane.screen()
            assert "verify" in " ".join(pane.screen().split())
            assert opener.poll() is None
        finally:
            pane.close()
        # Bob changes his mind: resume takes the seat back from the bot, then he leaves again
        (tmp_path / "status").unlink()
        (table_id,) = [p.stem for p in (tmp_path / "home").glob("tables/*.rec")]
        pane = Pane(tmp_path, table_id[:8], command="resume")
        try:
            pane.wait_for("Keep which dice?")
            assert "Bob (you)" in pane.screen() and "(bot)" not in pane.screen()
            pane.send("quit", "enter")
            pane.wait_for("Leave the game?")
            pane.send("y")
            assert pane.exit_status() == 0, pane.screen()
            out, err = opener.communicate(timeout=120)
        finally:
            pane.close()
    assert opener.returncode == 0, err
    told = [line for line in err.splitlines() if line.startswith("Bob ")]
    left = "Bob left; a bot now plays their seat"
    assert told == [left, "Bob is back", left], err
    result = json.loads(out)
    assert result["finished"] and result["culprit"] is None
    assert sorted(result["seats"]) == ["Ann", "Bob"]
    mine = list((tmp_path / "home").glob("**/tables/*.rec"))
    assert len(mine) == 1
    from p2p.record.verify import verify_record_file

    # the bot that took the seat in the background completes our record too
    deadline = time.monotonic() + WAIT_S
    report = verify_record_file(mine[0])
    while not report.finished and time.monotonic() < deadline:
        time.sleep(0.2)
        report = verify_record_file(mine[0])
    assert report.ok and report.finished and report.head == result["record_head"]
    # both record files keep Bob's signed notice, and verify shows it
    ann = list((tmp_path / "ann").glob("tables/*.rec"))
    for path in (mine[0], *ann):
        notices = [(n.slot, n.back) for n in verify_record_file(path).notices]
        assert notices == [(1, False), (1, True), (1, False)], (path, notices)
    shown = subprocess.run(
        [sys.executable, "-m", "cli.verify", "verify", str(ann[0])], capture_output=True, text=True
    )
    assert shown.returncode == 0
    assert "Bob left; a bot played their seat from then on" in shown.stdout, shown.stdout


def test_leaving_a_table_against_bots_ends_the_command_at_once(tmp_path: Path) -> None:
    """``slaiga play`` against bot peers: leaving stops the bots and ends the command (it
    used to wait for bots that had nobody left to play with)."""
    pane = Pane(tmp_path, "slajens", "--seats", "2")
    try:
        pane.wait_for("Your name at the table")  # asked once (no --name, nothing remembered)
        pane.send("Zoe", "enter")
        pane.wait_for("Keep which dice?")
        assert "Zoe (you)" in pane.screen()
        pane.send("quit", "enter")
        pane.wait_for("Leave the game?")
        pane.send("y")
        assert pane.exit_status() == 0, pane.screen()
        assert "You left the table." in pane.screen()
    finally:
        pane.close()


def test_ctrl_c_prints_the_resume_command_and_it_takes_the_table_up_again(tmp_path: Path) -> None:
    """``slaiga play`` against bot peers, interrupted: the command printed at Ctrl-C works as
    printed; ``resume`` with no id lists the table, and resuming starts the bots again."""
    state = tmp_path / "my state"  # a space: the printed command must quote it
    args = ("slajens", "--seats", "2", "--option", "rounds=2", "--name", "Zoe")
    pane = Pane(tmp_path, *args, "--state-dir", str(state))
    try:
        pane.wait_for("Keep which dice?")
        pane.tmux("send-keys", "-t", "t", "C-c")
        assert pane.exit_status() == 130
        said = " ".join(pane.screen().split())
        assert "Interrupted. To go back to this table, run:" in said, said
        command = said.split("run: ", 1)[1].split(" --state-dir ")[0]
        assert command.startswith("slaiga resume ")
        table_id = command.split()[-1]
        assert f"--state-dir '{state}'" in said
    finally:
        pane.close()
    listing = tmp_path / "listing"
    listing.mkdir()
    pane = Pane(listing, "--state-dir", str(state), command="resume")
    try:
        assert pane.exit_status() == 0
        assert table_id in pane.screen() and "against bots" in pane.screen()
    finally:
        pane.close()
    again = tmp_path / "again"
    again.mkdir()
    pane = Pane(again, table_id[:8], "--state-dir", str(state), command="resume")
    try:
        pane.wait_for("Keep which dice?")  # the bots are back: the game goes on
        for _ in range(60):
            if "Check it yourself" in pane.screen() or pane.ended() is not None:
                break
            pane.send("enter")
            time.sleep(0.3)
        assert pane.exit_status() == 0, pane.screen()
        assert "Game over: Slåjens" in pane.screen()
    finally:
        pane.close()


def test_replay_a_finished_slaiga_game_with_arrow_keys(tmp_path: Path) -> None:
    """``slaiga replay`` on the record file of a whole Slaiga game (every seat's real
    protocol code): → and ← step through it on the table screen, a typed step number
    jumps there, End reaches the end screen with the seats' ranking, q quits."""
    from tests.cli._replays import end_screen_places, played_record

    path, table = played_record(tmp_path, "slaiga", 3, {"max_turns": 30})
    pane = Pane(tmp_path, str(path), command="replay")
    try:
        first = pane.wait_for("Replay step 3 of")
        assert "public view" in first and "Your hand" not in first
        pane.send("right")
        screen = pane.wait_for("Replay step 4 of")
        pane.send("right", "right", "right", "right", "right", "right", "right")
        screen = pane.wait_for("Replay step 11 of")
        assert " are dealt 6 cards each" in screen and "Your hand" not in screen
        pane.send("left")
        pane.wait_for("Replay step 10 of")
        pane.send("g", "40", "enter")
        pane.wait_for("Replay step 40 of")
        pane.send("end")
        end = pane.wait_for("Game over: Slaiga")
        shown, expected = end_screen_places(end, table)
        assert shown == expected, end
        assert "checked, no cheat." in " ".join(end.split())
        pane.send("left")
        pane.wait_for("Replay step ")
        pane.send("q")
        assert pane.exit_status() == 0
    finally:
        pane.close()
