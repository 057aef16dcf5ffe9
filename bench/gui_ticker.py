"""The GUI thread's responsiveness, and what each stall was made of.

A 5 ms QTimer on the GUI thread: the gap between two ticks is a frame the window could not
have drawn. At each tick it also reads the GUI thread's own CPU time and the hypervisor's
steal on the VM's cores (/proc/stat, in the kernel's 10 ms ticks; reading both costs about
15 µs a tick), so that each stall over the goal can be set beside the steal counted in it.
Neither is proof: a stall with no steal counted may still be the VM's (10 ms ticks), and the
thread's CPU clock ran on through some of them; bench/vm_pauses.py watches the VM's pauses
at 1 ms.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

from PySide6.QtCore import QTimer

from bench.vm_pauses import PAUSE_MS, Pause, paused_within

TICK_MS = 5
STALL_GOAL_MS = 16.0


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
    end: float  # monotonic seconds, the tick that ended it
    ms: float  # between two ticks
    ran_ms: float  # the GUI thread's CPU time in it
    stolen_ms: float  # steal counted on the cores in it (10 ms resolution)

    @property
    def stall(self) -> float:
        return self.ms - TICK_MS


class Ticker:
    """Measures the GUI thread's responsiveness: gaps between ticks of a 5 ms timer."""

    def __init__(self) -> None:
        self.details: list[Gap] = []
        self._steal = StealCounter()
        self._last = time.monotonic()
        self._ran = time.thread_time()
        self._stolen = self._steal.read()
        self.timer = QTimer()
        self.timer.setInterval(TICK_MS)
        self.timer.timeout.connect(self._tick)

    def _tick(self) -> None:
        now, ran, stolen = time.monotonic(), time.thread_time(), self._steal.read()
        gap = (now - self._last) * 1000
        self.details.append(Gap(now, gap, (ran - self._ran) * 1000, stolen - self._stolen))
        self._last, self._ran, self._stolen = now, ran, stolen

    def start(self) -> None:
        self.details.clear()
        self._last, self._ran, self._stolen = (
            time.monotonic(),
            time.thread_time(),
            self._steal.read(),
        )
        self.timer.start()

    def stop(self) -> None:
        self.timer.stop()
        self._steal.close()

    @property
    def gaps(self) -> list[float]:
        """Every gap between two ticks (ms)."""
        return [gap.ms for gap in self.details]

    @property
    def stolen_ms(self) -> float:
        """The steal counted on the VM's cores while it ticked (a reply's, in the bench)."""
        return sum(gap.stolen_ms for gap in self.details)

    def longest_without_steal(self) -> Gap | None:
        """The longest gap in which no steal was counted (which may still hide up to 10 ms
        of it a core)."""
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

    def less_pauses(self, pauses: list[Pause]) -> list[tuple[float, Gap, dict[int, float]]]:
        """Each stall over half the goal, less the time the VM's cores were paused in it
        (watched at 1 ms, bench/vm_pauses.py): what is left is at most the app's, or the
        OS's. Longest first."""
        found = []
        for gap in self.details:
            if gap.stall > STALL_GOAL_MS / 2:
                paused = paused_within(pauses, gap.end - gap.ms / 1000, gap.end)
                # A gap paused for longer than its stall leaves none (never a negative one).
                left = max(0.0, gap.stall - max(paused.values(), default=0.0))
                found.append((left, gap, paused))
        return sorted(found, key=lambda item: -item[0])

    def p99_less_pauses(self, pauses: list[Pause]) -> float:
        """The p99 gap with the VM's pauses in each gap taken out (bench/vm_pauses.py)."""
        if not self.details:
            return 0.0
        first, last = self.details[0], self.details[-1]
        start = first.end - first.ms / 1000
        during = [pause for pause in pauses if pause.end > start and pause.start < last.end]
        gaps = []
        for gap in self.details:
            paused = 0.0
            if gap.ms > TICK_MS + PAUSE_MS:  # a shorter one has no pause worth taking out
                within = paused_within(during, gap.end - gap.ms / 1000, gap.end)
                paused = max(within.values(), default=0.0)
            gaps.append(gap.ms - paused)
        return p99(gaps)

    def beside_pauses(self, pauses: list[Pause], p99_left_ms: float) -> str:
        """The stalls less the pauses in them, and `p99_left_ms` (p99_less_pauses)."""
        p99_left = f"p99 frame gap less them {p99_left_ms:.1f} ms"
        found = self.less_pauses(pauses)
        if not found:
            return f"no stall over {STALL_GOAL_MS / 2:.0f} ms; {p99_left}"
        over = sum(left > STALL_GOAL_MS for left, _, _ in found)
        left, gap, paused = found[0]
        cores = ", ".join(f"cpu {cpu} {ms:.1f} ms" for cpu, ms in sorted(paused.items()))
        return (
            f"stalls over {STALL_GOAL_MS:.0f} ms less the VM's pauses in them {over}; longest "
            f"{left:.1f} ms (a {gap.stall:.1f} ms stall; cores paused in it: {cores or 'none'}); "
            f"{p99_left}"
        )


def p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
