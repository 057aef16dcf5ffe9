"""The guard is part of the one stop path: Stop (the window closes the response), a dropped
client, a shutdown and kill -9 while it asks all run nothing, before or after; on real
sockets (a hang-up is a closed socket). And its switch: a server whose entry turns it off
runs its trusted tools as before."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from server.agent.steps import NOT_APPROVED, NOT_APPROVED_AT_CRASH
from tests.server.agent.test_approvals import approval_of, approvals, decide, step_of
from tests.server.guard.suite import ACTIONS, READ_PLANTED, Guarded, guard_server, start
from tests.support.client import request
from tests.support.process import ServerProcess
from tests.support.tools import ToolLog, write_config
from tests.support.upstream import Script, ScriptedUpstream
from tests.support.waiting import stays_true, wait_for

pytestmark = pytest.mark.slow


@pytest.fixture
def log(tmp_path: Path) -> ToolLog:
    return ToolLog(tmp_path / "guard.log")


@pytest.fixture
def guarded(data_dir: Path, upstream: ScriptedUpstream, log: ToolLog) -> Iterator[Guarded]:
    found = start(data_dir, upstream, log)
    yield found
    found.parley.stop()


def obeying(upstream: ScriptedUpstream, *actions: str) -> None:
    upstream.queue = [
        Script(tokens=0, tool_calls=[READ_PLANTED]),
        Script(tokens=0, tool_calls=[ACTIONS[action] for action in actions]),
    ]
    upstream.script = Script(texts=["never said"])


def test_a_hang_up_while_the_guard_asks_runs_nothing_and_a_late_allow_is_refused(
    guarded: Guarded,
) -> None:
    obeying(guarded.upstream, "write", "delete", "network")
    cid = guarded.conversation()
    stream = guarded.parley.send(cid, "Summarise my notes.")
    asked = [approval_of(stream) for _ in range(3)]
    assert {a["tool"] for a in asked} == {"write_file", "delete_file", "send"}
    stream.hang_up()  # Stop and a closed window are this: the response's socket closed
    message = guarded.parley.wait_settled(cid, stream.first["message_id"])
    assert (message["status"], message["ended_by"]) == ("interrupted", "client_hangup")
    held = [p for p in message["parts"] if p["type"] == "tool" and p["name"] != "read_note"]
    assert [(p["status"], p["result"]) for p in held] == [("interrupted", NOT_APPROVED)] * 3
    assert all("guard" in p for p in held)  # why it asked is kept with the step
    for approval in asked:
        late = decide(guarded.parley, cid, approval["call_id"], decision="allow")
        assert late.status == 409
    stays_true(lambda: not guarded.acted(), during=0.3)
    assert len(guarded.upstream.records) == 2  # no model call after the stop


def test_shutdown_while_the_guard_asks_runs_nothing(guarded: Guarded) -> None:
    obeying(guarded.upstream, "delete")
    cid = guarded.conversation()
    stream = guarded.parley.send(cid, "Summarise my notes.")
    approval_of(stream)
    guarded.parley.stop()
    stream.read_all()
    stays_true(lambda: not guarded.acted(), during=0.3)


def test_kill_9_while_the_guard_asks_leaves_the_step_unrun(
    data_dir: Path,
    upstream: ScriptedUpstream,
    log: ToolLog,
    tmp_path: Path,
    processes: list[ServerProcess],
) -> None:
    config = write_config(tmp_path / "tools.json", {"g": guard_server(log.path)})
    obeying(upstream, "network")
    args = ("--mcp-config", str(config))
    process = ServerProcess(data_dir, upstream.base_url, *args).start()
    processes.append(process)

    def get(port: int, token: str, path: str) -> Any:
        reply = request(port, "GET", path, token=token)
        assert reply.status == 200, reply.body
        return reply.json()

    wait_for(lambda: get(process.port, process.token, "/api/status")["tools"]["ready"], 30)
    cid = process.new_conversation()
    stream = process.send(cid, "Summarise my notes.")
    approval = approval_of(stream)
    assert approval["tool"] == "send" and approval["reason"]

    def checkpointed() -> bool:
        messages = get(process.port, process.token, f"/api/conversations/{cid}")["messages"]
        parts = messages[1]["parts"] or []
        return any(p.get("status") == "awaiting_approval" for p in parts)

    wait_for(checkpointed, 5)
    process.kill()
    stream.close()
    restarted = ServerProcess(data_dir, upstream.base_url, *args).start()
    processes.append(restarted)
    message = get(restarted.port, restarted.token, f"/api/conversations/{cid}")["messages"][1]
    step = next(p for p in message["parts"] if p["type"] == "tool" and p["name"] == "send")
    assert (step["status"], step["result"]) == ("interrupted", NOT_APPROVED_AT_CRASH)
    assert step["guard"]["sources"][0]["tool"] == "read_note"
    wait_for(lambda: get(restarted.port, restarted.token, "/api/status")["tools"]["ready"], 30)
    stays_true(lambda: not [e for e in log.events() if e["tool"] == "send"], during=0.2)
    restarted.terminate()


def test_a_server_with_the_guard_turned_off_runs_its_trusted_tools_as_before(
    data_dir: Path, upstream: ScriptedUpstream, log: ToolLog
) -> None:
    guarded = start(data_dir, upstream, log, guard=False)
    try:
        obeying(upstream, "write")
        upstream.queue.append(Script(texts=["Written."]))
        cid = guarded.conversation()
        stream = guarded.parley.send(cid, "Summarise my notes.")
        stream.read_all()
        assert not approvals(stream)
        assert len(guarded.ran("write_file")) == 1
    finally:
        guarded.parley.stop()


def test_a_tool_trusted_ask_says_why_the_guard_worries_too(
    data_dir: Path, upstream: ScriptedUpstream, log: ToolLog
) -> None:
    guarded = start(data_dir, upstream, log, toolTrust={"write_file": "ask"})
    try:
        obeying(upstream, "write")
        cid = guarded.conversation()
        stream = guarded.parley.send(cid, "Summarise my notes.")
        approval = approval_of(stream)
        assert "check that you asked for this call yourself" in approval["reason"]
        started = time.monotonic()
        stream.hang_up()
        guarded.parley.wait_settled(cid, stream.first["message_id"])
        assert time.monotonic() - started < 5
        message = guarded.parley.conversation(cid)["messages"][1]
        assert step_of({"parts": [p for p in message["parts"] if p["name"] == "write_file"]})
        stays_true(lambda: not guarded.acted(), during=0.2)
    finally:
        guarded.parley.stop()


def test_the_users_word_on_what_a_tool_does_wins_over_its_annotations_from_the_next_call(
    guarded: Guarded,
) -> None:
    parley, upstream = guarded.parley, guarded.upstream

    def set_effect(tool: str, effect: dict[str, bool]) -> None:
        path = f"/api/tools/servers/g/tools/{tool}"
        assert parley.call("PUT", path, json_body={"effect": effect}).status == 200

    # write_file said to only read here: it runs as trusted after the planted note.
    set_effect("write_file", {"readOnly": True, "openWorld": False})
    obeying(upstream, "write")
    upstream.queue.append(Script(texts=["Written."]))
    stream = parley.send(guarded.conversation(), "Summarise my notes.")
    stream.read_all()
    assert not approvals(stream) and len(guarded.ran("write_file")) == 1
    # read_note said to write: its second call, after the first one's result, is held.
    set_effect("read_note", {"readOnly": False})
    upstream.queue = [
        Script(tokens=0, tool_calls=[READ_PLANTED]),
        Script(tokens=0, tool_calls=[READ_PLANTED]),
    ]
    stream = parley.send(guarded.conversation(), "Read it twice.")
    approval = approval_of(stream)
    assert approval["tool"] == "read_note" and "change or delete things" in approval["reason"]
    assert len(guarded.ran("read_note")) == 2  # the first turn's, and this turn's first
    stream.hang_up()
