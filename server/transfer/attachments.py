"""Attachments in an export and back (issue 43): each message's files go out with the text the
model was given and their bytes (base64), and come back checked as hostile input: names
cleaned, sizes bounded, an image's bytes that are no image refused. Their bytes are written
by the import's thread (server/transfer/jobs.py) before its rows, never under the write lock."""

from __future__ import annotations

import base64
import binascii
import contextlib
import sqlite3
import uuid
from pathlib import Path
from typing import Any

from server.attachments import files
from server.attachments.kinds import kind_of
from server.attachments.service import bounded, clean_name
from server.errors import BadImport, BadRequestError, StorageError
from server.limits import AttachmentLimits
from server.storage import attachments as rows

LIMITS = AttachmentLimits()
MAX_MIME_CHARS = 100


def folder_of(conn: sqlite3.Connection) -> Path:
    """The data dir's attachments folder, beside the database the connection is on."""
    for _, name, path in conn.execute("PRAGMA database_list"):
        if name == "main" and path:
            return Path(path).parent / "attachments"
    raise StorageError("the database has no file")


def exported(conn: sqlite3.Connection, stored: str | None) -> list[dict[str, Any]]:
    """A message's attachments as an export writes them: with their text and bytes (an
    attachment whose file is gone goes without `data`)."""
    found = []
    for item in rows.of_message(stored):
        out = dict(item)
        with contextlib.suppress(OSError, StorageError):
            data = files.read(folder_of(conn), str(item["id"]), LIMITS.max_file_bytes)
            out["data"] = base64.b64encode(data).decode("ascii")
        found.append(out)
    return found


def imported(value: object, where: str) -> tuple[list[dict[str, Any]], dict[str, bytes]]:
    """A message's `attachments` from a file, checked: as stored with the message, and the
    bytes of each (by id) to write. Raises BadImport saying where."""
    if value is None:
        return [], {}
    if not isinstance(value, list) or len(value) > LIMITS.max_per_message:
        raise BadImport(where, f"must be a list of at most {LIMITS.max_per_message} files")
    stored: list[dict[str, Any]] = []
    data_of: dict[str, bytes] = {}
    for index, raw in enumerate(value):
        at = f"{where}[{index}]"
        item, data = _one(raw, at)
        stored.append(item)
        if data is not None:
            data_of[item["id"]] = data
    return stored, data_of


def _one(raw: object, at: str) -> tuple[dict[str, Any], bytes | None]:
    if not isinstance(raw, dict):
        raise BadImport(at, "must be an object")
    attachment_id = raw.get("id")
    if not isinstance(attachment_id, str) or not files.ID.fullmatch(attachment_id):
        attachment_id = uuid.uuid4().hex
    kind = raw.get("kind")
    if kind not in ("text", "image"):
        raise BadImport(f"{at}.kind", "must be 'text' or 'image'")
    name = raw.get("name")
    if not isinstance(name, str):
        raise BadImport(f"{at}.name", "must be a string")
    data = _data(raw.get("data"), f"{at}.data")
    mime = raw.get("mime")
    if not isinstance(mime, str) or not 0 < len(mime) <= MAX_MIME_CHARS:
        raise BadImport(f"{at}.mime", "must be a media type")
    if kind == "image" and data is not None:
        try:
            sniffed = kind_of(name, data)
        except BadRequestError:
            sniffed = None
        if sniffed is None or sniffed.kind != "image":
            raise BadImport(f"{at}.data", "is not a PNG, JPEG, GIF or WebP image")
        mime = sniffed.mime
    item: dict[str, Any] = {
        "id": attachment_id,
        "name": clean_name(name),
        "kind": kind,
        "mime": mime,
        "bytes": len(data) if data is not None else _count(raw.get("bytes")),
        "chars": None,
        "note": None,
    }
    if kind == "text":
        text = raw.get("text")
        if not isinstance(text, str):
            raise BadImport(f"{at}.text", "must be the text the model was given")
        item["text"], item["chars"], note = bounded(text, LIMITS.max_chars)
        given = raw.get("note")
        item["note"] = note or (given[:500] if isinstance(given, str) else None)
    return item, data


def _data(value: object, at: str) -> bytes | None:
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > (LIMITS.max_file_bytes // 3 + 1) * 4:
        most = LIMITS.max_file_bytes >> 20
        raise BadImport(at, f"must be the file's bytes in base64, at most {most} MB")
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise BadImport(at, "is not base64") from exc


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def write_files(folder: Path, stored: list[dict[str, Any]], data_of: dict[str, bytes]) -> None:
    """Write an imported message's files; an id whose file exists already (the same export
    imported twice) gets a new one. Blocking: the import's own thread."""
    for item in stored:
        data = data_of.pop(item["id"], None)
        if data is None:
            continue
        while True:
            try:
                files.write(folder, item["id"], data)
                break
            except FileExistsError:
                item["id"] = uuid.uuid4().hex


def insert_rows(
    conn: sqlite3.Connection, cid: str, stored: list[dict[str, Any]], now: float
) -> None:
    """Each imported file's row, in its chat (a file never written has none: it is gone)."""
    folder = folder_of(conn)
    for item in stored:
        if (folder / item["id"]).exists():
            conn.execute(
                "INSERT OR IGNORE INTO attachments (id, conversation_id, name, kind, mime, "
                "bytes, chars, note, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (item["id"], cid, *(item[k] for k in rows.COLUMNS[1:]), now),
            )
