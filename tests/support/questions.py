"""Helpers for the tests of servers' questions (MCP elicitation): the `mcpServers` entry that
runs tests/support/mcp_questions.py, and the stream's `parley.question` event."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from tests.support.client import SSEStream
from tests.support.tools import REPO


def questions_server(log: Path, only_2025: bool, timeout: float | None = None) -> dict[str, Any]:
    """An entry (trusted "allow": the tests are of questions, not of approvals)."""
    args = ["-m", "tests.support.mcp_questions", str(log)]
    args += ["--only-2025"] if only_2025 else []
    entry: dict[str, Any] = {
        "command": sys.executable,
        "args": args,
        "env": {"PYTHONPATH": str(REPO)},
        "trust": "allow",
    }
    if timeout is not None:
        entry["timeout"] = timeout
    return entry


def question_of(stream: SSEStream) -> dict[str, Any]:
    """Read the stream until a server asks; its `parley.question` event."""
    while True:
        event = stream.next_event()
        assert isinstance(event, dict), f"the stream ended first: {stream.events}"
        found: dict[str, Any] | None = event.get("parley", {}).get("question")
        if found is not None:
            return found
