"""Slåjens statistics over simulated games, for ``slaiga simulate``."""

from __future__ import annotations

from typing import Any

from engine.runner import SimResult


def summarise(results: list[SimResult]) -> dict[str, Any]:
    """Rule-event statistics over simulated games."""
    turns = sum(r.events.get("score", 0) for r in results) or 1
    tops = [max(r.outcome.scores) for r in results if r.outcome.scores]
    everyone = [s for r in results if r.outcome.scores for s in r.outcome.scores]
    declared = sum(r.events.get("steal:declared", 0) for r in results)
    return {
        "turns scored": turns,
        "berserkers per turn": round(sum(r.events.get("berserker", 0) for r in results) / turns, 3),
        "rolls per turn": round(sum(r.events.get("roll", 0) for r in results) / turns, 2),
        "average winning total": round(sum(tops) / len(tops), 1) if tops else 0,
        "average seat total": round(sum(everyone) / len(everyone), 1) if everyone else 0,
        "steals declared": declared,
        "steals hit (three in a row)": sum(r.events.get("steal:run", 0) for r in results),
        "steals succeeded": sum(r.events.get("steal:success", 0) for r in results),
        "steals defended": sum(r.events.get("steal:defended", 0) for r in results),
    }
