"""Smoke test of ``bench/crypto.py --quick --json``: it runs and reports every required key.

Times are never asserted (the machine is shared); operation counts are, since
they are deterministic and document the cost model the bounds rest on.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json

import pytest

from bench import crypto as bench_crypto

REQUIRED_KEYS = (
    "tw_prove_ms_52",
    "tw_verify_ms_52",
    "tw_prove_ms_104",
    "tw_verify_ms_104",
    "deal4_s",
    "deal4_lower_bound_s",
    "unit_us",
)


@pytest.fixture(scope="module")
def quick_run() -> dict:
    """One real ``--quick`` measurement, shared: what ``collect`` returned for it, and what
    ``main(["--quick", "--json"])`` printed around it."""
    real_collect = bench_crypto.collect
    seen: dict = {}

    def collect(args, log):  # type: ignore[no-untyped-def]
        seen["args"] = args
        seen["result"] = real_collect(args, log)
        return copy.deepcopy(seen["result"])

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(bench_crypto, "collect", collect)
        with contextlib.redirect_stdout(io.StringIO()) as out:
            seen["code"] = bench_crypto.main(["--quick", "--json"])
    seen["out"] = out.getvalue()
    return seen


def test_quick_json_has_required_keys(quick_run):
    assert quick_run["code"] == 0
    result = json.loads(quick_run["out"])
    for key in REQUIRED_KEYS:
        assert key in result, key
    for key in REQUIRED_KEYS[:-1]:
        assert isinstance(result[key], float) and result[key] > 0
    assert set(bench_crypto.UNIT_OPS) <= set(result["unit_us"])
    assert all(v > 0 for v in result["unit_us"].values())
    assert result["mentalpoker"] is None  # --quick never installs or runs the comparison
    figures = result["figures"]
    n = 52
    assert figures["tw_verify_52"]["ops"]["mul"] == 8 * n + 4
    assert figures["tw_prove_52"]["proof_bytes"] == 3 + 32 * (4 * n + 5)
    for name in ("deal4", "token_make", "hand_card_in_suit_verify", "cc_prove_104"):
        assert figures[name]["lower_bound_ms"] > 0
        assert figures[name]["ratio_to_bound"] > 0
    # A whole four-seat deal: 4 shuffles proven, each verified by 3 seats.
    assert figures["deal4"]["ops"]["mul"] >= 4 * 3 * (8 * n + 4)
    # Batch verification of three consecutive shuffles: at most 18N + 17 multiplications
    # (fewer when the first pile's c1 are all G, as in the public initial masking).
    assert figures["tw_verify_batch3_52"]["ops"]["mul"] <= 18 * n + 17
    assert figures["tw_verify_batch3_52"]["ops"]["base_mul"] == 1
    assert figures["deal4_batched"]["ops"]["mul"] < figures["deal4"]["ops"]["mul"]
    assert isinstance(result["deal4_batched_s"], float) and result["deal4_batched_s"] > 0
    # key escrow (crypto.escrow): the deal's commitments, one receiver's check, token shares
    assert figures["escrow_deal4"]["ops"]["base_mul"] == 2
    assert figures["escrow_open_share4"]["ops"]["mul"] == 2
    assert figures["escrow_token_shares_verify_6"]["ops"]["mul"] == 2 * 6 + 1
    assert figures["escrow_combine_6"]["ops"]["mul"] == 3 * (6 + 1)


def test_text_output_names_targets(quick_run, capsys, monkeypatch):
    """The text report of ``main(["--quick"])``, drawn from the shared real measurement (the
    two reports differ only in how ``main`` prints what ``collect`` returned)."""

    def collect(args, log):  # type: ignore[no-untyped-def]
        assert not args.json and args.quick
        assert vars(args) == {**vars(quick_run["args"]), "json": False}
        return copy.deepcopy(quick_run["result"])

    monkeypatch.setattr(bench_crypto, "collect", collect)
    assert bench_crypto.main(["--quick"]) == 0
    out = capsys.readouterr().out
    assert "tw_prove_52" in out and "deal4" in out
    assert "target: TW verify 52 <= 60 ms" in out
    assert "mentalpoker comparison skipped" in out


def test_markdown_generator_writes_the_table(tmp_path, capsys):
    """``--markdown`` with a reduced grid: every requested row and cell is there, with
    proof sizes and operation counts that follow from the proof's definition."""
    out = tmp_path / "benchmarks.md"
    argv = ["--markdown", str(out), "--cards", "52", "54", "--seat-counts", "2", "3"]
    assert bench_crypto.main([*argv, "--repeat", "1", "--no-compare"]) == 0
    text = out.read_text()
    assert text.startswith("# Benchmarks")
    assert "Machine:" in text and "load average" in text
    for n in (52, 54):
        row = next(
            line for line in text.splitlines() if line.startswith(f"| {n} | ") and "." in line
        )
        cells = [c.strip() for c in row.strip("|").split("|")]
        if len(cells) == 8:  # the shuffle-proof table
            assert int(cells[4]) == 3 + 32 * (4 * n + 5)
    deal_rows = [line for line in text.splitlines() if line.startswith("| 52 | ") and "(" in line]
    assert len(deal_rows) == 1 and deal_rows[0].count("(") == 2  # seats 2 and 3
    assert "Curdleproofs" in text and "github.com/asn-d6/curdleproofs" in text
    assert "zkShuffle" in text and "mentalpoker" in text
    assert "comparison was skipped" in text


def test_grid_counts_operations_per_card():
    grid = bench_crypto.collect_grid((52,), (2,), 1, lambda _msg: None)
    row = grid["rows"][52]
    ops = row["verify_ops"]
    assert ops["mul"] == 8 * 52 + 4  # TW verification, as in test_quick_json_has_required_keys
    assert row["verify_ops_per_card"] == (ops["mul"] + ops.get("base_mul", 0)) / 52
    assert row["proof_bytes"] == 3 + 32 * (4 * 52 + 5)
    deal = grid["deals"][(52, 2)]
    # Two shuffles, each proven once and verified once: at least that many operations.
    assert deal["deal_ops_per_card"] * 52 >= 2 * (8 * 52 + 4)
