"""Asking before a tool acts (issue 17), measured on real processes.

    python -m bench.approval [ROUNDS]

- Stop while a call awaits approval: a turn's model calls the tests' MCP server's `danger`
  tool (trusted "ask", the default); once the stream says the call awaits approval, the
  client hangs up. Measured: hang-up → the reply settled (its saved `completed_at`, wall
  clock), and that the tool never ran.
- Allow → the call reaches the tool: from sending the decision to the MCP server's own log of
  the call (CLOCK_MONOTONIC, one clock for both processes).

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
from tests.support.tools import ToolLog, tool_server

DANGER = {"name": "t__danger", "arguments": json.dumps({"target": "bench"})}


def approval_of(stream: SSEStream) -> dict[str, Any]:
    while True:
        event = stream.next_event()
        if not isinstance(event, dict):
            raise RuntimeError(f"the stream ended before any approval: {stream.events}")
        found: dict[str, Any] | None = event.get("parley", {}).get("approval")
        if found is not None:
            return found


def stop_while_awaiting(
    upstream: Upstream, parley: ParleyProcess, log: ToolLog, rounds: int
) -> None:
    settled_ms = []
    for _ in range(rounds):
        upstream.script(queue=[{"tokens": 0, "tool_calls": [DANGER]}])
        cid = parley.new_conversation()
        stream = parley.stream(cid, "do it")
        message_id = stream.first["message_id"]
        approval_of(stream)
        time.sleep(0.05)
        hung_up_wall = time.time()
        stream.hang_up()
        path = f"/api/conversations/{cid}/messages/{message_id}?wait=settled"
        message = parley.call("GET", path)
        assert message["status"] == "interrupted", message
        step = next(p for p in message["parts"] if p["type"] == "tool")
        assert step["status"] == "interrupted", step
        settled_ms.append((message["completed_at"] - hung_up_wall) * 1000)
    parley.wait_idle()
    ran = [e for e in log.events() if e["event"] == "call"]
    assert not ran, f"a call awaiting approval ran: {ran}"
    show("stop while a call awaits approval -> turn settled (ms)", summary(settled_ms))


def allow_to_call(upstream: Upstream, parley: ParleyProcess, log: ToolLog, rounds: int) -> None:
    reached_ms = []
    for index in range(rounds):
        upstream.script(queue=[{"tokens": 0, "tool_calls": [DANGER]}, {"texts": ["ok"]}])
        cid = parley.new_conversation()
        stream = parley.stream(cid, "do it")
        call_id = approval_of(stream)["call_id"]
        decided = time.monotonic()
        parley.call("POST", f"/api/conversations/{cid}/tool-calls/{call_id}", {"decision": "allow"})
        stream.read_all()
        calls = [e for e in log.events() if e["event"] == "call"]
        assert len(calls) == index + 1, calls
        reached_ms.append((calls[-1]["at"] - decided) * 1000)
    show("allow -> the call reaches the MCP server's tool (ms)", summary(reached_ms))


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    with tempfile.TemporaryDirectory() as scratch:
        log = ToolLog(Path(scratch) / "tools.log")
        config = Path(scratch) / "mcp.json"
        # No "trust" in the entry: the default, "ask".
        config.write_text(json.dumps({"mcpServers": {"t": tool_server(log.path, trust=None)}}))
        with processes("--mcp-config", str(config)) as (upstream, parley):
            wait_ready(parley)
            stop_while_awaiting(upstream, parley, log, rounds)
            allow_to_call(upstream, parley, log, rounds)


if __name__ == "__main__":
    main()
