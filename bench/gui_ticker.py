"""The GUI thread's responsiveness, and what each stall was made of.

A 5 ms QTimer on the GUI thread: the gap between two ticks is a frame the window could not
have drawn. At each tick it also reads the GUI thread's own CPU time and the hypervisor's
steal on the VM's cores (/proc/stat, in the kernel's 10 ms ticks), so a stall can be told
apart: the app's own work (the thread ran) or the VM's (its cores were taken away, which no
app can avoid). Reading both costs about 15 µs a tick.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

from PySide6.QtCore import QTimer

TICK_MS = 5
STALL_GOAL_MS = 16.0


def steal_ms() -> float:
    """CPU time the hypervisor took from this VM's cores so far (/proc/stat's steal, summed
    over the cores): a GUI stall that overlaps it is not the app's."""
    try:
        with open("/proc/stat") as stat:
            fields = stat.readline().split()
        return int(fields[8]) * 1000 / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


class StealCounter:
    """/proc/stat's steal, read through one open file (a pread of its first line)."""

    def __init__(self) -> None:
        self._tick_ms = 1000 / os.sysconf("SC_CLK_TCK")
        try:
            self._fd: int | None = os.open("/proc/stat", os.O_RDONLY)
        except OSError:
            self._fd = None  # not Linux: no steal is ever counted

    def read(self) -> float:
        if self._fd is None:
            return 0.0
        try:
            fields = os.pread(self._fd, 200, 0).split(b"\n", 1)[0].split()
            return int(fields[8]) * self._tick_ms
        except (OSError, IndexError, ValueError):
            return 0.0

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


@dataclass(frozen=True)
class Gap:
    ms: float  # between two ticks
    ran_ms: float  # the GUI thread's CPU time in it
    stolen_ms: float  # steal counted on the cores in it (10 ms resolution)

    @property
    def stall(self) -> float:
        return self.ms - TICK_MS


class Ticker:
    """Measures the GUI thread's responsiveness: gaps between ticks of a 5 ms timer."""

    def __init__(self) -> None:
        self.gaps: list[float] = []
        self.details: list[Gap] = []
        self._steal = StealCounter()
        self._last = time.perf_counter()
        self._ran = time.thread_time()
        self._stolen = self._steal.read()
        self.timer = QTimer()
        self.timer.setInterval(TICK_MS)
        self.timer.timeout.connect(self._tick)

    def _tick(self) -> None:
        now, ran, stolen = time.perf_counter(), time.thread_time(), self._steal.read()
        gap = (now - self._last) * 1000
        self.gaps.append(gap)
        self.details.append(Gap(gap, (ran - self._ran) * 1000, stolen - self._stolen))
        self._last, self._ran, self._stolen = now, ran, stolen

    def start(self) -> None:
        self.gaps.clear()
        self.details.clear()
        self._last, self._ran, self._stolen = (
            time.perf_counter(),
            time.thread_time(),
            self._steal.read(),
        )
        self.timer.start()

    def stop(self) -> None:
        self.timer.stop()
        self._steal.close()

    def longest_without_steal(self) -> Gap | None:
        """The longest gap in which no steal was counted: a stall the app can answer for."""
        clean = [gap for gap in self.details if gap.stolen_ms == 0]
        return max(clean, key=lambda gap: gap.ms, default=None)

    def attribution(self) -> str:
        """The stalls over the goal, and how many of them the VM's steal overlapped."""
        over = [gap for gap in self.details if gap.stall > STALL_GOAL_MS]
        stolen = sum(gap.stolen_ms > 0 for gap in over)
        clean = self.longest_without_steal()
        longest = (
            f"{clean.stall:.1f} ms (a {clean.ms:.1f} ms gap, the GUI thread ran "
            f"{clean.ran_ms:.1f} ms of it)"
            if clean is not None
            else "none"
        )
        return (
            f"stalls over {STALL_GOAL_MS:.0f} ms {len(over)}, {stolen} of them with "
            f"hypervisor steal; longest stall with no steal in it {longest}"
        )
