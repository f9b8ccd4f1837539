"""Record files of games played in process (``p2p.table.local_table``: every seat's real
protocol code, every proof made and checked), for the ``slaiga replay`` tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from p2p.record.chain import entry_hash
from p2p.record.store import RecordFile
from p2p.table import local_table
from p2p.table.seat import game_of


def played_record(
    folder: Path,
    game: str,
    seats: int,
    options: dict[str, Any],
    cheats: dict[int, Any] | None = None,
    slot: int = 0,
) -> tuple[Path, local_table.LocalTable]:
    """Play a whole game and write seat ``slot``'s record file as its peer does: every
    entry it accepted, then the refused entries it keeps as evidence; and every seat's
    table secret file (``<slot>.secret``: the table secret, then the seal key)."""
    table = local_table.run(local_table.new_table(game, seats, options, cheats=cheats))
    path = write_record(table, folder / f"{game}.rec", slot)
    for d in table.drivers:
        keys = d.game.mine.keys
        (folder / f"{d.slot}.secret").write_bytes(keys.table_secret + keys.seal.private_bytes())
    return path, table


def write_record(table: local_table.LocalTable, path: Path, slot: int) -> Path:
    """Seat ``slot``'s record file of a played table, at ``path``."""
    kept = set()
    with RecordFile.create(path, table.genesis) as store:
        for signed in [*table.records[slot].signed_from(1), *table.log]:
            if entry_hash(signed.entry) not in kept and (
                table.records[slot].holds(signed) or table.cheats
            ):
                kept.add(entry_hash(signed.entry))
                store.append(signed)
    return path


def names_in_order(table: local_table.LocalTable) -> list[str]:
    """The players' names in the drawn seat order (as the screen and verify count seats)."""
    game = game_of(table.records[0])
    manifest = table.records[0].manifest
    return [manifest.seats[slot].name for slot in game.order]


def ranking_names(table: local_table.LocalTable) -> list[str]:
    names = names_in_order(table)
    return [names[e] for e in game_of(table.records[0]).result()["ranking"]]


def end_screen_places(end: str, table: local_table.LocalTable) -> tuple[list[str], list[str]]:
    """The players an end screen lists, and the ones the table's ranking gives, to compare:
    in place order, or (a draw's end screen shows no places) as sorted names."""
    expected = ranking_names(table)
    lines = [line.strip() for line in end.splitlines()]
    placed = [ln.split()[1] for ln in lines if ln[:3] in ("1st", "2nd", "3rd", "4th")]
    if placed or "A draw" not in end:
        return placed, expected
    after = lines[lines.index("player") + 1 :] if "player" in lines else []
    listed = [ln.split()[0] for ln in after[: len(expected)] if ln]
    return sorted(listed), sorted(expected)
