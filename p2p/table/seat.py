"""One seat's side of a game table, sans-I/O: which entry it owes and what it says.

The same code serves a live peer (:mod:`p2p.net.node`, over the network) and the
in-process table (:mod:`p2p.table.local_table`, every seat in one process, each
with its own record): a :class:`SeatDriver` wraps the seat's
:class:`p2p.record.chain.Record`, builds the rule with this seat's secrets
(:func:`rule_factory`), and produces the seat's own bodies.  Machine steps
(keys, shuffles, tokens, proofs, dice, the final signature) are produced at
once; an ``action`` is a decision that the caller obtains from the seat's
player: :meth:`SeatDriver.next_body` asks for it and turns it into the body.
"""

from __future__ import annotations

from collections.abc import Callable

from crypto.identity import IdentityKey
from engine.game import Action, Event, Game
from p2p.errors import LocalProtocolError
from p2p.record.chain import Offer, Record
from p2p.record.order import Rule
from p2p.table.demo import DemoRule, next_body
from p2p.table.forming import COMMIT_KIND, REVEAL_KIND, FormingRule, Manifest, seat_order_commit
from p2p.table.game_rule import ACTION_KIND, GameProtocol, GameRule, SeatKeys
from p2p.wire import Body


def rule_factory(keys: SeatKeys | None) -> Callable[[Manifest], Rule]:
    """The record's rule for a seat holding ``keys`` (``None``: a verifier with no seat)."""

    def then(manifest: Manifest, order: tuple[int, ...]) -> Rule:
        if isinstance(manifest.protocol, GameProtocol):
            return GameRule(manifest, order, keys)
        return manifest.protocol.start(manifest, order)

    return lambda manifest: FormingRule(manifest, then=then)


def game_of(record: Record) -> GameRule | None:
    """The game rule of a record once the seat order is drawn (else ``None``)."""
    rule = record.rule
    if isinstance(rule, FormingRule) and isinstance(rule.next_rule, GameRule):
        return rule.next_rule
    return None


class SeatDriver:
    """Produce and sign one seat's entries on its own record."""

    def __init__(self, record: Record, identity: IdentityKey, slot: int) -> None:
        self.record = record
        self.identity = identity
        self.slot = slot

    @property
    def game(self) -> GameRule | None:
        return game_of(self.record)

    def owed_kind(self) -> str | None:
        kinds = self.record.owes(self.slot)
        return min(kinds) if kinds else None

    def owes_decision(self) -> bool:
        return self.owed_kind() == ACTION_KIND and self.game is not None

    def machine_body(self) -> Body | None:
        """Our body for the current step if it needs no decision, else ``None``."""
        kind = self.owed_kind()
        if kind is None:
            return None
        rule = self.record.rule
        if isinstance(rule, FormingRule) and isinstance(rule.next_rule, DemoRule):
            return next_body(rule.next_rule, kind)
        # the seat-order commitment is derived from our identity key (a deterministic
        # Ed25519 signature over the table id), so a restart re-derives the very same
        # commitment and opening; game secrets come from the table secret (SeatKeys)
        if isinstance(rule, FormingRule) and rule.phase in (COMMIT_KIND, REVEAL_KIND):
            manifest = self.record.manifest
            commit_body, reveal = seat_order_commit(manifest.table_id, self.slot, key=self.identity)
            return commit_body if kind == COMMIT_KIND else reveal
        game = self.game
        if game is None:
            raise LocalProtocolError(f"no protocol produces {kind!r} for us")
        if kind == ACTION_KIND:
            return None
        return game.produce()

    def next_body(self, choose: Callable[[Game, int], Action | None]) -> Body | None:
        """Our next body, the one seat driver of a live peer and the in-process table:
        a machine step's at once, a decision's from ``choose(engine, engine seat)``
        (``None``: nothing owed, or ``choose`` gave no action yet)."""
        body = self.machine_body()
        if body is None and self.owes_decision():
            view = self.seat_view()
            assert view is not None
            action = choose(*view)
            body = self.decision_body(action) if action is not None else None
        return body

    def decision_body(self, action: Action) -> Body:
        game = self.game
        if game is None or not self.owes_decision():
            raise LocalProtocolError("no decision is owed")
        return game.action_body(action)

    def sign(self, body: Body) -> Offer:
        return self.record.sign(self.identity, self.slot, body)

    def seat_view(self) -> tuple[Game, int] | None:
        """Our own engine instance and engine seat, once the game runs."""
        game = self.game
        if game is None or game.mine is None:
            return None
        return game.mine.engine, game.mine.seat

    def take_events(self) -> list[Event]:
        game = self.game
        return game.take_events() if game is not None else []
