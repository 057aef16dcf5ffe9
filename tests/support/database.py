"""Reading and contending the server's SQLite file from outside, as another program would."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any


@contextlib.contextmanager
def write_lock_held(db_path: Path) -> Iterator[None]:
    """Another connection holds SQLite's write lock inside the block (a contended database).

    Readers still read (WAL); the server's writes wait (its busy timeout) until the block ends.
    """
    conn = sqlite3.connect(db_path, isolation_level=None)
    try:
        conn.execute("BEGIN IMMEDIATE")
        yield
    finally:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        conn.close()


def stored_status(db_path: Path, message_id: str) -> tuple[str, str]:
    """(status, content) of a message as it is on disk right now."""
    conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    try:
        row = conn.execute(
            "SELECT status, content FROM messages WHERE id = ?", (message_id,)
        ).fetchone()
    finally:
        conn.close()
    return str(row[0]), str(row[1])


def stored_parts(db_path: Path, message_id: str) -> list[dict[str, Any]]:
    """A reply's parts (its text and tool steps) as the last checkpoint wrote them; [] for a
    reply of text alone or one not yet written (the file may not exist yet either)."""
    if not db_path.exists():
        return []
    conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    try:
        row = conn.execute("SELECT parts FROM messages WHERE id = ?", (message_id,)).fetchone()
    finally:
        conn.close()
    parts: list[dict[str, Any]] = json.loads(row[0]) if row and row[0] else []
    return parts
