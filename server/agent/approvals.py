"""Asking before a tool acts (issue 17): which calls wait for the user, the wait, and the
user's decision.

A call to a tool trusted "ask" (the default for an MCP server's tools) or "chat" waits for a
decision, unless the user allowed that tool for this chat; "allow" runs at once; "never" is
refused unasked. The wait is an `anyio.Event` inside the run's cancel scope, so Stop, a
hang-up or shutdown end it like anything else the run awaits; `close()` (called by the run's
synchronous `stop`) makes every later decision a 409, so nothing runs once the run stops. The
model is not leased while a call waits (it is leased per model call only).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import anyio

from server.agent.steps import DENIED, ToolStep
from server.errors import ConflictError
from server.types import Decision, Remember, Trust

Verdict = Literal["run", "ask", "refuse"]


class ChatGrants:
    """Tools the user allowed "for this chat", per conversation, for as long as Parley runs.

    Kept in memory on purpose: after a restart every chat asks again, so nothing runs after
    a restart without an approval given since (docs/api.md)."""

    def __init__(self) -> None:
        self._granted: dict[str, set[tuple[str, str]]] = {}

    def granted(self, conversation_id: str, server: str, tool: str) -> bool:
        return (server, tool) in self._granted.get(conversation_id, set())

    def grant(self, conversation_id: str, server: str, tool: str) -> None:
        self._granted.setdefault(conversation_id, set()).add((server, tool))

    def forget(self, conversation_id: str) -> None:
        """The conversation was deleted."""
        self._granted.pop(conversation_id, None)

    def revoke(self, server: str, tool: str | None = None) -> None:
        """The user changed how far this tool (None: every tool of the server) is trusted, or
        the server's entry: every chat's grant of it ends, so the trust set now is the one
        the next call meets (issue 37)."""
        for granted in self._granted.values():
            granted -= {(s, t) for s, t in granted if s == server and tool in (None, t)}


@dataclass
class _Waiting:
    step: ToolStep
    trust: Trust
    decided: anyio.Event = field(default_factory=anyio.Event)


class Approvals:
    """The calls of one turn that wait for the user's decision."""

    def __init__(self, conversation_id: str | None, grants: ChatGrants) -> None:
        self.conversation_id = conversation_id  # None: a turn no one can answer (stateless)
        self._grants = grants
        self._waiting: dict[str, _Waiting] = {}
        self._asked: set[str] = set()  # every call id that waited, decided or not
        self._closed = False

    def verdict(self, step: ToolStep, trust: Trust, held: bool = False) -> Verdict:
        """Whether a call runs at once, waits for the user, or is refused unasked. `held`:
        the injection guard asks, whatever the trust short of "never" (server/agent/guard.py);
        with no one to ask, the call is refused."""
        if trust == "never":
            return "refuse"
        if held:
            return "ask" if self.conversation_id is not None else "refuse"
        if trust == "allow":
            return "run"
        if self.conversation_id is None:
            return "refuse"
        if self._grants.granted(self.conversation_id, step.server, step.name):
            return "run"
        return "ask"

    def ask(self, step: ToolStep, trust: Trust) -> None:
        """The call waits for the user from now (a decision may come before `wait`)."""
        step.status = "awaiting_approval"
        self._waiting[step.id] = _Waiting(step, trust)
        self._asked.add(step.id)

    async def wait(self, step: ToolStep) -> bool:
        """Until the user decides on an asked call: True if allowed. Cancelled by the run's
        stop, like any await of the run."""
        waiting = self._waiting.get(step.id)
        if waiting is not None:
            try:
                await waiting.decided.wait()
            finally:
                self._waiting.pop(step.id, None)
        return step.status == "running"

    def close(self) -> None:
        """The run is stopping: no decision is taken from now on."""
        self._closed = True

    def knows(self, call_id: str) -> bool:
        return call_id in self._asked

    def decide(self, call_id: str, decision: Decision, remember: Remember) -> list[ToolStep]:
        """Take the user's decision on a waiting call; return the steps it changed (the
        call's first; an allow for the chat also frees the same tool's other waiting calls).
        Raises ConflictError when the call is not waiting (decided, or its turn ends)."""
        if self._closed:
            raise ConflictError(
                "this call is no longer waiting for a decision: its turn has ended",
                code="not_awaiting_approval",
            )
        waiting = self._waiting.pop(call_id, None)
        if waiting is None:
            raise ConflictError(
                "this call is not waiting for a decision (it was decided already)",
                code="not_awaiting_approval",
            )
        step = waiting.step
        changed = [step]
        if decision == "deny":
            step.end("denied", DENIED)
        else:
            step.approve()
            if (remember == "chat" or waiting.trust == "chat") and self.conversation_id:
                self._grants.grant(self.conversation_id, step.server, step.name)
                for other in list(self._waiting.values()):
                    # A call the injection guard holds is shown and decided on its own.
                    same = (other.step.server, other.step.name) == (step.server, step.name)
                    if same and other.step.guard is None:
                        del self._waiting[other.step.id]
                        other.step.approve()
                        other.decided.set()
                        changed.append(other.step)
        waiting.decided.set()
        return changed
