"""A conversation as the API serves it: the selected branch, whole or a page of it.

The branch is found from the messages' ids and parents alone (one range of an index, ~0.2 s
at 100,000 messages); only the messages of the page are read whole. A page is the `limit`
messages of the branch before `before` (the newest when it is not given), with `earlier`:
how many of the branch come before the page. Run on a reader (server/storage/readers.py).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

from server.errors import BadRequestError
from server.storage import summaries
from server.storage.rows import conversation_json, message_json
from server.types import ConversationJSON, MessageJSON

BATCH = 500  # ids in one `IN (...)`: well under SQLite's limit on variables


class Skeleton:
    """Every message's parent, and each parent's children in the order written."""

    def __init__(self, conn: sqlite3.Connection, cid: str) -> None:
        cursor = conn.cursor()
        cursor.row_factory = None  # plain tuples: 2.5x faster than sqlite3.Row here
        rows = cursor.execute(
            "SELECT id, parent_id FROM messages WHERE conversation_id = ? ORDER BY seq", (cid,)
        ).fetchall()
        self.parent: dict[str, str | None] = {}
        self.children: dict[str | None, list[str]] = {}
        for mid, parent in rows:
            self.parent[mid] = parent
            self.children.setdefault(parent, []).append(mid)

    def path_to(self, last: str | None) -> list[str]:
        """The ids from the first message down to `last`."""
        path: list[str] = []
        at = last
        while at is not None and at in self.parent and len(path) <= len(self.parent):
            path.append(at)
            at = self.parent[at]
        path.reverse()
        return path

    def newest_leaf(self, mid: str) -> str:
        """The end of the branch through `mid`: down the newest child each time."""
        while self.children.get(mid):
            mid = self.children[mid][-1]
        return mid


def rows_by_id(conn: sqlite3.Connection, ids: list[str]) -> Iterator[sqlite3.Row]:
    """The messages of `ids`, in that order, `BATCH` at a time."""
    for start in range(0, len(ids), BATCH):
        batch = ids[start : start + BATCH]
        marks = ",".join("?" * len(batch))
        found = {
            row["id"]: row
            for row in conn.execute(f"SELECT * FROM messages WHERE id IN ({marks})", batch)
        }
        yield from (found[mid] for mid in batch if mid in found)


def page(
    conn: sqlite3.Connection, cid: str, limit: int | None = None, before: str | None = None
) -> ConversationJSON | None:
    """The conversation with the page of its selected branch; None: no such conversation.
    BadRequestError: `before` is not a message of the branch."""
    row = conn.execute("SELECT * FROM conversations WHERE id = ?", (cid,)).fetchone()
    if row is None:
        return None
    conversation = conversation_json(row)
    skeleton = Skeleton(conn, cid)
    path = skeleton.path_to(row["leaf_id"])
    end = len(path)
    if before is not None:
        try:
            end = path.index(before)
        except ValueError:
            raise BadRequestError(
                f"'before': no message {before!r} in the branch shown", code="invalid_field"
            ) from None
    start = 0 if limit is None else max(0, end - limit)
    messages: list[MessageJSON] = []
    for message_row in rows_by_id(conn, path[start:end]):
        message = message_json(message_row)
        versions = skeleton.children.get(message["parent_id"], [message["id"]])
        message["siblings"] = versions
        message["sibling_index"] = versions.index(message["id"])
        messages.append(message)
    conversation["messages"] = messages
    conversation["earlier"] = start
    conversation["summaries"] = summaries.on_path(conn, cid, path)
    return conversation


def leaf_through(conn: sqlite3.Connection, cid: str, mid: str) -> str | None:
    """The leaf to select to show the branch through `mid`; None: no such message here."""
    skeleton = Skeleton(conn, cid)
    if mid not in skeleton.parent:
        return None
    return skeleton.newest_leaf(mid)


def exists(conn: sqlite3.Connection, cid: str) -> bool:
    found = conn.execute("SELECT 1 FROM conversations WHERE id = ?", (cid,)).fetchone()
    return found is not None
