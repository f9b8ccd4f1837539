"""The terminal: a screen redrawn in place, keys read one at a time, and the prompt.

Why plain ANSI redraws and not Textual or rich's ``Live``: the screen is a
pure function of the table (``cli.render``), so the simplest faithful output
is to move the cursor home and write the frame, line by line, each line
ending with "erase to end of line". That needs nothing beyond ``rich`` (for
colour), works over ssh and inside tmux at 80x24, never fights Trio for the
event loop (keys are read in a worker thread with a short ``select``
timeout, so a countdown can tick and the table can redraw while a person
thinks), and a test can drive it with ``tmux send-keys`` and read it with
``capture-pane``. Textual would add a large dependency and Trio guest mode;
``Live`` redraws on its own timer and owns the cursor, which makes a typed
input line awkward.

:class:`Terminal` is the real terminal (cbreak mode, alternate screen);
:class:`Prompter` walks a question tree (``cli.menus``) with keys.
"""

from __future__ import annotations

import atexit
import codecs
import io
import os
import select
import shutil
import sys
from collections.abc import Callable, Sequence
from typing import TextIO

from rich.console import Console
from rich.text import Text

from cli.menus import Ask, Choice, MoveError, Node, Number, Pick, Plan, is_plan, resolve
from cli.render import HEIGHT, WIDTH, PromptView

ESC_WAIT_S = 0.05  # an escape sequence's bytes arrive together; a lone Esc waits this long
PAGE = 8
KEYS = {
    "A": "up",
    "B": "down",
    "C": "right",
    "D": "left",
    "H": "home",
    "F": "end",
    "5~": "pgup",
    "6~": "pgdn",
    "3~": "delete",
    "1~": "home",
    "4~": "end",
}
CONTROL = {
    "\r": "enter",
    "\n": "enter",
    "\x7f": "backspace",
    "\x08": "backspace",
    "\x04": "eof",
    "\x0c": "redraw",
    "\t": "tab",
    "\x15": "clear",
}


class Terminal:
    """A real terminal: the alternate screen in cbreak mode while started."""

    def __init__(self, fd: int | None = None, out: TextIO | None = None) -> None:
        self.fd = sys.stdin.fileno() if fd is None else fd
        self.out = out or sys.stdout
        self._saved: list | None = None
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.started = False
        self.on_resize: Callable[[], None] | None = None  # redraw at once on a resize
        self._old_winch: object = None

    def start(self) -> None:
        if self.started:
            return
        import termios
        import tty

        self._saved = termios.tcgetattr(self.fd)
        tty.setcbreak(self.fd)
        atexit.register(self.stop)  # whatever ends the program, the terminal comes back
        self.out.write("\x1b[?1049h\x1b[?25l\x1b[H\x1b[2J")
        self.out.flush()
        self.started = True
        self._watch_resize()

    def _watch_resize(self) -> None:
        """SIGWINCH calls ``on_resize`` (the screen is redrawn at the new size at once,
        whether or not a key is being waited for)."""
        import signal
        import threading

        if (
            not hasattr(signal, "SIGWINCH")
            or threading.current_thread() is not threading.main_thread()
        ):
            return

        def resized(signum: int, frame: object) -> None:
            if self.started and self.on_resize is not None:
                self.on_resize()

        self._old_winch = signal.signal(signal.SIGWINCH, resized)

    def stop(self) -> None:
        if not self.started:
            return
        import termios

        self.out.write("\x1b[?25h\x1b[?1049l")
        self.out.flush()
        if self._old_winch is not None:
            import signal

            signal.signal(signal.SIGWINCH, self._old_winch)  # type: ignore[arg-type]
            self._old_winch = None
        if self._saved is not None:
            termios.tcsetattr(self.fd, termios.TCSADRAIN, self._saved)
        self.started = False

    def size(self) -> tuple[int, int]:
        cols, rows = shutil.get_terminal_size((WIDTH, HEIGHT))
        return max(cols, 40), max(rows, 12)

    def draw(self, lines: Sequence[Text]) -> None:
        self.out.write(ansi_frame(lines, self.size()[0]))
        self.out.flush()

    def read_key(self, timeout: float) -> str | None:
        """One key ("up", "enter", "a", "♠", ...), or ``None`` after ``timeout`` seconds."""
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return None
        b = os.read(self.fd, 1)
        if not b:
            return "eof"
        if b == b"\x1b":
            return self._escape()
        text = self._decoder.decode(b)
        while not text:  # the rest of a multi-byte character
            more = os.read(self.fd, 1)
            if not more:
                return "eof"
            text = self._decoder.decode(more)
        return CONTROL.get(text, text)

    def _escape(self) -> str:
        ready, _, _ = select.select([self.fd], [], [], ESC_WAIT_S)
        if not ready:
            return "esc"
        kind = os.read(self.fd, 1)
        if kind not in (b"[", b"O"):
            return "esc"
        seq = b""
        while len(seq) < 8:
            ready, _, _ = select.select([self.fd], [], [], ESC_WAIT_S)
            if not ready:
                break
            c = os.read(self.fd, 1)
            seq += c
            if 0x40 <= c[0] <= 0x7E:
                break
        return KEYS.get(seq.decode("ascii", "replace"), "unknown")


def ansi_frame(lines: Sequence[Text], width: int) -> str:
    """The frame as terminal output: home, each line then erase-to-end, erase below."""
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, width=width, highlight=False, emoji=False)
    out = ["\x1b[H"]
    for i, line in enumerate(lines):
        buf.seek(0)
        buf.truncate()
        console.print(line, end="", no_wrap=True, overflow="crop", soft_wrap=True)
        out.append(buf.getvalue() + "\x1b[K" + ("\r\n" if i < len(lines) - 1 else ""))
    out.append("\x1b[J")
    return "".join(out)


# ---- the prompt -------------------------------------------------------------------------


class Prompter:
    """Walks one move's question tree with keys; typed text goes to ``parse``.

    ``key`` returns ``None`` to go on, or one of ``("plan", plan)``, ``("help",)``,
    ``("rules",)``, ``("log",)`` (PgUp, PgDn or typed ``log``), ``("quit",)``.
    """

    def __init__(self, root: Node, title: str, parse: Callable[[str], Plan]) -> None:
        self.title = title
        self.parse = parse
        self.stack: list[tuple[Node, int, list[bool], int]] = []
        self.input = ""
        self.marked = False  # the input was refused: it is selected, and typing replaces it
        self.message = ""
        self.last_text = ""
        self.node: Node = root
        self._enter(root)

    def _enter(self, node: Node) -> None:
        self.node = node
        self.selected = node.default if isinstance(node, Choice) else 0
        self.marks = (
            [i in node.preset for i in range(len(node.items))] if isinstance(node, Pick) else []
        )
        self.value = node.default if isinstance(node, Number) else 0
        if isinstance(node, Ask):
            self.input = ""

    def _advance(self, nxt: Node | Plan) -> tuple | None:
        if is_plan(nxt):
            return ("plan", nxt)
        self.stack.append((self.node, self.selected, self.marks, self.value))
        self._enter(nxt)
        return None

    def back(self) -> None:
        if self.stack:
            node, sel, marks, value = self.stack.pop()
            self.node, self.selected, self.marks, self.value = node, sel, marks, value

    def view(self, countdown: int | None = None) -> PromptView:
        node = self.node
        title = node.title or self.title
        extra: tuple[str, ...] = ()
        hint = "type a move, or ↑↓ and Enter · Esc back · ? help · PgUp log"
        if isinstance(node, Choice):
            return PromptView(
                title,
                [o.label for o in node.options],
                self.selected,
                None,
                self.input,
                self.message,
                countdown,
                hint,
                extra,
                self.marked,
            )
        if isinstance(node, Pick):
            hint = (
                f"↑↓ move · Space ticks · Enter confirms · or type the values ({node.typed} 6 6 1)"
                if node.typed
                else "↑↓ move · Space ticks · Enter confirms · or type the numbers to tick"
            )
            return PromptView(
                title,
                list(node.items),
                self.selected,
                self.marks,
                self.input,
                self.message,
                countdown,
                hint,
                extra,
                self.marked,
            )
        if isinstance(node, Number):
            hint = f"↑↓ change · Enter confirms · or type a number from {node.lo} to {node.hi}"
            extra = (*extra, f"  ‹ {self.value} ›  {node.describe(self.value)}")
            return PromptView(
                title, (), 0, None, self.input, self.message, countdown, hint, extra, self.marked
            )
        hint = (
            f"type and press Enter (for example: {node.example})"
            if node.example
            else "type and press Enter"
        )
        return PromptView(
            title, (), 0, None, self.input, self.message, countdown, hint, extra, self.marked
        )

    def key(self, k: str) -> tuple | None:
        node = self.node
        if k != "enter":
            self.message = ""
        marked, self.marked = self.marked, False
        if marked and (k in ("backspace", "delete") or (len(k) == 1 and k.isprintable())):
            self.input = ""  # the refused text was selected: a key replaces it
            if len(k) != 1:
                return None
        if k == "esc":
            if self.input and not isinstance(node, Ask):
                self.input = ""
            else:
                self.back()
            return None
        if k == "backspace":
            self.input = self.input[:-1]
            return None
        if k == "clear":
            self.input = ""
            return None
        if k in ("pgup", "pgdn") and not isinstance(node, Number):
            return ("log",)  # the whole history, newest last; menus page with Home/End
        if k in ("up", "down", "pgup", "pgdn", "home", "end"):
            self._move(k)
            return None
        if k == "left":
            if isinstance(node, Number):
                self.value = max(node.lo, self.value - 1)
            elif not self.input:
                self.back()
            return None
        if k == "right":
            if isinstance(node, Number):
                self.value = min(node.hi, self.value + 1)
            return None
        if k == " " and isinstance(node, Pick) and not self.input:
            self.marks[self.selected] = not self.marks[self.selected]
            return None
        if k == "?" and not self.input and not isinstance(node, Ask):
            return ("help",)
        if k == "enter":
            return self.submit()
        if len(k) == 1 and k.isprintable():
            self.input += k
        return None

    def _move(self, k: str) -> None:
        node = self.node
        if isinstance(node, Number):
            step = {"up": 1, "down": -1, "pgup": 10, "pgdn": -10}.get(k, 0)
            if k == "home":
                self.value = node.lo
            elif k == "end":
                self.value = node.hi
            else:
                self.value = min(node.hi, max(node.lo, self.value + step))
            return
        n = (
            len(node.options)
            if isinstance(node, Choice)
            else len(node.items)
            if isinstance(node, Pick)
            else 0
        )
        if not n:
            return
        if k == "home":
            self.selected = 0
        elif k == "end":
            self.selected = n - 1
        else:
            step = {"up": -1, "down": 1, "pgup": -PAGE, "pgdn": PAGE}[k]
            if k in ("up", "down"):
                self.selected = (self.selected + step) % n
            else:
                self.selected = min(n - 1, max(0, self.selected + step))

    def submit(self) -> tuple | None:
        text = self.input.strip()
        node = self.node
        self.input = ""
        self.message = ""
        self.last_text = text
        try:
            return self._submit(text, node)
        except MoveError as exc:
            self.message = str(exc)
            self.input = text  # kept and selected: ← or → to mend it, or type anew
            self.marked = bool(text)
            return None

    def refuse(self, message: str) -> None:
        """The move typed or chosen cannot be made: say why, keep the typed text selected
        (the next key typed replaces it; ← or → first keeps it to mend)."""
        self.message = message
        self.input = self.last_text
        self.marked = bool(self.last_text)

    def _submit(self, text: str, node: Node) -> tuple | None:
        low = text.lower()
        if low in ("?", "help"):
            return ("help",)
        if low in ("rules", "rule book", "book"):
            return ("rules",)
        if low in ("quit", "exit"):
            return ("quit",)
        if low in ("log", "history"):
            return ("log",)
        if low == "back":
            self.back()
            return None
        if isinstance(node, Ask):
            if not text and not self.stack:
                raise MoveError("type something, or Esc to go back")
            return self._advance(node.finish(text))
        if not text:
            if isinstance(node, Choice):
                return self._advance(resolve(node.options[self.selected].then))
            if isinstance(node, Pick):
                chosen = tuple(i for i, m in enumerate(self.marks) if m)
                problem = node.problem(chosen)
                if problem:
                    raise MoveError(problem)
                return self._advance(node.finish(chosen))
            return self._advance(node.finish(self.value))
        nums = text.replace(",", " ").split()
        if all(x.isdigit() for x in nums):
            values = [int(x) for x in nums]
            if isinstance(node, Choice) and len(values) == 1:
                if not 1 <= values[0] <= len(node.options):
                    raise MoveError(f"choose 1 to {len(node.options)}")
                self.selected = values[0] - 1
                return self._advance(resolve(node.options[self.selected].then))
            if isinstance(node, Pick) and node.typed:
                return ("plan", self.parse(f"{node.typed} {text}"))  # values, not positions
            if isinstance(node, Pick):
                for v in values:
                    if not 1 <= v <= len(node.items):
                        raise MoveError(f"items are numbered 1 to {len(node.items)}")
                    self.marks[v - 1] = not self.marks[v - 1]
                return None
            if isinstance(node, Number) and len(values) == 1:
                if not node.lo <= values[0] <= node.hi:
                    raise MoveError(f"choose {node.lo} to {node.hi}")
                return self._advance(node.finish(values[0]))
        if isinstance(node, Number) and low in ("top", "bottom"):
            return self._advance(node.finish(node.lo if low == "top" else node.hi))
        return ("plan", self.parse(text))
