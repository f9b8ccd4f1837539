"""A person at this terminal as a seat's player (``engine.players.Player``).

:class:`HumanPlayer` shows the table screen (``cli.render``) and asks for
moves with short menus or typed shorthand (``cli.moves``). Any game loop that
talks to players can seat it: ``slaiga play --local`` (a trusted local
dealer) and the networked table node alike. Construct it with::

    HumanPlayer(
        names,                 # display names in engine-seat order (made unique)
        seat,                  # this person's engine seat
        game,                  # the game's name: "slave", "slaiga", ... (engine.registry)
        answer_timeout=20.0,   # seconds an answer window waits before passing (0: forever)
        ask_reload=False,      # Slaiga: ask for each reload draw (default: from the draw pile)
        hints=True,            # preselect a suggested move (a bot that sees only your view)
        terminal=None,         # a cli.screen.Terminal (default: this process's tty)
        trace=None,            # a file path: one JSON line per question asked (tests)
    )

and use it as a context manager (``with HumanPlayer(...) as me:``) or call
``close()``, so the terminal is restored whatever happens. The game loop then
calls ``observe(game, seat, events)`` after every step, ``await decide(game,
seat)`` when the seat owes an action (it never blocks the Trio loop: keys are
read in a worker thread), ``progress(text)`` during slow steps, and
``finish(summary)`` at the end, with a dict holding at least ``table_id``,
``game``, ``seat``, ``ranking`` (engine seats, best first), ``state_hash``,
``record_head``, ``record`` (a file path or ``None``) and ``culprit`` (an
engine seat or ``None``), and, when known, ``entries`` and ``proofs``
(counts checked). ``decide`` raises :class:`PlayerQuit` when the person
leaves the table. At a LAN table, ``await ask_end(name, silent_for)`` asks
whether to end the table now that ``name`` has vanished (``True``: a signed
vote to end it, final; ``False``: wait, also when a move is asked meanwhile).

Moves that need no choice are made at once and shown ("your only move, made at once: …"):
a single legal move, and Slaiga's reload draws (``ask_reload`` to choose).
In answer windows where others may answer too (Slaiga's miss and win checks,
Improper! calls and votes in Aight of Spaides) the prompt shows a countdown
and, when it runs out, passes (votes "no") for the person.

:class:`WatchingPlayer` is the stand-in when stdin is not a terminal: a bot
plays the seat and the events are printed line by line.
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import trio
from rich.console import Console
from rich.text import Text

from cli.menus import Choice, Option, is_plan
from cli.moves import moves_for, validate_plan
from cli.narrate import Names, narrate
from cli.render import (
    PromptView,
    TableView,
    end_lines,
    look_of,
    plain,
    record_lines,
    render_page,
    render_screen,
    result_lines,
)
from cli.screen import Prompter, Terminal
from engine import registry
from engine.game import Action, Event, Game
from engine.players import BotPlayer, LeftTable

DEFAULT_ANSWER_TIMEOUT_S = 20.0
KEY_POLL_S = 0.5  # how often the countdown and the screen refresh while waiting for a key
EVENTS_KEPT = 2000  # the log (`log`, PgUp) reads back this far
HINT_SEED = 0x5EED
SAFE_HINT_PARAMS = {"mistake_rate": 0, "bluff": 0, "win_bluff": 0}
RISKY_HINTS = frozenset({"ProposeEnd"})
"""Moves never preselected, whatever the suggesting bot says: proposing to end the game
(irreversible once all agree)."""


class PlayerQuit(LeftTable):
    """The person left the table (typed quit, or closed the input)."""


class HumanPlayer:
    """A person at this terminal; see the module docstring for the contract."""

    def __init__(
        self,
        names: Sequence[str],
        seat: int,
        game: str,
        *,
        answer_timeout: float = DEFAULT_ANSWER_TIMEOUT_S,
        ask_reload: bool = False,
        hints: bool = True,
        terminal: Terminal | None = None,
        trace: str | Path | None = None,
    ) -> None:
        if answer_timeout < 0:
            raise ValueError("answer_timeout must be 0 (no limit) or more seconds")
        game_name = game
        self.names = Names(names, seat)
        self.seat = seat
        self.game_name = game_name
        self.moves = moves_for(game_name, self.names)
        self.answer_timeout = answer_timeout
        self.ask_reload = ask_reload
        self.term = terminal if terminal is not None else Terminal()
        self.term.on_resize = self._resized
        self.paging: Any = None  # while a page is open: its lines at the terminal's size
        self.trace_path = Path(trace) if trace else None
        self.events: list[str] = []
        self._hand_before: set[int] | None = None
        self.told = 0  # events told so far (the list keeps the last EVENTS_KEPT)
        self.moved_at = 0  # ``told`` when you last answered a question
        self.game: Game | None = None
        self.progress_text = ""
        self.queue: list[Action] = []
        self.prompter: Prompter | None = None
        self.end_question: PromptView | None = None
        """Shown while a vanished player's table waits for our end-or-wait answer."""
        self.countdown: int | None = None
        self.seen: set[str] = set()
        self.asked = 0
        self.keys = 0
        self.finished = False
        self.told_result = False
        self.hint_bot = None
        if hints:
            spec = registry.get(game_name)
            if "heuristic" in spec.bots:
                # a suggestion is never a deliberate slip (the Aight bot's human mistakes)
                # nor a lie (the Slaiga bot's bluffs): Enter alone is always the safe move
                self.hint_bot = spec.bots["heuristic"](
                    seat, random.Random(HINT_SEED + seat), **SAFE_HINT_PARAMS
                )

    # ---- lifetime -------------------------------------------------------------------

    def __enter__(self) -> HumanPlayer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Give the terminal back as it was (safe to call twice)."""
        self.term.stop()

    # ---- the Player interface ----------------------------------------------------------

    def observe(self, game: Game, seat: int, events: Sequence[Event]) -> None:
        self.game = game
        came = self._new_in_hand(game)
        for ev in events:
            if not ev.visible_to(self.seat):
                continue  # callers filter already; a person never sees another's secret
            told = narrate(ev, self.names)
            if came and look_of(self.game_name).gains(ev, self.seat):
                told += f" (you get {came.pop(0)})"
            self.events.append(told)
            self.told += 1
            self._learn_event(ev)
            if self.hint_bot is not None:
                self.hint_bot.observe(ev)
        del self.events[:-EVENTS_KEPT]
        self._learn_view(game)
        self.progress_text = ""
        if game.is_over():
            self._show_result(None)
        else:
            self.redraw()

    def _new_in_hand(self, game: Game) -> list[str]:
        """Faces in our hand now that were not there at the last step (to name a card a
        jack-volley winner gives us, or the one we took)."""
        if not look_of(self.game_name).names_gains:
            return []
        now = {c.handle: c.face for c in game.view(self.seat).get("hand", ())}
        before = self._hand_before if self._hand_before is not None else set(now)
        self._hand_before = set(now)
        return [str(f) for h, f in now.items() if h not in before and f is not None]

    def progress(self, text: str) -> None:
        self.progress_text = self.names.replace(text)
        self.redraw()

    async def decide(self, game: Game, seat: int) -> Action:
        self.game = game
        legal = game.legal_actions(seat)
        if not legal:
            raise RuntimeError(f"seat {seat} has no legal action to choose from")
        while self.queue:
            planned = self.queue.pop(0)
            if validate_plan(game, seat, (planned,)) is None:
                return planned
            self.queue.clear()
            self.note("your planned move is no longer possible; choose again")
        auto = self.moves.automatic(game, seat, legal, self.ask_reload)
        if auto is not None:
            self.note("your only move, made at once: " + self.moves.describe(game, seat, auto))
            self.redraw()
            return auto
        return await self._ask(game, seat, legal)

    def finish(self, summary: Mapping[str, Any]) -> None:
        """Leave the table screen and print the end of the game where it stays readable:
        the result (if the last step did not show it already), then the record."""
        self._show_result(summary)
        for line in record_lines(summary, self.names):
            _console().print(line)
        self.told_result = True  # the command prints no second copy
        self._trace_finish(summary)

    def _show_result(self, summary: Mapping[str, Any] | None) -> None:
        if self.finished:
            return
        self.finished = True
        self.prompter = None
        self.close()
        game = self.game
        outcome = game.outcome() if game is not None and game.is_over() else None
        known = dict(summary or {}, game=self.game_name)
        for line in result_lines(known, self.names, outcome, self.events[-5:]):
            _console().print(line)

    async def offer_again(self) -> bool:
        """Ask (at the normal terminal) whether to play again at the same table."""
        _console().print(Text("Play again at the same table? [y/N] ", style="bold"), end="")
        line = await trio.to_thread.run_sync(sys.stdin.readline, abandon_on_cancel=True)
        return line.strip().lower() in ("y", "yes")

    # ---- the screen ------------------------------------------------------------------------

    def tell(self, text: str) -> None:
        """News from the table itself (a player back after a break), among the events."""
        self.events.append(text)
        self.told += 1
        del self.events[:-EVENTS_KEPT]
        self.redraw()

    def mark_bots(self, seats: frozenset[int]) -> None:
        """Show these seats as played by a bot (their players left the table)."""
        self.names.bots = frozenset(seats)
        self.redraw()

    def note(self, text: str) -> None:
        self.events.append("→ " + text)
        self.told += 1
        del self.events[:-EVENTS_KEPT]

    @property
    def since(self) -> int:
        """How many events came after your last answer (shown under a heading until the next)."""
        return min(self.told - self.moved_at, len(self.events))

    def table_view(self) -> TableView | None:
        game = self.game
        if game is None:
            return None
        return TableView(
            self.game_name,
            game.view(self.seat),
            self.names,
            tuple(game.to_move()),
            self.events,
            self.progress_text,
            game.is_over(),
            self.since,
            self.moved_at > 0,
            self._secret(game),
        )

    def _secret(self, game: Game) -> frozenset[int]:
        """Cards on the table (not in a hand) that we see and the others do not: shown as
        face down to them. Who has seen which card is public knowledge at every table."""
        return look_of(self.game_name).secret(game, self.seat)

    def screen(self) -> list[Text]:
        t = self.table_view()
        if t is None:
            return [Text(self.progress_text or "Setting up the table…")]
        prompt = self.prompter.view(self.countdown) if self.prompter is not None else None
        prompt = prompt or self.end_question
        width, height = self.term.size()
        return render_screen(t, prompt, width, height)

    def _resized(self) -> None:
        if self.paging is None:
            self.redraw()
        else:
            self.term.draw(self.paging())

    def redraw(self) -> None:
        if self.finished:
            return
        self.term.start()
        self.term.draw(self.screen())

    async def _page(
        self, title: str, body: Sequence[str], deadline: float | None = None, last: bool = False
    ) -> None:
        """A full-screen page; it closes by itself when an answer window's time is up.
        ``last``: open at the last page (the log, newest last)."""
        page = 10**9 if last else 0
        try:
            await self._paging(title, body, deadline, page, from_end=last)
        finally:
            self.paging = None

    async def _paging(
        self,
        title: str,
        body: Sequence[str],
        deadline: float | None,
        page: int,
        from_end: bool = False,
    ) -> None:
        while True:
            width, height = self.term.size()
            lines, pages = render_page(title, body, page, width, height, from_end)
            page = min(page, pages - 1)
            self.paging = lambda p=page: render_page(title, body, p, *self.term.size(), from_end)[0]
            self.term.draw(lines)
            left = None if deadline is None else deadline - trio.current_time()
            if left is not None and left <= 0:
                return
            key = await self._key(left)
            if key is None:
                continue
            if key in (" ", "pgdn", "down", "right") and page < pages - 1:
                page += 1
            elif key in ("b", "pgup", "up", "left") and page > 0:
                page -= 1
            elif key in ("enter", "esc", "q", "eof") or (
                key in (" ", "pgdn") and page == pages - 1
            ):
                return

    async def _key(self, timeout: float | None) -> str | None:
        wait = KEY_POLL_S if timeout is None else max(0.0, min(timeout, KEY_POLL_S))
        while True:
            key = await trio.to_thread.run_sync(self.term.read_key, wait, abandon_on_cancel=True)
            if key is not None or timeout is not None:
                return key

    # ---- asking ------------------------------------------------------------------------------

    def _hint(self, game: Game, seat: int, legal: Sequence[Action]) -> Action | None:
        if self.hint_bot is None:
            return None
        try:
            hint = self.hint_bot.act(game.view(seat), legal)
        except Exception:  # a hint is a courtesy; a bot's bad day must not stop the game
            return None
        if type(hint).__name__ in RISKY_HINTS:
            return None  # never preselected: Enter alone must not do what cannot be undone
        return hint

    async def _ask(self, game: Game, seat: int, legal: Sequence[Action]) -> Action:
        hint = self._hint(game, seat, legal)
        title = self.moves.question(game, seat)
        root = self.moves.menu(game, seat, hint)
        if is_plan(root):  # one way only, yet asked (the question must not give anything away)
            root = Choice(title, [Option(self.moves.describe(game, seat, root[0]), root)])
        self.prompter = Prompter(root, title, lambda text: self.moves.parse(game, seat, text))
        default = self.moves.window_default(game, seat) if self.answer_timeout > 0 else None
        deadline = trio.current_time() + self.answer_timeout if default is not None else None
        self.asked += 1
        self.redraw()
        self._trace("ask", game, seat, legal)
        try:
            while True:
                left = None if deadline is None else deadline - trio.current_time()
                if left is not None and left <= 0:
                    self.note("time is up: you " + self.moves.describe(game, seat, default))
                    self._trace("answer", game, seat, legal, default)
                    self.moved_at = self.told
                    return default
                countdown = None if left is None else int(left + 0.999)
                if countdown != self.countdown:
                    self.countdown = countdown
                    self.redraw()
                key = await self._key(left)
                if key is None:
                    continue
                self.keys += 1
                if key == "eof":
                    raise PlayerQuit("the input was closed")
                node = self.prompter.node
                result = self.prompter.key(key)
                self.redraw()
                if result is None:
                    if key == "enter":
                        what = "menu" if self.prompter.node is not node else "refused"
                        self._trace(what, game, seat, legal)
                    continue
                if result[0] == "plan":
                    plan = result[1]
                    problem = validate_plan(game, seat, plan)
                    if problem:
                        self.prompter.refuse(self.names.replace(problem))
                        self.redraw()
                        self._trace("refused", game, seat, legal)
                        continue
                    self.queue = list(plan[1:])
                    self._trace("answer", game, seat, legal, plan[0])
                    self.moved_at = self.told
                    return plan[0]
                if result[0] == "help":
                    await self._page("Help: your moves now", self.moves.help(game, seat), deadline)
                elif result[0] == "rules":
                    from cli.rules import table_rules

                    await self._page(
                        "Rules", table_rules(self.game_name, game.view(seat)), deadline
                    )
                elif result[0] == "log":
                    await self._page(
                        "Log: every event so far, newest last",
                        self.events or ["(nothing has happened yet)"],
                        deadline,
                        last=True,
                    )
                elif result[0] == "quit" and await self._confirm_quit():
                    raise PlayerQuit("you left the table")
                self.redraw()
                self._trace("menu", game, seat, legal)
        finally:
            self.prompter = None
            self.countdown = None

    async def ask_end(self, name: str, silent_for: float) -> bool:
        """A player vanished while owing a step: end the table now (``e``, a signed vote
        that is final: you play no further move here) or wait (``w``, the default; not
        answering is waiting too).  Gives way when a move of ours is asked meanwhile."""
        who = self.names.replace(name)
        self.end_question = PromptView(
            f"{who} has vanished (no link for {silent_for:.0f}s)."
            " End the table now? [e]nd / [w]ait",
            hint="e: end the table (final)   w: wait",
        )
        self.redraw()
        try:
            while not self.finished and self.prompter is None:
                key = await self._key(KEY_POLL_S)
                if key in ("e", "E"):
                    self.note(f"you voted to end the table without {who}")
                    return True
                if key in ("w", "W", "esc", "eof"):
                    self.note(f"you chose to wait for {who}")
                    return False
            return False
        finally:
            self.end_question = None
            self.redraw()

    async def _confirm_quit(self) -> bool:
        prompter, self.prompter = self.prompter, None
        t = self.table_view()
        width, height = self.term.size()
        ask = PromptView("Leave the game? Type y to leave, anything else to stay", hint="")
        self.term.draw(render_screen(t, ask, width, height))
        key = await self._key(None)
        self.prompter = prompter
        return key in ("y", "Y")

    # ---- what this seat has been allowed to see (for the trace) ----------------------------

    def _learn_view(self, game: Game) -> None:
        if self.trace_path is None:
            return
        for h in range(len(game.deck)):
            f = game.face_for(self.seat, h)
            if f is not None:
                self.seen.add(str(f))

    def _learn_event(self, ev: Event) -> None:
        if self.trace_path is None:
            return
        for key in ("card", "took"):
            f = ev.data.get(key)
            if f is not None:
                self.seen.add(str(f))

    def _trace(
        self,
        event: str,
        game: Game,
        seat: int,
        legal: Sequence[Action],
        answer: Action | None = None,
    ) -> None:
        """One JSON line: what the engine says this seat holds and may see, and the screen.

        ``event`` is ``ask`` (a new question), ``menu`` (the next step of one),
        ``refused`` (a move that cannot be made; the message is on screen) or
        ``answer`` (the move sent).
        """
        if self.trace_path is None:
            return
        view = game.view(seat)
        hand = [c.face for c in view.get("hand", ()) if c.face is not None]
        record: dict[str, Any] = {
            "event": event,
            "n": self.asked,
            "game": self.game_name,
            "phase": getattr(game, "phase", ""),
            "hand": sorted(str(f) for f in hand),
            "to_move": [self.names(s) for s in game.to_move()],
            "me": self.names(self.seat),
            "seen": sorted(self.seen),
            "keys": self.keys,
        }
        if event == "ask":
            says = []
            for a in legal[:400]:
                try:
                    says.append(self.moves.say(game, seat, a))
                except Exception as exc:  # noqa: BLE001 (recorded, the test reports it)
                    says.append(f"!{type(exc).__name__}: {exc}")
            record["legal"] = says
        if answer is not None:
            record["answer"] = self.moves.say(game, seat, answer)
        if self.prompter is not None:
            pv = self.prompter.view(self.countdown)
            record.update(
                title=pv.title, options=list(pv.options), selected=pv.selected, message=pv.message
            )
        if event != "answer":
            record["screen"] = plain(self.screen())
        with self.trace_path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(record, ensure_ascii=False) + "\n")

    def _trace_finish(self, summary: Mapping[str, Any]) -> None:
        if self.trace_path is not None:
            with self.trace_path.open("a", encoding="utf-8") as f:
                f.write(json.dumps({"event": "finish", **dict(summary)}, default=str) + "\n")


class WatchingPlayer(BotPlayer):
    """A bot plays the seat; the events are printed line by line (no terminal needed)."""

    def __init__(self, bot: Any, names: Sequence[str], seat: int, quiet: bool = False) -> None:
        super().__init__(bot)
        self.names = Names(names, seat)
        self.seat = seat
        self.quiet = quiet
        self.told_result = False
        self.game: Game | None = None

    def observe(self, game: Game, seat: int, events: Sequence[Event]) -> None:
        self.game = game
        super().observe(game, seat, [e for e in events if e.visible_to(self.seat)])
        if self.quiet:
            return
        for ev in events:
            if ev.visible_to(self.seat):
                print(narrate(ev, self.names), flush=True)

    def progress(self, text: str) -> None:
        if not self.quiet:
            print("… " + self.names.replace(text), file=sys.stderr, flush=True)

    def finish(self, summary: Mapping[str, Any]) -> None:
        if self.quiet:
            return
        outcome = self.game.outcome() if self.game is not None and self.game.is_over() else None
        for line in end_lines(summary, self.names, outcome, ()):
            print(line.plain, flush=True)
        self.told_result = True


def _console() -> Console:
    return Console(highlight=False)
