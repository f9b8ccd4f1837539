"""High Card's one action. Every field is annotated with its exact wire form
(``engine.codec``): ``Handle`` is an ``int`` naming one of this table's cards, and the
inherited ``seat`` an ``int`` naming one of its seats."""

from __future__ import annotations

from dataclasses import dataclass

from engine.codec import Handle
from engine.game import Action


@dataclass(frozen=True, slots=True)
class PlayCard(Action):
    """Play ``card`` from the hand, face up."""

    card: Handle
