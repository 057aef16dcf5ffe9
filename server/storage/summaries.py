"""Summaries of a branch's earlier messages (table `summaries`, migration 0011).

Compaction writes one when the next turn would not fit the model's context; from then on the
model is given it in place of the messages it covers. The messages themselves are never
touched: they stay in the chat, shown, searched and exported. A summary is on every branch that
goes through its `through_id`; the latest one on a branch is the one in force. The user may
edit one (`model` becomes None) or undo it (the messages are back in the model's view).
"""

from __future__ import annotations

import sqlite3

from server.ids import new_id
from server.storage.transaction import transaction
from server.types import SummaryJSON


def summary_json(row: sqlite3.Row) -> SummaryJSON:
    return {
        "id": row["id"],
        "through_id": row["through_id"],
        "content": row["content"],
        "model": row["model"],
        "created_at": row["created_at"],
        "updated_at": row["updated_at"],
    }


def on_path(conn: sqlite3.Connection, cid: str, path: list[str]) -> list[SummaryJSON]:
    """The summaries in force on a branch (`path`: its message ids, oldest first), in the
    order of the messages they end at."""
    place = {mid: index for index, mid in enumerate(path)}
    rows = conn.execute(
        "SELECT * FROM summaries WHERE conversation_id = ? AND undone = 0 ORDER BY created_at",
        (cid,),
    ).fetchall()
    found = [summary_json(row) for row in rows if row["through_id"] in place]
    return sorted(found, key=lambda s: (place[s["through_id"]], s["created_at"]))


def latest_on(conn: sqlite3.Connection, cid: str, path: list[str]) -> SummaryJSON | None:
    """The summary the model is given for this branch: the one that covers the most."""
    found = on_path(conn, cid, path)
    return found[-1] if found else None


def save(
    conn: sqlite3.Connection,
    cid: str,
    through_id: str,
    content: str,
    model: str | None,
    now: float,
) -> SummaryJSON | None:
    """Write a summary of the branch through `through_id`; None: that message is gone (the
    chat was deleted meanwhile)."""
    with transaction(conn):
        found = conn.execute(
            "SELECT 1 FROM messages WHERE id = ? AND conversation_id = ?", (through_id, cid)
        ).fetchone()
        if found is None:
            return None
        sid = new_id()
        conn.execute(
            "INSERT INTO summaries (id, conversation_id, through_id, content, model, "
            "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (sid, cid, through_id, content, model, now, now),
        )
        row = conn.execute("SELECT * FROM summaries WHERE id = ?", (sid,)).fetchone()
    return summary_json(row)


def edit(
    conn: sqlite3.Connection, cid: str, sid: str, content: str, now: float
) -> SummaryJSON | None:
    """The user's own words for a summary; None: no such summary (or undone)."""
    with transaction(conn):
        cursor = conn.execute(
            "UPDATE summaries SET content = ?, model = NULL, updated_at = ? "
            "WHERE id = ? AND conversation_id = ? AND undone = 0",
            (content, now, sid, cid),
        )
        row = conn.execute("SELECT * FROM summaries WHERE id = ?", (sid,)).fetchone()
    return summary_json(row) if cursor.rowcount == 1 else None


def undo(conn: sqlite3.Connection, cid: str, sid: str, now: float) -> bool:
    """The summary is no longer given to the model (it is kept, marked undone)."""
    with transaction(conn):
        cursor = conn.execute(
            "UPDATE summaries SET undone = 1, updated_at = ? "
            "WHERE id = ? AND conversation_id = ? AND undone = 0",
            (now, sid, cid),
        )
    return cursor.rowcount == 1
