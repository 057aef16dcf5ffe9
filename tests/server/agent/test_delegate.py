"""Sub-agents (issue 41): the `delegate` tool hands a task to a child agent whose steps are
parts of the parent's step; one stop ends the whole tree, and the stopped reply says what the
stop ended. A real MCP server (the tests' own, over stdio) and the scripted upstream."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from server.limits import AgentLimits
from server.settings import Limits
from server.types import NOT_APPROVED_AT_CRASH
from tests.server.agent.test_approvals import approval_of, decide
from tests.server.test_shutdown_and_crash import start_process, stored_message
from tests.support.client import request
from tests.support.parley import Parley
from tests.support.process import ServerProcess
from tests.support.tools import ToolLog, now, tool_server, untrusted_text, write_config
from tests.support.upstream import Script, ScriptedUpstream
from tests.support.waiting import stays_true

pytestmark = pytest.mark.slow
# A child's text is saved by the reply's own checkpoints (every 100 ms; ~95 ms measured
# after a child's last token): ten times that, so a busy machine never fails it. The crash-loss
# promise itself (250 ms) is held by tests/server/test_crash_safety.py on the same checkpoints.
CHILD_SAVED_WITHIN_MS = 1_000


def call(name: str, **arguments: Any) -> dict[str, str]:
    return {"name": name, "arguments": json.dumps(arguments)}


def tool(name: str, **arguments: Any) -> dict[str, str]:
    return call(f"t__{name}", **arguments)


@pytest.fixture
def tool_log(tmp_path: Path) -> ToolLog:
    return ToolLog(tmp_path / "tools.log")


@pytest.fixture
def agent(data_dir: Path, upstream: ScriptedUpstream, tool_log: ToolLog) -> Iterator[Parley]:
    write_config(data_dir / "mcp.json", {"t": tool_server(tool_log.path)})
    server = Parley(data_dir, upstream.base_url).start()
    server.wait_for(lambda: server.status()["tools"]["ready"] == 1, timeout=30)
    yield server
    server.stop()


def steps(parts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [part for part in parts if part["type"] == "tool"]


def test_a_sub_agent_runs_its_own_steps_inside_the_parents_step(
    agent: Parley, upstream: ScriptedUpstream
) -> None:
    upstream.queue = [
        Script(tokens=0, tool_calls=[call("delegate", task="ECHO-TASK: say hi with echo")]),
        Script(texts=["The child said: hi."]),
    ]
    upstream.by_task["ECHO-TASK"] = [
        Script(texts=["Checking. "], tool_calls=[tool("echo", text="hi")]),
        Script(texts=["It said hi."]),
    ]
    cid = agent.new_conversation()
    stream = agent.send(cid, "ask a helper")
    stream.read_all()
    assert stream.final["parley"]["status"] == "completed"

    message = agent.message(cid, stream.first["message_id"])
    (step,) = steps(message["parts"])
    assert (step["server"], step["name"], step["status"]) == ("parley", "delegate", "completed")
    child = step["agent"]
    assert child["task"] == "ECHO-TASK: say hi with echo"
    assert [p["type"] for p in child["parts"]] == ["text", "tool", "text"]
    (child_step,) = steps(child["parts"])
    assert (child_step["name"], child_step["result"]) == ("echo", "echo: hi")
    assert step["result"] == "Checking. \n\nIt said hi."

    # The child worked from its task with the parent's tools but no `delegate` (depth 1);
    # its text went back to the parent's model as the tool's result.
    child_first = next(r.body for r in upstream.records if "ECHO-TASK" in json.dumps(r.body))
    offered = {t["function"]["name"] for t in child_first["tools"]}
    assert "t__echo" in offered and "delegate" not in offered
    parent_first, parent_second = (
        r.body for r in upstream.records if "ECHO-TASK" not in str(r.body["messages"][1])
    )
    assert "delegate" in {t["function"]["name"] for t in parent_first["tools"]}
    assert untrusted_text(parent_second["messages"][-1]["content"]) == step["result"]
    # The stream carried the step as it grew (its child's parts inside).
    assert any(s.get("agent", {}).get("parts") for s in stream.steps)
    assert agent.conversation(cid)["messages"][1]["parts"] == message["parts"]


def test_one_stop_ends_every_child_its_tools_and_says_what_it_ended(
    agent: Parley, upstream: ScriptedUpstream, tool_log: ToolLog
) -> None:
    upstream.queue = [
        Script(
            tokens=0,
            tool_calls=[
                call("delegate", task="CHILD-A wait"),
                call("delegate", task="CHILD-B wait"),
            ],
        )
    ]
    upstream.script = Script(texts=["never said"])
    upstream.by_task["CHILD-A"] = [
        Script(texts=["A starts. "], tool_calls=[tool("slow", seconds=30, tag="a")])
    ]
    upstream.by_task["CHILD-B"] = [
        Script(texts=["B starts. "], tool_calls=[tool("slow", seconds=30, tag="b")])
    ]
    cid = agent.new_conversation()
    stream = agent.send(cid, "two helpers")
    stream.first  # noqa: B018 (the turn is open)
    tool_log.wait("call", tag="a")
    tool_log.wait("call", tag="b")
    stopped_at, stopped_wall = now(), time.time()
    stream.hang_up()

    for tag in ("a", "b"):
        cancelled = tool_log.wait("cancelled", tag=tag, timeout=5)
        assert cancelled["at"] - stopped_at < 0.5  # each MCP server learnt of it at once
    message = agent.wait_settled(cid, stream.first["message_id"])
    assert message["completed_at"] - stopped_wall < 0.5
    assert (message["status"], message["ended_by"]) == ("interrupted", "client_hangup")
    children = steps(message["parts"])
    assert [s["status"] for s in children] == ["interrupted", "interrupted"]
    assert sorted(s["result"] for s in children) == ["A starts. ", "B starts. "]  # kept
    for child in children:
        (inner,) = steps(child["agent"]["parts"])
        assert (inner["name"], inner["status"], inner["result"]) == ("slow", "interrupted", None)
    ended = message["ended"]
    assert (ended["sub_agents"], ended["tool_calls"], ended["approvals"]) == (2, 2, 0)
    assert ended["model_calls"] == 0
    acted = sorted(json.loads(a["arguments"])["tag"] for a in ended["may_have_acted"])
    assert acted == ["a", "b"]  # `slow` does not say it is read-only
    assert tool_log.find("done", tag="a") is None and tool_log.find("done", tag="b") is None
    assert len([r for r in upstream.records if "never said" in str(r.body)]) == 0
    agent.wait_idle()


def test_a_childs_text_is_saved_as_soon_as_any_part_of_the_reply(
    agent: Parley, upstream: ScriptedUpstream
) -> None:
    # A child's text is checkpointed with the reply on the run's interval, not held back
    # until its step is sent again. The child's stream goes silent after 40 tokens: the
    # saved text must catch up with what was sent, by the reply's next checkpoints.
    upstream.queue = [Script(tokens=0, tool_calls=[call("delegate", task="STREAM-TASK")])]
    upstream.by_task["STREAM-TASK"] = [Script(tokens=40, rate=200, stall_after=40)]
    cid = agent.new_conversation()
    stream = agent.send(cid, "go")
    message_id = stream.first["message_id"]
    record = upstream.wait_for(
        lambda: next((r for r in upstream.records if "STREAM-TASK" in str(r.body)), None)
    )
    upstream.wait_for(lambda: len(record.sent) == 40)
    sent_at = record.sent[-1]

    def child_text() -> str:
        parts = agent.message(cid, message_id)["parts"]
        (step,) = steps(parts) or [{"agent": {"parts": []}}]
        return "".join(p["text"] for p in step["agent"]["parts"] if p["type"] == "text")

    agent.wait_for(lambda: child_text() == Script(tokens=40).text(), timeout=5)
    saved_after_ms = (time.perf_counter() - sent_at) * 1000  # the upstream's clock
    stream.hang_up()
    agent.wait_idle()
    assert saved_after_ms <= CHILD_SAVED_WITHIN_MS, saved_after_ms


def test_a_childs_call_awaits_the_users_approval_like_the_parents(
    data_dir: Path, upstream: ScriptedUpstream, tool_log: ToolLog
) -> None:
    write_config(data_dir / "mcp.json", {"t": tool_server(tool_log.path, trust="ask")})
    server = Parley(data_dir, upstream.base_url).start()
    try:
        server.wait_for(lambda: server.status()["tools"]["ready"] == 1, timeout=30)
        upstream.queue = [
            Script(tokens=0, tool_calls=[call("delegate", task="ASK-TASK", tools=["t__danger"])]),
            Script(texts=["done"]),
        ]
        upstream.by_task["ASK-TASK"] = [
            Script(tokens=0, tool_calls=[tool("danger", target="x")]),
            Script(texts=["acted on x"]),
        ]
        cid = server.new_conversation()
        stream = server.send(cid, "go")
        approval = approval_of(stream)
        assert (approval["tool"], approval["function"]) == ("danger", "t__danger")
        reply = decide(server, cid, approval["call_id"], decision="allow", remember="once")
        assert reply.status == 200, reply.body
        stream.read_all()
        assert stream.final["parley"]["status"] == "completed"
        (step,) = steps(server.message(cid, stream.first["message_id"])["parts"])
        (inner,) = steps(step["agent"]["parts"])
        assert (inner["name"], inner["status"]) == ("danger", "completed")
        # The card can say who asks: the sub-agent, by its step and task.
        assert approval["sub_agent"] == {"call_id": step["id"], "task": "ASK-TASK"}
        assert step["result"] == "acted on x"
        # A subset of tools was given: the child was offered that one alone.
        child_first = next(r.body for r in upstream.records if "ASK-TASK" in str(r.body))
        assert [t["function"]["name"] for t in child_first["tools"]] == ["t__danger"]
    finally:
        server.stop()


def test_a_delegation_that_cannot_run_is_an_error_the_model_reads(
    agent: Parley, upstream: ScriptedUpstream
) -> None:
    upstream.queue = [
        Script(tokens=0, tool_calls=[call("delegate", task="x", tools=["t__nothing"])]),
        Script(tokens=0, tool_calls=[call("delegate", task="y", model="no-such-model")]),
        Script(texts=["ok"]),
    ]
    cid = agent.new_conversation()
    stream = agent.send(cid, "go")
    stream.read_all()
    first, second = steps(agent.message(cid, stream.first["message_id"])["parts"])
    assert first["status"] == "error" and "no such tool to give: t__nothing" in first["result"]
    assert second["status"] == "error" and "cannot use that model" in second["result"]


def test_kill_9_mid_tree_leaves_every_child_interrupted_and_nothing_runs_again(
    data_dir: Path,
    upstream: ScriptedUpstream,
    tool_log: ToolLog,
    processes: list[ServerProcess],
) -> None:
    write_config(data_dir / "mcp.json", {"t": tool_server(tool_log.path)})
    process = start_process(processes, data_dir, upstream)

    def tools_ready(server: ServerProcess) -> bool:
        status = request(server.port, "GET", "/api/status", token=server.token).json()
        return bool(status["tools"]["ready"] == 1)

    upstream.wait_for(lambda: tools_ready(process), timeout=30)
    upstream.queue = [Script(tokens=0, tool_calls=[call("delegate", task="CRASH-TASK")])]
    upstream.by_task["CRASH-TASK"] = [
        Script(texts=["Going. "], tool_calls=[tool("slow", seconds=30, tag="k")])
    ]
    cid = process.new_conversation()
    stream = process.send(cid, "go")
    message_id = stream.first["message_id"]
    tool_log.wait("call", tag="k", timeout=30)
    db_path = data_dir / "parley.sqlite3"

    def checkpointed_child_step() -> bool:
        parts = json.loads(str(stored_message(db_path, message_id)["parts"] or "[]"))
        return any(steps(p.get("agent", {}).get("parts", [])) for p in steps(parts))

    upstream.wait_for(checkpointed_child_step)
    process.kill()
    stream.close()
    calls_before = len(upstream.records)

    restarted = start_process(processes, data_dir, upstream)
    path = f"/api/conversations/{cid}/messages/{message_id}"
    message = request(restarted.port, "GET", path, token=restarted.token).json()
    assert (message["status"], message["ended_by"]) == ("interrupted", "crash")
    (step,) = steps(message["parts"])
    assert step["status"] == "interrupted"
    (inner,) = steps(step["agent"]["parts"])
    assert inner["status"] == "interrupted" and inner["result"] != NOT_APPROVED_AT_CRASH
    assert len(upstream.records) == calls_before  # nothing ran again

    # Its tools running again, the interrupted call is not made again either.
    upstream.wait_for(lambda: tools_ready(restarted), timeout=30)

    def calls_of_k() -> int:
        return sum(1 for e in tool_log.events() if e["event"] == "call" and e.get("tag") == "k")

    stays_true(lambda: calls_of_k() == 1, 0.5)
    restarted.terminate()


def test_children_beyond_the_bound_wait_for_a_running_one_to_end(
    data_dir: Path, upstream: ScriptedUpstream, tool_log: ToolLog
) -> None:
    write_config(data_dir / "mcp.json", {"t": tool_server(tool_log.path)})
    limits = Limits(agents=AgentLimits(children_at_once=1))
    server = Parley(data_dir, upstream.base_url, limits=limits).start()
    try:
        server.wait_for(lambda: server.status()["tools"]["ready"] == 1, timeout=30)
        upstream.queue = [
            Script(
                tokens=0,
                tool_calls=[call("delegate", task="W-ONE"), call("delegate", task="W-TWO")],
            ),
            Script(texts=["both done"]),
        ]
        for key, tag in (("W-ONE", "one"), ("W-TWO", "two")):
            upstream.by_task[key] = [
                Script(tokens=0, tool_calls=[tool("slow", seconds=0.3, tag=tag)]),
                Script(texts=[f"{tag} done"]),
            ]
        cid = server.new_conversation()
        stream = server.send(cid, "go")
        stream.read_all()
        assert stream.final["parley"]["status"] == "completed"
        calls = [e for e in tool_log.events() if e.get("tag") in ("one", "two")]
        # One child at a time: the second child's call began after the first's ended.
        assert [(e["event"], e["tag"]) for e in calls][1][0] == "done"
        results = sorted(
            s["result"] for s in steps(server.message(cid, stream.first["message_id"])["parts"])
        )
        assert results == ["one done", "two done"]
    finally:
        server.stop()


def test_with_sub_agents_off_no_delegate_is_offered(
    data_dir: Path, upstream: ScriptedUpstream, tool_log: ToolLog
) -> None:
    write_config(data_dir / "mcp.json", {"t": tool_server(tool_log.path)})
    limits = Limits(agents=AgentLimits(max_depth=0))  # --sub-agents 0
    server = Parley(data_dir, upstream.base_url, limits=limits).start()
    try:
        server.wait_for(lambda: server.status()["tools"]["ready"] == 1, timeout=30)
        upstream.queue = [Script(tokens=0, tool_calls=[call("delegate", task="x")]), Script()]
        cid = server.new_conversation()
        stream = server.send(cid, "go")
        stream.read_all()
        offered = {t["function"]["name"] for t in upstream.records[0].body["tools"]}
        assert "t__echo" in offered and "delegate" not in offered
        (step,) = steps(server.message(cid, stream.first["message_id"])["parts"])
        assert step["status"] == "error" and "no tool named 'delegate'" in step["result"]
    finally:
        server.stop()
