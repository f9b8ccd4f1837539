"""Helpers for the screen tests: a scripted terminal, and reading cards off a screen."""

from __future__ import annotations

import re
import time
from collections import deque
from collections.abc import Callable, Iterable

from engine.cards import Card, parse_card

CARD_ON_SCREEN = re.compile(r"(?<![\w#])(10|[2-9JQKA])([♣♦♥♠])|(?<!\w)(Jk)(?!\w)")


def faces_on(text: str) -> set[str]:
    """Every card face written on a screen, as ``str(Card)`` (jokers as 🃏)."""
    out = set()
    for m in CARD_ON_SCREEN.finditer(text):
        if m[3]:
            out.add("🃏")
        else:
            out.add(str(parse_card(m[1] + m[2])))
    return out


def face_strings(faces: Iterable[Card]) -> set[str]:
    return {str(f) for f in faces}


class FakeTerminal:
    """A terminal whose keys come from a script (or a ``person`` asked for more).

    ``person(player)`` is called whenever the script runs dry and returns the next
    keys (an empty list: wait). Every frame drawn is kept (the last ``keep``).
    """

    def __init__(
        self,
        keys: Iterable[str] = (),
        person: Callable[[object], list[str]] | None = None,
        size: tuple[int, int] = (80, 24),
        keep: int = 50,
    ) -> None:
        self.keys: deque[str] = deque(keys)
        self.person = person
        self.player: object = None
        self.frames: deque[list] = deque(maxlen=keep)
        self.frame_count = 0
        self.started = False
        self._size = size
        self.sent = 0

    def start(self) -> None:
        self.started = True

    def stop(self) -> None:
        self.started = False

    def size(self) -> tuple[int, int]:
        return self._size

    def draw(self, lines: list) -> None:
        self.frames.append(lines)
        self.frame_count += 1

    def read_key(self, timeout: float) -> str | None:
        if not self.keys and self.person is not None:
            self.keys.extend(self.person(self.player))
        if self.keys:
            self.sent += 1
            return self.keys.popleft()
        time.sleep(min(timeout, 0.002))
        return None
