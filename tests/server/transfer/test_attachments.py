"""Attachments in an import are the import's own: each gets a new id, so a file can never point
a message at another chat's attachment nor write under an id the data dir has; the ids it
gives only say which messages of one conversation share a file."""

from __future__ import annotations

import base64
import struct
import zlib
from pathlib import Path
from typing import Any

from tests.server.attachments.test_attachments import uploaded
from tests.server.transfer.test_round_trip import import_document
from tests.support.parley import Parley
from tests.support.upstream import Script, ScriptedUpstream


def _chunk(kind: bytes, data: bytes) -> bytes:
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))


# A whole 1×1 RGB PNG, built as one (an upload is checked by its structure).
PNG = (
    b"\x89PNG\r\n\x1a\n"
    + _chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0))
    + _chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00"))
    + _chunk(b"IEND", b"")
)


def document(*conversations: list[dict[str, Any]]) -> dict[str, Any]:
    """A Parley export of conversations, each given as its questions' attachments."""
    chats = []
    for n, questions in enumerate(conversations):
        messages = [
            {"id": f"m{n}-{i}", "parent_id": f"m{n}-{i - 1}" if i else None, "role": "user",
             "content": f"question {i}", "created_at": 1.0 + i, "attachments": [attachment]}
            for i, attachment in enumerate(questions)
        ]  # fmt: skip
        chats.append(
            {"id": f"c{n}", "title": f"chat {n}", "created_at": 1.0, "updated_at": 1.0,
             "leaf_id": messages[-1]["id"], "messages": messages}
        )  # fmt: skip
    return {"format": "parley", "version": 1, "conversations": chats}


def text_file(attachment_id: str, data: bytes | None = None) -> dict[str, Any]:
    found: dict[str, Any] = {
        "id": attachment_id, "name": "notes.txt", "kind": "text", "mime": "text/plain",
        "text": "imported text", "bytes": 13,
    }  # fmt: skip
    if data is not None:
        found["data"] = base64.b64encode(data).decode("ascii")
    return found


def imported_chats(parley: Parley, doc: dict[str, Any], duplicates: str | None = None) -> list[str]:
    reply = import_document(parley, doc, duplicates)
    assert reply.status == 201, reply.body
    chats: list[str] = reply.json()["conversations"]
    return chats


def attachments_of(parley: Parley, cid: str) -> list[dict[str, Any]]:
    return [a for m in parley.conversation(cid)["messages"] for a in m.get("attachments", [])]


def sent_image(parley: Parley, upstream: ScriptedUpstream) -> dict[str, Any]:
    upstream.script = Script(tokens=1)
    image = uploaded(parley, "private.png", PNG)
    parley.send(parley.new_conversation(), "look", attachments=[image["id"]]).read_all()
    return image


def test_an_import_naming_another_chat_s_attachment_gets_none_of_its_bytes(
    parley: Parley, upstream: ScriptedUpstream, data_dir: Path
) -> None:
    image = sent_image(parley, upstream)
    path = data_dir / "attachments" / image["id"]
    before = (path.read_bytes(), path.stat().st_mtime_ns)
    named = {"id": image["id"], "name": "x.png", "kind": "image", "mime": "image/png"}

    [cid] = imported_chats(parley, document([named]))

    [carried] = attachments_of(parley, cid)
    assert carried["id"] != image["id"]
    assert parley.call("GET", f"/api/attachments/{carried['id']}").status == 404
    parley.send(cid, "what was it?").read_all()  # the model is not given the other's image
    given = str(upstream.records[-1].body["messages"])
    assert "image_url" not in given and "not shown" in given
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before


def test_an_import_never_writes_under_an_existing_id(
    parley: Parley, upstream: ScriptedUpstream, data_dir: Path
) -> None:
    image = sent_image(parley, upstream)
    path = data_dir / "attachments" / image["id"]
    path.unlink()  # its row is there, its file is gone

    [cid] = imported_chats(parley, document([text_file(image["id"], b"the import's bytes")]))

    assert not path.exists()
    [carried] = attachments_of(parley, cid)
    assert carried["id"] != image["id"]
    assert parley.call("GET", f"/api/attachments/{carried['id']}").body == b"the import's bytes"
    assert parley.call("GET", f"/api/attachments/{image['id']}").status == 404


def test_one_conversation_s_messages_share_a_file_another_s_do_not(
    parley: Parley, data_dir: Path
) -> None:
    first = [text_file("shared", b"bytes of the first chat"), text_file("shared")]
    second = [text_file("shared")]  # the same id in another conversation: no file of its own

    one, other = imported_chats(parley, document(first, second))

    kept = attachments_of(parley, one)
    assert kept[0]["id"] == kept[1]["id"] != "shared"
    assert (
        parley.call("GET", f"/api/attachments/{kept[0]['id']}").body == b"bytes of the first chat"
    )
    [elsewhere] = attachments_of(parley, other)
    assert elsewhere["id"] not in (kept[0]["id"], "shared")
    assert parley.call("GET", f"/api/attachments/{elsewhere['id']}").status == 404
    assert [p.name for p in (data_dir / "attachments").iterdir()] == [kept[0]["id"]]


def test_the_same_export_imported_twice_gives_two_copies_of_its_files(
    parley: Parley, data_dir: Path
) -> None:
    doc = document([text_file("a1", b"one")])
    [first], [second] = imported_chats(parley, doc), imported_chats(parley, doc, "copy")
    [a], [b] = attachments_of(parley, first), attachments_of(parley, second)
    assert a["id"] != b["id"]
    assert parley.call("DELETE", f"/api/conversations/{first}").status == 204
    assert parley.call("GET", f"/api/attachments/{b['id']}").body == b"one"
    assert [p.name for p in (data_dir / "attachments").iterdir()] == [b["id"]]


def test_a_failed_import_leaves_none_of_its_files(parley: Parley, data_dir: Path) -> None:
    doc = document([text_file("a1", b"one")], [text_file("a2", b"two")])
    doc["conversations"][1]["messages"][0]["role"] = "robot"  # read after the first's files
    reply = import_document(parley, doc)
    assert reply.status == 400, reply.body
    assert "conversations[1].messages[0].role" in reply.json()["error"]["message"]
    assert list((data_dir / "attachments").iterdir()) == []
