"""A machine with slower cores, emulated: on each CPU a real-time process takes every other
millisecond, so everything else on that CPU runs at about half speed (measured here: a busy
loop does 42 % of the iterations it does alone), each core on its own, as on slower hardware.

    python -m bench.slow_cores [SECONDS]      # the cores slowed for that long (default 60)

or `with slow_cores(): ...` in a bench (bench.desktop --slow-cores). Needs the right to
schedule SCHED_FIFO (root, or CAP_SYS_NICE).

Why not the simpler ways (issue 16, docs/benchmarks.md): `taskset` onto one core makes every
process share one core, which no 2-core machine does; a cgroup with half the CPU time
shares one budget between the cores, so a busy process on one core spends the other
core's time too and stalls the app for whole periods.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator

PERIOD_S = 0.002  # each CPU: 1 ms taken, 1 ms left
PRIORITY = 50  # SCHED_FIFO: above every ordinary process, below the kernel's own threads


def _take_half(cpu: int) -> None:
    os.sched_setaffinity(0, {cpu})
    os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(PRIORITY))
    following = time.monotonic()
    while True:
        busy_until = following + PERIOD_S / 2
        while time.monotonic() < busy_until:
            pass
        following += PERIOD_S
        pause = following - time.monotonic()
        if pause > 0:
            time.sleep(pause)
        else:
            following = time.monotonic()


@contextlib.contextmanager
def slow_cores() -> Iterator[None]:
    """Every CPU at about half speed for as long as the block runs; prints how slow."""
    alone = busy_loop_rate()
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(PRIORITY))
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
    except PermissionError:
        sys.exit("slowing the cores needs SCHED_FIFO: run as root (or with CAP_SYS_NICE)")
    takers = [
        subprocess.Popen([sys.executable, "-m", "bench.slow_cores", "--take", str(cpu)])
        for cpu in sorted(os.sched_getaffinity(0))
    ]
    try:
        time.sleep(0.5)  # each taker started and running
        print(f"cores slowed: a busy loop runs at {busy_loop_rate() / alone:.0%} of its speed "
              "alone")  # fmt: skip
        yield
    finally:
        for taker in takers:
            taker.kill()
            taker.wait()


def busy_loop_rate(seconds: float = 1.0) -> float:
    """Iterations per second of a busy loop: what the slowing costs a process."""
    count, end = 0, time.perf_counter() + seconds
    while time.perf_counter() < end:
        count += 1
    return count / seconds


def main(seconds: float = 60.0) -> None:
    with slow_cores():
        print(f"slowed for {seconds:.0f} s")
        time.sleep(seconds)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--take"]:
        _take_half(int(sys.argv[2]))
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 60.0)
