"""The library's own database, `library.sqlite3` beside the conversations' one.

A second file because the index is derived data: rebuilt from the user's files at will, often
far larger than the history and rewritten as files change. Kept apart, its churn never
touches the conversations' file or its write lock (a reply's checkpoints never wait behind
an indexing transaction), and it can be deleted to start over without any risk to history.
"""

from __future__ import annotations

import sqlite3

from server.storage.migrations import Migration


def _initial(conn: sqlite3.Connection) -> None:
    conn.execute(
        """
        CREATE TABLE folders (
            id TEXT PRIMARY KEY,
            path TEXT NOT NULL UNIQUE,
            added_at REAL NOT NULL
        )
        """
    )
    # One row per file seen: indexed (with its chunks) or skipped (with the reason). Size,
    # mtime and hash tell whether it changed since; a file is written in one transaction
    # with its chunks, so an index cut by a crash holds whole files only.
    conn.execute(
        """
        CREATE TABLE files (
            id INTEGER PRIMARY KEY,
            folder_id TEXT NOT NULL REFERENCES folders(id) ON DELETE CASCADE,
            path TEXT NOT NULL UNIQUE,
            size INTEGER NOT NULL,
            mtime REAL NOT NULL,
            hash TEXT,
            kind TEXT,
            skipped TEXT,
            indexed_at REAL NOT NULL
        )
        """
    )
    conn.execute("CREATE INDEX files_by_folder ON files(folder_id)")
    conn.execute(
        """
        CREATE TABLE chunks (
            id INTEGER PRIMARY KEY,
            file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
            ord INTEGER NOT NULL,
            text TEXT NOT NULL,
            page INTEGER,
            line_start INTEGER,
            line_end INTEGER
        )
        """
    )
    conn.execute("CREATE INDEX chunks_by_file ON chunks(file_id)")
    conn.execute(
        """
        CREATE VIRTUAL TABLE chunks_fts USING fts5(
            text, content='chunks', content_rowid='id',
            tokenize='unicode61 remove_diacritics 2'
        )
        """
    )
    conn.execute(
        """
        CREATE TRIGGER chunks_fts_insert AFTER INSERT ON chunks BEGIN
            INSERT INTO chunks_fts(rowid, text) VALUES (new.id, new.text);
        END
        """
    )
    conn.execute(
        """
        CREATE TRIGGER chunks_fts_delete AFTER DELETE ON chunks BEGIN
            INSERT INTO chunks_fts(chunks_fts, rowid, text) VALUES ('delete', old.id, old.text);
        END
        """
    )


def _identity(conn: sqlite3.Connection) -> None:
    # Which file was read: a file swapped for another with the same size and time
    # is read again. NULL (rows from before, and files that could not be opened) never
    # matches, so such a file is read again at the next scan.
    conn.execute("ALTER TABLE files ADD COLUMN device INTEGER")
    conn.execute("ALTER TABLE files ADD COLUMN inode INTEGER")


LIBRARY_MIGRATIONS: list[Migration] = [("0001_library", _initial), ("0002_identity", _identity)]
