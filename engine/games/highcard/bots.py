"""A High Card bot. Like every bot it decides from its seat's ``view`` and legal actions
only: here, it plays the highest card it holds."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engine.bots import Bot
from engine.cards import slave_key
from engine.game import Action
from engine.games.highcard.actions import PlayCard


class HighestFirstBot(Bot):
    kind = "heuristic"

    def act(self, view: dict[str, Any], legal: Sequence[Action]) -> Action:
        faces = {c.handle: c.face for c in view["hand"] if c.face is not None}
        plays = [a for a in legal if isinstance(a, PlayCard) and a.card in faces]
        if not plays:
            return legal[0]
        return max(plays, key=lambda a: slave_key(faces[a.card]))
