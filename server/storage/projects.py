"""Projects in SQLite: chats grouped with their own instructions and library folders.

A chat belongs to at most one project (`conversations.project_id`, NULL: none). Deleting a
project says what becomes of its chats (`ProjectChats`): by default it is refused while it
holds any, so no chat is ever deleted or moved as a side effect; `move` takes them out of
every project, `delete` deletes them with it, all in one transaction. Functions whose name
has no underscore are run on the database thread or a reader (server/storage/db.py).
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from dataclasses import dataclass

from server.errors import ConflictError, NotFoundError
from server.ids import new_id
from server.storage import attachments
from server.storage.db import Database
from server.storage.readers import Readers
from server.storage.rows import conversation_json
from server.storage.transaction import transaction
from server.types import ConversationJSON
from server.types.projects import ProjectChats, ProjectJSON


@dataclass(frozen=True)
class ProjectContext:
    """What a turn of a project's chat takes from its project: the instructions added to
    its system prompt and the library folders its documents come from (empty: all)."""

    project_id: str
    name: str
    instructions: str
    folders: tuple[str, ...]


@dataclass(frozen=True)
class InProject:
    """A listing or a search limited to one project's chats (`project_id`), or to the chats
    outside every project (None)."""

    project_id: str | None

    def sql(self, table: str = "conversations") -> tuple[str, tuple[str | None]]:
        """The condition on `table` (a conversations row) and its parameter."""
        return f"{table}.project_id IS ?", (self.project_id,)


def system_with(own: str | None, project: ProjectContext | None) -> str | None:
    """A chat's system prompt as the model is given it: its own, then its project's
    instructions as a part of their own, fenced and named, so the model (and a person reading
    the prompt) can tell the two apart. The turn, compaction and the context meter all read
    it from the chat's view (server/storage/turn_rows.py), so they count the same text."""
    if project is None or not project.instructions.strip():
        return own
    block = (
        f'<project_instructions project="{_attribute(project.name)}">\n'
        f"{project.instructions.strip()}\n"
        "</project_instructions>"
    )
    return f"{own}\n\n{block}" if own else block


def _attribute(name: str) -> str:
    """A project's name inside the fence's attribute: no quote or angle bracket can end it."""
    return " ".join(name.replace('"', "'").replace("<", "(").replace(">", ")").split())


def chat_system(conn: sqlite3.Connection, conversation: sqlite3.Row) -> str | None:
    """The system prompt of a chat's next turn (`conversation`: its row)."""
    return system_with(conversation["system"], context_of(conn, conversation["id"]))


class Projects:
    """The projects of one database (the `Store`'s `projects`)."""

    def __init__(self, db: Database, reads: Readers) -> None:
        self._db = db
        self._reads = reads

    async def create(
        self, name: str, instructions: str = "", folders: list[str] | None = None
    ) -> ProjectJSON:
        return await self._db.run(create, name, instructions, folders or [], time.time())

    async def list_all(self) -> list[ProjectJSON]:
        """Every project, by name (case-insensitive), with its count of chats."""
        return await self._reads.run(list_projects)

    async def get(self, project_id: str) -> ProjectJSON | None:
        return await self._reads.run(get, project_id)

    async def update(
        self,
        project_id: str,
        *,
        name: str | None = None,
        instructions: str | None = None,
        folders: list[str] | None = None,
    ) -> ProjectJSON | None:
        """Set the fields given (None: left as they are). None: no such project."""
        return await self._db.run(update, project_id, name, instructions, folders, time.time())

    async def delete(self, project_id: str, chats: ProjectChats = "refuse") -> list[str] | None:
        """Delete the project; its chats as `chats` says (ConflictError: `refuse` while it
        has some). Returns the ids of the conversations deleted with it; None: no such
        project. The deleted chats' attachment files are unlinked once it has committed."""
        done = await self._db.run(delete, project_id, chats)
        if done is None:
            return None
        deleted, files = done
        if files:
            await asyncio.to_thread(
                attachments.remove_files, attachments.folder(self._db.path), files
            )
        return deleted

    async def chats_of(self, project_id: str) -> list[str]:
        """The ids of the project's conversations (shown ones)."""
        return await self._reads.run(chats_of, project_id)

    async def move(self, conversation_id: str, project_id: str | None) -> ConversationJSON | None:
        """Put the chat in the project (None: out of every project). None: no such chat;
        NotFoundError: no such project. Not an activity: the chat's place in the list stays."""
        return await self._db.run(move, conversation_id, project_id)

    async def project_of(self, conversation_id: str) -> str | None:
        """The id of the chat's project; None: outside every project, or no such chat."""
        return await self._reads.run(project_of, conversation_id)

    async def context_of(self, conversation_id: str) -> ProjectContext | None:
        """What the chat's next turn takes from its project; None: it is in none."""
        return await self._reads.run(context_of, conversation_id)

    async def conversations(
        self, project_id: str | None, limit: int | None = None
    ) -> list[ConversationJSON]:
        """The project's chats (None: those outside every project), most recently active
        first; the first `limit` of them (None: all)."""
        return await self._reads.run(conversations, project_id, -1 if limit is None else limit)


# -- functions run on the database thread or a reader -----------------------------------

_SELECT = (
    "SELECT p.*, (SELECT count(*) FROM conversations c "
    "WHERE c.project_id = p.id AND c.import_id IS NULL) AS chats FROM projects p"
)


def project_json(row: sqlite3.Row) -> ProjectJSON:
    return {
        "id": row["id"],
        "name": row["name"],
        "instructions": row["instructions"],
        "folders": folders_of(row["folders"]),
        "chats": row["chats"],
        "created_at": row["created_at"],
        "updated_at": row["updated_at"],
    }


def folders_of(stored: str | None) -> list[str]:
    """The stored JSON list of folders; anything else (a hand-edited row): none."""
    try:
        found = json.loads(stored or "[]")
    except ValueError:
        return []
    if not isinstance(found, list):
        return []
    return [item for item in found if isinstance(item, str)]


def create(
    conn: sqlite3.Connection, name: str, instructions: str, folders: list[str], now: float
) -> ProjectJSON:
    pid = new_id()
    with transaction(conn):
        conn.execute(
            "INSERT INTO projects (id, name, instructions, folders, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (pid, name, instructions, json.dumps(folders, ensure_ascii=False), now, now),
        )
        row = conn.execute(_SELECT + " WHERE p.id = ?", (pid,)).fetchone()
    return project_json(row)


def list_projects(conn: sqlite3.Connection) -> list[ProjectJSON]:
    rows = conn.execute(_SELECT + " WHERE p.import_id IS NULL ORDER BY lower(p.name), p.rowid")
    return [project_json(row) for row in rows]


def get(conn: sqlite3.Connection, pid: str) -> ProjectJSON | None:
    row = conn.execute(_SELECT + " WHERE p.id = ? AND p.import_id IS NULL", (pid,)).fetchone()
    return project_json(row) if row is not None else None


def update(
    conn: sqlite3.Connection,
    pid: str,
    name: str | None,
    instructions: str | None,
    folders: list[str] | None,
    now: float,
) -> ProjectJSON | None:
    with transaction(conn):
        if get(conn, pid) is None:
            return None
        if name is not None:
            conn.execute("UPDATE projects SET name = ? WHERE id = ?", (name, pid))
        if instructions is not None:
            conn.execute("UPDATE projects SET instructions = ? WHERE id = ?", (instructions, pid))
        if folders is not None:
            encoded = json.dumps(folders, ensure_ascii=False)
            conn.execute("UPDATE projects SET folders = ? WHERE id = ?", (encoded, pid))
        conn.execute("UPDATE projects SET updated_at = ? WHERE id = ?", (now, pid))
        return get(conn, pid)


def delete(
    conn: sqlite3.Connection, pid: str, chats: ProjectChats
) -> tuple[list[str], list[str]] | None:
    """(the conversations deleted, their attachments' ids); None: no such project."""
    with transaction(conn):
        if get(conn, pid) is None:
            return None
        held = chats_of(conn, pid)
        deleted: list[str] = []
        files: list[str] = []
        if held and chats == "refuse":
            raise ConflictError(
                f"the project holds {len(held)} chat(s): move them out or delete them with it "
                "('chats': 'move' or 'delete')",
                code="project_not_empty",
            )
        if chats == "delete":
            for cid in held:
                files.extend(attachments.of_conversation(conn, cid))
                # Messages first, so the FTS delete trigger runs for each.
                conn.execute("DELETE FROM messages WHERE conversation_id = ?", (cid,))
                conn.execute("DELETE FROM summaries WHERE conversation_id = ?", (cid,))
                conn.execute("DELETE FROM conversations WHERE id = ?", (cid,))
            deleted = held
        else:
            conn.execute("UPDATE conversations SET project_id = NULL WHERE project_id = ?", (pid,))
        conn.execute("DELETE FROM projects WHERE id = ?", (pid,))
    return deleted, files


def chats_of(conn: sqlite3.Connection, pid: str) -> list[str]:
    query = "SELECT id FROM conversations WHERE project_id = ? AND import_id IS NULL"
    return [row[0] for row in conn.execute(query, (pid,))]


def move(conn: sqlite3.Connection, cid: str, pid: str | None) -> ConversationJSON | None:
    with transaction(conn):
        if pid is not None and get(conn, pid) is None:
            raise NotFoundError(f"no project with id {pid!r}")
        cursor = conn.execute(
            "UPDATE conversations SET project_id = ? WHERE id = ? AND import_id IS NULL",
            (pid, cid),
        )
        if cursor.rowcount == 0:
            return None
        row = conn.execute("SELECT * FROM conversations WHERE id = ?", (cid,)).fetchone()
    return conversation_json(row)


def project_of(conn: sqlite3.Connection, cid: str) -> str | None:
    row = conn.execute("SELECT project_id FROM conversations WHERE id = ?", (cid,)).fetchone()
    return row[0] if row is not None else None


def context_of(conn: sqlite3.Connection, cid: str) -> ProjectContext | None:
    row = conn.execute(
        "SELECT p.id, p.name, p.instructions, p.folders FROM conversations c "
        "JOIN projects p ON p.id = c.project_id WHERE c.id = ?",
        (cid,),
    ).fetchone()
    if row is None:
        return None
    return ProjectContext(
        row["id"], row["name"], row["instructions"], tuple(folders_of(row["folders"]))
    )


def conversations(conn: sqlite3.Connection, pid: str | None, limit: int) -> list[ConversationJSON]:
    rows = conn.execute(
        "SELECT * FROM conversations WHERE import_id IS NULL AND project_id IS ? "
        "ORDER BY updated_at DESC, rowid DESC LIMIT ?",
        (pid, limit),
    )
    return [conversation_json(row) for row in rows]
