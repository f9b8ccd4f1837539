"""High Card in players' words: its one move written once (typed ``9h``, told "play 9♥"),
its table and its title. The template for a new game's words (docs/adding-a-game.md):
``Moves`` from a table of ``Words``, a ``Look``, and one ``register_words``."""

from __future__ import annotations

from engine.game import Game
from engine.games.highcard.actions import PlayCard
from engine.words import GameWords, register_words
from engine.words.look import Look, SeatRow, Styled, TableView, cards_text
from engine.words.moves import TableMoves, Words


class HighCardMoves(TableMoves):
    WORDS = {PlayCard: Words(typed="{card}", told="play {card}")}

    def question(self, game: Game, seat: int) -> str:
        return "Your move: play a card"


class HighCardLook(Look):
    def seats(self, t: TableView) -> list[SeatRow]:
        return [SeatRow(s, str(n), "") for s, n in enumerate(t.view["sizes"])]

    def table(self, t: TableView) -> list[Styled]:
        line = Styled("Played: ")
        played = t.view["table"]
        if played:
            line.append_text(cards_text([c.face for c in played]))
        else:
            line.append("nothing yet")
        return [line]


register_words("high-card", GameWords(title="High Card", moves=HighCardMoves, look=HighCardLook()))
