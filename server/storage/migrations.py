"""Schema migrations: an ordered list of named functions.

Each migration runs in the same transaction as the row that records it, so a crash
mid-migration leaves the database exactly as it was before that migration.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable

from server.errors import StorageError
from server.storage.transaction import transaction

# A named step of a schema, applied once, in its own transaction with its bookkeeping row.
Migration = tuple[str, Callable[[sqlite3.Connection], None]]


def _initial_schema(conn: sqlite3.Connection) -> None:
    conn.execute(
        """
        CREATE TABLE conversations (
            id TEXT PRIMARY KEY,
            title TEXT NOT NULL DEFAULT '',
            model TEXT,
            system TEXT,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL
        )
        """
    )
    conn.execute(
        """
        CREATE TABLE messages (
            seq INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
            role TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
            content TEXT NOT NULL DEFAULT '',
            status TEXT NOT NULL
                CHECK (status IN ('streaming', 'completed', 'interrupted', 'error')),
            ended_by TEXT CHECK (ended_by IN ('client_hangup', 'shutdown', 'error', 'crash')),
            error TEXT,
            model TEXT,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            completed_at REAL,
            usage TEXT
        )
        """
    )
    conn.execute("CREATE INDEX messages_by_conversation ON messages(conversation_id, seq)")
    conn.execute("CREATE INDEX messages_streaming ON messages(status) WHERE status = 'streaming'")
    conn.execute("CREATE INDEX conversations_by_updated ON conversations(updated_at DESC)")
    # External-content FTS5 index kept in step by triggers: deleting a message deletes
    # its index entry in the same transaction.
    conn.execute(
        """
        CREATE VIRTUAL TABLE messages_fts USING fts5(
            content, content='messages', content_rowid='seq',
            tokenize='unicode61 remove_diacritics 2'
        )
        """
    )
    conn.execute(
        """
        CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
            INSERT INTO messages_fts(rowid, content) VALUES (new.seq, new.content);
        END
        """
    )
    conn.execute(
        """
        CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
            INSERT INTO messages_fts(messages_fts, rowid, content)
                VALUES ('delete', old.seq, old.content);
        END
        """
    )
    conn.execute(
        """
        CREATE TRIGGER messages_fts_update AFTER UPDATE OF content ON messages BEGIN
            INSERT INTO messages_fts(messages_fts, rowid, content)
                VALUES ('delete', old.seq, old.content);
            INSERT INTO messages_fts(rowid, content) VALUES (new.seq, new.content);
        END
        """
    )


def _index_replies_once_settled(conn: sqlite3.Connection) -> None:
    """Search indexes a reply when it settles, not at every checkpoint (each
    checkpoint re-indexed the whole text, 204 MB of index churn for a 40 MB reply).

    While a reply is `streaming` its index entry is the empty text it was opened with;
    the change of status out of `streaming` (the settle, or crash recovery) indexes its
    final text; later edits of a settled message re-index as before.
    """
    # Rows left streaming by a crash were indexed with their last checkpoint: index them
    # as empty, as every streaming row is from now on.
    _index_streaming_as_empty(conn)
    conn.execute("DROP TRIGGER messages_fts_update")
    conn.execute(
        """
        CREATE TRIGGER messages_fts_update AFTER UPDATE OF content ON messages
        WHEN old.status != 'streaming' BEGIN
            INSERT INTO messages_fts(messages_fts, rowid, content)
                VALUES ('delete', old.seq, old.content);
            INSERT INTO messages_fts(rowid, content) VALUES (new.seq, new.content);
        END
        """
    )
    conn.execute(
        """
        CREATE TRIGGER messages_fts_settle AFTER UPDATE OF status ON messages
        WHEN old.status = 'streaming' AND new.status != 'streaming' BEGIN
            INSERT INTO messages_fts(messages_fts, rowid, content)
                VALUES ('delete', old.seq, '');
            INSERT INTO messages_fts(rowid, content) VALUES (new.seq, new.content);
        END
        """
    )


def _tool_steps(conn: sqlite3.Connection) -> None:
    """Replies keep their tool steps: `messages.parts` holds a reply's text and
    tool steps in order as JSON, NULL for a reply of text alone (its parts are its
    content, so existing rows need nothing). `conversations.tools`: may the model call the
    configured tools in this conversation (on for every existing one)."""
    conn.execute("ALTER TABLE messages ADD COLUMN parts TEXT")
    conn.execute("ALTER TABLE conversations ADD COLUMN tools INTEGER NOT NULL DEFAULT 1")


def _documents_switch(conn: sqlite3.Connection) -> None:
    """`conversations.documents`: put passages of the user's documents into the prompt
    (for models that cannot call tools); off for every existing chat."""
    conn.execute("ALTER TABLE conversations ADD COLUMN documents INTEGER NOT NULL DEFAULT 0")


def _branches(conn: sqlite3.Connection) -> None:
    """Versions of messages: each message follows its `parent_id`, so an edited
    question or a regenerated reply is a sibling; `conversations.leaf_id` ends the selected
    branch. Existing chats are one branch: each message follows the one before it.
    `messages.continued`: how a stopped reply was continued. `conversations.params`: the
    chat's own sampling parameters (JSON)."""
    conn.execute("ALTER TABLE messages ADD COLUMN parent_id TEXT")
    conn.execute(
        "ALTER TABLE messages ADD COLUMN continued TEXT CHECK (continued IN ('prefix', 'fallback'))"
    )
    conn.execute("ALTER TABLE conversations ADD COLUMN leaf_id TEXT")
    conn.execute("ALTER TABLE conversations ADD COLUMN params TEXT")
    conn.execute(
        "UPDATE messages SET parent_id = (SELECT p.id FROM messages p "
        "WHERE p.conversation_id = messages.conversation_id AND p.seq < messages.seq "
        "ORDER BY p.seq DESC LIMIT 1)"
    )
    conn.execute(
        "UPDATE conversations SET leaf_id = (SELECT m.id FROM messages m "
        "WHERE m.conversation_id = conversations.id ORDER BY m.seq DESC LIMIT 1)"
    )
    conn.execute("CREATE INDEX messages_by_parent ON messages(parent_id, seq)")


def _search_prefixes(conn: sqlite3.Connection) -> None:
    """Prefix tables for 2- and 3-character prefixes in the search index: what a
    person types is searched as prefixes, and a short prefix ("th", "w0") otherwise merges
    the entries of thousands of words (860 ms at 100,000 messages). The index is rebuilt
    from the messages; a reply still `streaming` (left by a crash) is indexed as the empty
    text every streaming reply has (0002)."""
    conn.execute("DROP TABLE messages_fts")
    conn.execute(
        """
        CREATE VIRTUAL TABLE messages_fts USING fts5(
            content, content='messages', content_rowid='seq',
            tokenize='unicode61 remove_diacritics 2', prefix='2 3'
        )
        """
    )
    conn.execute("INSERT INTO messages_fts(messages_fts) VALUES ('rebuild')")
    _index_streaming_as_empty(conn)


def _index_streaming_as_empty(conn: sqlite3.Connection) -> None:
    """Replies still `streaming` (left by a crash) get the search entry every streaming
    reply has, the empty text (0002), in place of the text they were indexed with."""
    for seq, content in conn.execute(
        "SELECT seq, content FROM messages WHERE status = 'streaming'"
    ).fetchall():
        conn.execute(
            "INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', ?, ?)",
            (seq, content),
        )
        conn.execute("INSERT INTO messages_fts(rowid, content) VALUES (?, '')", (seq,))


def _finish_reason(conn: sqlite3.Connection) -> None:
    """`messages.finish_reason`: why a completed reply's model stopped (the model's own end:
    `stop`; `length`: cut at the reply's token limit, so it can be continued; `tool_calls`).
    NULL for every reply before it, and for one that did not complete."""
    conn.execute(
        "ALTER TABLE messages ADD COLUMN finish_reason TEXT "
        "CHECK (finish_reason IN ('stop', 'length', 'tool_calls'))"
    )


def _import_staging(conn: sqlite3.Connection) -> None:
    """`conversations.import_id`: an import still being written. Its conversations
    are written in short batches, hidden (listing, search and export-all skip them), and shown
    by one UPDATE when its last batch commits; rows of an import a crash cut are deleted at
    the next start (server/transfer/staging.py). NULL for every chat shown."""
    conn.execute("ALTER TABLE conversations ADD COLUMN import_id TEXT")
    conn.execute(
        "CREATE INDEX conversations_importing ON conversations(import_id) "
        "WHERE import_id IS NOT NULL"
    )


def _index_imports_later(conn: sqlite3.Connection) -> None:
    """`messages.indexed`: whether the row is in the search index. An import writes
    its messages with 0, so the index's work (two thirds of an import's database time) is off
    its path; a background pass indexes them once they are shown, a short batch at a time,
    and sets 1 (server/transfer/indexing.py). Each trigger that keeps the index in step with
    a row acts only on indexed rows: a row not in the index is never deleted from it."""
    conn.execute("ALTER TABLE messages ADD COLUMN indexed INTEGER NOT NULL DEFAULT 1")
    conn.execute("CREATE INDEX messages_unindexed ON messages(seq) WHERE indexed = 0")
    for name in ("insert", "delete", "update", "settle"):
        conn.execute(f"DROP TRIGGER messages_fts_{name}")
    conn.execute(
        """
        CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages WHEN new.indexed BEGIN
            INSERT INTO messages_fts(rowid, content) VALUES (new.seq, new.content);
        END
        """
    )
    conn.execute(
        """
        CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages WHEN old.indexed BEGIN
            INSERT INTO messages_fts(messages_fts, rowid, content)
                VALUES ('delete', old.seq, old.content);
        END
        """
    )
    conn.execute(
        """
        CREATE TRIGGER messages_fts_update AFTER UPDATE OF content ON messages
        WHEN old.status != 'streaming' AND old.indexed BEGIN
            INSERT INTO messages_fts(messages_fts, rowid, content)
                VALUES ('delete', old.seq, old.content);
            INSERT INTO messages_fts(rowid, content) VALUES (new.seq, new.content);
        END
        """
    )
    conn.execute(
        """
        CREATE TRIGGER messages_fts_settle AFTER UPDATE OF status ON messages
        WHEN old.status = 'streaming' AND new.status != 'streaming' AND old.indexed BEGIN
            INSERT INTO messages_fts(messages_fts, rowid, content)
                VALUES ('delete', old.seq, '');
            INSERT INTO messages_fts(rowid, content) VALUES (new.seq, new.content);
        END
        """
    )


def _stop_receipts(conn: sqlite3.Connection) -> None:
    """`messages.ended`: what a stop ended, JSON (server.types.EndedJSON): the model
    calls, tool calls, sub-agents and approval waits under way, and the calls that may have
    acted. NULL for every reply before it, and for one that was not stopped."""
    conn.execute("ALTER TABLE messages ADD COLUMN ended TEXT")


def _summaries(conn: sqlite3.Connection) -> None:
    """`summaries`: what compaction wrote of a branch's earlier messages, which the
    model is given in their place from then on. `through_id`: the last message it covers (on
    every branch through it). Nothing is deleted by it: the messages stay, shown and searched;
    `undone` (the user's undo) puts them back in the model's view."""
    conn.execute(
        """
        CREATE TABLE summaries (
            id TEXT PRIMARY KEY,
            conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
            through_id TEXT NOT NULL,
            content TEXT NOT NULL,
            model TEXT,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            undone INTEGER NOT NULL DEFAULT 0
        )
        """
    )
    conn.execute("CREATE INDEX summaries_by_conversation ON summaries(conversation_id)")


def _tool_servers(conn: sqlite3.Connection) -> None:
    """`conversations.tool_servers`: the MCP servers whose tools a chat offers the
    model, as a JSON list of names; NULL: every server (as before)."""
    conn.execute("ALTER TABLE conversations ADD COLUMN tool_servers TEXT")


def _attachments(conn: sqlite3.Connection) -> None:
    """Files attached to messages. `attachments`: one row per upload, its bytes in
    the data dir's attachments/ under its id; `conversation_id` is set when a message carries
    it (NULL: not sent yet, or its chat was deleted; deleted after a day). `text`: a text
    file's or a PDF's text until it is sent. `messages.attachments`: a user message's files as
    JSON, with the text the model is given, so a branch reads as one row per message."""
    conn.execute(
        """
        CREATE TABLE attachments (
            id TEXT PRIMARY KEY,
            conversation_id TEXT REFERENCES conversations(id) ON DELETE SET NULL,
            name TEXT NOT NULL,
            kind TEXT NOT NULL,
            mime TEXT NOT NULL,
            bytes INTEGER NOT NULL,
            chars INTEGER,
            note TEXT,
            text TEXT,
            created_at REAL NOT NULL
        )
        """
    )
    conn.execute(
        "CREATE INDEX attachments_unsent ON attachments(created_at) WHERE conversation_id IS NULL"
    )
    conn.execute("ALTER TABLE messages ADD COLUMN attachments TEXT")


def _attachments_go_with_their_chat(conn: sqlite3.Connection) -> None:
    """An attachment is its chat's alone: deleting the chat (or an import's staged chats)
    deletes its rows in the same transaction. With `SET NULL` a deleted chat's files looked
    like fresh uploads, readable and sendable from any chat. SQLite cannot change a foreign
    key in place: the table is rebuilt with its rows (no table refers to it). Indexed by chat,
    so the cascade finds a chat's rows without scanning every attachment under the lock."""
    columns = "id, conversation_id, name, kind, mime, bytes, chars, note, text, created_at"
    conn.execute(
        """
        CREATE TABLE attachments_new (
            id TEXT PRIMARY KEY,
            conversation_id TEXT REFERENCES conversations(id) ON DELETE CASCADE,
            name TEXT NOT NULL, kind TEXT NOT NULL, mime TEXT NOT NULL, bytes INTEGER NOT NULL,
            chars INTEGER, note TEXT, text TEXT, created_at REAL NOT NULL
        )
        """
    )
    conn.execute(f"INSERT INTO attachments_new ({columns}) SELECT {columns} FROM attachments")
    conn.execute("DROP TABLE attachments")
    conn.execute("ALTER TABLE attachments_new RENAME TO attachments")
    conn.execute(
        "CREATE INDEX attachments_unsent ON attachments(created_at) WHERE conversation_id IS NULL"
    )
    conn.execute("CREATE INDEX attachments_by_conversation ON attachments(conversation_id)")


def _conversation_origin(conn: sqlite3.Connection) -> None:
    """`conversations.origin`: for an imported chat, the chat it is (the id it had where it
    was exported, or its ChatGPT conversation's), when that is not its own id; NULL
    otherwise. A later import of the same chat finds it by either (server/transfer/sameness.py)."""
    conn.execute("ALTER TABLE conversations ADD COLUMN origin TEXT")
    conn.execute(
        "CREATE INDEX conversations_by_origin ON conversations(origin) WHERE origin IS NOT NULL"
    )


def _imported_messages(conn: sqlite3.Connection) -> None:
    """`messages.imported`: 1 for a message written by an import, not in this Parley (the
    injection guard counts its text as text the user did not write here)."""
    conn.execute("ALTER TABLE messages ADD COLUMN imported INTEGER NOT NULL DEFAULT 0")


def _attachment_resources(conn: sqlite3.Connection) -> None:
    """`attachments.resource`: for a file that is an MCP resource attached, which (JSON
    `{"server", "uri"}`); NULL for an upload. A message keeps it with its files, so the
    injection guard can say where the text came from."""
    conn.execute("ALTER TABLE attachments ADD COLUMN resource TEXT")


def _projects(conn: sqlite3.Connection) -> None:
    """Projects: chats grouped with their own instructions (added to each chat's system
    prompt) and library folders (`folders`: a JSON list of absolute paths; empty: the whole
    library). `conversations.project_id`: the chat's project, NULL outside every project.
    Deleting a project never deletes or orphans a chat by itself: the store moves its chats
    out or deletes them first, in the same transaction (server/storage/projects.py), and the
    foreign key refuses anything else."""
    conn.execute(
        """
        CREATE TABLE projects (
            id TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            instructions TEXT NOT NULL DEFAULT '',
            folders TEXT NOT NULL DEFAULT '[]',
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            import_id TEXT
        )
        """
    )
    conn.execute("ALTER TABLE conversations ADD COLUMN project_id TEXT REFERENCES projects(id)")
    conn.execute(
        "CREATE INDEX conversations_by_project ON conversations(project_id) "
        "WHERE project_id IS NOT NULL"
    )


MIGRATIONS: list[Migration] = [
    ("0001_initial_schema", _initial_schema),
    ("0002_index_replies_once_settled", _index_replies_once_settled),
    ("0003_tool_steps", _tool_steps),
    ("0004_documents_switch", _documents_switch),
    ("0005_branches", _branches),
    ("0006_search_prefixes", _search_prefixes),
    ("0007_finish_reason", _finish_reason),
    ("0008_import_staging", _import_staging),
    ("0009_index_imports_later", _index_imports_later),
    ("0010_stop_receipts", _stop_receipts),
    ("0011_summaries", _summaries),
    ("0012_tool_servers", _tool_servers),
    ("0013_attachments", _attachments),
    ("0014_attachments_go_with_their_chat", _attachments_go_with_their_chat),
    ("0015_conversation_origin", _conversation_origin),
    ("0016_imported_messages", _imported_messages),
    ("0017_attachment_resources", _attachment_resources),
    ("0018_projects", _projects),
]


def applied(conn: sqlite3.Connection) -> set[str]:
    rows = conn.execute("SELECT name FROM schema_migrations").fetchall()
    return {row[0] for row in rows}


def migrate(conn: sqlite3.Connection, steps: list[Migration] | None = None) -> list[str]:
    """Apply every migration not yet recorded (`steps`, else the conversations' own);
    return the names applied."""
    steps = MIGRATIONS if steps is None else steps
    _require_fts5(conn)
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at REAL)"
    )
    done = applied(conn)
    known = {name for name, _ in steps}
    unknown = done - known
    if unknown:
        raise StorageError(
            "the database was written by a newer Parley (unknown migrations: "
            f"{', '.join(sorted(unknown))}); refusing to touch it"
        )
    ran = []
    for name, step in steps:
        if name in done:
            continue
        with transaction(conn):
            step(conn)
            conn.execute(
                "INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)",
                (name, time.time()),
            )
        ran.append(name)
    return ran


def _require_fts5(conn: sqlite3.Connection) -> None:
    try:
        conn.execute("CREATE VIRTUAL TABLE temp._fts5_probe USING fts5(x)")
        conn.execute("DROP TABLE temp._fts5_probe")
    except sqlite3.OperationalError as exc:
        raise StorageError(
            f"this Python's SQLite lacks FTS5 ({exc}); Parley needs it for search"
        ) from exc
