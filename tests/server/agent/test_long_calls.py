"""Long tool calls (issue 41): progress shown on the step as the tool reports it, the user asked
(not a silent cut) once a call has run for its timeout, the tool list followed when the server
says it changed, and a stop's receipt that leaves out read-only tools. A real MCP server (the
tests' own, over stdio) and the scripted upstream."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from server.settings import Limits
from tests.support.client import SSEStream
from tests.support.parley import Parley
from tests.support.tools import ToolLog, now, tool_server, write_config
from tests.support.upstream import Script, ScriptedUpstream

pytestmark = pytest.mark.slow


def tool(name: str, **arguments: Any) -> dict[str, str]:
    return {"name": f"t__{name}", "arguments": json.dumps(arguments)}


@pytest.fixture
def tool_log(tmp_path: Path) -> ToolLog:
    return ToolLog(tmp_path / "tools.log")


def start(data_dir: Path, upstream: ScriptedUpstream, log: ToolLog, **entry: Any) -> Parley:
    write_config(data_dir / "mcp.json", {"t": {**tool_server(log.path), **entry}})
    server = Parley(data_dir, upstream.base_url).start()
    server.wait_for(lambda: server.status()["tools"]["ready"] == 1, timeout=30)
    return server


@pytest.fixture
def agent(data_dir: Path, upstream: ScriptedUpstream, tool_log: ToolLog) -> Iterator[Parley]:
    server = start(data_dir, upstream, tool_log)
    yield server
    server.stop()


def overdue_of(stream: SSEStream) -> dict[str, Any]:
    """Read the stream until a call's wait is asked about; its `parley.overdue` event."""
    while True:
        event = stream.next_event()
        assert isinstance(event, dict), f"the stream ended first: {stream.events}"
        found: dict[str, Any] | None = event.get("parley", {}).get("overdue")
        if found is not None:
            return found


def answer(parley: Parley, cid: str, call_id: str, action: str) -> Any:
    path = f"/api/conversations/{cid}/tool-calls/{call_id}/overdue"
    return parley.call("POST", path, json_body={"action": action})


def test_a_long_calls_progress_is_shown_on_its_step_as_it_comes(
    agent: Parley, upstream: ScriptedUpstream
) -> None:
    upstream.queue = [
        Script(tokens=0, tool_calls=[tool("progressing", steps=3, pause=0.15, tag="p")]),
        Script(texts=["done"]),
    ]
    cid = agent.new_conversation()
    stream = agent.send(cid, "go")
    stream.read_all()
    assert stream.final["parley"]["status"] == "completed"
    shown = [s["progress"] for s in stream.steps if "progress" in s]
    assert shown, stream.steps
    assert shown[-1]["total"] == 3 and shown[-1]["message"].startswith("step ")
    assert [s["status"] for s in stream.steps][-1] == "completed"


def test_a_call_past_its_timeout_asks_the_user_and_stops_only_when_told(
    data_dir: Path, upstream: ScriptedUpstream, tool_log: ToolLog
) -> None:
    server = start(data_dir, upstream, tool_log, toolTimeout={"slow": 0.3})
    try:
        upstream.queue = [
            Script(tokens=0, tool_calls=[tool("slow", seconds=60, tag="o")]),
            Script(texts=["I stopped waiting."]),
        ]
        cid = server.new_conversation()
        stream = server.send(cid, "go")
        first = overdue_of(stream)
        assert (first["tool"], first["function"]) == ("slow", "t__slow")
        assert first["waited_s"] >= 0.3
        assert tool_log.find("cancelled", tag="o") is None  # asked, not cut
        reply = answer(server, cid, first["call_id"], "wait")
        assert reply.status == 200, reply.body
        again = overdue_of(stream)  # a timeout later, asked again
        assert again["call_id"] == first["call_id"] and again["waited_s"] > first["waited_s"]
        stopped_at = now()
        assert answer(server, cid, again["call_id"], "stop").status == 200
        assert tool_log.wait("cancelled", tag="o", timeout=5)["at"] - stopped_at < 0.5
        stream.read_all()
        assert stream.final["parley"]["status"] == "completed"  # the turn goes on
        (step,) = [
            p
            for p in server.message(cid, stream.first["message_id"])["parts"]
            if p["type"] == "tool"
        ]
        assert step["status"] == "error" and step["result"].startswith("Stopped by the user after")
        told = upstream.records[-1].body["messages"][-1]
        assert told["role"] == "tool" and "Stopped by the user" in told["content"]
        # Not asked about any more: a late answer is a 409.
        assert answer(server, cid, first["call_id"], "wait").status == 409
    finally:
        server.stop()


def test_a_call_the_user_waits_for_gives_its_result(
    data_dir: Path, upstream: ScriptedUpstream, tool_log: ToolLog
) -> None:
    # The server's own timeout: asked after 1 s; waited for, the call ends 0.5 s later, well
    # before a second question would come (1 s after the answer).
    server = start(data_dir, upstream, tool_log, timeout=1.0)
    try:
        upstream.queue = [
            Script(tokens=0, tool_calls=[tool("slow", seconds=1.5, tag="w")]),
            Script(texts=["ok"]),
        ]
        cid = server.new_conversation()
        stream = server.send(cid, "go")
        asked = overdue_of(stream)
        assert answer(server, cid, asked["call_id"], "wait").status == 200
        stream.read_all()
        message = server.message(cid, stream.first["message_id"])
        (step,) = [p for p in message["parts"] if p["type"] == "tool"]
        assert (step["status"], step["result"]) == ("completed", "slept 1.5 s")
        assert "overdue" not in step  # answered: no longer asked
    finally:
        server.stop()


def test_without_a_timeout_of_its_own_a_call_is_asked_about_after_the_default(
    data_dir: Path, upstream: ScriptedUpstream, tool_log: ToolLog
) -> None:
    # No toolTimeout, no server timeout: --tool-timeout (Limits.tool_call_timeout) applies.
    write_config(data_dir / "mcp.json", {"t": tool_server(tool_log.path)})
    server = Parley(data_dir, upstream.base_url, limits=Limits(tool_call_timeout=0.3)).start()
    try:
        server.wait_for(lambda: server.status()["tools"]["ready"] == 1, timeout=30)
        upstream.queue = [
            Script(tokens=0, tool_calls=[tool("slow", seconds=60, tag="d")]),
            Script(texts=["ok"]),
        ]
        cid = server.new_conversation()
        stream = server.send(cid, "go")
        asked = overdue_of(stream)
        assert asked["tool"] == "slow" and asked["waited_s"] >= 0.3
        assert answer(server, cid, asked["call_id"], "stop").status == 200
        stream.read_all()
        assert stream.final["parley"]["status"] == "completed"
    finally:
        server.stop()


def test_a_sub_agents_call_past_its_timeout_asks_the_user_too(
    data_dir: Path, upstream: ScriptedUpstream, tool_log: ToolLog
) -> None:
    # A child's long call is asked about like the parent's (it was waited on silently).
    server = start(data_dir, upstream, tool_log, toolTimeout={"slow": 0.3})
    try:
        upstream.queue = [
            Script(tokens=0, tool_calls=[{"name": "delegate", "arguments": json.dumps(
                {"task": "SLOW-TASK"})}]),
            Script(texts=["The child stopped."]),
        ]  # fmt: skip
        upstream.by_task["SLOW-TASK"] = [
            Script(tokens=0, tool_calls=[tool("slow", seconds=60, tag="c")]),
            Script(texts=["it was stopped"]),
        ]
        cid = server.new_conversation()
        stream = server.send(cid, "go")
        asked = overdue_of(stream)
        assert (asked["tool"], asked["function"]) == ("slow", "t__slow")
        assert tool_log.find("cancelled", tag="c") is None  # asked, not cut
        assert answer(server, cid, asked["call_id"], "stop").status == 200
        tool_log.wait("cancelled", tag="c", timeout=5)
        stream.read_all()
        assert stream.final["parley"]["status"] == "completed"
        (step,) = [
            p
            for p in server.message(cid, stream.first["message_id"])["parts"]
            if p["type"] == "tool"
        ]
        (inner,) = [p for p in step["agent"]["parts"] if p["type"] == "tool"]
        assert inner["status"] == "error" and inner["result"].startswith("Stopped by the user")
        assert asked["sub_agent"] == {"call_id": step["id"], "task": "SLOW-TASK"}  # who asks
        assert step["result"] == "it was stopped"
    finally:
        server.stop()


def test_a_server_that_says_its_tools_changed_is_listed_again(
    agent: Parley, upstream: ScriptedUpstream, tool_log: ToolLog
) -> None:
    upstream.queue = [Script(tokens=0, tool_calls=[tool("grow")]), Script(texts=["grown"])]
    cid = agent.new_conversation()
    agent.send(cid, "grow").read_all()
    tool_log.wait("grew")

    def offered() -> set[str]:
        tools = agent.call("GET", "/api/tools").json()["servers"][0]["tools"]
        return {t["name"] for t in tools}

    agent.wait_for(lambda: "grown" in offered(), timeout=10)
    upstream.queue = [Script(texts=["hi"])]
    agent.send(cid, "again").read_all()
    assert "t__grown" in {t["function"]["name"] for t in upstream.records[-1].body["tools"]}


def test_a_stops_receipt_leaves_out_the_calls_of_read_only_tools(
    agent: Parley, upstream: ScriptedUpstream, tool_log: ToolLog
) -> None:
    upstream.queue = [
        Script(
            tokens=0,
            tool_calls=[tool("look", seconds=30, tag="r"), tool("slow", seconds=30, tag="s")],
        )
    ]
    cid = agent.new_conversation()
    stream = agent.send(cid, "go")
    stream.first  # noqa: B018
    tool_log.wait("call", tag="r")
    tool_log.wait("call", tag="s")
    stream.hang_up()
    message = agent.wait_settled(cid, stream.first["message_id"])
    ended = message["ended"]
    assert ended["tool_calls"] == 2
    assert [a["name"] for a in ended["may_have_acted"]] == ["slow"]
    look = next(p for p in message["parts"] if p["type"] == "tool" and p["name"] == "look")
    assert look["read_only"] is True
