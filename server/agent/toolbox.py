"""What a run calls its tools through: the tools offered in one turn, and how a call went."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from server.agent.effects import UNKNOWN, Effect
from server.errors import ToolCallError
from server.limits import ToolLimits
from server.types import CitationPartJSON, QuestionAction, QuestionMode, ResourceLinkJSON, Trust

# The most of a tool's result that the model sees and the reply keeps (characters).


@dataclass(frozen=True)
class ToolTarget:
    """Which configured server offers a function, the tool's own name there, what it can do
    (server/agent/effects.py), and whether the injection guard watches its calls (its
    server's switch: server/agent/guard.py)."""

    server: str
    tool: str
    effect: Effect = UNKNOWN
    guarded: bool = True

    @property
    def read_only(self) -> bool:
        return self.effect.read_only


@dataclass(frozen=True)
class ToolOutcome:
    """A call's result as text (capped), whether the tool reported an error, the numbered
    sources it gave (which the reply may cite as [n]), and the resources it links to (MCP
    `resource_link`), which the user may open through the same server."""

    text: str
    is_error: bool = False
    sources: tuple[CitationPartJSON, ...] = ()
    links: tuple[ResourceLinkJSON, ...] = ()


Progress = Callable[[float, float | None, str | None], None]
"""A long call's progress as its tool reports it: (progress, total or None, message or None)."""


@dataclass(frozen=True)
class Question:
    """What a tool's server asks the user during a call (MCP elicitation): a form
    (`schema`) or a URL to visit (`url`)."""

    mode: QuestionMode
    message: str
    schema: dict[str, object] | None = None
    url: str | None = None


@dataclass(frozen=True)
class Answer:
    """The user's answer (or the one a stop gives for them): `content` only with an accepted
    form."""

    action: QuestionAction
    content: dict[str, object] | None = None


Ask = Callable[[Question], Awaitable[Answer]]
"""Asks the user a question of the call's server, and waits for the answer (server/agent/
questions.py)."""


class ToolBox(Protocol):
    """The tools offered in one turn, fixed when the turn opens."""

    def specs(self) -> list[dict[str, Any]]:
        """The tools in OpenAI's `tools` format (function names unique in the turn)."""
        ...

    def instructions(self) -> str:
        """What the tools' servers ask the model to know about using them (MCP
        `instructions`), given with the tools; "" for none."""
        ...

    def target(self, function: str) -> ToolTarget | None:
        """The server and tool behind a function name; None for a name not offered."""
        ...

    def trust(self, function: str) -> Trust:
        """How far the tool behind a function is trusted now (server/agent/approvals.py):
        read at each call, so a change in Settings counts for the next call."""
        ...

    def timeout(self, function: str) -> float | None:
        """Seconds a call runs before the user is asked to keep waiting or stop it (None:
        Parley's `--tool-timeout`). A call is never cut without asking."""
        ...

    async def call(
        self,
        function: str,
        arguments: dict[str, Any],
        progress: Progress | None = None,
        ask: Ask | None = None,
    ) -> ToolOutcome:
        """Run one call; `progress` is told what the tool reports of a long call, `ask` asks
        the user what its server asks (None: nobody to ask, a question is cancelled).
        Cancelling the caller cancels the call the way its protocol says (MCP:
        `notifications/cancelled`) and stops waiting at once; a late result is dropped.
        Raises ToolCallError."""
        ...


def capped(text: str, cap: int | None = None) -> str:
    """`text`, cut at `cap` characters (None: `ToolLimits.result_chars`) with a note saying
    how much was left out."""
    cap = ToolLimits.result_chars if cap is None else cap
    if len(text) <= cap:
        return text
    return text[:cap] + f"\n… [Parley cut the result here: {len(text) - cap:,} more characters]"


class CombinedToolBox:
    """Several tool boxes offered as one (the MCP servers' tools, the built-in ones)."""

    def __init__(self, boxes: list[ToolBox]) -> None:
        self._boxes = boxes

    def specs(self) -> list[dict[str, Any]]:
        return [spec for box in self._boxes for spec in box.specs()]

    def instructions(self) -> str:
        return "\n\n".join(text for box in self._boxes if (text := box.instructions()))

    def target(self, function: str) -> ToolTarget | None:
        for box in self._boxes:
            found = box.target(function)
            if found is not None:
                return found
        return None

    def trust(self, function: str) -> Trust:
        for box in self._boxes:
            if box.target(function) is not None:
                return box.trust(function)
        return "never"

    def timeout(self, function: str) -> float | None:
        for box in self._boxes:
            if box.target(function) is not None:
                return box.timeout(function)
        return None

    async def call(
        self,
        function: str,
        arguments: dict[str, Any],
        progress: Progress | None = None,
        ask: Ask | None = None,
    ) -> ToolOutcome:
        for box in self._boxes:
            if box.target(function) is not None:
                return await box.call(function, arguments, progress, ask)
        raise ToolCallError(f"there is no tool named {function!r}")
