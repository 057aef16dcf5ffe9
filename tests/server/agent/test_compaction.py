"""Compaction that loses nothing (issue 42), with the scripted upstream: a turn that would
not fit the model's context first has the oldest part summarised by the chat's model; the
model is given the summary in place of those messages, nothing is deleted, the marker is in
the conversation, a Stop during the summary keeps the chat as it was, undo and edit work."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from server.agent.compaction import INSTRUCTIONS, LATER_HEADING, OPENING_HEADING
from server.agent.prompt import SUMMARY_HEADING
from tests.server.attachments.test_attachments import PNG, uploaded
from tests.server.transfer.test_transfer import import_json
from tests.support.client import SSEStream
from tests.support.parley import Parley
from tests.support.tools import tool_server, write_config
from tests.support.upstream import Script, ScriptedUpstream

CONTEXT = 2_000  # tokens: a few long turns outgrow it (the estimate is 3 characters a token)
LONG = "lorem ipsum dolor sit amet " * 40  # ~1,080 characters, ~360 tokens


@pytest.fixture
def chat(data_dir: Path, upstream: ScriptedUpstream) -> Iterator[Parley]:
    server = Parley(data_dir, upstream.base_url, context=CONTEXT).start()
    yield server
    server.stop()


def summarising(record: Any) -> bool:
    return record.body["messages"][0]["content"] == INSTRUCTIONS


def fill(chat: Parley, upstream: ScriptedUpstream, cid: str, turns: int) -> None:
    for index in range(turns):
        upstream.queue = [Script(texts=[f"Reply {index}. {LONG}"])]
        chat.send(cid, f"Question {index}. {LONG}").read_all()


def test_a_turn_that_would_not_fit_summarises_the_oldest_part_and_loses_nothing(
    chat: Parley, upstream: ScriptedUpstream
) -> None:
    cid = chat.new_conversation(system="Be brief.")
    upstream.queue = [Script(texts=["Noted: your code word is HERON-42."])]
    chat.send(cid, "Remember my code word: HERON-42.").read_all()
    fill(chat, upstream, cid, 2)
    assert not any(summarising(r) for r in upstream.records)  # it still fits

    upstream.queue = [
        Script(texts=["The user's code word is HERON-42. They asked two long questions."]),
        Script(texts=["Your code word is HERON-42."]),
    ]
    stream = chat.send(cid, f"What is my code word? {LONG}")
    stream.read_all()
    assert stream.final["parley"]["status"] == "completed"
    events = [
        e["parley"]["compaction"]
        for e in stream.events
        if isinstance(e, dict) and "compaction" in e.get("parley", {})
    ]
    # Running (and, its one round begun, "1 of 1"), then done.
    assert [e["state"] for e in events] == ["running", "running", "done"]
    assert (events[1]["round"], events[1]["rounds"]) == (1, 1)
    summary = events[-1]["summary"]

    asked, answered = upstream.records[-2], upstream.records[-1]
    assert summarising(asked)
    transcript = asked.body["messages"][1]["content"]
    # The opening is kept word for word; what followed it is summarised.
    assert "HERON-42" not in transcript and transcript.startswith("User: Question 0.")
    assert summary["content"].startswith(
        f"{OPENING_HEADING}\nUser: Remember my code word: HERON-42.\n"
        "Assistant: Noted: your code word is HERON-42."
    )
    assert f"{LATER_HEADING}\nThe user's code word is HERON-42." in summary["content"]
    sent = answered.body["messages"]
    assert sent[0]["role"] == "system" and sent[0]["content"].startswith("Be brief.")
    assert SUMMARY_HEADING in sent[0]["content"] and "HERON-42" in sent[0]["content"]
    assert all("Remember my code word" not in m["content"] for m in sent[1:])  # summarised
    assert sent[-1]["content"].startswith("What is my code word?")

    # Nothing was deleted: every message is there, the summary marks where it ends.
    conversation = chat.conversation(cid)
    assert len(conversation["messages"]) == 8  # four turns, none dropped
    assert conversation["messages"][0]["content"] == "Remember my code word: HERON-42."
    assert conversation["summaries"] == [summary]
    ids = [m["id"] for m in conversation["messages"]]
    assert ids.index(summary["through_id"]) % 2 == 1  # it ends at a reply

    # The next turn starts from the summary, without summarising again.
    calls = len(upstream.records)
    upstream.queue = [Script(texts=["ok"])]
    chat.send(cid, "thanks").read_all()
    assert len(upstream.records) == calls + 1
    assert "HERON-42" in upstream.records[-1].body["messages"][0]["content"]


def test_undo_puts_the_messages_back_and_edit_changes_what_the_model_reads(
    chat: Parley, upstream: ScriptedUpstream
) -> None:
    cid = chat.new_conversation()
    fill(chat, upstream, cid, 2)
    upstream.queue = [Script(texts=["A summary."]), Script(texts=["ok"])]
    chat.send(cid, f"more {LONG}").read_all()
    (summary,) = chat.conversation(cid)["summaries"]
    path = f"/api/conversations/{cid}/summaries/{summary['id']}"

    edited = chat.call("PATCH", path, json_body={"content": "The user likes herons."})
    assert edited.status == 200 and edited.json()["model"] is None
    upstream.queue = [Script(texts=["ok"])]
    chat.send(cid, "hi").read_all()
    assert "The user likes herons." in upstream.records[-1].body["messages"][0]["content"]

    assert chat.call("DELETE", path).status == 204
    assert chat.conversation(cid)["summaries"] == []
    assert chat.call("DELETE", path).status == 404


def test_a_stop_during_the_summary_keeps_the_chat_as_it_was(
    chat: Parley, upstream: ScriptedUpstream
) -> None:
    cid = chat.new_conversation()
    fill(chat, upstream, cid, 2)
    upstream.queue = [Script(tokens=1000, stall_after=2)]  # the summary, stalled
    stream = chat.send(cid, f"more {LONG}")
    message_id = stream.first["message_id"]
    upstream.wait_for(lambda: any(summarising(r) and r.sent for r in upstream.records))
    stream.hang_up()
    message = chat.wait_settled(cid, message_id)
    assert (message["status"], message["ended_by"]) == ("interrupted", "client_hangup")
    assert message["content"] == ""
    assert message["ended"]["model_calls"] == 1  # the summarising call
    assert chat.conversation(cid)["summaries"] == []
    upstream.wait_hung_up()
    chat.wait_idle()


def test_a_model_whose_context_is_unknown_is_never_compacted(
    data_dir: Path, upstream: ScriptedUpstream
) -> None:
    server = Parley(data_dir, upstream.base_url).start()
    try:
        cid = server.new_conversation()
        fill(server, upstream, cid, 3)
        assert not any(summarising(r) for r in upstream.records)
        assert server.conversation(cid)["summaries"] == []
    finally:
        server.stop()


def test_the_context_meter_shows_what_the_next_turn_uses_and_what_was_summarised(
    chat: Parley, upstream: ScriptedUpstream
) -> None:
    cid = chat.new_conversation(system="Be brief.")
    empty = chat.call("GET", f"/api/conversations/{cid}/context").json()
    assert (empty["limit"], empty["estimated"], empty["messages"]) == (CONTEXT, True, 0)
    assert empty["used"] == empty["system"] > 0 and empty["history"] == 0

    fill(chat, upstream, cid, 2)
    before = chat.call("GET", f"/api/conversations/{cid}/context").json()
    assert before["messages"] == 4 and before["history"] > 4 * 300
    assert before["used"] == before["system"] + before["history"] + before["tools"]

    upstream.queue = [Script(texts=["A short summary."]), Script(texts=["ok"])]
    chat.send(cid, f"more {LONG}").read_all()
    after = chat.call("GET", f"/api/conversations/{cid}/context").json()
    (summary,) = chat.conversation(cid)["summaries"]
    assert after["summary_id"] == summary["id"] and after["summarised"] >= 4
    assert after["used"] < after["budget"]  # the next turn fits again
    assert after["messages"] + after["summarised"] == 6  # every message, once

    unknown = chat.call("GET", f"/api/conversations/{cid}/context?model=nope")
    assert unknown.status == 404
    assert chat.call("GET", "/api/conversations/nope/context").status == 404


def test_summaries_survive_export_and_import_into_the_same_database(
    chat: Parley, upstream: ScriptedUpstream
) -> None:
    cid = chat.new_conversation()
    fill(chat, upstream, cid, 2)
    upstream.queue = [Script(texts=["The user wrote about lorem ipsum."]), Script(texts=["ok"])]
    chat.send(cid, f"more {LONG}").read_all()
    exported = exported_chat(chat, cid)
    (summary,) = exported["conversations"][0]["summaries"]

    # Imported beside the original (as a copy: it is the same chat): every id is new, the
    # summary ends at the same message.
    reply = import_json(chat, exported, duplicates="copy")
    assert reply.status == 201, reply.body
    (new_id,) = reply.json()["conversations"]
    copy = chat.conversation(new_id)
    (imported,) = copy["summaries"]
    place = [m["id"] for m in copy["messages"]].index(imported["through_id"])
    original = [m["id"] for m in chat.conversation(cid)["messages"]].index(summary["through_id"])
    assert place == original and imported["content"] == summary["content"]
    assert imported["id"] != summary["id"]

    upstream.queue = [Script(texts=["ok"])]
    chat.send(new_id, "go on").read_all()
    assert "lorem ipsum." in upstream.records[-1].body["messages"][0]["content"]


def exported_chat(chat: Parley, cid: str) -> dict[str, Any]:
    reply = chat.call("GET", f"/api/conversations/{cid}/export?format=json")
    assert reply.status == 200, reply.body
    data: dict[str, Any] = reply.json()
    return data


def test_compact_now_summarises_all_but_the_last_exchange_and_writes_no_message(
    data_dir: Path, upstream: ScriptedUpstream
) -> None:
    server = Parley(data_dir, upstream.base_url).start()  # context not known: asked anyway
    try:
        cid = server.new_conversation()
        fill(server, upstream, cid, 3)
        upstream.queue = [Script(texts=["Two long questions about lorem ipsum."])]
        stream = SSEStream(server.port, f"/api/conversations/{cid}/compact", {}, server.token)
        stream.read_all()
        assert stream.final["parley"]["status"] == "completed"
        assert summarising(upstream.records[-1])
        conversation = server.conversation(cid)
        assert len(conversation["messages"]) == 6  # no message written
        (summary,) = conversation["summaries"]
        assert summary["through_id"] == conversation["messages"][3]["id"]  # all but the last
        assert "Question 0." in summary["content"]  # the opening, word for word

        busy_upstream = [Script(tokens=1000, stall_after=2)]
        upstream.queue = busy_upstream
        going = server.send(cid, "more")
        going.read_until(lambda text: text)
        path = f"/api/conversations/{cid}/compact"
        assert server.call("POST", path).status == 409  # not while a reply streams
        going.hang_up()
        server.wait_idle()
    finally:
        server.stop()


def test_a_stopped_compact_now_saves_nothing(data_dir: Path, upstream: ScriptedUpstream) -> None:
    server = Parley(data_dir, upstream.base_url).start()
    try:
        cid = server.new_conversation()
        fill(server, upstream, cid, 3)
        upstream.queue = [Script(tokens=1000, stall_after=2)]
        stream = SSEStream(server.port, f"/api/conversations/{cid}/compact", {}, server.token)
        stream.first  # noqa: B018
        upstream.wait_for(lambda: any(summarising(r) and r.sent for r in upstream.records))
        stream.hang_up()
        upstream.wait_hung_up()
        server.wait_idle()
        assert server.conversation(cid)["summaries"] == []
    finally:
        server.stop()


def test_a_compacted_chat_is_still_searched_in_full(
    chat: Parley, upstream: ScriptedUpstream
) -> None:
    cid = chat.new_conversation()
    upstream.queue = [Script(texts=["Noted."])]
    chat.send(cid, f"My cat is called Wolfgang. {LONG}").read_all()
    fill(chat, upstream, cid, 1)
    upstream.queue = [Script(texts=["The user asked about lorem ipsum."]), Script(texts=["ok"])]
    chat.send(cid, f"more {LONG}").read_all()
    conversation = chat.conversation(cid)
    (summary,) = conversation["summaries"]
    ids = [m["id"] for m in conversation["messages"]]
    asked = ids[0]
    assert ids.index(summary["through_id"]) > 0  # the message is summarised

    found = chat.call("GET", "/api/conversations?q=wolfgang").json()["conversations"]
    assert [(c["id"], c["match"]["message_id"]) for c in found] == [(cid, asked)]
    assert "«Wolfgang»" in found[0]["match"]["snippet"]


def test_a_summary_is_still_in_force_after_the_server_restarts(
    chat: Parley, upstream: ScriptedUpstream, data_dir: Path
) -> None:
    cid = chat.new_conversation()
    fill(chat, upstream, cid, 2)
    upstream.queue = [Script(texts=["The user likes herons."]), Script(texts=["ok"])]
    chat.send(cid, f"more {LONG}").read_all()
    (summary,) = chat.conversation(cid)["summaries"]
    before = chat.call("GET", f"/api/conversations/{cid}/context").json()
    assert chat.stop()

    again = Parley(data_dir, upstream.base_url, context=CONTEXT).start()
    try:
        assert again.conversation(cid)["summaries"] == [summary]
        after = again.call("GET", f"/api/conversations/{cid}/context").json()
        assert after["summary_id"] == summary["id"] and after == before
        upstream.queue = [Script(texts=["ok"])]
        again.send(cid, "go on").read_all()
        assert "The user likes herons." in upstream.records[-1].body["messages"][0]["content"]
    finally:
        again.stop()


# With the tests' MCP server: its tools' definitions take ~1,500 tokens of every prompt, and an
# earlier result over the results budget (a quarter of the context, 4,500 characters here) is
# sent as a note (server/agent/history.py): compaction counts the prompt as sent, as the meter.
TOOLS_CONTEXT = 6_000
BIG = 15_000  # characters of the tool's result: ~5,000 tokens if it were sent whole


@pytest.fixture
def tool_chat(data_dir: Path, upstream: ScriptedUpstream, tmp_path: Path) -> Iterator[Parley]:
    write_config(data_dir / "mcp.json", {"t": tool_server(tmp_path / "t.log")})
    server = Parley(data_dir, upstream.base_url, context=TOOLS_CONTEXT).start()
    server.wait_for(lambda: server.status()["tools"]["ready"] == 1, timeout=30)
    yield server
    server.stop()


def read_big(chat: Parley, upstream: ScriptedUpstream, cid: str, reply: str) -> None:
    """A turn that calls the `big` tool, then answers `reply`."""
    call = {"name": "t__big", "arguments": json.dumps({"chars": BIG})}
    upstream.queue = [Script(texts=["Reading. "], tool_calls=[call]), Script(texts=[reply])]
    stream = chat.send(cid, "read the file")
    stream.read_all()
    assert stream.final["parley"]["status"] == "completed"


def meter(chat: Parley, cid: str) -> dict[str, Any]:
    found: dict[str, Any] = chat.call("GET", f"/api/conversations/{cid}/context").json()
    return found


@pytest.mark.slow
def test_an_earlier_result_left_out_of_the_prompt_does_not_count_towards_compaction(
    tool_chat: Parley, upstream: ScriptedUpstream
) -> None:
    cid = tool_chat.new_conversation()
    upstream.queue = [Script(texts=["Hello."])]
    tool_chat.send(cid, "hi").read_all()
    read_big(tool_chat, upstream, cid, "I read it.")
    before = meter(tool_chat, cid)
    assert before["used"] < before["budget"] - 100  # the meter: the next turn fits

    upstream.queue = [Script(texts=["It was long."])]
    stream = tool_chat.send(cid, "what did it say?")
    stream.read_all()
    assert stream.final["parley"]["status"] == "completed"
    assert not any(summarising(r) for r in upstream.records)
    assert tool_chat.conversation(cid)["summaries"] == []
    (result,) = [m for m in upstream.records[-1].body["messages"] if m["role"] == "tool"]
    assert result["content"].startswith(f"[An earlier result of {BIG:,} characters")


@pytest.mark.slow
def test_a_turn_the_meter_says_does_not_fit_summarises_only_what_the_prompt_as_sent_needs(
    tool_chat: Parley, upstream: ScriptedUpstream
) -> None:
    cid = tool_chat.new_conversation()
    fill(tool_chat, upstream, cid, 5)
    read_big(tool_chat, upstream, cid, f"I read it. {LONG}")
    before = meter(tool_chat, cid)
    assert before["used"] > before["budget"]  # the meter: the next turn does not fit
    assert not any(summarising(r) for r in upstream.records)

    upstream.queue = [Script(texts=["Five long questions."]), Script(texts=["ok"])]
    stream = tool_chat.send(cid, "go on")
    stream.read_all()
    assert stream.final["parley"]["status"] == "completed"
    assert summarising(upstream.records[-2])
    conversation = tool_chat.conversation(cid)
    (summary,) = conversation["summaries"]
    # Up to the reply before the turn that read the file: its result is sent as a note, so
    # the rest fits without summarising it too.
    ids = [m["id"] for m in conversation["messages"]]
    assert ids.index(summary["through_id"]) == 9  # not 11, the reply that read the file
    assert conversation["messages"][10]["content"] == "read the file"
    after = meter(tool_chat, cid)
    assert after["used"] < after["budget"] and after["messages"] == 4


def test_images_count_towards_compaction_as_the_meter_counts_them(
    chat: Parley, upstream: ScriptedUpstream
) -> None:
    # Two images (765 tokens each, estimated) outgrow the 2,000-token context's prompt room
    # (1,456) though their words are few: the meter says so, and so does compaction, which
    # summarises the exchange after the opening (kept word for word) with its image.
    cid = chat.new_conversation()
    upstream.queue = [Script(texts=["Hello."])]
    chat.send(cid, "Hello, I will show you diagrams.").read_all()
    upstream.queue = [Script(texts=["A diagram."])]
    first = uploaded(chat, "a.png", PNG)
    chat.send(cid, "What is this?", attachments=[first["id"]]).read_all()
    assert not any(summarising(r) for r in upstream.records)
    upstream.queue = [Script(texts=["The user showed a diagram."]), Script(texts=["Another."])]
    second = uploaded(chat, "b.png", PNG)
    stream = chat.send(cid, "And this?", attachments=[second["id"]])
    stream.read_all()
    assert stream.final["parley"]["status"] == "completed"
    assert summarising(upstream.records[-2])  # the exchange with the first image, summarised
    assert len(chat.conversation(cid)["summaries"]) == 1
    meter = chat.call("GET", f"/api/conversations/{cid}/context").json()
    assert meter["used"] <= meter["budget"]  # it fits again, as the meter counts it
