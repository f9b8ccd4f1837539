"""The table screen, drawn from one seat's view: pure functions from state to lines.

How each game's table looks is the game's own (its ``Look``, ``engine.words``); this
module lays the parts out and draws them. Everything is computed from
``game.view(seat)``, the public ``to_move`` and the events already filtered for the
seat (told by ``cli.narrate``), so the screen cannot show a face the seat may not see. The result is a list of
``rich.text.Text`` lines cut to the terminal's width and height (80x24 is the
size it is designed for); ``cli.screen`` writes them to the terminal, and the
tests read their plain text.

Layout, top to bottom: a header (game, round or deal, you), one row per seat
(name, cards, status, and ``▶`` for whose turn it is), the table (piles with
their top marked, the volley or trick, dice), the latest events, your hand,
and the prompt (question, menu, typed input, hint).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rich.text import Text

from cli.narrate import Names
from engine.words import words_for
from engine.words.look import (
    Look,
    Styled,
    TableView,
    face_text,
    ordinal,
)

WIDTH, HEIGHT = 80, 24
TURN_MARK = "▶"
MIN_EVENT_ROWS = 3
MIN_MENU_ROWS = 3
SEAT_NAME_WIDTH = 14


# ---- what the screen is made of ------------------------------------------------------


@dataclass
class PromptView:
    """The question at the bottom: a title, menu lines, the typed input and a hint."""

    title: str
    options: Sequence[str] = ()
    selected: int = 0
    marks: Sequence[bool] | None = None  # checkboxes of a multiple choice
    input: str = ""
    message: str = ""
    countdown: int | None = None
    hint: str = "type a move, or ↑↓ and Enter · Esc back · ? help · PgUp log"
    extra: Sequence[str] = field(default_factory=tuple)  # lines under the title
    marked: bool = False  # the input was refused and is selected (typing replaces it)


# ---- the screen ---------------------------------------------------------------------------


def to_text(line: Styled) -> Text:
    """A game's styled line as terminal text."""
    out = Text(line.text, style=line.style)
    for part in line.parts:
        if isinstance(part, Styled):
            out.append_text(to_text(part))
        else:
            out.append(part[0], style=part[1])
    return out


def look_of(game: str) -> Look:
    return words_for(game).look


def title_of(game: str) -> str:
    return words_for(game).title


def _crop(text: Text | Styled | str, width: int) -> Text:
    if isinstance(text, Styled):
        text = to_text(text)
    t = text.copy() if isinstance(text, Text) else Text(text)
    t.truncate(width, overflow="ellipsis")
    return t


def seat_lines(t: TableView, width: int) -> list[Text]:
    rows = look_of(t.game).seats(t)
    me = t.names.me
    lines = []
    for r in rows:
        mark = TURN_MARK if r.seat in t.to_move and not t.over else " "
        line = Text(f"{mark} ", style="bold yellow" if mark != " " else "")
        name = t.names(r.seat) + (" (you)" if r.seat == me else "")
        if r.seat in getattr(t.names, "bots", ()):
            name += " (bot)"
        line.append(
            f"{name[:SEAT_NAME_WIDTH]:<{SEAT_NAME_WIDTH}}", style="bold" if r.seat == me else ""
        )
        line.append(f" {r.cards:>4}  ")
        line.append(r.status, style="cyan")
        lines.append(line)
    if len(lines) > 6:  # two columns for big tables
        half = (len(lines) + 1) // 2
        col = width // 2
        joined = []
        for i in range(half):
            left = _crop(lines[i], col - 1)
            left.pad_right(col - left.cell_len)
            if i + half < len(lines):
                left.append_text(_crop(lines[i + half], width - col))
            joined.append(left)
        lines = joined
    return [_crop(x, width) for x in lines]


def hand_lines(t: TableView, width: int, max_rows: int = 2) -> list[Text]:
    faces = look_of(t.game).hand(t)
    if faces is None:
        return []
    head = Text(f"Your hand ({len(faces)}): ", style="bold")
    lines, line = [], head
    for f in faces:
        piece = to_text(face_text(f))
        if line.cell_len + piece.cell_len + 1 > width:
            lines.append(line)
            line = Text("  ")
        line.append_text(piece)
        line.append(" ")
    lines.append(line)
    if len(lines) > max_rows:
        shown = lines[:max_rows]
        shown[-1] = _crop(shown[-1], width - 8)
        shown[-1].append(" …more")
        return shown
    return lines


def prompt_lines(p: PromptView, width: int, menu_rows: int) -> list[Text]:
    title = Text(p.title, style="bold reverse")
    if p.countdown is not None:
        clock = f"  {p.countdown}s left"
        title = _crop(title, width - len(clock))
        title.append(clock, style="bold yellow")
    out = [_crop(title, width)]
    out += [_crop(Text(x, style="italic"), width) for x in p.extra]
    n = len(p.options)
    if n:
        rows = max(1, min(menu_rows, n))
        first = min(max(0, p.selected - rows // 2), n - rows)
        for i in range(first, first + rows):
            mark = "›" if i == p.selected else " "
            box = ""
            if p.marks is not None:
                box = "[x] " if p.marks[i] else "[ ] "
            more = ""
            if i == first and first > 0:
                more = " ↑"
            elif i == first + rows - 1 and first + rows < n:
                more = " ↓"
            style = "bold reverse" if i == p.selected else ""
            out.append(
                _crop(Text(f"{mark}{i + 1:>2} {box}{p.options[i]}{more}", style=style), width)
            )
    line = Text("> ", style="bold")
    line.append(p.input, style="reverse" if p.marked and p.input else "")
    line.append("█", style="blink")
    out.append(_crop(line, width))
    out.append(_crop(Text(p.message or p.hint, style="yellow" if p.message else "dim"), width))
    return out


def render_screen(
    t: TableView, prompt: PromptView | None, width: int = WIDTH, height: int = HEIGHT
) -> list[Text]:
    """The whole table screen: exactly ``height`` lines, none wider than ``width``."""
    look = look_of(t.game)
    me = t.names(t.names.me)
    head = Text(title_of(t.game), style="bold")
    sub = look.header(t.view)
    head.append(f" · {sub}" if sub else "")
    head.append(f" · you are {me}")
    head = _crop(head, width)
    seats = seat_lines(t, width)
    table = [_crop(x, width) for x in look.table(t)]
    hand = hand_lines(t, width)
    if prompt is not None:
        menu_n = len(prompt.options)
        fixed = 1 + len(seats) + len(table) + len(hand) + 3 + len(prompt.extra)
        room = height - fixed - MIN_EVENT_ROWS
        menu_rows = max(min(menu_n, MIN_MENU_ROWS), min(menu_n, room))
        bottom = prompt_lines(prompt, width, menu_rows)
    else:
        wait = t.progress or (
            "The game is over." if t.over else "Waiting for " + _waiting_for(t) + "…"
        )
        bottom = [_crop(Text(wait, style="italic"), width)]
    rows_left = height - 1 - len(seats) - len(table) - len(hand) - len(bottom)
    events = event_lines(t.events, width, rows_left, t.since, t.moved)
    blank = [Text("") for _ in range(max(0, rows_left - len(events)))]
    lines = [head, *seats, *table, *blank, *events, *hand, *bottom]
    if len(lines) > height:  # a tiny terminal: keep the prompt, drop from the top
        lines = lines[len(lines) - height :]
    return lines


def event_lines(
    events: Sequence[str], width: int, rows: int, since: int = 0, moved: bool = True
) -> list[Text]:
    """The latest events that fit in ``rows``, newest last, long ones wrapped once.

    With ``since`` (the events after your last move), a heading counts them and
    stays until you move again; when they do not all fit it says how to read
    the rest (PgUp or ``log``). Older events are dimmed.
    """
    if rows <= 0:
        return []
    since = min(since, len(events))
    room = rows - 1 if since else rows
    out: list[Text] = []
    shown = 0
    for i, e in enumerate(reversed(events)):
        parts = wrap("· " + e, width)[:2]
        if len(out) + len(parts) > room:
            break
        style = "" if i < since else "dim"
        lines = [Text(parts[0], style=style)] + [
            Text("  " + p.strip(), style=style) for p in parts[1:]
        ]
        out[:0] = [_crop(x, width) for x in lines]
        shown += 1
    if since:
        head = f"{'Since your last move' if moved else 'So far'}: {plural(since, 'event')}"
        if since > shown:
            head += " (PgUp or `log`: all)"
        out.insert(0, _crop(Text(head, style="bold underline"), width))
    return out[-rows:]


def plural(n: int, word: str, many: str | None = None) -> str:
    """``1 card``, ``2 cards``, ``1 match``/``2 matches`` (``many`` for odd plurals)."""
    return f"{n} {word if n == 1 else (many or word + 's')}"


def article(word: str) -> str:
    """``a 9``, ``an A``, ``an 8``, ``an ace``: the article a reader says aloud."""
    first = word.strip()[:1].lower()
    spoken_vowel = first in "aeiou" or word.strip().startswith(("8", "11", "18", "A"))
    return f"{'an' if spoken_vowel else 'a'} {word}"


def _waiting_for(t: TableView) -> str:
    if not t.to_move:
        return "the table"
    return " and ".join(t.names(s) for s in t.to_move)


def render_page(
    title: str,
    body: Sequence[str],
    page: int,
    width: int,
    height: int,
    from_end: bool = False,
) -> tuple[list[Text], int]:
    """A full-screen page of text (help, rules); returns the lines and the page count.
    ``from_end``: pages are cut from the end, so the last page is full and the first one
    holds what is left over (the log, newest last, opens on a full last page)."""
    wrapped: list[str] = []
    for para in body:
        wrapped.extend(wrap(para, width))
    per = max(1, height - 2)
    pages = max(1, (len(wrapped) + per - 1) // per)
    page = max(0, min(page, pages - 1))
    if from_end:
        end = len(wrapped) - (pages - 1 - page) * per
        chunk = wrapped[max(0, end - per) : end]
    else:
        chunk = wrapped[page * per : (page + 1) * per]
    lines = [_crop(Text(f"{title} (page {page + 1} of {pages})", style="bold reverse"), width)]
    lines += [_crop(Text(x), width) for x in chunk]
    lines += [Text("") for _ in range(per - len(chunk))]
    lines.append(
        _crop(
            Text(
                "Space: next page · b: back a page · Enter or Esc: back to the table", style="dim"
            ),
            width,
        )
    )
    return lines, pages


def wrap(text: str, width: int) -> list[str]:
    """Wrap one paragraph, keeping its indentation on following lines."""
    if not text.strip():
        return [""]
    indent = len(text) - len(text.lstrip())
    lead = " " * indent
    words = text.split()
    out, line = [], lead
    for w in words:
        if len(line) + len(w) + (0 if line.strip() == "" else 1) > width and line.strip():
            out.append(line)
            line = lead + "  " + w if text.lstrip().startswith(("-", "*")) else lead + w
        else:
            line = line + w if not line.strip() else line + " " + w
    out.append(line)
    return out


def plain(lines: Sequence[Text]) -> str:
    """The screen as plain text (what a test or a screen reader sees)."""
    return "\n".join(x.plain for x in lines)


# ---- the end of a game ----------------------------------------------------------------------


def end_lines(
    summary: Any, names: Names, outcome: Any = None, last_events: Sequence[str] = ()
) -> list[Text]:
    """The end screen: ranking and scores, the record, how it was checked, how to verify it."""
    return result_lines(summary, names, outcome, last_events) + record_lines(summary, names)


def result_lines(
    summary: Any, names: Names, outcome: Any = None, last_events: Sequence[str] = ()
) -> list[Text]:
    """How the game ended: the winner (or a draw) and the ranking with scores."""
    game = summary.get("game", "")
    out = [Text(f"Game over: {title_of(game)}", style="bold reverse")]
    out += [Text("· " + e, style="dim") for e in last_events]
    ranking = list(summary.get("ranking") or (outcome.ranking if outcome else ()))
    scores = summary.get("scores") or (outcome.scores if outcome is not None else None)
    draw = summary.get("draw", outcome.draw if outcome is not None else False)
    reason = _end_reason(
        summary.get("reason") or (outcome.reason if outcome is not None else ""), game
    )
    if draw:
        out.append(Text(f"A draw: {names.tell(reason)}" if reason else "A draw.", style="bold"))
    elif ranking:
        winner = names(ranking[0]) + (" (you)" if ranking[0] == names.me else "")
        out.append(Text(f"Winner: {winner}", style="bold green"))
    if ranking:
        # a draw has no places: the players are listed as they stand, without 1st, 2nd
        place_head = "" if draw else "place"
        head = Text(f"{place_head:>5}  {'player':<{SEAT_NAME_WIDTH + 6}}", style="bold underline")
        if scores:
            head.append(f"{'score':>6}")
        out.append(head)
        for place, s in enumerate(ranking, 1):
            name = names(s) + (" (you)" if s == names.me else "")
            row = Text(
                f"{'' if draw else ordinal(place):>5}  {name:<{SEAT_NAME_WIDTH + 6}}",
                style="bold" if s == names.me else "",
            )
            if scores and 0 <= s < len(scores):
                row.append(f"{scores[s]:>6}")
            out.append(row)
    if reason and not draw:
        out.append(Text(names.tell(reason), style="dim"))
    return out


_HOW_PREFIX = re.compile(r"^(?:cap|win|vote|left|stop|end): ")
_TURN_CAP = re.compile(r"^turn cap (\d+) reached$")


def _end_reason(reason: str, game: str = "") -> str:
    """How a game ended, in player words: the engine's "cap: turn cap 25 reached" (its kind
    of ending, then why) reads "the turn limit of 25 turns was reached"; a game's own
    reasons read as its words say them (``GameWords.endings``)."""
    reason = _HOW_PREFIX.sub("", reason)
    cap = _TURN_CAP.match(reason)
    if cap:
        return f"the turn limit of {cap.group(1)} turns was reached"
    return words_for(game).endings.get(reason, reason) if game else reason


def slaiga_command() -> str:
    """How to run ``slaiga`` again from this shell: ``slaiga`` when that is on the PATH and is
    this program, else the path of the program that runs (``.venv/bin/slaiga`` after
    ``make play``), else ``python -m cli``."""
    import os
    import shlex
    import shutil
    import sys

    argv0 = sys.argv[0] if sys.argv else ""
    found = shutil.which("slaiga")
    if os.path.basename(argv0) == "slaiga":
        if found and os.path.realpath(found) == os.path.realpath(argv0):
            return "slaiga"
        rel = os.path.relpath(argv0)
        path = rel if not rel.startswith("..") else os.path.abspath(argv0)
        return shlex.quote(path if "/" in path else "./" + path)
    if found:
        return "slaiga"
    return f"{shlex.quote(sys.executable)} -m cli"


def verify_command(record: str) -> str:
    """The ``slaiga verify`` command for ``record``, as it can be pasted into this shell."""
    import shlex

    return f"{slaiga_command()} verify {shlex.quote(str(record))}"


def record_lines(summary: Any, names: Names) -> list[Text]:
    """The record file, what was checked in it, and the command that checks it again."""
    out = []
    culprit = summary.get("culprit")
    if culprit is not None:
        said = (summary.get("cheat") or {}).get("said")
        out.append(
            Text(
                f"CHEAT: {names(culprit)} was caught cheating; the record holds the proof.",
                style="bold red",
            )
        )
        if said:
            # what they did and at which step, as the live line and `slaiga verify` say it
            out.append(Text(f"{said}.", style="red"))
    record = summary.get("record")
    if record:
        out.append(Text(f"Record: {record}"))
        entries, proofs = summary.get("entries"), summary.get("proofs")
        if entries is not None:
            # a player's peer checks every signature and the others' proofs (its own it
            # made); a replay (no seat) checks every seat's, as `slaiga verify` does
            whose = " of the other players" if summary.get("seat") is not None else ""
            cheat = "no cheat" if culprit is None else f"cheat by {names(culprit)}"
            out.append(
                Text(
                    f"{plural(entries, 'signature')} and {plural(proofs or 0, 'proof')}"
                    f"{whose} checked, {cheat}.",
                    style="green" if culprit is None else "red",
                )
            )
        out.append(Text(f"Check it yourself: {verify_command(record)}", style="bold"))
    else:
        out.append(
            Text("A practice game with a trusted local dealer: no record was kept.", style="dim")
        )
    return out
