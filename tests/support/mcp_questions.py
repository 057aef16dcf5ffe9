"""An MCP server whose tools ask the user (elicitation), written with the official SDK:

    python -m tests.support.mcp_questions LOG_FILE [--only-2025]

Over stdio. It speaks both protocol eras; with --only-2025 it answers `server/discover` as a
server of 2025-11-25 does (it has no such method), so a client falls back to `initialize`.
At 2025-11-25 a question is a request of the server's own, sent during the call; at
2026-07-28 it is the call's result (`InputRequiredResult`), and the client calls again with
the answer.

`book` asks for a form (a name and a number of guests), `visit` asks the user to go to a URL.
LOG_FILE gets a JSON line when a tool asks (`asked`), when it has its answer (`answered`,
with the action and content) and when its call is cancelled while it waits (`cancelled`).
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import (
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitRequestURLParams,
    InputRequiredResult,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from tests.support.mcp_2025 import serve_stdio

LOG = sys.argv[1]

ONLY_2025 = "--only-2025" in sys.argv
URL = "https://example.com/sign?form=42&who=you"
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1, "description": "Whose table"},
        "guests": {"type": "integer", "minimum": 1, "maximum": 10},
    },
    "required": ["name", "guests"],
}


def record(event: str, **fields: object) -> None:
    with open(LOG, "a", encoding="utf-8") as file:
        file.write(json.dumps({"event": event, "at": time.monotonic(), **fields}) + "\n")


server = MCPServer("parley-questions-test")

Asked = tuple[str, dict[str, Any] | None] | InputRequiredResult


async def ask(
    ctx: Context, tool: str, params: ElicitRequestFormParams | ElicitRequestURLParams
) -> Asked:
    """The user's (action, content), or (at 2026-07-28, before the answer) the result that
    asks for it."""
    protocol = ctx.session.protocol_version
    if protocol in MODERN_PROTOCOL_VERSIONS:
        answer = (ctx.input_responses or {}).get(tool)
        if answer is None:
            record("asked", tool=tool, protocol=protocol)
            return InputRequiredResult(input_requests={tool: ElicitRequest(params=params)})
        data = answer if isinstance(answer, dict) else answer.model_dump(exclude_none=True)
        return data["action"], data.get("content")
    record("asked", tool=tool, protocol=protocol)
    session = ctx.request_context.session
    try:
        if isinstance(params, ElicitRequestURLParams):
            result = await session.elicit_url(
                params.message, params.url, f"{tool}-1", ctx.request_id
            )
        else:
            result = await session.elicit_form(
                params.message, params.requested_schema, ctx.request_id
            )
    except anyio.get_cancelled_exc_class():
        record("cancelled", tool=tool)
        raise
    return result.action, result.content


def answered(tool: str, asked: Asked, ctx: Context) -> str | InputRequiredResult:
    if isinstance(asked, InputRequiredResult):
        return asked
    action, content = asked
    record(
        "answered", tool=tool, action=action, content=content, protocol=ctx.session.protocol_version
    )
    if action != "accept":
        return f"{tool}: the user chose {action}"
    return f"{tool}: accepted {json.dumps(content, sort_keys=True)}"


@server.tool()
async def book(ctx: Context) -> str | InputRequiredResult:
    """Books a table: asks the user for a name and a number of guests."""
    params = ElicitRequestFormParams(
        message="Whose table, and for how many?", requested_schema=SCHEMA
    )
    return answered("book", await ask(ctx, "book", params), ctx)


@server.tool()
async def visit(ctx: Context) -> str | InputRequiredResult:
    """Asks the user to sign a form on a web page."""
    params = ElicitRequestURLParams(message="Please sign the form on this page.", url=URL)
    return answered("visit", await ask(ctx, "visit", params), ctx)


if __name__ == "__main__":
    anyio.run(serve_stdio, server, ONLY_2025)
