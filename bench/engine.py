"""Engine benchmark: full games per second, single process, through the local dealer.

Each configuration is played ``--repeat`` times in batches of ``--games``
games; the figure is the median batch rate. Targets come from the issues and
are printed beside the measurement, met or not.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from dataclasses import dataclass

from bench import help_text
from engine import registry, runner
from engine.dealer import LocalDealer
from engine.errors import EngineError


@dataclass(frozen=True)
class Config:
    key: str
    game: str
    seats: int
    bot: str
    options: tuple[tuple[str, object], ...]
    target: float | None
    games: int


CONFIGS = (
    Config("slave_5seat_single_deal", "slave", 5, "random", (("games", 1),), 200.0, 100),
    Config("slajens_4p_10rounds", "slajens", 4, "random", (("rounds", 10),), 500.0, 200),
    Config("slaiga_4seat_heuristic", "slaiga", 4, "heuristic", (), 50.0, 20),
    Config("honest_slaiga_4seat_heuristic", "honest-slaiga", 4, "heuristic", (), None, 20),
    Config("aight_4seat_heuristic", "aight-of-spaides", 4, "heuristic", (), None, 20),
)


def batch(cfg: Config, games: int, seed: int) -> tuple[float, int]:
    spec = registry.get(cfg.game)
    opts = dict(cfg.options)
    draws = 0
    t0 = time.perf_counter()
    for i in range(games):
        game = spec.factory(cfg.seats, opts)
        dealer = LocalDealer(game.deck, seed * 100_003 + i)
        bots = [
            spec.bots[cfg.bot](s, random.Random(seed * 7919 + i * 31 + s)) for s in range(cfg.seats)
        ]
        res = runner.play(game, dealer, bots)
        draws += res.outcome.draw
    return games / (time.perf_counter() - t0), draws


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="slaiga bench engine", description=help_text(__doc__))
    ap.add_argument("--repeat", type=int, default=5, help="batches per configuration (median)")
    ap.add_argument("--scale", type=float, default=1.0, help="multiply batch sizes")
    ap.add_argument("--only", action="append", help="only these configuration keys")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args(argv)

    report: dict[str, object] = {}
    for cfg in CONFIGS:
        if args.only and cfg.key not in args.only:
            continue
        games = max(1, int(cfg.games * args.scale))
        try:
            batch(cfg, 1, 999)  # warm-up and availability check
        except EngineError as exc:
            report[cfg.key] = {"unavailable": str(exc)}
            continue
        rates, draws = [], 0
        for r in range(args.repeat):
            rate, d = batch(cfg, games, r)
            rates.append(rate)
            draws += d
        med = statistics.median(rates)
        entry = {
            "game": cfg.game,
            "seats": cfg.seats,
            "bot": cfg.bot,
            "games_per_batch": games,
            "batches": args.repeat,
            "games_per_s_median": round(med, 1),
            "games_per_s_min": round(min(rates), 1),
            "games_per_s_max": round(max(rates), 1),
            "draws": draws,
            "target_games_per_s": cfg.target,
            "ratio_to_target": round(med / cfg.target, 2) if cfg.target else None,
        }
        report[cfg.key] = entry
        if not args.json:
            tgt = (
                f" (target {cfg.target:.0f}: {'met' if med >= cfg.target else 'NOT met'})"
                if cfg.target
                else ""
            )
            print(
                f"{cfg.key:32s} {med:9.1f} games/s median of {args.repeat}"
                f" [{min(rates):.1f}..{max(rates):.1f}]{tgt}",
                flush=True,
            )
    if args.json:
        print(json.dumps({"engine": report}))
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
