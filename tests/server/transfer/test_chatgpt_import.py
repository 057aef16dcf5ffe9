"""ChatGPT's export: a conversation with no message Parley keeps is skipped, and the import
says so (issue 38, Build); a file of nothing else imports nothing, with a 400 saying why."""

from __future__ import annotations

from typing import Any

from tests.server.transfer.test_transfer import chatgpt_export, import_json
from tests.support.parley import Parley


def no_message(title: str) -> dict[str, Any]:
    """A conversation whose nodes hold no message of the user's or the assistant's: a root,
    a hidden system message and a node with none."""
    system = {
        "author": {"role": "system"},
        "content": {"content_type": "text", "parts": [""]},
        "metadata": {"is_visually_hidden_from_conversation": True},
    }
    return {
        "title": title,
        "create_time": 10.0,
        "mapping": {
            "root": {"id": "root", "parent": None, "children": ["sys"], "message": None},
            "sys": {"id": "sys", "parent": "root", "children": ["x"], "message": system},
            "x": {"id": "x", "parent": "sys", "children": [], "message": None},
        },
        "current_node": "x",
    }


def test_a_conversation_with_no_message_is_skipped_and_the_import_says_so(
    parley: Parley,
) -> None:
    document = [no_message("Empty one"), *chatgpt_export(), no_message("Empty two")]
    reply = import_json(parley, document)
    assert reply.status == 201, reply.body
    answer = reply.json()
    assert len(answer["conversations"]) == 1 and answer["messages"] == 5
    assert [(s["index"], s["title"]) for s in answer["skipped"]] == [
        (0, "Empty one"),
        (2, "Empty two"),
    ]
    assert all("no message" in s["reason"] for s in answer["skipped"])
    titles = [c["title"] for c in parley.call("GET", "/api/conversations").json()["conversations"]]
    assert titles == ["Rocks"]


def test_a_chatgpt_file_with_no_message_at_all_is_a_400_and_imports_nothing(
    parley: Parley,
) -> None:
    reply = import_json(parley, [no_message("Empty"), no_message("Also empty")])
    assert reply.status == 400, reply.body
    error = reply.json()["error"]
    assert error["code"] == "invalid_import"
    assert error["message"].startswith("nothing to import: 2 conversations"), error
    assert parley.call("GET", "/api/conversations").json()["conversations"] == []


def test_a_parley_import_skips_nothing(parley: Parley) -> None:
    empty = {"id": "c1", "title": "", "created_at": 1.0, "messages": []}
    document = {"format": "parley", "version": 1, "conversations": [empty]}
    reply = import_json(parley, document)
    assert reply.status == 201, reply.body
    assert (reply.json()["conversations"], reply.json()["skipped"]) == (["c1"], [])
