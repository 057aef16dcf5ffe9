"""The engine's log (llama.cpp's, on its process's stderr) in Parley's log, with the real
engine and the bundled model: what it says goes there at the level it deserves."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import httpx
import pytest

from server.models.bundled import bundled_gguf
from server.models.engine import Engine, EngineConfig
from server.models.engine_log import classify
from server.settings import LocalSettings
from tests.support.waiting import wait_for


@pytest.fixture
def engine() -> Iterator[Engine]:
    local = LocalSettings()
    running = Engine(
        EngineConfig(
            model=str(bundled_gguf()),
            alias="bundled",
            n_ctx=2048,
            n_parallel=local.n_parallel,
            n_batch=local.n_batch,
            n_threads=local.n_threads,
            n_threads_batch=local.n_threads_batch,
            n_gpu_layers=0,
        )
    )
    running.start()
    yield running
    running.stop()


def test_a_hang_up_is_detail_in_the_log_not_a_warning(
    engine: Engine, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="parley.engine")
    body = {
        "messages": [{"role": "user", "content": "Write a very long story about a dragon."}],
        "stream": True,
        "max_tokens": 2000,
    }
    headers = {"Authorization": f"Bearer {engine.key}", "Connection": "close"}
    with httpx.stream(
        "POST", f"{engine.url}/v1/chat/completions", json=body, headers=headers, timeout=60
    ) as reply:
        lines = reply.iter_lines()
        next(line for line in lines if '"content":"' in line)  # it is generating
    # Leaving the block closed the connection: llama.cpp cancels the task and says so.

    def cancelled() -> logging.LogRecord | None:
        return next((r for r in caplog.records if "cancel task" in r.getMessage()), None)

    record = wait_for(cancelled, 30)
    assert record.levelno == logging.DEBUG
    warned = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert warned == []


def test_the_engines_errors_and_warnings_keep_their_level() -> None:
    error = classify(b"0.00.004.120 E llama_model_load: error loading model: bad magic\n")
    assert error == (logging.ERROR, "llama_model_load: error loading model: bad magic")
    warning = classify(b"0.03.001.000 W srv  update_slots: failed to find free space\n")
    assert warning is not None and warning[0] == logging.WARNING
    assert classify(b"\trepeat_last_n = 64\n") == (logging.DEBUG, "\trepeat_last_n = 64")
    assert classify(b"   \n") is None
