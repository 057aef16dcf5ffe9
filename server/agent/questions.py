"""Questions a tool's MCP server asks the user during a call (MCP elicitation): the wait,
the user's answer, and what the step keeps of both.

A question is a pending item of the turn like an approval (server/agent/approvals.py): its
step records it (`questions`, checkpointed with the reply), the stream carries it
(`parley.question`), and the user answers through the API. The wait is part of the one stop
path: `close()` (the run's synchronous `stop`) answers every pending question "cancel", so
a server that asked with a request of its own (MCP 2025-11-25) is told at once, and every
later answer is a 409. A question of the 2026-07-28 protocol is asked inside the call's own
task (the SDK retries the call with the answer): the run's cancel scope ends that wait, and
the retry is never sent. A URL is only shown: Parley never opens it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import anyio

from server.agent.buffer import ReplyBuffer
from server.agent.feed import QuestionAsked
from server.agent.question_schema import check_answer
from server.agent.steps import ToolStep
from server.agent.toolbox import Answer, Question
from server.errors import ConflictError
from server.types import QuestionAction, QuestionJSON
from server.types.chunks import QuestionEventJSON

CANCELLED = Answer("cancel")


@dataclass
class _Pending:
    buffer: ReplyBuffer  # the reply of the loop whose call asks
    step: ToolStep
    record: QuestionJSON
    question: Question
    answered: anyio.Event = field(default_factory=anyio.Event)
    answer: Answer = CANCELLED


class Questions:
    """The questions of one turn's tree that wait for the user."""

    def __init__(self, answerable: bool = True) -> None:
        self._answerable = answerable  # False: a turn no one follows (stateless)
        self._pending: dict[str, _Pending] = {}
        self._closed = False

    @property
    def waiting(self) -> int:
        return len(self._pending)

    async def ask(self, buffer: ReplyBuffer, step: ToolStep, question: Question) -> Answer:
        """Ask the user on behalf of `step`'s server and wait for their answer. A turn no one
        can answer (stateless), or one that is stopping, answers "cancel" at once."""
        record: QuestionJSON = {
            "id": f"{step.id}-q{len(step.questions) + 1}",
            "mode": question.mode,
            "message": question.message,
            "state": "asked",
            "asked_at": time.time(),
            "answered_at": None,
        }
        if question.schema is not None:
            record["schema"] = question.schema
        if question.url is not None:
            record["url"] = question.url
        step.questions.append(record)
        if self._closed or not self._answerable:
            _settle(record, CANCELLED)
            buffer.step_changed(step)
            return CANCELLED
        pending = _Pending(buffer, step, record, question)
        self._pending[record["id"]] = pending
        buffer.step_changed(step)
        buffer.publish(QuestionAsked(_event(step, record)))
        try:
            await pending.answered.wait()
        finally:
            # Answered, closed by a stop, or the wait itself cancelled (the call ended): the
            # record says which; a wait cut without an answer is a cancel.
            self._pending.pop(record["id"], None)
            _settle(record, pending.answer)
            buffer.step_changed(step)
        return pending.answer

    def asking(self, step: ToolStep) -> bool:
        """`step`'s server waits for the user's answer now."""
        return any(pending.step is step for pending in self._pending.values())

    def knows(self, question_id: str) -> bool:
        return question_id in self._pending

    def answer(self, question_id: str, action: QuestionAction, content: object = None) -> ToolStep:
        """Take the user's answer; return the step it belongs to. Raises
        BadRequestError for content the form does not take (the question stays asked),
        ConflictError when the question no longer waits."""
        if self._closed:
            raise ConflictError(
                "this question is no longer waiting for an answer: its turn has ended",
                code="not_asking",
            )
        pending = self._pending.get(question_id)
        if pending is None:
            raise ConflictError(
                "this question is not waiting for an answer (it was answered, or its call ended)",
                code="not_asking",
            )
        answer = Answer(action)
        if action == "accept" and pending.question.mode == "form":
            schema = pending.question.schema or {}
            answer = Answer(action, check_answer(schema, content))
        self._settle(pending, answer)
        return pending.step

    def drop(self, step: ToolStep) -> None:
        """`step`'s call ended: a question it left asked (the server asked with a request of
        its own, which outlives the call) is cancelled."""
        for pending in [p for p in self._pending.values() if p.step is step]:
            self._cancel(pending)

    def close(self) -> None:
        """The turn is stopping: every waiting question is cancelled (its server told), and
        no answer is taken from now on."""
        self._closed = True
        for pending in list(self._pending.values()):
            self._cancel(pending)

    def _cancel(self, pending: _Pending) -> None:
        self._settle(pending, CANCELLED)

    def _settle(self, pending: _Pending, answer: Answer) -> None:
        """Answered now, synchronously: the step says so before the asking call goes on."""
        self._pending.pop(pending.record["id"], None)
        pending.answer = answer
        _settle(pending.record, answer)
        pending.buffer.step_changed(pending.step)
        pending.answered.set()


def _settle(record: QuestionJSON, answer: Answer) -> None:
    if record["state"] != "asked":
        return
    record["state"] = answer.action
    record["answered_at"] = time.time()
    if answer.content is not None:
        record["content"] = answer.content


def _event(step: ToolStep, record: QuestionJSON) -> QuestionEventJSON:
    event: QuestionEventJSON = {
        "question_id": record["id"],
        "call_id": step.id,
        "server": step.server,
        "tool": step.name,
        "mode": record["mode"],
        "message": record["message"],
    }
    if "schema" in record:
        event["schema"] = record["schema"]
    if "url" in record:
        event["url"] = record["url"]
    return event
