"""Attachments: an upload checked, its text extracted (a PDF's in the library's parse workers,
waiting its turn within their budget), its bytes stored in the data dir and its row written;
read back (within a time bound) for the window and the model; uploads never sent deleted
after a day."""

from __future__ import annotations

import time
import unicodedata
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
import anyio.to_thread

from server.attachments import files
from server.attachments.kinds import decoded, kind_of
from server.errors import (
    BadRequestError,
    NotFoundError,
    PayloadTooLargeError,
    SkipFile,
    StorageError,
    UnavailableError,
)
from server.ids import new_id
from server.limits import AttachmentLimits
from server.storage import attachments as rows
from server.storage.db import Database
from server.types import AttachmentJSON

# A PDF's text within a CPU budget (seconds); raises SkipFile saying why there is none.
ExtractPDF = Callable[[bytes, float], Awaitable[str]]


class Attachments:
    def __init__(
        self, db: Database, folder: Path, limits: AttachmentLimits, extract_pdf: ExtractPDF
    ) -> None:
        self.db = db
        self.folder = folder
        self.limits = limits
        self._extract_pdf = extract_pdf

    async def open(self) -> None:
        """Uploads never sent, older than a day, go (their rows and files), and files a crash
        left without a row."""
        gone = await self.db.run(rows.unsent_before, time.time() - self.limits.unsent_keep)
        known = await self.db.run(rows.known)
        await anyio.to_thread.run_sync(self._remove_strays, gone, known)

    def _remove_strays(self, gone: list[str], known: set[str]) -> None:
        files.remove(self.folder, gone + files.strays(self.folder, known))

    async def upload(
        self, name: str, data: bytes, resource: dict[str, str] | None = None
    ) -> AttachmentJSON:
        """Check, extract and store an upload (`resource`: the MCP resource it is, `{"server",
        "uri"}`). Raises BadRequestError (not a file Parley can attach, or one with no text)
        and PayloadTooLargeError (an image over its bound)."""
        name = clean_name(name)
        kind = await anyio.to_thread.run_sync(kind_of, name, data, self.limits.max_image_side)
        text: str | None = None
        if kind.kind == "image":
            if len(data) > self.limits.max_image_bytes:
                raise PayloadTooLargeError(
                    f"{name!r} is larger than the {self.limits.max_image_bytes >> 20} MB an "
                    "attached image may be",
                    code="attachment_too_large",
                )
        elif kind.kind == "pdf":
            try:
                text = await self._extract_pdf(data, self.limits.parse_cpu)
            except SkipFile as exc:
                raise BadRequestError(
                    f"{name!r} cannot be attached: {exc}", code="attachment_unreadable"
                ) from exc
        else:
            text = await anyio.to_thread.run_sync(decoded, name, data)
        attachment: AttachmentJSON = {
            "id": new_id(),
            "name": name,
            "kind": "image" if kind.kind == "image" else "text",
            "mime": kind.mime,
            "bytes": len(data),
            "chars": None,
            "note": None,
        }
        if text is not None:
            text, attachment["chars"], attachment["note"] = bounded(text, self.limits.max_chars)
            if not text.strip():
                raise BadRequestError(
                    f"{name!r} cannot be attached: it has no text", code="attachment_unreadable"
                )
        await anyio.to_thread.run_sync(files.write, self.folder, attachment["id"], data)
        await self.db.run(rows.add, attachment, text, time.time(), resource)
        return attachment

    async def uploads(self, ids: tuple[str, ...]) -> list[dict[str, object]]:
        """Uploads as a message would store them, with their text (unknown ids left out)."""
        return await self.db.run(rows.uploads, ids)

    async def find(self, attachment_id: str) -> AttachmentJSON | None:
        return await self.db.run(rows.find, attachment_id)

    async def content(self, attachment_id: str) -> tuple[AttachmentJSON, bytes]:
        """An attachment and its bytes. Raises NotFoundError."""
        found = await self.find(attachment_id)
        if found is None:
            raise NotFoundError(
                f"no attachment with id {attachment_id!r}", code="attachment_not_found"
            )
        try:
            data = await self.read(attachment_id, self.limits.max_file_bytes)
        except TimeoutError as exc:  # before OSError, of which it is one
            raise UnavailableError(
                f"the file of attachment {attachment_id!r} was not read from the data folder "
                f"within {self.limits.read_time:g} s",
                code="attachment_file_unreadable",
            ) from exc
        except OSError as exc:
            raise NotFoundError(
                f"the file of attachment {attachment_id!r} is gone from the data folder",
                code="attachment_not_found",
            ) from exc
        except StorageError as exc:
            raise UnavailableError(
                f"{exc}: it cannot be read from the data folder",
                code="attachment_file_unreadable",
            ) from exc
        return found, data

    async def read(self, attachment_id: str, max_bytes: int) -> bytes:
        """An attachment's bytes from its file within `read_time`. Raises TimeoutError, OSError
        (missing, a link) or StorageError (not a regular file, over `max_bytes`)."""
        with anyio.fail_after(self.limits.read_time):
            # Abandoned at its deadline: a stalled disk must not hold a request or a turn.
            return await anyio.to_thread.run_sync(
                files.read, self.folder, attachment_id, max_bytes, abandon_on_cancel=True
            )


def bounded(text: str, max_chars: int) -> tuple[str, int, str | None]:
    """The text the model is given, its length, and a note when it is cut."""
    if len(text) <= max_chars:
        return text, len(text), None
    note = f"only the first {max_chars:,} of {len(text):,} characters are given to the model"
    return text[:max_chars], max_chars, note


def clean_name(name: str) -> str:
    """The file's own name, without a folder or control characters, bounded."""
    name = name.replace("\\", "/").rsplit("/", 1)[-1]
    name = "".join(c for c in name if unicodedata.category(c)[0] != "C").strip()
    return name[: AttachmentLimits.max_name_chars] or "attachment"
