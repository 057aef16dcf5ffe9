"""Whether a chat of an import file is one Parley has already, and what the import does then.

A chat is known by its origin: the id it has in Parley's export (or the `origin` the export
carries, for a chat that was itself imported), or its ChatGPT conversation's id (a content
fingerprint when the file gives none). Parley keeps a chat's origin when it differs from the
chat's own id (`conversations.origin`, migration 0015) and writes it in its exports, so a chat
exported from this Parley, imported here before (as itself or as a copy), or exported from
another Parley that imported it, is "already here" when any chat here has that id or origin.

What an import does with such a chat is the caller's choice (`Duplicates`): skip it (the
default: importing a file twice changes nothing), import it again as a copy, or ask: import
nothing and say how many are already here (AlreadyHereError), so the user can choose.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path
from typing import Literal, cast, get_args

from server.limits import TransferLimits

Duplicates = Literal["skip", "copy", "ask"]
DUPLICATES: tuple[str, ...] = get_args(Duplicates)
DEFAULT_DUPLICATES: Duplicates = "skip"
ALREADY_HERE = "it is already here (imported or exported before)"


def duplicates(value: str) -> Duplicates | None:
    """`value` as a choice of what to do with chats already here; None: not one."""
    return cast(Duplicates, value) if value in DUPLICATES else None


def chatgpt_origin(conversation_id: object, fingerprint: object) -> str:
    """A ChatGPT conversation's origin: its id, else a hash of what it holds (`fingerprint`:
    JSON-encodable, e.g. its title, time and messages)."""
    if isinstance(conversation_id, str) and 0 < len(conversation_id) <= TransferLimits.key_chars:
        return f"chatgpt:{conversation_id}"
    encoded = json.dumps(fingerprint, ensure_ascii=False, sort_keys=True).encode("utf-8", "replace")
    return f"chatgpt-sha256:{hashlib.sha256(encoded).hexdigest()}"


class Here:
    """The chats shown in the database, asked on the import's own thread through a read-only
    connection of its own: the database's writer thread, busy with the import's batches and
    replies' checkpoints, is never waited on. An import's own staged (hidden) chats are not
    "here"."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._conn: sqlite3.Connection | None = None

    def has(self, origin: str) -> bool:
        if self._conn is None:
            self._conn = sqlite3.connect(f"{self._path.as_uri()}?mode=ro", uri=True)
        found = self._conn.execute(
            "SELECT 1 FROM conversations WHERE (id = ? OR origin = ?) AND import_id IS NULL "
            "LIMIT 1",
            (origin, origin),
        ).fetchone()
        return found is not None

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
