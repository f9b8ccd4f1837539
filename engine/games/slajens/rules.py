"""Slåjens (docs/rules/slajens.md): five dice, up to three rolls, Berserker, steals.

Every die comes from a ``Roll`` obligation (joint randomness on a real
table); there are no hidden cards, so every view is the public state.

Phases (one table, ``Slajens.PHASES``):

* ``start``: the current seat rolls all five dice (``RollDice``), optionally
  declaring a Sjond steal on the same action (``target``, ``amount``).
* ``rolling``: ``Keep`` a set of die positions and reroll the rest, or
  ``Stop``. After the third roll the dice are scored at once.
* ``respond``: a successful steal's target chooses ``Respond(defend=...)``.
* ``over``: all rounds are played.

Scoring ([house] "Slalt counts once"): without three of a kind
a 1 scores 10 and 2-6 their face (option ``slalt_double`` makes a 5 score 10
as the seed's double listing would). With at least three of one face
(Berserker) the plain sum counts, then the two dice outside the three of a
kind are rerolled once (a ``Roll`` of 2) and their faces added; mandatory.
With four or five of a kind the three of a kind is any three of the matching
dice, so "the two outside" are the other two whatever they show: it is
always two dice, as the rules say ("the two dice"); 4,4,4,4,2 scores 18 plus
a two-dice reroll. The reroll adds plain faces (a 1 counts 1) and does not
replace the scored dice.

Teams (option ``teams``): 0 plays individually; ``k >= 2`` deals seats to
teams round-robin (seat ``s`` is on team ``s % k``), so consecutive turns
alternate between teams. A team's score is the sum of its members' totals.
``k`` must divide the seat count: with unequal teams the larger team would
roll more often (so its summed score is not a fair comparison) and "teams
take turns" would break at the round boundary (5 seats, 2 teams: ...0 1 0 |
0 1...).

Sjond (option ``sjond``): before the first roll a seat may name a target
(another seat, not a team-mate) and an amount from 1 up to the target's
score in the previous round (or, with option ``steal_cap=total``, its running
total as it stands then: the seed's "total score from the previous round"
reads either way **[house]**). The target must have at least
``steal_round_min`` points in the current round (0 if it has not rolled yet
this round) or at least ``steal_total_min`` in total. The steal hits if, after
any of the stealer's (up to three) rolls, the five dice show three
consecutive values (v, v+1, v+2). On a hit the target accepts (the amount
moves at once) or, if it still has a turn to come and option ``defence`` is
``score``, defends: on its next turn it must score at least the amount, or
the amount moves then. The stealer's turn is scored as normal. Totals may go
below zero after a steal; that is the rule's arithmetic.

Leaving (``Game.leave``, a table with the ``survive`` option): the seat's turns are
skipped from then on and its total stands (it still counts for its team). A turn it
had begun ends unscored, and every steal it is part of lapses (its own, a steal
awaiting its answer, a defence against it); nobody may target it after. The game ends
at once when the seats still playing are all of one team (or one seat). In the
ranking, a team with nobody left at the table comes after the others, and a seat that
left comes after its team-mates (individually: after every seat that stayed).

Outcome: seats ranked by their team's total (individual total without
teams), ties by seat order; the top total is Ahökva, a shared top is a draw.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engine.errors import BadOption
from engine.game import Action, Game, Handler, Outcome, Phase
from engine.games.slajens.actions import (
    DICE,
    LUCK_FACE,
    LUCK_SCORE,
    MAX_ROUNDS,
    MAX_SEATS,
    NO_TARGET,
    SIDES,
    Keep,
    Respond,
    RollDice,
    Stop,
    steals,
)
from engine.games.slajens.events import Berserker, GameOver
from engine.obligations import Roll
from engine.options import OptionSpec

MAX_ROLLS = 3
BERSERKER_COUNT = 3
BERSERKER_REROLL = DICE - BERSERKER_COUNT
SLALT_FACE = 5
RUN = 3  # a steal needs this many consecutive values
_RUNS = tuple(frozenset(range(v, v + RUN)) for v in range(1, SIDES - RUN + 2))


def plain_score(dice: Sequence[int], slalt_double: bool = False) -> int:
    """A roll without three of a kind: 1 scores 10, others their face."""
    total = 0
    for v in dice:
        if v == LUCK_FACE:
            total += LUCK_SCORE
        elif v == SLALT_FACE and slalt_double:
            total += 2 * SLALT_FACE
        else:
            total += v
    return total


def berserker_face(dice: Sequence[int]) -> int | None:
    """The face shown at least three times, or ``None``."""
    for v in set(dice):
        if dice.count(v) >= BERSERKER_COUNT:
            return v
    return None


def has_run(dice: Sequence[int]) -> bool:
    """Do the dice show three consecutive values (a Sjond steal hit)?"""
    s = set(dice)
    return any(r <= s for r in _RUNS)


_ALL_KEEPS = tuple(
    tuple(i for i in range(DICE) if mask >> i & 1) for mask in range((1 << DICE) - 1)
)
# keep (ascending positions, not all five) -> the positions rerolled
_REROLL = {k: tuple(i for i in range(DICE) if i not in k) for k in _ALL_KEEPS}


@dataclass(frozen=True, slots=True)
class Steal:
    stealer: int
    target: int
    amount: int


class Slajens(Game):
    NAME = "slajens"
    MIN_SEATS, MAX_SEATS = 2, MAX_SEATS
    OPTIONS = (
        OptionSpec("rounds", int, 10, "rounds to play [house]", minimum=1, maximum=MAX_ROUNDS),
        OptionSpec(
            "teams",
            int,
            0,
            "0: no teams; k >= 2: k teams, seats dealt to them in turn (seats 1, k+1, ... "
            "form team 1)",
            minimum=0,
            maximum=MAX_SEATS // 2,
        ),
        OptionSpec("sjond", bool, False, "the Sjond steal variant"),
        OptionSpec(
            "steal_round_min",
            int,
            20,
            "a steal target needs this many points in the current round ... [house]",
            minimum=0,
        ),
        OptionSpec("steal_total_min", int, 50, "... or this many in total [house]", minimum=0),
        OptionSpec(
            "defence",
            str,
            "score",
            "score: a target may defend by scoring at least the amount on its next turn; "
            "off: steals that hit always succeed [house]",
            choices=("score", "off"),
        ),
        OptionSpec("slalt_double", bool, False, "a 5 scores 10 (Slalt and Raven) [house]"),
        OptionSpec(
            "steal_cap",
            str,
            "round",
            "the most a steal may name: round, the target's score in the previous round; "
            "total, the target's running total when the steal is declared [house]",
            choices=("round", "total"),
            hashed_at_default=False,
        ),
    )

    def __init__(self, seats: int, options: dict[str, Any] | None = None) -> None:
        super().__init__(seats, options)
        teams = self.options["teams"]
        if teams == 1 or teams > seats or (teams and seats % teams):
            fits = [k for k in range(2, seats + 1) if seats % k == 0]
            raise BadOption(
                f"option 'teams': bad value {teams!r}; expected 0 or a team count that divides "
                f"{seats} seats into equal teams: {', '.join(map(str, fits))}"
            )
        self.team_of = tuple(s % teams if teams else s for s in range(seats))
        self.n_teams = teams or seats
        self.round_no = 1
        self.current = 0
        self.dice: list[int] = []
        self.rolls = 0
        self.scores: list[list[int]] = [[] for _ in range(seats)]
        self.totals = [0] * seats
        self.steal: Steal | None = None
        self.hit = False
        self.defences: list[Steal] = []
        self.respond_to: Steal | None = None
        self._options_view = tuple(sorted(self.options.items()))
        self._scores_view: tuple[tuple[int, ...], ...] = ((),) * seats
        self._keeps = [[Keep(s, k) for k in _ALL_KEEPS] + [Stop(s)] for s in range(seats)]

    # ---- flow ------------------------------------------------------------------

    def setup(self) -> None:
        self.phase = "start"
        self.emit("round", f"round 1 of {self.options['rounds']}", round=1)

    def round_score(self, seat: int) -> int:
        """``seat``'s score in the current round (0 before its turn)."""
        sc = self.scores[seat]
        return sc[-1] if len(sc) == self.round_no else 0

    def previous_score(self, seat: int) -> int:
        sc = self.scores[seat]
        prev = self.round_no - 2
        return sc[prev] if 0 <= prev < len(sc) else 0

    def steal_cap(self, target: int) -> int:
        """The most a steal from ``target`` may name now (option ``steal_cap``)."""
        if self.options["steal_cap"] == "total":
            return max(self.totals[target], 0)
        return self.previous_score(target)

    def steal_problem(self, seat: int, target: int, amount: int) -> str | None:
        if not self.options["sjond"]:
            return "stealing needs the sjond option"
        if not 0 <= target < self.seats or target == seat:
            return f"no such target seat {target}"
        if target in self.gone:
            return f"seat {target} has left the table"
        if self.team_of[target] == self.team_of[seat]:
            return f"seat {target} is a team-mate"
        cap = self.steal_cap(target)
        if not 1 <= amount <= cap:
            which = "total" if self.options["steal_cap"] == "total" else "previous round"
            return f"the amount must be 1 to {cap} (seat {target}'s {which})"
        if (
            self.round_score(target) < self.options["steal_round_min"]
            and self.totals[target] < self.options["steal_total_min"]
        ):
            return (
                f"seat {target} has under {self.options['steal_round_min']} this round and "
                f"under {self.options['steal_total_min']} in total"
            )
        return None

    def _has_next_turn(self, seat: int) -> bool:
        played = len(self.scores[seat]) == self.round_no
        return not played or self.round_no < self.options["rounds"]

    def _on_roll(self, action: RollDice) -> Handler:
        seat = action.seat
        if action.target != NO_TARGET or action.amount != 0:
            problem = self.steal_problem(seat, action.target, action.amount)
            if problem:
                raise self.illegal(action, problem)
            self.steal = Steal(seat, action.target, action.amount)
            self.emit(
                "steal:declared",
                f"seat {seat} declares a steal of {action.amount} from seat {action.target}",
                seat=seat,
                amount=action.amount,
            )
        dice = yield Roll(seat, DICE, SIDES, "roll 1")
        self.dice = list(dice)
        self.rolls = 1
        self.phase = "rolling"
        self._rolled(seat)

    def _on_keep(self, action: Keep) -> Handler:
        keep = action.keep
        reroll = _REROLL.get(keep)
        if reroll is None:
            if sorted(set(keep)) == list(range(DICE)):
                raise self.illegal(action, "keeping every die is Stop")
            raise self.illegal(
                action, f"keep lists distinct die positions 0..{DICE - 1} in ascending order"
            )
        values = yield Roll(action.seat, len(reroll), SIDES, f"roll {self.rolls + 1}")
        for i, v in zip(reroll, values, strict=True):
            self.dice[i] = v
        self.rolls += 1
        self._rolled(action.seat)
        if self.rolls == MAX_ROLLS:
            yield from self._finish(action.seat)

    def _on_stop(self, action: Stop) -> Handler:
        yield from self._finish(action.seat)

    def _rolled(self, seat: int) -> None:
        shown = " ".join(map(str, self.dice))
        self.emit(
            "roll",
            f"seat {seat} rolls {shown} (roll {self.rolls} of {MAX_ROLLS})",
            seat=seat,
            roll=self.rolls,
        )
        if self.steal is not None and not self.hit and has_run(self.dice):
            self.hit = True
            self.emit("steal:run", f"seat {seat} shows three in a row", seat=seat)

    def _finish(self, seat: int) -> Handler:
        dice = self.dice
        face = berserker_face(dice)
        if face is not None:
            base = sum(dice)
            extra = yield Roll(seat, BERSERKER_REROLL, SIDES, "berserker")
            score = base + sum(extra)
            self.emit(
                "berserker",
                f"seat {seat} Berserker on {face}s: {base}, rerolls "
                f"{' '.join(map(str, extra))} for {score}",
                seat=seat,
                base=base,
                extra=tuple(extra),
                detail=Berserker(face, base, tuple(extra), score),
            )
        else:
            score = plain_score(dice, self.options["slalt_double"])
        self.scores[seat].append(score)
        self._scores_view = tuple(tuple(sc) for sc in self.scores)
        self.totals[seat] += score
        self.turns += 1
        self.emit(
            "score",
            f"seat {seat} scores {score} with {' '.join(map(str, dice))} "
            f"(total {self.totals[seat]})",
            seat=seat,
            score=score,
            dice=tuple(dice),
        )
        still = []
        for st in self.defences:
            if st.target != seat:
                still.append(st)
            elif score >= st.amount:
                self.emit(
                    "steal:defended",
                    f"seat {seat} defends against seat {st.stealer}'s steal of {st.amount}",
                    seat=seat,
                    amount=st.amount,
                )
            else:
                self._move(st)
        self.defences = still
        st, self.steal, hit = self.steal, None, self.hit
        self.hit = False
        if st is not None:
            if not hit:
                self.emit("steal:failed", f"seat {seat}'s steal misses", seat=seat)
            elif self.options["defence"] == "score" and self._has_next_turn(st.target):
                self.respond_to = st
                self.phase = "respond"
                return
            else:
                self._move(st)
        self._next_turn()

    def _move(self, st: Steal) -> None:
        self.totals[st.target] -= st.amount
        self.totals[st.stealer] += st.amount
        self.emit(
            "steal:success",
            f"seat {st.stealer} steals {st.amount} from seat {st.target}",
            seat=st.stealer,
            amount=st.amount,
            target=st.target,
        )

    def _on_respond(self, action: Respond) -> None:
        st = self.respond_to
        assert st is not None
        self.respond_to = None
        if action.defend:
            self.defences.append(st)
            self.emit(
                "steal:defending",
                f"seat {st.target} will defend {st.amount} on its next turn",
                seat=st.target,
            )
        else:
            self.emit("steal:accepted", f"seat {st.target} accepts", seat=st.target)
            self._move(st)
        self._next_turn()

    def _next_turn(self) -> None:
        self.dice = []
        self.rolls = 0
        self.phase = "start"
        self.current = self._next_present(self.current + 1)
        if self.current == self.seats:
            if self.round_no == self.options["rounds"]:
                self.current = 0
                self.phase = "over"
                self.emit(
                    "end",
                    f"final totals {self.totals}",
                    detail=GameOver(tuple(self.totals)),
                    totals=tuple(self.totals),
                )
                return
            self.round_no += 1
            self.emit("round", f"round {self.round_no}", round=self.round_no)
            self.current = self._next_present(0)

    def _next_present(self, seat: int) -> int:
        """The first seat from ``seat`` on that is still at the table (``seats`` if none):
        the turns of a seat that has left are skipped."""
        while seat < self.seats and seat in self.gone:
            seat += 1
        return seat

    # ---- leaving ------------------------------------------------------------------------

    def _teams_left(self) -> set[int]:
        return {self.team_of[s] for s in self.present()}

    def on_leave(self, seat: int) -> None:
        """docs/rules/slajens.md, "A player who leaves"."""
        lapsed = [st for st in self.defences if seat in (st.stealer, st.target)]
        self.defences = [st for st in self.defences if seat not in (st.stealer, st.target)]
        turn_over = False
        st = self.respond_to
        if st is not None and seat in (st.stealer, st.target):
            lapsed.append(st)
            self.respond_to = None
            turn_over = True  # the stealer's turn is scored; play passes on
        if self.phase in ("start", "rolling") and self.current == seat:
            turn_over = True
            if self.rolls:
                self.emit("unscored", f"seat {seat}'s turn ends unscored", seat=seat)
        if self.steal is not None and seat in (self.steal.stealer, self.steal.target):
            lapsed.append(self.steal)
            self.steal, self.hit = None, False
        for st in lapsed:
            self.emit(
                "steal:lapsed",
                f"seat {st.stealer}'s steal of {st.amount} from seat {st.target} lapses",
                seat=st.stealer,
            )
        if len(self._teams_left()) <= 1:
            self.dice, self.rolls, self.phase = [], 0, "over"
            self.emit("end", f"final totals {self.totals}", totals=tuple(self.totals))
            return
        if turn_over:
            self._next_turn()

    # ---- queries ---------------------------------------------------------------------

    def to_move(self) -> tuple[int, ...]:
        if self._pending is not None or self.phase in ("over", "setup"):
            return ()
        if self.phase == "respond":
            assert self.respond_to is not None
            return (self.respond_to.target,)
        return (self.current,)

    def _legal_start(self, seat: int) -> list[Action]:
        out: list[Action] = [RollDice(seat)]
        if self.options["sjond"]:
            for t in range(self.seats):
                if self.steal_problem(seat, t, 1) is None:
                    out.extend(steals(seat, t, self.steal_cap(t)))
        return out

    def _legal_rolling(self, seat: int) -> list[Action]:
        return list(self._keeps[seat])

    def _legal_respond(self, seat: int) -> list[Action]:
        return [Respond(seat, True), Respond(seat, False)]

    PHASES = {
        "setup": Phase(),
        "start": Phase({RollDice: _on_roll}, legal=_legal_start),
        "rolling": Phase({Keep: _on_keep, Stop: _on_stop}, legal=_legal_rolling),
        "respond": Phase({Respond: _on_respond}, legal=_legal_respond),
        "over": Phase(),
    }

    def team_totals(self) -> tuple[int, ...]:
        out = [0] * self.n_teams
        for s, t in enumerate(self.totals):
            out[self.team_of[s]] += t
        return tuple(out)

    def view(self, seat: int) -> dict[str, Any]:
        return {
            "seat": seat,
            "seats": self.seats,
            "phase": self.phase,
            "round": self.round_no,
            "rounds": self.options["rounds"],
            "current": self.current,
            "to_move": self.to_move(),
            "dice": tuple(self.dice),
            "rolls": self.rolls,
            "totals": tuple(self.totals),
            "scores": self._scores_view,
            "team_of": self.team_of,
            "steal": self.steal,
            "hit": self.hit,
            "defences": tuple(self.defences),
            "respond_to": self.respond_to,
            "options": self._options_view,
        }

    def public_state(self) -> Any:
        return {
            "round": self.round_no,
            "current": self.current,
            "dice": list(self.dice),
            "rolls": self.rolls,
            "scores": [list(s) for s in self.scores],
            "totals": list(self.totals),
            "steal": self.steal,
            "hit": self.hit,
            "defences": list(self.defences),
            "respond_to": self.respond_to,
        }

    def is_over(self) -> bool:
        return self.phase == "over"

    def outcome(self) -> Outcome:
        teams = self.team_totals()
        playing = self._teams_left()
        ranking = tuple(
            sorted(
                range(self.seats),
                key=lambda s: (
                    self.team_of[s] not in playing,
                    -teams[self.team_of[s]],
                    self.team_of[s],
                    s in self.gone,
                    s,
                ),
            )
        )
        counted = [teams[t] for t in sorted(playing)]
        best = max(counted)
        draw = counted.count(best) > 1
        who = "team" if self.options["teams"] else "seat"
        winner = self.team_of[ranking[0]]
        reason = f"{who} {winner} is Ahökva with {best}" if not draw else f"shared top {best}"
        return Outcome(ranking, draw=draw, reason=reason, scores=tuple(self.totals))
