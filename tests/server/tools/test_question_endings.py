"""A server's question (MCP elicitation) ended by the process around it: SIGTERM to
`parley-server` cancels it on the one stop path (the server told, the reply saved), and after
kill -9 the next start marks it cancelled (nothing waits for an answer that cannot come).

Real processes: `parley-server`, the MCP server of tests/support/mcp_questions.py over stdio,
the scripted upstream playing the model.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.client import request
from tests.support.process import ServerProcess
from tests.support.questions import question_of, questions_server
from tests.support.tools import ToolLog, write_config
from tests.support.upstream import Script, ScriptedUpstream
from tests.support.waiting import wait_for

pytestmark = pytest.mark.slow


def started(
    data_dir: Path, upstream: ScriptedUpstream, config: Path, processes: list[ServerProcess]
) -> ServerProcess:
    process = ServerProcess(data_dir, upstream.base_url, "--mcp-config", str(config)).start()
    processes.append(process)
    wait_for(lambda: get(process, "/api/status")["tools"]["ready"] == 1, 30)
    return process


def get(process: ServerProcess, path: str) -> Any:
    reply = request(process.port, "GET", path, token=process.token)
    assert reply.status == 200, reply.body
    return reply.json()


def asked(process: ServerProcess, upstream: ScriptedUpstream) -> tuple[str, Any]:
    called = {"name": "p__book", "arguments": "{}"}
    upstream.queue = [Script(texts=["Let me ask. "], tool_calls=[called])]
    cid = process.new_conversation()
    stream = process.send(cid, "go")
    question_of(stream)
    return cid, stream


def reply_of(process: ServerProcess, cid: str) -> dict[str, Any]:
    message: dict[str, Any] = get(process, f"/api/conversations/{cid}")["messages"][1]
    return message


def questions_of(message: dict[str, Any]) -> list[dict[str, Any]]:
    steps = [p for p in message["parts"] or [] if p["type"] == "tool"]
    found: list[dict[str, Any]] = steps[0].get("questions", []) if steps else []
    return found


def test_sigterm_during_a_question_tells_the_server_and_saves_the_reply(
    data_dir: Path, upstream: ScriptedUpstream, tmp_path: Path, processes: list[ServerProcess]
) -> None:
    log = ToolLog(tmp_path / "questions.log")
    config = write_config(tmp_path / "mcp.json", {"p": questions_server(log.path, True)})
    process = started(data_dir, upstream, config, processes)
    cid, stream = asked(process, upstream)
    process.terminate()  # uvicorn ends by the signal it caught, once shut down
    stream.read_all()
    final = stream.final["parley"]
    assert (final["status"], final["ended_by"]) == ("interrupted", "shutdown")
    assert final["ended"]["questions"] == 1
    # The server's own request was answered "cancel" (or its call cancelled first).
    assert log.find("answered", action="cancel") or log.find("cancelled"), log.events()

    restarted = started(data_dir, upstream, config, processes)
    message = reply_of(restarted, cid)
    assert message["content"] == "Let me ask. "
    assert [q["state"] for q in questions_of(message)] == ["cancel"]
    restarted.terminate()


def test_after_kill_9_during_a_question_the_next_start_marks_it_cancelled(
    data_dir: Path, upstream: ScriptedUpstream, tmp_path: Path, processes: list[ServerProcess]
) -> None:
    log = ToolLog(tmp_path / "questions.log")
    config = write_config(tmp_path / "mcp.json", {"p": questions_server(log.path, False)})
    process = started(data_dir, upstream, config, processes)
    cid, stream = asked(process, upstream)
    wait_for(lambda: questions_of(reply_of(process, cid)), 5)  # on disk, asked
    process.kill()
    stream.close()

    restarted = started(data_dir, upstream, config, processes)
    message = reply_of(restarted, cid)
    assert (message["status"], message["ended_by"]) == ("interrupted", "crash")
    (question,) = questions_of(message)
    assert question["state"] == "cancel" and question["answered_at"] is not None
    path = f"/api/conversations/{cid}/questions/{question['id']}"
    late = request(
        restarted.port, "POST", path, token=restarted.token, json_body={"action": "cancel"}
    )
    assert late.status == 409
    restarted.terminate()
