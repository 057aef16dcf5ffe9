"""Projects in SQLite: the migration, a chat's project, and what deleting one does."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

import pytest

from server.errors import ConflictError, NotFoundError
from server.storage import migrations
from server.storage.db import connect
from server.storage.store import Store

T = TypeVar("T")


def with_store(path: Path, work: Callable[[Store], Awaitable[T]]) -> T:
    async def main() -> T:
        store = Store(path)
        await store.open()
        try:
            return await work(store)
        finally:
            await store.close()

    return asyncio.run(main())


def test_chats_of_an_older_database_are_outside_every_project(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite3"
    before = [step for step in migrations.MIGRATIONS if step[0] != "0018_projects"]
    conn = connect(path, migrations=before)
    conn.execute(
        "INSERT INTO conversations (id, title, created_at, updated_at) VALUES ('old', 't', 1, 1)"
    )
    conn.close()

    async def work(store: Store) -> tuple[str | None, list[object]]:
        listed = await store.projects.list_all()
        return await store.project_of("old"), list(listed)

    assert with_store(path, work) == (None, [])
    conn = sqlite3.connect(path)
    applied = {row[0] for row in conn.execute("SELECT name FROM schema_migrations")}
    conn.close()
    assert "0018_projects" in applied


def test_project_of_names_the_chat_s_project_until_it_moves_out(tmp_path: Path) -> None:
    async def work(store: Store) -> list[str | None]:
        project = await store.projects.create("Garden", "Answer briefly.")
        inside = await store.create_conversation("in", None, None, project["id"])
        outside = await store.create_conversation("out", None, None)
        seen = [await store.project_of(inside["id"]), await store.project_of(outside["id"])]
        await store.projects.move(inside["id"], None)
        await store.projects.move(outside["id"], project["id"])
        seen += [await store.project_of(inside["id"]), await store.project_of(outside["id"])]
        seen.append(await store.project_of("no-such-chat"))
        return [value if value != project["id"] else "project" for value in seen]

    assert with_store(tmp_path / "db.sqlite3", work) == ["project", None, None, "project", None]


def test_a_chat_cannot_be_created_in_or_moved_to_a_missing_project(tmp_path: Path) -> None:
    async def work(store: Store) -> None:
        with pytest.raises(NotFoundError):
            await store.create_conversation("t", None, None, "missing")
        chat = await store.create_conversation("t", None, None)
        with pytest.raises(NotFoundError):
            await store.projects.move(chat["id"], "missing")
        assert await store.project_of(chat["id"]) is None
        assert await store.list_conversations() == [await store.find_conversation(chat["id"])]

    with_store(tmp_path / "db.sqlite3", work)


def test_deleting_a_project_with_chats_is_refused_unless_told_what_to_do(
    tmp_path: Path,
) -> None:
    async def work(store: Store) -> tuple[int, list[str] | None, list[str] | None, bool, bool]:
        kept = await store.projects.create("Kept")
        chat = await store.create_conversation("stays", None, None, kept["id"])
        with pytest.raises(ConflictError) as refused:
            await store.projects.delete(kept["id"])
        assert refused.value.code == "project_not_empty"
        still = (await store.projects.get(kept["id"]) or {"chats": -1})["chats"]
        moved = await store.projects.delete(kept["id"], "move")
        gone = await store.projects.create("Gone")
        doomed = await store.create_conversation("goes", None, None, gone["id"])
        deleted = await store.projects.delete(gone["id"], "delete")
        return (
            still,
            moved,
            ["doomed" if d == doomed["id"] else d for d in deleted or []],
            await store.find_conversation(chat["id"]) is not None,
            await store.find_conversation(doomed["id"]) is None,
        )

    assert with_store(tmp_path / "db.sqlite3", work) == (1, [], ["doomed"], True, True)


def test_an_empty_project_is_deleted_and_a_missing_one_is_none(tmp_path: Path) -> None:
    async def work(store: Store) -> tuple[list[str] | None, list[str] | None, int]:
        empty = await store.projects.create("Empty")
        done = await store.projects.delete(empty["id"])
        again = await store.projects.delete(empty["id"])
        return done, again, len(await store.projects.list_all())

    assert with_store(tmp_path / "db.sqlite3", work) == ([], None, 0)
