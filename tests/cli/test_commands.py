"""The command line: bad input is a usage error (exit 2) with a clear sentence, never a
traceback; every command and option has help; one peer per state folder.

Real subprocesses. Nothing here sends a packet: the bad values are refused before
any socket is opened (the network commands run in loopback-only mode regardless).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cli import args as checked
from cli.main import main
from cli.state import StateInUse, StateLock, state_dir
from engine import registry

ROOT = Path(__file__).resolve().parents[2]


def slaiga(*args: str, home: Path | None = None, **env: str) -> subprocess.CompletedProcess:
    environ = dict(
        os.environ,
        PYTHONPATH=str(ROOT),
        COLUMNS="200",
        SLAIGA_LOOPBACK_ONLY="1",
        SLAIGA_INTERFACE="127.0.0.1",
        **env,
    )
    if home is not None:
        environ["SLAIGA_HOME"] = str(home)
    return subprocess.run(
        [sys.executable, "-m", "cli", *args],
        cwd=ROOT,
        env=environ,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["lobby", "--timeout", "-5"], "a time must be 0 or more"),
        (["lobby", "--timeout", "soon"], "is not a number of seconds"),
        (["open", "slave", "--interface", "10.99.99.99"], "this machine has no such address"),
        (["open", "slave", "--port", "99999"], "use 1 to 65535"),
        (["join", "--port", "-1"], "use 1 to 65535"),
        (["open", "slave", "--demo-steps", "-3"], "a count must be 0 or more"),
        (["open", "slave", "--name", ""], "a name cannot be empty"),
        (["open", "slave", "--name", "   "], "a name cannot be empty"),
        (["open", "slave", "--seats", "99"], "needs 4-6 seats"),
        (["open", "slave", "--open-timeout", "-1"], "a time must be 0 or more"),
        (["join", "--peer", "nonsense"], "give HOST:PORT"),
        (["join", "--peer", "127.0.0.1:70000"], "give HOST:PORT"),
        (["play", "slaiga", "--local", "--bot-param", "nonsense=3"], "its settings are: bluff"),
        (["play", "slaiga", "--local", "--seats", "99"], "needs 2-8 seats"),
        (["play", "slaiga", "--local", "--seat", "5"], "--seat must be 1 to 4"),
        (["play", "slaiga", "--local", "--answer-timeout", "-2"], "a time must be 0 or more"),
        (["play", "slave", "--local", "--name", ""], "a name cannot be empty"),
        (["simulate", "slaiga", "--bot-param", "nonsense=3"], "no setting 'nonsense'"),
        (["simulate", "slave", "--games", "0"], "must be at least 1"),
        (["rules", "chess"], "unknown game 'chess'"),
    ],
)
def test_bad_input_is_a_usage_error_with_a_clear_message(args, message, capsys, monkeypatch):
    monkeypatch.setenv("SLAIGA_LOOPBACK_ONLY", "1")
    monkeypatch.setenv("SLAIGA_INTERFACE", "127.0.0.1")
    try:
        code = main(args)
    except SystemExit as exc:  # argparse's own usage errors
        code = exc.code
    out = capsys.readouterr()
    assert code == checked.EXIT_USAGE, (out.out, out.err)
    assert message in " ".join((out.err + out.out).split())


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["lobby", "--timeout", "-5"], "a time must be 0 or more"),
        (["open", "slave", "--interface", "10.99.99.99"], "this machine has no such address"),
        (["open", "slave", "--seats", "99"], "needs 4-6 seats"),
    ],
)
def test_the_command_itself_refuses_bad_input_without_a_traceback(args, message):
    proc = slaiga(*args)
    assert proc.returncode == checked.EXIT_USAGE, (proc.stdout, proc.stderr)
    assert message in " ".join(proc.stderr.split())
    assert "Traceback" not in proc.stderr


def test_every_command_and_option_has_help_and_the_exit_codes(capsys):
    top = slaiga("--help").stdout
    assert "exit status: 0 done" in " ".join(top.split())
    commands = [
        "play",
        "simulate",
        "options",
        "rules",
        "lobby",
        "open",
        "join",
        "resume",
        "verify",
        "bench",
    ]
    for name in commands:
        assert name in top
    for name in ("play", "simulate", "lobby", "open", "join", "resume"):
        with pytest.raises(SystemExit):
            main([name, "--help"])
        text = " ".join(capsys.readouterr().out.split())
        assert "2 bad command line" in text, name
        for option in [w for w in text.split() if w.startswith("--")]:
            assert option.strip("[],") in text
    with pytest.raises(SystemExit):
        main(["play", "--help"])
    play = " ".join(capsys.readouterr().out.split())
    for option in (
        "--local",
        "--answer-timeout",
        "--bot-param",
        "--name",
        "--ask-reload",
        "--json",
    ):
        assert option in play
    assert "--trace" not in play  # a test hook, not for people


def test_rules_are_printed_and_options_cite_them(capsys):
    out = slaiga("rules", "aight-of-spaides", "--plain").stdout
    assert "Table options of aight-of-spaides" in out and "wrong_call_penalty" in out
    for game in registry.names():
        assert main(["rules", game, "--plain"]) == 0
        assert "Table options of" in capsys.readouterr().out
        assert (ROOT / "docs" / "rules" / f"{game}.md").is_file()
    main(["options", "slave"])
    options = capsys.readouterr().out
    assert "docs/rules/slave.md" in options and "§" not in options  # no outside rulebook
    main(["options"])
    listing = capsys.readouterr().out
    assert "§" not in listing and "docs/rules/aight-of-spaides.md" in listing


def test_options_are_laid_out_readably_at_80_columns(capsys, monkeypatch):
    """The about and meaning columns get the room: their text wraps on words under its
    column, not a word or two a line beside a column of file paths."""
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["options"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert all(len(line) <= 80 for line in lines)
    about = [line.split("│")[3].strip() for line in lines if line.count("│") == 4]
    assert "Slaiga: straight flushes, volleys, and lies" in about
    assert "rules: docs/rules/aight-of-spaides.md" in about
    assert main(["options", "slaiga"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert all(len(line) <= 80 for line in lines)
    meaning = [line.split("│")[4].strip() for line in lines if line.count("│") == 5]
    assert "add two jokers (they cancel" in meaning


def test_each_rules_page_names_every_table_option_with_its_default():
    for game in registry.names():
        text = (ROOT / "docs" / "rules" / f"{game}.md").read_text(encoding="utf-8")
        for o in registry.get(game).game_class.OPTIONS:
            row = next((x for x in text.splitlines() if x.startswith(f"| `{o.name}`")), None)
            assert row is not None, f"{game}: option {o.name} missing from its rules page"
            default = (
                ("on" if o.default else "off") if isinstance(o.default, bool) else str(o.default)
            )
            assert default in row, (game, o.name, row)


def test_a_state_folder_is_held_by_one_peer(tmp_path):
    with StateLock(tmp_path):
        with pytest.raises(StateInUse, match="--state-dir"):
            StateLock(tmp_path).acquire()
        proc = slaiga("open", "slave", "--no-announce", "--open-timeout", "1", home=tmp_path)
        assert proc.returncode == checked.EXIT_FAILED
        said = " ".join(proc.stderr.split())
        assert "in use by another running slaiga peer" in said and "--state-dir" in said
    StateLock(tmp_path).acquire().release()  # free again once the holder is gone


def test_the_state_folder_follows_the_overrides(tmp_path, monkeypatch):
    monkeypatch.setenv("SLAIGA_HOME", str(tmp_path / "home"))
    assert state_dir() == tmp_path / "home"
    assert state_dir(tmp_path / "explicit") == tmp_path / "explicit"
    monkeypatch.delenv("SLAIGA_HOME")
    assert state_dir().name == "slaiga"


def test_the_readme_verifies_the_real_record_suffix():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert ".rec " in readme or ".rec\n" in readme
    assert "TABLE-ID.record" not in readme


def test_a_number_option_says_its_range_in_words(capsys):
    """Not "an integer in [1, inf]": a player reads "a whole number, 1 or more"."""
    assert main(["options", "slaiga", "--json"]) == 0
    allowed = {o["name"]: o["allowed"] for o in json.loads(capsys.readouterr().out)["options"]}
    assert allowed["max_turns"] == "a whole number, 1 or more"
    assert allowed["king_max"] == "a whole number from 1 to 52"
    bad = slaiga("simulate", "slaiga", "--games", "1", "--option", "king_max=0")
    assert bad.returncode == 2
    assert "a whole number from 1 to 52" in bad.stderr, bad.stderr


def test_an_unknown_option_is_told_with_the_commands_own_usage(capsys):
    """`slaiga watch --state-dir x` shows watch's usage (its options), not the program's."""
    with pytest.raises(SystemExit) as exc:
        main(["watch", "--state-dir", "x"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: slaiga watch ") and "--peer HOST:PORT" in err
    assert "slaiga watch: error: unrecognized arguments: --state-dir" in err
    with pytest.raises(SystemExit):
        main(["--bogus"])
    assert "slaiga: error: unrecognized arguments: --bogus" in capsys.readouterr().err


def test_help_leads_a_newcomer_to_play_and_keeps_the_rare_options_apart(capsys):
    top = " ".join(slaiga("--help").stdout.split())
    assert "New here? `slaiga play slaiga` plays Slaiga against three bots" in top
    assert top.index(" play play a game") < top.index(" bench run a benchmark")
    for name in ("open", "join", "resume"):
        with pytest.raises(SystemExit):
            main([name, "--help"])
        text = capsys.readouterr().out
        apart = text.index("timing, scripts and testing (rarely needed):")
        assert text.index("  --name NAME") < apart < text.index("  --demo-steps N")
        assert apart < text.index("  --decide-max-ms MS") and "(default 1800000)" in text
    with pytest.raises(SystemExit):
        main(["bench", "--help"])
    bench_help = " ".join(capsys.readouterr().out.split())
    from cli.bench import SUITES

    for suite in SUITES:
        assert f" {suite} (" in bench_help, suite
    assert "`slaiga bench SUITE --help` lists a suite's own options" in bench_help
