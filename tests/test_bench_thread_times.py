"""bench/thread_times.py reads the kernel's run and wait times of the threads it watches."""

from __future__ import annotations

import os
import threading
import time

import pytest

from bench.thread_times import since, thread_times

pytestmark = pytest.mark.skipif(
    not os.path.exists(f"/proc/self/task/{threading.get_native_id()}/schedstat"),
    reason="the kernel keeps no schedstat here",
)


def _busy(seconds: float) -> None:
    until = time.thread_time() + seconds
    while time.thread_time() < until:
        pass


def test_an_ended_thread_is_left_out_and_the_window_s_run_is_read() -> None:
    started = threading.Event()
    go_on = threading.Event()

    def server() -> None:
        started.set()
        go_on.wait()
        _busy(0.15)

    thread = threading.Thread(target=server, name="parley-server")
    thread.start()
    started.wait()
    before = thread_times()
    assert set(before) == {"window", "server"}
    go_on.set()
    _busy(0.05)  # this thread, the window's in the app
    thread.join()  # until it ends, the server thread is still readable
    spent = since(before)
    # Ended threads leave /proc: what is read is the window's, and it ran its own 50 ms.
    assert "server" not in spent
    run_ms, wait_ms = spent["window"]
    assert 45 <= run_ms < 1000
    assert wait_ms >= 0


def test_a_busy_server_thread_is_counted_while_it_runs() -> None:
    done = threading.Event()
    before: dict[str, tuple[int, int]] = {}
    spent: dict[str, tuple[float, float]] = {}

    def server() -> None:
        before.update(thread_times())
        _busy(0.1)
        spent.update(since(before))
        done.set()

    thread = threading.Thread(target=server, name="parley-server")
    thread.start()
    done.wait(10)
    thread.join()
    run_ms, _wait_ms = spent["server"]
    assert 95 <= run_ms < 1000
    window_run_ms, _ = spent["window"]
    assert window_run_ms < run_ms  # the main thread only waited meanwhile
