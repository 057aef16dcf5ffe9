"""Calls of one turn's tree that have run for their timeout: the user is asked whether to keep
waiting or stop each (`parley.overdue`), and answers through the API.

Shared by the tree like its approvals and questions, so one answer route serves a sub-agent's
call too. The wait is inside the run's cancel scope: a stop ends it, and `close()` (the tree's
synchronous stop) makes every later answer a 409.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import anyio

from server.agent.buffer import ReplyBuffer
from server.agent.feed import CallOverdue
from server.agent.steps import ToolStep
from server.errors import ConflictError
from server.types.chunks import OverdueAction, OverdueJSON


@dataclass
class _Asked:
    step: ToolStep
    answered: anyio.Event = field(default_factory=anyio.Event)
    action: OverdueAction = "wait"


class OverdueCalls:
    def __init__(self, answerable: bool) -> None:
        self._answerable = answerable  # False: a turn no one follows (stateless)
        self._asked: dict[str, _Asked] = {}
        self._closed = False

    async def ask(self, buffer: ReplyBuffer, step: ToolStep, waited: float) -> bool:
        """Ask the user whether to keep waiting for `step`'s call, which has run `waited`
        seconds; True: wait on. Nobody to ask: wait on."""
        if not self._answerable:
            return True
        asked = _Asked(step)
        self._asked[step.id] = asked
        step.overdue = round(waited, 1)
        buffer.step_changed(step)
        buffer.publish(CallOverdue(_overdue(step, waited)))
        try:
            await asked.answered.wait()
        finally:
            self._asked.pop(step.id, None)
            step.overdue = None
        buffer.step_changed(step)
        return asked.action == "wait"

    def asked(self, call_id: str) -> bool:
        return call_id in self._asked

    def answer(self, call_id: str, action: OverdueAction) -> ToolStep:
        """The user's answer on an overdue call. ConflictError if it is not asked now."""
        if self._closed or call_id not in self._asked:
            raise ConflictError(
                "this call is not waiting for an answer (it ended, or was answered)",
                code="not_overdue",
            )
        asked = self._asked.pop(call_id)
        asked.action = action
        asked.answered.set()
        return asked.step

    def close(self) -> None:
        """The turn is stopping: no answer is taken from now on (its cancel scope ends the
        waits)."""
        self._closed = True


def _overdue(step: ToolStep, waited: float) -> OverdueJSON:
    return {
        "call_id": step.id,
        "server": step.server,
        "tool": step.name,
        "function": step.function,
        "waited_s": round(waited, 1),
    }
