"""When the VM's cores were taken away, at millisecond resolution, to tell a GUI stall the app
caused from one the hypervisor did.

/proc/stat's steal counts in 10 ms ticks, so a 20 ms GUI stall on a VM can show no steal at
all; and the GUI thread's own CPU clock is no witness either (a step of 280 Python calls
measured 13 ms of "CPU" there).
So this watches directly: on each CPU, a SCHED_FIFO process (above every ordinary process)
sleeps 1 ms at a time; a wake-up more than PAUSE_MS late means that CPU ran nothing of this
machine's for that long. Each late wake-up is written to a file as `cpu start end`
(CLOCK_MONOTONIC seconds, the clock of time.monotonic and time.perf_counter on Linux). A
pause is seen only from the watcher's next due wake-up on, and a CPU slowed by many short
pauses between two wake-ups is not seen at all: a stall less the pauses seen in it is what
the app *may* have caused, an upper bound.

    with watching_vm() as pauses: ...; pauses.read()   # bench.desktop --watch-vm

Needs the right to schedule SCHED_FIFO (root, or CAP_SYS_NICE). Costs each CPU about 1,000
wake-ups a second of a few tens of µs each: the app sees its cores ~3 % slower.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

SLEEP_S = 0.001
PAUSE_MS = 0.5  # later than this: the CPU was not this machine's (a wake-up is ~0.06 ms late)
PRIORITY = 60  # SCHED_FIFO: above bench.slow_cores' takers (50), below the kernel's own


@dataclass(frozen=True)
class Pause:
    cpu: int
    start: float  # monotonic seconds
    end: float


class Pauses:
    def __init__(self, path: Path) -> None:
        self.path = path

    def read(self) -> list[Pause]:
        found = []
        for line in self.path.read_text().splitlines():
            parts = line.split()
            if len(parts) == 3:  # a line being written is skipped
                found.append(Pause(int(parts[0]), float(parts[1]), float(parts[2])))
        return found


def paused_within(pauses: list[Pause], start: float, end: float) -> dict[int, float]:
    """Per CPU, the milliseconds of (start, end) it was paused."""
    within: dict[int, float] = {}
    for pause in pauses:
        overlap = min(end, pause.end) - max(start, pause.start)
        if overlap > 0:
            within[pause.cpu] = within.get(pause.cpu, 0.0) + overlap * 1000
    return within


def _watch(cpu: int, out: str) -> None:
    os.sched_setaffinity(0, {cpu})
    os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(PRIORITY))
    late_s = PAUSE_MS / 1000
    with open(out, "a", buffering=1) as log:
        while True:
            before = time.monotonic()
            time.sleep(SLEEP_S)
            woke = time.monotonic()
            if woke - before - SLEEP_S > late_s:
                log.write(f"{cpu} {before + SLEEP_S:.6f} {woke:.6f}\n")


@contextlib.contextmanager
def watching_vm() -> Iterator[Pauses]:
    """A watcher on every CPU for as long as the block runs."""
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(PRIORITY))
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
    except PermissionError:
        sys.exit("watching the VM's pauses needs SCHED_FIFO: run as root (or CAP_SYS_NICE)")
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "pauses"
        path.touch()
        watchers = [
            subprocess.Popen(
                [sys.executable, "-m", "bench.vm_pauses", "--watch", str(cpu), str(path)]
            )
            for cpu in sorted(os.sched_getaffinity(0))
        ]
        try:
            yield Pauses(path)
        finally:
            for watcher in watchers:
                watcher.kill()
                watcher.wait()


def main(seconds: float = 30.0) -> None:
    with watching_vm() as pauses:
        time.sleep(seconds)
        found = pauses.read()
    per_cpu: dict[int, list[float]] = {}
    for pause in found:
        per_cpu.setdefault(pause.cpu, []).append((pause.end - pause.start) * 1000)
    for cpu, lengths in sorted(per_cpu.items()):
        print(f"cpu {cpu}: {len(lengths)} pauses over {PAUSE_MS} ms in {seconds:.0f} s, "
              f"{sum(lengths):.0f} ms in all, longest {max(lengths):.1f} ms")  # fmt: skip
    if not per_cpu:
        print(f"no pause over {PAUSE_MS} ms in {seconds:.0f} s")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--watch"]:
        _watch(int(sys.argv[2]), sys.argv[3])
    else:
        main(float(sys.argv[1]) if len(sys.argv) > 1 else 30.0)
