"""The sub-agents of one agent loop: started by its `delegate` calls, a few at a
time, each a loop of the same kind inside the parent's step, and stopped with their parent.

Also what the whole tree is asked at a stop: which of its steps is a call id's (a decision on
a child's call), and what the stop ended (the receipt).
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

import anyio

from server.agent import delegate, provenance
from server.agent.buffer import ReplyBuffer
from server.agent.delegate import Delegation, SubAgentView, SubsetToolBox
from server.agent.feed import ApprovalNeeded, CallOverdue, FeedItem, QuestionAsked
from server.agent.provenance import Provenance
from server.agent.steps import ToolStep
from server.agent.toolbox import ToolBox, ToolOutcome, capped
from server.errors import ApiError, ToolCallError
from server.models.base import ChatRequest
from server.types import ActedJSON, EndedJSON
from server.types.chunks import AskingAgentJSON

if TYPE_CHECKING:
    from server.agent.loop import AgentLoop


class Children:
    def __init__(self, parent: AgentLoop, delegation: Delegation | None) -> None:
        self.delegation = delegation
        self.loops: list[AgentLoop] = []  # every child, running or ended, in the order started
        self._parent = parent
        self._slots: anyio.Semaphore | None = None  # made in the loop, on the first call
        self._sent_at: dict[str, float] = {}  # a child's step: when it was last sent
        self._due: set[str] = set()  # a child's step with a send scheduled

    @property
    def offered(self) -> bool:
        return self.delegation is not None and self.delegation.offered

    def adopt(self, buffer: ReplyBuffer, loop_id: str, steps: int) -> AgentLoop:
        """A loop of the tree that is not a `delegate` call's (compaction's summarising):
        the parent's model and approvals, at most `steps` model calls, stopped with the tree."""
        parent = self._parent
        limits = dataclasses.replace(parent.limits, max_steps=steps)
        child = type(parent)(
            loop_id,
            parent.model,
            buffer,
            limits,
            parent.approvals,
            ids=parent.ids,
            questions=parent.questions,
        )
        self.loops.append(child)
        if parent.stopping:
            child.stop()
        return child

    def stop(self) -> None:
        """Every child stops with its parent (synchronous, like the parent's stop)."""
        for child in self.loops:
            child.stop()

    async def run(self, step: ToolStep, arguments: dict[str, object], box: ToolBox) -> ToolOutcome:
        """Run one `delegate` call: a child loop on the task, its parts inside `step`;
        its text is the result. Raises ToolCallError for a call that cannot run."""
        assert self.delegation is not None  # offered, so set
        names = delegate.for_sub_agents([s["function"]["name"] for s in box.specs()])
        asked = delegate.parse(arguments, names)
        parent = self._parent
        try:
            model = parent.model if asked.model is None else self.delegation.resolve(asked.model)
        except ApiError as exc:
            raise ToolCallError(f"cannot use that model: {exc}") from exc
        asking: AskingAgentJSON = {"call_id": step.id, "task": asked.task}
        buffer = ReplyBuffer(
            parent.limits.max_reply_chars,
            on_change=lambda: self._changed(step),
            forward=lambda item: self._forward(asking, item),
        )
        limits = parent.child_limits()
        child = type(parent)(
            f"{parent.id}/{step.id}",
            model,
            buffer,
            limits,
            parent.approvals,
            delegation=self.delegation.child(),
            ids=parent.ids,
            questions=parent.questions,
            # Its task was written by a model that read what the parent read.
            provenance=Provenance(parent.provenance.all()),
        )
        step.agent = SubAgentView(asked, model.name, buffer)
        tools: ToolBox = SubsetToolBox(box, names if asked.tools is None else asked.tools)
        if self._slots is None:
            self._slots = anyio.Semaphore(limits.agents.children_at_once)
        async with self._slots:
            self.loops.append(child)
            if parent.stopping:  # stopped while it waited for a slot
                child.stop()
            try:
                request = ChatRequest(messages=delegate.messages(asked))
                finished = await child.run(request, tools)
            finally:
                parent.stats.add(child.stats.summed)
                parent.buffer.sources.update(buffer.sources)
                # What it read is in its answer's making: the parent's model reads it too.
                read = child.provenance.own()
                parent.provenance.extend(read)
                self._send(step)
        if finished is None and buffer.over_limit:
            raise ToolCallError(f"the sub-agent stopped: {buffer.over_limit}")
        said = capped(buffer.text) or "(the sub-agent gave no answer)"
        if child.out_of_steps:  # the parent must know the task may be unfinished
            said += (
                f"\n\n(The sub-agent reached its limit of {limits.max_steps} steps before it "
                "finished: its last tool calls were not run.)"
            )
        if read:
            parent.provenance.add(provenance.sub_agent(step.id, asked.task, said, read))
        return ToolOutcome(said)

    # -- a child's changes, sent up as its step's -----------------------------------------

    def _forward(self, asking: AskingAgentJSON, item: FeedItem) -> None:
        """A child's feed item: what asks the user (an approval, a call past its timeout) is
        the parent's to show at once, naming the sub-agent that asks (the user must know a
        task they did not write is behind it); the rest is in its step, sent with the step.
        A deeper child's question came through its own parent first, which named it."""
        if isinstance(item, ApprovalNeeded):
            approval = item.approval.copy()
            approval.setdefault("sub_agent", asking)
            self._parent.buffer.publish(ApprovalNeeded(approval))
        elif isinstance(item, QuestionAsked):
            question = item.question.copy()
            question.setdefault("sub_agent", asking)
            self._parent.buffer.publish(QuestionAsked(question))
        elif isinstance(item, CallOverdue):
            overdue = item.overdue.copy()
            overdue.setdefault("sub_agent", asking)
            self._parent.buffer.publish(CallOverdue(overdue))

    def _changed(self, step: ToolStep) -> None:
        """A child's text or steps changed: checkpointed like any part of the reply (the
        run's interval), and its step sent to the followers at most once per interval, so a
        child's every token does not send the whole step again."""
        self._parent.buffer.touched()
        if step.id in self._due:
            return
        wait = self._sent_at.get(step.id, 0.0) + self._interval() - time.monotonic()
        if wait <= 0:
            self._send(step)
            return
        self._due.add(step.id)
        asyncio.get_running_loop().call_later(wait, self._send, step)

    def _send(self, step: ToolStep) -> None:
        self._due.discard(step.id)
        self._sent_at[step.id] = time.monotonic()
        self._parent.buffer.step_changed(step)

    def _interval(self) -> float:
        return self._parent.limits.agents.update_interval


def tree(loop: AgentLoop) -> Iterator[tuple[AgentLoop, ToolStep]]:
    """Every step of a loop and of its children, depth first, with the loop that owns it."""
    for step in loop.buffer.parts.steps:
        yield loop, step
    for child in loop.children.loops:
        yield from tree(child)


def receipt(loop: AgentLoop) -> EndedJSON:
    """What stopping the tree now ends: model calls, tool calls, sub-agents, approval waits
    and servers' questions under way, and the calls that started and may have acted."""
    acted: list[ActedJSON] = []
    tools = agents = approvals = 0
    for _, step in tree(loop):
        if step.status == "awaiting_approval":
            approvals += 1
        elif step.status != "running":
            continue
        elif step.agent is not None:
            agents += 1
        else:
            tools += 1
            if step.called and not step.read_only:
                acted.append(
                    {"server": step.server, "name": step.name, "arguments": step.arguments}
                )
    return {
        "model_calls": sum(1 for each in loops(loop) if each.in_call),
        "tool_calls": tools,
        "sub_agents": agents,
        "approvals": approvals,
        "questions": loop.questions.waiting,  # shared by the tree
        "may_have_acted": acted,
    }


def loops(loop: AgentLoop) -> Iterator[AgentLoop]:
    yield loop
    for child in loop.children.loops:
        yield from loops(child)
