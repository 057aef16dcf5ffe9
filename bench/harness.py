"""Processes for benchmarks: the scripted upstream and parley-server, each in its own process.

Separate processes keep the client, Parley and the upstream from sharing one GIL, so the
figures compare Parley's relay with a direct connection fairly. time.perf_counter() is
CLOCK_MONOTONIC on Linux, so timestamps compare across these processes.
"""

from __future__ import annotations

import json
import os
import select
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.client import SSEStream, request

TOKEN = "bench-token-0123456789abcdef"


@dataclass
class Upstream:
    base_url: str
    port: int

    def script(self, **script: Any) -> None:
        reply = request(self.port, "POST", "/_script", json_body=script)
        assert reply.status == 200, reply.body

    def records(self) -> list[dict[str, Any]]:
        records: list[dict[str, Any]] = request(self.port, "GET", "/_records").json()["records"]
        return records

    def wait_record(self, predicate: Any, timeout: float = 10.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            records = self.records()
            if records and predicate(records[-1]):
                return records[-1]
            time.sleep(0.002)
        raise TimeoutError("upstream record not as expected")

    def stream(self, content: str = "hi") -> SSEStream:
        body = {
            "model": "scripted",
            "messages": [{"role": "user", "content": content}],
            "stream": True,
        }
        return SSEStream(self.port, "/v1/chat/completions", body, TOKEN)


@dataclass
class ParleyProcess:
    port: int
    pid: int = 0
    data_dir: Path | None = None

    def rss_mb(self) -> float:
        """The server process's resident memory now (Linux)."""
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return 0.0

    def call(self, method: str, path: str, body: Any = None) -> Any:
        reply = request(self.port, method, path, token=TOKEN, json_body=body)
        assert reply.status < 300, reply.body
        return reply.json() if reply.body else None

    def new_conversation(self) -> str:
        conversation_id: str = self.call("POST", "/api/conversations", {})["id"]
        return conversation_id

    def stream(self, conversation_id: str, content: str = "hi") -> SSEStream:
        return SSEStream(
            self.port, f"/api/conversations/{conversation_id}/messages", {"content": content}, TOKEN
        )

    def wait_idle(self, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            status = self.call("GET", "/api/status")
            if status["active_turns"] == 0 and not any(m["in_use"] for m in status["models"]):
                return
            time.sleep(0.002)
        raise TimeoutError("parley still busy")


def _spawn(args: list[str]) -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "PARLEY_TOKEN": TOKEN}
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, text=True, env=env)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    return proc, line.strip()


@contextmanager
def parley_server(upstream_url: str | None, *parley_args: str) -> Iterator[ParleyProcess]:
    """parley-server in its own process, on a fresh data dir, with this upstream (None: the
    embedded default, the bundled model)."""
    upstream = ["--upstream", upstream_url, "--upstream-model", "scripted"] if upstream_url else []
    with tempfile.TemporaryDirectory() as data_dir:
        proc, line = _spawn(
            [sys.executable, "-m", "server", "--data-dir", data_dir, *upstream, *parley_args]
        )
        port = int(line.rsplit(":", 1)[1])
        try:
            yield ParleyProcess(port, proc.pid, Path(data_dir))
        finally:
            proc.terminate()
            proc.wait(20)


@contextmanager
def processes(*parley_args: str) -> Iterator[tuple[Upstream, ParleyProcess]]:
    """The scripted upstream and parley-server (with these extra flags), each in a process."""
    root = Path(__file__).resolve().parent.parent
    os.chdir(root)
    up_proc, base_url = _spawn([sys.executable, "-m", "tests.support.upstream"])
    upstream = Upstream(base_url, int(base_url.rsplit(":", 1)[1].split("/")[0]))
    try:
        with parley_server(base_url, *parley_args) as parley:
            yield upstream, parley
    finally:
        up_proc.terminate()
        up_proc.wait(20)


def summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {
        "n": len(values),
        "p50": statistics.median(ordered),
        "p95": p95,
        "max": ordered[-1],
        "mean": statistics.fmean(ordered),
    }


def show(title: str, figures: dict[str, Any]) -> None:
    print(f"{title}: {json.dumps(figures)}")


def read_timings(pipe: Any, patience_s: float) -> dict[str, float]:
    """The `PARLEY_TIMING name moment` lines a launch prints (PARLEY_PRINT_TIMINGS=1):
    `window_shown` and `server_ready`, each a time.time() moment."""
    events: dict[str, float] = {}
    buffer = b""
    deadline = time.monotonic() + patience_s
    while len(events) < 2 and time.monotonic() < deadline:
        ready, _, _ = select.select([pipe], [], [], 0.1)
        if not ready:
            continue
        chunk = os.read(pipe.fileno(), 4096)
        if not chunk:
            break
        buffer += chunk
        *lines, buffer = buffer.split(b"\n")
        for line in lines:
            if line.startswith(b"PARLEY_TIMING"):
                _, name, moment = line.decode().split()
                events[name] = float(moment)
    return events
