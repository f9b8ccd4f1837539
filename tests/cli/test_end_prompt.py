"""The person at the terminal is asked whether to end a table whose player vanished
(issue 22): ``e`` ends it (a signed vote, p2p/table/endvote.py), ``w`` (or no answer) waits."""

from __future__ import annotations

import trio

from cli.human import HumanPlayer
from cli.render import PromptView, plain
from engine import registry
from tests.cli._screens import FakeTerminal

NAMES = ("Ann", "Bob", "Cat")


def _person(keys: list[str]) -> tuple[HumanPlayer, FakeTerminal]:
    term = FakeTerminal(keys=keys)
    human = HumanPlayer(NAMES, 0, "high-card", terminal=term)
    term.player = human
    game = registry.get("high-card").factory(3, {})
    game.start()
    human.observe(game, 0, [])
    return human, term


def _shown(term: FakeTerminal) -> list[str]:
    return [plain(frame) for frame in term.frames]


async def test_the_person_ends_the_table_with_e() -> None:
    human, term = _person(["x", "e"])
    with trio.fail_after(10):
        assert await human.ask_end("Bob", 7.4) is True
    question = "Bob has vanished (no link for 7s). End the table now? [e]nd / [w]ait"
    assert any(question in " ".join(text.split()) for text in _shown(term))
    assert human.end_question is None  # the question is gone once answered
    assert "you voted to end the table without Bob" in human.events[-1]


async def test_the_person_waits_with_w() -> None:
    human, term = _person(["w"])
    with trio.fail_after(10):
        assert await human.ask_end("Bob", 3) is False
    assert "you chose to wait for Bob" in human.events[-1]


class _Asking:
    """Stands in for the prompter of a move being asked (only its view is drawn)."""

    def view(self, countdown: int | None) -> PromptView:
        return PromptView("Your move")


async def test_a_move_to_make_takes_the_keys_back() -> None:
    """Asked for a move meanwhile: the question gives way (not voting is waiting)."""
    human, term = _person([])

    async def later() -> None:
        await trio.sleep(0.05)
        human.prompter = _Asking()  # type: ignore[assignment]  # a move is being asked

    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(later)
            assert await human.ask_end("Bob", 3) is False
    assert term.sent == 0
