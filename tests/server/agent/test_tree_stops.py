"""One stop ends the whole tree (issue 41): a hang-up or a shutdown ends every sub-agent
through the same path as the reply's own work (its model stream closed, its tools cancelled
at their servers, its approval waits ended), each child's partial result is kept and marked
interrupted, and the stopped reply's receipt says what the stop ended. Also a child's own
step limit. A real MCP server (the tests' own, over stdio), the scripted upstream, and
Parley on a real socket; a hang-up closes the client's socket."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from server.limits import AgentLimits
from server.settings import Limits
from server.types import NOT_APPROVED
from tests.server.agent.test_approvals import approval_of, decide
from tests.server.agent.test_delegate import call, steps, tool
from tests.support.client import SSEStream, outcome
from tests.support.parley import Parley
from tests.support.tools import ToolLog, tool_server, untrusted_text, write_config
from tests.support.upstream import Record, Script, ScriptedUpstream
from tests.support.waiting import stays_true

pytestmark = pytest.mark.slow


@pytest.fixture
def tool_log(tmp_path: Path) -> ToolLog:
    return ToolLog(tmp_path / "tools.log")


def start(
    data_dir: Path,
    upstream: ScriptedUpstream,
    log: ToolLog,
    trust: str = "allow",
    limits: Limits | None = None,
) -> Parley:
    write_config(data_dir / "mcp.json", {"t": tool_server(log.path, trust=trust)})
    server = Parley(data_dir, upstream.base_url, limits=limits).start()
    server.wait_for(lambda: server.status()["tools"]["ready"] == 1, timeout=30)
    return server


@pytest.fixture
def agent(data_dir: Path, upstream: ScriptedUpstream, tool_log: ToolLog) -> Iterator[Parley]:
    server = start(data_dir, upstream, tool_log)
    yield server
    server.stop()


def child_requests(upstream: ScriptedUpstream, key: str) -> list[Record]:
    """The model calls of the child whose task holds `key` (its first user message)."""
    found = []
    for record in upstream.records:
        users = [m for m in record.body["messages"] if m["role"] == "user"]
        if users and key in str(users[0]["content"]):
            found.append(record)
    return found


def step_event(stream: SSEStream, predicate: Any) -> dict[str, Any]:
    """Read the stream until a step's event (`parley.step`) satisfies `predicate`."""
    while True:
        event = stream.next_event()
        assert isinstance(event, dict), f"the stream ended first: {stream.events}"
        step: dict[str, Any] | None = event.get("parley", {}).get("step")
        if step is not None and predicate(step):
            return step


def danger_calls(log: ToolLog) -> list[dict[str, Any]]:
    return [e for e in log.events() if e["event"] == "call" and e["tool"] == "danger"]


def test_a_hang_up_ends_a_childs_approval_wait_and_its_call_never_runs(
    data_dir: Path, upstream: ScriptedUpstream, tool_log: ToolLog
) -> None:
    server = start(data_dir, upstream, tool_log, trust="ask")
    try:
        upstream.queue = [Script(tokens=0, tool_calls=[call("delegate", task="ASK-TASK")])]
        upstream.script = Script(texts=["never said"])
        upstream.by_task["ASK-TASK"] = [
            Script(texts=["Asking. "], tool_calls=[tool("danger", target="x")]),
            Script(texts=["acted on x"]),
        ]
        cid = server.new_conversation()
        stream = server.send(cid, "go")
        approval = approval_of(stream)  # the child's call, shown as the parent's
        assert approval["function"] == "t__danger"
        stream.hang_up()

        message = server.wait_settled(cid, stream.first["message_id"])
        assert (message["status"], message["ended_by"]) == ("interrupted", "client_hangup")
        ended = message["ended"]
        assert (ended["approvals"], ended["sub_agents"]) == (1, 1)
        assert (ended["model_calls"], ended["tool_calls"], ended["may_have_acted"]) == (0, 0, [])
        (step,) = steps(message["parts"])
        assert (step["status"], step["result"]) == ("interrupted", "Asking. ")  # kept
        (inner,) = steps(step["agent"]["parts"])
        assert inner["id"] == approval["call_id"]
        assert (inner["status"], inner["result"]) == ("interrupted", NOT_APPROVED)
        server.wait_idle()

        late = decide(server, cid, approval["call_id"], decision="allow", remember="once")
        assert late.status == 409 and late.json()["error"]["code"] == "not_awaiting_approval"
        stays_true(lambda: danger_calls(tool_log) == [], during=0.2)
        assert len(child_requests(upstream, "ASK-TASK")) == 1  # the child never went on
        assert not [r for r in upstream.records if "never said" in str(r.body)]
    finally:
        server.stop()


def test_a_hang_up_closes_a_childs_model_stream_and_keeps_what_it_said(
    agent: Parley, upstream: ScriptedUpstream
) -> None:
    upstream.queue = [Script(tokens=0, tool_calls=[call("delegate", task="TALK-TASK")])]
    upstream.script = Script(texts=["never said"])
    # The child's model says two pieces, then holds its stream open, silent.
    upstream.by_task["TALK-TASK"] = [Script(texts=["Half ", "said. ", "Never."], stall_after=2)]
    cid = agent.new_conversation()
    stream = agent.send(cid, "go")

    def child_said(step: dict[str, Any]) -> bool:
        parts = step.get("agent", {}).get("parts", [])
        return [p.get("text") for p in parts] == ["Half said. "]

    step_event(stream, child_said)  # the child's partial text reached the reply
    (child_call,) = child_requests(upstream, "TALK-TASK")
    assert child_call.hung_up_at is None
    stream.hang_up()

    upstream.wait_for(lambda: child_call.hung_up_at)  # the child's request was closed
    message = agent.wait_settled(cid, stream.first["message_id"])
    assert (message["status"], message["ended_by"]) == ("interrupted", "client_hangup")
    ended = message["ended"]
    assert (ended["model_calls"], ended["sub_agents"], ended["tool_calls"]) == (1, 1, 0)
    (step,) = steps(message["parts"])
    assert (step["status"], step["result"]) == ("interrupted", "Half said. ")
    assert step["agent"]["parts"] == [{"type": "text", "text": "Half said. "}]
    assert not [r for r in upstream.records if "never said" in str(r.body)]
    agent.wait_idle()


def test_a_shutdown_cancels_two_childrens_calls_and_saves_the_reply_as_shutdown(
    data_dir: Path, upstream: ScriptedUpstream, tool_log: ToolLog
) -> None:
    server = start(data_dir, upstream, tool_log)
    upstream.queue = [
        Script(
            tokens=0,
            tool_calls=[call("delegate", task="DOWN-A"), call("delegate", task="DOWN-B")],
        )
    ]
    upstream.script = Script(texts=["never said"])
    for key, tag in (("DOWN-A", "a"), ("DOWN-B", "b")):
        upstream.by_task[key] = [
            Script(texts=[f"{tag} starts. "], tool_calls=[tool("slow", seconds=30, tag=tag)])
        ]
    cid = server.new_conversation()
    stream = server.send(cid, "two helpers")
    message_id = stream.first["message_id"]
    tool_log.wait("call", tag="a")
    tool_log.wait("call", tag="b")

    stopper = threading.Thread(target=server.stop)  # as on SIGTERM (serve.py: request_stop)
    stopper.start()
    stream.read_all()  # the stream ends properly: a final chunk, then [DONE]
    stopper.join(20)
    assert not stopper.is_alive()
    assert outcome(stream.final) == ("interrupted", "shutdown")
    assert stream.final["parley"]["ended"]["sub_agents"] == 2
    for tag in ("a", "b"):
        tool_log.wait("cancelled", tag=tag, timeout=5)  # the server was told
        assert tool_log.find("done", tag=tag) is None

    conn = sqlite3.connect(data_dir / "parley.sqlite3")
    try:
        row = conn.execute(
            "SELECT status, ended_by, parts, ended FROM messages WHERE id = ?", (message_id,)
        ).fetchone()
    finally:
        conn.close()
    assert row[:2] == ("interrupted", "shutdown")
    ended = json.loads(row[3])
    assert (ended["sub_agents"], ended["tool_calls"], ended["approvals"]) == (2, 2, 0)
    acted = sorted(json.loads(a["arguments"])["tag"] for a in ended["may_have_acted"])
    assert acted == ["a", "b"]
    children = steps(json.loads(row[2]))
    assert [s["status"] for s in children] == ["interrupted", "interrupted"]
    assert sorted(s["result"] for s in children) == ["a starts. ", "b starts. "]
    for child in children:
        (inner,) = steps(child["agent"]["parts"])
        assert (inner["name"], inner["status"], inner["result"]) == ("slow", "interrupted", None)
    assert not [r for r in upstream.records if "never said" in str(r.body)]


def test_a_childs_late_tool_result_after_a_hang_up_is_never_saved(
    agent: Parley, upstream: ScriptedUpstream, tool_log: ToolLog
) -> None:
    upstream.queue = [Script(tokens=0, tool_calls=[call("delegate", task="LATE-TASK")])]
    upstream.script = Script(texts=["never said"])
    upstream.by_task["LATE-TASK"] = [
        Script(texts=["Trying. "], tool_calls=[tool("stubborn", seconds=3, tag="late")]),
        Script(texts=["never said either"]),
    ]
    cid = agent.new_conversation()
    stream = agent.send(cid, "go")
    message_id = stream.first["message_id"]
    tool_log.wait("call", tag="late")
    stream.hang_up()
    message = agent.wait_settled(cid, message_id)
    assert (message["status"], message["ended_by"]) == ("interrupted", "client_hangup")
    assert tool_log.find("done", tag="late") is None  # stopped while the tool still ran

    # Its late result comes. One more call to the same server, answered after the late
    # result on the same pipe, marks the moment Parley has read it.
    tool_log.wait("done", tag="late", timeout=15)
    upstream.queue = [Script(tokens=0, tool_calls=[tool("echo", text="after")])]
    upstream.script = Script(texts=["done"])
    after = agent.send(agent.new_conversation(), "after")
    after.read_all()
    assert [s["status"] for s in after.steps] == ["running", "completed"]

    (step,) = steps(agent.message(cid, message_id)["parts"])
    assert (step["status"], step["result"]) == ("interrupted", "Trying. ")
    (inner,) = steps(step["agent"]["parts"])
    assert (inner["name"], inner["status"], inner["result"]) == ("stubborn", "interrupted", None)
    assert "late result" not in json.dumps(agent.message(cid, message_id))
    assert len(child_requests(upstream, "LATE-TASK")) == 1  # the child never went on
    assert not [r for r in upstream.records if "never said" in str(r.body)]


def limited_child(data_dir: Path, upstream: ScriptedUpstream, log: ToolLog) -> Parley:
    """A server whose sub-agents make at most 2 model calls, with a parent that delegates
    once to a child whose model calls a tool at every step (it ignores `tool_choice`)."""
    server = start(data_dir, upstream, log, limits=Limits(agents=AgentLimits(max_steps=2)))
    upstream.queue = [
        Script(tokens=0, tool_calls=[call("delegate", task="LOOP-TASK")]),
        Script(texts=["parent done"]),
    ]
    upstream.by_task["LOOP-TASK"] = [
        Script(texts=[f"Step {n}. "], tool_calls=[tool("echo", text=str(n))]) for n in (1, 2, 3)
    ]
    return server


def test_a_child_that_keeps_calling_tools_stops_after_its_max_steps_and_says_so(
    data_dir: Path, upstream: ScriptedUpstream, tool_log: ToolLog
) -> None:
    server = limited_child(data_dir, upstream, tool_log)
    try:
        cid = server.new_conversation()
        stream = server.send(cid, "go")
        stream.read_all()
        assert stream.final["parley"]["status"] == "completed"

        first, last = child_requests(upstream, "LOOP-TASK")  # max_steps model calls, no more
        assert first.body.get("tool_choice") is None
        assert last.body["tool_choice"] == "none"  # the last step may call no tool
        (step,) = steps(server.message(cid, stream.first["message_id"])["parts"])
        assert step["status"] == "completed"
        ran, refused = steps(step["agent"]["parts"])
        assert (ran["status"], ran["result"]) == ("completed", "echo: 1")
        assert refused["status"] == "error" and "limit of 2 steps" in refused["result"]
        assert [e.get("text") for e in tool_log.events() if e["event"] == "call"] == ["1"]
        # The parent goes on, told what the child said and that it was cut at its limit.
        told = upstream.records[-1].body["messages"][-1]
        assert told["role"] == "tool" and told["tool_call_id"] == step["id"]
        said = untrusted_text(told["content"])
        assert said.startswith("Step 1. \n\nStep 2. ")  # what it said, then why it ended
        assert "reached its limit of 2 steps" in said
    finally:
        server.stop()


def test_a_stops_receipt_leaves_out_a_childs_calls_of_read_only_tools(
    agent: Parley, upstream: ScriptedUpstream, tool_log: ToolLog
) -> None:
    upstream.queue = [Script(tokens=0, tool_calls=[call("delegate", task="READ-TASK")])]
    upstream.by_task["READ-TASK"] = [
        Script(
            texts=["Both. "],
            tool_calls=[tool("look", seconds=30, tag="r"), tool("slow", seconds=30, tag="s")],
        )
    ]
    cid = agent.new_conversation()
    stream = agent.send(cid, "go")
    stream.first  # noqa: B018 (the turn is open)
    tool_log.wait("call", tag="r")
    tool_log.wait("call", tag="s")
    stream.hang_up()

    message = agent.wait_settled(cid, stream.first["message_id"])
    ended = message["ended"]
    assert (ended["tool_calls"], ended["sub_agents"]) == (2, 1)
    assert [(a["server"], a["name"]) for a in ended["may_have_acted"]] == [("t", "slow")]
    assert json.loads(ended["may_have_acted"][0]["arguments"])["tag"] == "s"
    (step,) = steps(message["parts"])
    look, slow = steps(step["agent"]["parts"])
    assert (look["name"], look.get("read_only")) == ("look", True)
    assert (slow["name"], slow.get("read_only")) == ("slow", None)
    assert [look["status"], slow["status"]] == ["interrupted", "interrupted"]
    agent.wait_idle()
