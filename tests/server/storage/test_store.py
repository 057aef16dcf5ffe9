"""The SQLite store: durability settings, atomic migrations, crash recovery."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from server.agent import branch
from server.errors import StorageError
from server.ids import new_id
from server.storage import migrations
from server.storage.db import connect
from server.storage.search import fts_query
from server.storage.store import Ending, OpenedTurn, Store, TurnStart


def test_connection_uses_wal_and_normal_sync(tmp_path: Path) -> None:
    conn = connect(tmp_path / "db.sqlite3")
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
        assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        names = {row[0] for row in conn.execute("SELECT name FROM schema_migrations")}
        assert names == {name for name, _ in migrations.MIGRATIONS}
    finally:
        conn.close()


def test_a_failing_migration_leaves_no_trace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(conn: sqlite3.Connection) -> None:
        conn.execute("CREATE TABLE half_done (x)")
        raise sqlite3.OperationalError("disk I/O error (simulated)")

    monkeypatch.setattr(migrations, "MIGRATIONS", [*migrations.MIGRATIONS, ("0099_broken", broken)])
    with pytest.raises(sqlite3.OperationalError):
        connect(tmp_path / "db.sqlite3")
    conn = sqlite3.connect(tmp_path / "db.sqlite3")
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
    applied = {row[0] for row in conn.execute("SELECT name FROM schema_migrations")}
    conn.close()
    assert "half_done" not in tables
    assert "0099_broken" not in applied and "0001_initial_schema" in applied


def test_a_database_from_a_newer_parley_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite3"
    connect(path).close()
    conn = sqlite3.connect(path)
    conn.execute("INSERT INTO schema_migrations VALUES ('9999_future', 0)")
    conn.commit()
    conn.close()
    with pytest.raises(StorageError, match="newer Parley"):
        connect(path)


async def open_turn(store: Store, conversation_id: str, content: str) -> OpenedTurn | None:
    return await store.open_turn(
        conversation_id,
        TurnStart("send", content),
        "m",
        user_message_id=new_id(),
        message_id=new_id(),
    )


def test_open_marks_streaming_replies_as_crashed_and_keeps_their_text(tmp_path: Path) -> None:
    async def scenario() -> None:
        store = Store(tmp_path / "db.sqlite3")
        assert await store.open() == 0
        conversation = await store.create_conversation("", None, None)
        opened = await open_turn(store, conversation["id"], "question")
        assert opened is not None
        message_id = opened.assistant_message["id"]
        store.checkpoint(message_id, "partial ans")
        await store.close()  # no settle: as if the process died

        again = Store(tmp_path / "db.sqlite3")
        assert await again.open() == 1
        loaded = await again.get_conversation(conversation["id"])
        assert loaded is not None
        reply = loaded["messages"][1]
        assert (reply["content"], reply["status"], reply["ended_by"]) == (
            "partial ans",
            "interrupted",
            "crash",
        )
        assert reply["completed_at"] is not None
        await again.close()

    asyncio.run(scenario())


def test_a_late_checkpoint_never_overwrites_the_final_text(tmp_path: Path) -> None:
    async def scenario() -> None:
        store = Store(tmp_path / "db.sqlite3")
        await store.open()
        conversation = await store.create_conversation("", None, None)
        opened = await open_turn(store, conversation["id"], "q")
        assert opened is not None
        message_id = opened.assistant_message["id"]
        await store.finish(
            message_id, Ending(content="final", status="completed", ended_by=None, completed_at=1.0)
        )
        store.checkpoint(message_id, "stale")
        loaded = await store.get_conversation(conversation["id"])
        assert loaded is not None
        assert loaded["messages"][1]["content"] == "final"
        await store.close()

    asyncio.run(scenario())


@pytest.mark.parametrize(
    ("typed", "query"),
    [
        ("potato", '"potato"*'),
        ("hot potato", '"hot" "potato"*'),
        ("hot potato ", '"hot" "potato"'),
        ('say "hi"', '"say" "hi"*'),
        ("NEAR(a b)", '"NEAR" "a" "b"'),
        ("***", None),
        ("", None),
        ("café", '"café"*'),
    ],
)
def test_fts_query_is_words_the_last_as_a_prefix(typed: str, query: str | None) -> None:
    assert fts_query(typed) == query
    if query is not None:  # a model's question: any word, each a prefix (not one letter)
        assert fts_query(typed + " x", any_word=True).endswith('"x"')


def test_disk_full_is_a_clear_error_and_the_store_keeps_working(tmp_path: Path) -> None:
    async def scenario() -> None:
        store = Store(tmp_path / "db.sqlite3")
        await store.open()
        conversation = await store.create_conversation("kept", None, None)

        def cap_size(conn: sqlite3.Connection) -> None:
            pages = conn.execute("PRAGMA page_count").fetchone()[0]
            conn.execute(f"PRAGMA max_page_count = {pages + 2}")  # SQLITE_FULL beyond this

        await store.db.run(cap_size)
        with pytest.raises(StorageError, match="disk is full"):
            await open_turn(store, conversation["id"], "x" * 200_000)
        # Nothing half-written, nothing lost, and the next small write works.
        loaded = await store.get_conversation(conversation["id"])
        assert loaded is not None and loaded["messages"] == [] and loaded["title"] == "kept"
        assert await store.rename(conversation["id"], "still works") is not None
        await store.close()

    asyncio.run(scenario())


def test_unencodable_text_is_a_storage_error_not_a_crash(tmp_path: Path) -> None:
    async def scenario() -> None:
        store = Store(tmp_path / "db.sqlite3")
        await store.open()
        with pytest.raises(StorageError):
            await store.create_conversation("\ud800", None, None)
        assert await store.list_conversations() == []
        await store.close()

    asyncio.run(scenario())


def fts_consistent(path: Path) -> bool:
    conn = sqlite3.connect(path)
    try:
        conn.execute("INSERT INTO messages_fts(messages_fts, rank) VALUES ('integrity-check', 1)")
        return True
    except sqlite3.DatabaseError:
        return False
    finally:
        conn.close()


def test_a_reply_is_indexed_for_search_when_it_settles_not_at_each_checkpoint(
    tmp_path: Path,
) -> None:
    async def scenario() -> None:
        path = tmp_path / "db.sqlite3"
        store = Store(path)
        await store.open()
        conversation = await store.create_conversation("", None, None)
        streaming = await open_turn(store, conversation["id"], "first")
        assert streaming is not None
        for words in ("zebra", "zebra giraffe", "zebra giraffe okapi"):
            await asyncio.wrap_future(store.checkpoint(streaming.assistant_message["id"], words))
        assert await store.search("okapi") == []  # not while it streams
        await store.finish(
            streaming.assistant_message["id"],
            Ending(content="zebra giraffe okapi!", status="completed", ended_by=None,
                   completed_at=1.0),
        )  # fmt: skip
        assert [c["id"] for c in await store.search("okapi")] == [conversation["id"]]
        assert fts_consistent(path)
        await store.close()

    asyncio.run(scenario())


def test_a_reply_cut_by_a_crash_is_indexed_at_the_next_start(tmp_path: Path) -> None:
    async def scenario() -> None:
        path = tmp_path / "db.sqlite3"
        store = Store(path)
        await store.open()
        conversation = await store.create_conversation("", None, None)
        opened = await open_turn(store, conversation["id"], "q")
        assert opened is not None
        await asyncio.wrap_future(store.checkpoint(opened.assistant_message["id"], "narwhal"))
        await store.close()  # no settle: as if the process died
        again = Store(path)
        assert await again.open() == 1
        assert [c["id"] for c in await again.search("narwhal")] == [conversation["id"]]
        assert fts_consistent(path)
        await again.close()

    asyncio.run(scenario())


def test_the_migration_reindexes_a_reply_left_streaming_by_an_older_parley(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "db.sqlite3"
    monkeypatch.setattr(migrations, "MIGRATIONS", migrations.MIGRATIONS[:1])
    old = connect(path)  # the schema before 0002: every checkpoint re-indexed the text
    old.execute("INSERT INTO conversations (id, title, created_at, updated_at) "
                "VALUES ('c', '', 0, 0)")  # fmt: skip
    old.execute("INSERT INTO messages (id, conversation_id, role, content, status, created_at, "
                "updated_at) VALUES ('m', 'c', 'assistant', '', 'streaming', 0, 0)")  # fmt: skip
    old.execute("UPDATE messages SET content = 'axolotl' WHERE id = 'm'")
    old.close()
    monkeypatch.undo()

    async def scenario() -> None:
        store = Store(path)
        assert await store.open() == 1  # migrated, then recovered as a crash
        assert [c["id"] for c in await store.search("axolotl")] == ["c"]
        assert fts_consistent(path)
        await store.close()

    asyncio.run(scenario())


def tool_step(status: str, **fields: Any) -> dict[str, Any]:
    step = {"type": "tool", "id": "c1", "server": "s", "name": "slow", "arguments": "{}"}
    return {**step, "status": status, "result": None, "started_at": 1.0, "ended_at": None, **fields}


def test_a_database_written_before_tool_steps_moves_forward_unchanged(tmp_path: Path) -> None:
    # Written by Parley as of 79e88e1 (migrations 0001-0002) through its own Store: a
    # completed reply, a stopped one, and one left streaming by a crash.
    path = tmp_path / "parley.sqlite3"
    path.write_bytes((Path(__file__).parents[2] / "fixtures" / "parley-0002.sqlite3").read_bytes())

    async def scenario() -> None:
        store = Store(path)
        assert await store.open() == 1  # the streaming reply, recovered as a crash
        (conversation,) = await store.list_conversations()
        assert (conversation["title"], conversation["system"]) == ("Old chat", "Be brief.")
        assert conversation["tools"] is True
        full = await store.get_conversation(conversation["id"])
        assert full is not None
        replies = {m["id"]: m for m in full["messages"] if m["role"] == "assistant"}
        assert replies["a1"]["content"] == "Hi! How can I help?"
        assert replies["a1"]["parts"] == [{"type": "text", "text": "Hi! How can I help?"}]
        assert replies["a1"]["usage"] == {"completion_tokens": 6}
        assert (replies["a2"]["status"], replies["a2"]["ended_by"]) == (
            "interrupted",
            "client_hangup",
        )
        assert (replies["a3"]["status"], replies["a3"]["ended_by"], replies["a3"]["content"]) == (
            "interrupted",
            "crash",
            "It was cut",
        )
        assert [c["id"] for c in await store.search("help")] == [conversation["id"]]
        # And new replies keep their steps in it.
        opened = await store.open_turn(
            conversation["id"],
            TurnStart("send", "next"),
            "m",
            user_message_id="u4",
            message_id="a4",
        )
        assert opened is not None and opened.tools
        step = tool_step("completed", result="r", ended_at=2.0)
        parts: list[Any] = [{"type": "text", "text": "ok"}, step]
        ending = Ending(
            content="ok", parts=parts, status="completed", ended_by=None, completed_at=3.0
        )
        await store.finish("a4", ending)
        message = await store.get_message(conversation["id"], "a4")
        assert message is not None and message["parts"] == parts
        await store.close()
        assert fts_consistent(path)

    asyncio.run(scenario())


def test_a_crash_marks_a_running_tool_step_interrupted_at_the_next_start(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite3"

    async def scenario() -> None:
        store = Store(path)
        await store.open()
        conversation = await store.create_conversation("", None, None)
        await store.open_turn(
            conversation["id"], TurnStart("send", "go"), "m", user_message_id="u", message_id="a"
        )
        parts: list[Any] = [{"type": "text", "text": "Checking."}, tool_step("running")]
        await asyncio.wrap_future(store.checkpoint("a", "Checking.", parts))
        await store.close()  # the app died here: nothing settled the reply

        again = Store(path)
        assert await again.open() == 1
        message = await again.get_message(conversation["id"], "a")
        assert message is not None
        assert (message["status"], message["ended_by"]) == ("interrupted", "crash")
        step = message["parts"][1]
        assert step["type"] == "tool" and step["status"] == "interrupted"
        assert step["ended_at"] == message["completed_at"]
        await again.close()

    asyncio.run(scenario())


def test_a_database_of_the_version_before_branches_opens_as_one_branch_per_chat(
    tmp_path: Path,
) -> None:
    # Written by Parley as of 6bba888 (migrations 0001-0004) through its own Store: a chat of
    # two turns (the second stopped), one with a tool step and a citation and a reply left
    # streaming by a crash, and an empty one.
    path = tmp_path / "parley.sqlite3"
    path.write_bytes((Path(__file__).parents[2] / "fixtures" / "parley-0004.sqlite3").read_bytes())

    async def scenario() -> None:
        store = Store(path)
        assert await store.open() == 1
        chats = {c["title"]: c for c in await store.list_conversations()}
        assert set(chats) == {"Two turns", "Use the tool", "Empty"}
        assert all(c["params"] == {} for c in chats.values())
        two = await store.get_conversation(chats["Two turns"]["id"])
        assert two is not None and two["leaf_id"] == "a-r2"
        messages = two["messages"]
        assert [m["id"] for m in messages] == ["a-u1", "a-r1", "a-u2", "a-r2"]
        assert [m["parent_id"] for m in messages] == [None, "a-u1", "a-r1", "a-u2"]
        assert all(m["siblings"] == [m["id"]] and m["sibling_index"] == 0 for m in messages)
        assert messages[1]["usage"] == {"completion_tokens": 4}
        tool = await store.get_conversation(chats["Use the tool"]["id"])
        assert tool is not None
        parts = tool["messages"][1]["parts"]
        assert [p["type"] for p in parts] == ["text", "tool", "text", "citation"]
        assert (tool["messages"][3]["status"], tool["messages"][3]["ended_by"]) == (
            "interrupted",
            "crash",
        )
        empty = await store.get_conversation(chats["Empty"]["id"])
        assert empty is not None and empty["messages"] == [] and empty["leaf_id"] is None

        # The stopped reply is continued in place, and the model is given the branch.
        opened = await store.open_turn(
            two["id"],
            TurnStart("continue", target="a-r2"),
            "m",
            user_message_id="unused",
            message_id="a-r2",
        )
        assert opened is not None and opened.earlier is not None
        assert opened.earlier.content == "Granite is intrusive"
        assert [m["role"] for m in branch.of_turn(opened, None).messages] == [
            "system",
            "user",
            "assistant",
            "user",
            "assistant",
        ]
        ending = Ending(
            content="Granite is intrusive rock.",
            status="completed",
            ended_by=None,
            completed_at=9.0,
        )
        await store.finish("a-r2", ending)
        assert [c["id"] for c in await store.search("rock")] == [two["id"]]
        # A new version of the first question starts a second branch.
        await store.open_turn(
            two["id"],
            TurnStart("edit", "What is pumice?", target="a-u1"),
            "m",
            user_message_id="e-u1",
            message_id="e-r1",
        )
        again = await store.get_conversation(two["id"])
        assert again is not None
        assert [m["id"] for m in again["messages"]] == ["e-u1", "e-r1"]
        assert again["messages"][0]["siblings"] == ["a-u1", "e-u1"]
        await store.close()
        assert fts_consistent(path)

    asyncio.run(scenario())
