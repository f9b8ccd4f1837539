"""The `survive` table option (issue 21): listed for every game with what it costs, and
refused by `slaiga open` until the node plays it."""

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


def test_open_refuses_survive_until_the_node_plays_it():
    assert table_options("slave", 4, [])["survive"] is False
    with pytest.raises(NodeError, match="not played on the LAN yet"):
        table_options("slave", 4, ["survive=on"])
    with pytest.raises(NodeError, match="at least 3 players"):
        table_options("slajens", 2, ["survive=on"])


def test_play_refuses_survive_at_a_table_of_peers_as_open_does(tmp_path, capsys):
    """`slaiga play` once signed survive=on into a table of peers that cannot play it."""
    code = main(["play", "slave", "--option", "survive=on", "--state-dir", str(tmp_path / "s")])
    assert code == 2
    assert "not played on the LAN yet" in capsys.readouterr().err
    assert not (tmp_path / "s" / "tables").exists()  # no table was opened


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
