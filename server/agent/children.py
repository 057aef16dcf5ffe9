"""The sub-agents of one agent loop: started by its `delegate` calls, a few at a time, each a
loop of the turn's tree (server/agent/tree.py) made by the `Spawn` function its parent hands
over, running inside the parent's step; the tree's one stop ends them with their parent.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Callable

import anyio

from server.agent import delegate, provenance
from server.agent.buffer import ReplyBuffer
from server.agent.delegate import Delegation, SubAgentView, SubsetToolBox
from server.agent.feed import ApprovalNeeded, CallOverdue, FeedItem, QuestionAsked
from server.agent.provenance import Provenance
from server.agent.steps import ToolStep
from server.agent.toolbox import ToolBox, ToolOutcome, capped
from server.agent.tree import Node, Spawn
from server.errors import ApiError, ToolCallError
from server.models.base import ChatRequest
from server.models.registry import ModelEntry
from server.types import Usage
from server.types.chunks import AskingAgentJSON


class Children:
    def __init__(
        self,
        parent: Node,
        model: ModelEntry,
        delegation: Delegation | None,
        spawn: Spawn,
        used: Callable[[Usage], None],
    ) -> None:
        """`model`: the parent's, a child's unless its call names another; `spawn` makes a
        child loop; `used` adds a child's model calls' usage to the parent's."""
        self.delegation = delegation
        self._parent = parent
        self._model = model
        self._spawn = spawn
        self._used = used
        self._slots: anyio.Semaphore | None = None  # made in the loop, on the first call
        self._sent_at: dict[str, float] = {}  # a child's step: when it was last sent
        self._due: set[str] = set()  # a child's step with a send scheduled

    @property
    def offered(self) -> bool:
        return self.delegation is not None and self.delegation.offered

    async def run(self, step: ToolStep, arguments: dict[str, object], box: ToolBox) -> ToolOutcome:
        """Run one `delegate` call: a child loop on the task, its parts inside `step`;
        its text is the result. Raises ToolCallError for a call that cannot run."""
        assert self.delegation is not None  # offered, so set
        names = delegate.for_sub_agents([s["function"]["name"] for s in box.specs()])
        asked = delegate.parse(arguments, names, self._parent.limits.agents)
        parent = self._parent
        try:
            model = self._model if asked.model is None else self.delegation.resolve(asked.model)
        except ApiError as exc:
            raise ToolCallError(f"cannot use that model: {exc}") from exc
        asking: AskingAgentJSON = {"call_id": step.id, "task": asked.task}
        buffer = ReplyBuffer(
            parent.limits.max_reply_chars,
            on_change=lambda: self._changed(step),
            forward=lambda item: self._forward(asking, item),
        )
        # A sub-agent's own, shorter, number of steps.
        limits = dataclasses.replace(parent.limits, max_steps=parent.limits.agents.max_steps)
        # Its task was written by a model that read what the parent read.
        read_before = Provenance(parent.provenance.all())
        node = parent.below(f"{parent.id}/{step.id}", buffer, limits, read_before)
        step.agent = SubAgentView(asked, model.name, buffer)
        tools: ToolBox = SubsetToolBox(box, names if asked.tools is None else asked.tools)
        # Made before it waits for a slot: it joins the tree, so its model is in use from the
        # moment the call asked for it (not removed or unloaded while it waits).
        child = self._spawn(node, model, self.delegation.child())
        if self._slots is None:
            self._slots = anyio.Semaphore(limits.agents.children_at_once)
        async with self._slots:
            try:
                request = ChatRequest(messages=delegate.messages(asked))
                finished = await child.run(request, tools)
            finally:
                self._used(child.stats.summed)
                parent.buffer.sources.update(buffer.sources)
                # What it read is in its answer's making: the parent's model reads it too.
                read = node.provenance.own()
                parent.provenance.extend(read)
                self._send(step)
        if finished is None and buffer.over_limit:
            raise ToolCallError(f"the sub-agent stopped: {buffer.over_limit}")
        said = (
            capped(buffer.text, parent.limits.tools.result_chars)
            or "(the sub-agent gave no answer)"
        )
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
