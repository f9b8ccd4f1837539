"""Smoke test of bench/net.py: the JSON has the promised keys (no timing asserts)."""

from __future__ import annotations

import json

from bench import net


def test_bench_net_json_keys(capsys) -> None:
    assert net.main(["--json", "--quick", "--peers", "2,3"]) == 0
    out = json.loads(capsys.readouterr().out)
    for key in ("round_ms_median", "msgs_per_s", "acceptances_per_s", "cpu_us_per_acceptance"):
        assert set(out[key]) == {"2", "3"}
        assert all(v > 0 for v in out[key].values())
    assert all(len(runs) == 1 for runs in out["acceptances_per_s_runs"].values())  # --quick
