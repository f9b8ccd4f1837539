"""The `survive` table option (issue 21): listed for every game with what it costs, and
checked by `slaiga open` and `slaiga play` alike."""

from __future__ import annotations

import json

import pytest

from cli.main import main
from cli.net import table_options
from engine import registry
from p2p.errors import NodeError


@pytest.mark.parametrize("game", registry.names())
def test_slaiga_options_lists_survive_with_its_cost(game, capsys):
    assert main(["options", game, "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    (row,) = [o for o in info["options"] if o["name"] == "survive"]
    assert row["default"] is False and row["allowed"] == "on or off"
    if game == "slajens":  # a dice game: no cards to open (it once said "your cards")
        assert "cards" not in row["help"].replace("no hidden cards", "")
        assert "escrowed" in row["help"]
    else:
        assert "all the other players together could open your cards" in row["help"]
    assert "3+ seats" in row["help"]
    # while `slaiga open` refuses it, the row says so
    try:
        table_options(game, 4, ["survive=on"])
        refused = False
    except NodeError:
        refused = True
    assert refused == ("not yet playable over the network" in row["help"]), row["help"]
    assert main(["options", game]) == 0
    assert "survive" in capsys.readouterr().out


def test_open_takes_survive_with_three_seats_or_more():
    assert table_options("slave", 4, [])["survive"] is False
    opts = table_options("slave", 4, ["survive=on", "absent_after=5"])
    assert opts["survive"] is True and opts["absent_after"] == 5
    with pytest.raises(NodeError, match="at least 3 players"):
        table_options("slajens", 2, ["survive=on"])


def test_play_checks_a_table_of_peers_options_as_open_does(tmp_path, capsys):
    """`slaiga play` once signed options into a table of peers that `open` refuses;
    it checks them the same way (survive needs three players) before opening anything."""
    state = tmp_path / "s"
    code = main(
        ["play", "slajens", "--seats", "2", "--option", "survive=on", "--state-dir", str(state)]
    )
    assert code == 2
    assert "at least 3 players" in capsys.readouterr().err
    assert not (state / "tables").exists()  # no table was opened


def test_an_option_value_like_markup_is_said_back_not_a_traceback(capsys):
    """`--option games=[/x]` made play and simulate end in a traceback (rich markup)."""
    for command in (["play", "slave", "--local"], ["simulate", "slave"], ["options", "[/x]"]):
        try:
            code = main([*command, "--option", "games=[/x]"])
        except SystemExit as exc:  # argparse refuses `options [/x] --option`
            code = exc.code
        assert code == 2
        assert "Traceback" not in capsys.readouterr().err
    assert main(["simulate", "slave", "--option", "games=[/x]"]) == 2
    assert "bad value '[/x]'" in capsys.readouterr().err
