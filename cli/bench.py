"""``slaiga bench``: run the benchmarks in ``bench/``."""

from __future__ import annotations

import argparse
import importlib

SUITES = {
    "engine": "bench.engine",
    "crypto": "bench.crypto",
    "net": "bench.net",
    "table": "bench.table",
    "fuzz": "bench.fuzz",
    "soak": "bench.soak",
    "flood": "bench.flood",
    "adversary": "bench.adversary",
}
ALL = ("engine", "crypto", "net", "table")
"""What ``bench all`` runs (fuzz, soak, flood and adversary are checks, not benchmarks: run
them by name)."""


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "bench",
        help="run benchmarks (engine, crypto, net, table, or all) or a check (fuzz: the frame fuzzer; soak: hundreds of games looking for leaks; flood: keyless strangers against an opener's memory; adversary: tables where one seat deviates)",
        description="Run a benchmark suite. Figures are medians over repeated runs in one "
        "process; ratios are measured in the same run.",
    )
    p.add_argument("suite", choices=[*SUITES, "all"], help="which benchmark to run")
    p.add_argument("rest", nargs=argparse.REMAINDER, help="arguments for the suite (e.g. --json)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    suites = list(ALL) if args.suite == "all" else [args.suite]
    status = 0
    for name in suites:
        module = importlib.import_module(SUITES[name])
        status = max(status, int(module.main(list(args.rest)) or 0))
    return status
