"""The bundled model through Parley's API, whatever engine runs it (issue 10: before and after).

    python -m bench.engine [ROUNDS]
    python -m bench.engine ROUNDS --stop-then-send    (only Stop then send, against idle)

parley-server on its embedded default in its own process; every figure through the API:
1. generation tok/s (256 tokens, temperature 0) and a short prompt's time to first token;
2. a ~3,000-token prompt: prefill time (time to first token);
3. hang-up mid-generation, and hang-up during a ~3,000-token prefill at a random moment
   (0.5-1.5 s in): the server process tree's CPU seconds in the second after, and the next
   short request's time to first token (when the model serves again); then the way a user
   does it, Stop and send at once: the next request's time to first token, sent right after
   the hang-up of a ~2,000-token prefill 1 s in, against the same request idle;
4. two conversations streaming at once: combined tok/s against one alone;
5. two ~2,500-token conversations used in turn (A, B, A): A's second turn TTFT / its first;
6. the same engine spoken to directly (llama.cpp's own server, which xllamacpp serves), for
   what Parley's relay costs: generation tok/s, alternating with Parley's /v1.
Run it alone: llama.cpp's threads are very sensitive to other load on two cores.
"""

from __future__ import annotations

import os
import random
import sys
import threading
import time
from pathlib import Path

import httpx

from bench.harness import TOKEN, ParleyProcess, parley_server, show, summary
from server.models.bundled import bundled_gguf
from server.models.engine import Engine, EngineConfig
from server.settings import LocalSettings
from tests.support.client import SSEStream

WORDS = [
    "river",
    "mountain",
    "quiet",
    "engine",
    "paper",
    "window",
    "signal",
    "garden",
    "orange",
    "theory",
    "copper",
    "lantern",
    "village",
    "market",
    "winter",
    "silver",
    "bridge",
    "candle",
    "harbor",
    "forest",
    "meadow",
    "thunder",
    "pocket",
    "mirror",
    "basket",
    "ladder",
    "violin",
    "castle",
    "rocket",
    "pencil",
    "desert",
    "island",
    "jacket",
    "planet",
    "marble",
    "feather",
]
STORY = "Write a very long story about a dragon and a knight."


def document(words: int, seed: int) -> str:
    rng = random.Random(seed)
    return " ".join(rng.choice(WORDS) for _ in range(words)) + "\n\nSummarize the text above."


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process and its live children (Linux /proc)."""
    total = 0.0
    tick = os.sysconf("SC_CLK_TCK")
    pids = [pid]
    for task in Path(f"/proc/{pid}/task").iterdir():
        children = (task / "children").read_text().split()
        pids += [int(c) for c in children]
    for one in pids:
        fields = Path(f"/proc/{one}/stat").read_text().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / tick
    return total


def send(parley: ParleyProcess, conversation: str, content: str, **fields: object) -> SSEStream:
    path = f"/api/conversations/{conversation}/messages"
    return SSEStream(parley.port, path, {"content": content, **fields}, TOKEN, timeout=300)


def ttft(parley: ParleyProcess, content: str = "Count from 1 to 5.", max_tokens: int = 1) -> float:
    """Time to the first event after the turn's ids that carries text, or ends the reply
    (a sampled reply may end at once, with no text)."""
    started = time.perf_counter()
    stream = send(parley, parley.new_conversation(), content, max_tokens=max_tokens)
    stream.first  # noqa: B018 - the ids; then the model's first output
    elapsed = None
    for _event in stream.iter_events():
        if elapsed is None:
            elapsed = time.perf_counter() - started
    assert elapsed is not None
    return elapsed * 1000


def rate(parley: ParleyProcess, max_tokens: int = 256) -> float:
    stream = send(parley, parley.new_conversation(), STORY, max_tokens=max_tokens, temperature=0)
    stream.read_until(lambda text: len(text) > 0)
    first = time.perf_counter()
    stream.read_all()
    tokens = stream.final["usage"]["completion_tokens"]
    return float(tokens - 1) / (time.perf_counter() - first)


def hang_up_figures(
    parley: ParleyProcess, pid: int, during_prefill: bool, seed: int
) -> tuple[float, float]:
    if during_prefill:
        stream = send(parley, parley.new_conversation(), document(2200, seed), max_tokens=64)
        stream.first  # noqa: B018 - the turn is open: prefill has begun
        time.sleep(random.Random(seed).uniform(0.5, 1.5))
    else:
        stream = send(parley, parley.new_conversation(), STORY, max_tokens=2000)
        stream.read_until(lambda text: len(text) > 60)
    stream.hang_up()
    before = cpu_seconds(pid)
    time.sleep(1.0)
    burned = cpu_seconds(pid) - before
    return burned, ttft(parley)


def stop_then_send(parley: ParleyProcess, seed: int) -> float:
    """A ~2,000-token prompt hung up 1 s into its prefill, then a short request sent at once
    (no pause, as a user who stops and sends): its time to first token (ms)."""
    stream = send(parley, parley.new_conversation(), document(1500, seed), max_tokens=64)
    stream.first  # noqa: B018 - the turn is open: prefill has begun
    time.sleep(1.0)
    stream.hang_up()
    figure = ttft(parley, "hello")
    parley.wait_idle(60)  # the next round starts with the engine free
    return figure


def parallel(parley: ParleyProcess, tokens: int = 128) -> float:
    results: list[int] = []
    started = time.perf_counter()

    def one() -> None:
        stream = send(parley, parley.new_conversation(), STORY, max_tokens=tokens, temperature=0)
        stream.read_all()
        results.append(int(stream.final["usage"]["completion_tokens"]))

    threads = [threading.Thread(target=one) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sum(results) / (time.perf_counter() - started)


def cache_in_turn(parley: ParleyProcess) -> tuple[float, float, float]:
    a, b = parley.new_conversation(), parley.new_conversation()
    figures = []
    for conversation, content in (
        (a, document(1900, 101)),
        (b, document(1900, 202)),
        (a, "And in one word?"),
    ):
        started = time.perf_counter()
        stream = send(parley, conversation, content, max_tokens=8)
        stream.read_until(lambda text: len(text) > 0)
        figures.append((time.perf_counter() - started) * 1000)
        stream.read_all()
    return figures[0], figures[1], figures[2]


def direct_rate(engine: Engine, max_tokens: int = 256) -> float:
    """tok/s straight from the engine's own OpenAI-compatible API (no Parley in between)."""
    body = {"messages": [{"role": "user", "content": STORY}], "stream": True,
            "max_tokens": max_tokens, "temperature": 0}  # fmt: skip
    headers = {"Authorization": f"Bearer {engine.key}", "Connection": "close"}
    first, tokens = None, 0
    with httpx.stream("POST", f"{engine.url}/v1/chat/completions", json=body, headers=headers,
                      timeout=120) as reply:  # fmt: skip
        for line in reply.iter_lines():
            if line.startswith("data: {") and '"content":"' in line:
                tokens += 1
                first = first or time.perf_counter()
    assert first is not None
    return (tokens - 1) / (time.perf_counter() - first)


def parley_v1_rate(parley: ParleyProcess, max_tokens: int = 256) -> float:
    body = {"messages": [{"role": "user", "content": STORY}], "stream": True,
            "max_tokens": max_tokens, "temperature": 0}  # fmt: skip
    stream = SSEStream(parley.port, "/v1/chat/completions", body, TOKEN, timeout=120)
    stream.read_until(lambda text: len(text) > 0)
    first = time.perf_counter()
    stream.read_all()
    return float(stream.final["usage"]["completion_tokens"] - 1) / (time.perf_counter() - first)


def relay_cost(rounds: int) -> None:
    local = LocalSettings()
    engine = Engine(
        EngineConfig(str(bundled_gguf()), "bundled", local.n_ctx, local.n_parallel, local.n_batch,
                     local.n_threads, local.n_threads_batch, local.n_gpu_layers)
    )  # fmt: skip
    engine.start()
    try:
        with parley_server(None) as parley:
            parley_v1_rate(parley, 8)  # loads Parley's engine (idle while the other runs)
            direct, relayed = [], []
            for _ in range(rounds):
                direct.append(direct_rate(engine))
                relayed.append(parley_v1_rate(parley))
    finally:
        engine.stop()
    show("llama.cpp's own server (the engine, directly), tok/s", summary(direct))
    show("Parley /v1 (relaying the engine), tok/s", summary(relayed))


def main(rounds: int = 5) -> None:
    with parley_server(None) as parley:
        ttft(parley)  # loads the model
        show("generation tok/s", summary([rate(parley) for _ in range(rounds)]))
        show("short prompt TTFT (ms)", summary([ttft(parley) for _ in range(rounds)]))
        show(
            "~3,000-token prompt TTFT (ms)",
            summary([ttft(parley, document(2200, 1000 + i)) for i in range(min(rounds, 3))]),
        )
        for label, prefill in (("mid-generation", False), ("during prefill", True)):
            burned, nexts = [], []
            for i in range(rounds):
                cpu, next_ttft = hang_up_figures(parley, parley.pid, prefill, 2000 + i)
                burned.append(cpu)
                nexts.append(next_ttft)
            show(f"hang-up {label}: CPU-s in the second after", summary(burned))
            show(f"hang-up {label}: next request's TTFT (ms)", summary(nexts))
        idle = [ttft(parley, "hello") for _ in range(rounds)]
        show("idle: a short request's TTFT (ms)", summary(idle))
        show(
            "Stop during prefill, then send at once: next TTFT (ms)",
            summary([stop_then_send(parley, 3000 + i) for i in range(rounds)]),
        )
        one = [rate(parley, 128) for _ in range(2)]
        two = [parallel(parley) for _ in range(2)]
        show("one stream tok/s", summary(one))
        show("two streams at once, combined tok/s", summary(two))
        first_a, first_b, second_a = cache_in_turn(parley)
        show(
            "A, B, A (~2,500 tokens each): TTFT (ms)",
            {
                "A1": round(first_a),
                "B1": round(first_b),
                "A2": round(second_a),
                "A2/A1": round(second_a / first_a, 3),
            },
        )


def stop_then_send_only(rounds: int) -> None:
    """Section 3's last figure alone, against the same short request idle."""
    with parley_server(None) as parley:
        ttft(parley)  # loads the model
        show(
            "idle: a short request's TTFT (ms)",
            summary([ttft(parley, "hello") for _ in range(rounds)]),
        )
        show(
            "Stop during prefill, then send at once: next TTFT (ms)",
            summary([stop_then_send(parley, 3000 + i) for i in range(rounds)]),
        )


if __name__ == "__main__":
    numbers = [int(a) for a in sys.argv[1:] if a.isdigit()]
    if "--stop-then-send" in sys.argv:
        stop_then_send_only(numbers[0] if numbers else 16)
    else:
        main(numbers[0] if numbers else 5)
