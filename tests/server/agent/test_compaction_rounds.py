"""Compaction of a chat far longer than the model's context: the summariser is given the
earlier messages in rounds, each a model call that fits the model's context with room for
its answer, each going on from the summary the one before wrote. The upstream here says its
context and refuses, as a real one does, a request that would not fit it."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from server.agent.compaction import INSTRUCTIONS, LATER_HEADING
from server.agent.prompt import SUMMARY_HEADING
from server.agent.transcript import unread_note
from server.limits import CompactionLimits, Limits
from tests.server.transfer.test_transfer import import_json
from tests.support.client import SSEStream
from tests.support.parley import Parley
from tests.support.upstream import Record, Script, ScriptedUpstream

CONTEXT = 4_096
MESSAGES = 2_000
FILLER = "and some more words about the matter at hand " * 5  # ~230 characters


def summarising(record: Record) -> bool:
    return bool(record.body["messages"][0]["content"] == INSTRUCTIONS)


def transcript(record: Record) -> str:
    said: str = record.body["messages"][1]["content"]
    return said


def compaction_events(stream: SSEStream) -> list[dict[str, Any]]:
    return [
        e["parley"]["compaction"]
        for e in stream.events
        if isinstance(e, dict) and "compaction" in e.get("parley", {})
    ]


def long_chat(count: int) -> dict[str, Any]:
    """A Parley export of one chat of `count` messages, questions and replies in turn."""
    messages: list[dict[str, Any]] = []
    for index in range(count):
        role = "user" if index % 2 == 0 else "assistant"
        said = f"{'Question' if role == 'user' else 'Reply'} {index}: {FILLER}(end of {index})"
        messages.append(
            {
                "id": uuid.uuid4().hex,
                "role": role,
                "content": said,
                "created_at": 1.0 + index,
                "parent_id": messages[-1]["id"] if messages else None,
            }
        )
    chat = {"id": uuid.uuid4().hex, "title": "long", "created_at": 1.0, "updated_at": 1.0}
    return {"format": "parley", "version": 1, "conversations": [{**chat, "messages": messages}]}


@pytest.fixture
def small(data_dir: Path, upstream: ScriptedUpstream) -> Iterator[Parley]:
    """Parley with an upstream whose context is CONTEXT (asked of it, as for a real one)."""
    upstream.context = CONTEXT
    server = Parley(data_dir, upstream.base_url).start()
    yield server
    server.stop()


def imported(server: Parley, count: int) -> str:
    reply = import_json(server, long_chat(count))
    assert reply.status == 201, reply.body
    (cid,) = reply.json()["conversations"]
    path = f"/api/conversations/{cid}/context"
    server.wait_for(lambda: server.call("GET", path).json()["limit"] == CONTEXT)
    return str(cid)


def summarised_through(server: Parley, cid: str) -> tuple[dict[str, Any], int]:
    """The chat's one summary, and the place of the last message it covers."""
    conversation = server.conversation(cid)
    assert len(conversation["messages"]) == MESSAGES + 2  # nothing deleted
    (summary,) = conversation["summaries"]
    ids = [m["id"] for m in conversation["messages"]]
    return summary, ids.index(summary["through_id"])


def test_a_2000_message_chat_is_summarised_in_rounds_that_each_fit_the_models_context(
    small: Parley, upstream: ScriptedUpstream
) -> None:
    upstream.script = Script(texts=["The user asked numbered questions."])
    cid = imported(small, MESSAGES)
    stream = small.send(cid, "What was the last question about?")
    stream.read_all()
    assert stream.final["parley"]["status"] == "completed", stream.final

    # Every request fitted the model's context, the summariser's answer included.
    assert upstream.records and not [r.refused for r in upstream.records if r.refused]
    assert max(r.tokens for r in upstream.records) <= CONTEXT
    rounds = [r for r in upstream.records if summarising(r)]
    assert 1 < len(rounds) <= Limits().compaction.max_rounds
    assert all(r.body["max_tokens"] > 0 for r in rounds)  # room kept for the answer
    # The stream said each round as it began: "n of m", m the most planned.
    told = [(e["round"], e["rounds"]) for e in compaction_events(stream) if "round" in e]
    assert [n for n, _ in told] == list(range(1, len(rounds) + 1))
    planned = {m for _, m in told}
    assert len(planned) == 1 and planned.pop() >= len(rounds)
    for later in rounds[1:]:  # each round goes on from the summary written before it
        assert transcript(later).startswith(
            "Summary of what came before:\nThe user asked numbered questions."
        )

    summary, through = summarised_through(small, cid)
    assert through > MESSAGES // 2  # the oldest part, most of the chat
    assert summary["content"].endswith(f"{LATER_HEADING}\nThe user asked numbered questions.")
    # Every message summarised is read (its start and its end), in order, the newest last.
    read = "".join(transcript(r) for r in rounds)
    assert "left out" not in read
    places = [read.index(f"(end of {index})") for index in range(2, through + 1)]
    assert places == sorted(places)
    assert f"Reply {through}:" in transcript(rounds[-1])

    answered = upstream.records[-1]
    assert not summarising(answered)
    assert SUMMARY_HEADING in answered.body["messages"][0]["content"]
    assert answered.body["messages"][-1]["content"] == "What was the last question about?"


def test_messages_too_many_for_the_rounds_allowed_are_left_out_and_the_summary_says_so(
    data_dir: Path, upstream: ScriptedUpstream
) -> None:
    upstream.context = CONTEXT
    upstream.script = Script(texts=["The user asked numbered questions."])
    limits = Limits(compaction=CompactionLimits(max_rounds=4))
    server = Parley(data_dir, upstream.base_url, limits=limits).start()
    try:
        cid = imported(server, MESSAGES)
        stream = server.send(cid, "go on")
        stream.read_all()
        assert stream.final["parley"]["status"] == "completed", stream.final
        assert not [r.refused for r in upstream.records if r.refused]
        rounds = [r for r in upstream.records if summarising(r)]
        assert 1 < len(rounds) <= 4
        note = transcript(rounds[0]).split("\n\n")[0]
        assert note.startswith("[") and "older messages are left out here" in note
        unread = int(note[1:].split(" ")[0].replace(",", ""))
        summary, through = summarised_through(server, cid)
        assert 0 < unread < through
        assert summary["content"].endswith(unread_note(unread))
        # The newest are read, the oldest left out.
        assert f"(end of {through})" in transcript(rounds[-1])
        assert "(end of 2)" not in "".join(transcript(r) for r in rounds)
    finally:
        server.stop()


def test_a_stop_during_a_later_round_ends_the_rounds_and_saves_nothing(
    small: Parley, upstream: ScriptedUpstream
) -> None:
    cid = imported(small, MESSAGES)
    upstream.queue = [Script(texts=["Round one."]), Script(tokens=1000, stall_after=2)]
    stream = small.send(cid, "go on")
    message_id = stream.first["message_id"]
    upstream.wait_for(lambda: len([r for r in upstream.records if summarising(r) and r.sent]) == 2)
    stream.hang_up()
    message = small.wait_settled(cid, message_id)
    assert (message["status"], message["ended_by"]) == ("interrupted", "client_hangup")
    assert message["ended"]["model_calls"] == 1  # the round under way
    upstream.wait_hung_up()
    small.wait_idle()
    assert len(upstream.records) == 2  # no round after it
    assert transcript(upstream.records[1]).startswith("Summary of what came before:\nRound one.")
    assert small.conversation(cid)["summaries"] == []


def test_a_round_says_how_long_its_summary_is_so_far_while_it_is_written(
    data_dir: Path, upstream: ScriptedUpstream
) -> None:
    upstream.context = CONTEXT
    # The first round's summary written slowly, as an engine writes it: 40 tokens in ~2 s.
    upstream.queue = [Script(tokens=40, rate=20)]
    limits = Limits(compaction=CompactionLimits(progress_interval=0.1))
    server = Parley(data_dir, upstream.base_url, limits=limits).start()
    try:
        cid = imported(server, 200)
        stream = server.send(cid, "go on")
        stream.read_all()
        assert stream.final["parley"]["status"] == "completed", stream.final
        events = compaction_events(stream)
        assert events[-1]["state"] == "done"
        sizes = [e["tokens"] for e in events if "tokens" in e]
        assert len(sizes) >= 2 and sizes == sorted(sizes) and sizes[0] > 0
        assert all(e["round"] == 1 and e["rounds"] >= 1 for e in events if "tokens" in e)
    finally:
        server.stop()
