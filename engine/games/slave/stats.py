"""Slave statistics over simulated matches, for ``slaiga simulate``."""

from __future__ import annotations

from typing import Any

from engine.runner import SimResult


def summarise(results: list[SimResult]) -> dict[str, Any]:
    """Rule-event statistics over simulated matches."""
    n = max(len(results), 1)
    deals = sum(r.events.get("title", 0) for r in results) or 1
    return {
        "deals": deals,
        "reversals per deal": round(sum(r.events.get("reversal", 0) for r in results) / deals, 3),
        "topples per deal (2+)": round(
            sum(r.events.get("topple", 0) for r in results) / max(deals - len(results), 1), 3
        ),
        "piles cleared per deal": round(sum(r.events.get("clear", 0) for r in results) / deals, 2),
        "plays per deal": round(sum(r.events.get("play", 0) for r in results) / deals, 2),
        "passes per deal": round(sum(r.events.get("pass", 0) for r in results) / deals, 2),
        "average actions per match": round(sum(r.actions for r in results) / n, 1),
    }
