"""Export and import (issue 13): Parley's JSON export -> import gives the same chats (every
branch, part, status, ending, usage, time), for generated chats with Unicode edge cases,
branches and tool parts; ChatGPT's export imports with its branches; a malformed file is a 400
saying where, and imports nothing; Markdown of the selected branch."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.client import request
from tests.support.parley import Parley
from tests.support.upstream import Script, ScriptedUpstream

TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
    max_size=40,
)
TIMES = st.floats(min_value=0, max_value=4e9, allow_nan=False)
# A reply's usage as the server writes it (server/turns/ending.py): counts, timings and the flag
# of a count made by deltas (every stopped reply; an upstream that reported none).
USAGE = st.fixed_dictionaries(
    {"completion_tokens": st.integers(0, 9)},
    optional={
        "prompt_tokens": st.integers(0, 10**6),
        "total_tokens": st.integers(0, 10**6),
        "completion_tokens_estimated": st.just(True),
        "context_dropped_messages": st.integers(1, 99),
        "model_calls": st.integers(2, 8),
        "ttft_ms": st.floats(0, 1e6),
        "tokens_per_s": st.floats(0, 1e4),
    },
)


def import_json(parley: Parley, data: Any, duplicates: str | None = None) -> Any:
    raw = json.dumps(data, ensure_ascii=False).encode()
    return request(
        parley.port,
        "POST",
        "/api/import" + (f"?duplicates={duplicates}" if duplicates else ""),
        token=parley.token,
        body=raw,
        headers={"Content-Type": "application/json"},
    )


def exported(parley: Parley, conversation_id: str) -> dict[str, Any]:
    reply = parley.call("GET", f"/api/conversations/{conversation_id}/export?format=json")
    assert reply.status == 200, reply.body
    conversations: list[dict[str, Any]] = reply.json()["conversations"]
    return conversations[0]


def uid() -> st.SearchStrategy[str]:
    return st.builds(lambda: uuid.uuid4().hex)


@st.composite
def parts(draw: st.DrawFn, content: str) -> list[dict[str, Any]]:
    if not draw(st.booleans()):
        return [{"type": "text", "text": content}]
    tool = {
        "type": "tool",
        "id": draw(uid()),
        "name": "srv__" + draw(st.text(alphabet="abc_", min_size=1, max_size=8)),
        "server": "srv",
        "tool": "t",
        "arguments": json.dumps({"q": draw(TEXT)}, ensure_ascii=False),
        "status": draw(st.sampled_from(["completed", "error", "interrupted"])),
        "result": draw(st.none() | TEXT),
        "started_at": draw(TIMES),
        "ended_at": draw(st.none() | TIMES),
    }
    citation = {
        "type": "citation",
        "n": draw(st.integers(1, 99)),
        "path": "/docs/" + draw(TEXT),
        "page": draw(st.none() | st.integers(1, 500)),
        "lines": None,
        "quote": draw(TEXT),
    }
    return [{"type": "text", "text": draw(TEXT)}, tool, {"type": "text", "text": content}, citation]


@st.composite
def conversations(draw: st.DrawFn) -> dict[str, Any]:
    messages: list[dict[str, Any]] = []
    for _ in range(draw(st.integers(0, 8))):
        # Each message follows an earlier one (or none): any tree, so branches too.
        parent = (
            draw(st.none() | st.sampled_from([m["id"] for m in messages])) if messages else None
        )
        role = draw(st.sampled_from(["user", "assistant"]))
        content = draw(TEXT)
        status = (
            "completed"
            if role == "user"
            else draw(st.sampled_from(["completed", "interrupted", "error"]))
        )
        ended = {"completed": None, "interrupted": "client_hangup", "error": "error"}[status]
        messages.append(
            {
                "id": draw(uid()),
                "role": role,
                "content": content,
                "parts": draw(parts(content))
                if role == "assistant"
                else [{"type": "text", "text": content}],
                "status": status,
                "ended_by": ended,
                "error": "upstream failed: 500" if status == "error" else None,
                "model": draw(st.none() | TEXT) if role == "assistant" else None,
                "created_at": draw(TIMES),
                "completed_at": draw(st.none() | TIMES),
                "usage": draw(st.none() | USAGE),
                "parent_id": parent,
                "continued": draw(st.none() | st.sampled_from(["prefix", "fallback"]))
                if role == "assistant"
                else None,
                "finish_reason": draw(st.none() | st.sampled_from(["stop", "length", "tool_calls"]))
                if role == "assistant" and status == "completed"
                else None,
            }
        )
    created = draw(TIMES)
    return {
        "id": draw(uid()),
        "title": draw(TEXT),
        "model": draw(st.none() | TEXT),
        "system": draw(st.none() | TEXT),
        "tools": draw(st.booleans()),
        "documents": draw(st.booleans()),
        "tool_servers": draw(st.none() | st.lists(st.sampled_from(["files", "web"]), unique=True)),
        "params": draw(
            st.fixed_dictionaries(
                {}, optional={"temperature": st.floats(0, 2), "seed": st.integers(0, 99)}
            )
        ),
        "leaf_id": draw(st.sampled_from([m["id"] for m in messages])) if messages else None,
        "created_at": created,
        "updated_at": draw(TIMES),
        "messages": messages,
        "summaries": [
            {
                "id": uuid.uuid4().hex,
                "through_id": draw(st.sampled_from([m["id"] for m in messages])),
                "content": draw(TEXT),
                "model": draw(st.none() | TEXT),
                "created_at": moment,
                "updated_at": moment,
            }
            for moment in sorted(draw(st.lists(TIMES, max_size=2 if messages else 0)))
        ],
    }


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Parley]:
    parley = Parley(tmp_path_factory.mktemp("transfer")).start()
    yield parley
    parley.stop()


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(conversation=conversations())
def test_parley_json_export_then_import_is_identical(
    shared: Parley, conversation: dict[str, Any]
) -> None:
    document = {
        "format": "parley",
        "version": 1,
        "exported_at": 1.0,
        "conversations": [conversation],
    }
    reply = import_json(shared, document)
    assert reply.status == 201, reply.body
    assert reply.json()["conversations"] == [conversation["id"]]  # its ids were free: kept
    once = exported(shared, conversation["id"])
    expected = {**conversation}
    if expected["leaf_id"] is None and expected["messages"]:
        expected["leaf_id"] = expected["messages"][-1]["id"]
    assert once == expected
    # And again: the export of the import of an export is the same.
    shared.call("DELETE", f"/api/conversations/{conversation['id']}")
    assert import_json(shared, {**document, "conversations": [once]}).status == 201
    assert exported(shared, conversation["id"]) == once
    shared.call("DELETE", f"/api/conversations/{conversation['id']}")


def test_a_chat_written_by_parley_round_trips_and_importing_twice_makes_a_copy(
    parley: Parley, upstream: ScriptedUpstream, tmp_path: Path
) -> None:
    cid = parley.new_conversation(system="Be brief.")
    upstream.queue = [Script(texts=["Hello", " there"]), Script(texts=["Again"])]
    stream = parley.send(cid, "Hi 👋 — ünïcode")
    stream.read_all()
    path = f"/api/conversations/{cid}/messages/{stream.first['message_id']}/regenerate"
    request(parley.port, "POST", path, token=parley.token)
    parley.wait_idle()
    everything = parley.call("GET", "/api/export")
    assert everything.status == 200
    document = everything.json()
    assert [c["id"] for c in document["conversations"]] == [cid]
    before = exported(parley, cid)
    assert len(before["messages"]) == 3  # both versions of the reply

    reply = import_json(parley, document, "copy")  # its ids are taken here: new ones
    assert reply.status == 201, reply.body
    (copy,) = reply.json()["conversations"]
    assert copy != cid and reply.json()["messages"] == 3
    again = exported(parley, copy)
    renamed = {m["id"]: n["id"] for m, n in zip(before["messages"], again["messages"], strict=True)}

    def same(c: dict[str, Any]) -> dict[str, Any]:
        return {
            **c,
            "id": copy,
            "origin": cid,  # a copy says which chat it is
            "leaf_id": renamed[c["leaf_id"]],
            "messages": [
                {**m, "id": renamed[m["id"]], "parent_id": renamed.get(m["parent_id"])}
                for m in c["messages"]
            ],
        }

    assert again == same(before)
    assert parley.conversation(copy)["messages"][-1]["siblings"] == [
        renamed[m["id"]] for m in before["messages"][1:]
    ]


def test_markdown_is_the_selected_branch_with_its_endings_and_sources(
    parley: Parley, upstream: ScriptedUpstream
) -> None:
    cid = parley.new_conversation(title="Rocks")
    upstream.queue = [Script(texts=["Basalt is volcanic."])]
    parley.send(cid, "What is basalt?").read_all()
    upstream.queue = [Script(tokens=200, rate=100)]
    stream = parley.send(cid, "And granite?")
    stream.read_until(lambda text: len(text) > 5)
    stream.hang_up()
    parley.wait_settled(cid, stream.first["message_id"])
    reply = parley.call("GET", f"/api/conversations/{cid}/export?format=md")
    assert reply.status == 200 and reply.headers["content-type"].startswith("text/markdown")
    text = reply.body.decode()
    assert text.startswith("# Rocks\n")
    assert "## You · " in text and "What is basalt?" in text and "Basalt is volcanic." in text
    assert "· stopped" in text
    assert parley.call("GET", f"/api/conversations/{cid}/export?format=pdf").status == 400
    assert parley.call("GET", "/api/conversations/nope/export").status == 404


def chatgpt_export() -> list[dict[str, Any]]:
    """The shape of ChatGPT's conversations.json: a tree of nodes, a hidden system message,
    null messages and parts, an image part, an edited question (two branches)."""

    def node(key: str, parent: str | None, children: list[str], message: Any) -> dict[str, Any]:
        return {"id": key, "parent": parent, "children": children, "message": message}

    def msg(role: str, parts: list[Any], at: float, **meta: Any) -> dict[str, Any]:
        return {
            "id": f"m-{at}",
            "author": {"role": role, "name": None, "metadata": {}},
            "create_time": at,
            "content": {"content_type": "text", "parts": parts},
            "status": "finished_successfully",
            "metadata": meta,
        }

    mapping = {
        "root": node("root", None, ["sys"], None),
        "sys": node(
            "sys",
            "root",
            ["q1", "q1b"],
            msg("system", [""], 1.0, is_visually_hidden_from_conversation=True),
        ),
        "q1": node("q1", "sys", ["a1"], msg("user", ["What is basalt?"], 2.0)),
        "a1": node(
            "a1", "q1", [], msg("assistant", ["A volcanic rock.", None], 3.0, model_slug="gpt-4o")
        ),
        "q1b": node(
            "q1b",
            "sys",
            ["a1b"],
            msg("user", ["What is pumice?", {"content_type": "image_asset_pointer"}], 4.0),
        ),
        "a1b": node("a1b", "q1b", ["tool"], msg("assistant", ["A light rock."], 5.0)),
        "tool": node("tool", "a1b", ["a2b"], msg("tool", ["search results"], 6.0)),
        "a2b": node("a2b", "tool", [], msg("assistant", ["It floats."], 7.0)),
    }
    return [
        {
            "title": "Rocks",
            "create_time": 1.0,
            "update_time": 7.0,
            "mapping": mapping,
            "current_node": "a2b",
        }
    ]


def test_a_chatgpt_export_imports_with_its_branches(parley: Parley) -> None:
    reply = import_json(parley, chatgpt_export())
    assert reply.status == 201, reply.body
    assert reply.json()["source"] == "chatgpt" and reply.json()["messages"] == 5
    (cid,) = reply.json()["conversations"]
    conversation = parley.conversation(cid)
    assert conversation["title"] == "Rocks"
    shown = [(m["role"], m["content"]) for m in conversation["messages"]]
    assert shown == [
        ("user", "What is pumice?"),
        ("assistant", "A light rock."),
        ("assistant", "It floats."),  # the tool message left out: it follows the reply
    ]
    first = conversation["messages"][0]
    assert len(first["siblings"]) == 2 and first["sibling_index"] == 1
    other = parley.call(
        "POST", f"/api/conversations/{cid}/select", json_body={"message_id": first["siblings"][0]}
    ).json()
    assert [(m["role"], m["content"], m["model"]) for m in other["messages"]] == [
        ("user", "What is basalt?", None),
        ("assistant", "A volcanic rock.", "gpt-4o"),
    ]


@pytest.mark.parametrize(
    ("document", "where"),
    [
        (b'{"format": "parley", "version": 1, "conversations": [}', "line 1 column"),
        ({"format": "parley", "version": 2, "conversations": []}, "version"),
        ({"format": "other"}, "format"),
        ("just text", "give Parley's export"),
        ("BAD_SECOND", "conversations[1].messages[0].role"),
        ("BAD_PARENT", "conversations[0].messages[0].parent_id"),
        ("BAD_PART", "conversations[0].messages[0].parts[1].arguments"),
        ("BAD_FINISH", "conversations[0].messages[0].finish_reason"),
        ("CHATGPT_LOOP", "[0].mapping"),
        ("CHATGPT_PARTS", "[0].mapping.q1.message"),
    ],
)
def test_a_malformed_import_is_a_400_saying_where_and_imports_nothing(
    parley: Parley, document: Any, where: str
) -> None:
    good = {
        "id": uuid.uuid4().hex, "title": "good", "created_at": 1.0, "updated_at": 1.0,
        "messages": [{"id": uuid.uuid4().hex, "role": "user", "content": "hi", "created_at": 1.0}],
    }  # fmt: skip
    if document == "BAD_SECOND":
        bad = {**good, "id": uuid.uuid4().hex, "messages": [
            {"id": "x", "role": "system", "content": "hi", "created_at": 1.0}
        ]}  # fmt: skip
        document = {"format": "parley", "version": 1, "conversations": [good, bad]}
    elif document == "BAD_PARENT":
        message = {**good["messages"][0], "parent_id": "later"}  # type: ignore[index]
        document = {
            "format": "parley",
            "version": 1,
            "conversations": [{**good, "messages": [message]}],
        }
    elif document == "BAD_PART":
        step = {
            "type": "tool",
            "id": "c1",
            "server": "s",
            "name": "t",
            "status": "completed",
            "result": None,
            "started_at": 1.0,
            "ended_at": 2.0,
        }  # no "arguments"
        message = {**good["messages"][0], "role": "assistant",  # type: ignore[index]
                   "parts": [{"type": "text", "text": "hi"}, step]}  # fmt: skip
        document = {
            "format": "parley",
            "version": 1,
            "conversations": [{**good, "messages": [message]}],
        }
    elif document == "BAD_FINISH":
        message = {**good["messages"][0], "finish_reason": "tired"}  # type: ignore[index]
        document = {
            "format": "parley",
            "version": 1,
            "conversations": [{**good, "messages": [message]}],
        }
    elif document == "CHATGPT_LOOP":
        looped = chatgpt_export()
        looped[0]["mapping"]["root"]["parent"] = "a2b"
        document = looped
    elif document == "CHATGPT_PARTS":
        broken = chatgpt_export()
        broken[0]["mapping"]["q1"]["message"] = ["not", "a", "message"]
        document = broken
    before = parley.call("GET", "/api/conversations").json()
    if isinstance(document, bytes):
        reply = request(
            parley.port, "POST", "/api/import", token=parley.token, body=document,
            headers={"Content-Type": "application/json"},
        )  # fmt: skip
    else:
        reply = import_json(parley, document)
    assert reply.status == 400, reply.body
    error = reply.json()["error"]
    assert error["code"] == "invalid_import" and error["message"].startswith(where), error
    assert parley.call("GET", "/api/conversations").json() == before
