"""A tool's MCP server asks the user (elicitation), in both protocol eras: the question is a
pending item of the turn like an approval (`parley.question` on the stream, on the step as
saved, answered through the API), the answer reaches the server, a bad answer is refused
and a late one is a 409; Stop, a hang-up and shutdown cancel it (the server told) and save
the reply.

A real MCP server written with the official SDK over stdio (tests/support/mcp_questions.py),
driven through the real HTTP API, the scripted upstream playing the model.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.client import SSEStream
from tests.support.parley import Parley
from tests.support.questions import question_of, questions_server
from tests.support.tools import ToolLog, write_config
from tests.support.upstream import Script, ScriptedUpstream
from tests.support.waiting import stays_true, wait_for

pytestmark = pytest.mark.slow

ERAS = pytest.mark.parametrize("only_2025", [False, True], ids=["2026-07-28", "2025-11-25"])
URL = "https://example.com/sign?form=42&who=you"


def start(
    data_dir: Path,
    upstream: ScriptedUpstream,
    log: ToolLog,
    only_2025: bool,
    timeout: float | None = None,
) -> Parley:
    entry = questions_server(log.path, only_2025, timeout)
    write_config(data_dir / "mcp.json", {"p": entry})
    parley = Parley(data_dir, upstream.base_url).start()
    parley.wait_for(lambda: parley.status()["tools"]["ready"] == 1, timeout=30)
    return parley


@pytest.fixture
def log(tmp_path: Path) -> ToolLog:
    return ToolLog(tmp_path / "questions.log")


def asking(parley: Parley, upstream: ScriptedUpstream, tool: str) -> tuple[str, SSEStream]:
    """A turn whose model says a few words, then calls `tool` of the server "p"."""
    called = {"name": f"p__{tool}", "arguments": "{}"}
    upstream.queue = [Script(texts=["Let me ask. "], tool_calls=[called]), Script(texts=["Done."])]
    cid = parley.new_conversation()
    return cid, parley.send(cid, "go")


def answer(parley: Parley, cid: str, question_id: str, **body: Any) -> Any:
    return parley.call("POST", f"/api/conversations/{cid}/questions/{question_id}", json_body=body)


def step_of(message: dict[str, Any]) -> dict[str, Any]:
    (step,) = [part for part in message["parts"] if part["type"] == "tool"]
    return step


@ERAS
def test_an_accepted_form_reaches_the_tool_and_the_step_keeps_question_and_answer(
    data_dir: Path, upstream: ScriptedUpstream, log: ToolLog, only_2025: bool
) -> None:
    parley = start(data_dir, upstream, log, only_2025)
    try:
        cid, stream = asking(parley, upstream, "book")
        question = question_of(stream)
        assert (question["server"], question["tool"], question["mode"]) == ("p", "book", "form")
        assert question["message"] == "Whose table, and for how many?"
        assert question["schema"]["required"] == ["name", "guests"]
        assert "sub_agent" not in question and "url" not in question
        # A headless client finds it on the step as saved, still asked.
        message_id = stream.first["message_id"]

        def saved() -> dict[str, Any] | None:
            steps = [p for p in parley.message(cid, message_id)["parts"] if p["type"] == "tool"]
            return steps[0]["questions"][0] if steps and steps[0].get("questions") else None

        asked = parley.wait_for(saved, 5)
        assert (asked["id"], asked["state"]) == (question["question_id"], "asked")
        assert question["call_id"] == step_of(parley.message(cid, message_id))["id"]

        content = {"name": "Ada", "guests": 3}
        reply = answer(parley, cid, question["question_id"], action="accept", content=content)
        assert reply.status == 200, reply.body
        (kept,) = reply.json()["step"]["questions"]
        assert (kept["state"], kept["content"]) == ("accept", content)
        stream.read_all()
        assert stream.final["parley"]["status"] == "completed"
    finally:
        parley.stop()
    told = log.wait("answered", tool="book")
    assert (told["action"], told["content"]) == ("accept", content)
    assert told["protocol"] == ("2025-11-25" if only_2025 else "2026-07-28")
    restarted = Parley(data_dir, upstream.base_url).start()  # a reopened chat shows it
    try:
        step = step_of(restarted.message(cid, message_id))
    finally:
        restarted.stop()
    assert step["status"] == "completed" and '"guests": 3' in step["result"]
    (kept,) = step["questions"]
    assert (kept["state"], kept["content"], kept["schema"]) == (
        "accept",
        content,
        question["schema"],
    )


@pytest.mark.parametrize("action", ["decline", "cancel"])
@ERAS
def test_decline_and_cancel_reach_the_server_and_the_turn_goes_on(
    data_dir: Path, upstream: ScriptedUpstream, log: ToolLog, only_2025: bool, action: str
) -> None:
    parley = start(data_dir, upstream, log, only_2025)
    try:
        cid, stream = asking(parley, upstream, "visit")
        question = question_of(stream)
        assert (question["mode"], question["url"]) == ("url", URL)
        assert "schema" not in question
        reply = answer(parley, cid, question["question_id"], action=action)
        assert reply.status == 200, reply.body
        stream.read_all()
        assert stream.final["parley"]["status"] == "completed"
        step = step_of(parley.message(cid, stream.first["message_id"]))
    finally:
        parley.stop()
    assert log.wait("answered", tool="visit")["action"] == action
    assert step["result"] == f"visit: the user chose {action}"
    assert [q["state"] for q in step["questions"]] == [action]


def test_an_answer_the_form_does_not_take_is_refused_and_the_question_stays_asked(
    data_dir: Path, upstream: ScriptedUpstream, log: ToolLog
) -> None:
    parley = start(data_dir, upstream, log, only_2025=False)
    try:
        cid, stream = asking(parley, upstream, "book")
        qid = question_of(stream)["question_id"]
        for content, says in [
            ({"name": "Ada", "guests": "many"}, "'guests' must be a number"),
            ({"name": "Ada", "guests": 11}, "'guests' must be at most 10"),
            ({"name": "Ada"}, "the field 'guests' is required"),
            ({"name": "Ada", "guests": 2, "pets": 1}, "the form has no field 'pets'"),
            ("Ada, 2", "'content' must be an object"),
        ]:
            refused = answer(parley, cid, qid, action="accept", content=content)
            assert refused.status == 400, (content, refused.body)
            error = refused.json()["error"]
            assert error["code"] == "invalid_answer" and says in error["message"], error
        bad = answer(parley, cid, qid, action="maybe")
        assert bad.status == 400 and bad.json()["error"]["code"] == "invalid_field"
        assert log.find("answered") is None  # the server saw none of them
        good = answer(parley, cid, qid, action="accept", content={"name": "Ada", "guests": 2})
        assert good.status == 200, good.body
        stream.read_all()
    finally:
        parley.stop()
    assert log.wait("answered", tool="book")["content"] == {"name": "Ada", "guests": 2}


def test_a_late_answer_is_refused_with_409(
    data_dir: Path, upstream: ScriptedUpstream, log: ToolLog
) -> None:
    parley = start(data_dir, upstream, log, only_2025=True)
    try:
        cid, stream = asking(parley, upstream, "visit")
        qid = question_of(stream)["question_id"]
        assert answer(parley, cid, qid, action="accept").status == 200
        again = answer(parley, cid, qid, action="decline")  # answered already
        assert again.status == 409 and again.json()["error"]["code"] == "not_asking"
        stream.read_all()
        ended = answer(parley, cid, qid, action="decline")  # its turn has ended
        assert ended.status == 409 and ended.json()["error"]["code"] == "not_asking"
        unknown = answer(parley, cid, "no-such-q1", action="decline")
        assert unknown.status == 404
    finally:
        parley.stop()
    assert [e["action"] for e in log.events() if e["event"] == "answered"] == ["accept"]


def server_told(log: ToolLog, only_2025: bool) -> None:
    """At 2025-11-25 the server's own request is answered "cancel" (or its call cancelled
    first); at 2026-07-28 the server waits for nothing, and the call is never made again."""
    if only_2025:
        wait_for(lambda: log.find("answered", action="cancel") or log.find("cancelled"), 10)
    else:
        assert log.find("answered") is None
        assert [e["event"] for e in log.events()] == ["asked"]


@ERAS
def test_stop_during_a_question_cancels_it_and_saves_the_reply_with_its_receipt(
    data_dir: Path, upstream: ScriptedUpstream, log: ToolLog, only_2025: bool
) -> None:
    parley = start(data_dir, upstream, log, only_2025)
    try:
        cid, stream = asking(parley, upstream, "book")
        qid = question_of(stream)["question_id"]
        stream.hang_up()  # what Stop and closing the window do: the socket closed
        message = parley.wait_settled(cid, stream.first["message_id"])
        assert (message["status"], message["ended_by"]) == ("interrupted", "client_hangup")
        assert message["content"] == "Let me ask. "
        assert message["ended"]["questions"] == 1
        step = step_of(message)
        assert step["status"] == "interrupted"
        assert [q["state"] for q in step["questions"]] == ["cancel"]
        late = answer(parley, cid, qid, action="accept", content={"name": "A", "guests": 1})
        assert late.status == 409 and late.json()["error"]["code"] == "not_asking"
        if only_2025:
            server_told(log, only_2025)
        assert len(upstream.records) == 1  # no model call after the stop
    finally:
        parley.stop()
    server_told(log, only_2025)


@ERAS
def test_shutdown_during_a_question_cancels_it_and_saves_the_reply(
    data_dir: Path, upstream: ScriptedUpstream, log: ToolLog, only_2025: bool
) -> None:
    parley = start(data_dir, upstream, log, only_2025)
    cid, stream = asking(parley, upstream, "visit")
    question_of(stream)
    assert parley.stop()  # the path SIGTERM takes
    stream.read_all()
    assert (stream.final["parley"]["status"], stream.final["parley"]["ended_by"]) == (
        "interrupted",
        "shutdown",
    )
    assert stream.final["parley"]["ended"]["questions"] == 1
    server_told(log, only_2025)
    restarted = Parley(data_dir, upstream.base_url).start()
    try:
        message = restarted.message(cid, stream.first["message_id"])
    finally:
        restarted.stop()
    assert message["content"] == "Let me ask. "
    assert [q["state"] for q in step_of(message)["questions"]] == ["cancel"]


def test_a_sub_agent_s_question_names_it_and_its_answer_reaches_the_tool(
    data_dir: Path, upstream: ScriptedUpstream, log: ToolLog
) -> None:
    parley = start(data_dir, upstream, log, only_2025=False)
    try:
        delegate = {"name": "delegate", "arguments": '{"task": "BOOK-TASK"}'}
        upstream.queue = [Script(tokens=0, tool_calls=[delegate]), Script(texts=["Booked."])]
        book = {"name": "p__book", "arguments": "{}"}
        upstream.by_task["BOOK-TASK"] = [
            Script(tokens=0, tool_calls=[book]),
            Script(texts=["table booked"]),
        ]
        cid = parley.new_conversation()
        stream = parley.send(cid, "go")
        question = question_of(stream)
        (step,) = [s for s in stream.steps if s["name"] == "delegate"][:1]
        assert question["sub_agent"] == {"call_id": step["id"], "task": "BOOK-TASK"}
        content = {"name": "Grace", "guests": 4}
        reply = answer(parley, cid, question["question_id"], action="accept", content=content)
        assert reply.status == 200, reply.body
        stream.read_all()
        assert stream.final["parley"]["status"] == "completed"
        (outer,) = [
            p
            for p in parley.message(cid, stream.first["message_id"])["parts"]
            if p["type"] == "tool"
        ]
    finally:
        parley.stop()
    assert log.wait("answered", tool="book")["content"] == content
    (inner,) = [p for p in outer["agent"]["parts"] if p["type"] == "tool"]
    assert [q["state"] for q in inner["questions"]] == ["accept"]


@ERAS
def test_a_client_that_closes_its_stream_during_a_question_cancels_it(
    data_dir: Path, upstream: ScriptedUpstream, log: ToolLog, only_2025: bool
) -> None:
    """What the window does on Stop and on close: httpx leaves the stream before its end,
    which closes the connection."""
    parley = start(data_dir, upstream, log, only_2025)
    try:
        called = {"name": "p__visit", "arguments": "{}"}
        upstream.queue = [Script(texts=["Let me ask. "], tool_calls=[called])]
        cid = parley.new_conversation()
        url = f"http://127.0.0.1:{parley.port}/api/conversations/{cid}/messages"
        headers = {"Authorization": f"Bearer {parley.token}"}
        client = httpx.Client(trust_env=False, timeout=httpx.Timeout(10, read=None))
        with client, client.stream("POST", url, json={"content": "go"}, headers=headers) as reply:
            lines = reply.iter_lines()  # kept: dropping it would close the stream
            message_id = ""
            for line in lines:
                if not line.startswith("data: {"):
                    continue
                chunk = json.loads(line[6:])
                message_id = message_id or chunk.get("message_id", "")
                if "question" in chunk.get("parley", {}):
                    break
        message = parley.wait_settled(cid, message_id)
        assert (message["status"], message["ended_by"]) == ("interrupted", "client_hangup")
        assert message["content"] == "Let me ask. " and message["ended"]["questions"] == 1
        assert [q["state"] for q in step_of(message)["questions"]] == ["cancel"]
    finally:
        parley.stop()
    server_told(log, only_2025)


def test_a_call_waiting_for_an_answer_is_not_reported_late(
    data_dir: Path, upstream: ScriptedUpstream, log: ToolLog
) -> None:
    """A call's timeout asks whether to keep waiting for its tool; a tool that waits for the
    user's answer is not late, and answering lets the turn go on."""
    parley = start(data_dir, upstream, log, only_2025=True, timeout=1.5)
    try:
        cid, stream = asking(parley, upstream, "visit")
        qid = question_of(stream)["question_id"]
        message_id = stream.first["message_id"]

        def not_late() -> bool:
            return all("overdue" not in s for s in stored_steps(parley, cid, message_id))

        # A timeout long enough for the question to come first on a busy machine, watched
        # past its end.
        stays_true(not_late, during=2.5)
        assert answer(parley, cid, qid, action="decline").status == 200
        stream.read_all()
        assert stream.final["parley"]["status"] == "completed"
    finally:
        parley.stop()


def stored_steps(parley: Parley, cid: str, message_id: str) -> list[dict[str, Any]]:
    return [p for p in parley.message(cid, message_id)["parts"] or [] if p["type"] == "tool"]


def test_a_reply_exported_while_a_server_asks_imports_with_the_question_cancelled(
    data_dir: Path, upstream: ScriptedUpstream, log: ToolLog, tmp_path: Path
) -> None:
    """As a crash leaves it: the question was never answered, and never will be."""
    parley = start(data_dir, upstream, log, only_2025=False)
    try:
        cid, stream = asking(parley, upstream, "book")
        question_of(stream)
        message_id = stream.first["message_id"]

        def asked_on_disk() -> bool:
            steps = stored_steps(parley, cid, message_id)
            return bool(steps and steps[0].get("questions"))

        parley.wait_for(asked_on_disk)
        live = parley.call("GET", f"/api/conversations/{cid}/export?format=json").json()
        stream.hang_up()
        parley.wait_settled(cid, message_id)
    finally:
        parley.stop()
    (question,) = stored_steps_of(live)[0]["questions"]
    assert question["state"] == "asked"  # exported as it was at that moment
    empty = Parley(tmp_path / "empty").start()
    try:
        body = json.dumps(live).encode()
        headers = {"Content-Type": "application/json"}
        imported = empty.call("POST", "/api/import", body=body, headers=headers)
        assert imported.status == 201, imported.body
        message = empty.message(cid, message_id)
    finally:
        empty.stop()
    (step,) = [p for p in message["parts"] if p["type"] == "tool"]
    assert step["status"] == "interrupted"
    assert [q["state"] for q in step["questions"]] == ["cancel"]


def stored_steps_of(document: dict[str, Any]) -> list[dict[str, Any]]:
    (chat,) = document["conversations"]
    return [p for m in chat["messages"] for p in m.get("parts") or [] if p["type"] == "tool"]
