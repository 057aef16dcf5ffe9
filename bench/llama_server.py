"""Side by side with llama-cpp-python's own server on the same GGUF.

    LLAMA_SERVER_PYTHON=/path/to/venv/bin/python python -m bench.llama_server [ROUNDS]

The other server needs llama-cpp-python's `server` extra, which this project does not
depend on; make a separate venv for it:
    python3 -m venv .venv-llama-server
    .venv-llama-server/bin/pip install 'llama-cpp-python[server]==0.3.36'
It is started with the same load fix Parley applies (bench/_llama_server_patched.py).

For each server: generation tokens/s; then what it does after its client hangs up, mid-reply
and during a long prefill: CPU seconds the server process burns in the 3 s after the
hang-up (the work going on) and how long the next request waits for its first token.
"""

from __future__ import annotations

import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench.harness import TOKEN, _spawn, show, summary
from server.models.bundled import bundled_gguf
from tests.support.client import SSEStream, request
from tests.support.waiting import wait_for

STORY = [{"role": "user", "content": "Write a very long story about a dragon and a knight."}]
LONG = [
    {"role": "user", "content": "Remember these words: " + "lantern river stone " * 300},
    {"role": "assistant", "content": "I will remember them. " * 150},
    {"role": "user", "content": "Now list every word, in order."},
]
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


@dataclass
class Target:
    name: str
    port: int
    pid: int
    headers_token: str

    def stream(self, messages: list[dict[str, str]], max_tokens: int) -> SSEStream:
        body = {"messages": messages, "stream": True, "max_tokens": max_tokens}
        body["temperature"] = 0.0
        return SSEStream(self.port, "/v1/chat/completions", body, self.headers_token, timeout=300)

    def cpu_seconds(self) -> float:
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def rate(target: Target) -> float:
    stream = target.stream(STORY, 256)
    stream.read_until(lambda text: len(text) > 0)
    first = time.perf_counter()
    stream.read_all()
    tokens = len(stream.delivered.split())  # words: the same text for both (temperature 0)
    return tokens / (time.perf_counter() - first)


def after_hang_up(
    target: Target, messages: list[dict[str, str]], during_prefill: bool
) -> tuple[float, float]:
    """(CPU seconds burned in the 3 s after the hang-up, next request's time to first token)."""
    stream = target.stream(messages, 1000)
    if during_prefill:
        time.sleep(0.5)  # the prompt takes seconds to evaluate: hang up in the middle of it
    else:
        stream.read_until(lambda text: len(text) > 60)
    stream.hang_up()
    before = target.cpu_seconds()
    next_start = time.perf_counter()
    follow = target.stream([{"role": "user", "content": "Hi"}], 5)
    follow.read_until(lambda text: len(text) > 0)
    ttft = time.perf_counter() - next_start
    follow.read_all()
    time.sleep(max(0.0, 3.0 - (time.perf_counter() - next_start)))
    return target.cpu_seconds() - before, ttft


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def start_llama_server(python: str) -> tuple[subprocess.Popen[bytes], Target]:
    port = free_port()
    here = Path(__file__).resolve().parent
    proc = subprocess.Popen(
        [python, str(here / "_llama_server_patched.py"), "--model", str(bundled_gguf()),
         "--port", str(port), "--n_threads", "1", "--n_threads_batch", "2", "--n_ctx", "4096"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    wait_for(lambda: _answers(port), timeout=60, interval=0.1)
    return proc, Target("llama_cpp.server", port, proc.pid, "unused")


def _answers(port: int) -> bool:
    try:
        return request(port, "GET", "/v1/models", timeout=1).status == 200
    except OSError:
        return False


def main(rounds: int = 3) -> None:
    python = os.environ.get("LLAMA_SERVER_PYTHON", ".venv-llama-server/bin/python")
    if not Path(python).exists():
        sys.exit(f"no llama-cpp-python server venv at {python}; see this script's docstring")
    with tempfile.TemporaryDirectory() as data_dir:
        parley_proc, line = _spawn([sys.executable, "-m", "server", "--data-dir", data_dir])
        parley = Target("Parley", int(line.rsplit(":", 1)[1]), parley_proc.pid, TOKEN)
        other_proc, other = start_llama_server(python)
        try:
            for target in (parley, other):
                rate(target)  # warm up
            rates: dict[str, list[float]] = {parley.name: [], other.name: []}
            for _ in range(rounds):
                for target in (parley, other):
                    rates[target.name].append(rate(target))
            for name, values in rates.items():
                show(f"{name}: generation words/s", summary(values))
            for during_prefill in (False, True):
                moment = "during prefill" if during_prefill else "mid-reply"
                for target in (parley, other):
                    cpu, ttft = [], []
                    for _ in range(rounds):
                        c, t = after_hang_up(
                            target, LONG if during_prefill else STORY, during_prefill
                        )
                        cpu.append(c)
                        ttft.append(t * 1000)
                    print(
                        f"{target.name}, hang-up {moment}: CPU s burned after it (window: "
                        "3 s or until the next reply ended) "
                        f"{statistics.median(cpu):.2f}; next request TTFT "
                        f"{statistics.median(ttft):.0f} ms (max {max(ttft):.0f})"
                    )
        finally:
            for proc in (parley_proc, other_proc):
                proc.terminate()
                proc.wait(20)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
