"""Checks shared by the engine's game tests.

Every game is tested the same two ways that do not depend on its rules: an
illegal action raises a specific error and leaves the state untouched, and a
seat's view and legal actions do not change when the cards it cannot see are
dealt differently (the "leak" check of docs/design.md).
"""

import pytest

from engine import runner
from engine.errors import IllegalAction


def kinds(events):
    """The kinds of ``events``, in order: what most scenario tests compare."""
    return [e.kind for e in events]


def illegal(g, action, exc=IllegalAction, match=None):
    """Apply ``action``, expecting ``exc`` (matching ``match``) that names the seat, the phase
    and the action, with the state hash unchanged; returns the error."""
    before = g.state_hash()
    with pytest.raises(exc, match=match) as e:
        g.apply(action)
    assert e.value.seat == action.seat and e.value.phase == g.phase and e.value.action == action
    assert g.state_hash() == before
    return e.value


def assert_resample_keeps_view(g, d, seat, rng):
    """Redeal every card ``seat`` cannot see (``runner.resample_hidden``) and check that its
    view and legal actions stay the same and that no card was created or lost.

    The game is left in the resampled world; a caller that plays on from the truth must
    save and restore it itself."""
    view, legal = g.view(seat), g.legal_actions(seat)
    runner.resample_hidden(g, d, seat, rng)
    assert g.view(seat) == view, f"seat {seat}'s view changed when hidden cards moved"
    assert g.legal_actions(seat) == legal, f"seat {seat}'s legal actions leak hidden cards"
    runner.check_conservation(g, d)
