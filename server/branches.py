"""A conversation's messages as a tree, and the one branch of it the user sees and the model
is given.

Every message has a `parent_id`: the message it follows (None for the first). Editing a
question adds a sibling of the user message; regenerating a reply adds a sibling of the reply.
The conversation's `leaf_id` is the last message of its selected branch: the branch is the
path from the first message down to it. Siblings are ordered by when they were written.

These functions run on the database thread (server/db.py), inside the caller's transaction
when they write.
"""

from __future__ import annotations

import sqlite3

from server.types import ChatMessage

# The path from a message up to the first one, read in one statement (messages.id is unique,
# so each step is an index lookup). Returned first message first.
_BRANCH = """
WITH RECURSIVE branch(id, depth) AS (
    SELECT ?, 0
    UNION ALL
    SELECT m.parent_id, b.depth + 1 FROM branch b JOIN messages m ON m.id = b.id
    WHERE m.parent_id IS NOT NULL
)
SELECT m.* FROM branch b JOIN messages m ON m.id = b.id
WHERE m.conversation_id = ? ORDER BY b.depth DESC
"""


def branch(conn: sqlite3.Connection, cid: str, last: str | None) -> list[sqlite3.Row]:
    """The messages from the first down to `last` (none for None)."""
    if last is None:
        return []
    return conn.execute(_BRANCH, (last, cid)).fetchall()


def siblings(conn: sqlite3.Connection, cid: str) -> dict[str | None, list[str]]:
    """Each parent's children (message ids, in the order written); None: the first ones."""
    children: dict[str | None, list[str]] = {}
    for message_id, parent_id in conn.execute(
        "SELECT id, parent_id FROM messages WHERE conversation_id = ? ORDER BY seq", (cid,)
    ):
        children.setdefault(parent_id, []).append(message_id)
    return children


def latest_leaf(conn: sqlite3.Connection, message_id: str) -> str:
    """The end of the branch through `message_id`: from it, down the newest child each time."""
    leaf = message_id
    while True:
        row = conn.execute(
            "SELECT id FROM messages WHERE parent_id = ? ORDER BY seq DESC LIMIT 1", (leaf,)
        ).fetchone()
        if row is None:
            return leaf
        leaf = row[0]


def has_children(conn: sqlite3.Connection, message_id: str) -> bool:
    found = conn.execute("SELECT 1 FROM messages WHERE parent_id = ? LIMIT 1", (message_id,))
    return found.fetchone() is not None


def history(system: str | None, rows: list[sqlite3.Row]) -> list[ChatMessage]:
    """What the model sees of a branch: the system prompt, then each message's text. A reply
    that ended with nothing (an error before the first token) is left out."""
    prompt: list[ChatMessage] = []
    if system:
        prompt.append({"role": "system", "content": system})
    prompt.extend({"role": r["role"], "content": r["content"]} for r in rows if r["content"])
    return prompt
