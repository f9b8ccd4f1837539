"""The event-loop watchdog of ``slaiga bench table`` (p2p/net/loopwatch.py)."""

from __future__ import annotations

import time

import pytest
import trio

from p2p.net.loopwatch import LoopWatch, summarize, watched


def test_a_blocked_loop_shows_as_a_late_wake():
    watch = LoopWatch(interval_s=0.005)

    async def action() -> str:
        await trio.sleep(0.05)
        time.sleep(0.2)  # blocks the loop: the watchdog cannot wake on time
        await trio.sleep(0.02)
        return "done"

    assert trio.run(watched, action, watch) == "done"
    summary = watch.summary()
    assert summary["loop_samples"] >= 2
    # it went to sleep for 5 ms before the 200 ms block, so it woke at least 190 ms late
    assert summary["loop_block_ms_max"] >= 190
    assert summary["loop_block_ms_p99"] <= summary["loop_block_ms_max"]


def test_the_action_exception_comes_back_unwrapped():
    async def action() -> None:
        raise KeyError("x")

    with pytest.raises(KeyError):
        trio.run(watched, action, LoopWatch())


def test_summary_keeps_only_the_window():
    samples = [(1.0, 500.0), (2.0, 1.0), (3.0, 2.0), (4.0, 900.0)]
    s = summarize(samples, start=1.5, end=3.5)
    assert s == {"loop_block_ms_max": 2.0, "loop_block_ms_p99": 2.0, "loop_samples": 2}
    assert summarize([], None, None)["loop_block_ms_max"] is None
