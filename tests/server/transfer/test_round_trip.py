"""Export -> import round-trips every chat Parley can produce (issue 38, item 6): stopped,
interrupted at shutdown, errored, cut at the length limit, continued, regenerated and edited
versions, tool steps (run, denied, stopped awaiting approval), citations, replies of an
upstream (with and without its own token counts) and of the local model, a chat's own
settings, an empty chat, and a chat imported from ChatGPT. Every one is built through the
real HTTP API (uvicorn on a loopback socket; Stop is a closed socket).

What an import may renew, and nothing else:
- `exported_at`, the time of each export;
- into a Parley that has them already, the ids (of the conversation and its messages, and so
  `parent_id` and `leaf_id`): the import is a copy with new ones, the same in every other
  field. Into an empty Parley the ids are kept too.
- A reply exported while it streams (here: while a tool call awaits approval) imports as a
  crash leaves it: `interrupted`/`crash`, the waiting step `interrupted` and never run. From
  then on it round-trips like any other.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from server.agent.steps import NOT_APPROVED_AT_CRASH
from tests.server.library.test_library import add, indexed
from tests.server.transfer.chats import ECHO, Chats
from tests.server.transfer.test_transfer import chatgpt_export
from tests.support.client import Reply, outcome, request
from tests.support.documents import topic_folder
from tests.support.parley import Parley
from tests.support.tools import tool_server, write_config
from tests.support.upstream import Script, ScriptedUpstream

pytestmark = pytest.mark.slow


# What the chats hold between them (`kinds`): each is a way a message can be stored.
EVERY_KIND = {
    "completed",
    "interrupted/client_hangup",
    "interrupted/shutdown",
    "error/error",
    "finish/stop",
    "finish/length",
    "continued/prefix",
    "estimated usage",
    "branch",
    "tool/completed",
    "tool/denied",
    "tool/interrupted",
    "citation",
    "model/scripted",
    "model/smollm2-135m-instruct",
    "model/gpt-4o",  # imported from ChatGPT
    "empty chat",
    "params",
}


def kinds(document: dict[str, Any]) -> set[str]:
    found: set[str] = set()
    for conversation in document["conversations"]:
        messages = conversation["messages"]
        found |= {"params"} if conversation["params"] else set()
        found |= {"empty chat"} if not messages else set()
        parents = [m["parent_id"] for m in messages]
        found |= {"branch"} if len(parents) > len(set(parents)) else set()
        for m in messages:
            ending = f"{m['status']}/{m['ended_by']}" if m["ended_by"] else m["status"]
            found |= {ending, f"finish/{m['finish_reason']}", f"continued/{m['continued']}"}
            found |= {f"model/{m['model']}"}
            if (m["usage"] or {}).get("completion_tokens_estimated") is True:
                found.add("estimated usage")
            for part in m["parts"]:
                found.add(f"tool/{part['status']}" if part["type"] == "tool" else part["type"])
    return found


def import_document(parley: Parley, document: Any, duplicates: str | None = None) -> Reply:
    return request(
        parley.port,
        "POST",
        "/api/import" + (f"?duplicates={duplicates}" if duplicates else ""),
        token=parley.token,
        body=json.dumps(document, ensure_ascii=False).encode(),
        headers={"Content-Type": "application/json"},
        timeout=60,
    )


def export_all(parley: Parley) -> dict[str, Any]:
    reply = parley.call("GET", "/api/export", timeout=60)
    assert reply.status == 200, reply.body
    document: dict[str, Any] = reply.json()
    return document


def export_one(parley: Parley, cid: str) -> dict[str, Any]:
    reply = parley.call("GET", f"/api/conversations/{cid}/export?format=json")
    assert reply.status == 200, reply.body
    document: dict[str, Any] = reply.json()
    return document


def timeless(document: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in document.items() if key != "exported_at"}


def renamed(conversation: dict[str, Any], copy: dict[str, Any]) -> dict[str, Any]:
    """`conversation` with the ids its copy was given (messages matched in order); the copy
    says which chat it is a copy of (`origin`)."""
    ids = {
        m["id"]: n["id"] for m, n in zip(conversation["messages"], copy["messages"], strict=True)
    }
    ids[conversation["id"]] = copy["id"]
    return {
        **conversation,
        "id": copy["id"],
        "origin": conversation.get("origin", conversation["id"]),
        "leaf_id": ids.get(conversation["leaf_id"]),
        "messages": [
            {**m, "id": ids[m["id"]], "parent_id": ids.get(m["parent_id"])}
            for m in conversation["messages"]
        ],
    }


def start(data_dir: Path, upstream: ScriptedUpstream, tools_log: Path) -> Parley:
    """Parley with the scripted upstream and an MCP server `t` whose tools ask first."""
    write_config(data_dir / "mcp.json", {"t": tool_server(tools_log, trust=None)})
    parley = Parley(data_dir, upstream.base_url).start()
    parley.wait_for(lambda: parley.status()["tools"]["ready"] == 1, timeout=30)
    return parley


@pytest.fixture
def every_chat(tmp_path: Path, upstream: ScriptedUpstream) -> Iterator[tuple[Parley, list[str]]]:
    """A Parley holding one chat of every kind, all settled; their ids."""
    data_dir = tmp_path / "data"
    ids = [interrupted_at_shutdown(start(data_dir, upstream, tmp_path / "tools.log"), upstream)]
    parley = start(data_dir, upstream, tmp_path / "tools.log")
    try:
        files = topic_folder(tmp_path / "docs")
        add(parley, tmp_path / "docs")
        indexed(parley, files=len(files))
        chats = Chats(parley, upstream)
        ids += [
            chats.empty(),
            chats.settings(),
            chats.branches(),
            chats.endings(),
            chats.tools(),
            chats.citations(),
            chats.local(),
            chats.chatgpt(chatgpt_export()),
        ]
        parley.wait_idle(30)
        yield parley, ids
    finally:
        parley.stop()


def interrupted_at_shutdown(parley: Parley, upstream: ScriptedUpstream) -> str:
    """A reply cut when Parley closed (the server stopped under it); Parley is stopped."""
    try:
        cid = parley.new_conversation()
        upstream.queue = [Script(tokens=400, stall_after=3)]
        stream = Chats(parley, upstream).turn(cid, content="Long one")
        stream.read_until(lambda text: "t1 " in text)
        stopper = threading.Thread(target=parley.stop)
        stopper.start()
        stream.read_all()
        stopper.join(30)
        assert outcome(stream.final) == ("interrupted", "shutdown")
        return cid
    finally:
        parley.stop()


@pytest.mark.timeout(300)  # a dozen chats, the local model, two MCP starts: ~10 s when idle
def test_every_chat_parley_produces_round_trips_through_export_and_import(
    every_chat: tuple[Parley, list[str]], tmp_path: Path
) -> None:
    parley, ids = every_chat
    first = export_all(parley)
    assert sorted(c["id"] for c in first["conversations"]) == sorted(ids)
    assert kinds(first) >= EVERY_KIND, EVERY_KIND - kinds(first)

    # Into an empty Parley: the same export, ids and all.
    empty = Parley(tmp_path / "empty").start()
    try:
        reply = import_document(empty, first)
        assert reply.status == 201, reply.body
        assert reply.json()["conversations"] == [c["id"] for c in first["conversations"]]
        assert timeless(export_all(empty)) == timeless(first)
        for cid in ids:  # each chat's own export too
            assert timeless(export_one(empty, cid)) == timeless(export_one(parley, cid))
        assert empty.conversation(ids[3]) == parley.conversation(ids[3])  # as the window reads it
    finally:
        empty.stop()

    # Into the Parley it came from, as copies: new ids and nothing else new.
    reply = import_document(parley, first, "copy")
    assert reply.status == 201, reply.body
    copies = reply.json()["conversations"]
    assert len(copies) == len(ids) and not set(copies) & set(ids)
    for original, copy in zip(first["conversations"], copies, strict=True):
        again = export_one(parley, copy)["conversations"][0]
        assert again == renamed(original, again)


def test_a_reply_exported_while_a_call_awaits_approval_imports_as_a_crash_leaves_it(
    tmp_path: Path, upstream: ScriptedUpstream
) -> None:
    parley = start(tmp_path / "data", upstream, tmp_path / "tools.log")
    try:
        chats = Chats(parley, upstream)
        cid = parley.new_conversation()
        upstream.queue = [Script(texts=["Let me. "], tool_calls=[ECHO])]
        stream = chats.turn(cid, content="Echo this")
        approval = chats.approval(stream)

        def waiting_on_disk() -> bool:
            parts = parley.message(cid, stream.first["message_id"])["parts"]
            return any(p.get("status") == "awaiting_approval" for p in parts)

        parley.wait_for(waiting_on_disk)
        live = export_one(parley, cid)
        stream.hang_up()
        chats.settled(cid, stream)
    finally:
        parley.stop()

    empty = Parley(tmp_path / "empty").start()
    try:
        assert import_document(empty, live).status == 201
        imported = export_one(empty, cid)
        (reply,) = [m for m in imported["conversations"][0]["messages"] if m["role"] != "user"]
        assert (reply["status"], reply["ended_by"]) == ("interrupted", "crash")
        (step,) = [p for p in reply["parts"] if p["type"] == "tool"]
        assert step["id"] == approval["call_id"]
        assert (step["status"], step["result"]) == ("interrupted", NOT_APPROVED_AT_CRASH)
        # What a crash would have left, and from there it round-trips.
        empty.call("DELETE", f"/api/conversations/{cid}")
        assert import_document(empty, imported).status == 201
        assert timeless(export_one(empty, cid)) == timeless(imported)
    finally:
        empty.stop()
