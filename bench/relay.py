"""Relay throughput at the upstream's max rate (Parley / direct) and time-to-first-token.

Goal: throughput ratio >= 0.9.

    python -m bench.relay [TOKENS] [ROUNDS]
"""

from __future__ import annotations

import statistics
import sys
import time
from functools import partial

from bench.harness import processes, show, summary


def timed_stream(open_stream, tokens: int) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    """(tokens per second from first token to the end, time to first token in ms)."""
    start = time.perf_counter()
    stream = open_stream()
    stream.read_until(lambda text: len(text) > 0)
    first = time.perf_counter()
    stream.read_all()
    end = time.perf_counter()
    received = stream.delivered.count(" ")
    assert received == tokens, (received, tokens)
    return (received - 1) / (end - first), (first - start) * 1000


def main(tokens: int = 20_000, rounds: int = 5) -> None:
    direct_rate: list[float] = []
    parley_rate: list[float] = []
    direct_ttft: list[float] = []
    parley_ttft: list[float] = []
    with processes() as (upstream, parley):
        upstream.script(tokens=tokens)
        for _ in range(rounds):
            rate, _ = timed_stream(upstream.stream, tokens)
            direct_rate.append(rate)
            rate, _ = timed_stream(partial(parley.stream, parley.new_conversation()), tokens)
            parley_rate.append(rate)
            parley.wait_idle()
        upstream.script(tokens=1)
        for _ in range(30):
            _, ttft = timed_stream(upstream.stream, 1)
            direct_ttft.append(ttft)
            _, ttft = timed_stream(partial(parley.stream, parley.new_conversation()), 1)
            parley_ttft.append(ttft)
            parley.wait_idle()

    ratio = statistics.median(parley_rate) / statistics.median(direct_rate)
    show(f"relay tok/s at max rate, direct ({tokens} tokens)", summary(direct_rate))
    show(f"relay tok/s at max rate, via Parley ({tokens} tokens)", summary(parley_rate))
    verdict = "met" if ratio >= 0.9 else "MISSED"
    print(f"throughput ratio Parley/direct (medians): {ratio:.3f} -> {verdict}")
    show("time to first token, direct (ms)", summary(direct_ttft))
    show("time to first token, via Parley incl. opening the turn (ms)", summary(parley_ttft))
    print(
        "TTFT overhead (median): "
        f"{statistics.median(parley_ttft) - statistics.median(direct_ttft):.2f} ms"
    )


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))
