"""What each GUI stall was made of, from the kernel's own scheduler trace (issue 16).

`perf record` of the scheduler's switch and wake-up events on every CPU while the bench runs
(`bench.desktop --sched-trace`; needs perf, from Debian's linux-perf, and root). For a gap
between two ticks of the window's thread it then tells where that thread was meanwhile:

- **running** as far as the guest kernel knows. Less the thread's own CPU time (the ticker
  reads it; this kernel leaves the hypervisor's steal out of it), that is time the VM's
  core was taken away while the thread ran on it: the VM's.
- **runnable**, waiting for a core, and which threads ran on that core meanwhile: the app's
  own (its server's threads), the competing process, others.
- **asleep**: waiting for input or its next timer (at most a tick: idle, no stall), or
  longer. A longer sleep ended by one of the app's threads was a wait on them (the GIL,
  most often): the app's. One ended by anything else (the timer's interrupt, late) is a
  wake-up the VM delivered late: the VM's.

So a stall less the VM's part is the app's and the scheduler's: what a machine with cores of
its own would show. Unlike bench/vm_pauses.py (a watcher that sees a pause only from its own
next wake-up on), this reads what happened to the window's thread itself. A timer's late
interrupt that lands while one of the app's threads runs reads as a wait on the app: the
app's part is an upper bound.

**The recording weighs on what it watches.** On this VM, with it, max-rate replies beside a
competing process stalled over 16 ms in 9 of 9 replies against 2 of 9 without, and the
window's thread ran 30-50 % more CPU time per step (each context switch writes an event):
use it to tell what the stalls of a run were made of, not to count them.
"""

from __future__ import annotations

import bisect
import contextlib
import itertools
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from bench.gui_ticker import STALL_GOAL_MS, TICK_MS

EVENTS = "sched:sched_switch,sched:sched_wakeup"
LINE = re.compile(r"\s*(\d+) \[(\d+)\] ([\d.]+): sched:(\w+): (.*)")
SWITCH = re.compile(r"prev_pid=(\d+) .*prev_state=(\S+) ==> next_comm=.* next_pid=(\d+)")
WOKEN = re.compile(r" pid=(\d+) ")
IDLE_SLEEP_MS = TICK_MS + 1.0  # a longer sleep is a wait, or a wake-up delivered late


@dataclass
class Breakdown:
    """Where the window's thread was during one gap (ms)."""

    running: float = 0.0  # on a core, as the guest kernel saw it
    runnable: float = 0.0
    runnable_behind: dict[str, float] = field(default_factory=dict)  # who had the core
    asleep: float = 0.0
    waited_on_app: float = 0.0  # in sleeps over IDLE_SLEEP_MS ended by the app's threads
    woken_late: float = 0.0  # beyond a tick, in sleeps over IDLE_SLEEP_MS ended otherwise

    def vm_ms(self, cpu_ms: float) -> float:
        """The VM's part: the core taken away while running, and late wake-ups."""
        return max(0.0, self.running - cpu_ms) + self.woken_late


@dataclass(frozen=True)
class Segment:
    start: float
    end: float
    kind: str  # running | runnable | asleep
    cpu: int = -1  # running, runnable: the core (a runnable thread: the one it ran on next)
    waker: int = -1  # asleep: the thread that ended the sleep


@dataclass
class Trace:
    app: set[int]  # the app's threads other than the window's
    names: dict[int, str]  # tid -> a label for runnable_behind
    # per CPU: (start, end, tid) of who ran, by start
    ran: dict[int, list[tuple[float, float, int]]] = field(default_factory=dict)
    segments: list[Segment] = field(default_factory=list)  # the window thread's, in order

    def explain(self, start: float, end: float) -> Breakdown:
        found = Breakdown()
        behind: dict[str, float] = defaultdict(float)
        index = max(0, bisect.bisect_left(self.segments, start, key=lambda s: s.start) - 1)
        for segment in itertools.islice(self.segments, index, None):
            if segment.start >= end:
                break
            spent = (min(segment.end, end) - max(segment.start, start)) * 1000
            if spent <= 0:
                continue
            if segment.kind == "running":
                found.running += spent
            elif segment.kind == "runnable":
                found.runnable += spent
                for label, ms in self._who_ran(segment.cpu, segment, start, end).items():
                    behind[label] += ms
            else:
                found.asleep += spent
                if (segment.end - segment.start) * 1000 > IDLE_SLEEP_MS:
                    if segment.waker in self.app:
                        found.waited_on_app += spent
                    else:
                        found.woken_late += max(0.0, spent - TICK_MS)
        found.runnable_behind = dict(behind)
        return found

    def _who_ran(self, cpu: int, segment: Segment, start: float, end: float) -> dict[str, float]:
        begin, until = max(segment.start, start), min(segment.end, end)
        out: dict[str, float] = defaultdict(float)
        runs = self.ran.get(cpu, [])
        index = max(0, bisect.bisect_left(runs, (begin,)) - 1)
        while index < len(runs) and runs[index][0] < until:
            began, ended, tid = runs[index]
            if ended > begin:
                label = self.names.get(tid, "app" if tid in self.app else "other")
                out[label] += (min(ended, until) - max(began, begin)) * 1000
            index += 1
        return out


def parse(lines: Iterator[str], gui: int, app: set[int], names: dict[int, str]) -> Trace:
    """The trace of `perf script` (fields tid, cpu, time, event, trace)."""
    trace = Trace(app, names)
    current: dict[int, tuple[float, int]] = {}
    states: list[tuple[float, str, int]] = []  # (time, running|runnable|asleep|woken, cpu|waker)
    for line in lines:
        match = LINE.match(line)
        if match is None:
            continue
        cpu, moment, event, rest = int(match[2]), float(match[3]), match[4], match[5]
        if event == "sched_switch":
            switch = SWITCH.search(rest)
            if switch is None:
                continue
            prev, prev_state, following = int(switch[1]), switch[2], int(switch[3])
            if cpu in current:
                began, tid = current[cpu]
                trace.ran.setdefault(cpu, []).append((began, moment, tid))
            current[cpu] = (moment, following)
            if prev == gui:
                preempted = prev_state.startswith("R")
                states.append((moment, "runnable" if preempted else "asleep", cpu))
            if following == gui:
                states.append((moment, "running", cpu))
        elif event == "sched_wakeup":
            woken = WOKEN.search(rest + " ")
            if woken is not None and int(woken[1]) == gui:
                states.append((moment, "woken", int(match[1])))
    trace.segments = _segments(states)
    return trace


def _segments(states: list[tuple[float, str, int]]) -> list[Segment]:
    segments: list[Segment] = []
    for (moment, state, who), (following, next_state, next_who) in itertools.pairwise(states):
        if state == "woken":
            state = "runnable"
        if state == "asleep":
            waker = next_who if next_state == "woken" else -1
            segments.append(Segment(moment, following, "asleep", waker=waker))
        elif state == "runnable":
            segments.append(Segment(moment, following, "runnable", cpu=-1))
        else:
            segments.append(Segment(moment, following, "running", cpu=who))
    # A runnable thread waited in the queue of the core it ran on next.
    ran_on = -1
    for index in range(len(segments) - 1, -1, -1):
        segment = segments[index]
        if segment.kind == "running":
            ran_on = segment.cpu
        elif segment.kind == "runnable":
            segments[index] = Segment(segment.start, segment.end, "runnable", cpu=ran_on)
    return segments


@contextlib.contextmanager
def tracing() -> Iterator[Path]:
    """`perf record` of the scheduler on every CPU for as long as the block runs; yields
    the path of its data (read it with `read_trace` after the block)."""
    if shutil.which("perf") is None:
        raise SystemExit("--sched-trace needs perf (Debian: apt-get install linux-perf)")
    folder = Path(tempfile.mkdtemp(prefix="parley-sched-"))
    data = folder / "perf.data"
    record = subprocess.Popen(
        ["perf", "record", "-q", "-a", "-k", "CLOCK_MONOTONIC", "-e", EVENTS, "-o", str(data)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(1.0)  # perf is recording once its buffers are mapped
    if record.poll() is not None:
        raise SystemExit(f"perf record failed: {record.stderr.read() if record.stderr else ''}")
    try:
        yield data
    finally:
        record.send_signal(signal.SIGINT)
        record.wait(60)


def read_trace(data: Path, gui: int, app: set[int], names: dict[int, str]) -> Trace:
    script = subprocess.run(
        ["perf", "script", "-i", str(data), "-F", "tid,cpu,time,event,trace", "--ns"],
        capture_output=True,
        text=True,
        check=True,
    )
    shutil.rmtree(data.parent, ignore_errors=True)
    return parse(iter(script.stdout.splitlines()), gui, app, names)


class StallTracer:
    """`bench.desktop --sched-trace`: records while a set of replies streams, then says for
    each reply how long its longest GUI stall was less the VM's part, and what the longest
    of those was made of."""

    def __init__(self) -> None:
        self.labels: dict[int, str] = {}  # pid or tid -> a label (the competing process, ...)
        self._replies: list[list[tuple[float, float, float]]] = []  # (end, ms, cpu ms) a gap
        self._data: Path | None = None

    @contextlib.contextmanager
    def recording(self) -> Iterator[None]:
        self._replies.clear()
        with tracing() as data:
            yield
        self._data = data

    def add(self, gaps: list[tuple[float, float, float]]) -> None:
        self._replies.append(gaps)

    def report(self, gui: int, prefix: str, quiet_from: int = 2) -> None:
        assert self._data is not None, "report() after recording()"
        app = {int(tid) for tid in os.listdir("/proc/self/task")} - {gui}
        names = {**{tid: "the app's server" for tid in app}, **self.labels}
        trace = read_trace(self._data, gui, app, names)
        left: list[float] = []
        worst: tuple[float, float, float, Breakdown, str] | None = None
        for gaps in self._replies:
            began = gaps[0][0] - gaps[0][1] / 1000 if gaps else 0.0
            longest = 0.0
            for end, ms, cpu in gaps:
                if ms - TICK_MS <= STALL_GOAL_MS / 2:
                    continue
                found = trace.explain(end - ms / 1000, end)
                own = ms - TICK_MS - found.vm_ms(cpu)
                longest = max(longest, own)
                if worst is None or own > worst[0]:
                    at = f"{end - ms / 1000 - began:.2f} s into a {gaps[-1][0] - began:.2f} s reply"
                    worst = (own, ms - TICK_MS, cpu, found, at)
            left.append(longest)
        rest = left[quiet_from:]
        print(f"{prefix}: longest GUI stall less the VM's part (scheduler trace) per reply (ms): "
              f"{' '.join(f'{ms:.1f}' for ms in left)}; over 16 ms: "
              f"{sum(ms > STALL_GOAL_MS for ms in rest)}/{len(rest)} of the max-rate replies "
              f"after the first")  # fmt: skip
        if worst is not None:
            own, stall, cpu, found, at = worst
            behind = ", ".join(
                f"{label} {ms:.1f}" for label, ms in sorted(found.runnable_behind.items(),
                                                          key=lambda item: -item[1]) if ms >= 0.1
            )  # fmt: skip
            print(f"{prefix}: the longest, {own:.1f} ms of a {stall:.1f} ms stall {at}: the window "
                  f"ran {cpu:.1f} ms, waited for a core {found.runnable:.1f} ms ({behind or '-'}), "
                  f"waited on its other threads {found.waited_on_app:.1f} ms; the VM's part "
                  f"{found.vm_ms(cpu):.1f} ms")  # fmt: skip
