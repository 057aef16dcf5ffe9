"""The agent's stop and overhead, measured on real processes.

    python -m bench.agent [ROUNDS]

- Stop during a tool call: a turn's model asks for the tests' MCP server's `slow` tool
  (30 s); the client hangs up while it runs. Measured: hang-up → the MCP server's tool
  learns it was cancelled (its own log, CLOCK_MONOTONIC), and hang-up → the reply settled
  (its `completed_at`, wall clock).
- A 5-step tool turn (5 model calls that each call `echo`, then the answer): its time through
  Parley, against the same 6 model calls made straight to the upstream plus the same 5 tool
  calls made straight to the MCP server (an SDK session in this process).

The scripted upstream, parley-server and the MCP server each run in their own process.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from bench.harness import ParleyProcess, Upstream, processes, show, summary
from tests.support.tools import ToolLog, tool_server

STEPS = 5


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": f"t__{name}", "arguments": json.dumps(arguments)}


def wait_ready(parley: ParleyProcess) -> None:
    deadline = time.monotonic() + 30
    while parley.call("GET", "/api/status")["tools"]["ready"] != 1:
        if time.monotonic() > deadline:
            raise TimeoutError("the MCP server did not start")
        time.sleep(0.05)


def stop_during_tool(upstream: Upstream, parley: ParleyProcess, log: ToolLog, rounds: int) -> None:
    cancelled_ms, settled_ms = [], []
    for index in range(rounds):
        tag = f"r{index}"
        upstream.script(queue=[{"tokens": 0, "tool_calls": [call("slow", seconds=30, tag=tag)]}])
        cid = parley.new_conversation()
        stream = parley.stream(cid, "wait")
        message_id = stream.first["message_id"]
        log.wait("call", tag=tag)
        time.sleep(0.05)
        hung_up, hung_up_wall = time.monotonic(), time.time()
        stream.hang_up()
        cancelled = log.wait("cancelled", tag=tag)
        path = f"/api/conversations/{cid}/messages/{message_id}?wait=settled"
        message = parley.call("GET", path)
        assert message["status"] == "interrupted", message
        cancelled_ms.append((cancelled["at"] - hung_up) * 1000)
        settled_ms.append((message["completed_at"] - hung_up_wall) * 1000)
    show("stop during a tool call -> cancellation at the MCP server (ms)", summary(cancelled_ms))
    show("stop during a tool call -> turn settled (ms)", summary(settled_ms))


def five_step_turn(upstream: Upstream, parley: ParleyProcess, log: ToolLog, rounds: int) -> None:
    scripts = [{"tokens": 0, "tool_calls": [call("echo", text=f"s{i}")]} for i in range(STEPS)]
    scripts.append({"texts": ["All ", "done."]})
    through, direct = [], []
    for _ in range(rounds):
        upstream.script(queue=scripts)
        cid = parley.new_conversation()
        began = time.perf_counter()
        stream = parley.stream(cid, "go")
        stream.read_all()
        through.append((time.perf_counter() - began) * 1000)
        assert stream.final["parley"]["status"] == "completed", stream.final

        upstream.script(queue=scripts)
        began = time.perf_counter()
        for _ in range(STEPS + 1):
            upstream.stream("go").read_all()
        model_ms = (time.perf_counter() - began) * 1000
        direct.append(model_ms + asyncio.run(tool_calls_direct(log.path)))
    overhead = [t - d for t, d in zip(through, direct, strict=True)]
    show(f"{STEPS}-step tool turn through Parley (ms)", summary(through))
    show(f"{STEPS}-step: the same model calls + tool calls, direct (ms)", summary(direct))
    show(f"{STEPS}-step: Parley's overhead (ms)", summary(overhead))


async def tool_calls_direct(log: Path) -> float:
    """The 5 `echo` calls straight to an MCP server (started before the clock runs)."""
    entry = tool_server(log)
    params = StdioServerParameters(command=entry["command"], args=entry["args"], env=entry["env"])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await session.list_tools()
        began = time.perf_counter()
        for index in range(STEPS):
            await session.call_tool("echo", {"text": f"s{index}"})
        return (time.perf_counter() - began) * 1000


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    with tempfile.TemporaryDirectory() as scratch:
        log = ToolLog(Path(scratch) / "tools.log")
        config = Path(scratch) / "mcp.json"
        config.write_text(json.dumps({"mcpServers": {"t": tool_server(log.path)}}))
        with processes("--mcp-config", str(config)) as (upstream, parley):
            wait_ready(parley)
            stop_during_tool(upstream, parley, log, rounds)
            five_step_turn(upstream, parley, log, rounds)


if __name__ == "__main__":
    main()
