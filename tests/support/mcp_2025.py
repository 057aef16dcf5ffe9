"""Serving an SDK-written MCP server over stdio as a server of 2025-11-25 would: the SDK's
server settles the protocol era with the first request, so `server/discover` (the
2026-07-28 probe) is answered "method not found" before it reaches the server, and the
client falls back to `initialize`. Shared by the test servers that offer `--only-2025`."""

from __future__ import annotations

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp.types import METHOD_NOT_FOUND, ErrorData, JSONRPCError, JSONRPCRequest


async def serve_stdio(server: MCPServer, only_2025: bool) -> None:
    if not only_2025:
        await server.run_stdio_async()
        return
    lowlevel = server._lowlevel_server
    async with stdio_server() as (read, write):
        relay, relayed = anyio.create_memory_object_stream[SessionMessage | Exception](0)

        async def relay_all() -> None:
            async with relay:
                async for item in read:
                    message = item.message if isinstance(item, SessionMessage) else None
                    if isinstance(message, JSONRPCRequest) and message.method == "server/discover":
                        error = ErrorData(code=METHOD_NOT_FOUND, message="Method not found")
                        reply = JSONRPCError(jsonrpc="2.0", id=message.id, error=error)
                        await write.send(SessionMessage(reply))
                        continue
                    await relay.send(item)

        async with anyio.create_task_group() as group:
            group.start_soon(relay_all)
            await lowlevel.run(relayed, write, lowlevel.create_initialization_options())
            group.cancel_scope.cancel()
