"""One stop for a tree of sub-agents (issue 41), measured on real processes.

    python -m bench.sub_agents [ROUNDS]

A turn's model hands five tasks to sub-agents at once (the `delegate` tool): four each call
the `slow` tool (30 s) of an MCP server of their own (four servers, the tests' own, over
stdio), the fifth streams a long answer from the upstream. Once every tool runs and the fifth
streams, the client hangs up. Measured from the hang-up (CLOCK_MONOTONIC, one clock for every
process on the machine; the reply's `completed_at` on the wall clock):
- each MCP server's tool learning it was cancelled (its own log);
- the fifth child's upstream stream closed (the scripted upstream's record);
- the reply settled.
A second later the stored reply is read again: nothing may have changed (no late result
saved), and no `slow` may have finished.

The scripted upstream, parley-server and the MCP servers each run in their own processes.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.harness import ParleyProcess, Upstream, processes, show, summary
from tests.support.tools import ToolLog, tool_server

SERVERS = ("a", "b", "c", "d")
STREAMER = "E-STREAM"


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": json.dumps(arguments)}


def wait_ready(parley: ParleyProcess) -> None:
    deadline = time.monotonic() + 60
    while parley.call("GET", "/api/status")["tools"]["ready"] != len(SERVERS):
        if time.monotonic() > deadline:
            raise TimeoutError("the MCP servers did not start")
        time.sleep(0.05)


def any_record(upstream: Upstream, predicate: Any, timeout: float = 10.0) -> dict[str, Any]:
    """The first of the upstream's records (any, not only the last) that matches."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for record in upstream.records():
            if predicate(record):
                return record
        time.sleep(0.002)
    raise TimeoutError("no upstream record as expected")


def tree_scripts(tag: str) -> dict[str, Any]:
    tasks = [f"TASK-{server}-{tag}" for server in SERVERS] + [f"{STREAMER}-{tag}"]
    by_task: dict[str, list[dict[str, Any]]] = {
        f"TASK-{server}-{tag}": [
            {"tokens": 0, "tool_calls": [call(f"{server}__slow", seconds=30, tag=f"{server}{tag}")]}
        ]
        for server in SERVERS
    }
    by_task[f"{STREAMER}-{tag}"] = [{"tokens": 100_000, "rate": 50}]
    return {
        "queue": [{"tokens": 0, "tool_calls": [call("delegate", task=task) for task in tasks]}],
        "by_task": by_task,
        "texts": ["never said"],
    }


def stop_the_tree(
    upstream: Upstream, parley: ParleyProcess, logs: dict[str, ToolLog], rounds: int
) -> None:
    cancelled_ms: list[float] = []
    stream_closed_ms: list[float] = []
    settled_ms: list[float] = []
    late = 0
    for index in range(rounds):
        tag = f"r{index}"
        upstream.script(**tree_scripts(tag))
        cid = parley.new_conversation()
        stream = parley.stream(cid, "five helpers")
        message_id = stream.first["message_id"]
        for server in SERVERS:
            logs[server].wait("call", tag=f"{server}{tag}", timeout=30)
        # The fifth child streams: its request is the one still sending.
        streaming = any_record(upstream, lambda r: len(r["sent"]) > 5 and not r["finished"])
        time.sleep(0.05)
        hung_up, hung_up_wall = time.monotonic(), time.time()
        stream.hang_up()
        for server in SERVERS:
            cancelled = logs[server].wait("cancelled", tag=f"{server}{tag}", timeout=10)
            cancelled_ms.append((cancelled["at"] - hung_up) * 1000)
        began = streaming["started"]
        closed = any_record(upstream, lambda r, b=began: r["started"] == b and r["hung_up_at"])
        stream_closed_ms.append((closed["hung_up_at"] - hung_up) * 1000)
        path = f"/api/conversations/{cid}/messages/{message_id}?wait=settled"
        message = parley.call("GET", path)
        assert message["status"] == "interrupted", message
        settled_ms.append((message["completed_at"] - hung_up_wall) * 1000)
        time.sleep(1.0)  # anything late would have been written by now
        again = parley.call("GET", f"/api/conversations/{cid}/messages/{message_id}")
        steps = [p for p in again["parts"] if p["type"] == "tool"]
        inner = [s for p in steps for s in p["agent"]["parts"] if s["type"] == "tool"]
        if again != message or any(s["status"] != "interrupted" for s in steps + inner):
            late += 1
        if any(logs[s].find("done", tag=f"{s}{tag}") for s in SERVERS):
            late += 1
    show(
        "stop a tree of 5 sub-agents -> each MCP server's cancellation (ms)", summary(cancelled_ms)
    )
    show(
        "stop a tree of 5 sub-agents -> the streaming child's upstream closed (ms)",
        summary(stream_closed_ms),
    )
    show("stop a tree of 5 sub-agents -> the reply settled (ms)", summary(settled_ms))
    show(
        "stop a tree of 5 sub-agents -> rounds with anything saved late",
        {"rounds": rounds, "late": late},
    )


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    with tempfile.TemporaryDirectory() as scratch:
        logs = {server: ToolLog(Path(scratch) / f"{server}.log") for server in SERVERS}
        config = Path(scratch) / "mcp.json"
        servers = {server: tool_server(logs[server].path) for server in SERVERS}
        config.write_text(json.dumps({"mcpServers": servers}))
        # Five children at once (the default bound is 4).
        args = ("--mcp-config", str(config), "--sub-agents", "5")
        with processes(*args) as (upstream, parley):
            wait_ready(parley)
            stop_the_tree(upstream, parley, logs, rounds)


if __name__ == "__main__":
    main()
