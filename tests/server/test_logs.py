"""Parley's log file: warnings and errors in the user's log directory, never a secret."""

from __future__ import annotations

import logging
import os
import socket
from pathlib import Path

import pytest

from server.logs import LOG_FILE, file_handler, keep_secret, log_dir
from server.settings import Settings, UpstreamSettings, new_token
from tests.support.process import ServerProcess


def test_warnings_go_to_the_file_with_every_secret_replaced(tmp_path: Path) -> None:
    token = new_token()
    key = "sk-live-abcdefghijklmnop"
    UpstreamSettings("https://api.example.com/v1", "m", api_key=key)
    supplied = "a-token-the-user-supplied"
    Settings(data_dir=tmp_path, token=supplied)
    handler = file_handler(tmp_path / "logs")
    assert handler is not None
    log = logging.getLogger("tests.logs")
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    try:
        log.info("an info line stays out of the file")
        log.warning("request with token %s failed", token)
        log.warning("upstream said: Authorization: Bearer %s", "some-bearer-value-123")
        log.error("key %s and token %s", key, supplied)
        try:
            raise RuntimeError(f"boom with {token}")
        except RuntimeError:
            log.exception("failed")
    finally:
        log.removeHandler(handler)
        handler.close()
    text = (tmp_path / "logs" / LOG_FILE).read_text(encoding="utf-8")
    assert "request with token [redacted] failed" in text
    assert "Bearer [redacted]" in text and "RuntimeError: boom with [redacted]" in text
    for secret in (token, key, supplied, "some-bearer-value-123"):
        assert secret not in text
    assert "an info line" not in text


def test_a_short_value_is_not_taken_for_a_secret() -> None:
    keep_secret("abc")  # would redact every "abc" of every line
    assert "abc" not in __import__("server.logs").logs._secrets


def test_parley_server_writes_its_log_where_the_user_can_find_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    logs = tmp_path / "logs"
    monkeypatch.setenv("PARLEY_LOG_DIR", str(logs))
    # A backend that is not there: the reply ends in an error, which the log keeps.
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        gone = f"http://127.0.0.1:{closed.getsockname()[1]}/v1"
    server = ServerProcess(tmp_path / "data", gone).start()
    try:
        conversation = server.new_conversation()
        stream = server.send(conversation, "hello")
        list(stream.iter_events())
        assert stream.final["parley"]["status"] == "error"
    finally:
        server.terminate()
    text = (logs / LOG_FILE).read_text(encoding="utf-8")
    assert " ERROR " in text or " WARNING " in text
    assert server.token not in text


def test_the_log_directory_is_the_platforms_unless_overridden(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert log_dir() == Path(os.environ["PARLEY_LOG_DIR"])
    monkeypatch.delenv("PARLEY_LOG_DIR")
    assert log_dir().name == "log" and "parley" in log_dir().parts
