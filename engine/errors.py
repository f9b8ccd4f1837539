"""Engine exceptions: one class per failure, each naming who is at fault.

Modelled on h11's split between local and remote protocol errors: an
``IllegalAction`` is a seat trying something the rules forbid (the state is
left untouched), ``MalformedAction`` is data that does not even decode to an
action, ``FalseClaim`` is a dealer finding that a seat's claim about its
hidden cards is false, and ``BadOption`` is a table configuration error.
"""

from __future__ import annotations

from typing import Any


class EngineError(Exception):
    """Base class of every error raised by ``engine``."""


class BadOption(EngineError, ValueError):
    """An unknown table option, or a bad value for a known one."""


class BadSeats(EngineError, ValueError):
    """A seat count outside the game's range."""


class IllegalAction(EngineError):
    """A seat tried an action the rules do not allow here.

    Always names the action, the phase and the seat. The game state is left
    exactly as it was before the call.
    """

    def __init__(self, action: Any, phase: str, seat: int | None, reason: str) -> None:
        self.action = action
        self.phase = phase
        self.seat = seat
        self.reason = reason
        who = f"seat {seat}" if seat is not None else "no seat"
        super().__init__(f"illegal action {action!r} by {who} in phase {phase!r}: {reason}")


class MalformedAction(EngineError, ValueError):
    """Data that is not exactly an action of this game (``Game.decode_action``): an
    unknown type, missing or extra fields, a value of the wrong type or out of bounds.
    On a real table this is the sending peer's fault."""


class NotYourTurn(IllegalAction):
    """An action from a seat that does not owe one now."""


class DealerPending(IllegalAction):
    """An action arrived while the game waits for the dealer."""


class BadAnswer(EngineError):
    """A dealer answer that does not fit the obligation it answers."""


class FalseClaim(EngineError):
    """A seat's claim about its hidden cards is false (a cheat when verified)."""

    def __init__(self, seat: int | None, statement: Any) -> None:
        self.seat = seat
        self.statement = statement
        super().__init__(f"seat {seat} made a false claim: {statement}")
