"""The agent in the one turn path: a model that calls tools of a real MCP server (the tests'
own, over stdio), steps saved as parts, and the stop reaching every point of a turn."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from server.settings import Limits
from tests.support.parley import Parley
from tests.support.tools import (
    REPO,
    ToolLog,
    now,
    tool_server,
    untrusted_text,
    write_config,
)
from tests.support.upstream import Script, ScriptedUpstream
from tests.support.waiting import wait_for

pytestmark = pytest.mark.slow


def call(name: str, **arguments: Any) -> dict[str, str]:
    return {"name": f"t__{name}", "arguments": json.dumps(arguments)}


@pytest.fixture
def tool_log(tmp_path: Path) -> ToolLog:
    return ToolLog(tmp_path / "tools.log")


def start_agent(data_dir: Path, upstream: ScriptedUpstream, log: ToolLog, **limits: Any) -> Parley:
    write_config(data_dir / "mcp.json", {"t": tool_server(log.path)})
    server = Parley(data_dir, upstream.base_url, limits=Limits(**limits)).start()
    server.wait_for(lambda: server.status()["tools"]["ready"] == 1, timeout=30)
    return server


@pytest.fixture
def agent(data_dir: Path, upstream: ScriptedUpstream, tool_log: ToolLog) -> Iterator[Parley]:
    server = start_agent(data_dir, upstream, tool_log)
    yield server
    server.stop()


def tool_parts(message: dict[str, Any]) -> list[dict[str, Any]]:
    return [part for part in message["parts"] if part["type"] == "tool"]


def test_a_two_step_tool_turn_completes_with_its_steps_saved_in_order(
    agent: Parley, upstream: ScriptedUpstream
) -> None:
    upstream.queue = [
        Script(texts=["Let me check. "], tool_calls=[call("echo", text="hi")]),
        Script(tokens=0, tool_calls=[call("add", a=2, b=3)]),
        Script(texts=["The answer ", "is 5."]),
    ]
    cid = agent.new_conversation()
    stream = agent.send(cid, "what is 2 + 3?")
    stream.read_all()
    assert stream.final["parley"]["status"] == "completed"
    assert [c["function"]["name"] for c in stream.tool_calls] == ["t__echo", "t__add"]
    assert [(s["name"], s["status"]) for s in stream.steps] == [
        ("echo", "running"),
        ("echo", "completed"),
        ("add", "running"),
        ("add", "completed"),
    ]

    message = agent.message(cid, stream.first["message_id"])
    assert message["status"] == "completed"
    assert message["content"] == "Let me check. \n\nThe answer is 5."
    assert stream.delivered == message["content"]
    kinds = [(p["type"], p.get("name") or p.get("text")) for p in message["parts"]]
    assert kinds == [
        ("text", "Let me check. "),
        ("tool", "echo"),
        ("tool", "add"),
        ("text", "\n\nThe answer is 5."),
    ]
    echo, add = tool_parts(message)
    assert (echo["server"], echo["status"], echo["result"]) == ("t", "completed", "echo: hi")
    assert json.loads(echo["arguments"]) == {"text": "hi"}
    assert (add["result"], add["status"]) == ("5", "completed")
    assert echo["started_at"] <= echo["ended_at"] <= add["started_at"] <= add["ended_at"]

    # The model saw the tools, its own calls and their results, in OpenAI's shapes.
    first, second, third = (record.body for record in upstream.records)
    assert {tool["function"]["name"] for tool in first["tools"]} >= {"t__echo", "t__add", "t__slow"}
    assert second["messages"][-2]["tool_calls"][0]["function"]["name"] == "t__echo"
    told = second["messages"][-1]
    assert (told["role"], told["tool_call_id"]) == ("tool", echo["id"])
    assert untrusted_text(told["content"]) == "echo: hi"
    assert untrusted_text(third["messages"][-1]["content"]) == "5"
    assert agent.status()["models"][0]["in_use"] is False

    # Reopened, the chat shows the same steps.
    assert agent.conversation(cid)["messages"][1]["parts"] == message["parts"]


def test_stop_during_a_slow_tool_cancels_it_at_the_server_and_settles_at_once(
    agent: Parley, upstream: ScriptedUpstream, tool_log: ToolLog
) -> None:
    upstream.queue = [Script(tokens=0, tool_calls=[call("slow", seconds=30, tag="s1")])]
    upstream.script = Script(texts=["never said"])
    cid = agent.new_conversation()
    stream = agent.send(cid, "wait for it")
    stream.first  # noqa: B018 (the turn is open)
    tool_log.wait("call", tag="s1")
    # While the tool runs, the model is free (docs/api.md says why).
    assert agent.status()["models"][0]["in_use"] is False
    stopped_at, stopped_wall = now(), time.time()
    stream.hang_up()

    cancelled = tool_log.wait("cancelled", tag="s1", timeout=5)
    message = agent.wait_settled(cid, stream.first["message_id"])
    assert cancelled["at"] - stopped_at < 0.1  # the MCP server learnt of it at once
    assert message["completed_at"] - stopped_wall < 0.1  # and the turn settled at once
    assert (message["status"], message["ended_by"]) == ("interrupted", "client_hangup")
    (step,) = tool_parts(message)
    assert (step["status"], step["result"]) == ("interrupted", None)
    assert step["ended_at"] is not None
    assert len(upstream.records) == 1  # no further model call
    assert tool_log.find("done", tag="s1") is None

    # The same server answers the next call.
    upstream.queue = [Script(tokens=0, tool_calls=[call("echo", text="again")])]
    upstream.script = Script(texts=["done"])
    second = agent.send(cid, "again")
    second.read_all()
    assert second.final["parley"]["status"] == "completed"
    assert tool_parts(agent.message(cid, second.first["message_id"]))[0]["result"] == "echo: again"


def test_a_tool_that_ignores_cancellation_holds_neither_the_turn_nor_the_model(
    agent: Parley, upstream: ScriptedUpstream, tool_log: ToolLog
) -> None:
    upstream.queue = [Script(tokens=0, tool_calls=[call("stubborn", seconds=8, tag="late")])]
    cid = agent.new_conversation()
    stream = agent.send(cid, "go")
    stream.first  # noqa: B018
    tool_log.wait("call", tag="late")
    stopped_wall = time.time()
    stream.hang_up()
    message = agent.wait_settled(cid, stream.first["message_id"])
    assert message["completed_at"] - stopped_wall < 0.1
    assert tool_parts(message)[0]["status"] == "interrupted"

    # While the stubborn call still runs, the next turn (in another chat) runs to the end.
    upstream.queue = [Script(tokens=0, tool_calls=[call("echo", text="meanwhile")])]
    upstream.script = Script(texts=["fine"])
    other = agent.new_conversation()
    second = agent.send(other, "meanwhile")
    second.read_all()
    assert second.final["parley"]["status"] == "completed"
    assert tool_log.find("done", tag="late") is None

    # Its late result comes, and is not saved. One more call to the same server, answered
    # after the late result on the same pipe, marks the moment Parley has read it.
    tool_log.wait("done", tag="late", timeout=15)
    upstream.queue = [Script(tokens=0, tool_calls=[call("echo", text="after")])]
    upstream.script = Script(texts=["done"])
    third = agent.send(agent.new_conversation(), "after")
    third.read_all()
    assert [s["status"] for s in third.steps] == ["running", "completed"]
    step = tool_parts(agent.message(cid, stream.first["message_id"]))[0]
    assert (step["status"], step["result"]) == ("interrupted", None)


def test_a_hang_up_between_steps_starts_no_further_model_call(
    agent: Parley, upstream: ScriptedUpstream, tool_log: ToolLog
) -> None:
    # Chat A calls a tool; meanwhile chat B takes the model, so when A's tool is done, A waits
    # for the model (between its steps). A hangs up there.
    upstream.queue = [
        Script(tokens=0, tool_calls=[call("slow", seconds=0.5, tag="a")]),
        Script(tokens=3, stall_after=1),  # B: holds the model
    ]
    a, b = agent.new_conversation(), agent.new_conversation()
    stream_a = agent.send(a, "a")
    stream_a.first  # noqa: B018
    tool_log.wait("call", tag="a")
    stream_b = agent.send(b, "b")
    stream_b.read_until(lambda text: text)
    tool_log.wait("done", tag="a")
    agent.wait_for(lambda: agent.queue_length() == 1)
    stream_a.hang_up()
    message = agent.wait_settled(a, stream_a.first["message_id"])
    assert (message["status"], message["ended_by"]) == ("interrupted", "client_hangup")
    assert tool_parts(message)[0]["status"] == "completed"
    stream_b.hang_up()
    agent.wait_idle()
    assert len(upstream.records) == 2  # A's first call and B's: none after A's tool


def test_a_server_crash_mid_call_is_an_error_the_model_sees_and_the_server_comes_back(
    agent: Parley, upstream: ScriptedUpstream, tool_log: ToolLog
) -> None:
    upstream.queue = [Script(tokens=0, tool_calls=[call("crash")])]
    upstream.script = Script(texts=["It failed."])
    cid = agent.new_conversation()
    stream = agent.send(cid, "crash it")
    stream.read_all()
    assert stream.final["parley"]["status"] == "completed"
    (step,) = tool_parts(agent.message(cid, stream.first["message_id"]))
    assert step["status"] == "error"
    assert "stopped during the call" in step["result"]
    assert upstream.records[1].body["messages"][-1]["content"].startswith("Error: ")

    def restarted() -> dict[str, Any] | None:
        (server,) = agent.call("GET", "/api/tools").json()["servers"]
        return server if server["state"] == "ready" and server["restarts"] == 1 else None

    wait_for(restarted, timeout=15)


def test_tool_errors_are_results_the_model_sees(agent: Parley, upstream: ScriptedUpstream) -> None:
    upstream.queue = [
        Script(
            tokens=0,
            tool_calls=[
                call("fail"),
                {"name": "t__echo", "arguments": "{not json"},
                {"name": "nosuch__tool", "arguments": "{}"},
            ],
        )
    ]
    upstream.script = Script(texts=["ok"])
    cid = agent.new_conversation()
    stream = agent.send(cid, "try")
    stream.read_all()
    assert stream.final["parley"]["status"] == "completed"
    steps = tool_parts(agent.message(cid, stream.first["message_id"]))
    assert [s["status"] for s in steps] == ["error", "error", "error"]
    assert "not valid JSON" in steps[1]["result"]
    assert "no tool named 'nosuch__tool'" in steps[2]["result"]
    sent = upstream.records[1].body["messages"]
    told = [m["content"] for m in sent if m["role"] == "tool"]
    assert len(told) == 3 and all(text.startswith("Error: ") for text in told)
    # The malformed call goes back to the model well-formed (strict upstreams refuse it).
    echoed = [c["function"]["arguments"] for c in sent[-4]["tool_calls"]]
    assert echoed == ["{}", "{}", "{}"]


def test_the_last_step_offers_no_tools_and_calls_made_anyway_are_not_run(
    data_dir: Path, upstream: ScriptedUpstream, tool_log: ToolLog
) -> None:
    server = start_agent(data_dir, upstream, tool_log, max_steps=2)
    try:
        upstream.script = Script(texts=["more "], tool_calls=[call("echo", text="x")])
        cid = server.new_conversation()
        stream = server.send(cid, "loop")
        stream.read_all()
        assert stream.final["parley"]["status"] == "completed"
        assert len(upstream.records) == 2
        assert "tool_choice" not in upstream.records[0].body
        # The last step lists the tools (some upstreams require it beside earlier calls) but
        # may call none.
        assert upstream.records[1].body["tool_choice"] == "none"
        assert "tools" in upstream.records[1].body
        steps = tool_parts(server.message(cid, stream.first["message_id"]))
        assert [s["status"] for s in steps] == ["completed", "error"]
        assert "limit of 2 steps" in steps[1]["result"]
        assert len([e for e in tool_log.events() if e["event"] == "call"]) == 1
    finally:
        server.stop()


def test_a_conversation_with_tools_off_offers_none(
    agent: Parley, upstream: ScriptedUpstream
) -> None:
    cid = agent.new_conversation(tools=False)
    assert agent.conversation(cid)["tools"] is False
    agent.send(cid, "hi").read_all()
    assert "tools" not in upstream.records[-1].body
    # A change with an unknown model changes nothing.
    both = {"tools": True, "model": "no-such-model"}
    assert agent.call("PATCH", f"/api/conversations/{cid}", json_body=both).status == 404
    assert agent.conversation(cid)["tools"] is False
    reply = agent.call("PATCH", f"/api/conversations/{cid}", json_body={"tools": True})
    assert reply.json()["tools"] is True
    agent.send(cid, "hi").read_all()
    assert "tools" in upstream.records[-1].body


def test_servers_run_without_parleys_environment(
    data_dir: Path, upstream: ScriptedUpstream, tool_log: ToolLog, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PARLEY_TOKEN", "secret-token-in-the-environment")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    agent = start_agent(data_dir, upstream, tool_log)
    try:
        check_environment(agent, upstream)
    finally:
        agent.stop()


def check_environment(agent: Parley, upstream: ScriptedUpstream) -> None:
    upstream.queue = [Script(tokens=0, tool_calls=[call("environment")])]
    upstream.script = Script(texts=["ok"])
    cid = agent.new_conversation()
    stream = agent.send(cid, "env")
    stream.read_all()
    names = tool_parts(agent.message(cid, stream.first["message_id"]))[0]["result"].split()
    assert "PYTHONPATH" in names and "PATH" in names  # its entry's own env, and a few
    assert "PARLEY_TOKEN" not in names and "OPENAI_API_KEY" not in names


def test_a_long_result_is_capped(agent: Parley, upstream: ScriptedUpstream) -> None:
    upstream.queue = [Script(tokens=0, tool_calls=[call("big", chars=50_000)])]
    upstream.script = Script(texts=["ok"])
    cid = agent.new_conversation()
    stream = agent.send(cid, "big")
    stream.read_all()
    result = tool_parts(agent.message(cid, stream.first["message_id"]))[0]["result"]
    assert result.startswith("x" * 16_000)
    assert "34,000 more characters" in result
    told = untrusted_text(upstream.records[1].body["messages"][-1]["content"])
    assert told.startswith("x" * 16_000) and len(told) < 16_100


def test_a_model_that_refuses_tools_answers_without_them_and_is_not_offered_them_again(
    agent: Parley, upstream: ScriptedUpstream
) -> None:
    # As Ollama says it for a model without tool support:
    upstream.queue = [Script(status=400, error_message="llama2 does not support tools")]
    upstream.script = Script(texts=["plain answer"])
    cid = agent.new_conversation()
    stream = agent.send(cid, "hi")
    stream.read_all()
    assert stream.final["parley"]["status"] == "completed"
    assert stream.delivered == "plain answer"
    assert "tools" in upstream.records[0].body
    assert "tools" not in upstream.records[1].body
    agent.send(cid, "again").read_all()
    assert len(upstream.records) == 3
    assert "tools" not in upstream.records[2].body


def test_other_refusals_do_not_turn_tools_off(agent: Parley, upstream: ScriptedUpstream) -> None:
    # A refusal on a later step (here after a tool ran), even one that names tools, and a
    # first-step refusal for another reason: each is that reply's error, and tools stay.
    upstream.queue = [
        Script(tokens=0, tool_calls=[call("echo", text="x")]),
        Script(status=400, error_message="context too long after the tool result"),
        Script(status=400, error_message="rate limited"),
    ]
    cid = agent.new_conversation()
    first = agent.send(cid, "one")
    first.read_all()
    assert first.final["parley"]["status"] == "error"
    second = agent.send(cid, "two")
    second.read_all()
    assert second.final["parley"]["status"] == "error"
    assert "rate limited" in second.final["parley"]["error"]
    assert len(upstream.records) == 3  # no retry without tools
    upstream.script = Script(texts=["fine"])
    agent.send(cid, "three").read_all()
    assert "tools" in upstream.records[-1].body
    assert agent.services.models.resolve(None).backend.tools_unsupported is None


def test_a_tool_result_with_half_a_surrogate_pair_is_taken_at_once_and_mended(
    data_dir: Path, upstream: ScriptedUpstream
) -> None:
    raw = {"command": sys.executable, "args": ["-m", "tests.support.raw_mcp"],
           "env": {"PYTHONPATH": str(REPO)}, "cwd": str(REPO), "trust": "allow"}  # fmt: skip
    write_config(data_dir / "mcp.json", {"r": raw})
    server = Parley(data_dir, upstream.base_url).start()
    try:
        server.wait_for(lambda: server.status()["tools"]["ready"] == 1, timeout=30)
        upstream.queue = [Script(tokens=0, tool_calls=[{"name": "r__cut", "arguments": "{}"}])]
        upstream.script = Script(texts=["ok"])
        cid = server.new_conversation()
        began = time.monotonic()
        stream = server.send(cid, "cut")
        stream.read_all()
        took = time.monotonic() - began
        (step,) = tool_parts(server.message(cid, stream.first["message_id"]))
        assert (step["status"], step["result"]) == ("completed", "a smile cut in half: \ufffd")
        assert took < 10  # not the call's time limit (60 s): the answer was read
    finally:
        server.stop()
