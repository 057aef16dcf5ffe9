"""An MCP server for the tests, written with the official SDK, run over stdio:

    python -m tests.support.mcp_tools LOG_FILE [--http PORT]

(over streamable HTTP at http://127.0.0.1:PORT/mcp with --http)

Every call, cancellation and end is appended to LOG_FILE as a JSON line with
`time.monotonic()` (one clock for every process on the machine), so a test can tell when
the server learnt of a cancellation, and that a cancelled call never finished.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations

LOG = sys.argv[1] if len(sys.argv) > 1 else os.devnull
server = MCPServer("parley-test-tools")


def record(event: str, **fields: object) -> None:
    with open(LOG, "a", encoding="utf-8") as file:
        file.write(json.dumps({"event": event, "at": time.monotonic(), **fields}) + "\n")


@server.tool()
async def echo(text: str) -> str:
    """Say the text back."""
    record("call", tool="echo", text=text)
    return f"echo: {text}"


@server.tool()
async def add(a: int, b: int) -> str:
    """Add two numbers."""
    record("call", tool="add", a=a, b=b)
    return str(a + b)


@server.tool()
async def slow(seconds: float, tag: str = "") -> str:
    """Wait, then answer; a cancellation is recorded."""
    record("call", tool="slow", tag=tag)
    try:
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        record("cancelled", tool="slow", tag=tag)
        raise
    record("done", tool="slow", tag=tag)
    return f"slept {seconds} s"


@server.tool()
def stubborn(seconds: float, tag: str = "") -> str:
    """Blocks a thread: cannot be interrupted (it ignores cancellation)."""
    record("call", tool="stubborn", tag=tag)
    time.sleep(seconds)
    record("done", tool="stubborn", tag=tag)
    return "late result"


@server.tool()
async def crash() -> str:
    """The server dies in the middle of the call."""
    record("call", tool="crash")
    print("about to crash", file=sys.stderr, flush=True)
    os._exit(3)


@server.tool()
async def fail() -> str:
    """A tool that reports an error."""
    raise ValueError("this tool always fails")


@server.tool()
async def environment() -> str:
    """The names of the environment variables the server got."""
    return " ".join(sorted(os.environ))


@server.tool()
async def spawn(ignore_term: bool = False) -> str:
    """Start a child process (`sleep 600`) in the server's process group; return its pid."""
    trap = "trap '' TERM; " if ignore_term else ""
    child = subprocess.Popen(["sh", "-c", f"{trap}sleep 600"])  # noqa: ASYNC220 (at once)
    record("spawned", pid=child.pid)
    return str(child.pid)


@server.tool()
async def danger(target: str = "") -> str:
    """Does something the user must approve first (tests of approval record every call)."""
    record("call", tool="danger", target=target)
    return f"did something dangerous to {target!r}"


@server.tool()
async def progressing(steps: int, pause: float, ctx: Context, tag: str = "") -> str:
    """Works in steps, reporting its progress after each; a cancellation is recorded."""
    record("call", tool="progressing", tag=tag)
    try:
        for done in range(1, steps + 1):
            await anyio.sleep(pause)
            await ctx.report_progress(done, steps, f"step {done} of {steps}")
            record("progress", tool="progressing", tag=tag, done=done)
    except anyio.get_cancelled_exc_class():
        record("cancelled", tool="progressing", tag=tag)
        raise
    record("done", tool="progressing", tag=tag)
    return f"{steps} steps done"


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
async def look(seconds: float, tag: str = "") -> str:
    """Reads something (it says it changes nothing), slowly."""
    record("call", tool="look", tag=tag)
    try:
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        record("cancelled", tool="look", tag=tag)
        raise
    return "looked"


@server.tool()
async def grow(ctx: Context) -> str:
    """Adds the tool `grown` and tells the client its tool list changed."""

    async def grown() -> str:
        """A tool that did not exist when the server started."""
        return "grown"

    server.add_tool(grown)
    # Both eras: the 2025 notification on the connection, and the 2026-07-28 event to the
    # client's `subscriptions/listen` stream (where the notification is not sent).
    await ctx.session.send_tool_list_changed()
    await ctx.notify_tools_changed()
    record("grew")
    return "added a tool"


@server.tool()
async def big(chars: int) -> str:
    """A long result."""
    return "x" * chars


if __name__ == "__main__":
    if os.environ.get("MCP_TEST_FAIL_AT_START"):
        print("cannot start: scripted failure", file=sys.stderr, flush=True)
        sys.exit(2)
    if "--http" in sys.argv:
        port = int(sys.argv[sys.argv.index("--http") + 1])
        server.run("streamable-http", host="127.0.0.1", port=port)
    else:
        anyio.run(server.run_stdio_async)
