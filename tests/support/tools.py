"""MCP servers for the tests: the configuration that runs tests/support/mcp_tools.py, and
its log of calls and cancellations."""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path
from typing import Any

from tests.support.waiting import wait_for

REPO = Path(__file__).resolve().parents[2]
TOOL_COUNT = 13  # the tools tests/support/mcp_tools.py offers


def tool_server(
    log: Path, trust: str | None = "allow", *, guard: bool = False, **env: str
) -> dict[str, Any]:
    """An `mcpServers` entry that runs the tests' MCP server, logging to `log`.

    Trusted "allow" unless told otherwise: the tests of what tools do (not of asking first,
    tests/server/agent/test_approvals.py) run without the approval the default ("ask") needs.
    `trust=None` leaves the key out (the default). Its tools say nothing of what they do, so
    the injection guard (on by default) would ask before each call that follows a result;
    it is off here unless `guard=True` (its own tests: tests/server/guard/)."""
    entry: dict[str, Any] = {
        "command": sys.executable,
        "args": ["-m", "tests.support.mcp_tools", str(log)],
        "env": {"PYTHONPATH": str(REPO), **env},
        "cwd": str(REPO),
    }
    if trust is not None:
        entry["trust"] = trust
    if not guard:
        entry["guard"] = False
    return entry


def write_config(path: Path, servers: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return path


class ToolLog:
    """What the tests' MCP server recorded (JSON lines, `at` = time.monotonic())."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def events(self) -> list[dict[str, Any]]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        found = []
        for line in text.splitlines():
            try:
                found.append(json.loads(line))
            except ValueError:
                break  # a line still being written
        return found

    def find(self, event: str, **fields: Any) -> dict[str, Any] | None:
        for found in self.events():
            if found["event"] == event and all(found.get(k) == v for k, v in fields.items()):
                return found
        return None

    def wait(self, event: str, timeout: float = 10.0, **fields: Any) -> dict[str, Any]:
        found: dict[str, Any] = wait_for(lambda: self.find(event, **fields), timeout)
        return found


def now() -> float:
    """The clock the tool log uses."""
    return time.monotonic()


def untrusted_text(content: str) -> str:
    """The text between the markers a tool's result reaches the model in (its notice and
    tagged markers: server/agent/untrusted.py)."""
    match = re.fullmatch(
        r"\[Untrusted data from [^\]]*\]\n<<<untrusted (\w+)>>>\n(.*)\n<<<end untrusted \1>>>",
        content,
        re.DOTALL,
    )
    assert match, content
    return match.group(2)
