"""A server's questions (MCP elicitation), measured on real processes.

    python -m bench.questions [ROUNDS]

Stop during a question: a turn's model calls `book` of tests/support/mcp_questions.py (a
server of 2025-11-25, whose question is a request of its own that waits for the answer);
once the stream's `parley.question` has come, and 50 ms more, the client hangs up. Measured:
hang-up → the MCP server told (its own log of the "cancel" answer, or of its call's
cancellation, whichever it saw first: CLOCK_MONOTONIC, one clock for both processes), and
hang-up → the reply settled (its saved `completed_at`, wall clock).

The scripted upstream, parley-server and the MCP server each run in their own process.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.agent import wait_ready
from bench.harness import ParleyProcess, Upstream, processes, show, summary
from tests.support.client import SSEStream
from tests.support.tools import REPO, ToolLog

BOOK = {"name": "q__book", "arguments": "{}"}


def question_of(stream: SSEStream) -> dict[str, Any]:
    while True:
        event = stream.next_event()
        if not isinstance(event, dict):
            raise RuntimeError(f"the stream ended before any question: {stream.events}")
        found: dict[str, Any] | None = event.get("parley", {}).get("question")
        if found is not None:
            return found


def told_after(log: ToolLog, since: float, timeout: float = 10.0) -> float:
    """The first moment after `since` the server logged the question's end."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ends = [
            e["at"]
            for e in log.events()
            if e["at"] > since
            and (
                e["event"] == "cancelled" or (e["event"] == "answered" and e["action"] == "cancel")
            )
        ]
        if ends:
            return min(ends)
        time.sleep(0.002)
    raise RuntimeError("the MCP server was never told")


def stop_during_a_question(
    upstream: Upstream, parley: ParleyProcess, log: ToolLog, rounds: int
) -> None:
    told_ms, settled_ms = [], []
    for _ in range(rounds):
        upstream.script(queue=[{"tokens": 0, "tool_calls": [BOOK]}])
        cid = parley.new_conversation()
        stream = parley.stream(cid, "book a table")
        message_id = stream.first["message_id"]
        question_of(stream)
        time.sleep(0.05)
        hung_up, hung_up_wall = time.monotonic(), time.time()
        stream.hang_up()
        told_ms.append((told_after(log, hung_up) - hung_up) * 1000)
        path = f"/api/conversations/{cid}/messages/{message_id}?wait=settled"
        message = parley.call("GET", path)
        assert message["status"] == "interrupted", message
        assert message["ended"]["questions"] == 1, message["ended"]
        settled_ms.append((message["completed_at"] - hung_up_wall) * 1000)
    parley.wait_idle()
    show("stop during a question -> the MCP server told (ms)", summary(told_ms))
    show("stop during a question -> turn settled (ms)", summary(settled_ms))


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    with tempfile.TemporaryDirectory() as scratch:
        log = ToolLog(Path(scratch) / "questions.log")
        config = Path(scratch) / "mcp.json"
        args = ["-m", "tests.support.mcp_questions", str(log.path), "--only-2025"]
        entry = {
            "command": sys.executable,
            "args": args,
            "env": {"PYTHONPATH": str(REPO)},
            "trust": "allow",
        }
        config.write_text(json.dumps({"mcpServers": {"q": entry}}))
        with processes("--mcp-config", str(config)) as (upstream, parley):
            wait_ready(parley)
            stop_during_a_question(upstream, parley, log, rounds)


if __name__ == "__main__":
    main()
