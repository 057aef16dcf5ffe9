"""The context meter, compaction and the turn agree on what the model is given: for random
chats (messages, earlier tool steps with long results, an image, a summary, documents on or
off, tools on or off, a project's instructions, a memory), the meter's `used` is the count,
by the one counter (server/agent/cost.py), of the request the upstream receives less its new
question; and the turn compacts the chat exactly when that request would pass the budget.

The meter counts the next turn's prompt before its question is written, with the passages
the chat's last question is given: each turn here asks that question again, so both search
for the same passages."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from server.agent.compaction import INSTRUCTIONS
from server.agent.cost import Cost, count
from server.models.context import prompt_budget
from server.types import ChatMessage
from tests.server.attachments.test_attachments import PNG, uploaded
from tests.server.library.test_library import add, indexed
from tests.server.transfer.test_transfer import import_json
from tests.support.parley import Parley
from tests.support.upstream import Script, ScriptedUpstream

CONTEXT = 4_096  # tokens: a few long messages or results pass it (3 characters a token)
HERONS = "# Herons\n\nHerons wade in shallow water and wait for fish.\n"
QUESTIONS = ["Where do herons wait for fish?", "What is the capital of Peru?"]
WORDS = st.text(alphabet="abcdefghij klmnop", min_size=1, max_size=12)
# Characters of a message, a result or a summary (hypothesis favours small integers; these
# make a budget of ~10,000 characters passed about as often as not).
SIZES = st.sampled_from([1, 300, 2_000, 5_000, 9_000, 20_000])


def long_text(size: int) -> str:
    return ("lorem ipsum dolor sit amet " * (size // 27 + 1))[:size] or "x"


@pytest.fixture(scope="module")
def upstream() -> Iterator[ScriptedUpstream]:
    server = ScriptedUpstream().start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def parley(
    tmp_path_factory: pytest.TempPathFactory, upstream: ScriptedUpstream
) -> Iterator[Parley]:
    data = tmp_path_factory.mktemp("agreement")
    server = Parley(data / "data", upstream.base_url, context=CONTEXT).start()
    docs = data / "docs"
    docs.mkdir()
    (docs / "herons.md").write_text(HERONS, encoding="utf-8")
    add(server, docs)
    indexed(server, files=1)
    yield server
    server.stop()


@st.composite
def chats(draw: st.DrawFn) -> dict[str, Any]:
    """A chat to import: exchanges (a reply may hold a tool step, its result long), the last
    question asked again by the turn, maybe a summary of its start."""
    question = draw(st.sampled_from(QUESTIONS))
    messages: list[dict[str, Any]] = []
    exchanges = draw(st.integers(1, 5))
    for index in range(exchanges):
        asked = question if index == exchanges - 1 else long_text(draw(SIZES))
        said = long_text(draw(SIZES) // 2)
        parts: list[dict[str, Any]] = [{"type": "text", "text": said}]
        if draw(st.booleans()):
            step = {
                "type": "tool",
                "id": uuid.uuid4().hex,
                "name": "read_file",
                "server": "files",
                "tool": "t",
                "arguments": json.dumps({"path": draw(WORDS)}),
                "status": draw(st.sampled_from(["completed", "error", "interrupted"])),
                "result": long_text(draw(SIZES)),
                "started_at": 1.0,
                "ended_at": 2.0,
            }
            parts = [{"type": "text", "text": draw(WORDS)}, step, *parts]
        for role, content, its_parts in (
            ("user", asked, [{"type": "text", "text": asked}]),
            ("assistant", said, parts),
        ):
            messages.append(
                {
                    "id": uuid.uuid4().hex,
                    "role": role,
                    "content": content,
                    "parts": its_parts,
                    "status": "completed",
                    "ended_by": None,
                    "error": None,
                    "model": None,
                    "created_at": 1.0,
                    "completed_at": 1.0,
                    "usage": None,
                    "parent_id": messages[-1]["id"] if messages else None,
                    "continued": None,
                    "finish_reason": "stop" if role == "assistant" else None,
                }
            )
    replies = [m["id"] for m in messages if m["role"] == "assistant"][:-1]
    summaries = []
    if replies and draw(st.booleans()):
        summaries.append(
            {
                "id": uuid.uuid4().hex,
                "through_id": draw(st.sampled_from(replies)),
                "content": long_text(draw(SIZES) // 4),
                "model": None,
                "created_at": 1.0,
                "updated_at": 1.0,
            }
        )
    return {
        "id": uuid.uuid4().hex,
        "title": "a chat",
        "model": None,
        "system": draw(st.none() | WORDS),
        "tools": draw(st.booleans()),
        "documents": draw(st.booleans()),
        "tool_servers": None,
        "params": {},
        "leaf_id": messages[-1]["id"],
        "created_at": 1.0,
        "updated_at": 1.0,
        "messages": messages,
        "summaries": summaries,
    }


def as_given(wire: dict[str, Any]) -> ChatMessage:
    """A message of the upstream's request as Parley held it: its text, tool calls, images."""
    content = wire.get("content")
    images: list[dict[str, Any]] = []
    if isinstance(content, list):  # OpenAI's parts: the text, then each image
        text = "".join(part["text"] for part in content if part["type"] == "text")
        images = [part["image_url"] for part in content if part["type"] == "image_url"]
    else:
        text = content or ""
    message: dict[str, Any] = {"role": wire["role"], "content": text}
    if wire.get("tool_calls"):
        message["tool_calls"] = wire["tool_calls"]
    if images:
        message["images"] = images
    return message  # type: ignore[return-value]


def counted(parley: Parley, body: dict[str, Any]) -> Cost:
    backend = parley.services.models.resolve(None).backend
    messages = [as_given(m) for m in body["messages"]]
    cost, _ = asyncio.run(count(backend, messages, body.get("tools", [])))
    return cost


def meter(parley: Parley, cid: str) -> dict[str, Any]:
    reply = parley.call("GET", f"/api/conversations/{cid}/context")
    assert reply.status == 200, reply.body
    found: dict[str, Any] = reply.json()
    assert found["used"] == found["system"] + found["history"] + found["tools"] + found["documents"]
    return found


def turn_agrees(
    parley: Parley, upstream: ScriptedUpstream, cid: str, question: str, **fields: Any
) -> bool:
    """The meter before a turn and the request the turn sends agree."""
    before = meter(parley, cid)
    start = len(upstream.records)
    upstream.script = Script(texts=["A short reply."])
    stream = parley.send(cid, question, **fields)
    stream.read_all()
    assert stream.final["parley"]["status"] == "completed", stream.final
    records = upstream.records[start:]
    # Compaction says when it is done (or failed), summarising call or not: a first one that
    # covers only the opening keeps it word for word and asks the model nothing.
    states = [
        e["parley"]["compaction"]["state"]
        for e in stream.events
        if isinstance(e, dict) and "compaction" in e.get("parley", {})
    ]
    compacted = "done" in states or "failed" in states
    sent = counted(parley, records[-1].body)
    asked = sent.messages[-1]  # the new question, as given
    budget = prompt_budget(CONTEXT, None)
    assert compacted == (before["used"] + asked > budget), (before, asked, budget)
    summarising = [r for r in records if r.body["messages"][0]["content"] == INSTRUCTIONS]
    assert compacted or not summarising
    if not compacted:
        assert len(records) == 1
        assert sent.used - asked == before["used"], (before, sent)
    return compacted


def memory_file(parley: Parley, project_id: str | None) -> Path:
    data = parley.services.settings.data_dir / "memory"
    return data / "projects" / f"{project_id}.md" if project_id else data / "global.md"


@settings(
    max_examples=30,
    deadline=timedelta(seconds=60),  # two turns and two meters over HTTP, on a busy machine
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    chat=chats(),
    instructions=st.none() | WORDS,
    memory=st.none() | WORDS,
    image=st.booleans(),
)
@pytest.mark.timeout(900)
def test_the_meter_counts_what_the_model_is_given_and_compaction_starts_past_the_budget(
    parley: Parley,
    upstream: ScriptedUpstream,
    chat: dict[str, Any],
    instructions: str | None,
    memory: str | None,
    image: bool,
) -> None:
    reply = import_json(parley, {"format": "parley", "version": 1, "conversations": [chat]})
    assert reply.status == 201, reply.body
    cid = chat["id"]
    project_id = None
    if instructions is not None:
        made = parley.call(
            "POST", "/api/projects", json_body={"name": "p", "instructions": instructions}
        )
        assert made.status == 201, made.body
        project_id = made.json()["id"]
        moved = parley.call(
            "PUT", f"/api/conversations/{cid}/project", json_body={"project_id": project_id}
        )
        assert moved.status == 200, moved.body
    path = memory_file(parley, project_id)
    if memory is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"- {memory}\n", encoding="utf-8")
    try:
        question = chat["messages"][-2]["content"]
        fields = {"attachments": [uploaded(parley, "dot.png", PNG)["id"]]} if image else {}
        first = turn_agrees(parley, upstream, cid, question, **fields)
        second = turn_agrees(parley, upstream, cid, question)  # the image, if any, in history
        event(f"compacted: {first}, then {second}")
        event(f"tools: {chat['tools']}, documents: {chat['documents']}")
    finally:
        path.unlink(missing_ok=True)
        parley.call("DELETE", f"/api/conversations/{cid}")
        if project_id is not None:
            parley.call("DELETE", f"/api/projects/{project_id}")


def test_a_model_that_takes_no_images_is_counted_with_their_names(
    parley: Parley, upstream: ScriptedUpstream
) -> None:
    cid = parley.new_conversation()
    question = QUESTIONS[1]
    upstream.script = Script(texts=["A dot."])
    image = uploaded(parley, "dot.png", PNG)["id"]
    parley.send(cid, question, attachments=[image]).read_all()
    backend = parley.services.models.resolve(None).backend
    backend.images_unsupported = "this model takes no images"  # type: ignore[misc]
    try:
        turn_agrees(parley, upstream, cid, question)
        (named,) = [m for m in upstream.records[-1].body["messages"] if "dot.png" in m["content"]]
        assert isinstance(named["content"], str)  # its name, not the image
    finally:
        backend.images_unsupported = None  # type: ignore[misc]
        parley.call("DELETE", f"/api/conversations/{cid}")
