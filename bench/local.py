"""The bundled model: Parley's API vs a raw llama-cpp-python loop, stop latency, thread counts.

    python -m bench.local [ROUNDS]

1. tokens/s of a fixed prompt through Parley's /v1 API (parley-server in its own process)
   / a raw llama-cpp-python loop on the same GGUF, same run, alternating. Goal >= 0.95.
2. hang-up -> generation stopped (worker thread returned), in ms and in tokens, with Parley
   in-process so the worker's own timestamps can be read. Goal <= one token's time + 20 ms.
3. generation tok/s with n_threads 1 and 2, idle and with one other busy process.
Run it alone: llama.cpp's threads are very sensitive to other load on two cores.
"""

from __future__ import annotations

import multiprocessing
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.harness import TOKEN, show, summary
from server.models.bundled import bundled_gguf
from server.models.local import LocalBackend, _open_llama
from server.settings import LocalSettings
from tests.support.client import SSEStream

PROMPT = [{"role": "user", "content": "Write a very long story about a dragon and a knight."}]
MAX_TOKENS = 256


def raw_rate(llm: Any) -> float:
    start = time.perf_counter()
    first = None
    tokens = 0
    for chunk in llm.create_chat_completion(
        messages=PROMPT, stream=True, max_tokens=MAX_TOKENS, temperature=0.0, seed=7
    ):
        if chunk["choices"][0]["delta"].get("content"):
            tokens += 1
            if first is None:
                first = time.perf_counter()
    assert first is not None
    del start
    return (tokens - 1) / (time.perf_counter() - first)


def parley_rate(port: int) -> float:
    body = {"messages": PROMPT, "stream": True, "max_tokens": MAX_TOKENS, "temperature": 0.0}
    stream = SSEStream(port, "/v1/chat/completions", body, TOKEN, timeout=120)
    stream.read_until(lambda text: len(text) > 0)
    first = time.perf_counter()
    stream.read_all()
    end = time.perf_counter()
    tokens = stream.final["usage"]["completion_tokens"]
    return float(tokens - 1) / (end - first)


def api_vs_raw(rounds: int) -> None:
    from bench.harness import _spawn  # the same process helper as the other benches

    llm = _open_llama(bundled_gguf(), LocalSettings())
    with tempfile.TemporaryDirectory() as data_dir:
        proc, line = _spawn([sys.executable, "-m", "server", "--data-dir", data_dir])
        port = int(line.rsplit(":", 1)[1])
        try:
            parley_rate(port)  # warm: loads the model in the server
            raw_rate(llm)
            raw, api = [], []
            for _ in range(rounds):
                raw.append(raw_rate(llm))
                api.append(parley_rate(port))
        finally:
            proc.terminate()
            proc.wait(20)
    del llm
    show("raw llama-cpp-python loop, tok/s", summary(raw))
    show("Parley /v1 (parley-server process), tok/s", summary(api))
    ratio = statistics.median(api) / statistics.median(raw)
    print(f"Parley / raw (medians): {ratio:.3f} -> {'met' if ratio >= 0.95 else 'MISSED'}")


def stop_latency(rounds: int) -> None:
    from tests.support.parley import Parley, wait_model_ready

    with tempfile.TemporaryDirectory() as data_dir:
        server = Parley(Path(data_dir)).start()
        wait_model_ready(server)
        backend = server.services.models.resolve(None).backend
        assert isinstance(backend, LocalBackend)
        stop_ms: list[float] = []
        after: list[float] = []
        per_token_ms: list[float] = []
        try:
            for _ in range(rounds):
                body = {"messages": PROMPT, "stream": True, "max_tokens": 1000}
                stream = SSEStream(server.port, "/v1/chat/completions", body, server.token)
                stream.read_until(lambda text: len(text) > 60)
                moment = stream.hang_up()
                server.wait_idle()
                stats = backend.generations[-1]
                assert stats.returned_at is not None
                stop_ms.append((stats.returned_at - moment) * 1000)
                after.append(sum(1 for t in stats.token_times if t > moment))
                gaps = [
                    b - a for a, b in zip(stats.token_times, stats.token_times[1:], strict=False)
                ]
                per_token_ms.append(statistics.median(gaps) * 1000)
        finally:
            server.stop()
    show("hang-up -> worker thread returned (ms)", summary(stop_ms))
    show("tokens generated after the hang-up", summary(after))
    token_ms = statistics.median(per_token_ms)
    print(f"one token's time (median): {token_ms:.1f} ms")
    verdict = "met" if max(stop_ms) <= token_ms + 20 else "MISSED"
    print(
        f"goal max stop <= one token + 20 ms ({token_ms + 20:.1f}): {max(stop_ms):.1f} -> {verdict}"
    )


def _spin(seconds: float) -> None:
    end = time.perf_counter() + seconds
    x = 0
    while time.perf_counter() < end:
        x += 1


def thread_counts() -> None:
    for n_threads in (1, 2):
        llm = _open_llama(bundled_gguf(), LocalSettings(n_threads=n_threads, n_threads_batch=2))
        raw_rate(llm)
        idle = statistics.median(raw_rate(llm) for _ in range(3))
        busy = multiprocessing.get_context("spawn").Process(target=_spin, args=(60,))
        busy.start()
        time.sleep(0.5)
        try:
            loaded = statistics.median(raw_rate(llm) for _ in range(3))
        finally:
            busy.terminate()
            busy.join()
        print(f"n_threads={n_threads}: idle {idle:.1f} tok/s, one busy process {loaded:.1f} tok/s")
        del llm


def main(rounds: int = 5) -> None:
    api_vs_raw(rounds)
    stop_latency(max(rounds * 2, 10))
    thread_counts()


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
