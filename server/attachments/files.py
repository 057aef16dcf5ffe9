"""An attachment's bytes in the data dir's attachments/ folder, one file per attachment named
by its id. Written once (a new file, never through a link), read back through one descriptor
that follows no link, opened without waiting (a FIFO in its place is refused, not waited on),
and bounded in bytes. Blocking: called on a worker thread, within a time bound (service.py)."""

from __future__ import annotations

import contextlib
import os
import re
import stat
from pathlib import Path

from server.errors import StorageError

ID = re.compile(r"[A-Za-z0-9_-]{1,64}")  # what server/ids.py makes; nothing else is a name
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
NONBLOCK = getattr(os, "O_NONBLOCK", 0)


def _path(folder: Path, attachment_id: str) -> Path:
    if not ID.fullmatch(attachment_id):
        raise StorageError(f"not an attachment id: {attachment_id!r}")
    return folder / attachment_id


def write(folder: Path, attachment_id: str, data: bytes) -> None:
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = _path(folder, attachment_id)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW, 0o600)
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
    except BaseException:
        with contextlib.suppress(OSError):
            path.unlink()
        raise


def read(folder: Path, attachment_id: str, max_bytes: int) -> bytes:
    """Raises OSError (missing, a link) or StorageError (not a regular file, too big)."""
    # Non-blocking: opening a FIFO put in the file's place waits for a writer that never
    # comes; so opened, it returns at once and fstat refuses it.
    flags = os.O_RDONLY | NOFOLLOW | NONBLOCK | getattr(os, "O_NOCTTY", 0)
    fd = os.open(_path(folder, attachment_id), flags)
    with os.fdopen(fd, "rb") as file:
        found = os.fstat(file.fileno())
        if not stat.S_ISREG(found.st_mode):
            raise StorageError(f"the file of attachment {attachment_id!r} is not a regular file")
        if found.st_size > max_bytes:
            raise StorageError(
                f"the file of attachment {attachment_id!r} is over {max_bytes} bytes"
            )
        data = file.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise StorageError(f"the file of attachment {attachment_id!r} grew past {max_bytes} bytes")
    return data


def remove(folder: Path, ids: list[str]) -> None:
    for attachment_id in ids:
        with contextlib.suppress(OSError, StorageError):
            _path(folder, attachment_id).unlink()


def strays(folder: Path, known: set[str]) -> list[str]:
    """Files no row names (a crash between the write and the row): to be removed."""
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    return [name for name in names if ID.fullmatch(name) and name not in known]
