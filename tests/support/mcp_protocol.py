"""An MCP server for the tests of the protocol itself, written with the official SDK:

    python -m tests.support.mcp_protocol LOG_FILE [--http] [--only-2025]

Over stdio, or with --http over streamable HTTP on 127.0.0.1 at a port of the system's
choosing (it prints `listening on http://127.0.0.1:PORT/mcp` once it accepts connections).
The SDK's server speaks both protocol eras; with --only-2025 it answers `server/discover` as a
server of 2025-11-25 does (it has no such method), so a client falls back to `initialize`.

`grow` adds a tool and says so. LOG_FILE gets a JSON line for every call of `whoami` (the
protocol version the call came in and the `clientInfo` the client gave), for `slow`'s calls
and cancellations, and over HTTP for every HTTP request (method and `Mcp-Session-Id`), so a
test can see a session's DELETE.
"""

from __future__ import annotations

import json
import socket
import sys
import time
from typing import Any

import anyio
import uvicorn
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPError
from mcp.types import (
    METHOD_NOT_FOUND,
    RequestParams,
    Tool,
    ToolExecution,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from starlette.types import ASGIApp, Receive, Scope, Send

from tests.support.mcp_2025 import serve_stdio

LOG = sys.argv[1]

ONLY_2025 = "--only-2025" in sys.argv
TASKS: dict[str, Any] = {"queued": "required", "either": "optional"}  # tool: taskSupport


def record(event: str, **fields: object) -> None:
    with open(LOG, "a", encoding="utf-8") as file:
        file.write(json.dumps({"event": event, "at": time.monotonic(), **fields}) + "\n")


class ProtocolServer(MCPServer):
    async def list_tools(self) -> list[Tool]:
        """The tools, those of TASKS marked with their `execution.taskSupport` (a field
        of 2025-11-25: the SDK leaves it out at 2026-07-28, where Tasks is an extension)."""
        tools = await super().list_tools()
        for tool in tools:
            if tool.name in TASKS:
                tool.execution = ToolExecution(task_support=TASKS[tool.name])
        return tools


server = ProtocolServer("parley-protocol-test")


@server.tool()
async def whoami(ctx: Context) -> str:
    """Who called, in which protocol version."""
    params = ctx.session.client_params
    info = params.client_info.model_dump(exclude_none=True) if params else None
    record("whoami", protocol=ctx.session.protocol_version, client=info)
    return f"{ctx.session.protocol_version} {info}"


@server.tool()
async def slow(seconds: float, tag: str = "") -> str:
    """Wait, then answer; a cancellation is recorded."""
    record("call", tool="slow", tag=tag)
    try:
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        record("cancelled", tool="slow", tag=tag)
        raise
    return f"slept {seconds} s"


@server.tool()
async def queued() -> str:
    """Says it requires MCP Tasks."""
    record("call", tool="queued")
    return "ran without a task"


@server.tool()
async def either() -> str:
    """Says it can run as an MCP Task or not."""
    record("call", tool="either")
    return "ran"


@server.tool()
async def grow(name: str, ctx: Context) -> str:
    """Adds a tool named `name` and tells the client its tools changed, the way of the
    protocol the call came in: a notification (2025-11-25), an event to the client's
    `subscriptions/listen` stream (2026-07-28)."""

    async def grown() -> str:
        return name

    server.add_tool(grown, name=name, description="A tool added by `grow`.")
    if ctx.session.protocol_version in MODERN_PROTOCOL_VERSIONS:
        await ctx.notify_tools_changed()
    else:
        await ctx.session.send_tool_list_changed()
    record("grew", name=name)
    return f"added {name}"


async def no_discover(ctx: Any, params: RequestParams) -> None:
    raise MCPError(METHOD_NOT_FOUND, "Method not found")


def recording(app: ASGIApp) -> ASGIApp:
    async def recorded(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
            record("http", method=scope["method"], session=headers.get("mcp-session-id"))
        await app(scope, receive, send)

    return recorded


async def serve_http() -> None:
    if ONLY_2025:
        # The request goes by its MCP-Protocol-Version header to the SDK's 2026-07-28 entry,
        # which looks the method up: none, as on a server of 2025-11-25.
        server._lowlevel_server.add_request_handler("server/discover", RequestParams, no_discover)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    app = recording(server.streamable_http_app(host="127.0.0.1"))
    config = uvicorn.Config(app, log_level="warning")
    web = uvicorn.Server(config)
    async with anyio.create_task_group() as group:
        group.start_soon(lambda: web.serve(sockets=[sock]))
        while not web.started:  # uvicorn sets a flag, no event
            await anyio.sleep(0.01)
        print(f"listening on http://127.0.0.1:{port}/mcp", flush=True)


if __name__ == "__main__":
    if "--http" in sys.argv:
        anyio.run(serve_http)
    else:
        anyio.run(serve_stdio, server, ONLY_2025)
