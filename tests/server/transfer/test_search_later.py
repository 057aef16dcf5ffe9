"""A big import answers once its chats are shown, and its messages enter the search index
afterwards, in the background (issue 38: the index was two thirds of an import's time).
Until then a search does not find them and `/api/status` says how many are left; a chat
deleted meanwhile, a restart meanwhile, leave the index whole (SQLite's own integrity check)
and every message is found in the end. A small import is searchable when it answers."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from server.transfer import indexing, jobs
from tests.support.client import Reply, request
from tests.support.parley import Parley
from tests.support.waiting import wait_for

CHATS, PER_CHAT = 40, 50


def export() -> bytes:
    conversations = []
    for c in range(CHATS):
        items: list[dict[str, Any]] = []
        for m in range(PER_CHAT):
            parent = items[-1]["id"] if items else None
            role = "user" if m % 2 == 0 else "assistant"
            text = f"plain words {m} marker{c}x{m}"
            items.append({"id": f"c{c}m{m}", "parent_id": parent, "role": role,
                          "content": text, "created_at": 1.0 + m})  # fmt: skip
        conversations.append({"id": f"c{c}", "title": f"chat {c}", "created_at": 1.0,
                              "updated_at": 1.0, "messages": items})  # fmt: skip
    return json.dumps({"format": "parley", "version": 1, "conversations": conversations}).encode()


def post(parley: Parley) -> Reply:
    headers = {"Content-Type": "application/json"}
    return request(parley.port, "POST", "/api/import", token=parley.token, body=export(),
                   headers=headers, timeout=120)  # fmt: skip


def found(parley: Parley, word: str) -> list[str]:
    reply = parley.call("GET", f"/api/conversations?q={word}")
    assert reply.status == 200, reply.body
    return [c["title"] for c in reply.json()["conversations"]]


def index_is_whole(data_dir: Path) -> None:
    conn = sqlite3.connect(data_dir / "parley.sqlite3", timeout=30)
    try:
        conn.execute("INSERT INTO messages_fts(messages_fts, rank) VALUES ('integrity-check', 1)")
    finally:
        conn.close()


@pytest.fixture
def held(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """Imports over 100 messages are indexed in the background, each batch waiting for the
    event (set at teardown)."""
    release = threading.Event()
    real = indexing.index_pending

    def waiting(conn: sqlite3.Connection, max_rows: int) -> int:
        release.wait(30)
        return real(conn, max_rows)

    monkeypatch.setattr(jobs, "INDEX_INLINE_MESSAGES", 100)
    monkeypatch.setattr(indexing, "index_pending", waiting)
    monkeypatch.setattr(indexing, "INDEX_ROWS", 200)
    yield release
    release.set()


def test_a_big_import_answers_then_becomes_searchable(
    parley: Parley, data_dir: Path, held: threading.Event
) -> None:
    reply = post(parley)
    assert reply.status == 201, reply.body
    assert len(parley.call("GET", "/api/conversations").json()["conversations"]) == CHATS
    assert found(parley, "marker7x3") == []  # shown, not yet in the index
    assert parley.status()["search_backlog"] == CHATS * PER_CHAT
    held.set()
    wait_for(lambda: found(parley, "marker7x3") == ["chat 7"], timeout=60)
    wait_for(lambda: parley.status()["search_backlog"] == 0, timeout=60)
    assert found(parley, f"marker{CHATS - 1}x{PER_CHAT - 1}") == [f"chat {CHATS - 1}"]
    index_is_whole(data_dir)


def test_a_chat_deleted_before_it_is_indexed_leaves_the_index_whole(
    parley: Parley, data_dir: Path, held: threading.Event
) -> None:
    assert post(parley).status == 201
    listed = parley.call("GET", "/api/conversations").json()["conversations"]
    gone = next(c["id"] for c in listed if c["title"] == "chat 3")
    assert parley.call("DELETE", f"/api/conversations/{gone}").status == 204
    held.set()
    wait_for(lambda: parley.status()["search_backlog"] == 0, timeout=60)
    assert found(parley, "marker3x1") == [] and found(parley, "marker4x1") == ["chat 4"]
    index_is_whole(data_dir)


def test_a_restart_before_the_index_is_done_finishes_it_at_start(
    data_dir: Path, held: threading.Event
) -> None:
    parley = Parley(data_dir).start()
    try:
        assert post(parley).status == 201
        assert parley.status()["search_backlog"] > 0
    finally:
        held.set()  # the pass stops at shutdown, after the batch it is in
        parley.stop()
    restarted = Parley(data_dir).start()
    try:
        wait_for(lambda: found(restarted, "marker39x49") == ["chat 39"], timeout=60)
        wait_for(lambda: restarted.status()["search_backlog"] == 0, timeout=60)
    finally:
        restarted.stop()
    index_is_whole(data_dir)


def test_a_small_import_is_searchable_when_it_answers(parley: Parley) -> None:
    assert post(parley).status == 201  # 2,000 messages: under the inline bound
    assert found(parley, "marker12x5") == ["chat 12"]
    assert parley.status()["search_backlog"] == 0
