"""Conversations and messages in SQLite: one transaction per logical write."""

from __future__ import annotations

import concurrent.futures
import json
import re
import sqlite3
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from server.db import Database
from server.errors import StorageError
from server.settings import Limits
from server.transaction import transaction
from server.types import (
    ChatMessage,
    ConversationJSON,
    EndedBy,
    FinishReason,
    MessageJSON,
    PartJSON,
    Status,
    ToolCallJSON,
    Usage,
)

AUTO_TITLE_CHARS = 60
Switch = Literal["tools", "documents"]
SEARCH_LIMIT = 200


def new_id() -> str:
    return uuid.uuid4().hex


@dataclass(frozen=True)
class OpenedTurn:
    """What opening a turn wrote, and what the model must see."""

    user_message: MessageJSON
    assistant_message: MessageJSON
    prompt: list[ChatMessage]
    tools: bool  # the conversation lets the model call tools
    documents: bool  # the conversation puts passages of the user's documents in the prompt


@dataclass(frozen=True, kw_only=True)
class Ending:
    """How a reply ended: built once, by the run's settle (server/turns.py), which alone
    writes it (`Store.finish`) and tells it to the reply's followers.

    `parts` are the reply's text and tool steps in order (None: text alone, its content).
    `finish_reason` is set when the reply completed; `tool_calls` when it completed by
    asking the client to run tools (the stateless API). `save_error` says why the final
    write failed, if it did (the row then keeps its last checkpoint, and the next start
    marks it `interrupted`/`crash`); none of these three is a column.
    """

    content: str
    status: Status
    ended_by: EndedBy | None
    completed_at: float
    error: str | None = None
    usage: Usage | None = None
    finish_reason: FinishReason | None = None
    save_error: str | None = None
    parts: list[PartJSON] | None = None
    tool_calls: list[ToolCallJSON] | None = None


class Store:
    """The user's conversations and messages, in one SQLite file (with an FTS5 index).

    Every method runs on the database thread (server/db.py) as one transaction, and raises
    StorageError when SQLite refuses; nothing is ever deleted on an error. A turn's rows are
    written by `open_turn` (both messages, before any generation), by `checkpoint` while the
    reply streams, and by `finish` once, from the run's settle. `open` marks replies a crash
    left `streaming`.
    """

    def __init__(self, path: Path, *, busy_timeout: float = Limits.db_busy_timeout) -> None:
        self.db = Database(path, busy_timeout=busy_timeout)

    async def open(self) -> int:
        """Open the database; mark replies left `streaming` by a crash. Returns their count."""
        await self.db.open()
        return await self.db.run(_recover_crashed, time.time())

    async def close(self) -> None:
        await self.db.close()

    # -- conversations -------------------------------------------------------------------

    async def create_conversation(
        self, title: str, model: str | None, system: str | None
    ) -> ConversationJSON:
        return await self.db.run(_create_conversation, title, model, system, time.time())

    async def list_conversations(self) -> list[ConversationJSON]:
        return await self.db.run(_list_conversations)

    async def search(self, query: str) -> list[ConversationJSON]:
        return await self.db.run(_search, query)

    async def get_conversation(self, conversation_id: str) -> ConversationJSON | None:
        """The conversation with all its messages, in order."""
        return await self.db.run(_get_conversation, conversation_id)

    async def find_conversation(self, conversation_id: str) -> ConversationJSON | None:
        """The conversation's own fields, without its messages (a cheap existence check)."""
        return await self.db.run(_find_conversation, conversation_id)

    async def get_message(self, conversation_id: str, message_id: str) -> MessageJSON | None:
        return await self.db.run(_get_message, conversation_id, message_id)

    async def rename(self, conversation_id: str, title: str) -> ConversationJSON | None:
        return await self.db.run(_rename, conversation_id, title, time.time())

    async def set_model(self, conversation_id: str, model: str) -> ConversationJSON | None:
        """The model the conversation's next replies use (not an activity: its place in the
        list stays)."""
        return await self.db.run(_set_model, conversation_id, model)

    async def set_switch(
        self, conversation_id: str, switch: Switch, enabled: bool
    ) -> ConversationJSON | None:
        """A per-chat switch for the next replies: `tools` (the model may call tools) or
        `documents` (passages of the user's documents go into the prompt)."""
        return await self.db.run(_set_switch, conversation_id, switch, enabled)

    async def delete(self, conversation_id: str) -> bool:
        return await self.db.run(_delete, conversation_id)

    # -- turns ---------------------------------------------------------------------------

    async def open_turn(
        self,
        conversation_id: str,
        content: str,
        model: str,
        *,
        user_message_id: str,
        message_id: str,
    ) -> OpenedTurn | None:
        """Write the user message and a `streaming` reply row, with these ids, in one
        transaction, and read the history the model must see. None: no such conversation."""
        return await self.db.run(
            _open_turn, conversation_id, content, model, user_message_id, message_id, time.time()
        )

    def checkpoint(
        self, message_id: str, content: str, parts: list[PartJSON] | None = None
    ) -> concurrent.futures.Future[object]:
        """Queue a write of the reply so far; returns at once, with the write's future."""
        encoded = json.dumps(parts, ensure_ascii=False) if parts is not None else None
        return self.db.submit(_checkpoint, message_id, content, encoded, time.time())

    async def finish(self, message_id: str, ending: Ending) -> None:
        """Write a reply's ending. Only the run's settle calls this. Raises StorageError,
        also when the row is no longer `streaming` (deleted meanwhile)."""
        await self.db.run(_finish, message_id, ending)


# -- functions run on the database thread ----------------------------------------------


def _conversation(row: sqlite3.Row) -> ConversationJSON:
    return {
        "id": row["id"],
        "title": row["title"],
        "model": row["model"],
        "system": row["system"],
        "tools": bool(row["tools"]),
        "documents": bool(row["documents"]),
        "created_at": row["created_at"],
        "updated_at": row["updated_at"],
    }


def _message(row: sqlite3.Row) -> MessageJSON:
    usage = row["usage"]
    stored = row["parts"]
    parts: list[PartJSON] = (
        json.loads(stored) if stored else [{"type": "text", "text": row["content"]}]
    )
    return {
        "id": row["id"],
        "conversation_id": row["conversation_id"],
        "role": row["role"],
        "content": row["content"],
        "parts": parts,
        "status": row["status"],
        "ended_by": row["ended_by"],
        "error": row["error"],
        "model": row["model"],
        "created_at": row["created_at"],
        "completed_at": row["completed_at"],
        "usage": json.loads(usage) if usage else None,
    }


def _recover_crashed(conn: sqlite3.Connection, now: float) -> int:
    # The last checkpoint time is the honest "completed_at" of a reply cut by a crash.
    with transaction(conn):
        # A tool step still running when the app died was cut by the crash too.
        for message_id, stored, ended in conn.execute(
            "SELECT id, parts, updated_at FROM messages "
            "WHERE status = 'streaming' AND parts IS NOT NULL"
        ).fetchall():
            conn.execute(
                "UPDATE messages SET parts = ? WHERE id = ?",
                (_interrupt_steps(stored, ended), message_id),
            )
        cursor = conn.execute(
            "UPDATE messages SET status = 'interrupted', ended_by = 'crash', "
            "completed_at = updated_at WHERE status = 'streaming'"
        )
    return cursor.rowcount


def _interrupt_steps(stored: str, ended_at: float) -> str:
    """Parts JSON with every `running` tool step marked `interrupted` at `ended_at`."""
    try:
        parts = json.loads(stored)
    except ValueError:
        return stored  # not ours to repair: left as it is
    for part in parts if isinstance(parts, list) else []:
        if (
            isinstance(part, dict)
            and part.get("type") == "tool"
            and part.get("status") == "running"
        ):
            part["status"], part["ended_at"] = "interrupted", ended_at
    return json.dumps(parts, ensure_ascii=False)


def _create_conversation(
    conn: sqlite3.Connection, title: str, model: str | None, system: str | None, now: float
) -> ConversationJSON:
    cid = new_id()
    with transaction(conn):
        conn.execute(
            "INSERT INTO conversations (id, title, model, system, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (cid, title, model, system, now, now),
        )
        row = conn.execute("SELECT * FROM conversations WHERE id = ?", (cid,)).fetchone()
    return _conversation(row)


def _list_conversations(conn: sqlite3.Connection) -> list[ConversationJSON]:
    rows = conn.execute("SELECT * FROM conversations ORDER BY updated_at DESC, rowid DESC")
    return [_conversation(row) for row in rows]


def fts_query(text: str, *, any_word: bool = False) -> str | None:
    """Turn what a person typed into a safe FTS5 query: every word, as a prefix, all required
    (`any_word`: any of them, best matches first by rank — a model's search question).

    FTS5 operators and quotes in the input are treated as plain text, never as syntax.
    """
    words = re.findall(r"\w+", text)
    if not words:
        return None
    joiner = " OR " if any_word else " "
    return joiner.join('"' + word.replace('"', '""') + '"*' for word in words)


def _search(conn: sqlite3.Connection, text: str) -> list[ConversationJSON]:
    found: dict[str, ConversationJSON] = {}
    query = fts_query(text)
    if query is not None:
        rows = conn.execute(
            "SELECT c.*, m.id AS message_id, "
            "snippet(messages_fts, 0, '«', '»', '…', 12) AS snippet "
            "FROM messages_fts "
            "JOIN messages m ON m.seq = messages_fts.rowid "
            "JOIN conversations c ON c.id = m.conversation_id "
            "WHERE messages_fts MATCH ? ORDER BY bm25(messages_fts) LIMIT ?",
            (query, SEARCH_LIMIT),
        )
        for row in rows:
            if row["id"] not in found:
                conv = _conversation(row)
                conv["match"] = {"message_id": row["message_id"], "snippet": row["snippet"]}
                found[row["id"]] = conv
    needle = text.strip().casefold()
    if needle:
        # Titles are few and short: a plain substring test (no LIKE, so % and _ are literal).
        for row in conn.execute("SELECT * FROM conversations ORDER BY updated_at DESC"):
            if row["id"] not in found and needle in row["title"].casefold():
                conv = _conversation(row)
                conv["match"] = {"message_id": None, "snippet": row["title"]}
                found[row["id"]] = conv
    return list(found.values())


def _get_conversation(conn: sqlite3.Connection, cid: str) -> ConversationJSON | None:
    row = conn.execute("SELECT * FROM conversations WHERE id = ?", (cid,)).fetchone()
    if row is None:
        return None
    conv = _conversation(row)
    rows = conn.execute(
        "SELECT * FROM messages WHERE conversation_id = ? ORDER BY seq", (cid,)
    ).fetchall()
    conv["messages"] = [_message(r) for r in rows]
    return conv


def _find_conversation(conn: sqlite3.Connection, cid: str) -> ConversationJSON | None:
    row = conn.execute("SELECT * FROM conversations WHERE id = ?", (cid,)).fetchone()
    return _conversation(row) if row is not None else None


def _get_message(conn: sqlite3.Connection, cid: str, mid: str) -> MessageJSON | None:
    row = conn.execute(
        "SELECT * FROM messages WHERE id = ? AND conversation_id = ?", (mid, cid)
    ).fetchone()
    return _message(row) if row is not None else None


def _rename(conn: sqlite3.Connection, cid: str, title: str, now: float) -> ConversationJSON | None:
    with transaction(conn):
        cursor = conn.execute(
            "UPDATE conversations SET title = ?, updated_at = ? WHERE id = ?", (title, now, cid)
        )
        if cursor.rowcount == 0:
            return None
        row = conn.execute("SELECT * FROM conversations WHERE id = ?", (cid,)).fetchone()
    return _conversation(row)


def _set_model(conn: sqlite3.Connection, cid: str, model: str) -> ConversationJSON | None:
    with transaction(conn):
        cursor = conn.execute("UPDATE conversations SET model = ? WHERE id = ?", (model, cid))
        if cursor.rowcount == 0:
            return None
        row = conn.execute("SELECT * FROM conversations WHERE id = ?", (cid,)).fetchone()
    return _conversation(row)


def _set_switch(
    conn: sqlite3.Connection, cid: str, switch: Switch, enabled: bool
) -> ConversationJSON | None:
    column = {"tools": "tools", "documents": "documents"}[switch]  # never the caller's text
    with transaction(conn):
        cursor = conn.execute(f"UPDATE conversations SET {column} = ? WHERE id = ?", (enabled, cid))
        if cursor.rowcount == 0:
            return None
        row = conn.execute("SELECT * FROM conversations WHERE id = ?", (cid,)).fetchone()
    return _conversation(row)


def _delete(conn: sqlite3.Connection, cid: str) -> bool:
    with transaction(conn):
        # Messages first, so the FTS delete trigger runs for each; then the conversation.
        conn.execute("DELETE FROM messages WHERE conversation_id = ?", (cid,))
        cursor = conn.execute("DELETE FROM conversations WHERE id = ?", (cid,))
    return cursor.rowcount > 0


def _open_turn(
    conn: sqlite3.Connection,
    cid: str,
    content: str,
    model: str,
    user_id: str,
    assistant_id: str,
    now: float,
) -> OpenedTurn | None:
    with transaction(conn):
        row = conn.execute("SELECT * FROM conversations WHERE id = ?", (cid,)).fetchone()
        if row is None:
            return None
        history = conn.execute(
            "SELECT role, content FROM messages WHERE conversation_id = ? ORDER BY seq", (cid,)
        ).fetchall()
        conn.execute(
            "INSERT INTO messages (id, conversation_id, role, content, status, created_at, "
            "updated_at, completed_at) VALUES (?, ?, 'user', ?, 'completed', ?, ?, ?)",
            (user_id, cid, content, now, now, now),
        )
        conn.execute(
            "INSERT INTO messages (id, conversation_id, role, content, status, model, "
            "created_at, updated_at) VALUES (?, ?, 'assistant', '', 'streaming', ?, ?, ?)",
            (assistant_id, cid, model, now, now),
        )
        title = row["title"] or _auto_title(content)
        conn.execute(
            "UPDATE conversations SET title = ?, updated_at = ? WHERE id = ?", (title, now, cid)
        )
        user_row = conn.execute("SELECT * FROM messages WHERE id = ?", (user_id,)).fetchone()
        asst_row = conn.execute("SELECT * FROM messages WHERE id = ?", (assistant_id,)).fetchone()
    prompt: list[ChatMessage] = []
    if row["system"]:
        prompt.append({"role": "system", "content": row["system"]})
    # A reply that ended with nothing (an error before the first token) is left out.
    prompt.extend({"role": h["role"], "content": h["content"]} for h in history if h["content"])
    prompt.append({"role": "user", "content": content})
    return OpenedTurn(
        _message(user_row), _message(asst_row), prompt, bool(row["tools"]), bool(row["documents"])
    )


def _auto_title(content: str) -> str:
    first_line = content.strip().splitlines()[0] if content.strip() else ""
    if len(first_line) <= AUTO_TITLE_CHARS:
        return first_line
    return first_line[: AUTO_TITLE_CHARS - 1].rstrip() + "…"


def _checkpoint(
    conn: sqlite3.Connection, message_id: str, content: str, parts: str | None, now: float
) -> None:
    with transaction(conn):
        # Only a reply still streaming is checkpointed: a late checkpoint never
        # overwrites what the settle wrote.
        conn.execute(
            "UPDATE messages SET content = ?, parts = ?, updated_at = ? "
            "WHERE id = ? AND status = 'streaming'",
            (content, parts, now, message_id),
        )


def _finish(conn: sqlite3.Connection, message_id: str, ending: Ending) -> None:
    usage = json.dumps(ending.usage) if ending.usage is not None else None
    parts = json.dumps(ending.parts, ensure_ascii=False) if ending.parts is not None else None
    with transaction(conn):
        cursor = conn.execute(
            "UPDATE messages SET content = ?, parts = ?, status = ?, ended_by = ?, error = ?, "
            "usage = ?, completed_at = ?, updated_at = ? WHERE id = ? AND status = 'streaming'",
            (
                ending.content,
                parts,
                ending.status,
                ending.ended_by,
                ending.error,
                usage,
                ending.completed_at,
                ending.completed_at,
                message_id,
            ),
        )
    if cursor.rowcount != 1:
        raise StorageError(
            "the reply was no longer marked as streaming in the database "
            "(deleted, or settled by someone else); its text was not saved"
        )
