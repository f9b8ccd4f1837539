"""A proven cheat in player words (``p2p.record.verify.plain_cheat``): one sentence, the
step once, seats counted from 1, no engine class names or proof names but the short
"(kind: ...)" tail; and the same sentence wherever a cheat is told: the live table's
cheat line (``cli.netplay.player_event_text``), the table's result and ``slaiga verify``."""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path
from types import SimpleNamespace

from cli.netplay import player_event_text
from engine import registry
from engine.players import BotPlayer
from p2p.record.chain import Record, entry_hash
from p2p.record.store import RecordFile, load
from p2p.record.verify import plain_cheat, verify_record_file
from p2p.table import local_table
from p2p.table.events import CheatSeen, Convicted
from p2p.table.forming import table_rule
from p2p.table.session import TableSession
from p2p.wire import Entry, decode_body
from tests.p2p.cheaters import Cheater, force_signing


def test_a_move_naming_another_seat() -> None:
    said = plain_cheat(
        "InvalidMove",
        "action at step 55: action names seat 1, sent by seat 2",
        "Bob (seat 3)",
        55,
        lambda seat: ["Ann (seat 1)", "Cat (seat 2)", "Bob (seat 3)"][seat],
    )
    assert said == (
        "Bob (seat 3)'s move at step 55 is made in the name of Cat (seat 2), not their own"
        " (kind: InvalidMove)"
    )


def test_a_proof_that_does_not_check_out() -> None:
    said = plain_cheat(
        "InvalidMove",
        "tokens at step 12: reveal tokens of seat 2 do not verify: DLEQ proof does not verify"
        " (challenge mismatch)",
        "Bob",
        12,
    )
    assert said == (
        "Bob's proof for the cards they revealed at step 12 does not check out (kind: InvalidMove)"
    )


def test_an_illegal_move_drops_the_engine_repr() -> None:
    said = plain_cheat(
        "InvalidMove", "illegal action: you do not hold 7♥ (Play(seat=1, cards=(3,)))", "Cat", 9
    )
    assert said == "Cat's move at step 9 breaks the rules: you do not hold 7♥ (kind: InvalidMove)"
    said = plain_cheat("OutOfTurn", "spoke at step 9, owed by Ann", "Cat", 9)
    assert said == "Cat spoke out of turn at step 9; it was owed by Ann (kind: OutOfTurn)"


CHEAT_SLOT = 1


class WrongSeat(BotPlayer):
    """Sends its first move in the name of the next seat of the seat order."""

    done = False

    def choose(self, game, seat):  # type: ignore[no-untyped-def]
        honest = super().choose(game, seat)
        if self.done:
            return honest
        self.done = True
        return dataclasses.replace(honest, seat=(seat + 1) % game.seats)


def _wrong_seat_record(tmp_path: Path) -> tuple[Path, local_table.LocalTable]:
    """A Slave table (real protocol code for every seat) where one seat signs a move in
    another seat's name; the record file an honest seat keeps (its accepted entries, then
    the refused one as evidence)."""
    table = local_table.new_table("slave", 4, {"games": 1})
    force_signing(table.drivers[CHEAT_SLOT].record)
    spec = registry.get("slave")

    def player(slot: int, seat: int) -> BotPlayer | None:
        if slot != CHEAT_SLOT:
            return None
        return WrongSeat(spec.bots["heuristic"](seat, random.Random(seat)))

    local_table.run(table, make_player=player)
    assert table.cheats, "the move in another seat's name was not caught"
    return _record_file(tmp_path / "slave.rec", table), table


def _record_file(path: Path, table) -> Path:  # type: ignore[no-untyped-def]
    """What an honest seat's file keeps of ``table``: its steps, then every entry signed
    (the cheat's among them), each once."""
    kept = set()
    with RecordFile.create(path, table.genesis) as store:
        for signed in [*table.records[0].signed_from(1), *table.log]:
            if entry_hash(signed.entry) not in kept:
                kept.add(entry_hash(signed.entry))
                store.append(signed)
    return path


def test_a_move_in_another_seats_name_is_told_alike_live_in_the_result_and_by_verify(
    tmp_path: Path,
) -> None:
    """The live cheat line, the result's line and ``slaiga verify`` name the cheater and
    the seat they moved for by name and seat (counted from 1), and the step."""
    path, table = _wrong_seat_record(tmp_path)
    report = verify_record_file(path)
    f = report.failure
    assert f is not None and f.culprit == CHEAT_SLOT, f
    order = report.seat_order
    assert order is not None
    names = [table.records[0].manifest.seats[s].name for s in order]
    me = order.index(CHEAT_SLOT)
    other = (me + 1) % len(order)
    assert f.message == (
        f"{names[me]} (seat {me + 1})'s move at step {f.step} is made in the name of"
        f" {names[other]} (seat {other + 1}), not their own (kind: InvalidMove)"
    ), f.message

    _told_alike_live(path, table, f.message, f.step)


def _told_alike_live(path: Path, table: local_table.LocalTable, said: str, step: int) -> None:
    """A live honest seat's session, fed the signed entries of the file: its conviction
    in the words the person at the table reads, and its result, say what verify says."""
    honest = 0
    session = TableSession(
        Record(table.genesis, table_rule), table.drivers[honest].identity, honest
    )
    told: list[str] = []
    node = SimpleNamespace(session=session)
    for signed in load(path).entries:
        entry = decode_body(signed.entry, Entry)
        assert isinstance(entry, Entry)
        for event in session.offer(signed, via=entry.seat):
            if isinstance(event, Convicted | CheatSeen):
                text = player_event_text(event, node)
                if text is not None:
                    told.append(text)
    assert told == [f"CHEAT PROVEN: {said}"]
    summary = session.result(path).game_summary()
    assert summary["cheat"]["said"] == said
    assert summary["cheat"]["step"] == step


def test_a_dice_roll_that_does_not_open_is_told_alike_with_its_step(tmp_path: Path) -> None:
    """A cheat the table finds when a step completes (a dice value that does not open its
    commitment): the live line names the step as verify does."""
    table = local_table.new_table("slajens", 3, {"rounds": 1}, cheats={CHEAT_SLOT: Cheater("dice")})
    force_signing(table.drivers[CHEAT_SLOT].record)  # it signs what its own checks refuse
    local_table.run(table)
    assert table.cheats
    path = _record_file(tmp_path / "slajens.rec", table)
    f = verify_record_file(path).failure
    assert f is not None and f.culprit == CHEAT_SLOT and f.step is not None, f
    assert f" at step {f.step} " in f.message and "(seat " in f.message, f.message
    _told_alike_live(path, table, f.message, f.step)
