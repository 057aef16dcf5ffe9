"""A reply's parts as they are made: text and tool steps, in order.

Text stays where the run keeps it (its list of text pieces, which is also the reply's plain
`content`); the parts only record which pieces each text part covers, so a reply without
tools costs nothing more than before.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

from server.agent.toolbox import ToolTarget
from server.agent.untrusted import untrusted
from server.models.base import ToolCallDelta
from server.types import (
    DENIED,
    NEVER_ALLOWED,
    NOT_APPROVED,
    NOT_APPROVED_AT_CRASH,
    NOT_STARTED,
    OPEN_STATUSES,
    AgentPartJSON,
    AllowedJSON,
    CitationPartJSON,
    GuardJSON,
    PartJSON,
    ProgressJSON,
    QuestionJSON,
    ResourceLinkJSON,
    ToolCallJSON,
    ToolPartJSON,
    ToolStatus,
)

__all__ = ["DENIED", "NEVER_ALLOWED", "NOT_APPROVED", "NOT_APPROVED_AT_CRASH", "NOT_STARTED"]


class AgentView(Protocol):
    """A sub-agent as its step shows it (server/agent/delegate.py)."""

    def json(self) -> AgentPartJSON: ...

    def partial(self) -> str | None:
        """What it said so far (None: nothing)."""
        ...

    def interrupt_running(self) -> None:
        """Its own steps not ended yet were stopped."""
        ...

    def changes(self) -> int:
        """A count that grows with every change of a step inside it, at any depth (a field
        set on one is a change the sub-agent may not tell at once: a progress report)."""
        ...


@dataclass
class ToolStep:
    """One tool call of the reply, from the moment the model asked for it."""

    id: str
    function: str  # the name the model called (`server__tool`)
    server: str
    name: str
    arguments: str
    status: ToolStatus = "running"
    result: str | None = None
    started_at: float = field(default_factory=time.time)
    ended_at: float | None = None
    from_tool: bool = False  # its result is the tool's own text (untrusted data)
    called: bool = False  # the call went to its tool (so it may have acted)
    read_only: bool = False  # its tool says it changes nothing (MCP's readOnlyHint)
    agent: AgentView | None = None  # the sub-agent it runs (the `delegate` tool)
    progress: ProgressJSON | None = None  # what its tool last reported of a long call
    overdue: float | None = None  # seconds run when the user was asked to keep waiting
    # What its server asked the user during the call, as asked and answered (the records
    # are changed in place as they are answered: server/agent/questions.py).
    questions: list[QuestionJSON] = field(default_factory=list)
    links: list[ResourceLinkJSON] = field(default_factory=list)  # its result's resource links
    # Why the injection guard asked before this call, and what the model had read by then:
    # saved with the step, so a chat opened later shows why (server/agent/guard.py).
    guard: GuardJSON | None = None
    # Who let it run and how far that allow reached (server/agent/approvals.py), saved too.
    allowed: AllowedJSON | None = None
    # How often it changed: a checkpoint encodes the step again only when this moved
    # (server/agent/buffer.py). Setting any field counts; a change inside one (a question
    # answered in place) counts by `changed()`, which the buffer's `step_changed` calls; a
    # sub-agent's own changes reach its parent's buffer as `touched`.
    changes: int = field(default=0, init=False, repr=False, compare=False)

    def __setattr__(self, name: str, value: object) -> None:
        super().__setattr__(name, value)
        if name != "changes":
            super().__setattr__("changes", self.changes + 1)

    def changed(self) -> None:
        """Something inside the step changed in place: its stored JSON is out of date."""
        self.changes += 1

    def all_changes(self) -> int:
        """How often it changed, with every step of its sub-agent at any depth: a sum of
        counts that only grow, so it moves with any change among them."""
        return self.changes + (self.agent.changes() if self.agent is not None else 0)

    def end(self, status: ToolStatus, result: str | None) -> None:
        """Record how the call ended; a step already ended stays as it was (a late
        result never overwrites an interruption)."""
        if self.status not in OPEN_STATUSES:
            return
        self.status, self.result, self.ended_at = status, result, time.time()

    def target_is(self, target: ToolTarget) -> bool:
        return (self.server, self.name) == (target.server, target.tool)

    def interrupt(self) -> None:
        """The run was stopped before this step ended: the one place that says how (a call
        that waited for the user never ran; one not sent yet never started; a sub-agent keeps
        what it said)."""
        if self.agent is not None:
            self.agent.interrupt_running()
        if self.status == "awaiting_approval":
            self.end("interrupted", NOT_APPROVED)
        elif self.agent is not None:
            self.end("interrupted", self.agent.partial() if self.called else NOT_STARTED)
        else:
            self.end("interrupted", None if self.called else NOT_STARTED)

    def approve(self) -> None:
        """The user allowed the call: it runs from now (its time counts from now)."""
        if self.status == "awaiting_approval":
            self.status, self.started_at = "running", time.time()

    def json(self) -> ToolPartJSON:
        part: ToolPartJSON = {
            "type": "tool",
            "id": self.id,
            "server": self.server,
            "name": self.name,
            "arguments": self.arguments,
            "status": self.status,
            "result": self.result,
            "started_at": self.started_at,
            "ended_at": self.ended_at,
        }
        if self.read_only:
            part["read_only"] = True
        if self.guard is not None:
            part["guard"] = self.guard
        if self.allowed is not None:
            part["allowed"] = self.allowed
        if self.progress is not None:
            part["progress"] = self.progress
        if self.overdue is not None and self.status == "running":
            part["overdue"] = self.overdue
        if self.agent is not None:
            part["agent"] = self.agent.json()
        if self.questions:
            part["questions"] = [question.copy() for question in self.questions]
        if self.links:
            part["links"] = list(self.links)
        return part

    def for_model(self) -> str:
        """What the model is told about this call in its `tool` message."""
        source = f"the tool {self.name}" + (f" of {self.server}" if self.server else "")
        if self.status == "completed":
            return untrusted(self.result or "", source)
        if self.status == "error":
            reason = untrusted(self.result or "", source) if self.from_tool else self.result
            return f"Error: {reason}"
        if self.status == "denied":
            return self.result or DENIED
        return "The call was stopped before it finished."


class CallBuilder:
    """Tool calls put together from a stream's `delta.tool_calls` pieces (by index)."""

    def __init__(self) -> None:
        self._calls: dict[int, dict[str, str]] = {}
        self._arguments: dict[int, list[str]] = {}  # joined once, at the end

    def add(self, delta: ToolCallDelta) -> None:
        call = self._calls.setdefault(delta.index, {"id": "", "name": ""})
        if delta.id and not call["id"]:
            call["id"] = delta.id
        if delta.name and not call["name"]:
            call["name"] = delta.name
        self._arguments.setdefault(delta.index, []).append(delta.arguments)

    def calls(self, id_prefix: str) -> list[ToolCallJSON]:
        """The calls in index order; a call the model gave no id gets one."""
        found: list[ToolCallJSON] = []
        for index in sorted(self._calls):
            call = self._calls[index]
            arguments = "".join(self._arguments[index])
            found.append(
                {
                    "id": call["id"] or f"{id_prefix}-{index}",
                    "type": "function",
                    "function": {"name": call["name"], "arguments": arguments},
                }
            )
        return found

    def __bool__(self) -> bool:
        return bool(self._calls)


def parse_arguments(arguments: str) -> dict[str, Any]:
    """A call's arguments as an object; raises ValueError saying what is wrong with them."""
    if not arguments.strip():
        return {}
    try:
        value = json.loads(arguments)
    except ValueError as exc:
        raise ValueError(f"the arguments are not valid JSON ({exc})") from exc
    if not isinstance(value, dict):
        raise ValueError("the arguments must be a JSON object")
    return value


class ReplyParts:
    """Which text pieces and which tool steps make up the reply, in order."""

    def __init__(self) -> None:
        # [start, end) of text pieces, a step, or a step of an earlier generation (its JSON)
        self._items: list[list[int] | ToolStep | ToolPartJSON] = []
        self.steps: list[ToolStep] = []
        self.citations: list[CitationPartJSON] = []  # in the order first cited

    def text_added(self, piece: int) -> None:
        last = self._items[-1] if self._items else None
        if isinstance(last, list) and last[1] == piece:
            last[1] = piece + 1
        else:
            self._items.append([piece, piece + 1])

    def step_added(self, step: ToolStep) -> None:
        self._items.append(step)
        self.steps.append(step)

    def earlier_step(self, step: ToolPartJSON) -> None:
        """A step a continued reply took before: kept as it was, never run again."""
        self._items.append(step)

    @property
    def items(self) -> list[list[int] | ToolStep | ToolPartJSON]:
        """The parts in order, as kept (read only: a checkpoint encodes them)."""
        return self._items

    @property
    def after_step(self) -> bool:
        """The last part is a tool step (new text starts a new text part)."""
        return bool(self._items) and not isinstance(self._items[-1], list)

    def interrupt_running(self) -> None:
        """Every step not ended yet was stopped."""
        for step in self.steps:
            step.interrupt()

    def json(self, pieces: list[str]) -> list[PartJSON] | None:
        """The parts (the citations last), or None for a reply of text alone (its parts are
        its content)."""
        if not self.steps and not self.citations and all(isinstance(i, list) for i in self._items):
            return None
        return self.all_json(pieces)

    def all_json(self, pieces: list[str]) -> list[PartJSON]:
        """The parts (the citations last), text alone included."""
        parts: list[PartJSON] = []
        for item in self._items:
            if isinstance(item, ToolStep):
                parts.append(item.json())
            elif isinstance(item, dict):
                parts.append(item)
            else:
                parts.append({"type": "text", "text": "".join(pieces[item[0] : item[1]])})
        parts.extend(self.citations)
        return parts
