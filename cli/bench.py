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
        help="run a benchmark (engine, crypto, net, table, or all) or a check (fuzz, soak, "
        "flood, adversary): `slaiga bench --help` says what each does",
        description="Run a benchmark suite. Figures are medians over repeated runs in one "
        "process; ratios are measured in the same run.",
        epilog="suites: engine (games per second), crypto (proof timings and operation "
        "counts), net (peers' round trips and throughput on loopback), table (whole games over peer processes); all "
        "runs those four. Checks, run by name: fuzz (hostile frames at the decoder and a "
        "live node), soak (games back to back, watching for leaks), flood (keyless strangers "
        "against an opener's memory), adversary (tables where one seat deviates). `slaiga "
        "bench SUITE --help` lists a suite's own options.",
    )
    p.add_argument(
        "suite", choices=[*SUITES, "all"], metavar="SUITE", help="which benchmark to run"
    )
    p.add_argument(
        "rest",
        nargs=argparse.REMAINDER,
        metavar="...",
        help="the suite's own options (e.g. --json; `slaiga bench SUITE --help` lists them)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    suites = list(ALL) if args.suite == "all" else [args.suite]
    status = 0
    for name in suites:
        module = importlib.import_module(SUITES[name])
        status = max(status, int(module.main(list(args.rest)) or 0))
    return status
