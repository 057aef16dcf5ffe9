"""Importing a chat Parley has already (issue 49): a chat exported from this Parley,
imported before (as itself or as a copy), or exported from another Parley that imported it,
is "already here", as is a ChatGPT conversation imported before. The import skips it by
default and says how many it skipped, imports it again as a copy when asked to, or, asked
to ask, imports nothing and says how many of how many are here."""

from __future__ import annotations

import copy
import time
from pathlib import Path
from typing import Any

from tests.server.transfer.test_transfer import chatgpt_export, import_json
from tests.support.parley import Parley
from tests.support.upstream import Script, ScriptedUpstream


def titles(parley: Parley) -> list[str]:
    listed = parley.call("GET", "/api/conversations").json()["conversations"]
    return [c["title"] for c in listed]


def chats(parley: Parley, upstream: ScriptedUpstream, *names: str) -> dict[str, Any]:
    """A chat per name, each with a question and its reply; the export of them all."""
    for name in names:
        cid = parley.new_conversation(title=name)
        upstream.script = Script(texts=[f"About {name}."])
        parley.send(cid, f"Tell me about {name}").read_all()
        parley.wait_idle()
    everything = parley.call("GET", "/api/export")
    assert everything.status == 200
    document: dict[str, Any] = everything.json()
    return document


def test_an_export_imported_again_is_skipped_by_default_and_said_so(
    parley: Parley, upstream: ScriptedUpstream
) -> None:
    document = chats(parley, upstream, "Basalt", "Pumice")
    reply = import_json(parley, document)
    assert reply.status == 201, reply.body
    answer = reply.json()
    assert answer["conversations"] == [] and answer["messages"] == 0
    assert answer["already_here"] == 2
    assert [(s["index"], s["title"]) for s in answer["skipped"]] == [(0, "Basalt"), (1, "Pumice")]
    assert all("already here" in s["reason"] for s in answer["skipped"])
    assert sorted(titles(parley)) == ["Basalt", "Pumice"]


def test_asked_to_ask_the_import_says_how_many_are_here_and_imports_nothing(
    parley: Parley, upstream: ScriptedUpstream
) -> None:
    document = chats(parley, upstream, "Basalt", "Pumice")
    new = copy.deepcopy(document["conversations"][0])
    new["id"], new["title"] = "a-chat-from-elsewhere", "Obsidian"
    for message in new["messages"]:
        message["id"] = "x" + message["id"]
        message["parent_id"] = message["parent_id"] and "x" + message["parent_id"]
    new["leaf_id"] = "x" + new["leaf_id"]
    document["conversations"].append(new)

    reply = import_json(parley, document, "ask")
    assert reply.status == 409, reply.body
    body = reply.json()
    assert body["error"]["code"] == "already_here"
    assert (body["already_here"], body["conversations"]) == (2, 3)
    assert sorted(titles(parley)) == ["Basalt", "Pumice"]  # nothing imported

    reply = import_json(parley, document, "copy")
    assert reply.status == 201, reply.body
    assert len(reply.json()["conversations"]) == 3 and reply.json()["already_here"] == 2
    assert sorted(titles(parley)) == ["Basalt", "Basalt", "Obsidian", "Pumice", "Pumice"]
    # The copies are the same chats too: a third import finds all three here.
    again = import_json(parley, document, "ask")
    assert (again.status, again.json()["already_here"]) == (409, 3)


def test_a_chat_that_went_to_another_parley_and_back_is_already_here(
    parley: Parley, upstream: ScriptedUpstream, tmp_path: Path
) -> None:
    document = chats(parley, upstream, "Basalt")
    other = Parley(tmp_path / "other", upstream.base_url).start()
    try:
        # There as a copy (its id taken by a chat of its own), then exported from there.
        taken = copy.deepcopy(document)
        taken["conversations"][0]["title"] = "Someone else's"
        taken["conversations"][0]["origin"] = "someone-else"
        assert import_json(other, taken).status == 201
        assert import_json(other, document, "copy").status == 201
        back = other.call("GET", "/api/export").json()
    finally:
        other.stop()
    reply = import_json(parley, back, "ask")
    assert reply.status == 409, reply.body
    assert (reply.json()["already_here"], reply.json()["conversations"]) == (1, 2)


def test_a_chatgpt_export_imported_again_is_skipped_with_or_without_ids(
    parley: Parley,
) -> None:
    with_id = chatgpt_export()
    with_id[0]["id"] = with_id[0]["conversation_id"] = "6650a1b2-chatgpt"
    without_id = chatgpt_export()
    without_id[0]["title"] = "Rocks without an id"
    document = with_id + without_id
    first = import_json(parley, document)
    assert first.status == 201 and len(first.json()["conversations"]) == 2, first.body
    again = import_json(parley, document)
    assert again.status == 201, again.body
    assert again.json()["conversations"] == [] and again.json()["already_here"] == 2
    changed = chatgpt_export()
    changed[0]["title"] = "Rocks without an id"
    changed[0]["mapping"]["a2b"]["message"]["content"]["parts"] = ["It sinks."]
    assert import_json(parley, changed).json()["already_here"] == 0  # another chat


def test_a_wrong_choice_is_a_400(parley: Parley) -> None:
    reply = import_json(parley, chatgpt_export(), "merge")
    assert reply.status == 400 and reply.json()["error"]["code"] == "invalid_field"
    assert titles(parley) == []


def test_imported_chats_sort_by_their_own_last_activity_among_the_others(
    parley: Parley, upstream: ScriptedUpstream
) -> None:
    now = time.time()
    old = chats(parley, upstream, "Old")["conversations"][0]
    old["updated_at"] = now - 5 * 86_400  # five days ago
    assert parley.call("DELETE", f"/api/conversations/{old['id']}").status == 204
    document = {"format": "parley", "version": 1, "conversations": [old]}
    assert import_json(parley, document).status == 201
    chats(parley, upstream, "New")

    def chatgpt(title: str, update: float | None, message: float | None) -> dict[str, Any]:
        item = chatgpt_export()[0]
        item["title"], item["create_time"], item["update_time"] = title, None, update
        for node in item["mapping"].values():
            if node["message"] is not None:
                node["message"]["create_time"] = message
        return item

    day = 86_400
    reply = import_json(
        parley,
        [
            chatgpt("Yesterday", now - day, None),
            chatgpt("Three days ago, by its messages", None, now - 3 * day),
            chatgpt("No time at all", None, None),
        ],
    )
    assert reply.status == 201, reply.body
    assert titles(parley) == [
        "No time at all",  # none of its own: when it came
        "New",
        "Yesterday",
        "Three days ago, by its messages",
        "Old",
    ]
