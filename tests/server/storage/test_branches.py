"""Versions and branches (issue 13): regenerate keeps the old reply as a sibling, edit starts
a new branch, select switches branch; the model only ever sees the selected branch; a stopped
reply is continued in place; a chat's own system prompt and parameters reach the model."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.client import SSEStream
from tests.support.parley import Parley
from tests.support.upstream import Script, ScriptedUpstream


def post_stream(parley: Parley, path: str, body: dict[str, Any] | None = None) -> SSEStream:
    return SSEStream(parley.port, path, body or {}, parley.token)


def turn(parley: Parley, cid: str, text: str) -> tuple[str, str]:
    """Send `text`, read the whole reply; (user message id, reply id)."""
    stream = parley.send(cid, text)
    stream.read_all()
    return stream.first["user_message_id"], stream.first["message_id"]


def seen(upstream: ScriptedUpstream, index: int = -1) -> list[tuple[str, str]]:
    """(role, content) of the messages the upstream got in a request."""
    body = upstream.records[index].body
    return [(m["role"], m["content"]) for m in body["messages"]]


def branch(parley: Parley, cid: str) -> list[tuple[str, str]]:
    return [(m["role"], m["content"]) for m in parley.conversation(cid)["messages"]]


def test_regenerate_keeps_the_old_reply_as_a_sibling_and_the_model_sees_one_branch(
    parley: Parley, upstream: ScriptedUpstream
) -> None:
    cid = parley.new_conversation()
    upstream.queue = [Script(texts=["A1"]), Script(texts=["A2"]), Script(texts=["B1"])]
    turn(parley, cid, "Q1")
    _, second = turn(parley, cid, "Q2")
    upstream.queue = [Script(texts=["A2 again"]), Script(texts=["B2"])]
    stream = post_stream(parley, f"/api/conversations/{cid}/messages/{second}/regenerate")
    stream.read_all()
    assert stream.status == 200 and stream.final["parley"]["status"] == "completed"
    assert seen(upstream) == [("user", "Q1"), ("assistant", "A1"), ("user", "Q2")]
    messages = parley.conversation(cid)["messages"]
    assert [m["content"] for m in messages] == ["Q1", "A1", "Q2", "A2 again"]
    last = messages[-1]
    assert last["siblings"] == [second, stream.first["message_id"]] and last["sibling_index"] == 1
    assert last["parent_id"] == messages[2]["id"] == stream.first["user_message_id"]
    assert [m["sibling_index"] for m in messages[:3]] == [0, 0, 0]

    # The next question follows the selected version, and the model sees only it.
    turn(parley, cid, "Q3")
    assert seen(upstream)[-3:] == [("user", "Q2"), ("assistant", "A2 again"), ("user", "Q3")]

    # Selecting the first version shows its branch (which ended there).
    reply = parley.call(
        "POST", f"/api/conversations/{cid}/select", json_body={"message_id": second}
    )
    assert reply.status == 200, reply.body
    assert [c for _, c in branch(parley, cid)] == ["Q1", "A1", "Q2", "A2"]
    upstream.queue = [Script(texts=["after A2"])]
    turn(parley, cid, "Q3 on the old branch")
    assert seen(upstream)[-2:] == [("assistant", "A2"), ("user", "Q3 on the old branch")]


def test_edit_starts_a_new_branch_and_select_switches_between_them(
    parley: Parley, upstream: ScriptedUpstream
) -> None:
    cid = parley.new_conversation()
    upstream.queue = [Script(texts=["A1"]), Script(texts=["A2"])]
    first_question, _ = turn(parley, cid, "Q1")
    turn(parley, cid, "Q2")
    upstream.queue = [Script(texts=["A1 edited"])]
    path = f"/api/conversations/{cid}/messages/{first_question}/edit"
    stream = post_stream(parley, path, {"content": "Q1 edited"})
    stream.read_all()
    assert seen(upstream) == [("user", "Q1 edited")]  # nothing of the old branch
    assert branch(parley, cid) == [("user", "Q1 edited"), ("assistant", "A1 edited")]
    first = parley.conversation(cid)["messages"][0]
    assert first["siblings"] == [first_question, stream.first["user_message_id"]]

    # Back to the first version: the whole old branch, down its newest replies.
    reply = parley.call(
        "POST", f"/api/conversations/{cid}/select", json_body={"message_id": first_question}
    )
    assert [c for _, c in branch(parley, cid)] == ["Q1", "A1", "Q2", "A2"]
    assert reply.json()["messages"][0]["sibling_index"] == 0
    assert parley.conversation(cid)["leaf_id"] == reply.json()["messages"][-1]["id"]


@pytest.mark.parametrize(
    ("kind", "target", "status", "code"),
    [
        ("edit", "reply", 409, "wrong_message"),
        ("regenerate", "question", 409, "wrong_message"),
        ("continue", "reply", 409, "not_continuable"),  # a completed reply
        ("continue", "question", 409, "wrong_message"),
        ("regenerate", "unknown", 404, None),
    ],
)
def test_a_turn_from_the_wrong_message_is_refused_and_writes_nothing(
    parley: Parley, kind: str, target: str, status: int, code: str | None
) -> None:
    cid = parley.new_conversation()
    question, reply = turn(parley, cid, "Q1")
    before = parley.conversation(cid)
    message = {"reply": reply, "question": question, "unknown": "nope"}[target]
    path = f"/api/conversations/{cid}/messages/{message}/{kind}"
    answer = parley.call("POST", path, json_body={"content": "x"})
    assert answer.status == status, answer.body
    if code is not None:
        assert answer.json()["error"]["code"] == code
    assert parley.conversation(cid) == before


def test_a_stopped_reply_is_continued_in_place_and_the_model_gets_it_as_a_prefix(
    parley: Parley, upstream: ScriptedUpstream
) -> None:
    cid = parley.new_conversation()
    upstream.queue = [Script(tokens=200, rate=100)]
    stream = parley.send(cid, "Tell me")
    stream.read_until(lambda text: len(text) > 20)
    stream.hang_up()
    reply_id = stream.first["message_id"]
    partial = parley.wait_settled(cid, reply_id)
    assert partial["status"] == "interrupted" and partial["content"]

    upstream.queue = [Script(texts=[" and", " the end."])]
    path = f"/api/conversations/{cid}/messages/{reply_id}/continue"
    going_on = post_stream(parley, path)
    going_on.read_all()
    assert going_on.first["message_id"] == reply_id
    assert going_on.delivered == " and the end."  # only the new text
    assert going_on.final["parley"]["status"] == "completed"
    body = upstream.records[-1].body
    assert [(m["role"], m["content"]) for m in body["messages"]] == [
        ("user", "Tell me"),
        ("assistant", partial["content"]),
    ]
    assert body["continue_final_message"] is True and body["add_generation_prompt"] is False
    message = parley.message(cid, reply_id)
    assert message["content"] == partial["content"] + " and the end."
    assert (message["status"], message["continued"]) == ("completed", "prefix")
    assert len(parley.conversation(cid)["messages"]) == 2  # grown in place, not added
    found = parley.call("GET", "/api/conversations?q=end").json()["conversations"]
    assert [c["id"] for c in found] == [cid]  # searchable with its new text


def test_a_hang_up_during_a_continuation_keeps_everything(
    parley: Parley, upstream: ScriptedUpstream
) -> None:
    cid = parley.new_conversation()
    upstream.queue = [Script(tokens=100, rate=200)]
    stream = parley.send(cid, "Go")
    stream.read_until(lambda text: len(text) > 10)
    stream.hang_up()
    reply_id = stream.first["message_id"]
    first = parley.wait_settled(cid, reply_id)["content"]

    upstream.queue = [Script(tokens=200, rate=100)]
    going_on = post_stream(parley, f"/api/conversations/{cid}/messages/{reply_id}/continue")
    added = going_on.read_until(lambda text: len(text) > 10)
    going_on.hang_up()
    message = parley.wait_settled(cid, reply_id)
    assert message["status"] == "interrupted" and message["ended_by"] == "client_hangup"
    assert message["content"].startswith(first + added)
    # And it can be continued again.
    upstream.queue = [Script(texts=["!"])]
    post_stream(parley, f"/api/conversations/{cid}/messages/{reply_id}/continue").read_all()
    assert parley.message(cid, reply_id)["content"].endswith("!")


def test_continuing_a_streaming_reply_under_another_chat_is_a_404_and_leaves_its_run_be(
    data_dir: Path, upstream: ScriptedUpstream
) -> None:
    """A continuation's run is named after its reply: one named after a reply that streams in
    another chat must not take that run's place, nor forget it when it fails."""
    upstream.script = Script(tokens=2000, rate=40)  # ~50 s of reply
    parley = Parley(data_dir, upstream.base_url).start()
    try:
        chat_a, chat_b = parley.new_conversation(), parley.new_conversation()
        stream = parley.send(chat_a)
        reply_id = stream.first["message_id"]
        stream.read_until(lambda text: len(text) > 10)
        wrong = parley.call("POST", f"/api/conversations/{chat_b}/messages/{reply_id}/continue")
        assert wrong.status == 404 and wrong.json()["error"]["code"] == "not_found"
        assert parley.status()["active_turns"] == 1  # chat A's reply is still counted
        second = parley.send(chat_a, "another question")
        assert second.status == 409  # and still holds its chat
        second.close()
        assert parley.conversation(chat_b)["messages"] == []
    finally:
        began = time.monotonic()
        parley.stop()  # a shutdown still finds the run, stops it and saves it
        took = time.monotonic() - began
    stream.close()
    again = Parley(data_dir, upstream.base_url).start()
    try:
        message = again.message(chat_a, reply_id)
        assert (message["status"], message["ended_by"]) == ("interrupted", "shutdown")
        assert took < 5  # not uvicorn's graceful-shutdown backstop (8 s)
    finally:
        again.stop()


def test_a_reply_cut_at_its_length_limit_says_so_and_can_be_continued(
    parley: Parley, upstream: ScriptedUpstream
) -> None:
    cid = parley.new_conversation()
    upstream.queue = [Script(texts=["Once upon", " a time"], finish_reason="length")]
    stream = parley.send(cid, "Tell me")
    stream.read_all()
    reply_id = stream.first["message_id"]
    assert stream.final["choices"][0]["finish_reason"] == "length"
    message = parley.message(cid, reply_id)
    assert (message["status"], message["finish_reason"]) == ("completed", "length")

    upstream.queue = [Script(texts=[" there was."])]
    post_stream(parley, f"/api/conversations/{cid}/messages/{reply_id}/continue").read_all()
    message = parley.message(cid, reply_id)
    assert message["content"] == "Once upon a time there was."
    assert (message["status"], message["finish_reason"]) == ("completed", "stop")
    # Ended by the model itself now: not to be continued.
    answer = parley.call("POST", f"/api/conversations/{cid}/messages/{reply_id}/continue")
    assert answer.status == 409 and answer.json()["error"]["code"] == "not_continuable"
    # A stopped reply has no finish reason (it did not finish).
    upstream.queue = [Script(tokens=200, rate=100)]
    stopped = parley.send(cid, "Again")
    stopped.read_until(lambda text: len(text) > 5)
    stopped.hang_up()
    assert parley.wait_settled(cid, stopped.first["message_id"])["finish_reason"] is None


def test_a_reply_the_chat_went_on_after_cannot_be_continued(
    parley: Parley, upstream: ScriptedUpstream
) -> None:
    cid = parley.new_conversation()
    upstream.queue = [Script(tokens=100, rate=200)]
    stream = parley.send(cid, "Go")
    stream.read_until(lambda text: len(text) > 5)
    stream.hang_up()
    reply_id = stream.first["message_id"]
    parley.wait_settled(cid, reply_id)
    turn(parley, cid, "Next")
    answer = parley.call("POST", f"/api/conversations/{cid}/messages/{reply_id}/continue")
    assert answer.status == 409 and answer.json()["error"]["code"] == "not_continuable"


def test_a_chats_system_prompt_and_parameters_reach_the_model(
    parley: Parley, upstream: ScriptedUpstream
) -> None:
    cid = parley.new_conversation()
    settings = {
        "system": "Be brief.",
        "params": {"temperature": 0.2, "top_p": 0.9, "max_tokens": 64, "seed": 7},
    }
    reply = parley.call("PATCH", f"/api/conversations/{cid}", json_body=settings)
    assert reply.status == 200, reply.body
    assert reply.json()["system"] == "Be brief." and reply.json()["params"] == settings["params"]
    turn(parley, cid, "Hi")
    body = upstream.records[-1].body
    assert body["messages"][0] == {"role": "system", "content": "Be brief."}
    assert (body["temperature"], body["top_p"], body["max_tokens"], body["seed"]) == (
        0.2,
        0.9,
        64,
        7,
    )
    # One cleared, the others kept; a turn's own max_tokens wins over the chat's.
    change = {"params": {"temperature": None}, "system": None}
    assert parley.call("PATCH", f"/api/conversations/{cid}", json_body=change).status == 200
    parley.send(cid, "Again", max_tokens=5).read_all()
    body = upstream.records[-1].body
    assert "temperature" not in body and body["max_tokens"] == 5 and body["seed"] == 7
    assert body["messages"][0]["role"] == "user"
    assert parley.conversation(cid)["params"] == {"top_p": 0.9, "max_tokens": 64, "seed": 7}


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"temperature": 3}, "params.temperature"),
        ({"top_p": "high"}, "params.top_p"),
        ({"max_tokens": 0}, "params.max_tokens"),
        ({"seed": 1.5}, "params.seed"),
        ({"frequency": 1}, "params.frequency"),
        ([1, 2], "params"),
    ],
)
def test_bad_parameters_are_a_400_naming_the_field_and_change_nothing(
    parley: Parley, params: Any, field: str
) -> None:
    cid = parley.new_conversation()
    good = {"params": {"seed": 1}, "title": "kept"}
    assert parley.call("PATCH", f"/api/conversations/{cid}", json_body=good).status == 200
    body = {"params": params, "title": "changed", "system": "changed"}
    reply = parley.call("PATCH", f"/api/conversations/{cid}", json_body=body)
    assert reply.status == 400, reply.body
    assert f"'{field}'" in reply.json()["error"]["message"]
    conversation = parley.conversation(cid)
    assert (conversation["params"], conversation["title"], conversation["system"]) == (
        {"seed": 1},
        "kept",
        None,
    )


def test_a_backend_that_cannot_go_on_from_a_prefix_is_asked_to_and_the_reply_says_so(
    parley: Parley, upstream: ScriptedUpstream
) -> None:
    backend = parley.services.models.resolve(None).backend
    backend.continuation = "fallback"  # as for api.openai.com
    cid = parley.new_conversation()
    upstream.queue = [Script(tokens=100, rate=200)]
    stream = parley.send(cid, "Go")
    stream.read_until(lambda text: len(text) > 5)
    stream.hang_up()
    reply_id = stream.first["message_id"]
    partial = parley.wait_settled(cid, reply_id)["content"]
    upstream.queue = [Script(texts=["more"])]
    post_stream(parley, f"/api/conversations/{cid}/messages/{reply_id}/continue").read_all()
    body = upstream.records[-1].body
    assert "continue_final_message" not in body
    assert seen(upstream)[:2] == [("user", "Go"), ("assistant", partial)]
    assert seen(upstream)[2][0] == "user" and "Continue it exactly" in seen(upstream)[2][1]
    message = parley.message(cid, reply_id)
    assert (message["content"], message["continued"]) == (partial + "more", "fallback")
