"""Our player at a running table: the part of :class:`p2p.net.node.Node` that asks it,
and signs every entry our seat owes (:meth:`PlayerSeat._act`).

A bot answers at once; a person decides in a task of its own while the record loop
keeps the table alive, and a move the engine refuses is asked again with the reason
(``Game.check``).  Our player also hears what its seat saw happen and what the table
waits for, and is asked whether to end the table for a player who vanished (its vote
goes through :meth:`p2p.table.session.TableSession.vote`).
"""

from __future__ import annotations

import random
import secrets
from collections.abc import Callable
from typing import Any

import trio

from engine.players import BotPlayer, LeftTable, Player
from p2p.table import effects
from p2p.table.events import HandedOver
from p2p.table.game_rule import describe
from p2p.table.seat import game_of

LEAVE_DRAIN_S = 1.0
"""How long a leaving process waits for its notice to go out before it stops."""


class PlayerSeat:
    """Mixin of :class:`p2p.net.node.Node`: our player (``self.player``) and its questions."""

    # what it uses of the node (set by ``Node.__init__``)
    cfg: Any
    manifest: Any
    record: Any
    driver: Any
    session: Any
    player: Player | None
    _nursery: trio.Nursery | None
    _deciding: int | None
    _said: str | None
    _run: Callable[..., Any]
    my_seat: int
    _offload: Any
    _pace_until: float

    def _choose(self, engine: Any, seat: int) -> Any:
        """A bot's decision at once; ``None`` after handing a person's to its own task."""
        player = self._player()
        if not isinstance(player, BotPlayer):
            self._start_decision()
            return None
        return player.choose(engine, seat)

    def _player(self) -> Player:
        if self.player is None:
            game = game_of(self.record) if self.record is not None else None
            assert game is not None and game.mine is not None and self.manifest is not None
            names = [self.manifest.seats[slot].name for slot in game.order]
            if self.cfg.make_player is not None:
                self.player = self.cfg.make_player(names, game.mine.seat, self.manifest.game)
            else:
                self.player = self._bot()
            self._mark_bots()
        return self.player

    def _mark_bots(self) -> None:
        """Tell our player which seats a bot plays now, from the players' notices (the
        table screen shows them as bots; p2p/table/notice.py)."""
        mark = getattr(self.player, "mark_bots", None)
        game = game_of(self.record) if self.record is not None else None
        if mark is None or self.session is None or game is None:
            return
        order = list(game.order)
        mark(frozenset(order.index(s) for s in self.session.bot_slots() if s in order))

    def _bot(self) -> Player:
        game = game_of(self.record) if self.record is not None else None
        assert game is not None and game.mine is not None
        rng = random.Random(secrets.randbits(64))
        return BotPlayer.make(game.spec.bots["heuristic"], game.mine.seat, rng)

    def _hand_over(self, left: Player) -> Player:
        """Our player left: a bot takes the seat so that the table can finish."""
        close = getattr(left, "close", None)
        if close is not None:
            close()  # give the terminal back before saying anything
        self.player = self._bot()
        self.emit(HandedOver())
        return self.player

    async def _tell_left(self) -> None:
        """Our player left: every seat hears it from a signed notice (fsynced first; a
        bot plays our seat from now on, p2p/table/notice.py).  When this process stops
        (the bot plays in another), what is queued is sent first, for at most a second."""
        if self.session is None:
            return
        self._run("leave")
        mesh = getattr(self, "mesh", None)
        if not self.cfg.bot_after_leave and mesh is not None:
            await mesh.drain(LEAVE_DRAIN_S)

    def _act(self, ahead: bool = False) -> None:
        """Sign, persist (fsync) and send every entry we owe, as long as we owe one.

        Decisions go to our player: a bot answers at once, a person in a task of its
        own while the record loop keeps the table alive.  With ``demo_pace_ms`` set, at
        most one demo entry goes out per pace interval.  With ``ahead`` (the record
        loop), an entry that can be made in a worker thread is left to the loop.
        """
        rec, driver, session = self.record, self.driver, self.session
        assert rec is not None and driver is not None and session is not None
        pace = self.cfg.demo_pace_ms / 1000
        while not session.ended() and session.my_vote is None:  # a voter signs nothing more
            if not rec.owes(self.my_seat):
                return
            if pace > 0:
                now = trio.current_time()
                if now < self._pace_until:
                    return
                self._pace_until = now + pace
            if ahead and self._offload is not None and self._offload.wants_premake(game_of(rec)):
                return  # the record loop makes it in a worker thread (p2p/net/offload.py)
            body = driver.next_body(self._choose)
            if body is None:
                return  # our person decides in a task of its own
            self._run("own", body)

    def _start_decision(self) -> None:
        rec = self.record
        assert rec is not None
        if self._deciding == rec.step or self._nursery is None:
            return
        self._deciding = rec.step
        self._nursery.start_soon(self._decide, rec.step)

    async def _decide(self, step: int) -> None:
        """Ask our (human) player; send the decision if it is still owed."""
        driver, rec = self.driver, self.record
        assert driver is not None and rec is not None
        player = self._player()
        while True:
            view = driver.seat_view()
            assert view is not None
            engine, seat = view
            try:
                action = await player.decide(engine, seat)
            except LeftTable:
                if self.player is player:
                    await self._tell_left()
                if not self.cfg.bot_after_leave or self.player is not player:
                    raise
                player = self._hand_over(player)
                continue
            if rec.step != step or not driver.owes_decision() or self._ended():
                self._deciding = None
                return
            problem = engine.check(action)
            if problem is None:
                break
            player.progress(f"that move is not allowed: {problem}")
        self._deciding = None
        self._run("own", driver.decision_body(action))
        self._act()

    def _deliver(self) -> None:
        """Hand our player what its seat saw happen, and say what the table waits for."""
        driver = self.driver
        if driver is None or driver.game is None or driver.game.mine is None:
            return
        player = self._player()
        events = driver.take_events()
        engine, seat = driver.seat_view()  # type: ignore[misc]
        if events:
            player.observe(engine, seat, events)
        if getattr(type(player), "progress", None) is BotPlayer.progress:
            return  # a player that ignores what the table waits for is not told
        game = driver.game
        assert self.manifest is not None
        names = {slot: m.name for slot, m in enumerate(self.manifest.seats)}
        text = describe(game, names)
        if game.need is not None and game.my_seat in game.need.seats:
            text = None if game.waits_for_decision() else text
        if text is not None and text != self._said:
            self._said = text
            player.progress(text)

    # -- a vanished player: ask ours to end the table (p2p/table/endvote.py) --

    def _ask_end(self, ask: effects.AskEnd) -> None:
        """A person answers on the table screen (``ask_end``; not answering is waiting);
        a bot, or a player that cannot be asked, votes yes at once."""
        asker = getattr(self.player, "ask_end", None)
        if asker is None or self._nursery is None:
            self.vote_end(ask.slot)
            return
        self._nursery.start_soon(self._ask_player, asker, ask.slot, ask.step, ask.silent_for)

    async def _ask_player(
        self, ask: Callable[[str, float], Any], slot: int, step: int, silent_for: float
    ) -> None:
        """Ask until the person says end; not voting is waiting, and while the player
        stays gone the question comes back after each further machine steps' limit."""
        assert self.manifest is not None
        limit = self.manifest.max_wait_ms / 1000
        while not await ask(self._who(slot)["name"], round(silent_for)):
            await trio.sleep(limit)
            rec, since = self.record, self.session.unlinked_since.get(slot)  # type: ignore[union-attr]
            if rec is None or rec.step != step or self._ended() or since is None:
                return  # the table moved on, or the player is back
            if self.session.my_vote is not None:  # type: ignore[union-attr]
                return
            silent_for = trio.current_time() - since
        rec = self.record
        if rec is None or rec.step != step or self._ended():
            return  # the table moved on meanwhile
        problem = self.vote_end(slot)
        if problem is not None and self.player is not None:
            self.player.progress(f"no vote sent: {problem}")
