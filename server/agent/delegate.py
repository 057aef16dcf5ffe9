"""Sub-agents: the built-in `delegate` tool, with which the model hands a sub-task
to a child agent — its own instructions, the parent's tools or some of them, another model if
asked for.

A child is an AgentLoop run inside its parent's step (server/agent/loop.py): its model calls,
tool steps and approvals are its own, its text and steps are parts of that step (saved with
the parent's reply, checkpointed like any part), and its text is the step's result the
parent's model reads. It runs inside the parent's cancel scope, so the run's one stop ends
every child with everything else. This module holds what the loop needs to offer and check a
delegation; the loop runs it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from server.agent.buffer import ReplyBuffer
from server.agent.effects import widest
from server.agent.toolbox import Ask, Progress, ToolBox, ToolOutcome, ToolTarget
from server.errors import ToolCallError
from server.limits import AgentLimits
from server.models.registry import ModelEntry
from server.types import AgentPartJSON, ChatMessage, Trust

FUNCTION = "delegate"
SERVER = "parley"  # the built-in tools' "server" (as the documents' search)
TARGET = ToolTarget(SERVER, FUNCTION)
# Tools only the reply's own agent is given: `remember` (server/memory/tool.py) keeps a line
# about the user, whom only that agent talks with. They alone are no reason to delegate.
OWN_TOOLS = frozenset({"remember"})

CHILD_SYSTEM = (
    "You are a sub-agent: another assistant handed you the task below. Do it with the tools "
    "you have, then answer with the result alone: what you found or did, concisely. Your "
    "answer goes back to that assistant, not to the user."
)


@dataclass(frozen=True)
class Delegation:
    """What a turn's agent may hand sub-tasks with: the models, and how deep it may go."""

    resolve: Callable[[str], ModelEntry]  # a model by name; raises NotFoundError
    limits: AgentLimits
    depth: int = 0  # 0: the reply's own agent

    @property
    def offered(self) -> bool:
        return self.depth < self.limits.max_depth

    def child(self) -> Delegation:
        return dataclasses.replace(self, depth=self.depth + 1)


@dataclass(frozen=True)
class Asked:
    """A `delegate` call's arguments, checked."""

    task: str
    instructions: str | None
    tools: list[str] | None  # None: every tool the parent has
    model: str | None


def for_sub_agents(tool_names: list[str]) -> list[str]:
    """Of a loop's tools, those a sub-agent may be given."""
    return [name for name in tool_names if name not in OWN_TOOLS]


def spec(tool_names: list[str]) -> dict[str, Any]:
    """The `delegate` tool in OpenAI's format."""
    tools: dict[str, Any] = {
        "type": "array",
        "items": {"type": "string", "enum": tool_names} if tool_names else {"type": "string"},
        "description": "The tools the sub-agent may use (default: all of yours).",
    }
    return {
        "type": "function",
        "function": {
            "name": FUNCTION,
            "description": (
                "Hand a self-contained sub-task to a sub-agent that works on it with its own "
                "steps and tools and returns its result. Several may run at once: call this "
                "tool several times in one step."
            ),
            "parameters": {
                "type": "object",
                "properties": {
                    "task": {"type": "string", "description": "What the sub-agent must do."},
                    "instructions": {
                        "type": "string",
                        "description": "How it should work, if that matters (optional).",
                    },
                    "tools": tools,
                    "model": {
                        "type": "string",
                        "description": "Another model to use (optional; default: yours).",
                    },
                },
                "required": ["task"],
            },
        },
    }


def parse(arguments: dict[str, object], offered: list[str], limits: AgentLimits) -> Asked:
    """The call's arguments, checked; ToolCallError saying what is wrong (the model reads it)."""
    task = arguments.get("task")
    if not isinstance(task, str) or not task.strip():
        raise ToolCallError("'task' must be a non-empty string: what the sub-agent must do")
    if len(task) > limits.task_chars:
        raise ToolCallError(f"'task' is longer than {limits.task_chars:,} characters")
    instructions = arguments.get("instructions")
    if instructions is not None and not isinstance(instructions, str):
        raise ToolCallError("'instructions' must be a string")
    model = arguments.get("model")
    if model is not None and (not isinstance(model, str) or not model.strip()):
        raise ToolCallError("'model' must be a model's name")
    tools = arguments.get("tools")
    if tools is not None:
        if not isinstance(tools, list) or not all(isinstance(t, str) for t in tools):
            raise ToolCallError("'tools' must be a list of tool names")
        unknown = sorted(set(tools) - set(offered))
        if unknown:
            raise ToolCallError(
                f"no such tool to give: {', '.join(unknown)} (you have: "
                f"{', '.join(offered) or 'none'})"
            )
    return Asked(task.strip(), instructions or None, tools, model.strip() if model else None)


def target(box: ToolBox, arguments: dict[str, object] | ValueError) -> ToolTarget:
    """The `delegate` call's target: it can do whatever the tools its sub-agent may call
    can do (those it names, else all of the parent's), so its effect is the widest of
    theirs; arguments it cannot use count as all of them."""
    names = for_sub_agents([s["function"]["name"] for s in box.specs()])
    chosen = arguments.get("tools") if isinstance(arguments, dict) else None
    if isinstance(chosen, list):
        names = [name for name in chosen if isinstance(name, str) and name in names]
    found = (box.target(name) for name in names)
    return ToolTarget(SERVER, FUNCTION, widest(t.effect for t in found if t is not None))


def messages(asked: Asked) -> list[ChatMessage]:
    system = CHILD_SYSTEM + (f"\n\n{asked.instructions}" if asked.instructions else "")
    return [{"role": "system", "content": system}, {"role": "user", "content": asked.task}]


class SubAgentView:
    """A sub-agent as its step shows it (ToolStep.agent): the task, and what it did so far."""

    def __init__(self, asked: Asked, model: str, buffer: ReplyBuffer) -> None:
        self.asked = asked
        self.model = model
        self.buffer = buffer

    def json(self) -> AgentPartJSON:
        return {
            "task": self.asked.task,
            "instructions": self.asked.instructions,
            "model": self.model,
            "parts": self.buffer.all_json(),
        }

    def partial(self) -> str | None:
        """What it said before it was stopped (None: nothing)."""
        return self.buffer.text or None

    def interrupt_running(self) -> None:
        self.buffer.parts.interrupt_running()

    def changes(self) -> int:
        return sum(step.all_changes() for step in self.buffer.parts.steps)


class SubsetToolBox:
    """Some of a tool box's tools (a sub-agent's, as the `delegate` call chose)."""

    def __init__(self, box: ToolBox, names: list[str]) -> None:
        self._box = box
        self._names = set(names)

    def specs(self) -> list[dict[str, Any]]:
        return [s for s in self._box.specs() if s["function"]["name"] in self._names]

    def instructions(self) -> str:
        return self._box.instructions()

    def target(self, function: str) -> ToolTarget | None:
        return self._box.target(function) if function in self._names else None

    def trust(self, function: str) -> Trust:
        return self._box.trust(function) if function in self._names else "never"

    def timeout(self, function: str) -> float | None:
        return self._box.timeout(function)

    async def call(
        self,
        function: str,
        arguments: dict[str, Any],
        progress: Progress | None = None,
        ask: Ask | None = None,
    ) -> ToolOutcome:
        if function not in self._names:
            raise ToolCallError(f"there is no tool named {function!r}")
        return await self._box.call(function, arguments, progress, ask)
