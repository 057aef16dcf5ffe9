"""Keeping the relay's busy stretches short, so the window's thread is never kept waiting.

The embedded server shares the window's process, and so its GIL. An upstream that
sends faster than Parley can relay (the scripted one at its max rate; a fast batch server)
keeps the server's thread running Python without a break. On a loaded machine (two cores, a
busy process beside the app) the OS then often takes the CPU from that thread *while it holds
the GIL*, and the window's thread waits until the OS gives it back: measured, gaps of 20-35 ms
between the window's frames, most of them with the window doing nothing.

So the relay works in bursts: once it has handled pieces that were already waiting for
`BURST_S` without a break, it sleeps a pause (the GIL and the CPU are free; the upstream is
held back by TCP meanwhile). Pieces that arrive after a wait on the network start a new burst,
so an upstream at any real model's rate is never paused: only input that piles up is spread
out. Measured (bench/desktop.py, a competing process, 20,000-token replies at the scripted
upstream's max rate): frame gaps over 21 ms fell from 16 in ten replies to 1-4 (bursts of
1 ms); bursts of 0.5 ms with the same pauses took the p99 frame gap from 8.0-8.8 ms to
7.0-7.3, with the relay still carrying ~5,000 tokens a second (docs/benchmarks.md).

Only the embedded server works so (Limits.relay_pause): parley-server shares its process
with nothing, and relays as fast as the upstream sends.
"""

from __future__ import annotations

import asyncio
import time

# Handling input that was already there for this long makes a burst (~20 tokens' work);
# then the relay sleeps for its pause (the embedded server's: EMBEDDED_RELAY_PAUSE_S).
BURST_S = 0.0005
# A piece that took longer than this to arrive was waited for: a new burst starts.
WAITED_S = 0.0005


class DutyCycle:
    """Call `asking()` before awaiting the next piece and `await got()` once it is there."""

    def __init__(self, pause_s: float, burst_s: float = BURST_S) -> None:
        self.pause_s = pause_s
        self.burst_s = burst_s
        self.pauses = 0
        self._asked = self._began = time.perf_counter()

    def asking(self) -> None:
        self._asked = time.perf_counter()

    async def got(self) -> None:
        now = time.perf_counter()
        if now - self._asked > WAITED_S:
            self._began = now
        elif now - self._began > self.burst_s:
            self.pauses += 1
            await asyncio.sleep(self.pause_s)
            self._began = time.perf_counter()
