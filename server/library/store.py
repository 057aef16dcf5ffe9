"""The library's index in SQLite (server/library/schema.py): folders, files, passages, search.

Every write is one transaction; a file is written together with all of its passages, so an
index cut by a crash holds whole files only, and the next scan redoes the rest.
"""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path
from typing import NamedTuple

from server.ids import new_id
from server.library.chunking import Chunk
from server.library.reading import Identity, under
from server.library.schema import LIBRARY_MIGRATIONS
from server.limits import LibraryLimits
from server.storage.db import Database
from server.storage.search import fts_query
from server.storage.transaction import transaction
from server.types.library import FolderJSON, PassageJSON


class KnownFile(NamedTuple):
    """What the index knows of a file: a tuple of plain values, which the garbage collector
    stops tracking (a scan holds one per file, 10,000s of them). `device` and `inode` are
    None where no file was opened (it could not be, or the row is older than them)."""

    size: int
    mtime: float
    hash: str | None
    device: int | None = None
    inode: int | None = None

    @classmethod
    def read(cls, identity: Identity, digest: str | None) -> KnownFile:
        return cls(identity.size, identity.mtime, digest, identity.device, identity.inode)

    def same(self, identity: Identity) -> bool:
        """Whether the walk found the very file that was read, unchanged."""
        return (self.size, self.mtime, self.device, self.inode) == (
            identity.size,
            identity.mtime,
            identity.device,
            identity.inode,
        )


class Known(NamedTuple):
    """The files the index holds below a folder, and the folders of the library nested in it
    (their files are theirs to drop: a scan of the outer folder may not see them)."""

    files: dict[str, KnownFile]
    nested: list[str]


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

    async def remove_folder(self, folder_id: str) -> list[str] | None:
        """None if there is no such folder; else the ids of the folders that hold it (their
        scan decides what of its files they keep: a file stays indexed while any folder of the
        library contains it)."""
        return await self.db.run(_remove_folder, folder_id)

    async def folders(self) -> list[FolderJSON]:
        return await self.db.run(_folders)

    async def folder_path(self, folder_id: str) -> str | None:
        return await self.db.run(_folder_path, folder_id)

    async def known_files(self, folder_id: str) -> Known:
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

    async def touch_file(self, path: str, known: KnownFile) -> None:
        """A file whose content did not change (same hash): only its time (or inode) is new."""
        await self.db.run(_touch_file, path, known)

    async def drop_files(self, paths: list[str]) -> None:
        await self.db.run(_drop_files, paths)

    async def search(self, query: str, k: int, folders: tuple[str, ...] = ()) -> list[PassageJSON]:
        """The `k` passages that best match `query`; with `folders`, only passages of files
        below one of them (a project's folders), else of the whole index."""
        return await self.db.run(_search, query, k, folders)

    async def has(self, path: str) -> bool:
        """Whether the index holds passages of the file `path` (what a citation points at)."""
        return await self.db.run(_has, path)


def _has(conn: sqlite3.Connection, path: str) -> bool:
    row = conn.execute(
        "SELECT 1 FROM files JOIN chunks ON chunks.file_id = files.id WHERE files.path = ? LIMIT 1",
        (path,),
    ).fetchone()
    return row is not None


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


def _remove_folder(conn: sqlite3.Connection, folder_id: str) -> list[str] | None:
    with transaction(conn):
        root = _folder_path(conn, folder_id)
        if root is None:
            return None
        others = [
            (r["path"], r["id"])
            for r in conn.execute("SELECT id, path FROM folders WHERE id != ?", (folder_id,))
        ]
        rows = conn.execute(
            "SELECT id, path FROM files WHERE folder_id = ? OR (path >= ? AND path < ?)",
            (folder_id, *_span(root)),
        ).fetchall()
        for row in rows:
            holders = sorted((path, other) for path, other in others if under(row["path"], path))
            if holders:  # kept, by the innermost folder that holds it
                conn.execute(
                    "UPDATE files SET folder_id = ? WHERE id = ? AND folder_id = ?",
                    (holders[-1][1], row["id"], folder_id),
                )
            else:  # passages first (their search entries go with them), then the file
                conn.execute("DELETE FROM chunks WHERE file_id = ?", (row["id"],))
                conn.execute("DELETE FROM files WHERE id = ?", (row["id"],))
        # Last: a file's row goes with its folder's (ON DELETE CASCADE).
        conn.execute("DELETE FROM folders WHERE id = ?", (folder_id,))
    return [other for path, other in others if under(root, path)]


def _span(root: str) -> tuple[str, str]:
    """The range of paths below `root`, for an indexed range query: every path that starts
    with `root/` sorts at or after `root/` and before `root0` ('0' follows '/')."""
    base = root.rstrip("/\\")
    return base + os.sep, base + chr(ord(os.sep) + 1)


def _folders(conn: sqlite3.Connection) -> list[FolderJSON]:
    """Each folder with the files below it (a nested folder's files count in both)."""
    found: list[FolderJSON] = []
    for row in conn.execute("SELECT * FROM folders ORDER BY added_at").fetchall():
        span = _span(row["path"])
        counts = conn.execute(
            "SELECT SUM(skipped IS NULL), SUM(skipped IS NOT NULL) FROM files "
            "WHERE path >= ? AND path < ?",
            span,
        ).fetchone()
        chunks = conn.execute(
            "SELECT COUNT(*) FROM chunks JOIN files ON files.id = chunks.file_id "
            "WHERE files.path >= ? AND files.path < ?",
            span,
        ).fetchone()[0]
        skipped = conn.execute(
            "SELECT path, skipped FROM files WHERE path >= ? AND path < ? "
            "AND skipped IS NOT NULL ORDER BY path LIMIT ?",
            (*span, LibraryLimits.skipped_shown),
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


def _known_files(conn: sqlite3.Connection, folder_id: str) -> Known:
    root = _folder_path(conn, folder_id)
    if root is None:
        return Known({}, [])
    rows = conn.execute(
        "SELECT path, size, mtime, hash, device, inode FROM files WHERE path >= ? AND path < ?",
        _span(root),
    ).fetchall()
    files = {
        r["path"]: KnownFile(r["size"], r["mtime"], r["hash"], r["device"], r["inode"])
        for r in rows
    }
    nested = [
        r["path"]
        for r in conn.execute("SELECT path FROM folders WHERE id != ?", (folder_id,))
        if r["path"] != root and under(r["path"], root)
    ]
    return Known(files, nested)


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
            "INSERT INTO files (folder_id, path, size, mtime, hash, device, inode, kind, "
            "skipped, indexed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                folder_id,
                path,
                known.size,
                known.mtime,
                known.hash,
                known.device,
                known.inode,
                kind,
                skipped,
                now,
            ),
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


def _touch_file(conn: sqlite3.Connection, path: str, known: KnownFile) -> None:
    with transaction(conn):
        conn.execute(
            "UPDATE files SET size = ?, mtime = ?, device = ?, inode = ? WHERE path = ?",
            (known.size, known.mtime, known.device, known.inode, path),
        )


def _drop_files(conn: sqlite3.Connection, paths: list[str]) -> None:
    with transaction(conn):
        for path in paths:
            conn.execute(
                "DELETE FROM chunks WHERE file_id IN (SELECT id FROM files WHERE path = ?)",
                (path,),
            )
            conn.execute("DELETE FROM files WHERE path = ?", (path,))


def _search(
    conn: sqlite3.Connection, text: str, k: int, folders: tuple[str, ...]
) -> list[PassageJSON]:
    query = fts_query(text, any_word=True)
    if query is None:
        return []
    # Below the folders given: each one's span of paths (the files' path index answers it).
    spans = [_span(folder) for folder in folders]
    within = " OR ".join("(files.path >= ? AND files.path < ?)" for _ in spans)
    rows = conn.execute(
        "SELECT chunks.text, chunks.page, chunks.line_start, chunks.line_end, files.path "
        "FROM chunks_fts JOIN chunks ON chunks.id = chunks_fts.rowid "
        "JOIN files ON files.id = chunks.file_id "
        f"WHERE chunks_fts MATCH ? {'AND (' + within + ')' if spans else ''} "
        "ORDER BY bm25(chunks_fts) LIMIT ?",
        (query, *(bound for span in spans for bound in span), k),
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
