"""Slaiga statistics over simulated games, for ``slaiga simulate``: volleys, checks,
jokers and abilities, counted from the event kinds the game emits."""

from __future__ import annotations

from collections import Counter
from typing import Any

from engine.runner import SimResult

CHECK_KINDS = ("shot", "block", "miss", "win")
VOLLEY_PREFIXES = ("volley-length:", "jack-volley-length:")


def summarise(results: list[SimResult]) -> dict[str, Any]:
    """Rule statistics over ``results`` from the event kinds the game emits."""
    total: Counter[str] = Counter()
    for r in results:
        total.update(r.events)
    out: dict[str, Any] = {}
    for prefix in VOLLEY_PREFIXES:
        lengths = {int(k[len(prefix) :]): n for k, n in total.items() if k.startswith(prefix)}
        name = prefix.rstrip(":").replace("-length", "s")
        count = sum(lengths.values())
        out[name] = count
        out[f"{name} mean length"] = (
            round(sum(k * n for k, n in lengths.items()) / count, 2) if count else 0
        )
        out[f"{name} by length"] = dict(sorted(lengths.items()))
    for kind in CHECK_KINDS:
        out[f"{kind} checks"] = {
            "called": total[f"check:{kind}:true"] + total[f"check:{kind}:liar"],
            "true claim": total[f"check:{kind}:true"],
            "lie caught": total[f"check:{kind}:liar"],
        }
    out["lies caught"] = sum(total[f"check:{k}:liar"] for k in CHECK_KINDS)
    out["jokers used"] = total["joker"]
    out["king abilities"] = total["king"]
    out["queen abilities"] = total["queen"]
    out["jack shots"] = total["jack-shot"]
    out["jack picks"] = total["jack-pick"]
    out["reshuffles"] = total["reshuffle"]
    out["misses"] = total["miss"]
    out["win claims"] = total["claim"]
    out["draws by turn cap"] = sum(1 for r in results if r.outcome.draw)
    games = len(results) or 1
    out["mean turns"] = round(sum(r.turns for r in results) / games, 1)
    return out
