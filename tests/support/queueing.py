"""Many chat streams against one model: open them in a known order, read them concurrently.

Shared by tests/server/test_concurrency.py and bench/concurrency.py.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable

from tests.support.client import SSEStream
from tests.support.waiting import wait_for


def open_chat(port: int, token: str, number: int, max_tokens: int) -> SSEStream:
    body = {
        "messages": [{"role": "user", "content": f"Say the number {number}."}],
        "stream": True,
        "max_tokens": max_tokens,
        # Greedy: a sampled reply may end at once with no text, and then it has no place in
        # the order of first texts.
        "temperature": 0,
    }
    return SSEStream(port, "/v1/chat/completions", body, token, timeout=120)


def line_up(
    port: int,
    token: str,
    count: int,
    queue_length: Callable[[], int],
    hang_up: Iterable[int] = (),
    hold_tokens: int = 2000,
    slots: int = 1,
) -> list[SSEStream]:
    """Streams 0..slots-1 take the model's slots (long replies); the rest queue behind them,
    in that order.

    Each is opened only once the previous one is in the queue, so the arrival order is
    known; those in `hang_up` hang up while queued (and must leave the queue). Then the
    holders hang up too, and the queue starts moving.
    """
    quitters = set(hang_up)
    streams = [open_chat(port, token, number, hold_tokens) for number in range(slots)]
    for holder in streams:
        holder.read_until(lambda text: len(text) > 0)
    queued = 0
    for number in range(slots, count):
        streams.append(open_chat(port, token, number, 3))
        queued += 1
        wait_for(lambda q=queued: queue_length() == q, timeout=30)
        if number in quitters:
            streams[number].hang_up()
            queued -= 1
            wait_for(lambda q=queued: queue_length() == q, timeout=30)
    for holder in streams[:slots]:
        holder.hang_up()
    return streams


def overtakes(order: list[int], arrival: list[int]) -> int:
    """The most places any stream gained on its arrival position (FIFO with k slots: < k)."""
    return max((arrival.index(n) - order.index(n) for n in order), default=0)


def read_concurrently(streams: dict[int, SSEStream], timeout: float = 120) -> list[int]:
    """Read every stream to its end, each in a thread; the numbers in first-text order.

    Raises TimeoutError if a stream never ends (a deadlock).
    """
    first_text_at: dict[int, float] = {}

    def read(number: int, stream: SSEStream) -> None:
        for event in stream.iter_events():
            if isinstance(event, dict) and any(
                (choice.get("delta") or {}).get("content") for choice in event.get("choices") or []
            ):
                first_text_at.setdefault(number, time.perf_counter())

    readers = [threading.Thread(target=read, args=item) for item in streams.items()]
    for reader in readers:
        reader.start()
    deadline = time.monotonic() + timeout
    for reader in readers:
        reader.join(max(0.0, deadline - time.monotonic()))
        if reader.is_alive():
            raise TimeoutError("a stream never ended")
    return sorted(first_text_at, key=first_text_at.__getitem__)
