"""The turn's tree as one object: what its loops share, and its one stop. Its parts are driven
through real runs in test_tree_stops.py and test_delegate.py; here the object's own rules."""

from __future__ import annotations

import asyncio

from server.agent.approvals import Approvals, ChatGrants
from server.agent.buffer import ReplyBuffer
from server.agent.steps import ToolStep
from server.agent.tree import Node, Tree
from server.models.registry import ModelEntry
from server.settings import Limits
from server.types import ToolCallJSON


class Loop:
    """A member as the tree sees one: a buffer, a model, whether it calls, and its halt."""

    def __init__(self) -> None:
        self.buffer = ReplyBuffer(10_000, lambda: None)
        self.model: ModelEntry = None  # type: ignore[assignment]  # never read here
        self.in_call = False
        self.halted = 0

    def halt(self) -> None:
        self.halted += 1


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
