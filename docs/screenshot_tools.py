"""The MCP server docs/screenshot.py gives the app: a made-up project's tools, over stdio.

    python docs/screenshot_tools.py

Its answers are canned (nothing is searched, tested or pushed); they take a little time, as
real tools do, and `run_tests` reports its progress as it goes, so the window draws what it
draws for a real server: steps running, a sub-agent's step with a progress bar, an approval.
"""

from __future__ import annotations

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("workspace")
READS = ToolAnnotations(read_only_hint=True)


@server.tool(annotations=READS)
async def search_code(query: str) -> str:
    """Search the project's source for a text."""
    await anyio.sleep(0.8)
    return (
        f"3 matches for {query!r}:\n"
        "app/auth/session.py:41:    def login(self, user, password):\n"
        "app/auth/tokens.py:18:def expires_at(issued, ttl):\n"
        "tests/auth/test_login.py:12:def test_login_expired_token(client):"
    )


@server.tool(annotations=READS)
async def read_file(path: str) -> str:
    """Read a file of the project."""
    await anyio.sleep(0.5)
    return (
        "def expires_at(issued, ttl):\n"
        "    return datetime.now() + timedelta(seconds=ttl)  # local time, not UTC\n"
    )


@server.tool()
async def run_tests(path: str, ctx: Context) -> str:
    """Run the tests under a path; reports its progress."""
    files = 12
    for done in range(1, files + 1):
        await anyio.sleep(0.7)
        await ctx.report_progress(done, files, f"{done} of {files} test files")
    return "46 passed, 2 failed: test_login_expired_token, test_refresh_rotates_token"


@server.tool()
async def git_push(branch: str, remote: str = "origin", force: bool = False) -> str:
    """Push a branch to a remote."""
    await anyio.sleep(0.5)
    return f"pushed {branch} to {remote}"


if __name__ == "__main__":
    anyio.run(server.run_stdio_async)
