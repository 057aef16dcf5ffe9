"""32 streams at once against the one local model: no deadlock, arrival order, clean queue.

The model's slots are granted FIFO: the first streams hold every slot while the others line
up one by one (so the arrival order is known), a few hang up while they wait, the holders
step aside, and the rest are read concurrently. bench/concurrency.py repeats this and watches the
server's memory.
"""

from __future__ import annotations

import threading

import pytest

from tests.support.parley import Parley
from tests.support.queueing import line_up, read_concurrently

STREAMS = 32
HANG_UP = {9, 17, 25, 31}


@pytest.mark.slow
@pytest.mark.timeout(300)  # ~20 s here alone, ~28 s with two CPU hogs: the 60 s default is tight
def test_32_streams_at_once_are_served_in_arrival_order(local_parley: Parley) -> None:
    threads_before = threading.active_count()
    generations = local_parley.services.models.resolve(None).backend.generations  # type: ignore[attr-defined]
    ran_before = len(generations)
    slots = local_parley.status()["models"][0]["slots"]
    streams = line_up(
        local_parley.port,
        local_parley.token,
        STREAMS,
        local_parley.queue_length,
        HANG_UP,
        slots=slots,
    )
    served = [n for n in range(slots, STREAMS) if n not in HANG_UP]
    order = read_concurrently({n: streams[n] for n in served})

    assert sorted(order) == served
    for number in served:
        assert streams[number].final["parley"]["status"] == "completed", number
    status = local_parley.wait_idle(timeout=30)
    assert status["models"][0]["queue_length"] == 0 and not status["models"][0]["in_use"]
    # First come, first served, as the server granted the slots (the order in which the
    # readers saw first texts is only approximate: k replies run at once, and 27 reader
    # threads share one GIL). The hung-up ones never ran.
    ran = list(generations)[ran_before:]
    assert [number_asked(g.asked) for g in ran] == list(range(slots)) + served
    local_parley.wait_for(lambda: threading.active_count() <= threads_before, timeout=10)


def number_asked(asked: str) -> int:
    return int(asked.removeprefix("Say the number ").rstrip("."))
