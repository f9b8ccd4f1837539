"""``slaiga verify RECORD-FILE... [--json]``: check saved records offline, as anyone can.

No network and no keys but those in the record (see :mod:`p2p.record.verify` and
``p2p/RECORD_FORMAT.md``).  Human output goes through ``rich``; ``--json``
prints exactly one JSON object on stdout (one a line, each naming its file, for several).

Several files, e.g. every seat's record of one table, are verified one after the other
within one :func:`crypto.memo.remembering` scope: they hold the same entries, so a proof,
signature or point found valid in one is not checked again in the next.  Each report is
still that file's own verdict.

Checks that only one seat could make (a sealed gift checked by its receiver
alone) are listed as caveats, in the human output and under ``caveats`` in
``--json``: the record cannot show they were made honestly.

Exit status: 0 when the record verifies (a torn tail dropped, or a table that
stopped early, still verify: the report says so); 1 when it fails
verification (a forged or damaged file, a gap); 2 when the input cannot be
read as a record file, or on usage errors; 4 when a player is proven to have
cheated (as ``slaiga replay`` and a live table: ``cli.args.EXIT_STATUS``).  With
several files, the highest status of theirs.

Runnable on its own as ``python -m cli.verify verify RECORD-FILE``;
``add_parser`` registers the subcommand on the main ``slaiga`` parser.
"""

from __future__ import annotations

import argparse
import json
import sys

from rich.console import Console
from rich.table import Table
from rich.text import Text

from crypto.memo import remembering
from engine.words.names import printable
from p2p.errors import UnreadableRecord
from p2p.record.verify import VerifyReport, signature_at, verify_record_file

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_UNREADABLE = 2
EXIT_CHEAT = 4
"""A player was proven to cheat (``cli.args.EXIT_STATUS``, as at a live table and in replay)."""

_out = Console(soft_wrap=True)  # never break a hash or a fingerprint across lines
_err = Console(stderr=True)
# Every line is printed with markup off and made printable: names, reasons and paths come
# from the record and the players, and a name like "[/bold]" is text to show, not a style
# (nor a crash), and an escape sequence in a name never reaches the terminal.


def _option(value: object) -> str:
    """A table option's value as `slaiga options` writes it: on/off, not True/False."""
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register ``verify`` on a subparsers object."""
    p = sub.add_parser(
        "verify",
        help="verify a saved record file offline (signatures, hash chain, turns, equivocation)",
        description="Check a saved Slaiga record file offline, with no network and no keys "
        "but those in the record. Several files (each seat's record of one table, say) are "
        "checked one after the other, and a proof found valid in one is not checked again in "
        "the next. Exit 0: verified; 1: fails verification (forged, damaged); 2: unreadable; "
        "4: a player is proven to have cheated (with several files, the highest of theirs).",
    )
    p.add_argument("records", metavar="RECORD-FILE", nargs="*", help=RECORD_HELP)
    p.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object (with several files, one a line, each with its 'record')",
    )
    p.set_defaults(func=run_verify, more_positionals="records")  # files after --json too


RECORD_HELP = (
    "a record file: every game you play keeps one, <table id>.rec in the tables folder of "
    "your state folder (with no file, the newest are listed)"
)
RECENT = 5
"""How many of the newest record files a command with no file lists."""


def no_record_given(command: str) -> int:
    """``slaiga verify`` or ``replay`` with no file: say where the player's record files
    are, the newest first, each as a command to paste (exit 2, a usage error)."""
    import shlex

    from cli.render import slaiga_command
    from cli.state import state_dir
    from p2p.net.state import RECORD_SUFFIX

    folder = state_dir() / "tables"
    try:
        paths = sorted(folder.glob(f"*{RECORD_SUFFIX}"), key=lambda p: -p.stat().st_mtime)
    except OSError:
        paths = []
    lines = [f"slaiga {command}: give a record file to {command} (RECORD-FILE)."]
    if paths:
        lines.append(f"Your newest games' records (in {folder}):")
        lines += [f"  {slaiga_command()} {command} {shlex.quote(str(p))}" for p in paths[:RECENT]]
        if len(paths) > RECENT:
            lines.append(f"  ... and {len(paths) - RECENT} older ones there")
    else:
        lines.append(f"No games of yours are recorded yet (they would be in {folder}).")
    for line in lines:
        _err.print(printable(line), markup=False, soft_wrap=True, highlight=False)
    return EXIT_UNREADABLE  # 2: a usage error, as argparse says it


def _culprit_text(report: VerifyReport) -> str:
    f = report.failure
    assert f is not None
    if f.culprit is None:
        if f.kind == "Unfinished":
            return (
                "no seat is proven at fault: the record is damaged or cut short "
                "(it ends before every player signed the end of the game)"
            )
        if f.kind == "PartialVote":
            return "no seat is proven at fault: the record stops, and not everyone voted to end it"
        if f.kind == "EndedByVote":
            return "no seat is proven at fault: the others agreed to stop, nobody cheated"
        if f.kind == "BadVote":
            return "no seat is proven at fault: a vote proves nothing about cheating"
        if f.kind == "BadNotice":
            return "no seat is proven at fault: a notice proves nothing about cheating"
        return "no seat is proven at fault: the file itself is forged or damaged"
    return f"culprit: {_who(report, f.culprit)}"


def _seat_number(report: VerifyReport, slot: int | None) -> int | None:
    """The number the seat table shows: the place in the drawn seat order or, when the
    order was never drawn, in the order the players sat down; counted from 1."""
    for i, s in enumerate(report.seats, 1):
        if s.slot == slot:
            return s.position if s.position is not None else i
    return None


def opened_lines(report: VerifyReport) -> list[str]:
    """Every hand of a record opened after the game (the ``open_hands`` option), and the
    checks that only one player could make during the game, made again by anyone."""
    if report.opened is None:
        return []
    lines = ["hands opened after the game (option open_hands): every card ever dealt"]
    for n, d in enumerate(report.opened.deals, start=1):
        lines.append(f"deal {n} (shuffled at step {d['step']}):")
        for e, cards in sorted(d["hands"].items()):
            name = report.seats[e].name if e < len(report.seats) else f"seat {e + 1}"
            lines.append(f"  seat {e + 1} ({name}): {' '.join(cards) or '(no cards)'}")
    lines += [f"public check: {m}" for m in report.opened.public_checks]
    return lines


def _who(report: VerifyReport, slot: int | None) -> str:
    """A seat as a player reads it: "seat 2 (Bob)", seats counted from 1 as in the seat
    table above."""
    seat = _seat_number(report, slot)
    name = report.seat_name(slot)
    where = f"seat {seat}" if seat is not None else "a seat"
    return where + (f" ({name})" if name else "")


def _name(report: VerifyReport, slot: int | None) -> str:
    return report.seat_name(slot) or _who(report, slot)


def _winner(report: VerifyReport) -> str | None:
    if not report.ranking:
        return None
    by_pos = {s.position: s for s in report.seats}
    first = by_pos.get(report.ranking[0] + 1)
    return first.name if first is not None else f"seat {report.ranking[0] + 1}"


def lead_line(report: VerifyReport) -> str:
    """The verdict in one plain sentence, before the technical lines."""
    f = report.failure
    if f is None and report.abandoned:
        gone = " and ".join(_name(report, s) for s in report.absent)
        return f"✓ Genuine: nobody cheated; {gone} left the table, so the game ended unfinished"
    if f is None and report.finished and report.is_game:
        won = _winner(report)
        return "✓ This game is genuine: nobody cheated" + (f"; {won} won" if won else "")
    if f is None:
        if report.is_game:
            owing = " and ".join(_name(report, s) for s in report.waiting_on)
            return "✓ Genuine so far: nobody cheated, but the game stopped before its end" + (
                f" (waiting for {owing})" if owing else ""
            )
        return "✓ This record is genuine: every step is signed and in order"
    if f.culprit is not None:
        return f"✗ Cheating proven: {_name(report, f.culprit)} broke the rules; the record holds the proof"
    if f.kind == "Unfinished":
        return "✗ This record is damaged or cut short: it cannot show the game was fair to its end"
    if f.kind == "EndedByVote":
        gone = _name(report, report.ended_by_vote)
        return f"✓ Genuine so far: nobody cheated; {gone} vanished and the others voted to stop"
    if f.kind == "PartialVote":
        return "✗ This record stops early: some players voted to end it, not all of them"
    if f.kind == "BadVote":
        return "✗ This record holds a vote to end the table that does not hold"
    if f.kind == "BadNotice":
        return "✗ This record holds a notice (a player left or came back) that does not hold"
    return "✗ This record is forged or damaged: it proves nothing about the game"


def _count(n: int, what: str) -> str:
    return f"{n} {what}" if n == 1 else f"{n} {what}s"


def notice_lines(report: VerifyReport) -> list[str]:
    """Each signed notice of the record, in player words: who left (a bot played the seat
    from then on) and who came back, with the step the record was at."""
    lines = []
    for n in report.notices:
        name = _name(report, n.slot)
        said = f"{name} is back" if n.back else f"{name} left; a bot played their seat from then on"
        lines.append(f"{said} (at step {n.step}, signed by {name})")
    return lines


def _steps(n: int) -> str:
    return f"{n} step" if n == 1 else f"{n} steps"


def _print_human(report: VerifyReport) -> None:
    lead = lead_line(report)
    _out.print(
        printable(lead), style=f"bold {'green' if lead.startswith('✓') else 'red'}", markup=False
    )
    if report.table_id is not None:
        _out.print(
            printable(f"table {report.table_id}: {report.game}, {len(report.seats)} seats"),
            markup=False,
        )
        table = Table()
        table.add_column("seat", justify="right")
        table.add_column("name")
        table.add_column("fingerprint")
        for i, s in enumerate(report.seats, 1):
            # names come from the players: shown as text, never read as markup
            table.add_row(
                str(s.position if s.position is not None else i),
                Text(printable(s.name)),
                s.fingerprint,
            )
        _out.print(table)
        if report.options:
            opts = ", ".join(f"{k}={_option(v)}" for k, v in sorted(report.options.items()))
            _out.print(printable(f"options: {opts}"), markup=False)
        if report.protocol is not None:
            params = ", ".join(f"{k}={v}" for k, v in report.protocol.items() if k != "kind")
            _out.print(printable(f"protocol: {report.protocol['kind']} ({params})"), markup=False)
        if not report.seat_order_known:
            _out.print(
                printable(
                    "the seat order was never drawn: seats are numbered in the order the "
                    "players sat down"
                ),
                style="yellow",
                markup=False,
            )
    if report.torn_bytes:
        _out.print(
            printable(
                f"the last signature was only half written and is left out ({report.torn_bytes} bytes)"
            ),
            style="yellow",
            markup=False,
        )
    if report.duplicates:
        n = report.duplicates
        _out.print(
            printable(
                f"{n} repeated copy of a step ignored"
                if n == 1
                else f"{n} repeated copies of steps ignored"
            ),
            style="yellow",
            markup=False,
        )
    for c in report.caveats:
        _out.print(printable(f"caveat: {c.message}"), style="yellow", markup=False)
    for line in opened_lines(report):
        _out.print(printable(line), markup=False)
    if report.absent:
        gone = " and ".join(_who(report, s) for s in report.absent)
        if report.abandoned:
            why = "nobody can act for two players, so the table ended there, unfinished"
        else:
            why = "the game went on without them: absent, not a cheat"
        _out.print(
            printable(f"{gone} left the table for good (every other player signed it); {why}"),
            style="yellow",
            markup=False,
        )
    for line in notice_lines(report):
        _out.print(printable(line), markup=False)
    f = report.failure
    if f is not None:
        # the step once: a reason that names it is not told it again
        where = f" at step {f.step}" if f.step is not None else ""
        if f.step is not None and f"step {f.step}" in f.message:
            where = ""
        message = f.message
        if f.kind == "Unfinished":
            owing = " and ".join(_who(report, s) for s in report.waiting_on) or "nobody"
            end = f.message.rpartition("; ")[2] or "nobody signed its end"
            message = f"the game stops at step {f.step}, still owed by {owing}; {end}"
        if f.kind == "EndedByVote":  # every step holds; the players agreed to stop
            others = " and ".join(
                _who(report, s.slot) for s in report.seats if s.slot != report.ended_by_vote
            )
            _out.print(
                printable(
                    f"record verified, game unfinished: ended by vote at step {f.step}:"
                    f" {_who(report, report.ended_by_vote)} vanished, and {others} voted to stop"
                ),
                style="bold yellow",
                markup=False,
            )
        else:
            _out.print(
                printable(f"record FAILS verification{where}: {message}"),
                style="bold red",
                markup=False,
            )
        _out.print(printable(f"{_culprit_text(report)}"), style="red", markup=False)
        for env in f.evidence:
            _out.print(
                printable(f"  evidence: {signature_at(env.frame)}, {env.signature.hex()[:32]}…"),
                style="red",
                markup=False,
            )
        if report.head is not None:
            _out.print(
                printable(
                    f"verified before the failure: {_steps(report.steps)}, the last one's hash"
                    f" {report.head}"
                ),
                markup=False,
            )
        return
    _out.print(
        printable(f"record verified: {_steps(report.steps)}, the last one's hash {report.head}"),
        style="bold green",
        markup=False,
    )
    if report.is_game:  # counted as `slaiga replay` and the end of a game count them
        _out.print(
            printable(
                f"{_count(report.entries, 'signature')} and {_count(report.proofs, 'proof')}"
                f" checked in {_steps(report.steps)}"
            ),
            markup=False,
        )
    if report.ranking is not None:
        by_pos = {s.position: s for s in report.seats}
        names = [by_pos[p + 1].name if p + 1 in by_pos else str(p) for p in report.ranking]
        _out.print(
            printable("ranking: " + ", ".join(f"{i}. {n}" for i, n in enumerate(names, 1))),
            markup=False,
        )
    if not report.finished:
        owing = " and ".join(_who(report, s) for s in report.waiting_on) or "nobody"
        _out.print(
            printable(
                f"unfinished: the table stopped while step {report.steps + 1} was owed by {owing}"
            ),
            style="yellow",
            markup=False,
        )


def run_verify(args: argparse.Namespace) -> int:
    if not args.records:
        return no_record_given("verify")
    several = len(args.records) > 1
    with remembering():  # each seat's file of one table: a proof is checked once in all
        codes = [_verify_one(path, args.json, several) for path in args.records]
    return max(codes)


def _verify_one(path: str, as_json: bool, several: bool) -> int:
    """Verify one record file and print its report: one JSON object (naming the file when
    ``several``) or the human report (under a heading naming the file when ``several``)."""
    named = {"record": path} if several else {}
    if several and not as_json:
        _out.print(printable(f"== {path}"), style="bold", markup=False, highlight=False)
    try:
        report = verify_record_file(path)
    except UnreadableRecord as exc:
        if as_json:
            print(json.dumps({"ok": False, "error": str(exc), "error_kind": "Unreadable", **named}))
        _err.print(printable(f"error: {exc}"), style="red", markup=False, soft_wrap=True)
        return EXIT_UNREADABLE
    except Exception as exc:  # noqa: BLE001 - no file may give a traceback: our bug, one line
        message = f"this program failed while verifying {path} ({type(exc).__name__}: {exc})"
        if as_json:
            print(
                json.dumps({"ok": False, "error": message, "error_kind": "InternalError", **named})
            )
        _err.print(printable(f"error: {message}; please report it"), style="red", markup=False)
        return EXIT_UNREADABLE
    if as_json:
        print(json.dumps({**report.to_json(), **named}, sort_keys=True), flush=True)
    else:
        _print_human(report)
        if several:
            _out.print()
    if report.ok:
        return EXIT_OK
    f = report.failure
    return EXIT_CHEAT if f is not None and f.culprit is not None else EXIT_FAILED


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="slaiga", description="Verify Slaiga record files")
    add_parser(parser.add_subparsers(dest="command", metavar="COMMAND", required=True))
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
