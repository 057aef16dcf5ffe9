"""A checkpoint stores what the reply's parts are, though it encodes only what changed.

`ReplyBuffer.stored()` keeps each part's JSON between checkpoints; after any run of appends,
steps added, steps changed (by a field set, in place, inside a sub-agent) and sources cited,
what it gives must be what encoding `ReplyBuffer.json()` afresh gives.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from server.agent.buffer import ReplyBuffer
from server.agent.delegate import Asked, SubAgentView
from server.agent.steps import ToolStep
from server.storage.store import Store, TurnStart
from server.storage.turn_rows import Earlier
from server.types import CitationPartJSON, PartJSON, QuestionJSON

# Text with what JSON escapes (quotes, backslashes, control characters), what it does not
# (non-ASCII), and citation markers, some cut across two deltas.
CHARACTERS = ["a", "b ", '"', "\\", "\n", "\t", "\x00", "\x1f", "é", "💬", "[", "1", "2", "]"]
TEXT = st.lists(st.sampled_from(CHARACTERS), max_size=12).map("".join)
INDEX = st.integers(min_value=0, max_value=40)
ACTIONS = st.lists(
    st.one_of(
        st.tuples(st.just("text"), TEXT),
        st.tuples(st.just("step"), st.booleans()),  # with a sub-agent or not
        st.tuples(st.just("end"), INDEX, TEXT, st.booleans()),  # told the buffer or not
        st.tuples(st.just("set"), INDEX, st.sampled_from(["progress", "overdue", "links"])),
        st.tuples(st.just("approve"), INDEX),
        st.tuples(st.just("ask"), INDEX),
        st.tuples(st.just("answer"), INDEX),
        st.tuples(st.just("child_text"), INDEX, TEXT),
        st.tuples(st.just("child_step"), INDEX),
        st.tuples(st.just("child_end"), INDEX, TEXT),
        st.tuples(st.just("child_progress"), INDEX),  # a field set, no one told
        st.tuples(st.just("given"), st.integers(min_value=1, max_value=3)),
        st.tuples(
            st.just("checkpoint"),
        ),
    ),
    max_size=60,
)


def source(n: int) -> CitationPartJSON:
    return {"type": "citation", "n": n, "path": f"/d/{n}.md", "page": None, "lines": [n, n + 2],
            "quote": f'Passage "{n}"'}  # fmt: skip


EARLIER: list[PartJSON] = [
    {"type": "text", "text": "Before: [1]"},
    {"type": "tool", "id": "old", "server": "s", "name": "t", "arguments": "{}",
     "status": "completed", "result": "r\n", "started_at": 1.0, "ended_at": 2.5},
    {**source(1), "cited": True},
]  # fmt: skip


class Driven:
    """A reply driven the way the agent loop and its sub-agents drive one."""

    def __init__(self, resumed: bool) -> None:
        self.buffer = ReplyBuffer(1_000_000, lambda: None)
        if resumed:
            self.buffer.resume(Earlier("Before: [1]", EARLIER))
        self.steps: list[ToolStep] = []
        self.children: list[tuple[ToolStep, ReplyBuffer]] = []

    def pick(self, index: int) -> ToolStep | None:
        return self.steps[index % len(self.steps)] if self.steps else None

    def new_step(self, buffer: ReplyBuffer, number: int) -> ToolStep:
        step = ToolStep(f"c{number}", "s__t", "s", "t", '{"q": "x"}')
        buffer.step_added(step)
        buffer.step_changed(step)
        return step

    def act(self, action: tuple[Any, ...]) -> None:
        kind, *args = action
        buffer = self.buffer
        if kind == "text":
            buffer.append(args[0])
        elif kind == "step":
            step = self.new_step(buffer, len(self.steps))
            self.steps.append(step)
            if args[0]:
                # As server/agent/children.py: the child's every change touches the parent.
                child = ReplyBuffer(1_000_000, buffer.touched)
                step.agent = SubAgentView(Asked("task", None, None, None), "m", child)
                self.children.append((step, child))
        elif kind == "given":
            buffer.given(tuple(source(n) for n in range(1, args[0] + 1)))
        elif kind.startswith("child_"):
            self.act_on_child(kind, args)
        elif kind != "checkpoint" and (chosen := self.pick(args[0])) is not None:
            self.act_on_step(chosen, kind, args[1:])

    def act_on_step(self, step: ToolStep, kind: str, args: list[Any]) -> None:
        if kind == "end":
            step.end("completed", args[0])
            if args[1]:
                self.buffer.step_changed(step)
        elif kind == "set":
            value: dict[str, Any] = {
                "progress": {"progress": len(step.questions) + 1.0, "total": None, "message": "m"},
                "overdue": 12.5,
                "links": [{"uri": "file:///x", "name": "x", "title": None, "description": None,
                           "mime": None, "size": 3}],
            }  # fmt: skip
            setattr(step, args[0], value[args[0]])  # a field set, the buffer not told
        elif kind == "approve":
            step.status = "awaiting_approval"
            step.approve()
        elif kind == "ask":
            question: QuestionJSON = {
                "id": f"{step.id}-q{len(step.questions) + 1}",
                "mode": "form",
                "message": "Sure?",
                "state": "asked",
                "asked_at": 5.0,
                "answered_at": None,
            }
            step.questions.append(question)  # in place: the buffer is told
            self.buffer.step_changed(step)
        elif kind == "answer" and step.questions:
            step.questions[-1]["state"] = "accept"  # in place: the buffer is told
            step.questions[-1]["answered_at"] = 6.0
            self.buffer.step_changed(step)

    def act_on_child(self, kind: str, args: list[Any]) -> None:
        if not self.children:
            return
        _, child = self.children[args[0] % len(self.children)]
        if kind == "child_text":
            child.append(args[1])
        elif kind == "child_step":
            self.new_step(child, len(child.parts.steps))
        elif child.parts.steps and kind == "child_progress":
            # As a sub-agent's call reports progress between its throttled sends: the step's
            # field is set, and neither buffer is told.
            inner = child.parts.steps[-1]
            done = (inner.progress or {}).get("progress") or 0.0
            inner.progress = {"progress": done + 1.0, "total": None, "message": "m"}
        elif child.parts.steps:
            inner = child.parts.steps[-1]
            inner.end("completed", args[1])
            child.step_changed(inner)

    def check(self) -> None:
        content, parts = self.buffer.stored()
        expected = self.buffer.json()
        assert content == self.buffer.text
        if expected is None:
            assert parts is None
        else:
            assert parts is not None
            assert json.loads(parts) == json.loads(json.dumps(expected))
            assert parts == json.dumps(expected, ensure_ascii=False)  # the same bytes, even


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(actions=ACTIONS, resumed=st.booleans())
def test_every_checkpoint_decodes_to_the_parts_as_they_are(
    actions: list[tuple[Any, ...]], resumed: bool
) -> None:
    driven = Driven(resumed)
    for action in actions:
        driven.act(action)
        if action[0] == "checkpoint":
            driven.check()
    driven.check()


def test_a_step_changed_in_place_between_checkpoints_is_written_again() -> None:
    driven = Driven(resumed=False)
    driven.act(("text", "Looking."))
    driven.act(("step", True))
    driven.act(("child_text", 0, "Child says"))
    driven.check()
    driven.act(("ask", 0))
    driven.check()
    driven.act(("answer", 0))
    driven.check()
    driven.act(("child_text", 0, " more"))
    driven.check()
    driven.act(("end", 0, "done", False))
    driven.check()


def test_a_sub_agents_progress_no_one_was_told_of_is_written_with_the_next_checkpoint() -> None:
    driven = Driven(resumed=False)
    driven.act(("step", True))
    driven.act(("child_step", 0))
    driven.check()
    driven.act(("child_progress", 0))  # the child's call reports; its send waits its turn
    driven.act(("step", False))  # a call of the parent's asks for the checkpoint
    driven.check()


def test_the_stored_row_holds_the_parts_the_buffer_encoded(tmp_path: Path) -> None:
    driven = Driven(resumed=False)
    for action in [("given", 2), ("text", "See [2]."), ("step", False), ("end", 0, "r", True)]:
        driven.act(action)
    content, parts = driven.buffer.stored()

    async def scenario() -> None:
        store = Store(tmp_path / "db.sqlite3")
        await store.open()
        conversation = await store.create_conversation("", None, None)
        await store.open_turn(
            conversation["id"], TurnStart("send", "go"), "m", user_message_id="u", message_id="a"
        )
        await asyncio.wrap_future(store.checkpoint("a", content, parts))
        message = await store.get_message(conversation["id"], "a")
        assert message is not None
        assert (message["content"], message["parts"]) == (
            driven.buffer.text,
            json.loads(json.dumps(driven.buffer.json())),
        )
        await store.close()

    asyncio.run(scenario())
