"""A chat of many messages (issue 38 item 2): its branch is served in pages, its exports are
written a piece at a time, and reading it never holds another reply's checkpoints (reads run
on connections and threads of their own: server/storage/readers.py). Real sockets throughout: a
client that hangs up mid-export closes its socket."""

from __future__ import annotations

import json
import socket
from typing import Any

import pytest

from server.limits import TransferLimits
from server.storage.readers import READERS
from tests.support.parley import Parley
from tests.support.upstream import Script, ScriptedUpstream
from tests.support.waiting import wait_for

pytestmark = pytest.mark.slow

MESSAGES = 6_000  # enough that an export is many pieces (500 messages each)


def import_chain(parley: Parley, count: int = MESSAGES) -> str:
    """A chat of `count` messages in one branch, with a second version of its first reply
    (m1b, written last); its id."""
    items: list[dict[str, Any]] = []
    parent = None
    for m in range(count):
        role = "user" if m % 2 == 0 else "assistant"
        text = f"message {m} " + "words " * 20
        items.append({"id": f"m{m}", "parent_id": parent, "role": role, "content": text,
                      "created_at": 1.7e9 + m})  # fmt: skip
        parent = f"m{m}"
    items.append({"id": "m1b", "parent_id": "m0", "role": "assistant",
                  "content": "another version", "created_at": 1.8e9})  # fmt: skip
    document = {"format": "parley", "version": 1, "conversations": [
        {"id": "long", "title": "the long chat", "created_at": 1.7e9, "updated_at": 1.7e9,
         "leaf_id": parent, "messages": items}]}  # fmt: skip
    reply = parley.call("POST", "/api/import", json_body=document)
    assert reply.status == 201, reply.body
    listed = parley.call("GET", "/api/conversations").json()["conversations"]
    cid: str = next(c["id"] for c in listed if c["title"] == "the long chat")
    return cid


def get(parley: Parley, path: str) -> Any:
    reply = parley.call("GET", path)
    assert reply.status == 200, reply.body
    return reply.json()


def test_the_branch_is_served_a_page_at_a_time(parley: Parley) -> None:
    cid = import_chain(parley)
    whole = get(parley, f"/api/conversations/{cid}")
    assert len(whole["messages"]) == MESSAGES and whole["earlier"] == 0
    ids = [m["id"] for m in whole["messages"]]

    newest = get(parley, f"/api/conversations/{cid}?limit=200")
    assert [m["id"] for m in newest["messages"]] == ids[-200:]
    assert newest["earlier"] == MESSAGES - 200
    assert newest["messages"][-1] == whole["messages"][-1]

    before = newest["messages"][0]["id"]
    page = get(parley, f"/api/conversations/{cid}?limit=200&before={before}")
    assert [m["id"] for m in page["messages"]] == ids[-400:-200]
    assert page["earlier"] == MESSAGES - 400

    first = get(parley, f"/api/conversations/{cid}?limit=200&before=m3")
    assert [m["id"] for m in first["messages"]] == ["m0", "m1", "m2"]
    assert first["earlier"] == 0
    assert first["messages"][1]["siblings"] == ["m1", "m1b"]
    assert first["messages"][1]["sibling_index"] == 0

    for bad in ("limit=0", "limit=10001", "limit=x", "limit=5&before=m1b", "before=nope"):
        reply = parley.call("GET", f"/api/conversations/{cid}?{bad}")
        assert reply.status == 400, (bad, reply.body)
        assert reply.json()["error"]["code"] == "invalid_field"
    assert parley.call("GET", "/api/conversations/nope?limit=5").status == 404


def test_selecting_a_version_answers_a_page_of_the_branch(parley: Parley) -> None:
    cid = import_chain(parley)
    reply = parley.call(
        "POST", f"/api/conversations/{cid}/select?limit=50", json_body={"message_id": "m1b"}
    )
    assert reply.status == 200, reply.body
    shown = reply.json()
    assert [m["id"] for m in shown["messages"]] == ["m0", "m1b"]
    assert shown["leaf_id"] == "m1b" and shown["earlier"] == 0

    back = parley.call(
        "POST", f"/api/conversations/{cid}/select?limit=50", json_body={"message_id": "m1"}
    )
    assert back.status == 200, back.body
    assert back.json()["leaf_id"] == f"m{MESSAGES - 1}"  # down the newest versions
    assert [m["id"] for m in back.json()["messages"]][-1] == f"m{MESSAGES - 1}"
    assert back.json()["earlier"] == MESSAGES - 50
    assert get(parley, f"/api/conversations/{cid}?limit=1")["leaf_id"] == f"m{MESSAGES - 1}"

    missing = parley.call(
        "POST", f"/api/conversations/{cid}/select", json_body={"message_id": "nope"}
    )
    assert missing.status == 404


def test_both_exports_are_whole_when_written_a_piece_at_a_time(parley: Parley) -> None:
    cid = import_chain(parley)
    exported = get(parley, f"/api/conversations/{cid}/export?format=json")
    (chat,) = exported["conversations"]
    assert len(chat["messages"]) == MESSAGES + 1  # every branch
    assert [m["id"] for m in chat["messages"]][-2:] == [f"m{MESSAGES - 1}", "m1b"]
    assert json.loads(json.dumps(exported)) == exported

    markdown = parley.call("GET", f"/api/conversations/{cid}/export?format=md")
    assert markdown.status == 200
    text = markdown.body.decode()
    assert text.startswith("# the long chat\n")
    assert text.count("## You") == MESSAGES // 2 and text.count("## Assistant") == MESSAGES // 2
    assert f"message {MESSAGES - 1} " in text and "another version" not in text
    assert text.endswith("\n") and not text.endswith("\n\n")

    everything = get(parley, "/api/export")
    assert [c["title"] for c in everything["conversations"]] == ["the long chat"]
    assert everything["conversations"][0]["messages"] == chat["messages"]
    assert parley.call("GET", "/api/conversations/nope/export").status == 404


def open_export(parley: Parley, cid: str) -> socket.socket:
    """A GET of the chat's export whose client reads its first bytes, then nothing more."""
    sock = socket.create_connection(("127.0.0.1", parley.port), timeout=60)
    sock.sendall(
        (
            f"GET /api/conversations/{cid}/export HTTP/1.1\r\nHost: 127.0.0.1:{parley.port}\r\n"
            f"Authorization: Bearer {parley.token}\r\n\r\n"
        ).encode()
    )
    assert sock.recv(64).startswith(b"HTTP/1.1 200")
    return sock


def test_exports_held_open_or_hung_up_hold_neither_the_readers_nor_another_reply(
    parley: Parley, upstream: ScriptedUpstream
) -> None:
    cid = import_chain(parley)
    reads = parley.services.store.reads
    streams = TransferLimits.export_streams
    held = [open_export(parley, cid) for _ in range(streams)]  # clients that read no more
    try:
        wait_for(lambda: reads.streaming == streams)
        # The window's reads still answer, more of them than there are readers...
        for _ in range(READERS + 1):
            assert len(get(parley, f"/api/conversations/{cid}?limit=5")["messages"]) == 5
        # ...and another chat's reply streams to its end and is saved (the writer is not
        # where the exports read, and their snapshots do not hold its commits).
        upstream.script = Script(tokens=40, rate=200)
        other = parley.new_conversation()
        stream = parley.send(other, "talk")
        stream.read_all()
        reply = parley.wait_settled(other, stream.first["message_id"], timeout=30)
        assert reply["status"] == "completed" and len(reply["content"]) > 0
    finally:
        for sock in held:
            sock.close()  # a hang-up: each export stops at its next piece
    wait_for(lambda: reads.streaming == 0, timeout=30)
    exported = get(parley, f"/api/conversations/{cid}/export")
    assert len(exported["conversations"][0]["messages"]) == MESSAGES + 1
