"""A lie that only a later reveal shows convicts its author, at the step it lied.

Slaiga's face-down plays are claims: a discard declared a king's ability, a jack
shot, a volley answer, a joker's cancel, a shot or block in the honest variant, a
win claim.  The table's seatless engine must accept such a claim when it is made
(it cannot see the card) and finds it false only when the card is revealed.
Whenever that comes, the engine error is the claimant's fault (docs/design.md,
"Every deviation convicts its author"): every honest seat convicts it, the signed
action is the evidence, and ``slaiga verify`` reaches the same verdict from the
file.  Before this rule a late ``FalseClaim`` escaped as a crash on every honest
peer, with no culprit.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from engine import registry
from engine.errors import EngineError
from engine.game import Action, Game, Handler
from engine.games.highcard.bots import HighestFirstBot
from engine.games.highcard.rules import HighCard
from engine.games.slaiga.actions import (
    Answer,
    CancelCheck,
    Check,
    ClaimWin,
    Discard,
    JackShot,
    Shoot,
    ShotCard,
)
from engine.obligations import Reveal
from engine.players import BotPlayer
from engine.registry import GameSpec, register
from p2p.errors import InvalidMove
from p2p.record.chain import entry_hash
from p2p.record.store import RecordFile
from p2p.record.verify import verify_record_file
from p2p.table import local_table
from p2p.wire import Entry, decode_body
from tests.p2p.cheaters import lies

VOLLEYS: dict[type, type] = {ShotCard: Shoot, Answer: JackShot, CancelCheck: Shoot}
"""What the liar plays whenever it may, to be asked for its kind of lie soon after."""


class Liar(BotPlayer):
    """A heuristic bot that tells the first lie it can (``table`` gives the public
    engine, as any seat has it)."""

    def __init__(self, game: str, seat: int, public: Game, rng: random.Random, kind: type) -> None:
        spec = registry.get(game)
        super().__init__(spec.bots["heuristic"](seat, random.Random(seat)))
        self.public = public
        self.rng = rng
        self.kind = kind
        self.told: Action | None = None

    def choose(self, game: Game, seat: int) -> Action:
        if self.told is None:
            found = [a for a in lies(self.public, game, seat) if isinstance(a, self.kind)]
            if found:
                self.told = self.rng.choice(found)
                return self.told
            # a shot card follows a shot, an answer a jack shot, and a check (to cancel) a
            # face-down shot: play one whenever we may, to be asked for what we lie about
            starts = VOLLEYS.get(self.kind, ())
            shoots = [a for a in game.legal_actions(seat) if isinstance(a, starts)]
            if shoots:
                return self.rng.choice(shoots)
        return super().choose(game, seat)


class Attacker(BotPlayer):
    """A heuristic bot that, when the liar's kind of lie needs it, makes the liar answer:
    it jack-shoots ``target`` (an ``Answer`` lie needs a volley to answer) or checks (a
    ``CancelCheck`` lie needs a check to cancel) whenever it may.  Heuristic bots alone
    do either rarely, and a table then often ended before the lie could be told."""

    def __init__(self, game: str, seat: int, target: int, kind: type, rng: random.Random) -> None:
        spec = registry.get(game)
        super().__init__(spec.bots["heuristic"](seat, random.Random(seat)))
        self.target = target
        self.kind = kind
        self.rng = rng

    def choose(self, game: Game, seat: int) -> Action:
        legal = game.legal_actions(seat)
        if self.kind is Answer:
            moves = [a for a in legal if isinstance(a, JackShot) and a.target == self.target]
        else:
            moves = [a for a in legal if isinstance(a, Check)]
        if moves:
            return self.rng.choice(moves)
        return super().choose(game, seat)


def _play_with_liar(game: str, seed: int, kind: type) -> tuple[local_table.LocalTable, Liar]:
    table = local_table.new_table(game, 3)
    liar_slot = 0
    made: dict[str, Liar] = {}

    attackers: dict[int, Attacker] = {}

    def make_player(slot: int, seat: int) -> BotPlayer | None:
        rule = table.drivers[liar_slot].game
        if slot != liar_slot:
            if kind not in (Answer, CancelCheck):
                return None
            if slot not in attackers:
                target = rule.engine_seat_of[liar_slot]
                rng = random.Random(seed * 10 + slot)
                attackers[slot] = Attacker(game, seat, target, kind, rng)
            return attackers[slot]
        public = rule.engine  # the seatless engine every peer folds
        made["liar"] = Liar(game, seat, public, random.Random(seed), kind)
        return made["liar"]

    local_table.run(table, seed=seed, make_player=make_player, max_entries=20_000)
    return table, made["liar"]


LIES = [
    ("slaiga", Discard),  # a discard declared a king's or queen's ability
    ("slaiga", JackShot),
    ("slaiga", Answer),  # a jack-volley answer that is no bullet
    ("slaiga", CancelCheck),  # a joker's cancel with no joker
    ("honest-slaiga", ShotCard),  # an honest shot that breaks the volley rules
    ("honest-slaiga", Answer),  # an honest block or answer
    ("honest-slaiga", ClaimWin),  # a win claim without a straight flush
    ("honest-slaiga", Discard),
]
TRIES = 8
"""Deals are random (every seat's shuffle secret is), so a game may end before the liar
is offered its kind of lie; it then plays another table, up to this many."""


@pytest.mark.parametrize(("game", "kind"), LIES, ids=lambda v: getattr(v, "__name__", v))
def test_a_lie_shown_later_convicts_the_liar_at_its_action(
    game: str, kind: type, tmp_path: Path
) -> None:
    for seed in range(TRIES):
        table, liar = _play_with_liar(game, seed, kind)
        if liar.told is not None:
            break
    assert liar.told is not None, f"no {kind.__name__} lie came up in {TRIES} games"
    liar_slot = 0
    # the liar's action entry: the last action it signed
    actions = [
        decode_body(s.entry, Entry)
        for s in table.log
        if decode_body(s.entry, Entry).seat == liar_slot
        and decode_body(s.entry, Entry).kind == "action"
    ]
    lie_entry = actions[-1]
    lie_step = lie_entry.step
    for d in table.drivers:
        rec = d.record
        if d.slot == liar_slot:
            continue
        assert isinstance(rec.verdict, InvalidMove), (d.slot, rec.verdict)
        assert rec.verdict.seat == liar_slot
        assert "shown by the reveal" in rec.verdict.reason or "once the cards" in rec.verdict.reason
        # the evidence is the liar's own signed action, at the step it lied
        (evidence,) = rec.verdict.evidence
        assert decode_body(evidence, Entry).step == lie_step
        assert decode_body(evidence, Entry).seat == liar_slot
        assert rec.failure is None
    # the verdict from the file alone is the same: seat, step and kind
    path = tmp_path / "table.rec"
    with RecordFile.create(path, table.genesis) as store:
        seen = set()
        for signed in table.log:
            if entry_hash(signed.entry) not in seen:
                seen.add(entry_hash(signed.entry))
                store.append(signed)
    report = verify_record_file(path)
    assert report.failure is not None
    assert report.failure.kind == "InvalidMove"
    assert report.failure.culprit == liar_slot
    assert report.failure.step == lie_step


class StrayAfterRoundHighCard(HighCard):
    """High Card with a rules bug between rounds: once the first card is played, asking
    who moves next starts a stray automatic step, which asks the dealer for a reveal of
    no cards and then refuses the answer, naming no seat.  It happens after the first
    player's round is over, while nobody's action is being carried out, so it is a bug
    of this program, never a lie of the first player.  ``broken`` is off while the table
    plays (so the record is whole) and on while ``slaiga verify`` replays it."""

    NAME = "stray-after-round-high-card"
    broken = False

    def __init__(self, seats: int, options: dict | None = None) -> None:
        super().__init__(seats, options)
        self.strayed = False

    def to_move(self) -> tuple[int, ...]:
        movers = super().to_move()
        if self.broken and movers and self.turns == 1 and not self.strayed:
            self.strayed = True
            self._run(self._stray())
        return movers

    def _stray(self) -> Handler:
        yield Reveal(())
        raise EngineError("a stray step refused the dealer's answer")


STRAY = register(
    GameSpec(
        StrayAfterRoundHighCard.NAME,
        StrayAfterRoundHighCard,
        StrayAfterRoundHighCard,
        {"heuristic": HighestFirstBot},
        3,
        listed=False,
    )
)


def test_an_engine_error_with_no_seat_between_rounds_is_our_bug_not_the_last_actor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The seat whose action the engine carries out is forgotten once its round is
    settled, so an engine error naming no seat after that convicts nobody (a fold
    failure of ours) instead of the player who moved last; and ``verify`` stops at the
    failure, so the entries after it do not make their signers look out of turn."""
    table = local_table.run(local_table.new_table(STRAY.name, 3))
    assert not table.cheats and all(r.finished for r in table.records)
    path = tmp_path / "table.rec"
    with RecordFile.create(path, table.genesis) as store:
        for signed in table.log:
            store.append(signed)
    assert verify_record_file(path).ok
    monkeypatch.setattr(StrayAfterRoundHighCard, "broken", True)
    report = verify_record_file(path)
    assert report.failure is not None
    assert report.failure.kind == "FoldFailed", report.failure
    assert report.failure.culprit is None
    assert "refused a dealer answer" in report.failure.message
