"""One configured MCP server: started once, kept running, restarted after a crash (with
backoff), stopped at shutdown; and its tools called through its one client session.

The session lives in one owner task (`run`), which enters and leaves the SDK's contexts
(they must be left in the task that entered them). Calls come from runs' tasks: the SDK's
session serves concurrent calls, and cancelling a caller sends MCP's
`notifications/cancelled` for that request and stops waiting at once; a result that comes
later is dropped by the SDK (its request id is no longer pending).
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
from collections import deque
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx2
import mcp_types
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from server.agent.names import function_name
from server.agent.toolbox import Progress, ToolOutcome, capped
from server.errors import ToolCallError
from server.limits import StopTimes, ToolLimits
from server.models.context import estimate_tokens
from server.tools.config import ServerEntry
from server.tools.results import result_text
from server.tools.stdio import stdio_server
from server.types.tools import ToolServerJSON, ToolServerState

log = logging.getLogger(__name__)

STDERR_LINES = 40
START_TIMEOUT_S = ToolLimits.start_timeout  # server/limits.py
BACKOFF_FIRST_S = ToolLimits.backoff_first
BACKOFF_MOST_S = ToolLimits.backoff_most
STABLE_AFTER_S = ToolLimits.stable_after  # server/limits.py

Streams = tuple[Any, Any]  # what ClientSession reads from and writes to


class McpServer:
    def __init__(self, entry: ServerEntry, stop_times: StopTimes | None = None) -> None:
        self.entry = entry
        self.name = entry.name
        self.state: ToolServerState = "disabled" if entry.disabled else "starting"
        self.error: str | None = entry.error
        if entry.error is not None:
            self.state = "error"
        self.tools: list[mcp_types.Tool] = []
        self.stderr: deque[str] = deque(maxlen=STDERR_LINES)
        self.restarts = 0
        self._session: ClientSession | None = None
        self._stop_times = stop_times or StopTimes()
        self._stopping = anyio.Event()
        self._stopped = anyio.Event()
        self._scope: anyio.CancelScope | None = None  # the running attempt's

    @property
    def runnable(self) -> bool:
        return self.entry.error is None and not self.entry.disabled

    def json(self) -> ToolServerJSON:
        return {
            "name": self.name,
            "config": self.entry.config,
            "transport": self.entry.transport,
            "state": self.state,
            "trust": self.entry.trust,
            "tools": [
                {
                    "name": tool.name,
                    "function": function_name(self.name, tool.name),
                    "description": tool.description or "",
                    "input_schema": tool.input_schema,
                    "trust": self.entry.effective_trust(tool.name),
                    "trust_override": self.entry.tool_trust(tool.name),
                }
                for tool in self.tools
            ],
            "error": self.error,
            "stderr_tail": list(self.stderr),
            "restarts": self.restarts,
            # What its tools' definitions cost a turn's prompt (estimated: issue 42).
            "definition_tokens": estimate_tokens(json.dumps([self.spec(t) for t in self.tools])),
        }

    def spec(self, tool: mcp_types.Tool) -> dict[str, Any]:
        """A tool as the model is offered it (OpenAI's `tools` format)."""
        return {
            "type": "function",
            "function": {
                "name": function_name(self.name, tool.name),
                "description": tool.description or f"{tool.name} (from {self.name})",
                "parameters": tool.input_schema,
            },
        }

    # -- the owner task -------------------------------------------------------------------

    async def run(self) -> None:
        """Keep the server running until `stop()`; restart it after a crash with backoff."""
        try:
            if not self.runnable:
                return
            backoff = BACKOFF_FIRST_S
            while not self._stopping.is_set():
                began = time.monotonic()
                self.state = "starting"
                with anyio.CancelScope() as self._scope:
                    try:
                        await self._serve()
                    except Exception as exc:
                        self._failed(_describe(exc))
                if self._stopping.is_set():
                    break
                if time.monotonic() - began > STABLE_AFTER_S:
                    backoff = BACKOFF_FIRST_S
                log.warning(
                    "MCP server %r: %s; restarting in %.0f s", self.name, self.error, backoff
                )
                with anyio.move_on_after(backoff):
                    await self._stopping.wait()
                backoff = min(backoff * 2, BACKOFF_MOST_S)
                if not self._stopping.is_set():
                    self.restarts += 1
        finally:
            self._session = None
            if self.state in ("starting", "ready"):
                self.state = "disabled" if self.entry.disabled else "starting"
            self._stopped.set()

    def stop(self) -> None:
        """Ask the owner task to stop the server (it does so within StopTimes)."""
        self._stopping.set()
        if self._scope is not None:
            self._scope.cancel()

    async def wait_stopped(self) -> None:
        await self._stopped.wait()

    async def _serve(self) -> None:
        changed = anyio.Event()

        async def on_message(message: object) -> None:
            # Not awaited work: the session's own receive loop runs this.
            if isinstance(message, mcp_types.ToolListChangedNotification):
                changed.set()

        async with (
            self._connection() as (streams, closed),
            ClientSession(*streams, message_handler=on_message) as session,
        ):
            with anyio.fail_after(START_TIMEOUT_S):
                await session.initialize()
                tools = [tool for tool in await _list_tools(session) if self._usable(tool)]
            self.tools, self._session = tools, session
            self.state, self.error = "ready", None
            log.info("MCP server %r ready with %d tools", self.name, len(tools))
            try:
                async with anyio.create_task_group() as group:
                    group.start_soon(self._follow_tool_list, session, changed)
                    await closed.wait()  # a crash; a stop cancels this attempt's scope
                    group.cancel_scope.cancel()
                # Its exit code, for the reason shown.
                with anyio.move_on_after(ToolLimits.exit_code_wait):
                    while getattr(self._process, "returncode", 0) is None:  # noqa: ASYNC110
                        await anyio.sleep(0.02)
            finally:
                self._session = None
                self.tools = []
            if not self._stopping.is_set():
                self._failed(self._exit_reason())

    @contextlib.asynccontextmanager
    async def _connection(self) -> AsyncIterator[tuple[Streams, anyio.Event]]:
        entry = self.entry
        if entry.transport == "stdio":
            async with stdio_server(
                entry.command,
                entry.args,
                entry.env,
                entry.cwd,
                self.stderr.append,
                self._stop_times,
            ) as connection:
                self._process = connection.process
                yield (connection.read, connection.write), connection.closed
            return
        client = httpx2.AsyncClient(headers=entry.headers, timeout=httpx2.Timeout(30.0, read=300.0))
        async with client, streamable_http_client(entry.url, http_client=client) as streams:
            yield (streams[0], streams[1]), anyio.Event()  # HTTP: a failure shows in calls

    _process: Any = None

    async def _follow_tool_list(self, session: ClientSession, changed: anyio.Event) -> None:
        """`notifications/tools/list_changed`: the tools are listed again; the next turn
        offers them (a turn's tools are fixed when it opens)."""
        while True:
            await changed.wait()
            changed = anyio.Event()
            try:
                with anyio.fail_after(START_TIMEOUT_S):
                    listed = await _list_tools(session)
            except (MCPError, TimeoutError, anyio.ClosedResourceError) as exc:
                log.warning("MCP server %r: could not list its changed tools: %s", self.name, exc)
                continue
            self.tools = [tool for tool in listed if self._usable(tool)]
            log.info("MCP server %r now has %d tools", self.name, len(self.tools))

    def _usable(self, tool: mcp_types.Tool) -> bool:
        """A tool whose schema is strict JSON (no NaN): any other cannot be sent to a model."""
        try:
            json.dumps(tool.input_schema, allow_nan=False)
        except ValueError:
            self.stderr.append(f"[parley] skipped the tool {tool.name!r}: its schema is not JSON")
            return False
        return True

    def _exit_reason(self) -> str:
        code = getattr(self._process, "returncode", None)
        return "the server exited" + (f" (exit code {code})" if code is not None else "")

    def _failed(self, reason: str) -> None:
        self.state = "error"
        tail = [line for line in self.stderr if line.strip()][-1:]
        self.error = reason + (f": {tail[0]}" if tail else "")

    # -- calls (from runs' tasks) ---------------------------------------------------------

    async def call(
        self, tool: str, arguments: dict[str, Any], progress: Progress | None = None
    ) -> ToolOutcome:
        """One call, as long as it takes (the caller decides when to stop waiting: a
        cancel tells the server); what the server reports of its progress goes to `progress`."""
        session = self._session
        if session is None or self.state != "ready":
            why = f": {self.error}" if self.error else ""
            raise ToolCallError(f"the tool server {self.name!r} is not running ({self.state}{why})")

        tell = progress

        async def reported(progress: float, total: float | None, message: str | None) -> None:
            if tell is not None:
                tell(progress, total, message)

        try:
            result = await session.call_tool(tool, arguments, progress_callback=reported)
        except MCPError as exc:
            if exc.code == mcp_types.CONNECTION_CLOSED:
                raise ToolCallError(self._stopped_during_call()) from exc
            raise ToolCallError(
                f"the tool server {self.name!r} refused the call: {exc.message}"
            ) from exc
        except (anyio.ClosedResourceError, anyio.BrokenResourceError) as exc:
            raise ToolCallError(self._stopped_during_call()) from exc
        return ToolOutcome(capped(result_text(result)), bool(result.is_error))

    def _stopped_during_call(self) -> str:
        return f"the tool server {self.name!r} stopped during the call"


async def _list_tools(session: ClientSession) -> list[mcp_types.Tool]:
    tools: list[mcp_types.Tool] = []
    cursor: str | None = None
    for _ in range(100):  # pages; a server that never stops paging is cut off
        params = mcp_types.PaginatedRequestParams(cursor=cursor) if cursor else None
        listing = await session.list_tools(params=params)
        tools.extend(listing.tools)
        cursor = listing.next_cursor
        if not cursor:
            break
    return tools


def _describe(exc: Exception) -> str:
    if isinstance(exc, FileNotFoundError):
        return f"command not found: {exc.filename or exc}"
    if isinstance(exc, PermissionError):
        return f"cannot run the command: {exc}"
    if isinstance(exc, TimeoutError):
        return f"the server did not start within {START_TIMEOUT_S:g} s"
    if isinstance(exc, MCPError):
        return f"the server failed: {exc.message}"
    if isinstance(exc, httpx2.HTTPError):
        return f"cannot reach the server: {exc}"
    if isinstance(exc, BaseExceptionGroup):
        first = exc.exceptions[0]
        return _describe(first) if isinstance(first, Exception) else str(first)
    return f"{type(exc).__name__}: {exc}"
