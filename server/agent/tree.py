"""One turn's tree of agent loops, as one object: the run's own loop (server/agent/loop.py),
the sub-agents its `delegate` calls start (server/agent/children.py) and compaction's
summarising loops (server/agent/compaction.py).

What the loops share lives here once: the calls waiting for the user's decision, the servers'
questions, the calls past their timeout, the call ids taken (a decision names one call of the
whole tree), the loops themselves, and the one stop. A loop's parts (its tool runs, its
children, its compaction) are each handed its `Node` (its id, reply buffer, limits, provenance
and this tree) and the few other things they use, never the loop; a new loop is made through
the `Spawn` function the loop hands them.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Protocol

from server.agent.approvals import Approvals, ChatGrants, Scope
from server.agent.buffer import ReplyBuffer
from server.agent.call_stats import CallStats
from server.agent.delegate import Delegation
from server.agent.overdue import OverdueCalls
from server.agent.provenance import Provenance
from server.agent.questions import Questions
from server.agent.steps import ToolStep
from server.agent.toolbox import ToolBox
from server.errors import ConflictError
from server.limits import Limits
from server.models.base import ChatRequest, StreamEnd
from server.models.registry import ModelEntry
from server.types import (
    MAX_AGENT_DEPTH,
    ActedJSON,
    Decision,
    EndedJSON,
    PartJSON,
    QuestionAction,
    ToolCallJSON,
)
from server.types.chunks import OverdueAction

# A call's id names it in the path of a decision (/tool-calls/{call_id}) and in the history the
# model is sent back; one from the model that is not a plain token is replaced by Parley's own.
# Dots alone are no token: a client resolves "." and ".." segments.
PLAIN_CALL_ID = re.compile(r"(?!\.+$)[A-Za-z0-9_.:-]{1,100}")


class Member(Protocol):
    """What the tree reads of each loop in it."""

    @property
    def model(self) -> ModelEntry: ...

    @property
    def buffer(self) -> ReplyBuffer: ...

    @property
    def in_call(self) -> bool:
        """A model call of it streams now."""
        ...

    def halt(self) -> None:
        """Its model call's work is asked to end (synchronous)."""
        ...


class Runner(Protocol):
    """What a part that made a loop uses of it."""

    @property
    def stats(self) -> CallStats: ...

    @property
    def out_of_steps(self) -> bool: ...

    async def run(self, request: ChatRequest, toolbox: ToolBox | None) -> StreamEnd | None: ...


@dataclass(frozen=True)
class Node:
    """A loop's place in the tree: what the parts of a loop use of it."""

    id: str
    tree: Tree
    buffer: ReplyBuffer
    limits: Limits
    # What its model read that the user did not write (server/agent/provenance.py).
    provenance: Provenance

    @classmethod
    def root(
        cls, run_id: str, buffer: ReplyBuffer, limits: Limits, approvals: Approvals | None = None
    ) -> Node:
        """The run's own loop's, in a new tree."""
        return cls(run_id, Tree(approvals), buffer, limits, Provenance())

    def below(
        self, loop_id: str, buffer: ReplyBuffer, limits: Limits, provenance: Provenance
    ) -> Node:
        """A loop this one starts, in the same tree."""
        return dataclasses.replace(
            self, id=loop_id, buffer=buffer, limits=limits, provenance=provenance
        )


# Makes a loop of the tree at `node`, on `model`, handing sub-tasks with `delegation` (None:
# it may not). The loop joins the tree as it is made.
Spawn = Callable[[Node, ModelEntry, Delegation | None], Runner]


class Tree:
    def __init__(self, approvals: Approvals | None = None) -> None:
        self.approvals = approvals if approvals is not None else Approvals(None, ChatGrants())
        answerable = self.approvals.conversation_id is not None  # a chat's turn: someone asks
        self.questions = Questions(answerable)
        self.overdue = OverdueCalls(answerable)
        self.stopping = False
        self._ids: set[str] = set()
        self._members: list[Member] = []

    @property
    def members(self) -> tuple[Member, ...]:
        """Every loop of the tree, running or ended, in the order they joined."""
        return tuple(self._members)

    def join(self, member: Member) -> None:
        self._members.append(member)
        if self.stopping:
            member.halt()

    def stop(self) -> None:
        """Synchronous: no decision or answer runs anything from now, and every loop's model
        call is asked to end (the run's cancel scope ends the rest)."""
        self.stopping = True
        self.approvals.close()  # a decision from now on is a 409 and runs nothing
        self.questions.close()  # each server asking is answered "cancel"; later answers 409
        self.overdue.close()
        for member in self._members:
            member.halt()

    def steps(self) -> Iterator[tuple[Member, ToolStep]]:
        """Every step of every loop, with the loop that owns it."""
        for member in self._members:
            for step in member.buffer.parts.steps:
                yield member, step

    def reserve(self, parts: list[PartJSON], depth: int = 0) -> None:
        """The ids a continued reply's earlier steps hold (their sub-agents' too): a new call
        of the reply never takes one (a decision or a follower names a step by its id)."""
        for part in parts:
            if part["type"] != "tool":
                continue
            self._ids.add(part["id"])
            agent = part.get("agent")
            if agent is not None and depth < MAX_AGENT_DEPTH:
                self.reserve(agent["parts"], depth + 1)

    def claim_ids(self, calls: list[ToolCallJSON], fallback: str) -> list[ToolCallJSON]:
        """The calls, each with a plain id no other step of the tree has: a decision names a
        call by its id (a model may repeat ids across steps, or within one). `fallback`: the
        start of Parley's own id for a call whose id is not plain."""
        unique: list[ToolCallJSON] = []
        for index, call in enumerate(calls):
            wanted = call["id"]
            if not PLAIN_CALL_ID.fullmatch(wanted):
                wanted = f"{fallback}-{index}"
            call_id, n = wanted, 1
            while call_id in self._ids:
                n += 1
                call_id = f"{wanted}-{n}"
            self._ids.add(call_id)
            unique.append({**call, "id": call_id})
        return unique

    def receipt(self) -> EndedJSON:
        """What stopping the tree now ends: model calls, tool calls, sub-agents, approval waits
        and servers' questions under way, and the calls that started and may have acted."""
        acted: list[ActedJSON] = []
        tools = agents = approvals = 0
        for _, step in self.steps():
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
            "model_calls": sum(1 for member in self._members if member.in_call),
            "tool_calls": tools,
            "sub_agents": agents,
            "approvals": approvals,
            "questions": self.questions.waiting,
            "may_have_acted": acted,
        }

    # -- the user's answers, on the run's loop (synchronous) --------------------------------

    def decide(self, call_id: str, decision: Decision, scope: Scope) -> ToolStep | None:
        """The user's decision on a call that awaits approval: the step as it is now; None if
        the tree has no such call. ConflictError when it is not waiting (decided, or the turn
        is stopping)."""
        owners = {step.id: member for member, step in self.steps()}
        if not self.approvals.knows(call_id):
            if call_id in owners:
                raise ConflictError(
                    "this call did not wait for a decision", code="not_awaiting_approval"
                )
            return None
        changed = self.approvals.decide(call_id, decision, scope)
        for step in changed:
            owner = owners.get(step.id) or self._members[0]
            owner.buffer.step_changed(step)
        return changed[0]

    def answer_question(
        self, question_id: str, action: QuestionAction, content: object
    ) -> ToolStep | None:
        """The user's answer to a question a server of the tree asks: the step that asks, as
        it is now; None if no question of the tree has that id. ConflictError when it no
        longer waits, BadRequestError for content the form does not take."""
        if not self.questions.knows(question_id):
            asked = (q["id"] for _, step in self.steps() for q in step.questions)
            if question_id in asked:
                raise ConflictError("this question is not waiting for an answer", code="not_asking")
            return None
        return self.questions.answer(question_id, action, content)

    def answer_overdue(self, call_id: str, action: OverdueAction) -> ToolStep | None:
        """The user's answer on a call of the tree that ran for its timeout: the step; None if
        the tree has no call with that id. ConflictError when it is not asked now."""
        if self.overdue.asked(call_id):
            return self.overdue.answer(call_id, action)
        if any(step.id == call_id for _, step in self.steps()):
            raise ConflictError("this call is not waiting for an answer", code="not_overdue")
        return None
