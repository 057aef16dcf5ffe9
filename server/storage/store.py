"""Conversations and messages in SQLite: one transaction per logical write."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import sqlite3
import time
from pathlib import Path
from typing import Literal

from server.errors import NotFoundError
from server.ids import new_id
from server.settings import Limits
from server.storage import attachments, projects, search, stored_steps, summaries, turn_rows
from server.storage import pages as chat_pages
from server.storage import params as chat_params
from server.storage.db import Database
from server.storage.projects import Projects
from server.storage.readers import Readers, json_bytes
from server.storage.rows import conversation_json, message_json
from server.storage.transaction import transaction
from server.storage.turn_rows import Ending, OpenedTurn, TurnStart
from server.types import (
    ChatParams,
    ConversationJSON,
    MessageJSON,
    PartJSON,
    SummaryJSON,
)

__all__ = ["Ending", "OpenedTurn", "Store", "TurnStart"]

Switch = Literal["tools", "documents"]


class Store:
    """The user's conversations and messages, in one SQLite file (with an FTS5 index).

    Every write runs on the database thread (server/storage/db.py) as one transaction, every read
    that may be big on a reader of its own (server/storage/readers.py: never in a checkpoint's way),
    and each raises StorageError when SQLite refuses; nothing is ever deleted on an error. A
    turn's rows are written by `open_turn` (both messages, before any generation), by
    `checkpoint` while the reply streams, and by `finish` once, from the run's settle.
    `open` marks replies a crash left `streaming`.
    """

    def __init__(self, path: Path, *, busy_timeout: float = Limits.db_busy_timeout) -> None:
        self.db = Database(path, busy_timeout=busy_timeout)
        self.reads = Readers(path, busy_timeout=busy_timeout)
        self.projects = Projects(self.db, self.reads)

    async def open(self) -> int:
        """Open the database; mark replies left `streaming` by a crash. Returns their count."""
        await self.db.open()
        crashed = await self.db.run(stored_steps.recover_crashed, time.time())
        return crashed

    async def close(self) -> None:
        await asyncio.to_thread(self.reads.close)
        await self.db.close()

    # -- conversations -------------------------------------------------------------------

    async def create_conversation(
        self, title: str, model: str | None, system: str | None, project_id: str | None = None
    ) -> ConversationJSON:
        """A new chat, in the project `project_id` (NotFoundError: no such project)."""
        return await self.db.run(
            _create_conversation, title, model, system, project_id, time.time()
        )

    async def project_of(self, conversation_id: str) -> str | None:
        """The id of the chat's project; None: outside every project, or no such chat."""
        return await self.projects.project_of(conversation_id)

    async def list_conversations(self, limit: int | None = None) -> list[ConversationJSON]:
        """Most recently active first; the first `limit` of them (None: all)."""
        return await self.reads.run(_list_conversations, -1 if limit is None else limit)

    async def search(
        self, query: str, within: projects.InProject | None = None
    ) -> list[ConversationJSON]:
        """Chats that match `query`; `within`: of one project (or of none) only."""
        return await self.reads.run(search.search, query, within)

    async def get_conversation(self, conversation_id: str) -> ConversationJSON | None:
        """The conversation with the messages of its selected branch, in order, each with
        its versions (`siblings`, `sibling_index`)."""
        return await self.reads.run(chat_pages.page, conversation_id)

    async def conversation_bytes(
        self, conversation_id: str, limit: int | None = None, before: str | None = None
    ) -> bytes | None:
        """The conversation with its branch or a page of it (server/storage/pages.py), as the
        JSON the API sends; None: no such conversation. BadRequestError: a bad `before`."""
        return await self.reads.run(_page_bytes, conversation_id, limit, before)

    async def find_conversation(self, conversation_id: str) -> ConversationJSON | None:
        """The conversation's own fields, without its messages (a cheap existence check)."""
        return await self.db.run(_find_conversation, conversation_id)

    async def get_message(self, conversation_id: str, message_id: str) -> MessageJSON | None:
        return await self.reads.run(_get_message, conversation_id, message_id)

    async def rename(self, conversation_id: str, title: str) -> ConversationJSON | None:
        return await self.db.run(_set, conversation_id, "title", title)

    async def set_model(self, conversation_id: str, model: str) -> ConversationJSON | None:
        """The model the conversation's next replies use (not an activity: its place in the
        list stays)."""
        return await self.db.run(_set, conversation_id, "model", model)

    async def set_system(self, conversation_id: str, system: str | None) -> ConversationJSON | None:
        """The system prompt of the conversation's next turns (None: none)."""
        return await self.db.run(_set, conversation_id, "system", system)

    async def params(self, conversation_id: str) -> ChatParams | None:
        """The conversation's own sampling parameters; None: no such conversation."""
        return await self.db.run(_params, conversation_id)

    async def set_params(self, conversation_id: str, params: ChatParams) -> ConversationJSON | None:
        """The sampling parameters of the conversation's next turns (server/storage/params.py)."""
        return await self.db.run(_set, conversation_id, "params", chat_params.encode(params))

    async def select(
        self, conversation_id: str, message_id: str, limit: int | None = None
    ) -> bytes | None:
        """Show the branch through this message (down its newest versions), and give it to
        the model from now on; the conversation as `conversation_bytes` (with `limit`).
        None: no such message in the conversation. The branch is found on a reader; the
        writer only sets the leaf (a 100,000-message chat is never read on its thread)."""
        leaf = await self.reads.run(chat_pages.leaf_through, conversation_id, message_id)
        if leaf is None or not await self.db.run(_set_leaf, conversation_id, leaf):
            return None
        return await self.conversation_bytes(conversation_id, limit)

    async def set_switch(
        self, conversation_id: str, switch: Switch, enabled: bool
    ) -> ConversationJSON | None:
        """A per-chat switch for the next replies: `tools` (the model may call tools) or
        `documents` (passages of the user's documents go into the prompt)."""
        return await self.db.run(_set, conversation_id, switch, enabled)

    async def exists(self, conversation_id: str) -> bool:
        return await self.reads.run(chat_pages.exists, conversation_id)

    # -- summaries (server/storage/summaries.py) -------------------------------------------

    async def view(self, conversation_id: str) -> turn_rows.View | None:
        """The selected branch as the next turn would give it to the model."""
        return await self.reads.run(turn_rows.view, conversation_id)

    async def save_summary(
        self, conversation_id: str, through_id: str, content: str, model: str | None
    ) -> SummaryJSON | None:
        return await self.db.run(
            summaries.save, conversation_id, through_id, content, model, time.time()
        )

    async def edit_summary(
        self, conversation_id: str, summary_id: str, content: str
    ) -> SummaryJSON | None:
        return await self.db.run(summaries.edit, conversation_id, summary_id, content, time.time())

    async def undo_summary(self, conversation_id: str, summary_id: str) -> bool:
        return await self.db.run(summaries.undo, conversation_id, summary_id, time.time())

    async def set_tool_servers(
        self, conversation_id: str, names: list[str] | None
    ) -> ConversationJSON | None:
        """The MCP servers whose tools the chat offers (None: every one)."""
        encoded = json.dumps(names, ensure_ascii=False) if names is not None else None
        return await self.db.run(_set, conversation_id, "tool_servers", encoded)

    async def delete(self, conversation_id: str) -> bool:
        """Delete the chat with its messages, summaries and attachments. The attachments'
        rows go in the chat's transaction; their files once it has committed, on a worker
        thread (never the writer's: another reply's checkpoint does not wait on unlinks)."""
        files = await self.db.run(_delete, conversation_id)
        if files is None:
            return False
        if files:
            folder = attachments.folder(self.db.path)
            await asyncio.to_thread(attachments.remove_files, folder, files)
        return True

    async def has_tool_step(self, conversation_id: str, call_id: str) -> bool:
        """A reply of the conversation has a tool step with this id (in any branch)."""
        return await self.db.run(stored_steps.has_tool_step, conversation_id, call_id)

    # -- turns ---------------------------------------------------------------------------

    async def open_turn(
        self,
        conversation_id: str,
        start: TurnStart,
        model: str,
        *,
        user_message_id: str,
        message_id: str,
    ) -> OpenedTurn | None:
        """Write the turn's rows (server/storage/turn_rows.py) in one transaction, with these
        ids for new rows, and read the branch the model must see. None: no such conversation."""
        return await self.db.run(
            turn_rows.open_turn,
            conversation_id,
            start,
            model,
            user_message_id,
            message_id,
            time.time(),
        )

    def checkpoint(
        self, message_id: str, content: str, parts: list[PartJSON] | str | None = None
    ) -> concurrent.futures.Future[object]:
        """Queue a write of the reply so far; returns at once, with the write's future.
        `parts` may come as their JSON text already (a run's buffer keeps it between
        checkpoints: server/agent/buffer.py), which is stored as given."""
        if isinstance(parts, str) or parts is None:
            encoded = parts
        else:
            encoded = json.dumps(parts, ensure_ascii=False)
        return self.db.submit(turn_rows.checkpoint, message_id, content, encoded, time.time())

    async def finish(self, message_id: str, ending: Ending) -> None:
        """Write a reply's ending. Only the run's settle calls this. Raises StorageError,
        also when the row is no longer `streaming` (deleted meanwhile)."""
        await self.db.run(turn_rows.finish, message_id, ending)


# -- functions run on the database thread ----------------------------------------------


def _create_conversation(
    conn: sqlite3.Connection,
    title: str,
    model: str | None,
    system: str | None,
    project_id: str | None,
    now: float,
) -> ConversationJSON:
    cid = new_id()
    with transaction(conn):
        if project_id is not None and projects.get(conn, project_id) is None:
            raise NotFoundError(f"no project with id {project_id!r}")
        conn.execute(
            "INSERT INTO conversations (id, title, model, system, project_id, created_at, "
            "updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (cid, title, model, system, project_id, now, now),
        )
        row = conn.execute("SELECT * FROM conversations WHERE id = ?", (cid,)).fetchone()
    return conversation_json(row)


def _list_conversations(conn: sqlite3.Connection, limit: int) -> list[ConversationJSON]:
    rows = conn.execute(
        "SELECT * FROM conversations WHERE import_id IS NULL "
        "ORDER BY updated_at DESC, rowid DESC LIMIT ?",
        (limit,),
    )
    return [conversation_json(row) for row in rows]


def _page_bytes(
    conn: sqlite3.Connection, cid: str, limit: int | None, before: str | None
) -> bytes | None:
    found = chat_pages.page(conn, cid, limit, before)
    if found is None:
        return None
    # Encoded a few hundred messages at a time: json.dumps holds the GIL for the whole of
    # one call (1.5 s for 100,000 messages: the event loop and the writer waited as long).
    messages = found.pop("messages", [])
    head = json_bytes(found)
    pieces = [head[:-1], b',"messages":[']
    for start in range(0, len(messages), chat_pages.BATCH):
        batch = messages[start : start + chat_pages.BATCH]
        pieces.append((b"," if start else b"") + json_bytes(batch)[1:-1])
    pieces.append(b"]}")
    return b"".join(pieces)


def _set_leaf(conn: sqlite3.Connection, cid: str, leaf: str) -> bool:
    """Select the branch ending at `leaf` (a message of the conversation: checked here)."""
    with transaction(conn):
        changed = conn.execute(
            "UPDATE conversations SET leaf_id = ? WHERE id = ? AND EXISTS "
            "(SELECT 1 FROM messages WHERE id = ? AND conversation_id = ?)",
            (leaf, cid, leaf, cid),
        )
        return changed.rowcount == 1


def _find_conversation(conn: sqlite3.Connection, cid: str) -> ConversationJSON | None:
    row = conn.execute("SELECT * FROM conversations WHERE id = ?", (cid,)).fetchone()
    return conversation_json(row) if row is not None else None


def _get_message(conn: sqlite3.Connection, cid: str, mid: str) -> MessageJSON | None:
    row = conn.execute(
        "SELECT * FROM messages WHERE id = ? AND conversation_id = ?", (mid, cid)
    ).fetchone()
    if row is None:
        return None
    message = message_json(row)
    versions = [
        version
        for (version,) in conn.execute(
            "SELECT id FROM messages WHERE conversation_id = ? AND parent_id IS ? ORDER BY seq",
            (cid, row["parent_id"]),
        )
    ]
    message["siblings"] = versions
    message["sibling_index"] = versions.index(message["id"])
    return message


def _params(conn: sqlite3.Connection, cid: str) -> ChatParams | None:
    row = conn.execute("SELECT params FROM conversations WHERE id = ?", (cid,)).fetchone()
    return chat_params.decode(row["params"]) if row is not None else None


# A conversation's own fields a PATCH may set (never the caller's text as a column name).
FIELDS = ("title", "model", "system", "params", "tools", "documents", "tool_servers")


def _set(conn: sqlite3.Connection, cid: str, column: str, value: object) -> ConversationJSON | None:
    """Set one of the conversation's own fields. Not an activity: `updated_at` (its place in
    the list) stays, for a rename too."""
    if column not in FIELDS:
        raise ValueError(f"not a conversation field: {column!r}")
    with transaction(conn):
        sql = f"UPDATE conversations SET {column} = ? WHERE id = ?"
        cursor = conn.execute(sql, (value, cid))
        if cursor.rowcount == 0:
            return None
        row = conn.execute("SELECT * FROM conversations WHERE id = ?", (cid,)).fetchone()
    return conversation_json(row)


def _delete(conn: sqlite3.Connection, cid: str) -> list[str] | None:
    """The chat's rows deleted; its attachments' ids (their rows went with it by the
    cascade), for their files. None: no such chat."""
    with transaction(conn):
        files = attachments.of_conversation(conn, cid)
        # Messages first, so the FTS delete trigger runs for each; then the conversation.
        conn.execute("DELETE FROM messages WHERE conversation_id = ?", (cid,))
        conn.execute("DELETE FROM summaries WHERE conversation_id = ?", (cid,))
        cursor = conn.execute("DELETE FROM conversations WHERE id = ?", (cid,))
    return files if cursor.rowcount > 0 else None
