"""Asking before a tool acts (issue 17): a call to a tool trusted "ask" waits, as a step
`awaiting_approval`, until the user decides; the wait is part of the one stop path (Stop, a
hang-up, shutdown, kill -9 all end it, and nothing runs afterwards).

A real MCP server over stdio (tests/support/mcp_tools.py) whose `danger` tool records every
call, and the scripted upstream, which records what the model was sent.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from server.agent.steps import DENIED, NOT_APPROVED, NOT_APPROVED_AT_CRASH
from tests.support.client import SSEStream, request
from tests.support.parley import Parley
from tests.support.process import ServerProcess
from tests.support.tools import ToolLog, tool_server, write_config
from tests.support.upstream import Script, ScriptedUpstream
from tests.support.waiting import stays_true, wait_for

pytestmark = pytest.mark.slow

DANGER = {"name": "t__danger", "arguments": json.dumps({"target": "everything"})}


@pytest.fixture
def tool_log(tmp_path: Path) -> ToolLog:
    return ToolLog(tmp_path / "tools.log")


def start(data_dir: Path, upstream: ScriptedUpstream, log: ToolLog) -> Parley:
    """Parley whose MCP server `t` has no `trust` in its entry: the default, "ask"."""
    write_config(data_dir / "mcp.json", {"t": tool_server(log.path, trust=None)})
    server = Parley(data_dir, upstream.base_url).start()
    server.wait_for(lambda: server.status()["tools"]["ready"] == 1, timeout=30)
    return server


@pytest.fixture
def asking(data_dir: Path, upstream: ScriptedUpstream, tool_log: ToolLog) -> Iterator[Parley]:
    server = start(data_dir, upstream, tool_log)
    yield server
    server.stop()


def approval_of(stream: SSEStream) -> dict[str, Any]:
    """Read the stream until a call awaits approval; its `parley.approval` event."""
    while True:
        event = stream.next_event()
        assert isinstance(event, dict), f"the stream ended first: {stream.events}"
        found: dict[str, Any] | None = event.get("parley", {}).get("approval")
        if found is not None:
            return found


def approvals(stream: SSEStream) -> list[dict[str, Any]]:
    """The approval events a stream carried."""
    return [
        e["parley"]["approval"]
        for e in stream.events
        if isinstance(e, dict) and "approval" in e.get("parley", {})
    ]


def decide(parley: Parley, cid: str, call_id: str, **body: Any) -> Any:
    return parley.call("POST", f"/api/conversations/{cid}/tool-calls/{call_id}", json_body=body)


def calls(log: ToolLog) -> list[dict[str, Any]]:
    return [e for e in log.events() if e["event"] == "call" and e["tool"] == "danger"]


def step_of(message: dict[str, Any]) -> dict[str, Any]:
    (step,) = [part for part in message["parts"] if part["type"] == "tool"]
    return step


def test_a_call_waits_for_approval_and_runs_once_allowed(
    asking: Parley, upstream: ScriptedUpstream, tool_log: ToolLog
) -> None:
    upstream.queue = [Script(texts=["Let me. "], tool_calls=[DANGER]), Script(texts=["Done."])]
    cid = asking.new_conversation()
    stream = asking.send(cid, "do it")
    approval = approval_of(stream)
    assert approval["server"] == "t" and approval["tool"] == "danger"
    assert approval["function"] == "t__danger"
    assert json.loads(approval["arguments"]) == {"target": "everything"}
    assert "sub_agent" not in approval  # the reply's own call
    # The step came first, saying so; it is on disk with its arguments (checkpointed).
    assert stream.steps[-1]["status"] == "awaiting_approval"
    assert stream.steps[-1]["id"] == approval["call_id"]

    def saved_step() -> dict[str, Any] | None:
        parts = asking.message(cid, stream.first["message_id"])["parts"]
        return next((p for p in parts if p["type"] == "tool"), None)

    saved = wait_for(saved_step, 5)
    assert (saved["status"], saved["arguments"]) == ("awaiting_approval", approval["arguments"])

    stays_true(lambda: calls(tool_log) == [], during=0.3)  # not called while it waits
    status = asking.status()
    assert status["active_turns"] == 1
    assert status["models"][0]["in_use"] is False  # the wait holds no model

    reply = decide(asking, cid, approval["call_id"], decision="allow")
    assert reply.status == 200, reply.body
    answer = reply.json()
    assert (answer["decision"], answer["remember"]) == ("allow", "once")
    assert answer["step"]["status"] == "running"
    stream.read_all()
    assert stream.final["parley"]["status"] == "completed"
    assert [c["target"] for c in calls(tool_log)] == ["everything"]
    assert [s["status"] for s in stream.steps] == ["awaiting_approval", "running", "completed"]
    step = step_of(asking.message(cid, stream.first["message_id"]))
    assert (step["status"], step["result"]) == (
        "completed",
        "did something dangerous to 'everything'",
    )
    assert "did something dangerous" in upstream.records[1].body["messages"][-1]["content"]

    # Decided already: a second decision is a 409 and runs nothing more.
    again = decide(asking, cid, approval["call_id"], decision="allow")
    assert again.status == 409 and again.json()["error"]["code"] == "not_awaiting_approval"
    assert len(calls(tool_log)) == 1


def test_deny_runs_nothing_and_the_model_is_told(
    asking: Parley, upstream: ScriptedUpstream, tool_log: ToolLog
) -> None:
    upstream.queue = [Script(tokens=0, tool_calls=[DANGER]), Script(texts=["Understood."])]
    cid = asking.new_conversation()
    stream = asking.send(cid, "do it")
    approval = approval_of(stream)
    reply = decide(asking, cid, approval["call_id"], decision="deny")
    assert reply.status == 200, reply.body
    assert reply.json()["step"]["status"] == "denied"
    stream.read_all()
    assert stream.final["parley"]["status"] == "completed"  # the turn went on
    assert calls(tool_log) == []
    step = step_of(asking.message(cid, stream.first["message_id"]))
    assert (step["status"], step["result"]) == ("denied", DENIED)
    told = upstream.records[1].body["messages"][-1]
    assert told["role"] == "tool" and told["tool_call_id"] == approval["call_id"]
    assert "Denied by the user" in told["content"]
    assert len(upstream.records) == 2


def test_allow_for_this_chat_runs_later_calls_there_and_another_chat_asks_again(
    asking: Parley, upstream: ScriptedUpstream, tool_log: ToolLog
) -> None:
    upstream.queue = [Script(tokens=0, tool_calls=[DANGER]), Script(texts=["One."])]
    chat = asking.new_conversation()
    first = asking.send(chat, "one")
    approval = approval_of(first)
    reply = decide(asking, chat, approval["call_id"], decision="allow", remember="chat")
    assert reply.status == 200 and reply.json()["remember"] == "chat"
    first.read_all()
    assert len(calls(tool_log)) == 1

    # The same chat, a later turn: it runs without asking.
    upstream.queue = [Script(tokens=0, tool_calls=[DANGER]), Script(texts=["Two."])]
    second = asking.send(chat, "two")
    second.read_all()
    assert second.final["parley"]["status"] == "completed"
    assert not approvals(second)
    assert [s["status"] for s in second.steps] == ["running", "completed"]
    assert len(calls(tool_log)) == 2

    # Another chat asks again.
    upstream.queue = [Script(tokens=0, tool_calls=[DANGER])]
    other = asking.new_conversation()
    third = asking.send(other, "three")
    approval_of(third)
    stays_true(lambda: len(calls(tool_log)) == 2, during=0.2)
    third.hang_up()
    asking.wait_settled(other, third.first["message_id"])
    assert len(calls(tool_log)) == 2


def test_stop_while_awaiting_approval_settles_at_once_and_a_late_approval_runs_nothing(
    asking: Parley, upstream: ScriptedUpstream, tool_log: ToolLog
) -> None:
    upstream.queue = [Script(tokens=0, tool_calls=[DANGER])]
    upstream.script = Script(texts=["never said"])
    cid = asking.new_conversation()
    stream = asking.send(cid, "do it")
    approval = approval_of(stream)
    stopped_wall = time.time()
    stream.hang_up()  # Stop, a window closed, a dropped client: one path
    message = asking.wait_settled(cid, stream.first["message_id"])
    assert message["completed_at"] - stopped_wall < 2  # bench: a few ms
    assert (message["status"], message["ended_by"]) == ("interrupted", "client_hangup")
    step = step_of(message)
    assert (step["status"], step["result"]) == ("interrupted", NOT_APPROVED)
    assert step["ended_at"] is not None
    asking.wait_idle()

    late = decide(asking, cid, approval["call_id"], decision="allow")
    assert late.status == 409 and late.json()["error"]["code"] == "not_awaiting_approval"
    stays_true(lambda: calls(tool_log) == [], during=0.2)
    assert len(upstream.records) == 1  # no further model call
    assert step_of(asking.message(cid, stream.first["message_id"]))["status"] == "interrupted"


def test_two_calls_awaiting_are_both_ended_by_one_stop(
    asking: Parley, upstream: ScriptedUpstream, tool_log: ToolLog
) -> None:
    other = {"name": "t__danger", "arguments": json.dumps({"target": "more"})}
    upstream.queue = [Script(tokens=0, tool_calls=[DANGER, other])]
    cid = asking.new_conversation()
    stream = asking.send(cid, "both")
    first, second = approval_of(stream), approval_of(stream)
    assert first["call_id"] != second["call_id"]
    stream.hang_up()
    message = asking.wait_settled(cid, stream.first["message_id"])
    steps = [p for p in message["parts"] if p["type"] == "tool"]
    assert [(s["status"], s["result"]) for s in steps] == [("interrupted", NOT_APPROVED)] * 2
    for approval in (first, second):
        assert decide(asking, cid, approval["call_id"], decision="allow").status == 409
    assert calls(tool_log) == []


def test_calls_whose_ids_are_not_plain_tokens_get_parley_s_own_and_can_be_decided(
    asking: Parley, upstream: ScriptedUpstream, tool_log: ToolLog
) -> None:
    # A decision names its call in the path: an id with "/" or "?" could never be reached.
    slashed = {**DANGER, "id": "call/1?x#y"}
    spaced = {"name": "t__danger", "arguments": json.dumps({"target": "more"}), "id": "a b"}
    upstream.queue = [Script(tokens=0, tool_calls=[slashed, spaced]), Script(texts=["Done."])]
    cid = asking.new_conversation()
    stream = asking.send(cid, "both")
    first, second = approval_of(stream), approval_of(stream)
    assert first["call_id"] != second["call_id"]
    for approval in (first, second):
        assert all(c.isalnum() or c in "_.:-" for c in approval["call_id"]), approval
        assert decide(asking, cid, approval["call_id"], decision="allow").status == 200
    stream.read_all()
    assert stream.final["parley"]["status"] == "completed"
    assert sorted(c["target"] for c in calls(tool_log)) == ["everything", "more"]
    sent_back = upstream.records[1].body["messages"]
    said = [call["id"] for call in sent_back[-3]["tool_calls"]]
    answered = [m["tool_call_id"] for m in sent_back[-2:]]
    assert said == answered == [first["call_id"], second["call_id"]]


def test_calls_named_by_dots_alone_get_parley_s_own_ids_and_can_be_decided(
    asking: Parley, upstream: ScriptedUpstream, tool_log: ToolLog
) -> None:
    """Issue 37: "." and ".." are plain characters but not a path segment a client keeps
    (httpx resolves them): the decision went to another route and the turn waited."""
    dot = {**DANGER, "id": "."}
    dots = {"name": "t__danger", "arguments": json.dumps({"target": "more"}), "id": ".."}
    upstream.queue = [Script(tokens=0, tool_calls=[dot, dots]), Script(texts=["Done."])]
    cid = asking.new_conversation()
    stream = asking.send(cid, "both")
    first, second = approval_of(stream), approval_of(stream)
    for approval in (first, second):
        assert approval["call_id"].strip(".") != "", approval
        assert decide(asking, cid, approval["call_id"], decision="allow").status == 200
    stream.read_all()
    assert stream.final["parley"]["status"] == "completed"
    assert len(calls(tool_log)) == 2


def test_shutdown_while_awaiting_approval_saves_the_turn_and_nothing_runs_after_restart(
    data_dir: Path, upstream: ScriptedUpstream, tool_log: ToolLog
) -> None:
    upstream.queue = [Script(tokens=0, tool_calls=[DANGER])]
    server = start(data_dir, upstream, tool_log)
    cid = server.new_conversation()
    stream = server.send(cid, "do it")
    approval = approval_of(stream)
    began = time.monotonic()
    assert server.stop()
    assert time.monotonic() - began < 8  # a settle is ms; the rest is stopping the servers
    stream.read_all()
    assert (stream.final["parley"]["status"], stream.final["parley"]["ended_by"]) == (
        "interrupted",
        "shutdown",
    )

    restarted = start(data_dir, upstream, tool_log)
    try:
        message = restarted.message(cid, stream.first["message_id"])
        assert (message["status"], message["ended_by"]) == ("interrupted", "shutdown")
        assert (step_of(message)["status"], step_of(message)["result"]) == (
            "interrupted",
            NOT_APPROVED,
        )
        late = decide(restarted, cid, approval["call_id"], decision="allow")
        assert late.status == 409
    finally:
        restarted.stop()
    assert calls(tool_log) == []


def test_kill_9_while_awaiting_approval_leaves_the_step_interrupted_and_nothing_runs(
    data_dir: Path,
    upstream: ScriptedUpstream,
    tool_log: ToolLog,
    tmp_path: Path,
    processes: list[ServerProcess],
) -> None:
    config = write_config(tmp_path / "tools.json", {"t": tool_server(tool_log.path, trust=None)})
    upstream.queue = [Script(texts=["Checking. "], tool_calls=[DANGER])]
    args = ("--mcp-config", str(config))
    process = ServerProcess(data_dir, upstream.base_url, *args).start()
    processes.append(process)

    def get(port: int, token: str, path: str) -> Any:
        reply = request(port, "GET", path, token=token)
        assert reply.status == 200, reply.body
        return reply.json()

    wait_for(lambda: get(process.port, process.token, "/api/status")["tools"]["ready"], 30)
    cid = process.new_conversation()
    stream = process.send(cid, "go")
    approval = approval_of(stream)

    def checkpointed() -> bool:
        messages = get(process.port, process.token, f"/api/conversations/{cid}")["messages"]
        parts = messages[1]["parts"] or []
        return any(p.get("status") == "awaiting_approval" for p in parts)

    wait_for(checkpointed, 5)  # the step is on disk, waiting
    process.kill()
    stream.close()

    restarted = ServerProcess(data_dir, upstream.base_url, *args).start()
    processes.append(restarted)
    message = get(restarted.port, restarted.token, f"/api/conversations/{cid}")["messages"][1]
    assert (message["status"], message["ended_by"]) == ("interrupted", "crash")
    assert message["content"] == "Checking. "
    step = step_of(message)
    assert (step["id"], step["status"]) == (approval["call_id"], "interrupted")
    assert step["result"] == NOT_APPROVED_AT_CRASH and step["ended_at"] is not None
    path = f"/api/conversations/{cid}/tool-calls/{approval['call_id']}"
    late = request(
        restarted.port, "POST", path, token=restarted.token, json_body={"decision": "allow"}
    )
    assert late.status == 409
    wait_for(lambda: get(restarted.port, restarted.token, "/api/status")["tools"]["ready"], 30)
    # nothing ran, before or after the restart
    stays_true(lambda: calls(tool_log) == [], during=0.2)
    restarted.terminate()


def test_decisions_that_cannot_be_taken_are_refused_naming_why(
    asking: Parley, upstream: ScriptedUpstream, tool_log: ToolLog
) -> None:
    upstream.queue = [Script(tokens=0, tool_calls=[DANGER]), Script(texts=["ok"])]
    cid = asking.new_conversation()
    stream = asking.send(cid, "do it")
    call_id = approval_of(stream)["call_id"]
    for body, field in (
        ({}, "'decision'"),
        ({"decision": "yes"}, "'decision'"),
        ({"decision": "allow", "remember": "forever"}, "'remember'"),
    ):
        reply = decide(asking, cid, call_id, **body)
        assert reply.status == 400 and field in reply.json()["error"]["message"], reply.body
    assert decide(asking, cid, "no-such-call", decision="allow").status == 404
    assert decide(asking, "no-such-chat", call_id, decision="allow").status == 404
    assert calls(tool_log) == []  # none of them decided anything
    assert decide(asking, cid, call_id, decision="deny").status == 200
    stream.read_all()
    # Once the turn ended: a stored call is a 409, an unknown one still a 404.
    assert decide(asking, cid, call_id, decision="allow").status == 409
    assert decide(asking, cid, "no-such-call", decision="allow").status == 404
    assert calls(tool_log) == []


def test_the_wait_for_approval_is_not_counted_in_first_token(
    asking: Parley, upstream: ScriptedUpstream, tool_log: ToolLog
) -> None:
    """Issue 43 item 4: a reply whose first words come after the user's approval counts its
    first token from the model call that said them, not from a wait on the user."""
    upstream.queue = [Script(tokens=0, tool_calls=[DANGER]), Script(texts=["Done."])]
    cid = asking.new_conversation()
    stream = asking.send(cid, "do it")
    approval = approval_of(stream)
    waited = time.monotonic()
    stays_true(lambda: calls(tool_log) == [], during=1.0)  # the user takes a second
    assert decide(asking, cid, approval["call_id"], decision="allow").status == 200
    waited = time.monotonic() - waited
    stream.read_all()
    usage = stream.final["usage"]
    assert usage["ttft_ms"] < waited * 1000 / 2  # the model's own latency, not the user's
