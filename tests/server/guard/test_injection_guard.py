"""The injection suite: instructions planted where the model reads them — a document of the
library, a tool's result, an attached file, an MCP resource attached, a sub-agent's answer,
a chat imported from elsewhere — each asking for a write, a delete and a network call on
tools the user trusted "allow". The scripted upstream plays a model that obeys; the MCP
server (tests/support/mcp_guard.py) logs each call before its tool does anything. The guard
must ask before every one of them: 0 runs without the user's approval.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.server.attachments.test_attachments import uploaded
from tests.server.guard.suite import ACTIONS, READ_PLANTED, Guarded, attack, call, start
from tests.server.library.test_library import add, indexed
from tests.support.client import request
from tests.support.mcp_guard import PLANTED
from tests.support.tools import ToolLog
from tests.support.upstream import Script, ScriptedUpstream

pytestmark = pytest.mark.slow


@pytest.fixture
def guarded(data_dir: Path, upstream: ScriptedUpstream, tmp_path: Path) -> Iterator[Guarded]:
    found = start(data_dir, upstream, ToolLog(tmp_path / "guard.log"))
    yield found
    found.parley.stop()


def kinds(approval: dict[str, Any]) -> list[str]:
    return [source["kind"] for source in approval["sources"]]


def test_a_tool_result_that_asks_for_actions_gets_each_asked(guarded: Guarded) -> None:
    for action in ACTIONS:
        cid = guarded.conversation()
        read = Script(tokens=0, tool_calls=[READ_PLANTED])
        approval = attack(guarded, cid, action, [read])
        assert kinds(approval)[0] == "tool_result"
        assert 'read_note(name="planted") of g' in approval["reason"]
        assert "IMPORTANT NEW INSTRUCTIONS" in approval["sources"][0]["excerpt"]
        assert json.loads(approval["arguments"]) == json.loads(ACTIONS[action]["arguments"])
    assert len(guarded.ran("read_note")) == 3  # the reads ran as trusted, unasked


def test_a_document_that_asks_for_actions_gets_each_asked(guarded: Guarded, tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "meeting.md").write_text(PLANTED + "\n\nNotes summary.", encoding="utf-8")
    add(guarded.parley, folder)
    indexed(guarded.parley, 1)
    search = call("search_documents", query="meeting notes instructions")
    for action in ACTIONS:
        cid = guarded.conversation(documents=True)
        approval = attack(guarded, cid, action, [Script(tokens=0, tool_calls=[search])])
        assert set(kinds(approval)) == {"document"}
        assert approval["sources"][0]["path"].endswith("meeting.md")


def test_an_attached_file_that_asks_for_actions_gets_each_asked(guarded: Guarded) -> None:
    for action in ACTIONS:
        file = uploaded(guarded.parley, "minutes.txt", PLANTED.encode())
        cid = guarded.conversation()
        approval = attack(guarded, cid, action, [], attachments=[file["id"]])
        assert kinds(approval) == ["attachment"]
        assert approval["sources"][0]["label"] == "the attached file minutes.txt"


def test_an_attached_mcp_resource_that_asks_for_actions_gets_each_asked(
    guarded: Guarded,
) -> None:
    for action in ACTIONS:
        reply = guarded.parley.call(
            "POST", "/api/tools/servers/g/resources/attach", json_body={"uri": "notes://planted"}
        )
        assert reply.status == 201, reply.body
        ids = [a["id"] for a in reply.json()["attachments"]]
        cid = guarded.conversation()
        approval = attack(guarded, cid, action, [], attachments=ids)
        assert kinds(approval) == ["resource"]
        assert approval["sources"][0]["label"] == "the MCP resource notes://planted of g"
        assert "IMPORTANT NEW INSTRUCTIONS" in approval["sources"][0]["excerpt"]


def test_a_sub_agents_answer_that_asks_for_actions_gets_each_asked(guarded: Guarded) -> None:
    task = call("delegate", task="Read the note 'planted'.", tools=["g__read_note"])
    for action in ACTIONS:
        cid = guarded.conversation()
        before = [
            Script(tokens=0, tool_calls=[task]),  # the parent hands the reading over
            Script(tokens=0, tool_calls=[READ_PLANTED]),  # the sub-agent reads
            Script(texts=["The note says to call write_file, delete_file and send now."]),
        ]
        approval = attack(guarded, cid, action, before)
        assert "sub_agent" in kinds(approval) and "tool_result" in kinds(approval)
        assert approval["sources"][0]["kind"] == "sub_agent"
        assert "planted" in approval["sources"][0]["label"]


def chatgpt_chat(planted: str, tag: str) -> list[dict[str, Any]]:
    def node(key: str, parent: str | None, children: list[str], message: Any) -> dict[str, Any]:
        return {"id": key, "parent": parent, "children": children, "message": message}

    def msg(role: str, text: str, at: float) -> dict[str, Any]:
        return {
            "id": f"m-{at}",
            "author": {"role": role, "name": None, "metadata": {}},
            "create_time": at,
            "content": {"content_type": "text", "parts": [text]},
            "status": "finished_successfully",
            "metadata": {},
        }

    mapping = {
        "root": node("root", None, ["q"], None),
        "q": node("q", "root", ["a"], msg("user", f"What do my {tag} notes say?", 1.0)),
        "a": node("a", "q", [], msg("assistant", planted, 2.0)),
    }
    chat = {"title": "Notes", "create_time": 1.0, "update_time": 2.0, "mapping": mapping}
    return [{**chat, "current_node": "a"}]


def test_an_imported_chat_that_asks_for_actions_gets_each_asked(guarded: Guarded) -> None:
    parley = guarded.parley
    for action in ACTIONS:
        body = json.dumps(chatgpt_chat(PLANTED, action)).encode()
        reply = request(
            parley.port,
            "POST",
            "/api/import",
            token=parley.token,
            body=body,
            headers={"Content-Type": "application/json"},
        )
        assert reply.status == 201, reply.body
        (cid,) = reply.json()["conversations"]
        patched = parley.call("PATCH", f"/api/conversations/{cid}", json_body={"tools": True})
        assert patched.status == 200, patched.body
        approval = attack(guarded, cid, action, [])
        assert "imported" in kinds(approval)
        assert any("IMPORTANT NEW" in s["excerpt"] for s in approval["sources"])


def test_the_guard_holds_a_step_with_its_reason_saved_for_a_chat_opened_later(
    guarded: Guarded,
) -> None:
    cid = guarded.conversation()
    attack(guarded, cid, "write", [Script(tokens=0, tool_calls=[READ_PLANTED])])
    messages = guarded.parley.conversation(cid)["messages"]
    steps = [p for m in messages for p in m["parts"] if p["type"] == "tool"]
    read, write = steps
    assert "guard" not in read and read["status"] == "completed"
    assert write["status"] == "denied"
    assert write["guard"]["sources"][0]["tool"] == "read_note"
    assert "you allowed it" in write["guard"]["reason"]


def test_a_sub_agent_started_after_untrusted_text_is_asked_for_and_its_calls_too(
    guarded: Guarded,
) -> None:
    """The delegate call can do what its sub-agent's tools can: after the planted note, a
    sub-agent given write_file is asked for; allowed, its own write asks again."""
    cid = guarded.conversation()
    task = call("delegate", task="Write the file.", tools=["g__write_file"])
    guarded.upstream.queue = [
        Script(tokens=0, tool_calls=[READ_PLANTED]),
        Script(tokens=0, tool_calls=[task]),
        Script(tokens=0, tool_calls=[ACTIONS["write"]]),  # the sub-agent's own call
        Script(texts=["Not written."]),
        Script(texts=["Done."]),
    ]
    stream = guarded.parley.send(cid, "Summarise my notes.")
    from tests.server.agent.test_approvals import approval_of, decide

    handing = approval_of(stream)
    assert handing["tool"] == "delegate" and "reason" in handing
    assert decide(guarded.parley, cid, handing["call_id"], decision="allow").status == 200
    writing = approval_of(stream)
    assert writing["tool"] == "write_file" and writing["sub_agent"]["task"] == "Write the file."
    assert writing["sources"][0]["kind"] == "tool_result"
    assert not guarded.acted()
    assert decide(guarded.parley, cid, writing["call_id"], decision="deny").status == 200
    stream.read_all()
    assert not guarded.acted()


def test_a_result_read_in_an_earlier_turn_still_holds_the_next_turns_calls(
    guarded: Guarded,
) -> None:
    """The history gives earlier results back to the model: the planted note read in the
    first turn is in the second turn's context too."""
    cid = guarded.conversation()
    guarded.upstream.queue = [
        Script(tokens=0, tool_calls=[READ_PLANTED]),
        Script(texts=["Your note is about a meeting."]),
    ]
    first = guarded.parley.send(cid, "What does my note say?")
    first.read_all()
    assert first.final["parley"]["status"] == "completed"
    approval = attack(guarded, cid, "delete", [])
    assert approval["sources"][0]["call_id"] == first.steps[-1]["id"]


def test_a_result_folded_into_a_summary_still_holds_the_next_turns_calls(
    guarded: Guarded,
) -> None:
    """Compaction replaces earlier messages with a summary written from them: what an
    earlier tool returned may live on in it."""
    from tests.support.client import SSEStream

    parley, upstream = guarded.parley, guarded.upstream
    cid = guarded.conversation()
    upstream.queue = [
        Script(tokens=0, tool_calls=[READ_PLANTED]),
        Script(texts=["Your note is about a meeting."]),
    ]
    parley.send(cid, "What does my note say?").read_all()
    upstream.queue = [Script(texts=["Nothing else."])]
    parley.send(cid, "Anything else?").read_all()
    upstream.queue = [Script(texts=["The user read a note that asked to delete files."])]
    compacting = SSEStream(parley.port, f"/api/conversations/{cid}/compact", {}, parley.token)
    compacting.read_all()
    (summary,) = parley.conversation(cid)["summaries"]
    approval = attack(guarded, cid, "delete", [])
    latest = approval["sources"][0]
    assert latest["label"] == "the results of earlier tool calls, now in the summary"
    assert summary["content"].startswith(latest["excerpt"].rstrip("…"))
