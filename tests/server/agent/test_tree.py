"""The turn's tree as one object: what its loops share, and its one stop. Its parts are driven
through real runs in test_tree_stops.py and test_delegate.py; here the object's own rules."""

from __future__ import annotations

import asyncio

import anyio

from server.agent.approvals import Approvals, ChatGrants
from server.agent.buffer import ReplyBuffer
from server.agent.call_stats import CallStats
from server.agent.children import Children
from server.agent.delegate import Delegation
from server.agent.loop import AgentLoop
from server.agent.steps import ToolStep
from server.agent.toolbox import CombinedToolBox
from server.agent.tree import Node, Tree
from server.limits import AgentLimits
from server.models.base import ChatRequest, StreamEnd
from server.models.registry import ModelEntry
from server.settings import Limits
from server.types import PartJSON, ToolCallJSON
from tests.server.turns.test_run import ThreadBackend


class Loop:
    """A member as the tree sees one: a buffer, a model, whether it calls, and its halt."""

    def __init__(self) -> None:
        self.buffer = ReplyBuffer(10_000, lambda: None)
        self.model: ModelEntry = None  # type: ignore[assignment]  # never read here
        self.in_call = False
        self.halted = 0

    def halt(self) -> None:
        self.halted += 1


STORED = {
    "type": "tool", "id": "", "server": "s", "name": "t", "arguments": "{}",
    "status": "completed", "result": "r", "started_at": 0.0, "ended_at": 1.0,
}  # fmt: skip


def call(call_id: str) -> ToolCallJSON:
    return {"id": call_id, "type": "function", "function": {"name": "f", "arguments": "{}"}}


def test_one_stop_halts_every_loop_and_one_that_joins_later() -> None:
    tree = Tree(Approvals("c1", ChatGrants()))
    first, second = Loop(), Loop()
    tree.join(first)
    tree.join(second)
    tree.stop()
    assert (first.halted, second.halted) == (1, 1)
    assert tree.stopping
    late = Loop()  # a sub-agent that got its slot as the stop came
    tree.join(late)
    assert late.halted == 1
    assert tree.members == (first, second, late)


def test_call_ids_are_unique_across_the_loops_and_plain() -> None:
    tree = Tree()
    taken = tree.claim_ids([call("a"), call("a"), call("../x")], "call-r1-1")
    taken += tree.claim_ids([call("a"), call("..")], "call-r1-child-1")
    ids = [each["id"] for each in taken]
    assert ids == ["a", "a-2", "call-r1-1-2", "a-3", "call-r1-child-1-1"]


def test_a_continued_replys_earlier_ids_are_never_taken_again() -> None:
    tree = Tree()
    inner: PartJSON = {**STORED, "id": "call-r1-1-0"}  # type: ignore[typeddict-item]
    agent = {"task": "t", "instructions": None, "model": "m", "parts": [inner]}
    delegated: PartJSON = {**STORED, "id": "d1", "agent": agent}  # type: ignore[typeddict-item]
    tree.reserve([{"type": "text", "text": "Looking."}, delegated])
    taken = tree.claim_ids([call("d1"), call("not plain!")], "call-r1-1")
    assert [each["id"] for each in taken] == ["d1-2", "call-r1-1-1"]
    assert tree.claim_ids([call("..")], "call-r1-1")[0]["id"] == "call-r1-1-0-2"


def test_the_receipt_counts_every_loops_steps_and_calls() -> None:
    tree = Tree(Approvals("c1", ChatGrants()))
    parent, child = Loop(), Loop()
    tree.join(parent)
    tree.join(child)
    acting = ToolStep(id="w", function="s__write", server="s", name="write", arguments="{}")
    acting.called = True
    parent.buffer.step_added(acting)
    waiting = ToolStep(id="q", function="s__read", server="s", name="read", arguments="{}")
    waiting.status = "awaiting_approval"
    child.buffer.step_added(waiting)
    child.in_call = True
    receipt = tree.receipt()
    assert receipt["tool_calls"] == 1 and receipt["approvals"] == 1
    assert receipt["model_calls"] == 1
    assert receipt["may_have_acted"] == [{"server": "s", "name": "write", "arguments": "{}"}]
    assert [step.id for _, step in tree.steps()] == ["w", "q"]


def test_a_node_below_shares_the_tree_and_nothing_of_its_own() -> None:
    async def scenario() -> None:
        root = Node.root("r1", ReplyBuffer(100, lambda: None), Limits())
        buffer = ReplyBuffer(100, lambda: None)
        below = root.below("r1/c", buffer, Limits(max_steps=2), root.provenance)
        assert below.tree is root.tree and below.buffer is buffer
        assert below.limits.max_steps == 2 and root.limits.max_steps != 2

    asyncio.run(scenario())


def test_a_sub_agent_waiting_for_a_slot_already_uses_its_model() -> None:
    """Its model is in use from the moment the call asked for it: a model removed or unloaded
    while the sub-agent waits would fail it when its turn comes."""

    async def scenario() -> None:
        first_model = ModelEntry(ThreadBackend(tokens=0, per_token=0.0))  # type: ignore[arg-type]
        other_model = ModelEntry(ThreadBackend(tokens=0, per_token=0.0))  # type: ignore[arg-type]
        one_at_once = Limits(agents=AgentLimits(children_at_once=1))
        root = Node.root("r1", ReplyBuffer(10_000, lambda: None), one_at_once)
        release = anyio.Event()

        class Child:
            def __init__(self, node: Node, model: ModelEntry, delegation: object) -> None:
                self.buffer, self.model, self.in_call = node.buffer, model, False
                self.stats, self.out_of_steps = CallStats(), False
                node.tree.join(self)

            def halt(self) -> None:
                return None

            async def run(self, request: ChatRequest, toolbox: object) -> StreamEnd | None:
                await release.wait()
                return StreamEnd("stop")

        delegation = Delegation(lambda name: other_model, one_at_once.agents)
        children = Children(root, first_model, delegation, Child, lambda usage: None)  # type: ignore[arg-type]
        box = CombinedToolBox([])
        steps = [ToolStep(f"d{n}", "delegate", "", "delegate", "{}") for n in (1, 2)]
        async with anyio.create_task_group() as group:
            group.start_soon(children.run, steps[0], {"task": "one"}, box)
            await anyio.wait_all_tasks_blocked()
            group.start_soon(children.run, steps[1], {"task": "two", "model": "other"}, box)
            await anyio.wait_all_tasks_blocked()  # the second waits for the one slot
            assert any(member.model is other_model for member in root.tree.members)
            release.set()

    anyio.run(scenario)


def test_a_loop_of_a_stopped_tree_calls_no_model() -> None:
    async def scenario() -> None:
        model = ModelEntry(ThreadBackend(tokens=5, per_token=0.0))  # type: ignore[arg-type]
        root = Node.root("r1", ReplyBuffer(10_000, lambda: None), Limits())
        root.tree.stop()
        loop = AgentLoop(root, model)  # outside any cancelled scope: the tree's stop alone
        asked = ChatRequest(messages=[{"role": "user", "content": "hi"}])
        assert await loop.run(asked, None) is None
        assert loop.stats.model_calls == 0 and not model.lease.in_use

    anyio.run(scenario)
