"""Attachments in an export and back: each message's files go out with the text the
model was given and their bytes (base64), and come back checked as hostile input: names
cleaned, sizes bounded, an image's bytes that are no image refused. An imported file always
gets a new id (`Carried`): the ids a file gives only say which of its messages share a file,
within one conversation, so an import can never point a message at a file of the data dir nor
write under an id that is there. Their bytes are written by the import's thread
(server/transfer/jobs.py) before its rows, never under the write lock."""

from __future__ import annotations

import base64
import binascii
import contextlib
import sqlite3
from pathlib import Path
from typing import Any

from server.attachments import files
from server.attachments.kinds import kind_of
from server.attachments.service import bounded, clean_name
from server.errors import BadImport, BadRequestError, StorageError
from server.ids import new_id
from server.limits import AttachmentLimits, TransferLimits
from server.storage import attachments as rows

LIMITS = AttachmentLimits()


def folder_of(conn: sqlite3.Connection) -> Path:
    """The data dir's attachments folder, beside the database the connection is on."""
    for _, name, path in conn.execute("PRAGMA database_list"):
        if name == "main" and path:
            return rows.folder(Path(path))
    raise StorageError("the database has no file")


class Carried:
    """One conversation's files in an import, each under a new id. The same id twice in the
    conversation (an edit keeps its question's files) is one file; an id given in another
    conversation, or already in the data dir, names nothing here."""

    def __init__(self) -> None:
        self._ids: dict[str, str] = {}  # the id the file gives -> the new one
        self.rows: list[tuple[dict[str, Any], float]] = []  # each new file once, with its time
        self.data: dict[str, bytes] = {}  # bytes by new id, until written
        self.written: set[str] = set()  # new ids whose file is written (they get a row)

    def add(self, value: object, where: str, created_at: float) -> list[dict[str, Any]]:
        """A message's `attachments` from the file, checked, under their new ids: as stored
        with the message. Raises BadImport saying where."""
        if value is None:
            return []
        if not isinstance(value, list) or len(value) > LIMITS.max_per_message:
            raise BadImport(where, f"must be a list of at most {LIMITS.max_per_message} files")
        stored: list[dict[str, Any]] = []
        for index, raw in enumerate(value):
            item, data = _one(raw, f"{where}[{index}]")
            given = raw.get("id") if isinstance(raw, dict) else None
            known = self._ids.get(given) if isinstance(given, str) else None
            item["id"] = known or new_id()
            if known is None:
                if isinstance(given, str):
                    self._ids[given] = item["id"]
                self.rows.append((dict(item), created_at))
            if data is not None and item["id"] not in self.data:
                self.data[item["id"]] = data
            stored.append(item)
        return stored


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


def _one(raw: object, at: str) -> tuple[dict[str, Any], bytes | None]:
    if not isinstance(raw, dict):
        raise BadImport(at, "must be an object")
    kind = raw.get("kind")
    if kind not in ("text", "image"):
        raise BadImport(f"{at}.kind", "must be 'text' or 'image'")
    name = raw.get("name")
    if not isinstance(name, str):
        raise BadImport(f"{at}.name", "must be a string")
    data = _data(raw.get("data"), f"{at}.data")
    mime = raw.get("mime")
    if not isinstance(mime, str) or not 0 < len(mime) <= TransferLimits.mime_chars:
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
        "id": None,  # a new one (Carried.add)
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


def write_files(folder: Path, carried: Carried) -> None:
    """Write a conversation's files under their new ids. Raises StorageError if one is taken
    (never written over, nor given to a message). Blocking: the import's own thread."""
    while carried.data:
        attachment_id, data = carried.data.popitem()
        try:
            files.write(folder, attachment_id, data)
        except FileExistsError as exc:
            raise StorageError(f"a new attachment id is taken: {attachment_id!r}") from exc
        carried.written.add(attachment_id)


def insert_rows(conn: sqlite3.Connection, cid: str, carried: Carried) -> None:
    """Each of a conversation's files written, its row in its chat (a file the import did
    not carry has none: it is gone)."""
    conn.executemany(
        "INSERT INTO attachments (id, conversation_id, name, kind, mime, bytes, chars, note, "
        "text, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (item["id"], cid, *(item[k] for k in rows.COLUMNS[1:]), item.get("text"), created_at)
            for item, created_at in carried.rows
            if item["id"] in carried.written
        ],
    )


def without_rows(conn: sqlite3.Connection, ids: list[str]) -> list[str]:
    """Those of `ids` that no attachment's row names."""
    found: set[str] = set()
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        query = f"SELECT id FROM attachments WHERE id IN ({marks})"
        found.update(row[0] for row in conn.execute(query, chunk))
    return [i for i in ids if i not in found]


def remove(folder: Path, ids: list[str]) -> None:
    """Remove these files (a failed import's, whose rows are gone). Blocking."""
    files.remove(folder, ids)
