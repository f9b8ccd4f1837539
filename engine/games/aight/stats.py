"""Aight of Spaides statistics over simulated games, for ``slaiga simulate``."""

from __future__ import annotations

from collections import Counter
from typing import Any

from engine.runner import SimResult


def summarise(results: list[SimResult]) -> dict[str, Any]:
    """Rules created by kind, Improper! calls right and wrong, Unmaus, endings."""
    total: Counter[str] = Counter()
    for r in results:
        total.update(r.events)
    ends: Counter[str] = Counter()
    for r in results:
        reason = r.outcome.reason
        ends[reason.split(":", 1)[0] if ":" in reason else reason or "unknown"] += 1
    rules = {k.split(":", 1)[1]: v for k, v in sorted(total.items()) if k.startswith("rule:")}
    return {
        "rules created by kind": rules,
        "rules created": sum(v for k, v in rules.items() if k not in ("ignored", "rejected")),
        "Improper! calls": total["improper:call"],
        "Improper! right": total["improper:right"],
        "Improper! wrong": total["improper:wrong"],
        "improper moves uncalled": total["improper:uncalled"],
        "free-text votes": total["improper:vote"],
        "Unmaus": total["unmau"],
        "games ended by": dict(sorted(ends.items())),
    }
