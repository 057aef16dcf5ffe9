"""The library's index in SQLite (server/library/schema.py): folders, files, passages, search.

Every write is one transaction; a file is written together with all of its passages, so an
index cut by a crash holds whole files only, and the next scan redoes the rest.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import NamedTuple

from server.db import Database
from server.library.chunking import Chunk
from server.library.schema import LIBRARY_MIGRATIONS
from server.search import fts_query
from server.store import new_id
from server.transaction import transaction
from server.types import FolderJSON, PassageJSON

SKIPPED_SHOWN = 50


class KnownFile(NamedTuple):
    """What the index knows of a file: a tuple of plain values, which the garbage collector
    stops tracking (a scan holds one per file, 10,000s of them)."""

    size: int
    mtime: float
    hash: str | None


class LibraryStore:
    def __init__(self, path: Path, *, busy_timeout: float) -> None:
        self.db = Database(path, busy_timeout=busy_timeout, migrations=LIBRARY_MIGRATIONS)

    async def open(self) -> None:
        await self.db.open()

    async def close(self) -> None:
        await self.db.close()

    async def add_folder(self, path: str) -> FolderJSON | None:
        """None if the folder is in the library already."""
        return await self.db.run(_add_folder, path, time.time())

    async def remove_folder(self, folder_id: str) -> bool:
        return await self.db.run(_remove_folder, folder_id)

    async def folders(self) -> list[FolderJSON]:
        return await self.db.run(_folders)

    async def folder_path(self, folder_id: str) -> str | None:
        return await self.db.run(_folder_path, folder_id)

    async def known_files(self, folder_id: str) -> dict[str, KnownFile]:
        return await self.db.run(_known_files, folder_id)

    async def write_file(
        self,
        folder_id: str,
        path: str,
        known: KnownFile,
        kind: str | None,
        chunks: list[Chunk] | None,
        skipped: str | None,
    ) -> bool:
        """Replace what the index holds of one file (its row and passages) in one go.
        False if its folder was removed meanwhile (nothing written)."""
        return await self.db.run(
            _write_file, folder_id, path, known, kind, chunks, skipped, time.time()
        )

    async def touch_file(self, path: str, mtime: float) -> None:
        """A file whose content did not change (same hash): only its time is new."""
        await self.db.run(_touch_file, path, mtime)

    async def drop_files(self, paths: list[str]) -> None:
        await self.db.run(_drop_files, paths)

    async def search(self, query: str, k: int) -> list[PassageJSON]:
        return await self.db.run(_search, query, k)


def _add_folder(conn: sqlite3.Connection, path: str, now: float) -> FolderJSON | None:
    with transaction(conn):
        if conn.execute("SELECT 1 FROM folders WHERE path = ?", (path,)).fetchone():
            return None
        folder_id = new_id()
        conn.execute(
            "INSERT INTO folders (id, path, added_at) VALUES (?, ?, ?)", (folder_id, path, now)
        )
    return {
        "id": folder_id,
        "path": path,
        "added_at": now,
        "files": 0,
        "chunks": 0,
        "skipped": 0,
        "skipped_files": [],
    }


def _remove_folder(conn: sqlite3.Connection, folder_id: str) -> bool:
    with transaction(conn):
        # Passages first (their search entries go with them), then files, then the folder.
        conn.execute(
            "DELETE FROM chunks WHERE file_id IN (SELECT id FROM files WHERE folder_id = ?)",
            (folder_id,),
        )
        conn.execute("DELETE FROM files WHERE folder_id = ?", (folder_id,))
        return conn.execute("DELETE FROM folders WHERE id = ?", (folder_id,)).rowcount > 0


def _folders(conn: sqlite3.Connection) -> list[FolderJSON]:
    found: list[FolderJSON] = []
    for row in conn.execute("SELECT * FROM folders ORDER BY added_at").fetchall():
        counts = conn.execute(
            "SELECT SUM(skipped IS NULL), SUM(skipped IS NOT NULL) FROM files WHERE folder_id = ?",
            (row["id"],),
        ).fetchone()
        chunks = conn.execute(
            "SELECT COUNT(*) FROM chunks JOIN files ON files.id = chunks.file_id "
            "WHERE files.folder_id = ?",
            (row["id"],),
        ).fetchone()[0]
        skipped = conn.execute(
            "SELECT path, skipped FROM files WHERE folder_id = ? AND skipped IS NOT NULL "
            "ORDER BY path LIMIT ?",
            (row["id"], SKIPPED_SHOWN),
        ).fetchall()
        found.append(
            {
                "id": row["id"],
                "path": row["path"],
                "added_at": row["added_at"],
                "files": counts[0] or 0,
                "chunks": chunks,
                "skipped": counts[1] or 0,
                "skipped_files": [{"path": s["path"], "reason": s["skipped"]} for s in skipped],
            }
        )
    return found


def _folder_path(conn: sqlite3.Connection, folder_id: str) -> str | None:
    row = conn.execute("SELECT path FROM folders WHERE id = ?", (folder_id,)).fetchone()
    return str(row["path"]) if row else None


def _known_files(conn: sqlite3.Connection, folder_id: str) -> dict[str, KnownFile]:
    rows = conn.execute(
        "SELECT path, size, mtime, hash FROM files WHERE folder_id = ?", (folder_id,)
    ).fetchall()
    return {r["path"]: KnownFile(r["size"], r["mtime"], r["hash"]) for r in rows}


def _write_file(
    conn: sqlite3.Connection,
    folder_id: str,
    path: str,
    known: KnownFile,
    kind: str | None,
    chunks: list[Chunk] | None,
    skipped: str | None,
    now: float,
) -> bool:
    with transaction(conn):
        if not conn.execute("SELECT 1 FROM folders WHERE id = ?", (folder_id,)).fetchone():
            return False
        row = conn.execute("SELECT id FROM files WHERE path = ?", (path,)).fetchone()
        if row is not None:
            conn.execute("DELETE FROM chunks WHERE file_id = ?", (row["id"],))
            conn.execute("DELETE FROM files WHERE id = ?", (row["id"],))
        file_id = conn.execute(
            "INSERT INTO files (folder_id, path, size, mtime, hash, kind, skipped, indexed_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (folder_id, path, known.size, known.mtime, known.hash, kind, skipped, now),
        ).lastrowid
        conn.executemany(
            "INSERT INTO chunks (file_id, ord, text, page, line_start, line_end) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            [
                (file_id, index, c.text, c.page, c.line_start, c.line_end)
                for index, c in enumerate(chunks or [])
            ],
        )
    return True


def _touch_file(conn: sqlite3.Connection, path: str, mtime: float) -> None:
    with transaction(conn):
        conn.execute("UPDATE files SET mtime = ? WHERE path = ?", (mtime, path))


def _drop_files(conn: sqlite3.Connection, paths: list[str]) -> None:
    with transaction(conn):
        for path in paths:
            conn.execute(
                "DELETE FROM chunks WHERE file_id IN (SELECT id FROM files WHERE path = ?)",
                (path,),
            )
            conn.execute("DELETE FROM files WHERE path = ?", (path,))


def _search(conn: sqlite3.Connection, text: str, k: int) -> list[PassageJSON]:
    query = fts_query(text, any_word=True)
    if query is None:
        return []
    rows = conn.execute(
        "SELECT chunks.text, chunks.page, chunks.line_start, chunks.line_end, files.path "
        "FROM chunks_fts JOIN chunks ON chunks.id = chunks_fts.rowid "
        "JOIN files ON files.id = chunks.file_id "
        "WHERE chunks_fts MATCH ? ORDER BY bm25(chunks_fts) LIMIT ?",
        (query, k),
    ).fetchall()
    return [
        {
            "path": r["path"],
            "page": r["page"],
            "lines": [r["line_start"], r["line_end"]] if r["line_start"] is not None else None,
            "text": r["text"],
        }
        for r in rows
    ]
