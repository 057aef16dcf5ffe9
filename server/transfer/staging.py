"""An import's rows in the database: staged hidden in short batches, then shown at once.

Every function here runs on the database thread (server/storage/db.py), each call one short
transaction, so a reply's checkpoint queued behind it waits one batch at most. A staged
conversation carries its import's id in `conversations.import_id` (migration 0008): listing,
search and export-all pass over it. `reveal` shows them all in one UPDATE when the last batch
has committed; `discard` deletes them a batch at a time after a failure or a cancel, and at
start for any import a crash or a shutdown cut (`stale_imports`).
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from dataclasses import dataclass
from pathlib import Path

from server.limits import TransferLimits
from server.storage import params as chat_params
from server.storage.transaction import transaction
from server.transfer import attachments
from server.transfer import projects as file_projects
from server.transfer.parley import Conversation, Message

IMPORT_CACHE_KIB = 65_536  # the page cache while an import runs (bench: -16% write time)
MERGE_PAGES = 100  # ~1 ms a step, 35 at most (measured)


@dataclass(frozen=True)
class Piece:
    """Messages `start:stop` of a conversation; the piece with `start == 0` writes the
    conversation's own row first (a conversation may span several batches)."""

    conversation: Conversation
    start: int
    stop: int
    project: file_projects.Project | None = None  # the conversation's (staged with its first piece)

    @property
    def rows(self) -> int:
        return self.stop - self.start + (1 if self.start == 0 else 0)


def stage(conn: sqlite3.Connection, import_id: str, pieces: list[Piece]) -> None:
    """Write one batch of pieces, hidden under `import_id`, in one transaction."""
    with transaction(conn):
        for piece in pieces:
            conversation = piece.conversation
            messages = conversation.messages[piece.start : piece.stop]
            first = piece.start == 0
            if (first and _conversation_taken(conn, conversation.id)) or _messages_taken(
                conn, messages
            ):
                _renumber(conn, conversation, piece.start)
            if first:
                project_id = None
                if piece.project is not None:  # a new project here, made with its first chat
                    project_id = file_projects.insert(conn, piece.project, import_id)
                _insert_conversation(conn, conversation, import_id, project_id)
                attachments.insert_rows(conn, conversation.id, conversation.files)
            _insert_messages(conn, conversation.id, messages)
            if piece.stop == len(conversation.messages):  # every id is final now
                _insert_summaries(conn, conversation)


def reveal(conn: sqlite3.Connection, import_id: str) -> list[str]:
    """Show every conversation of the import, in one transaction; their ids, in file order."""
    with transaction(conn):
        ids = [
            row[0]
            for row in conn.execute(
                "SELECT id FROM conversations WHERE import_id = ? ORDER BY rowid", (import_id,)
            )
        ]
        conn.execute("UPDATE conversations SET import_id = NULL WHERE import_id = ?", (import_id,))
        conn.execute("UPDATE projects SET import_id = NULL WHERE import_id = ?", (import_id,))
    return ids


def stale_imports(conn: sqlite3.Connection) -> list[str]:
    """Imports with rows still hidden (at start: cut by a crash or a shutdown)."""
    query = (
        "SELECT import_id FROM conversations WHERE import_id IS NOT NULL "
        "UNION SELECT import_id FROM projects WHERE import_id IS NOT NULL"
    )
    return [row[0] for row in conn.execute(query)]


def discard(conn: sqlite3.Connection, import_id: str, max_rows: int) -> int:
    """Delete up to `max_rows` staged rows of the import, messages before their
    conversation. Returns how many went: 0 when nothing is left."""
    with transaction(conn):
        # Messages first, so the search index's delete trigger runs for each.
        cursor = conn.execute(
            "DELETE FROM messages WHERE seq IN (SELECT m.seq FROM conversations c "
            "JOIN messages m ON m.conversation_id = c.id WHERE c.import_id = ? LIMIT ?)",
            (import_id, max_rows),
        )
        if cursor.rowcount > 0:
            return cursor.rowcount
        cursor = conn.execute(
            "DELETE FROM conversations WHERE rowid IN (SELECT rowid FROM conversations "
            "WHERE import_id = ? LIMIT ?)",
            (import_id, max_rows),
        )
        if cursor.rowcount > 0:
            return cursor.rowcount
        # Last, once no staged chat refers to them: its projects (a few, at most a thousand).
        return conn.execute("DELETE FROM projects WHERE import_id = ?", (import_id,)).rowcount


def pause_upkeep(conn: sqlite3.Connection) -> int:
    """While an import runs, keep two kinds of upkeep out of its batches (each made a batch
    take up to 430 ms, bench/imports.py): the search index's automatic merging (`merge_index`
    does it instead, a bounded step after each batch) and the WAL's automatic checkpoint
    (the import's thread runs it on a connection of its own, `checkpoint_wal`). And a page
    cache of IMPORT_CACHE_KIB: random ids (uuid4, as Parley and ChatGPT write them) land
    anywhere in the id index, which outgrows the default 2 MB. Returns the cache size before."""
    before = int(conn.execute("PRAGMA cache_size").fetchone()[0])
    conn.execute("INSERT INTO messages_fts(messages_fts, rank) VALUES ('automerge', 0)")
    conn.execute("PRAGMA wal_autocheckpoint=0")
    conn.execute(f"PRAGMA cache_size=-{IMPORT_CACHE_KIB}")
    return before


def resume_upkeep(conn: sqlite3.Connection, cache_size: int | None = None) -> None:
    """SQLite's defaults again: FTS5 merges once 4 segments of a level are there, the WAL is
    checkpointed every 1,000 pages (at the end of an import, and at start after a crash);
    the page cache as it was (`cache_size`, from `pause_upkeep`)."""
    conn.execute("INSERT INTO messages_fts(messages_fts, rank) VALUES ('automerge', 4)")
    conn.execute("PRAGMA wal_autocheckpoint=1000")
    if cache_size is not None:
        conn.execute(f"PRAGMA cache_size={int(cache_size)}")


def checkpoint_wal(path: Path) -> None:
    """Copy the WAL into the database from a connection of the caller's (never the database
    thread's): PASSIVE takes no write lock, so the batches and replies' checkpoints go on."""
    conn = sqlite3.connect(path, timeout=TransferLimits.staging_busy_timeout)
    try:
        conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
    finally:
        conn.close()


def merge_index(conn: sqlite3.Connection) -> None:
    """One bounded step (about MERGE_PAGES pages of work) of merging the search index."""
    conn.execute("INSERT INTO messages_fts(messages_fts, rank) VALUES ('merge', ?)", (MERGE_PAGES,))


def _conversation_taken(conn: sqlite3.Connection, cid: str) -> bool:
    return conn.execute("SELECT 1 FROM conversations WHERE id = ?", (cid,)).fetchone() is not None


def _messages_taken(conn: sqlite3.Connection, messages: list[Message]) -> bool:
    ids = [m.id for m in messages]
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        if conn.execute(f"SELECT 1 FROM messages WHERE id IN ({marks}) LIMIT 1", chunk).fetchone():
            return True
    return False


def _renumber(conn: sqlite3.Connection, conversation: Conversation, start: int) -> None:
    """New ids for the conversation's messages from `start` on (and for the conversation
    itself when `start` is 0: a conversation held in one batch gets all new ids). A piece
    after the first keeps the ids its earlier pieces were written with."""
    later = conversation.messages[start:]
    new = {m.id: uuid.uuid4().hex for m in later}
    if start == 0:
        conversation.id = uuid.uuid4().hex
    for message in later:
        message.id = new[message.id]
        if message.parent_id is not None:
            message.parent_id = new.get(message.parent_id, message.parent_id)
    for summary in conversation.summaries:
        summary.through_id = new.get(summary.through_id, summary.through_id)
        if start == 0:
            summary.id = uuid.uuid4().hex
    if conversation.leaf_id in new:
        conversation.leaf_id = new[conversation.leaf_id]
        if start > 0:  # its row is written already
            conn.execute(
                "UPDATE conversations SET leaf_id = ? WHERE id = ?",
                (conversation.leaf_id, conversation.id),
            )


def _insert_conversation(
    conn: sqlite3.Connection, conversation: Conversation, import_id: str, project_id: str | None
) -> None:
    conn.execute(
        "INSERT INTO conversations (id, title, model, system, tools, documents, params, "
        "leaf_id, created_at, updated_at, import_id, tool_servers, origin, project_id) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            conversation.id,
            conversation.title,
            conversation.model,
            conversation.system,
            conversation.tools,
            conversation.documents,
            chat_params.encode(conversation.params),
            conversation.leaf_id,
            conversation.created_at,
            conversation.updated_at,
            import_id,
            json.dumps(conversation.tool_servers)
            if conversation.tool_servers is not None
            else None,
            # Kept when it is not the chat's own id (a copy, a ChatGPT chat): sameness.py.
            conversation.origin if conversation.origin not in ("", conversation.id) else None,
            project_id,
        ),
    )


def _insert_summaries(conn: sqlite3.Connection, conversation: Conversation) -> None:
    for summary in conversation.summaries:  # an id taken (imported twice): a new one
        if conn.execute("SELECT 1 FROM summaries WHERE id = ?", (summary.id,)).fetchone():
            summary.id = uuid.uuid4().hex
    conn.executemany(
        "INSERT INTO summaries (id, conversation_id, through_id, content, model, created_at, "
        "updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        [
            (s.id, conversation.id, s.through_id, s.content, s.model,
             s.created_at, s.updated_at)
            for s in conversation.summaries
        ],
    )  # fmt: skip


def _insert_messages(conn: sqlite3.Connection, cid: str, messages: list[Message]) -> None:
    conn.executemany(
        "INSERT INTO messages (id, conversation_id, parent_id, role, content, parts, status, "
        "ended_by, error, model, created_at, updated_at, completed_at, usage, continued, "
        "finish_reason, ended, attachments, indexed, imported) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, 1)",
        [
            (
                m.id,
                cid,
                m.parent_id,
                m.role,
                m.content,
                json.dumps(m.parts, ensure_ascii=False) if m.parts is not None else None,
                m.status,
                m.ended_by,
                m.error,
                m.model,
                m.created_at,
                m.completed_at if m.completed_at is not None else m.created_at,
                m.completed_at,
                json.dumps(m.usage) if m.usage is not None else None,
                m.continued,
                m.finish_reason,
                json.dumps(m.ended, ensure_ascii=False) if m.ended is not None else None,
                json.dumps(m.attachments, ensure_ascii=False) if m.attachments else None,
            )
            for m in messages
        ],
    )
