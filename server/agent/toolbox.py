"""What a run calls its tools through: the tools offered in one turn, and how a call went."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

# The most of a tool's result that the model sees and the reply keeps (characters).
RESULT_CAP_CHARS = 16_000


@dataclass(frozen=True)
class ToolTarget:
    """Which configured server offers a function, and the tool's own name there."""

    server: str
    tool: str


@dataclass(frozen=True)
class ToolOutcome:
    """A call's result as text (capped), and whether the tool reported an error."""

    text: str
    is_error: bool = False


class ToolCallError(Exception):
    """A call that produced no result: the server is not running, crashed mid-call, or
    timed out. Its message is what the model (and the user) are told."""


class ToolBox(Protocol):
    """The tools offered in one turn, fixed when the turn opens."""

    def specs(self) -> list[dict[str, Any]]:
        """The tools in OpenAI's `tools` format (function names unique in the turn)."""
        ...

    def target(self, function: str) -> ToolTarget | None:
        """The server and tool behind a function name; None for a name not offered."""
        ...

    async def call(
        self, function: str, arguments: dict[str, Any], time_limit: float
    ) -> ToolOutcome:
        """Run one call. Cancelling the caller cancels the call the way its protocol says
        (MCP: `notifications/cancelled`) and stops waiting at once; a late result is dropped.
        Raises ToolCallError."""
        ...


def capped(text: str, cap: int = RESULT_CAP_CHARS) -> str:
    """`text`, cut at `cap` characters with a note saying how much was left out."""
    if len(text) <= cap:
        return text
    return text[:cap] + f"\n… [Parley cut the result here: {len(text) - cap:,} more characters]"
