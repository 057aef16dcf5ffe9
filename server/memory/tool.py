"""`remember`: the model proposes a line for the memory of the chat's scope (its project's,
or that of the chats outside every project). It asks like any tool that writes: the approval
card shows its arguments, so the user reads the very line before it is kept; once allowed,
the line is added with a link to the chat it came from. A stop while it waits runs nothing
(server/agent/tool_runs.py), so nothing is written.

It is offered only where memory is on: while the scope's file exists (the app makes it, empty,
when the user turns memory on; deleting it turns memory off). A chat where no one asked for a
memory pays nothing for it: no tool definitions, no note on tools in its prompt.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from server.agent.effects import WRITES_HERE
from server.agent.toolbox import Ask, Progress, ToolOutcome, ToolTarget
from server.errors import ApiError, ToolCallError
from server.limits import MemoryLimits
from server.memory import format
from server.memory.files import MemoryFile
from server.types import Trust

FUNCTION = "remember"
SERVER = "parley"  # the built-in tools' "server" (server/agent/delegate.py)

SPEC: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": FUNCTION,
        "description": (
            "Save one short fact about the user, their preferences or their work to their "
            "memory, which you are given in every later chat (of this project, when the chat "
            "is in one). Use it only for what will matter in other chats, never for secrets. "
            "The user is asked first and sees the line."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "line": {
                    "type": "string",
                    "description": "the fact, as one sentence about the user "
                    "(e.g. 'The user prefers metric units.')",
                }
            },
            "required": ["line"],
        },
    },
}


class RememberTool:
    """`remember` for one turn of one chat (a ToolBox)."""

    def __init__(
        self, data_dir: Path, project_id: str | None, conversation_id: str, limits: MemoryLimits
    ) -> None:
        self._file = MemoryFile(data_dir, project_id, limits)
        self._conversation_id = conversation_id
        self._limits = limits

    async def memory_on(self) -> bool:
        return await self._file.exists()

    def specs(self) -> list[dict[str, Any]]:
        return [SPEC]

    def instructions(self) -> str:
        return ""

    def target(self, function: str) -> ToolTarget | None:
        return ToolTarget(SERVER, FUNCTION, WRITES_HERE) if function == FUNCTION else None

    def trust(self, function: str) -> Trust:
        # It writes a file the model reads in every later chat: the user sees each line first.
        return "ask"

    def timeout(self, function: str) -> float | None:
        return None  # a small local file, read and written within its own bounds

    async def call(
        self,
        function: str,
        arguments: dict[str, Any],
        progress: Progress | None = None,
        ask: Ask | None = None,
    ) -> ToolOutcome:
        proposed = arguments.get("line")
        if not isinstance(proposed, str):
            raise ToolCallError("'line' must be the text to remember: one short sentence")
        try:
            line = format.entry(proposed, self._conversation_id, self._limits.max_line_chars)
        except ValueError as exc:
            raise ToolCallError(str(exc)) from None
        added: list[bool] = []

        def add(text: str) -> str | None:
            changed = format.with_line(text, line)
            added[:] = [changed is not None]
            return changed

        try:
            await self._file.change(add)
        except ApiError as exc:  # unreadable, kept changing, would pass the bound
            raise ToolCallError(exc.message) from None
        except OSError as exc:
            raise ToolCallError(f"the memory file could not be written: {exc}") from None
        said = format.lines(line)[0].text
        if added and added[0]:
            return ToolOutcome(f"Remembered: {said}")
        return ToolOutcome(f"Already remembered: {said}")


async def remember_tool(
    data_dir: Path, project_id: str | None, conversation_id: str, limits: MemoryLimits
) -> RememberTool | None:
    """`remember` for a turn of the chat, when memory is on for its scope; else None."""
    tool = RememberTool(data_dir, project_id, conversation_id, limits)
    return tool if await tool.memory_on() else None
