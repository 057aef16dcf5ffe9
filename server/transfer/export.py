"""Conversations out of Parley: lossless JSON (every branch, part, status, ending, usage and
time), and Markdown of the selected branch for people to read.

The JSON is what `POST /api/import` reads back (server/transfer/parley.py): exporting and then
importing into an empty database gives the same export again. Both are written a piece at a
time (a few hundred messages), so a 100,000-message chat is never held whole, nor encoded on
the event loop: the functions run on a reader (server/storage/readers.py), in one snapshot.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator
from typing import Any

from server.storage.pages import BATCH, Skeleton, exists, rows_by_id
from server.storage.projects import folders_of
from server.storage.rows import conversation_json, message_json
from server.storage.summaries import on_path, summary_json
from server.transfer import attachments
from server.types import MessageJSON, SummaryJSON

FORMAT = "parley"
VERSION = 1


def header(now: float | None = None) -> dict[str, Any]:
    return {"format": FORMAT, "version": VERSION, "exported_at": now or time.time()}


def json_pieces(conn: sqlite3.Connection, ids: list[str] | None) -> Iterator[bytes]:
    """The export of these conversations (None: every one), with all their messages (every
    branch, in the order written), a piece at a time. One deleted meanwhile is left out."""
    head = json.dumps(header(), ensure_ascii=False)
    chosen = conversation_ids(conn) if ids is None else ids
    # Before the chats, so an import knows them when a chat names one (transfer/projects.py).
    projects = json.dumps(_projects(conn, None if ids is None else chosen), ensure_ascii=False)
    yield (head[:-1] + f', "projects": {projects}, "conversations": [').encode()
    first = True
    for cid in chosen:
        row = conn.execute("SELECT * FROM conversations WHERE id = ?", (cid,)).fetchone()
        if row is None:
            continue
        conversation: dict[str, Any] = dict(conversation_json(row))
        if conversation["project_id"] is None:  # a chat outside every project says nothing
            del conversation["project_id"]
        if row["origin"] is not None:  # the chat it is, for a later import (sameness.py)
            conversation["origin"] = row["origin"]
        fields = json.dumps(conversation, ensure_ascii=False)
        yield (("" if first else ", ") + fields[:-1] + ', "messages": [').encode()
        first = False
        rows = conn.execute("SELECT * FROM messages WHERE conversation_id = ? ORDER BY seq", (cid,))
        comma = ""
        while batch := rows.fetchmany(BATCH):
            encoded = (json.dumps(_message(conn, r), ensure_ascii=False) for r in batch)
            yield (comma + ", ".join(encoded)).encode()
            comma = ", "
        written = conn.execute(
            "SELECT * FROM summaries WHERE conversation_id = ? AND undone = 0 "
            "ORDER BY created_at, rowid",
            (cid,),
        )
        summaries = json.dumps([summary_json(s) for s in written], ensure_ascii=False)
        yield f'], "summaries": {summaries}}}'.encode()
    yield b"]}"


def _projects(conn: sqlite3.Connection, ids: list[str] | None) -> list[dict[str, Any]]:
    """The projects of these chats (None: every project, an empty one too), as exported."""
    rows: list[sqlite3.Row] = conn.execute(
        "SELECT * FROM projects WHERE import_id IS NULL ORDER BY rowid"
    ).fetchall()
    if ids is not None:
        wanted: set[str | None] = set()
        for start in range(0, len(ids), BATCH):
            chunk = ids[start : start + BATCH]
            marks = ",".join("?" * len(chunk))
            query = f"SELECT DISTINCT project_id FROM conversations WHERE id IN ({marks})"
            wanted.update(row[0] for row in conn.execute(query, chunk))
        rows = [row for row in rows if row["id"] in wanted]
    return [
        {
            "id": row["id"],
            "name": row["name"],
            "instructions": row["instructions"],
            "folders": folders_of(row["folders"]),
            "created_at": row["created_at"],
            "updated_at": row["updated_at"],
        }
        for row in rows
    ]


def _message(conn: sqlite3.Connection, row: sqlite3.Row) -> dict[str, Any]:
    out: dict[str, Any] = dict(message_json(row))
    del out["conversation_id"]  # the conversation it is in
    if row["attachments"]:  # with their text and bytes (server/transfer/attachments.py)
        out["attachments"] = attachments.exported(conn, row["attachments"])
    return out


def conversation_ids(conn: sqlite3.Connection) -> list[str]:
    return [
        r[0]
        for r in conn.execute(
            "SELECT id FROM conversations WHERE import_id IS NULL ORDER BY created_at, rowid"
        )
    ]


def markdown_pieces(conn: sqlite3.Connection, cid: str) -> Iterator[bytes]:
    """The selected branch as Markdown: who said what, the model, how each reply ended,
    its tool steps and the sources it cited, and where a summary the model was given in
    place of the messages before it ends; nothing for a conversation deleted meanwhile."""
    row = conn.execute("SELECT * FROM conversations WHERE id = ?", (cid,)).fetchone()
    if row is None:
        return
    conversation = conversation_json(row)
    lines = [f"# {conversation['title'] or 'Untitled chat'}", ""]
    if conversation["system"]:
        lines += ["> System prompt: " + conversation["system"].replace("\n", "\n> "), ""]
    path = Skeleton(conn, cid).path_to(row["leaf_id"])
    ending: dict[str, list[SummaryJSON]] = {}
    for summary in on_path(conn, cid, path):
        ending.setdefault(summary["through_id"], []).append(summary)
    for start in range(0, len(path), BATCH):
        for message_row in rows_by_id(conn, path[start : start + BATCH]):
            lines += _markdown_message(message_json(message_row))
            for summary in ending.get(message_row["id"], []):
                lines += _markdown_summary(summary)
        if start + BATCH < len(path):
            yield ("\n".join(lines) + "\n").encode()
            lines = []
    yield ("\n".join(lines).rstrip() + "\n").encode()


def markdown(conn: sqlite3.Connection, cid: str) -> str | None:
    """`markdown_pieces` as one text; None: no such conversation."""
    if not exists(conn, cid):
        return None
    return b"".join(markdown_pieces(conn, cid)).decode()


def _markdown_message(message: MessageJSON) -> list[str]:
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(message["created_at"]))
    if message["role"] == "user":
        files = [f"*Attached: {a['name']}*" for a in message.get("attachments", [])]
        return [f"## You · {when}", "", message["content"], "", *(files and [*files, ""])]
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
    # Cited, then the prompt's passages it did not cite.
    for heading, cited in (("Sources:", True), ("Passages given to the model:", False)):
        listed = [part for part in citations if part.get("cited", True) is cited]
        if listed:
            lines.append(heading)
            for source in listed:
                place = f", page {source['page']}" if source["page"] is not None else ""
                if source["lines"] is not None:
                    place = f", lines {source['lines'][0]}–{source['lines'][1]}"
                lines.append(f"- [{source['n']}] {source['path']}{place}")
            lines.append("")
    return lines


def _markdown_summary(summary: SummaryJSON) -> list[str]:
    """Compaction's marker: the messages above were given to the model as this."""
    whose = "in the user's words" if summary["model"] is None else f"by {summary['model']}"
    said = [f"> {line}" if line else ">" for line in summary["content"].split("\n")]
    return [
        f"> **Earlier messages summarised here** ({whose}; the model was given this summary "
        "instead of the messages above it):",
        ">",
        *said,
        "",
    ]


def _ending(message: MessageJSON) -> str:
    if message["status"] == "error":
        return f"error: {message['error']}"
    reasons = {
        "client_hangup": "stopped",
        "shutdown": "interrupted when Parley closed",
        "crash": "interrupted by a crash",
    }
    return reasons.get(message["ended_by"] or "", message["status"])
