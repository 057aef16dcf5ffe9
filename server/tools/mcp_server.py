"""One configured MCP server: started once, kept running, restarted after a crash (with
backoff), stopped at shutdown; and its tools called through its one client.

The client lives in one owner task (`run`), which enters and leaves the SDK's contexts
(they must be left in the task that entered them). Calls come from runs' tasks: the SDK's
client serves concurrent calls, and cancelling a caller tells the server at once and stops
waiting (MCP's `notifications/cancelled`; at 2026-07-28 over HTTP, the end of that call's
POST); a result that comes later is dropped by the SDK (its request id is no longer pending).
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import time
from collections import deque
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx2
import mcp_types
from mcp import Client
from mcp.client import InputRequiredRoundsExceededError, Transport
from mcp.client.subscriptions import (
    PromptsListChanged,
    ResourcesListChanged,
    SubscriptionLost,
    ToolsListChanged,
)
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from server.agent.names import function_name
from server.agent.toolbox import Ask, Progress, ToolOutcome, capped
from server.errors import ToolCallError, UnavailableError
from server.limits import StopTimes, ToolLimits
from server.models.context import estimate_tokens
from server.tools.client import http_client, http_transport, mcp_client, opened
from server.tools.config import ServerEntry
from server.tools.elicitation import Askers
from server.tools.prompts import ServerPrompts
from server.tools.resources import ServerResources, result_links
from server.tools.results import result_text
from server.tools.sign_in import SignIn
from server.tools.stdio import stdio_server
from server.tools.tool_effects import effect_of
from server.types.tools import ToolServerJSON, ToolServerState

log = logging.getLogger(__name__)

START_TIMEOUT_S = ToolLimits.start_timeout  # server/limits.py
BACKOFF_FIRST_S = ToolLimits.backoff_first
BACKOFF_MOST_S = ToolLimits.backoff_most
STABLE_AFTER_S = ToolLimits.stable_after  # server/limits.py
LINKS_MOST = ToolLimits.links_per_result


class McpServer:
    def __init__(
        self,
        entry: ServerEntry,
        stop_times: StopTimes | None = None,
        sign_in: SignIn | None = None,
    ) -> None:
        self.entry = entry
        self.name = entry.name
        self.state: ToolServerState = "disabled" if entry.disabled else "starting"
        self.error: str | None = entry.error
        if entry.error is not None:
            self.state = "error"
        self.tools: list[mcp_types.Tool] = []
        # What its session's server says about using it (MCP `instructions`), while ready;
        # and its resources and prompts, listed when asked for.
        self.instructions: str | None = None
        self.resources = ServerResources(self.name)
        self.prompts = ServerPrompts(self.name)
        self.stderr: deque[str] = deque(maxlen=ToolLimits.stderr_lines)
        self.restarts = 0
        self._client: Client | None = None
        self._changed = anyio.Event()  # the server said its tools changed
        self._stop_times = stop_times or StopTimes()
        self._stopping = anyio.Event()
        self._stopped = anyio.Event()
        self._scope: anyio.CancelScope | None = None  # the running attempt's
        self._askers = Askers(self.name)  # its calls under way, for its questions
        # A remote server's OAuth sign-in (server/tools/sign_in.py); None over stdio.
        self.sign_in = sign_in
        self._reconnect = anyio.Event()
        self._starting: anyio.CancelScope | None = None
        if sign_in is not None:
            sign_in.block = self._blocked
            sign_in.waiting_on_person = self._waiting_on_person

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
            "guard": self.entry.guard,
            "tools": [
                {
                    "name": tool.name,
                    "function": function_name(self.name, tool.name),
                    "description": tool.description or "",
                    "input_schema": tool.input_schema,
                    "trust": self.entry.effective_trust(tool.name),
                    "trust_override": self.entry.tool_trust(tool.name),
                    "effect": effect_of(tool, self.entry.tool_effect(tool.name)).json(),
                    "effect_override": self.entry.tool_effect(tool.name),
                }
                for tool in self.tools
            ],
            "error": self.error,
            "stderr_tail": list(self.stderr),
            "restarts": self.restarts,
            # What its tools' definitions cost a turn's prompt (estimated), for the context meter.
            "definition_tokens": estimate_tokens(json.dumps([self.spec(t) for t in self.tools])),
            "sign_in": self.sign_in.json() if self.sign_in is not None else None,
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
                self._reconnect = anyio.Event()
                with anyio.CancelScope() as self._scope:
                    try:
                        await self._serve()
                    except Exception as exc:
                        if not (self.sign_in is not None and self.sign_in.blocked):
                            self._failed(_describe(exc))
                if self.sign_in is not None:
                    self.sign_in.ended(stopping=self._stopping.is_set())
                if self._stopping.is_set():
                    break
                if self._reconnect.is_set():
                    continue  # a sign-in began, or a sign-out ended the session
                if self.sign_in is not None and self.sign_in.blocked:
                    await self._wait_for_sign_in(self.sign_in)
                    continue
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
            self._client = None
            if self.sign_in is not None:
                self.sign_in.ended(stopping=True)
            if self.state in ("starting", "ready", "needs_sign_in"):
                self.state = "disabled" if self.entry.disabled else "starting"
            self._stopped.set()

    def stop(self) -> None:
        """Ask the owner task to stop the server (it does so within StopTimes).

        A ready server leaves its connection the way it would by itself, uncancelled, so
        that the way out can still talk to the server (over HTTP the SDK ends the session
        there with a DELETE), and is cancelled if that takes longer than `grace`. A server
        still starting is cancelled at once."""
        self._stopping.set()
        if self._scope is None:
            return
        if self.state == "ready":
            by = anyio.current_time() + self._stop_times.grace
            self._scope.deadline = min(self._scope.deadline, by)
        else:
            self._scope.cancel()

    async def wait_stopped(self) -> None:
        await self._stopped.wait()

    def reconnect(self) -> None:
        """Connect again now (a sign-in began, a sign-out ended the session): a server
        waiting for a sign-in or a restart tries at once, one starting starts over, a ready
        one leaves its session the way it would by itself (its DELETE sent)."""
        self._reconnect.set()
        if self._scope is not None and self.state == "starting":
            self._scope.cancel()

    def _blocked(self) -> None:
        """The sign-in says the attempt cannot go on without the user: it ends now."""
        if self._scope is not None:
            self._scope.cancel()

    def _waiting_on_person(self, waiting: bool) -> None:
        """The browser takes as long as the user does: no start deadline meanwhile."""
        if self._starting is not None:
            now = anyio.current_time()
            self._starting.deadline = math.inf if waiting else now + START_TIMEOUT_S

    async def _wait_for_sign_in(self, sign_in: SignIn) -> None:
        await sign_in.discover()  # before the state says so: the status names the issuer
        self.state, self.error = "needs_sign_in", None
        async with anyio.create_task_group() as group:
            group.start_soon(_cancel_when, self._stopping, group.cancel_scope)
            await self._reconnect.wait()
            group.cancel_scope.cancel()

    async def _serve(self) -> None:
        self._changed = anyio.Event()

        async def on_message(message: object) -> None:
            # Not awaited work: the session's own receive loop runs this.
            if isinstance(message, mcp_types.ToolListChangedNotification):
                self._changed.set()
            elif isinstance(message, mcp_types.ResourceListChangedNotification):
                self.resources.changed()
            elif isinstance(message, mcp_types.PromptListChangedNotification):
                self.prompts.changed()

        async with self._connection() as (transport, closed):
            # The start (the protocol's negotiation, the listing of the tools) has a deadline,
            # lifted once the server is ready. A scope around it all, not `fail_after` around
            # the client's entry: that entry leaves the SDK's task group open, and a scope
            # entered before it cannot be left before it.
            with anyio.CancelScope(deadline=anyio.current_time() + START_TIMEOUT_S) as starting:
                self._starting = starting
                async with mcp_client(transport, on_message, self._askers.on_question) as client:
                    tools = [tool for tool in await _list_tools(client) if self._usable(tool)]
                    starting.deadline = math.inf
                    await self._ready(client, tools, closed)
            if starting.cancelled_caught:
                raise TimeoutError
            if self._stopping.is_set() or self._reconnect.is_set():
                return
            # A crash: its exit code, for the reason shown.
            with anyio.move_on_after(ToolLimits.exit_code_wait):
                while getattr(self._process, "returncode", 0) is None:  # noqa: ASYNC110
                    await anyio.sleep(0.02)
        self._failed(self._exit_reason())

    async def _ready(
        self, client: Client, tools: list[mcp_types.Tool], closed: anyio.Event
    ) -> None:
        """Serve calls until the connection closes (a crash) or the server is stopped."""
        self.tools, self._client = tools, client
        self.instructions = client.instructions
        self.state, self.error = "ready", None
        if self.sign_in is not None:
            self.sign_in.connected()
        log.info(
            "MCP server %r ready with %d tools (protocol %s)",
            self.name,
            len(tools),
            client.protocol_version,
        )
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(self._follow_tool_list, client)
                group.start_soon(_cancel_when, self._stopping, group.cancel_scope)
                group.start_soon(_cancel_when, self._reconnect, group.cancel_scope)
                await closed.wait()
                group.cancel_scope.cancel()
        finally:
            self._client = None
            self.tools, self.instructions = [], None
            self.resources.changed()  # the next session's may differ
            self.prompts.changed()

    @contextlib.asynccontextmanager
    async def _connection(self) -> AsyncIterator[tuple[Transport, anyio.Event]]:
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
                yield opened((connection.read, connection.write)), connection.closed
            return
        # HTTP: no process to watch; a failure shows in calls.
        if self.sign_in is not None:
            yield self.sign_in.transport(entry.headers), anyio.Event()
            return
        yield http_transport(entry.url, http_client(entry.headers)), anyio.Event()

    _process: Any = None

    async def _follow_tool_list(self, client: Client) -> None:
        """The server said its tools changed: they are listed again; the next turn offers
        them (a turn's tools are fixed when it opens). At 2025-11-25 it says so in a
        notification (`on_message`); at 2026-07-28 on a `subscriptions/listen` stream."""
        async with anyio.create_task_group() as group:
            if client.protocol_version in MODERN_PROTOCOL_VERSIONS:
                group.start_soon(self._listen_for_changes, client)
            while True:
                await self._changed.wait()
                self._changed = anyio.Event()  # a change told during the listing: again
                try:
                    with anyio.fail_after(START_TIMEOUT_S):
                        listed = await _list_tools(client)
                except (MCPError, TimeoutError, anyio.ClosedResourceError) as exc:
                    log.warning(
                        "MCP server %r: could not list its changed tools: %s", self.name, exc
                    )
                    continue
                self.tools = [tool for tool in listed if self._usable(tool)]
                log.info("MCP server %r now has %d tools", self.name, len(self.tools))

    async def _listen_for_changes(self, client: Client) -> None:
        """At 2026-07-28: the lists the server says it tells changes of, followed."""
        caps = client.server_capabilities
        tools = bool(caps.tools and caps.tools.list_changed)
        resources = bool(caps.resources and caps.resources.list_changed)
        prompts = bool(caps.prompts and caps.prompts.list_changed)
        if not (tools or resources or prompts):
            return
        try:
            async with client.listen(
                tools_list_changed=tools,
                resources_list_changed=resources,
                prompts_list_changed=prompts,
            ) as changes:
                async for change in changes:
                    if isinstance(change, ToolsListChanged):
                        self._changed.set()
                    elif isinstance(change, ResourcesListChanged):
                        self.resources.changed()
                    elif isinstance(change, PromptsListChanged):
                        self.prompts.changed()
        except (MCPError, SubscriptionLost, TimeoutError, anyio.ClosedResourceError) as exc:
            log.warning("MCP server %r: cannot follow changes to its lists: %s", self.name, exc)

    def _usable(self, tool: mcp_types.Tool) -> bool:
        """A tool Parley can offer a model: its schema is strict JSON (no NaN: any other cannot
        be sent to a model), and a plain call runs it (one that requires MCP Tasks refuses
        every call made without a task)."""
        if tool.execution is not None and tool.execution.task_support == "required":
            self._skipped(tool.name, "it requires MCP Tasks, which Parley does not use")
            return False
        try:
            json.dumps(tool.input_schema, allow_nan=False)
        except ValueError:
            self._skipped(tool.name, "its schema is not JSON")
            return False
        return True

    def _skipped(self, tool: str, why: str) -> None:
        log.warning("MCP server %r: the tool %r is not offered: %s", self.name, tool, why)
        self.stderr.append(f"[parley] skipped the tool {tool!r}: {why}")

    def _exit_reason(self) -> str:
        code = getattr(self._process, "returncode", None)
        return "the server exited" + (f" (exit code {code})" if code is not None else "")

    def _failed(self, reason: str) -> None:
        self.state = "error"
        tail = [line for line in self.stderr if line.strip()][-1:]
        self.error = reason + (f": {tail[0]}" if tail else "")

    # -- calls (from runs' tasks) ---------------------------------------------------------

    async def call(
        self,
        tool: str,
        arguments: dict[str, Any],
        progress: Progress | None = None,
        ask: Ask | None = None,
    ) -> ToolOutcome:
        """One call, as long as it takes (the caller decides when to stop waiting: a
        cancel tells the server); what the server reports of its progress goes to `progress`,
        what it asks the user to `ask` (server/tools/elicitation.py)."""
        client = self._client
        if self.state == "needs_sign_in" or (self.sign_in is not None and self.sign_in.blocked):
            raise ToolCallError(signed_out_words(self.name))
        if client is None or self.state != "ready":
            why = f": {self.error}" if self.error else ""
            raise ToolCallError(f"the tool server {self.name!r} is not running ({self.state}{why})")

        tell = progress

        async def reported(progress: float, total: float | None, message: str | None) -> None:
            if tell is not None:
                tell(progress, total, message)

        try:
            with self._askers.calling(ask):
                result = await client.call_tool(tool, arguments, progress_callback=reported)
        except MCPError as exc:
            if exc.code == mcp_types.CONNECTION_CLOSED:
                raise ToolCallError(self._stopped_during_call()) from exc
            raise ToolCallError(
                f"the tool server {self.name!r} refused the call: {exc.message}"
            ) from exc
        except (anyio.ClosedResourceError, anyio.BrokenResourceError) as exc:
            raise ToolCallError(self._stopped_during_call()) from exc
        except InputRequiredRoundsExceededError as exc:
            raise ToolCallError(f"the tool server {self.name!r} kept asking: {exc}") from exc
        links = result_links(result, LINKS_MOST)
        return ToolOutcome(capped(result_text(result)), bool(result.is_error), links=links)

    def ready_client(self) -> Client:
        """Its client, for a request of the user's own (resources, prompts). Raises
        UnavailableError while it is not ready."""
        if self._client is None or self.state != "ready":
            why = "it needs a sign-in" if self.state == "needs_sign_in" else self.state
            raise UnavailableError(
                f"the tool server {self.name!r} is not running ({why})", code="server_not_ready"
            )
        return self._client

    def _stopped_during_call(self) -> str:
        if self.sign_in is not None and self.sign_in.blocked:  # its sign-in lapsed mid-call
            return signed_out_words(self.name)
        return f"the tool server {self.name!r} stopped during the call"


def signed_out_words(server: str) -> str:
    """What a turn says when it would use the tools of a server that needs a sign-in."""
    return f"Sign in to {server} to use its tools"


async def _cancel_when(event: anyio.Event, scope: anyio.CancelScope) -> None:
    await event.wait()
    scope.cancel()


async def _list_tools(client: Client) -> list[mcp_types.Tool]:
    tools: list[mcp_types.Tool] = []
    cursor: str | None = None
    for _ in range(100):  # pages; a server that never stops paging is cut off
        listing = await client.list_tools(cursor=cursor)
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
