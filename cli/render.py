"""The table screen, drawn from one seat's view: pure functions from state to lines.

Everything here is computed from ``game.view(seat)``, the public ``to_move``
and the events already filtered for the seat (told by ``cli.narrate``), so the
screen cannot show a face the seat may not see. The result is a list of
``rich.text.Text`` lines cut to the terminal's width and height (80x24 is the
size it is designed for); ``cli.screen`` writes them to the terminal, and the
tests read their plain text.

Layout, top to bottom: a header (game, round or deal, you), one row per seat
(name, cards, status, and ``▶`` for whose turn it is), the table (piles with
their top marked, the volley or trick, dice), the latest events, your hand,
and the prompt (question, menu, typed input, hint).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rich.text import Text

from cli.narrate import Names, words
from engine.cards import JOKER_RANK, SUIT_SYMBOLS, Card, slave_key
from engine.game import CardView

WIDTH, HEIGHT = 80, 24
HIDDEN = "▒▒"
TURN_MARK = "▶"
RED = "bold red"
BLACK = "bold"
MIN_EVENT_ROWS = 3
MIN_MENU_ROWS = 3
SEAT_NAME_WIDTH = 14
QUEEN_REACH = 6  # discards shown in Slaiga (the queen reaches this many)
DIE_FACES = {1: "⚀", 2: "⚁", 3: "⚂", 4: "⚃", 5: "⚄", 6: "⚅"}
TITLES = {
    "slaiga": "Slaiga",
    "honest-slaiga": "Honest Slaiga",
    "aight-of-spaides": "Aight of Spaides",
    "slave": "Slave",
    "slajens": "Slåjens",
    "high-card": "High Card",
}
ORDINALS = {1: "1st", 2: "2nd", 3: "3rd"}


def ordinal(n: int) -> str:
    return ORDINALS.get(n, f"{n}th")


# ---- cards ---------------------------------------------------------------------------


def face_text(face: Card | None) -> Text:
    """One card with its suit in colour (hearts and diamonds red), or ``▒▒`` if hidden."""
    if face is None:
        return Text(HIDDEN, style="dim")
    if face.rank == JOKER_RANK:
        return Text("Jk", style="bold magenta")
    return Text(str(face), style=RED if face.suit in (1, 2) else BLACK)


def cards_text(faces: Sequence[Card | None], sep: str = " ") -> Text:
    out = Text()
    for i, f in enumerate(faces):
        if i:
            out.append(sep)
        out.append_text(face_text(f))
    return out


def marked_cards(cards: Sequence[CardView], secret: frozenset[int]) -> Text:
    """Cards on the table; those only you can see are in brackets: face down to others."""
    out = Text()
    for i, c in enumerate(cards):
        if i:
            out.append(" ")
        if c.handle in secret and c.face is not None:
            out.append("[")
            out.append_text(face_text(c.face))
            out.append("]")
        else:
            out.append_text(face_text(c.face))
    return out


def suit_text(suit: int | None) -> Text:
    if suit is None or suit not in range(4):
        return Text("?")
    return Text(SUIT_SYMBOLS[suit], style=RED if suit in (1, 2) else BLACK)


def by_suit(face: Card) -> tuple[int, int]:
    """Suit-major order (for the flush games), jokers last."""
    return (5, 0) if face.rank == JOKER_RANK else (face.suit, face.rank)


def sorted_hand(game: str, hand: Sequence[CardView]) -> list[Card | None]:
    faces = [c.face for c in hand]
    known = [f for f in faces if f is not None]
    key = slave_key if game == "slave" else by_suit
    return sorted(known, key=key) + [None] * (len(faces) - len(known))


# ---- what the screen is made of ------------------------------------------------------


@dataclass
class SeatRow:
    seat: int
    cards: str
    status: str


@dataclass
class TableView:
    """Everything the table screen shows, already restricted to one seat."""

    game: str
    view: dict[str, Any]
    names: Names
    to_move: tuple[int, ...]
    events: Sequence[str] = ()
    progress: str = ""
    over: bool = False
    since: int = 0  # how many of ``events`` (the newest) came after your last move
    moved: bool = True  # you have moved already ("Since your last move", else "So far")
    secret: frozenset[int] = frozenset()  # handles on the table you see and others do not


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


# ---- per game --------------------------------------------------------------------------


class Look:
    """How one game's view is laid out; subclasses fill in the parts."""

    def header(self, v: dict[str, Any]) -> str:
        return ""

    def seats(self, t: TableView) -> list[SeatRow]:
        raise NotImplementedError

    def table(self, t: TableView) -> list[Text]:
        return []

    def hand(self, t: TableView) -> list[Card | None] | None:
        hand = t.view.get("hand")
        return None if hand is None else sorted_hand(t.game, hand)


class SlaveLook(Look):
    def header(self, v: dict[str, Any]) -> str:
        return f"deal {v['deal']} of {v['games']}"

    def seats(self, t: TableView) -> list[SeatRow]:
        v = t.view
        rows = []
        for s in range(v["seats"]):
            status = []
            if v["titles"][s]:
                status.append(v["titles"][s])
            if s in v["out"]:
                status.append(f"out {ordinal(v['out'].index(s) + 1)}")
            elif s == v["toppled"]:
                status.append("toppled")
            elif s in v["passed"]:
                status.append("passed")
            if s == v["last"]:
                status.append("played the pile's top")
            if v["games"] > 1:
                pts = v["points"][s]
                status.append(f"{pts} pt" if pts == 1 else f"{pts} pts")
            rows.append(SeatRow(s, str(v["hand_sizes"][s]), ", ".join(status)))
        return rows

    def table(self, t: TableView) -> list[Text]:
        v, names = t.view, t.names
        line = Text("Pile: ")
        if v["top"]:
            line.append_text(cards_text([c.face for c in v["top"]]))
            line.append(f"  (top, by {names(v['last'])}; {v['pile_size']} cards on the pile)")
        elif v["phase"] == "exchange":
            line.append("exchange before the deal")
        else:
            line.append(f"empty: {names(v['current'])} leads any set")
        way = "ascending ↓" if v["direction"] == 1 else "descending ↑"
        return [line, Text(f"Play runs {way} the seat list", style="dim")]


class SlaigaLook(Look):
    def header(self, v: dict[str, Any]) -> str:
        return f"turn {v['turns'] + 1}"

    def seats(self, t: TableView) -> list[SeatRow]:
        v = t.view
        volley = v["volley"]
        rows = []
        for s, hand in enumerate(v["hands"]):
            status = []
            if s in v["places"]:
                status.append(f"out {ordinal(v['places'].index(s) + 1)}")
            if volley is not None and s in (volley[1], volley[2]):
                status.append("attacking" if s == volley[1] else "defending")
            if s != v["seat"]:
                seen = [c.face for c in hand if c.face is not None]
                if seen:
                    status.append("holds " + cards_text(sorted(seen, key=by_suit)).plain)
            rows.append(SeatRow(s, str(len(hand)), ", ".join(status)))
        return rows

    def table(self, t: TableView) -> list[Text]:
        v, names = t.view, t.names
        draw, discard = v["draw"], v["discard"]
        line = Text(f"Draw pile {len(draw)}")
        if draw:
            line.append(", top ")
            line.append_text(face_text(draw[0].face))
        line.append(f" · Discard {len(discard)}")
        if discard:
            line.append(", top→ ")
            line.append_text(marked_cards(discard[:QUEEN_REACH], t.secret))
            if len(discard) > QUEEN_REACH:
                line.append(" …")
        out = [line]
        volley = v["volley"]
        if volley is not None:
            kind, attacker, defender, target, plays, shots, _checked = volley
            vl = Text(f"Volley {names(attacker)} → {names(defender)}")
            if kind == "suit":
                vl.append(" · target ")
                vl.append_text(suit_text(target))
            else:
                vl.append(" · jack volley")
            vl.append(f" · {shots} shot{'s' if shots != 1 else ''}:")
            cards = v["volley_cards"]
            for i, p in enumerate(plays):
                vl.append(" ")
                if kind == "suit":
                    vl.append_text(suit_text(p.suit))
                    vl.append(f"{' ace' if p.ace else ''} {p.role} ")
                face = cards[i].face if i < len(cards) else None
                if i < len(cards) and cards[i].handle in t.secret:
                    vl.append_text(marked_cards([cards[i]], t.secret))
                else:
                    vl.append_text(face_text(face))
            out.append(vl)
        if any(c.handle in t.secret for c in (*v["volley_cards"], *discard[:QUEEN_REACH])):
            out.append(Text("[ ]: a card you see that lies face down to the others", style="dim"))
        if v["to_place"]:
            tp = Text("Cards for you to place in the draw pile: ")
            tp.append_text(cards_text([c.face for c in v["to_place"]]))
            out.append(tp)
        step = v["task"]
        if step is not None:
            out.append(Text(slaiga_task_text(step, names, v), style="dim"))
        return out


def slaiga_task_text(step: Any, names: Names, v: dict[str, Any]) -> str:
    """What the task at the head of Slaiga's agenda waits for, in words."""
    who, other = names(step.seat), names(step.other)
    texts = {
        "turn": f"{who}'s turn: draw, shoot, or jack-shoot",
        "shot_card": f"{who} chooses the card to shoot {other} with",
        "discard": f"{who} discards (or says slaiga)",
        "king": f"{who} chooses how many cards the king reveals",
        "queen": f"{who} swaps a card with the discard pile (queen)",
        "answer": f"{who} must answer",
        "miss_answer": f"{who} may check {other}'s miss",
        "check_response": f"{who} answers the check (a joker cancels it)",
        "give": f"{who} gives {other} {step.n} penalty card{'s' if step.n != 1 else ''}",
        "place": f"{who} places penalty cards in the draw pile",
        "place_hand": f"{who} places {step.n} card{'s' if step.n != 1 else ''} in the draw pile",
        "swap": f"{who} may swap up to {step.n} cards with the draw pile",
        "reload": f"{who} reloads to {step.n} cards",
        "give_back": f"{who} gives {other} a card back",
        "win_ask": f"{who} may check {other}'s slaiga",
    }
    return texts.get(step.kind, step.kind)


class AightLook(Look):
    def header(self, v: dict[str, Any]) -> str:
        return f"turn {v['turns']} · {len(v['rules'])} rules (type `rules`)"

    def seats(self, t: TableView) -> list[SeatRow]:
        v = t.view
        answers = dict(v["answers"])
        rows = []
        for s in range(v["seats"]):
            status = []
            if v["pending_rules"][s]:
                n = v["pending_rules"][s]
                status.append(f"{n} pending rule{'s' if n != 1 else ''}")
            if v["unmaus"][s]:
                status.append(f"Unmau ×{v['unmaus'][s]}")
            if v["created"][s]:
                status.append(f"made {v['created'][s]} rule{'s' if v['created'][s] != 1 else ''}")
            if v["lost"][s]:
                status.append(f"loses {v['lost'][s]} turn{'s' if v['lost'][s] != 1 else ''}")
            if s in answers:
                cite = answers[s]
                status.append(
                    "lets it stand"
                    if cite is None
                    else "calls Improper!" + (f" (rule #{cite})" if cite else "")
                )
            rows.append(SeatRow(s, str(v["hand_sizes"][s]), ", ".join(status)))
        return rows

    def table(self, t: TableView) -> list[Text]:
        v, names = t.view, t.names
        line = Text("Pile: ")
        line.append_text(face_text(v["top"].face if v["top"] is not None else None))
        line.append(" (top)")
        if v["named_suit"] is not None:
            line.append(", suit named ")
            line.append_text(suit_text(v["named_suit"]))
        line.append(f" · {v['pile_size']} played · deck {v['deck_size']}")
        if v["stack"]:
            line.append(f" · stack: draw {v['stack']}")
        line.append(" · play runs " + ("↓" if v["direction"] == 1 else "↑"))
        out = [line]
        move = v["move"]
        if move is not None and v["phase"] in ("window", "vote"):
            out.append(Text(aight_move_text(move, names), style="bold"))
        if v["voting"] is not None:
            caller, cite = v["voting"]
            out.append(Text(f"Vote: does {names(caller)}'s call under rule #{cite} stand?"))
        if v["drawn"] is not None:
            dl = Text("You drew ")
            dl.append_text(face_text(v["drawn"].face))
            dl.append(": play it now, or keep it")
            out.append(dl)
        newest = [r for r in v["book"].rules if r.author is not None][-2:]
        for r in newest:
            out.append(Text(words(f"Rule {r.describe()} (by {names(r.author)})"), style="dim"))
        return out


def aight_move_text(move: Any, names: Names) -> str:
    """The move now open to Improper! calls, in words."""
    who = names(move.seat)
    said = f", saying “{'”, “'.join(move.words)}”" if move.words else ", saying nothing"
    if move.kind == "draw":
        return f"{who} drew{said}. Improper?"
    named = f", naming {SUIT_SYMBOLS[move.suit]}" if move.suit is not None else ""
    rule = ", with a new rule" if move.has_rule else ""
    return f"{who} played {move.card} on {move.top}{said}{named}{rule}. Improper?"


class SlajensLook(Look):
    def header(self, v: dict[str, Any]) -> str:
        return f"round {v['round']} of {v['rounds']}"

    def seats(self, t: TableView) -> list[SeatRow]:
        v = t.view
        teams = dict(v["options"]).get("teams", 0)
        rows = []
        for s in range(v["seats"]):
            status = []
            sc = v["scores"][s]
            if sc:
                status.append(f"last {sc[-1]}")
            if teams:
                status.append(f"team {v['team_of'][s] + 1}")
            for st in v["defences"]:
                if st.target == s:
                    status.append(f"must score {st.amount} to keep it")
            rows.append(SeatRow(s, f"{v['totals'][s]:>4}", ", ".join(status)))
        return rows

    def table(self, t: TableView) -> list[Text]:
        v, names = t.view, t.names
        line = Text(f"{names(v['current'])}: ")
        if v["dice"]:
            line.append(dice_text(v["dice"]))
            line.append(f"  (roll {v['rolls']} of 3)")
        else:
            line.append("about to roll")
        out = [line]
        if v["steal"] is not None:
            st = v["steal"]
            hit = "three in a row shown!" if v["hit"] else "needs three in a row"
            out.append(
                Text(f"Steal: {names(st.stealer)} → {names(st.target)}, {st.amount} ({hit})")
            )
        if v["respond_to"] is not None:
            st = v["respond_to"]
            out.append(Text(f"{names(st.target)} must answer {names(st.stealer)}'s steal"))
        return out

    def hand(self, t: TableView) -> list[Card | None] | None:
        return None


def dice_text(dice: Sequence[int]) -> str:
    return " ".join(f"{DIE_FACES.get(d, '?')}{d}" for d in dice)


class GenericLook(Look):
    """Any other game: hand counts per seat, and every pile of cards the view shows."""

    def seats(self, t: TableView) -> list[SeatRow]:
        v = t.view
        sizes = v.get("hand_sizes") or v.get("sizes") or ()
        return [
            SeatRow(s, str(sizes[s]) if s < len(sizes) else "", "") for s in range(len(t.names))
        ]

    def table(self, t: TableView) -> list[Text]:
        out = []
        for key, value in t.view.items():
            if key == "hand" or not isinstance(value, tuple) or not value:
                continue
            if all(isinstance(c, CardView) for c in value):
                line = Text(f"{key.replace('_', ' ').capitalize()}: ")
                line.append_text(cards_text([c.face for c in value]))
                out.append(line)
        return out


LOOKS: dict[str, Look] = {
    "slave": SlaveLook(),
    "slaiga": SlaigaLook(),
    "honest-slaiga": SlaigaLook(),
    "aight-of-spaides": AightLook(),
    "slajens": SlajensLook(),
}


def look_of(game: str) -> Look:
    return LOOKS.get(game, GENERIC)


GENERIC = GenericLook()


# ---- the screen ---------------------------------------------------------------------------


def _crop(text: Text | str, width: int) -> Text:
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
        piece = face_text(f)
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
    head = Text(f"{TITLES.get(t.game, t.game)}", style="bold")
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
    title: str, body: Sequence[str], page: int, width: int, height: int
) -> tuple[list[Text], int]:
    """A full-screen page of text (help, rules); returns the lines and the page count."""
    wrapped: list[str] = []
    for para in body:
        wrapped.extend(wrap(para, width))
    per = max(1, height - 2)
    pages = max(1, (len(wrapped) + per - 1) // per)
    page = max(0, min(page, pages - 1))
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
    out = [Text(f"Game over: {TITLES.get(game, game)}", style="bold reverse")]
    out += [Text("· " + e, style="dim") for e in last_events]
    ranking = list(summary.get("ranking") or (outcome.ranking if outcome else ()))
    scores = summary.get("scores") or (outcome.scores if outcome is not None else None)
    draw = summary.get("draw", outcome.draw if outcome is not None else False)
    reason = summary.get("reason") or (outcome.reason if outcome is not None else "")
    if draw:
        out.append(Text(f"A draw: {names.tell(reason)}" if reason else "A draw.", style="bold"))
    elif ranking:
        winner = names(ranking[0]) + (" (you)" if ranking[0] == names.me else "")
        out.append(Text(f"Winner: {winner}", style="bold green"))
    if ranking:
        head = Text(f"{'place':>5}  {'player':<{SEAT_NAME_WIDTH + 6}}", style="bold underline")
        if scores:
            head.append(f"{'score':>6}")
        out.append(head)
        for place, s in enumerate(ranking, 1):
            name = names(s) + (" (you)" if s == names.me else "")
            row = Text(
                f"{ordinal(place):>5}  {name:<{SEAT_NAME_WIDTH + 6}}",
                style="bold" if s == names.me else "",
            )
            if scores and 0 <= s < len(scores):
                row.append(f"{scores[s]:>6}")
            out.append(row)
    if reason and not draw:
        out.append(Text(names.tell(reason), style="dim"))
    return out


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
        out.append(
            Text(
                f"CHEAT: {names(culprit)} was caught cheating; the record holds the proof.",
                style="bold red",
            )
        )
    record = summary.get("record")
    if record:
        out.append(Text(f"Record: {record}"))
        entries, proofs = summary.get("entries"), summary.get("proofs")
        if entries is not None:
            cheat = "no cheat" if culprit is None else f"cheat by {names(culprit)}"
            out.append(
                Text(
                    f"{plural(entries, 'signature')} and {plural(proofs or 0, 'proof')}"
                    f" checked, {cheat}.",
                    style="green" if culprit is None else "red",
                )
            )
        out.append(Text(f"Check it yourself: {verify_command(record)}", style="bold"))
    else:
        out.append(
            Text("A practice game with a trusted local dealer: no record was kept.", style="dim")
        )
    return out
