"""`parley-server` as a real subprocess: start, read its URL line, signal or kill it."""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path

from tests.support.client import SSEStream, request
from tests.support.parley import MODEL, TOKEN

URL_LINE = re.compile(r"listening on http://127\.0\.0\.1:(\d+)")


class ServerProcess:
    def __init__(self, data_dir: Path, upstream_url: str | None, *extra: str) -> None:
        """`upstream_url=None`: the embedded default, the bundled local model."""
        self.data_dir = data_dir
        backend = ["--upstream", upstream_url, "--upstream-model", MODEL] if upstream_url else []
        self.args = [
            sys.executable, "-m", "server", "--port", "0", "--data-dir", str(data_dir),
            *backend, *extra,
        ]  # fmt: skip
        self.token = TOKEN
        self.lines: queue.Queue[str] = queue.Queue()
        self.output: list[str] = []
        self.proc: subprocess.Popen[str] | None = None
        self.port = 0

    def start(self, timeout: float = 30.0) -> ServerProcess:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        env.pop("PARLEY_TOKEN", None)
        if self.token:
            env["PARLEY_TOKEN"] = self.token
        self.proc = subprocess.Popen(
            self.args,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
        )
        threading.Thread(target=self._pump, daemon=True).start()
        while True:
            line = self.lines.get(timeout=timeout)
            match = URL_LINE.search(line)
            if match:
                self.port = int(match.group(1))
                return self

    def _pump(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        for line in self.proc.stdout:
            self.output.append(line)
            self.lines.put(line)
        self.proc.stdout.close()

    def new_conversation(self) -> str:
        reply = request(self.port, "POST", "/api/conversations", token=self.token, json_body={})
        assert reply.status == 201, reply.body
        conversation_id: str = reply.json()["id"]
        return conversation_id

    def send(self, conversation_id: str, content: str, timeout: float = 60.0) -> SSEStream:
        path = f"/api/conversations/{conversation_id}/messages"
        return SSEStream(self.port, path, {"content": content}, self.token, timeout=timeout)

    def terminate(self, timeout: float = 20.0) -> int:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout)

    def kill(self) -> int:
        assert self.proc is not None
        self.proc.kill()
        return self.proc.wait(10)

    def ensure_stopped(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


def child_pids(pid: int) -> list[int]:
    """The pids of a process's children (Linux /proc), read thread by thread; a thread or a
    child that ends while they are read is skipped, not an error."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            found.extend(int(child) for child in (task / "children").read_text().split())
        except (FileNotFoundError, ProcessLookupError):
            continue
    return found


def command_line(pid: int) -> bytes:
    """A process's command line (NUL-separated); empty if it has ended."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except (FileNotFoundError, ProcessLookupError):
        return b""
