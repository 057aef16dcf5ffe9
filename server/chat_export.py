"""Conversations out of Parley: lossless JSON (every branch, part, status, ending, usage and
time), and Markdown of the selected branch for people to read.

The JSON is what `POST /api/import` reads back (server/chat_import.py): exporting and then
importing into an empty database gives the same export again. Functions run on the database
thread (server/db.py).
"""

from __future__ import annotations

import json
import sqlite3
import time
from typing import Any

from server import branches
from server.rows import conversation_json, message_json
from server.types import MessageJSON

FORMAT = "parley"
VERSION = 1


def header(now: float | None = None) -> dict[str, Any]:
    return {"format": FORMAT, "version": VERSION, "exported_at": now or time.time()}


def exported(conn: sqlite3.Connection, cid: str) -> dict[str, Any] | None:
    """One conversation with all its messages (every branch, in the order written)."""
    row = conn.execute("SELECT * FROM conversations WHERE id = ?", (cid,)).fetchone()
    if row is None:
        return None
    conversation: dict[str, Any] = dict(conversation_json(row))
    rows = conn.execute(
        "SELECT * FROM messages WHERE conversation_id = ? ORDER BY seq", (cid,)
    ).fetchall()
    conversation["messages"] = [_message(message_json(r)) for r in rows]
    return conversation


def _message(message: MessageJSON) -> dict[str, Any]:
    out: dict[str, Any] = dict(message)
    del out["conversation_id"]  # the conversation it is in
    return out


def conversation_ids(conn: sqlite3.Connection) -> list[str]:
    return [
        r[0]
        for r in conn.execute(
            "SELECT id FROM conversations WHERE import_id IS NULL ORDER BY created_at, rowid"
        )
    ]


def export_json(conversations: list[dict[str, Any]]) -> str:
    return json.dumps({**header(), "conversations": conversations}, ensure_ascii=False)


def markdown(conn: sqlite3.Connection, cid: str) -> str | None:
    """The selected branch as Markdown: who said what, the model, how each reply ended,
    its tool steps and the sources it cited."""
    row = conn.execute("SELECT * FROM conversations WHERE id = ?", (cid,)).fetchone()
    if row is None:
        return None
    conversation = conversation_json(row)
    lines = [f"# {conversation['title'] or 'Untitled chat'}", ""]
    if conversation["system"]:
        lines += ["> System prompt: " + conversation["system"].replace("\n", "\n> "), ""]
    for message_row in branches.branch(conn, cid, row["leaf_id"]):
        lines += _markdown_message(message_json(message_row))
    return "\n".join(lines).rstrip() + "\n"


def _markdown_message(message: MessageJSON) -> list[str]:
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(message["created_at"]))
    if message["role"] == "user":
        return [f"## You · {when}", "", message["content"], ""]
    about = [message["model"] or "assistant", when]
    if message["status"] != "completed":
        about.append(_ending(message))
    lines = [f"## Assistant · {' · '.join(about)}", ""]
    citations = []
    for part in message["parts"]:
        if part["type"] == "text":
            lines += [part["text"], ""]
        elif part["type"] == "tool":
            lines += [f"*Tool {part['name']}: {part['status']}*", ""]
        else:
            citations.append(part)
    if citations:
        lines.append("Sources:")
        for cited in citations:
            place = f", page {cited['page']}" if cited["page"] is not None else ""
            if cited["lines"] is not None:
                place = f", lines {cited['lines'][0]}–{cited['lines'][1]}"
            lines.append(f"- [{cited['n']}] {cited['path']}{place}")
        lines.append("")
    return lines


def _ending(message: MessageJSON) -> str:
    if message["status"] == "error":
        return f"error: {message['error']}"
    reasons = {
        "client_hangup": "stopped",
        "shutdown": "interrupted when Parley closed",
        "crash": "interrupted by a crash",
    }
    return reasons.get(message["ended_by"] or "", message["status"])
