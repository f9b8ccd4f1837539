"""Words every game's moves are typed in: tokens, cards, ranks and suits.

``tokens`` splits typed text (quoted text is one token); ``card_word`` and
``maybe_card`` write and read a face as typed (``Qh``, ``10s``, ``jk``).
"""

from __future__ import annotations

from engine.cards import RANK_NAMES, RANKS, SUIT_NAMES, SUIT_SYMBOLS, Card, parse_card
from engine.words.menus import MoveError

SUIT_WORDS = {
    **{n: i for i, n in enumerate(SUIT_NAMES)},
    **{n[:-1]: i for i, n in enumerate(SUIT_NAMES)},
    **{n[0]: i for i, n in enumerate(SUIT_NAMES)},
    **{s: i for i, s in enumerate(SUIT_SYMBOLS)},
}


def tokens(text: str) -> list[str]:
    """Split on spaces; "quoted text" is one token (keeping its quotes); ``:`` stands alone."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
        elif c in '"“”':
            j, buf = i + 1, []
            while j < n and text[j] not in '"“”':
                if text[j] == "\\" and j + 1 < n:
                    j += 1
                buf.append(text[j])
                j += 1
            if j >= n:
                raise MoveError("a quote is not closed")
            out.append('"' + "".join(buf) + '"')
            i = j + 1
        elif c == ":":
            out.append(":")
            i += 1
        else:
            j = i
            while j < n and not text[j].isspace() and text[j] not in ':"“”':
                j += 1
            out.append(text[i:j])
            i = j
    return out


def quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def unquote(tok: str) -> str | None:
    return tok[1:-1] if len(tok) >= 2 and tok[0] == '"' and tok[-1] == '"' else None


def rank_word(rank: int) -> str:
    return RANK_NAMES.get(rank, str(rank))


def card_word(card: Card) -> str:
    """A face as typed: ``Qh``, ``10s``, ``Jk``."""
    if card.rank == 0:
        return "Jk"
    return f"{rank_word(card.rank)}{'cdhs'[card.suit]}"


def parse_rank(tok: str) -> int:
    t = tok.upper()
    names = {v: k for k, v in RANK_NAMES.items()} | {"T": 10}
    if t in names:
        return names[t]
    if t.isdigit() and int(t) in RANKS:
        return int(t)
    raise MoveError(f"not a rank: {tok!r} (2-10, J, Q, K, A)")


def parse_suit(tok: str) -> int:
    t = tok.lower()
    if t in SUIT_WORDS:
        return SUIT_WORDS[t]
    raise MoveError(f"not a suit: {tok!r} (clubs, diamonds, hearts, spades, or c d h s)")


def maybe_card(tok: str) -> Card | None:
    """The face ``tok`` names (``Qh``, ``10s``, ``Ts``, ``Q♥``, ``jk``), or ``None``."""
    t = "10" + tok[1:] if len(tok) == 2 and tok[0] in "tT" else tok
    try:
        return parse_card(t)
    except ValueError:
        return None


SUIT_ALIASES = frozenset(
    {
        "c",
        "d",
        "h",
        "s",
        "♣",
        "♦",
        "♥",
        "♠",
        "club",
        "clubs",
        "diamond",
        "diamonds",
        "heart",
        "hearts",
        "spade",
        "spades",
    }
)
