"""32 streams at once against the one local model: no deadlock, arrival order, clean queue.

The model is leased FIFO: the first stream holds the model while the others line up one by
one (so the arrival order is known), a few hang up while they wait, the first steps aside,
and the rest are read concurrently. bench/concurrency.py repeats this and watches the
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
def test_32_streams_at_once_are_served_in_arrival_order(local_parley: Parley) -> None:
    threads_before = threading.active_count()
    generations = local_parley.services.models.resolve(None).backend.generations  # type: ignore[attr-defined]
    ran_before = len(generations)
    streams = line_up(
        local_parley.port, local_parley.token, STREAMS, local_parley.queue_length, HANG_UP
    )
    served = [n for n in range(1, STREAMS) if n not in HANG_UP]
    order = read_concurrently({n: streams[n] for n in served})

    assert order == served
    for number in served:
        assert streams[number].final["parley"]["status"] == "completed", number
    status = local_parley.wait_idle(timeout=30)
    assert status["models"][0]["queue_length"] == 0 and not status["models"][0]["in_use"]
    assert len(generations) - ran_before == 1 + len(served)  # the hung-up ones never ran
    local_parley.wait_for(lambda: threading.active_count() <= threads_before, timeout=10)
