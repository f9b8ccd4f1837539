"""Node events: each kind renders for a person and serialises to the JSON line tools parse."""

from __future__ import annotations

import json
import typing
from dataclasses import fields

from p2p.table.events import EVENT_KINDS, Listening, NodeEvent, SeatStalled

SAMPLES: dict[object, object] = {
    int: 3,
    float: 1.25,
    str: "x",
    int | None: None,
    str | None: None,
    tuple[int, ...]: (1, 2),
}


def test_every_kind_describes_itself_and_keeps_its_json_fields() -> None:
    assert (
        len(EVENT_KINDS) == 46
    )  # seat_left, seat_back, notice_refused: issue 18; spectators; the lost seat (21)
    for kind, cls in EVENT_KINDS.items():
        assert kind == cls.KIND and issubclass(cls, NodeEvent)
        hints = typing.get_type_hints(cls)
        event = cls(**{f.name: SAMPLES[hints[f.name]] for f in fields(cls)})
        assert event.describe(), kind
        line = json.loads(json.dumps({"event": event.KIND, **event.data()}, sort_keys=True))
        assert set(line) == {"event"} | {f.name for f in fields(cls)}


def test_fields_and_text_of_two_kinds_tools_rely_on() -> None:
    ev = Listening(address="127.0.0.1:4000", table_id="ab" * 8)
    assert ev.data() == {"address": "127.0.0.1:4000", "table_id": "ab" * 8}
    assert ev.describe() == f"listening on 127.0.0.1:4000, table {'ab' * 8}"
    stalled = SeatStalled(name="Ann", seat=0, slot=2, step=7, silent_for=3.04)
    assert stalled.KIND == "stalled"
    assert stalled.describe() == "Ann owes step 7 and has been silent 3.0s"


def test_every_event_about_a_player_names_it_one_way() -> None:
    """One numbering everywhere (issue 22): an event about a player carries its ``name``,
    its ``seat`` (place in the seat order, as in the results) and its ``slot`` (join
    order), or ``name``/``culprit``/``culprit_slot`` for a culprit; the text says the
    name and no bare number a person could take for the wrong player."""
    about_players = 0
    for kind, cls in EVENT_KINDS.items():
        names = {f.name for f in fields(cls)}
        if not names & {"seat", "slot", "culprit"} or kind == "formed":
            continue
        about_players += 1
        assert "name" in names, kind
        assert {"seat", "slot"} <= names or {"culprit", "culprit_slot"} <= names, kind
        hints = typing.get_type_hints(cls)
        values = {f: SAMPLES[hints[f]] for f in names}
        values.update({k: 5 for k in ("seat", "slot", "culprit", "culprit_slot") if k in names})
        values["name"] = "Zed"
        text = cls(**values).describe()
        assert "Zed" in text and "seat 5" not in text and "slot 5" not in text, (kind, text)
    assert about_players >= 16
