"""The MCP servers the user configured: started once at launch (in the background), kept
running, changed when the configuration changes, stopped at shutdown; and the tools they
offer, fixed per turn.

Only servers in the configuration ever run, and they run without Parley's environment
(server/tools/stdio.py): Parley's API token never reaches them.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import anyio
import anyio.abc
import anyio.to_thread
import mcp_types

from server.agent import effects
from server.agent.approvals import ChatGrants
from server.agent.names import function_name
from server.agent.toolbox import Ask, Progress, ToolBox, ToolOutcome, ToolTarget
from server.errors import ToolCallError
from server.limits import StopTimes, ToolLimits
from server.text import valid_unicode
from server.tools.config import McpConfigFile, ServerEntry
from server.tools.mcp_server import McpServer, signed_out_words
from server.tools.redirects import PendingRedirects
from server.tools.sign_in import Flow, SignIn
from server.tools.tokens import TokenStore
from server.tools.tool_effects import effect_of
from server.types import Trust
from server.types.tools import ToolServerConfigJSON, ToolsJSON, ToolsSummaryJSON

FILE_POLL_S = ToolLimits.config_poll  # server/limits.py
INSTRUCTIONS_MOST = ToolLimits.instructions_chars
# An entry's keys a running server does not depend on (a change restarts nothing).
TRUST_KEYS = ("trust", "toolTrust", "toolEffect", "guard", "timeout", "toolTimeout")


class ToolManager:
    def __init__(
        self,
        config: McpConfigFile,
        grants: ChatGrants | None = None,
        stop_times: StopTimes | None = None,
    ) -> None:
        self.config = config
        # Each change of a server's entry or a tool's trust ends the chats' grants of it.
        self._grants = grants or ChatGrants()
        self.servers: dict[str, McpServer] = {}
        self._stop_times = stop_times or StopTimes()
        self._tg: anyio.abc.TaskGroup | None = None
        # One change at a time: two at once for one name would leave a server running
        # that no entry stands for.
        self._changing = anyio.Lock()
        # Remote servers' sign-ins: their tokens, and the flows waiting for the browser.
        self.tokens = TokenStore()
        self.redirects = PendingRedirects()

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Run the configured servers while inside, following the file's hand edits; stop them
        all (bounded) on the way out."""
        async with anyio.create_task_group() as tg:
            self._tg = tg
            for entry in self.config.entries():
                self._start(entry)
            tg.start_soon(self._follow_file)
            try:
                yield
            finally:
                self._tg = None
                with anyio.CancelScope(shield=True):
                    await self._stop(list(self.servers.values()))
                tg.cancel_scope.cancel()

    def _start(self, entry: ServerEntry) -> McpServer:
        sign_in = None
        if entry.transport == "http":
            sign_in = SignIn(entry.name, entry.url, self.tokens, self.redirects, entry.oauth)
        server = McpServer(entry, self._stop_times, sign_in)
        self.servers[entry.name] = server
        if self._tg is not None and server.runnable:
            self._tg.start_soon(server.run, name=f"mcp server {entry.name}")
        return server

    async def _stop(self, servers: list[McpServer]) -> None:
        """Stop servers at once, together; each takes at most its StopTimes."""
        for server in servers:
            server.stop()
        bound = self._stop_times.grace + self._stop_times.terminate + 3.0
        with anyio.move_on_after(bound):
            for server in servers:
                if server.runnable:
                    await server.wait_stopped()

    # -- the configuration ---------------------------------------------------------------

    def describe(self) -> ToolsJSON:
        return {
            "config_path": str(self.config.path),
            "config_error": self.config.error,
            "servers": [server.json() for server in self.servers.values()],
        }

    def summary(self) -> ToolsSummaryJSON:
        ready = [s for s in self.servers.values() if s.state == "ready"]
        return {
            "servers": len(self.servers),
            "ready": len(ready),
            "tools": sum(len(s.tools) for s in ready),
        }

    async def put(self, name: str, config: ToolServerConfigJSON) -> McpServer:
        """Add or change a server: the file is written (raises ConfigEntryError, OSError),
        the old server stopped and the new one started."""
        async with self._changing:
            await anyio.to_thread.run_sync(self.config.put, name, config)
            await self._apply(restart=name)
            return self.servers[name]

    async def set_tool_trust(self, name: str, tool: str, trust: Trust | None) -> McpServer | None:
        """Set (None: clear) one tool's trust: written to the file (raises ConfigEntryError,
        OSError) and used from the next call on, without restarting the server. None if no
        server has that name."""
        return await self.set_per_tool(name, tool, {"toolTrust": trust})

    async def set_per_tool(
        self, name: str, tool: str, values: dict[str, object]
    ) -> McpServer | None:
        """Set (None: clear) one tool's trust (`toolTrust`) and what it can do (`toolEffect`)
        as `values` says, in one write, used from the next call on without a restart; None if
        no server has that name. Raises ConfigEntryError, OSError."""
        async with self._changing:
            entry = await anyio.to_thread.run_sync(self.config.set_per_tool, name, tool, values)
            await self._apply()
            return self.servers.get(name) if entry is not None else None

    async def set_guard(self, name: str, on: bool) -> McpServer | None:
        """Turn the injection guard on or off for a server's tools: written to the file
        (raises ConfigEntryError, OSError), used from the next call on without a restart.
        None if no server has that name."""
        async with self._changing:
            entry = await anyio.to_thread.run_sync(self.config.set_guard, name, on)
            await self._apply()
            return self.servers.get(name) if entry is not None else None

    async def remove(self, name: str) -> bool:
        async with self._changing:
            removed = await anyio.to_thread.run_sync(self.config.remove, name)
            old = self.servers.get(name)
            await self._apply()
            return removed or old is not None

    async def _follow_file(self) -> None:
        """Apply the file's hand edits while Parley runs, like a change from Settings. A file
        broken by hand leaves the servers running as they were (an editor may save half a
        file); its error is shown until it is mended."""
        while True:
            await anyio.sleep(FILE_POLL_S)
            if not await anyio.to_thread.run_sync(self.config.changed):
                continue
            async with self._changing:
                await anyio.to_thread.run_sync(self.config.reload)
                if self.config.error is None:
                    await self._apply()

    async def _apply(self, restart: str | None = None) -> None:
        """Make the running servers those of the file as last read: a server gone is stopped,
        a new one started, a changed one restarted (one whose trust alone changed keeps its
        process); `restart` is restarted in any case. Every changed entry ends the chats'
        grants of its tools."""
        wanted = {entry.name: entry for entry in self.config.entries()}
        for name in [name for name in self.servers if name not in wanted]:
            self._grants.revoke(name)
            await self._stop([self.servers.pop(name)])
            await self.tokens.forget(name)  # a server removed keeps no secret behind
        for name, entry in wanted.items():
            old = self.servers.get(name)
            if old is not None and old.entry.config == entry.config and name != restart:
                continue
            self._grants.revoke(name)
            if old is not None and name != restart and _same_but_trust(old.entry, entry):
                old.entry = entry  # only its trust changed: the running process stays
                continue
            if old is not None:
                await self._stop([self.servers.pop(name)])
            self._start(entry)

    # -- signing in to remote servers --------------------------------------------------

    def sign_in(self, name: str, redirect_uri: str) -> Flow | None:
        """Start signing in to a remote server (None: no such server, or not a remote
        one); it reconnects through the flow."""
        server = self.servers.get(name)
        if server is None or server.sign_in is None or not server.runnable:
            return None
        flow = server.sign_in.begin(redirect_uri)
        server.reconnect()
        return flow

    async def sign_out(self, name: str) -> McpServer | None:
        """Forget a remote server's tokens and end its session (it then asks for a sign-in
        again). None: no such server, or not a remote one."""
        server = self.servers.get(name)
        if server is None or server.sign_in is None:
            return None
        await server.sign_in.sign_out()
        server.reconnect()
        return server

    # -- a turn's tools ------------------------------------------------------------------

    def toolbox(self, only: set[str] | None = None) -> ToolBox:
        """The tools of the servers ready now (of `only`, when given), for one turn."""
        found: dict[str, tuple[McpServer, mcp_types.Tool]] = {}
        instructions: list[str] = []
        for server in self.servers.values():
            if only is not None and server.name not in only:
                continue
            if server.state == "needs_sign_in":
                stand_in = function_name(server.name, SIGN_IN_TOOL)
                found.setdefault(stand_in, (server, _sign_in(server)))
            if server.state != "ready":
                continue
            for tool in server.tools:
                name = function_name(server.name, tool.name)
                found.setdefault(name, (server, tool))
            if server.instructions and server.tools:
                instructions.append(given_instructions(server.name, server.instructions))
        return TurnTools(found, "\n\n".join(instructions))


def given_instructions(server: str, text: str, most: int = INSTRUCTIONS_MOST) -> str:
    """A server's `instructions` as the model is given them with its tools: named, and cut
    at `most` characters with a note (a server's words must not crowd out the chat)."""
    text = valid_unicode(text).strip()
    if len(text) > most:
        text = (
            text[:most]
            + f"\n… [Parley cut these instructions here: {len(text) - most:,} more characters]"
        )
    prefix = function_name(server, "")
    return f"Instructions from the tool server {server} (its tools are named {prefix}…):\n{text}"


SIGN_IN_TOOL = "sign_in_needed"
STAND_IN_META = {"parley": "sign-in stand-in"}  # not a tool any server listed


def _sign_in(server: McpServer) -> mcp_types.Tool:
    """What a turn offers in place of the tools of a server that needs a sign-in: a call
    says so in words (the step shows it), so the model can tell the user why."""
    return mcp_types.Tool(
        name=SIGN_IN_TOOL,
        description=(
            f"The tools of {server.name} are unavailable until the user signs in to it "
            f"(Parley's Settings, Tools). Call this to tell the user: "
            f"{signed_out_words(server.name)}."
        ),
        input_schema={"type": "object", "properties": {}},
        _meta=STAND_IN_META,
    )


def _same_but_trust(old: ServerEntry, new: ServerEntry) -> bool:
    def running_part(entry: ServerEntry) -> dict[str, object]:
        return {k: v for k, v in entry.config.items() if k not in TRUST_KEYS}

    return old.error is None and new.error is None and running_part(old) == running_part(new)


class TurnTools:
    """The tools offered in one turn (ToolBox), fixed when it opened."""

    def __init__(
        self, tools: dict[str, tuple[McpServer, mcp_types.Tool]], instructions: str = ""
    ) -> None:
        self._tools = tools
        self._instructions = instructions  # its servers', as the turn opened

    def specs(self) -> list[dict[str, Any]]:
        return [server.spec(tool) for server, tool in self._tools.values()]

    def instructions(self) -> str:
        return self._instructions

    def target(self, function: str) -> ToolTarget | None:
        found = self._tools.get(function)
        if found is None:
            return None
        server, tool = found
        if tool.name == SIGN_IN_TOOL and tool.meta == STAND_IN_META:
            return ToolTarget(server.name, tool.name, effects.NOTHING)
        # The entry as it is now: an override set in Settings counts for the next call.
        effect = effect_of(tool, server.entry.tool_effect(tool.name))
        return ToolTarget(server.name, tool.name, effect, guarded=server.entry.guard)

    def trust(self, function: str) -> Trust:
        found = self._tools.get(function)
        if found is None:
            return "never"
        server, tool = found
        if tool.name == SIGN_IN_TOOL and tool.meta == STAND_IN_META:
            return "allow"  # it reaches no server: it only says what to do
        return server.entry.effective_trust(tool.name)  # the entry as it is now

    def timeout(self, function: str) -> float | None:
        found = self._tools.get(function)
        return found[0].entry.timeout(found[1].name) if found else None

    async def call(
        self,
        function: str,
        arguments: dict[str, Any],
        progress: Progress | None = None,
        ask: Ask | None = None,
    ) -> ToolOutcome:
        found = self._tools.get(function)
        if found is None:
            raise ToolCallError(f"there is no tool named {function!r}")
        server, tool = found
        if tool.name == SIGN_IN_TOOL and tool.meta == STAND_IN_META:
            if server.state == "ready":
                raise ToolCallError(f"{server.name} is signed in now: its tools come next turn")
            raise ToolCallError(signed_out_words(server.name))
        return await server.call(tool.name, arguments, progress, ask)
