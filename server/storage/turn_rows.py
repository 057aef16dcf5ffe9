"""A turn's rows: opened before any generation, checkpointed while the reply streams,
finished once by the run's settle. Functions run on the database thread (server/storage/db.py).

A turn opens in one of four ways (`TurnStart.kind`):
- `send`: a new user message at the end of the selected branch, and a reply to it;
- `edit`: a new version of a user message (a sibling: same parent), and a reply to it;
- `regenerate`: a new version of a reply (a sibling), to the same user message;
- `continue`: a stopped or interrupted reply goes on, in place (the last of its branch).
Each selects the branch it writes to, and hands on that branch only, as stored: what the
model is given of it is built above storage (server/agent/branch.py).
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass

from server.errors import ConflictError, NotFoundError, ReplyGoneError
from server.storage import attachments, branches, projects, summaries
from server.storage import params as chat_params
from server.storage.rows import message_json
from server.storage.transaction import transaction
from server.types import (
    ChatParams,
    Continued,
    EndedBy,
    EndedJSON,
    FinishReason,
    MessageJSON,
    PartJSON,
    Status,
    ToolCallJSON,
    TurnKind,
    Usage,
    continuable,
)

AUTO_TITLE_CHARS = 60


@dataclass(frozen=True)
class TurnStart:
    """What a turn does to its conversation (see the module's docstring)."""

    kind: TurnKind
    content: str = ""  # send, edit: the user's words
    target: str | None = None  # edit: the user message; regenerate, continue: the reply
    continued: Continued = "prefix"  # continue: how the backend can go on
    # send, edit: the uploads the message carries (edit: None keeps the edited message's)
    attachments: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Earlier:
    """A continued reply's text and parts before this turn: the run starts from them."""

    content: str
    parts: list[PartJSON]


@dataclass(frozen=True)
class OpenedTurn:
    """What opening a turn wrote, and the branch the model must see."""

    user_message: MessageJSON
    assistant_message: MessageJSON
    # The branch as stored, down to the question (a continuation's reply is `earlier`).
    branch: branches.StoredBranch
    tools: bool  # the conversation lets the model call tools
    documents: bool  # the conversation puts passages of the user's documents in the prompt
    params: ChatParams  # the conversation's own sampling parameters
    title: str  # the conversation's, once the turn is open (a new chat's from its question)
    earlier: Earlier | None = None  # a continuation's starting point


@dataclass(frozen=True, kw_only=True)
class Ending:
    """How a reply ended: built once, by the run's settle (server/turns/run.py), which alone
    writes it (`Store.finish`) and tells it to the reply's followers.

    `parts` are the reply's text and tool steps in order (None: text alone, its content).
    `finish_reason` is set when the reply completed; `tool_calls` when it completed by
    asking the client to run tools (the stateless API). `save_error` says why the final
    write failed, if it did (the row then keeps its last checkpoint, and the next start
    marks it `interrupted`/`crash`); none of these three is a column.
    """

    content: str
    status: Status
    ended_by: EndedBy | None
    completed_at: float
    error: str | None = None
    usage: Usage | None = None
    finish_reason: FinishReason | None = None
    save_error: str | None = None
    parts: list[PartJSON] | None = None
    tool_calls: list[ToolCallJSON] | None = None
    ended: EndedJSON | None = None  # a stopped reply: what the stop ended


def open_turn(
    conn: sqlite3.Connection,
    cid: str,
    start: TurnStart,
    model: str,
    user_id: str,
    assistant_id: str,
    now: float,
) -> OpenedTurn | None:
    """Write the turn's rows in one transaction; None: no such conversation. Raises
    NotFoundError (no such message), ConflictError (not one this kind of turn can start
    from); nothing is written then."""
    with transaction(conn):
        conv = conn.execute("SELECT * FROM conversations WHERE id = ?", (cid,)).fetchone()
        if conv is None:
            return None
        target = _target(conn, cid, start)
        system = projects.chat_system(conn, conv)
        earlier: Earlier | None = None
        if start.kind == "continue":
            assert target is not None
            rows = branches.branch(conn, cid, target["parent_id"])
            _reopen(conn, target, model, start.continued, now)
            user_row, reply_id = rows[-1], target["id"]
            earlier = Earlier(target["content"], message_json(target)["parts"])
        else:
            if start.kind == "regenerate":
                assert target is not None
                user_row = conn.execute(
                    "SELECT * FROM messages WHERE id = ?", (target["parent_id"],)
                ).fetchone()
                rows = branches.branch(conn, cid, user_row["id"])
            else:
                parent = conv["leaf_id"] if target is None else target["parent_id"]
                rows = branches.branch(conn, cid, parent)
                # An edit that gives no files keeps those of the message it is a version of.
                keep = start.attachments is None and target is not None
                files: str | None = target["attachments"] if keep and target else None
                if start.attachments:
                    files = json.dumps(attachments.take(conn, cid, start.attachments))
                _insert_user(conn, cid, user_id, parent, start.content, now, files or None)
                user_row = _row(conn, user_id)
                rows.append(user_row)
            _insert_reply(conn, cid, assistant_id, user_row["id"], model, now)
            reply_id = assistant_id
        stored = _stored(conn, cid, system, rows)
        title = conv["title"] or _auto_title(user_row["content"]) or _files_title(user_row)
        conn.execute(
            "UPDATE conversations SET title = ?, updated_at = ?, leaf_id = ? WHERE id = ?",
            (title, now, reply_id, cid),
        )
        reply_row = _row(conn, reply_id)
    return OpenedTurn(
        message_json(user_row),
        message_json(reply_row),
        stored,
        bool(conv["tools"]),
        bool(conv["documents"]),
        chat_params.decode(conv["params"]),
        title,
        earlier,
    )


# A conversation's selected branch as stored, as the next turn would find it: the context
# meter's and "Compact now"'s.
View = branches.StoredBranch


def view(conn: sqlite3.Connection, cid: str) -> View | None:
    """The selected branch as the next turn would find it; None: no such chat."""
    conv = conn.execute("SELECT * FROM conversations WHERE id = ?", (cid,)).fetchone()
    if conv is None:
        return None
    rows = branches.branch(conn, cid, conv["leaf_id"])
    return _stored(conn, cid, projects.chat_system(conn, conv), rows)


def _stored(
    conn: sqlite3.Connection, cid: str, system: str | None, rows: list[sqlite3.Row]
) -> branches.StoredBranch:
    """The branch as stored, with the summary in force on it (server/storage/summaries.py)."""
    path = [row["id"] for row in rows]
    summary = summaries.latest_on(conn, cid, path)
    summarised = path.index(summary["through_id"]) + 1 if summary else 0
    return branches.StoredBranch(system, branches.decoded(rows), summary, summarised)


def _target(conn: sqlite3.Connection, cid: str, start: TurnStart) -> sqlite3.Row | None:
    """The message an edit, a regeneration or a continuation starts from, checked."""
    if start.kind == "send":
        return None
    row: sqlite3.Row | None = conn.execute(
        "SELECT * FROM messages WHERE id = ? AND conversation_id = ?", (start.target, cid)
    ).fetchone()
    if row is None:
        raise NotFoundError(f"no message with id {start.target!r} in conversation {cid!r}")
    wanted = "user" if start.kind == "edit" else "assistant"
    if row["role"] != wanted:
        what = {"edit": "edited", "regenerate": "regenerated", "continue": "continued"}
        raise ConflictError(
            f"only a {'question' if wanted == 'user' else 'reply'} can be "
            f"{what[start.kind]}; {start.target!r} is a {row['role']} message",
            code="wrong_message",
        )
    if row["status"] == "streaming":
        raise ConflictError("this reply is still streaming", code="reply_in_progress")
    if start.kind != "edit":
        parent = conn.execute(
            "SELECT role FROM messages WHERE id = ?", (row["parent_id"],)
        ).fetchone()
        if parent is None or parent["role"] != "user":
            raise ConflictError(
                "this reply follows no question of the user's; it cannot be regenerated "
                "or continued",
                code="wrong_message",
            )
    if start.kind == "continue":
        if not continuable(row["status"], row["finish_reason"]) or not row["content"]:
            raise ConflictError(
                "only a reply that was stopped, interrupted, cut by an error or at its "
                f"length limit, with some text, can be continued; this one is {row['status']}",
                code="not_continuable",
            )
        if branches.has_children(conn, row["id"]):
            raise ConflictError(
                "only the last reply of a branch can be continued: the chat went on after it",
                code="not_continuable",
            )
    return row


def _reopen(
    conn: sqlite3.Connection, row: sqlite3.Row, model: str, continued: Continued, now: float
) -> None:
    """A settled reply streams again. Its search entry becomes the empty text every
    streaming reply has (server/storage/migrations.py, 0002), so the settle's re-index is exact."""
    conn.execute(
        "INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', ?, ?)",
        (row["seq"], row["content"]),
    )
    conn.execute("INSERT INTO messages_fts(rowid, content) VALUES (?, '')", (row["seq"],))
    conn.execute(
        "UPDATE messages SET status = 'streaming', ended_by = NULL, error = NULL, "
        "finish_reason = NULL, ended = NULL, usage = NULL, completed_at = NULL, model = ?, "
        "continued = ?, "
        "updated_at = ? WHERE id = ?",
        (model, continued, now, row["id"]),
    )


def _insert_user(
    conn: sqlite3.Connection,
    cid: str,
    mid: str,
    parent: str | None,
    content: str,
    now: float,
    files: str | None = None,
) -> None:
    conn.execute(
        "INSERT INTO messages (id, conversation_id, parent_id, role, content, status, "
        "created_at, updated_at, completed_at, attachments) "
        "VALUES (?, ?, ?, 'user', ?, 'completed', ?, ?, ?, ?)",
        (mid, cid, parent, content, now, now, now, files),
    )


def _insert_reply(
    conn: sqlite3.Connection, cid: str, mid: str, parent: str, model: str, now: float
) -> None:
    conn.execute(
        "INSERT INTO messages (id, conversation_id, parent_id, role, content, status, model, "
        "created_at, updated_at) VALUES (?, ?, ?, 'assistant', '', 'streaming', ?, ?, ?)",
        (mid, cid, parent, model, now, now),
    )


def _row(conn: sqlite3.Connection, mid: str) -> sqlite3.Row:
    row: sqlite3.Row = conn.execute("SELECT * FROM messages WHERE id = ?", (mid,)).fetchone()
    return row


def _auto_title(content: str) -> str:
    first_line = content.strip().splitlines()[0] if content.strip() else ""
    if len(first_line) <= AUTO_TITLE_CHARS:
        return first_line
    return first_line[: AUTO_TITLE_CHARS - 1].rstrip() + "…"


def _files_title(row: sqlite3.Row) -> str:
    """A question of files alone is named after its first."""
    files = attachments.of_message(row["attachments"])
    return _auto_title(str(files[0].get("name", ""))) if files else ""


def checkpoint(
    conn: sqlite3.Connection, message_id: str, content: str, parts: str | None, now: float
) -> None:
    with transaction(conn):
        # Only a reply still streaming is checkpointed: a late checkpoint never
        # overwrites what the settle wrote.
        conn.execute(
            "UPDATE messages SET content = ?, parts = ?, updated_at = ? "
            "WHERE id = ? AND status = 'streaming'",
            (content, parts, now, message_id),
        )


def finish(conn: sqlite3.Connection, message_id: str, ending: Ending) -> None:
    usage = json.dumps(ending.usage) if ending.usage is not None else None
    parts = json.dumps(ending.parts, ensure_ascii=False) if ending.parts is not None else None
    ended = json.dumps(ending.ended, ensure_ascii=False) if ending.ended is not None else None
    with transaction(conn):
        cursor = conn.execute(
            "UPDATE messages SET content = ?, parts = ?, status = ?, ended_by = ?, error = ?, "
            "usage = ?, finish_reason = ?, ended = ?, completed_at = ?, updated_at = ? "
            "WHERE id = ? AND status = 'streaming'",
            (
                ending.content,
                parts,
                ending.status,
                ending.ended_by,
                ending.error,
                usage,
                ending.finish_reason if ending.status == "completed" else None,
                ended,
                ending.completed_at,
                ending.completed_at,
                message_id,
            ),
        )
    if cursor.rowcount != 1:
        raise ReplyGoneError(
            "the reply was no longer marked as streaming in the database "
            "(deleted, or settled by someone else); its text was not saved"
        )
