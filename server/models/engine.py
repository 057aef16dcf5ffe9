"""Starting and stopping the engine process (server/models/engine_process.py) for one GGUF.

Blocking calls (`start`, `stop`), for a worker thread: the process is started, its first
stdout line read (the address and key once the model is loaded, or why it failed), and its
stderr (llama.cpp's log) sent to Parley's logger, keeping the last lines to explain a failed
load. Stopped by closing its stdin; killed if it has not exited in time. Each line of its
log goes to Parley's at the level server/models/engine_log.py gives it, never raw to the
terminal.
"""

from __future__ import annotations

import contextlib
import json
import logging
import subprocess
import sys
import threading
from dataclasses import asdict, dataclass
from pathlib import Path

import httpx

from server.errors import BackendError
from server.limits import ModelLimits
from server.models.engine_log import classify

log = logging.getLogger("parley.engine")

PROPS_TIMEOUT_S = ModelLimits.engine_props_timeout
STOP_WAIT_S = ModelLimits.engine_stop_wait


@dataclass(frozen=True)
class EngineConfig:
    model: str
    alias: str  # the model's name, as the engine reports it
    n_ctx: int  # per conversation (slot)
    n_parallel: int
    n_batch: int
    n_threads: int
    n_threads_batch: int
    n_gpu_layers: int


class Engine:
    def __init__(self, config: EngineConfig) -> None:
        self.config = config
        self.url = ""
        self.key = ""
        self.tool_calls: bool | None = None  # the model's template can call tools
        self._proc: subprocess.Popen[bytes] | None = None
        self._first_error: str | None = None
        self._pump: threading.Thread | None = None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def start(self) -> None:
        """Start the process and wait until the model is loaded. Raises BackendError."""
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "server.models.engine_process", json.dumps(asdict(self.config))],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self._pump = threading.Thread(
            target=self._log_stderr, name="parley-engine-log", daemon=True
        )
        self._pump.start()
        assert self._proc.stdout is not None
        line = self._proc.stdout.readline()
        try:
            reply = json.loads(line)
        except ValueError:
            reply = {"error": "the engine exited while loading"}
        if not isinstance(reply, dict) or "url" not in reply:
            self.stop()
            raise BackendError(self._load_error(str(reply.get("error", reply))))
        self.url, self.key = str(reply["url"]), str(reply["key"])
        self.tool_calls = self._reads_tool_calls()

    def _reads_tool_calls(self) -> bool | None:
        """Whether the model's chat template can call tools (llama.cpp's `/props`), asked once
        while the engine is idle; None if it does not say."""
        try:
            reply = httpx.get(
                f"{self.url}/props",
                headers={"Authorization": f"Bearer {self.key}"},
                timeout=PROPS_TIMEOUT_S,
                trust_env=False,
            )
            caps = reply.json().get("chat_template_caps", {})
        except (httpx.HTTPError, ValueError, AttributeError):
            return None
        supports = caps.get("supports_tool_calls") if isinstance(caps, dict) else None
        return supports if isinstance(supports, bool) else None

    def _load_error(self, generic: str) -> str:
        # llama.cpp's own reason is the first error in its log ("failed to open GGUF file …
        # (No such file or directory)", "failed to read magic", "… data is not within the
        # file bounds, model is corrupted or incomplete"); its exception says only "Failed
        # to init server".
        reason = self._first_error or generic
        return f"cannot load {Path(self.config.model).name}: {reason}"

    def _log_stderr(self) -> None:
        assert self._proc is not None and self._proc.stderr is not None
        for raw in self._proc.stderr:
            found = classify(raw)
            if found is None:
                continue
            level, text = found
            log.log(level, "%s", text)
            if level == logging.ERROR and self._first_error is None:
                self._first_error = text.split(": ", 1)[-1]

    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def stop(self, wait: float = STOP_WAIT_S) -> None:
        """Close its stdin (it exits at once) and wait; kill it if it has not exited."""
        proc = self._proc
        if proc is None:
            return
        if proc.stdin is not None and not proc.stdin.closed:
            with contextlib.suppress(OSError):
                proc.stdin.close()
        try:
            proc.wait(wait)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if self._pump is not None:
            self._pump.join(1.0)  # the log pump ends at the end of stderr
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()
