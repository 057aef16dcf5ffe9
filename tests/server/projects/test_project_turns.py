"""A project's chats end to end, on the scripted upstream: the request carries the project's
instructions in its system prompt (counted by the context meter as sent), and its
`search_documents` finds only the project's own documents; a chat outside it, the whole
library."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from server.models.context import MESSAGE_OVERHEAD, estimate_tokens
from tests.server.library.test_library import library
from tests.support.parley import Parley
from tests.support.tools import untrusted_text
from tests.support.upstream import Script, ScriptedUpstream
from tests.support.waiting import wait_for

pytestmark = pytest.mark.slow

INSTRUCTIONS = "Always answer as a ship's captain would."
SEARCH = {"name": "search_documents", "arguments": '{"query": "lighthouse keeper", "k": 5}'}


def project(parley: Parley, **fields: Any) -> dict[str, Any]:
    reply = parley.call("POST", "/api/projects", json_body=fields)
    assert reply.status == 201, reply.body
    found: dict[str, Any] = reply.json()
    return found


def system_of(body: dict[str, Any]) -> str:
    first = body["messages"][0]
    assert first["role"] == "system"
    content: str = first["content"]
    return content


def meter(parley: Parley, cid: str) -> dict[str, Any]:
    reply = parley.call("GET", f"/api/conversations/{cid}/context")
    assert reply.status == 200, reply.body
    found: dict[str, Any] = reply.json()
    return found


def indexed_files(parley: Parley, count: int) -> None:
    def done() -> bool:
        state = library(parley)
        files = sum(folder["files"] for folder in state["folders"])
        return state["progress"]["state"] == "idle" and files == count

    wait_for(done, 30)


def test_a_project_chat_is_told_its_instructions_and_the_meter_counts_them(
    parley: Parley, upstream: ScriptedUpstream
) -> None:
    ship = project(parley, name="Ship", instructions=INSTRUCTIONS)
    cid = parley.new_conversation(
        system="Be brief.", project_id=ship["id"], tools=False, documents=False
    )
    upstream.queue = [Script(texts=["Aye."])]
    parley.send(cid, "How is the weather?").read_all()
    sent = system_of(upstream.records[-1].body)
    assert sent.startswith("Be brief.\n\n")
    assert f'<project_instructions project="Ship">\n{INSTRUCTIONS}\n</project_instructions>' in sent
    # The meter counts the system prompt the next turn sends, instructions and all: as it
    # counts a chat whose own system prompt is that whole text.
    same = parley.new_conversation(system=sent, tools=False, documents=False)
    assert meter(parley, cid)["system"] == meter(parley, same)["system"]
    assert meter(parley, cid)["system"] >= estimate_tokens(sent) + MESSAGE_OVERHEAD
    upstream.queue = [Script(texts=["Aye."])]
    parley.send(cid, "And now?").read_all()
    assert system_of(upstream.records[-1].body) == sent

    # Out of the project: its next turn has only its own system prompt, and so has the meter.
    reply = parley.call("PUT", f"/api/conversations/{cid}/project", json_body={"project_id": None})
    assert reply.status == 200, reply.body
    alone = parley.new_conversation(system="Be brief.", tools=False, documents=False)
    assert meter(parley, cid)["system"] == meter(parley, alone)["system"]
    assert meter(parley, alone)["system"] < meter(parley, same)["system"]
    upstream.queue = [Script(texts=["Fine."])]
    parley.send(cid, "And now?").read_all()
    assert system_of(upstream.records[-1].body) == "Be brief."


def test_instructions_changed_reach_the_next_turn_and_a_chat_with_no_prompt_of_its_own(
    parley: Parley, upstream: ScriptedUpstream
) -> None:
    ship = project(parley, name='Odd "name" <x>', instructions="First.")
    cid = parley.new_conversation(project_id=ship["id"], tools=False)
    path = f"/api/projects/{ship['id']}"
    assert parley.call("PATCH", path, json_body={"instructions": "Second."}).status == 200
    upstream.queue = [Script(texts=["ok"])]
    parley.send(cid, "hi").read_all()
    sent = system_of(upstream.records[-1].body)
    # The name cannot close the fence's attribute or open a tag of its own.
    assert sent == (
        "<project_instructions project=\"Odd 'name' (x)\">\nSecond.\n</project_instructions>"
    )


def test_a_project_chat_searches_only_the_project_s_documents(
    parley: Parley, upstream: ScriptedUpstream, tmp_path: Path
) -> None:
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    ours.mkdir()
    theirs.mkdir()
    (ours / "keeper.md").write_text(
        "# Ours\n\nThe lighthouse keeper of our project climbs 120 steps.\n", encoding="utf-8"
    )
    (theirs / "other.md").write_text(
        "# Theirs\n\nAnother lighthouse keeper, in a folder of no project.\n", encoding="utf-8"
    )
    reply = parley.call("POST", "/api/library/folders", json_body={"path": str(theirs)})
    assert reply.status == 201, reply.body
    ship = project(parley, name="Ship", instructions=INSTRUCTIONS, folders=[str(ours)])
    indexed_files(parley, 2)  # both folders are the library's, each indexed

    inside = parley.new_conversation(project_id=ship["id"], documents=True)
    upstream.queue = [Script(tokens=0, tool_calls=[SEARCH]), Script(texts=["Aye, [1]."])]
    stream = parley.send(inside, "What does the lighthouse keeper do?")
    stream.read_all()
    assert stream.final["parley"]["status"] == "completed"
    first, second = upstream.records[-2].body, upstream.records[-1].body
    assert INSTRUCTIONS in json.dumps(first["messages"])
    told = untrusted_text(second["messages"][-1]["content"])
    assert str((ours / "keeper.md").resolve()) in told
    assert "theirs" not in told and "no project" not in told

    outside = parley.new_conversation(documents=True)
    upstream.queue = [Script(tokens=0, tool_calls=[SEARCH]), Script(texts=["Both."])]
    parley.send(outside, "What does the lighthouse keeper do?").read_all()
    told = untrusted_text(upstream.records[-1].body["messages"][-1]["content"])
    assert "keeper.md" in told and "other.md" in told  # the whole library
    assert INSTRUCTIONS not in json.dumps(upstream.records[-2].body["messages"])


def test_use_my_documents_in_the_prompt_keeps_to_the_project_s_folders(
    parley: Parley, upstream: ScriptedUpstream, tmp_path: Path
) -> None:
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    ours.mkdir()
    theirs.mkdir()
    (ours / "a.md").write_text("# A\n\nHerons wade in our pond.\n", encoding="utf-8")
    (theirs / "b.md").write_text("# B\n\nHerons wade in their pond.\n", encoding="utf-8")
    assert (
        parley.call("POST", "/api/library/folders", json_body={"path": str(theirs)}).status == 201
    )
    pond = project(parley, name="Pond", folders=[str(ours)])
    indexed_files(parley, 2)
    cid = parley.new_conversation(project_id=pond["id"], documents=True, tools=False)
    upstream.queue = [Script(texts=["They wade."])]
    parley.send(cid, "Where do herons wade?").read_all()
    given = [m["content"] for m in upstream.records[-1].body["messages"] if m["role"] == "system"]
    passages = next(text for text in given if "user's own documents" in text)
    assert "our pond" in passages and "their pond" not in passages
