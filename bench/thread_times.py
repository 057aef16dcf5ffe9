"""How long a thread of this process ran, and how long it waited for a core, from the kernel's
own account (/proc/self/task/TID/schedstat, in nanoseconds; Linux with schedstats).

    before = thread_times(); ...; spent = since(before)   # {"window": (run_ms, wait_ms), ...}

On two cores shared with other busy processes, a thread that waits for a core two or three
times as long as it runs is a thread whose frames are late for want of a core, whatever
its own work costs (issue 16, fifteenth pass).
"""

from __future__ import annotations

import threading

# The threads watched, by the name this report gives them: the window's (the main thread)
# and the embedded server's (server/serve.py names it).
WATCHED = {"window": "MainThread", "server": "parley-server"}


def _schedstat(native_id: int) -> tuple[int, int] | None:
    try:
        with open(f"/proc/self/task/{native_id}/schedstat") as stat:
            run_ns, wait_ns, _slices = stat.read().split()
    except (OSError, ValueError):
        return None  # not Linux, no schedstats, or the thread has ended
    return int(run_ns), int(wait_ns)


def thread_times() -> dict[str, tuple[int, int]]:
    """(run, wait) in ns so far, per watched thread that is alive and readable."""
    by_name = {thread.name: thread.native_id for thread in threading.enumerate()}
    times = {}
    for label, name in WATCHED.items():
        native_id = by_name.get(name)
        read = _schedstat(native_id) if native_id is not None else None
        if read is not None:
            times[label] = read
    return times


def since(before: dict[str, tuple[int, int]]) -> dict[str, tuple[float, float]]:
    """(run_ms, wait_ms) since `before`, per thread read both times."""
    now = thread_times()
    return {
        label: ((now[label][0] - run) / 1e6, (now[label][1] - wait) / 1e6)
        for label, (run, wait) in before.items()
        if label in now
    }
