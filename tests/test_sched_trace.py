"""bench/sched_trace.py tells a GUI stall's parts apart from the scheduler's events: the
window's own running, waiting for a core (and behind whom), waiting on the app's threads, and
the VM's part (a core taken while running, a wake-up delivered late)."""

from __future__ import annotations

import pytest

from bench.sched_trace import parse

GUI, SERVER, BUSY, IDLE = 100, 101, 200, 0


def switch(cpu: int, at: float, prev: int, state: str, following: int) -> str:
    return (
        f"{prev:>6} [{cpu:03d}] {at:.9f}: sched:sched_switch: prev_comm=x prev_pid={prev} "
        f"prev_prio=120 prev_state={state} ==> next_comm=y next_pid={following} next_prio=120"
    )


def wakeup(cpu: int, at: float, waker: int, woken: int) -> str:
    return (
        f"{waker:>6} [{cpu:03d}] {at:.9f}: sched:sched_wakeup: comm=x pid={woken} prio=120 "
        f"target_cpu={cpu:03d}"
    )


TRACE = [
    switch(1, 0.990, IDLE, "R", BUSY),
    switch(0, 1.000, IDLE, "R", GUI),  # the window runs on cpu 0
    switch(0, 1.004, GUI, "R", SERVER),  # preempted by the server: 6 ms in the queue
    switch(0, 1.010, SERVER, "S", GUI),
    switch(0, 1.012, GUI, "S", IDLE),  # asleep 13 ms, woken by a timer: 8 ms late
    wakeup(0, 1.025, IDLE, GUI),
    switch(1, 1.025, BUSY, "R", GUI),  # runs on cpu 1 at once
    switch(1, 1.030, GUI, "S", BUSY),  # asleep 10 ms, until the server wakes it (the GIL)
    wakeup(0, 1.040, SERVER, GUI),
    switch(1, 1.041, BUSY, "R", GUI),  # 1 ms behind the competing process
    switch(1, 1.043, GUI, "S", BUSY),
]


def test_a_stall_is_split_into_its_parts() -> None:
    trace = parse(iter(TRACE), GUI, {SERVER}, {SERVER: "server", BUSY: "busy"})
    found = trace.explain(1.000, 1.043)
    assert found.running == pytest.approx(4 + 2 + 5 + 2)
    assert found.runnable == pytest.approx(6 + 1)
    assert found.runnable_behind == pytest.approx({"server": 6.0, "busy": 1.0})
    assert found.asleep == pytest.approx(13 + 10)
    assert found.waited_on_app == pytest.approx(10)
    assert found.woken_late == pytest.approx(13 - 5)
    # The thread's CPU clock saw 10 of its 13 ms on a core: 3 ms of it were the VM's.
    assert found.vm_ms(10.0) == pytest.approx(3 + 8)


def test_a_part_of_the_trace_is_cut_at_the_gap() -> None:
    trace = parse(iter(TRACE), GUI, {SERVER}, {SERVER: "server", BUSY: "busy"})
    found = trace.explain(1.007, 1.020)  # the middle of the wait, to the middle of the sleep
    assert found.runnable == pytest.approx(3)
    assert found.running == pytest.approx(2)
    assert found.asleep == pytest.approx(8)
    assert found.woken_late == pytest.approx(3)  # 8 ms of a late sleep, less a tick
