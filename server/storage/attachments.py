"""Attachments' rows: an upload's row until a message takes it, then its chat's
alone and its place in the message (`messages.attachments`, with the text the model is given).
Functions run on the database thread (server/storage/db.py); the files themselves are
server/attachments/'s, but for their removal with their chat (`remove_files`): the rows go with
the chat (`ON DELETE CASCADE`), the files once that has committed, off the database thread."""

from __future__ import annotations

import json
import logging
import re
import sqlite3
from pathlib import Path

from server.errors import BadRequestError, NotFoundError
from server.storage.transaction import transaction
from server.types import AttachmentJSON

log = logging.getLogger(__name__)

COLUMNS = ("id", "name", "kind", "mime", "bytes", "chars", "note")
FOLDER = "attachments"  # beside the database, in the data dir
ID = re.compile(r"[A-Za-z0-9_-]{1,64}")  # a file's name is its id, and never anything else


def folder(db_path: Path) -> Path:
    """The data dir's attachments folder (one file per attachment, named by its id)."""
    return db_path.parent / FOLDER


def public(stored: dict[str, object]) -> AttachmentJSON:
    """What the API shows of an attachment (its text is the model's)."""
    found: AttachmentJSON = {name: stored.get(name) for name in COLUMNS}  # type: ignore[assignment]
    return found


def add(
    conn: sqlite3.Connection,
    attachment: AttachmentJSON,
    text: str | None,
    now: float,
    resource: dict[str, str] | None = None,
) -> None:
    """`resource`: the MCP resource it is (`{"server", "uri"}`), None for an upload."""
    conn.execute(
        "INSERT INTO attachments (id, name, kind, mime, bytes, chars, note, text, created_at, "
        "resource) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            *(attachment[name] for name in COLUMNS),  # type: ignore[literal-required]
            text,
            now,
            json.dumps(resource) if resource else None,
        ),
    )


def _stored(row: sqlite3.Row) -> dict[str, object]:
    """An attachment as a message stores it: with its text, and the resource it is."""
    stored: dict[str, object] = {name: row[name] for name in COLUMNS}
    if row["kind"] == "text":
        stored["text"] = row["text"] or ""
    if row["resource"]:
        stored["resource"] = json.loads(row["resource"])
    return stored


def find(conn: sqlite3.Connection, attachment_id: str) -> AttachmentJSON | None:
    row = conn.execute("SELECT * FROM attachments WHERE id = ?", (attachment_id,)).fetchone()
    return public(dict(row)) if row is not None else None


def take(conn: sqlite3.Connection, cid: str, ids: tuple[str, ...]) -> list[dict[str, object]]:
    """The attachments a new message of conversation `cid` carries, as stored with it (with
    their text), in the order given; each now belongs to the chat (an upload no message took
    yet) or did already. Raises NotFoundError for an unknown id or one of another chat's
    (inside the turn's transaction: nothing is written then)."""
    if len(set(ids)) != len(ids):
        raise BadRequestError("an attachment is given twice", code="invalid_field")
    taken: list[dict[str, object]] = []
    for attachment_id in ids:
        row = conn.execute("SELECT * FROM attachments WHERE id = ?", (attachment_id,)).fetchone()
        if row is None:
            raise NotFoundError(
                f"no attachment with id {attachment_id!r} (upload it again)",
                code="attachment_not_found",
            )
        if row["conversation_id"] not in (None, cid):
            # From this chat it does not exist: a file is sent in the chat it was sent in.
            raise NotFoundError(
                f"attachment {attachment_id!r} belongs to another chat; upload the file "
                "again to send it in this one",
                code="attachment_not_found",
            )
        taken.append(_stored(row))
        conn.execute(
            "UPDATE attachments SET conversation_id = ? WHERE id = ?", (cid, attachment_id)
        )
    return taken


def uploads(conn: sqlite3.Connection, ids: tuple[str, ...]) -> list[dict[str, object]]:
    """These uploads as a message would store them (with their text), in order; an unknown
    id is left out (opening the turn refuses it)."""
    found = []
    for attachment_id in ids:
        row = conn.execute("SELECT * FROM attachments WHERE id = ?", (attachment_id,)).fetchone()
        if row is not None:
            found.append(_stored(row))
    return found


def of_message(stored: str | None) -> list[dict[str, object]]:
    """A message's attachments as stored (with their text)."""
    found = json.loads(stored) if stored else []
    return [item for item in found if isinstance(item, dict)] if isinstance(found, list) else []


def unsent_before(conn: sqlite3.Connection, before: float) -> list[str]:
    """Uploads no message took, older than `before`: deleted; their ids returned, for
    their files."""
    with transaction(conn):
        ids = [
            row[0]
            for row in conn.execute(
                "SELECT id FROM attachments WHERE conversation_id IS NULL AND created_at < ?",
                (before,),
            )
        ]
        conn.executemany("DELETE FROM attachments WHERE id = ?", [(i,) for i in ids])
    return ids


def known(conn: sqlite3.Connection) -> set[str]:
    return {row[0] for row in conn.execute("SELECT id FROM attachments")}


def of_conversation(conn: sqlite3.Connection, cid: str) -> list[str]:
    """The chat's attachments (their rows go with it; their ids, for their files)."""
    query = "SELECT id FROM attachments WHERE conversation_id = ?"
    return [row[0] for row in conn.execute(query, (cid,))]


def remove_files(where: Path, ids: list[str]) -> None:
    """Unlink the files of attachments whose rows are gone (committed). Blocking: called on a
    worker thread, never the database's (a chat of many files must not hold the writer). A
    file left by a crash before this has no row: no route reads it, and the next start's
    sweep of files without a row removes it."""
    for attachment_id in ids:
        if not ID.fullmatch(attachment_id):
            continue
        try:
            (where / attachment_id).unlink()
        except FileNotFoundError:
            pass
        except OSError as exc:  # its row is gone: unread, and swept at the next start
            log.warning("could not remove attachment file %s: %s", attachment_id, exc)
