"""Attachments' ownership in storage: an attachment is its chat's alone. Deleting the chat
deletes its attachments (rows in the chat's transaction, files after the commit, off the
database thread); another chat naming one is refused with a reason; a crash between the
commit and the unlinks leaves a file nothing reads, swept at the next start."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

from server.storage import attachments as rows
from server.storage import migrations
from server.storage.db import connect
from server.storage.store import Store, TurnStart
from tests.server.attachments.test_attachments import uploaded
from tests.server.transfer.test_attachments import PNG
from tests.support.client import Reply
from tests.support.parley import Parley
from tests.support.upstream import Script, ScriptedUpstream


def sent_in_a_chat(parley: Parley, upstream: ScriptedUpstream) -> tuple[str, list[dict[str, Any]]]:
    upstream.script = Script(tokens=1)
    notes, image = uploaded(parley, "notes.txt", b"private notes"), uploaded(parley, "a.png", PNG)
    cid = parley.new_conversation()
    parley.send(cid, "look", attachments=[notes["id"], image["id"]]).read_all()
    return cid, [notes, image]


def send(parley: Parley, cid: str, attachment_id: str) -> Reply:
    body = {"content": "and this?", "attachments": [attachment_id]}
    return parley.call("POST", f"/api/conversations/{cid}/messages", json_body=body)


def test_a_deleted_chat_s_attachments_go_with_it(
    parley: Parley, upstream: ScriptedUpstream, data_dir: Path
) -> None:
    cid, files = sent_in_a_chat(parley, upstream)
    folder = data_dir / "attachments"
    assert {p.name for p in folder.iterdir()} == {f["id"] for f in files}

    assert parley.call("DELETE", f"/api/conversations/{cid}").status == 204

    assert list(folder.iterdir()) == []  # gone when the delete answers
    other = parley.new_conversation()
    for attachment in files:
        assert parley.call("GET", f"/api/attachments/{attachment['id']}").status == 404
        refused = send(parley, other, attachment["id"])
        assert refused.status == 404
        assert refused.json()["error"]["code"] == "attachment_not_found"
    assert parley.conversation(other)["messages"] == []


def test_another_chat_s_attachment_is_refused_with_the_reason(
    parley: Parley, upstream: ScriptedUpstream
) -> None:
    _, [notes, _] = sent_in_a_chat(parley, upstream)
    calls = len(upstream.records)
    other = parley.new_conversation()

    refused = send(parley, other, notes["id"])

    assert refused.status == 404
    assert "belongs to another chat" in refused.json()["error"]["message"]
    assert parley.conversation(other)["messages"] == []
    assert len(upstream.records) == calls  # nothing of the other chat reached the model
    assert parley.call("GET", f"/api/attachments/{notes['id']}").body == b"private notes"


def test_a_crash_before_the_unlinks_leaves_no_readable_file(
    data_dir: Path, upstream: ScriptedUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = data_dir / "attachments"
    parley = Parley(data_dir, upstream.base_url).start()
    try:
        cid, files = sent_in_a_chat(parley, upstream)
        # The process dies after the commit, before a single unlink.
        monkeypatch.setattr(rows, "remove_files", lambda where, ids: None)
        assert parley.call("DELETE", f"/api/conversations/{cid}").status == 204
        assert {p.name for p in folder.iterdir()} == {f["id"] for f in files}
        for attachment in files:
            assert parley.call("GET", f"/api/attachments/{attachment['id']}").status == 404
    finally:
        parley.stop()
    monkeypatch.undo()
    parley = Parley(data_dir, upstream.base_url).start()  # its sweep: files with no row
    try:
        assert list(folder.iterdir()) == []
    finally:
        parley.stop()


def test_the_unlinks_never_hold_the_database_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    unlinking, release = threading.Event(), threading.Event()
    unlink = rows.remove_files

    def slow_unlinks(where: Path, ids: list[str]) -> None:
        unlinking.set()
        release.wait(30)
        unlink(where, ids)

    monkeypatch.setattr(rows, "remove_files", slow_unlinks)

    async def scenario() -> None:
        store = Store(tmp_path / "db.sqlite3")
        await store.open()
        try:
            chat = await store.create_conversation("many files", None, None)
            ids = await store.db.run(_add_sent, chat["id"], tmp_path / "attachments", 50)
            deleting = asyncio.create_task(store.delete(chat["id"]))
            assert await asyncio.to_thread(unlinking.wait, 10)
            # While the files are being removed, another chat's writes go on.
            other = await asyncio.wait_for(store.create_conversation("other", None, None), 10)
            opened = await asyncio.wait_for(
                store.open_turn(
                    other["id"], TurnStart("send", "hi"), "m", user_message_id="u", message_id="r"
                ),
                10,
            )
            assert opened is not None
            await asyncio.wait_for(asyncio.wrap_future(store.checkpoint("r", "hello")), 10)
            assert not deleting.done()
            release.set()
            assert await deleting is True
            assert not any((tmp_path / "attachments" / i).exists() for i in ids)
        finally:
            release.set()
            await store.close()

    asyncio.run(scenario())


def _add_sent(conn: sqlite3.Connection, cid: str, folder: Path, count: int) -> list[str]:
    """`count` attachments a message of chat `cid` carries, each with its file."""
    folder.mkdir(exist_ok=True)
    ids = [f"file{n}" for n in range(count)]
    for attachment_id in ids:
        attachment = {
            "id": attachment_id,
            "name": "n.txt",
            "kind": "text",
            "mime": "text/plain",
            "bytes": 1,
            "chars": 1,
            "note": None,
        }
        rows.add(conn, attachment, "x", 0.0)  # type: ignore[arg-type]
        (folder / attachment_id).write_bytes(b"x")
    rows.take(conn, cid, tuple(ids))
    return ids


def test_a_database_from_before_keeps_its_attachments_and_now_deletes_them(
    tmp_path: Path,
) -> None:
    path = tmp_path / "db.sqlite3"
    until = [name for name, _ in migrations.MIGRATIONS].index("0013_attachments") + 1
    conn = connect(path, migrations=migrations.MIGRATIONS[:until])
    conn.execute("INSERT INTO conversations (id, created_at, updated_at) VALUES ('c', 0, 0)")
    conn.execute(
        "INSERT INTO attachments (id, conversation_id, name, kind, mime, bytes, created_at) "
        "VALUES ('a', 'c', 'n.txt', 'text', 'text/plain', 1, 0), "
        "('u', NULL, 'up.txt', 'text', 'text/plain', 1, 0)"
    )
    conn.close()

    conn = connect(path)  # the migrations since
    try:
        found = {
            row["id"]: row["conversation_id"] for row in conn.execute("SELECT * FROM attachments")
        }
        assert found == {"a": "c", "u": None}
        conn.execute("DELETE FROM conversations WHERE id = 'c'")
        assert [row[0] for row in conn.execute("SELECT id FROM attachments")] == ["u"]
        plan = conn.execute(
            "EXPLAIN QUERY PLAN SELECT id FROM attachments WHERE conversation_id = 'c'"
        ).fetchall()
        assert "attachments_by_conversation" in str([tuple(step) for step in plan])
    finally:
        conn.close()
