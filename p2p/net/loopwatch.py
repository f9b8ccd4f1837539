"""A watchdog for the Trio event loop: how long did the loop go without running a task?

A task sleeps ``interval`` seconds again and again and records how late it woke
(``lateness = woke - (went_to_sleep + interval)``).  While some task runs without
awaiting -- a proof made or checked on the loop, a long fold -- nothing else runs,
so the watchdog wakes late by about that long.  ``loop_block_ms_max`` and
``loop_block_ms_p99`` of ``slaiga bench table`` come from these samples.

The samples carry ``time.monotonic()`` stamps (one clock for every process of
the machine), so a reader can keep the ones inside a window, e.g. the game.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import outcome
import trio

DEFAULT_INTERVAL_S = 0.01
MAX_SAMPLES = 200_000
"""About half an hour of samples at the default interval; later ones are not kept."""

T = TypeVar("T")


class LoopWatch:
    """Collects ``(monotonic time woken, lateness in ms)`` samples."""

    def __init__(self, interval_s: float = DEFAULT_INTERVAL_S) -> None:
        self.interval_s = interval_s
        self.samples: list[tuple[float, float]] = []

    async def run(self) -> None:
        """Sample until cancelled."""
        while True:
            went = time.monotonic()
            await trio.sleep(self.interval_s)
            woke = time.monotonic()
            if len(self.samples) < MAX_SAMPLES:
                late_ms = max(0.0, (woke - went - self.interval_s) * 1000)
                self.samples.append((round(woke, 4), round(late_ms, 2)))

    def summary(self, start: float | None = None, end: float | None = None) -> dict[str, Any]:
        """Max and 99th percentile of the lateness (ms) of samples woken in [start, end]."""
        return summarize(self.samples, start, end)


def summarize(
    samples: list[tuple[float, float]] | list[list[float]],
    start: float | None = None,
    end: float | None = None,
) -> dict[str, Any]:
    late = sorted(
        ms for t, ms in samples if (start is None or t >= start) and (end is None or t <= end)
    )
    if not late:
        return {"loop_block_ms_max": None, "loop_block_ms_p99": None, "loop_samples": 0}
    p99 = late[min(len(late) - 1, int(0.99 * len(late)))]
    return {"loop_block_ms_max": late[-1], "loop_block_ms_p99": p99, "loop_samples": len(late)}


async def watched(action: Callable[[], Awaitable[T]], watch: LoopWatch) -> T:
    """Run ``action`` with ``watch`` sampling beside it; the action's own result or
    exception comes back unchanged (not wrapped in an exception group)."""
    async with trio.open_nursery() as nursery:
        nursery.start_soon(watch.run)
        result = await outcome.acapture(action)
        nursery.cancel_scope.cancel()
    return result.unwrap()
