"""Imported messages enter the search index after the import, in the background.

An import writes its messages outside the index (`messages.indexed = 0`, migration 0009):
the index's work was two thirds of an import's database time. An import of up to 20,000
messages indexes them before it answers (server/transfer/jobs.py); for a bigger one, once it
is shown, this pass indexes them a short batch at a time on the database thread (a reply's
checkpoint waits one batch at most), with a bounded step of merging the index after each; a
crash or a shutdown leaves the rest for the next start. Until then a search does not find
them yet; `GET /api/status` says how many are left (`search_backlog`).

A message still `streaming` is indexed as the empty text every streaming reply has (0002),
so the trigger that indexes it when it settles finds that entry.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from pathlib import Path
from typing import cast

from server.limits import TransferLimits
from server.storage.db import Database
from server.storage.transaction import transaction
from server.transfer import staging

log = logging.getLogger(__name__)

INDEX_ROWS = 300  # a batch: ~12-20 ms of the index's work


def index_pending(conn: sqlite3.Connection, max_rows: int) -> int:
    """Index up to `max_rows` shown messages not yet in the index; how many were."""
    with transaction(conn):
        rows = conn.execute(
            "SELECT m.seq, CASE WHEN m.status = 'streaming' THEN '' ELSE m.content END "
            "FROM messages m JOIN conversations c ON c.id = m.conversation_id "
            "WHERE m.indexed = 0 AND c.import_id IS NULL LIMIT ?",
            (max_rows,),
        ).fetchall()
        if not rows:
            return 0
        conn.executemany("INSERT INTO messages_fts(rowid, content) VALUES (?, ?)", rows)
        conn.executemany("UPDATE messages SET indexed = 1 WHERE seq = ?", [(r[0],) for r in rows])
    return len(rows)


def backlog(path: Path) -> int:
    """Shown messages not in the index yet: counted on a connection of the caller's, never
    the database thread's (0.4 s at 1M messages: a reply's checkpoint would wait)."""
    conn = sqlite3.connect(
        f"file:{path}?mode=ro", uri=True, timeout=TransferLimits.index_busy_timeout
    )
    try:
        found: int = conn.execute(
            "SELECT count(*) FROM messages m JOIN conversations c ON c.id = m.conversation_id "
            "WHERE m.indexed = 0 AND c.import_id IS NULL"
        ).fetchone()[0]
        return found
    finally:
        conn.close()


class Indexer:
    """Runs the pass on the calling thread until nothing is left or `stop` is set."""

    def __init__(self, db: Database, stop: threading.Event) -> None:
        self.db = db
        self.stop = stop
        self.left = 0  # for /api/status

    def run(self) -> None:
        try:
            self.left = backlog(self.db.path)
            if not self.left:
                return
            cache = cast(int, self.db.submit(staging.pause_upkeep).result())
            try:
                while not self.stop.is_set():
                    done = cast(int, self.db.submit(index_pending, INDEX_ROWS).result())
                    self.db.submit(staging.merge_index).result()
                    self.left = max(0, self.left - done)
                    if not done:
                        self.left = 0  # (a chat deleted meanwhile is not left to index)
                        break
            finally:
                staging.checkpoint_wal(self.db.path)
                self.db.submit(staging.resume_upkeep, cache).result()
        except Exception:  # closed meanwhile: the next start goes on with it
            log.info("imported messages are not all in the search index yet", exc_info=True)
