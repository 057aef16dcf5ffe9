"""A memory file on disk: where it is, read as hostile input, changed only over the version
read.

The user may put anything there by hand: 50 MB, a binary, a link to a file elsewhere, a FIFO.
So it is read through one descriptor that follows no link and never waits on a FIFO, at most
`MemoryLimits.max_bytes` (the model is given it whole, so the bound is what a prompt can take),
in a thread, within `read_time`. A file Parley will not read is never rewritten, truncated or
moved by it: every change begins with that read. A change (a line added, a line forgotten, the
app's editor saving) is made to the file as read and written only over that version; a hand
edit in between makes it again over the file as saved (server/tools/file_version.py).
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import anyio
import anyio.to_thread

from server.errors import (
    MemoryChangingError,
    MemoryFileError,
    NotFoundError,
    PayloadTooLargeError,
)
from server.limits import MemoryLimits
from server.memory import format
from server.tools.file_version import Version, read_steady, remove_version, replace_version
from server.types.memory import MemoryJSON

FOLDER = "memory"
GLOBAL = "global.md"
PROJECTS = "projects"
# A project's id as a file name: what server/ids.py makes, and nothing that names a path.
PROJECT_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


def memory_path(data_dir: Path, project_id: str | None) -> Path:
    """The memory file of a project's chats, or (None) of the chats outside every project.
    NotFoundError for an id no project can have."""
    folder = data_dir / FOLDER
    if project_id is None:
        return folder / GLOBAL
    if not PROJECT_ID.fullmatch(project_id):
        raise NotFoundError(f"no project with id {project_id!r}")
    return folder / PROJECTS / f"{project_id}.md"


@dataclass(frozen=True)
class Memory:
    """A memory file as read: its bytes' version (no data: there is no file) and text."""

    path: Path
    project_id: str | None
    version: Version
    text: str

    @property
    def tag(self) -> str | None:
        """What tells this version's bytes from any other's; None: no file."""
        data = self.version.data
        return None if data is None else hashlib.sha256(data).hexdigest()

    def json(self, max_bytes: int) -> MemoryJSON:
        return {
            "project_id": self.project_id,
            "path": str(self.path),
            "exists": self.version.data is not None,
            "version": self.tag,
            "text": self.text,
            "lines": [
                {"id": line.id, "line": line.number, "text": line.text, "chat_id": line.chat_id}
                for line in format.lines(self.text)
            ],
            "error": None,
            "max_bytes": max_bytes,
        }


def unreadable_json(path: Path, project_id: str | None, why: str, max_bytes: int) -> MemoryJSON:
    """A memory file Parley will not read, as the app shows it (with its path, to fix it)."""
    return {
        "project_id": project_id,
        "path": str(path),
        "exists": os.path.lexists(path),
        "version": None,
        "text": "",
        "lines": [],
        "error": why,
        "max_bytes": max_bytes,
    }


# A change to a memory file's text: the new text, or None to leave the file as it is.
Change = Callable[[str], str | None]


class MemoryFile:
    """One scope's memory file. Every method reads or writes in a worker thread."""

    def __init__(self, data_dir: Path, project_id: str | None, limits: MemoryLimits) -> None:
        self.path = memory_path(data_dir, project_id)
        self.project_id = project_id
        self._data_dir = data_dir
        self._limits = limits

    async def exists(self) -> bool:
        """Whether there is a file (of any kind, a link too): memory is on for its scope."""
        return await anyio.to_thread.run_sync(os.path.lexists, self.path)

    async def read(self) -> Memory:
        """The file as it is now. MemoryFileError when Parley will not read it."""
        with anyio.fail_after(self._limits.read_time):
            # A stalled disk: the read is left to its thread, the caller told.
            return await anyio.to_thread.run_sync(self._read, abandon_on_cancel=True)

    async def change(self, change: Change) -> Memory:
        """Make `change` to the file as read, and write it over that version alone; a hand
        edit in between: made again to the file as saved. The file as it is after.
        MemoryFileError (unreadable), MemoryChangingError (it kept changing),
        PayloadTooLargeError (it would pass the bound), OSError."""
        return await anyio.to_thread.run_sync(self._change, change)

    async def replace(self, text: str, tag: str | None) -> Memory:
        """The whole text, as the app's editor saves it, if the file is still the version
        `tag` names (None: there was no file). MemoryChangingError when it is not."""
        return await anyio.to_thread.run_sync(self._change, lambda _: text, True, tag)

    async def delete(self, tag: str | None = None) -> bool:
        """Delete the file (if `tag` is given: only while it is that version, else
        MemoryChangingError). False: there was no file. A link is deleted, not its target;
        a file Parley will not read can be deleted too."""
        return await anyio.to_thread.run_sync(self._delete, tag)

    # -- in a worker thread --------------------------------------------------------------

    def _version(self) -> Version:
        """The file's bytes, through one descriptor. MemoryFileError, saying why and where,
        when Parley will not read them."""
        self._check_folders()
        limit = self._limits.max_bytes
        try:
            return read_steady(self.path, limit, self._limits.write_attempts, follow=False)
        except OSError as exc:
            raise self._unreadable(self._why(exc)) from None

    def _why(self, exc: OSError) -> str:
        """Why the file could not be read, in words: what it is, looked at without opening it."""
        try:
            found = os.lstat(self.path)
        except OSError:
            return exc.strerror or str(exc)
        limit = self._limits.max_bytes
        if stat.S_ISLNK(found.st_mode):
            return "it is a symbolic link (Parley follows no link in its data folder)"
        if not stat.S_ISREG(found.st_mode):
            return "it is not a regular file"
        if found.st_size > limit:
            return (
                f"it is larger than {limit:,} bytes ({found.st_size:,}), the most Parley gives "
                "the model: shorten it in an editor, or delete it"
            )
        return exc.strerror or str(exc)

    def _read(self) -> Memory:
        version = self._version()
        return Memory(self.path, self.project_id, version, self._text(version))

    def _text(self, version: Version) -> str:
        if version.data is None:
            return ""
        try:
            return format.decoded(version.data)
        except ValueError as exc:
            raise self._unreadable(str(exc)) from None

    def _change(self, change: Change, checked: bool = False, tag: str | None = None) -> Memory:
        """`checked`: made only to the version `tag` names; else to whatever version is read."""
        for _ in range(self._limits.write_attempts):
            found = self._read()
            if checked and found.tag != tag:
                raise MemoryChangingError(
                    f"{self.path} was changed since it was read (by hand, or by Parley): "
                    "nothing was saved; read it again and make the edit over it"
                )
            text = change(found.text)
            if text is None:
                return found
            data = text.encode("utf-8", "surrogatepass")
            if data == found.version.data:
                return found  # the same bytes (with no file, "" is made: memory turned on)
            if len(data) > self._limits.max_bytes:
                raise PayloadTooLargeError(
                    f"the memory would be larger than {self._limits.max_bytes:,} bytes, the "
                    "most Parley gives the model: forget some lines first",
                    code="memory_too_large",
                )
            if replace_version(self.path, found.version, data, follow=False) is not None:
                return Memory(self.path, self.project_id, Version(data), text)
        raise MemoryChangingError(
            f"{self.path} kept changing while Parley wrote it: nothing was saved and nothing "
            "in it is lost; try again once it is saved"
        )

    def _delete(self, tag: str | None) -> bool:
        self._check_folders()
        for _ in range(self._limits.write_attempts):
            if not os.path.lexists(self.path):
                if tag is not None:
                    raise MemoryChangingError(f"{self.path} was deleted since it was read")
                return False
            try:
                version = read_steady(self.path, self._limits.max_bytes, 1, follow=False)
            except OSError:
                # Too large, a link, not a regular file: deleted as it is (the user asked),
                # unless they named a version, which such a file cannot be.
                if tag is not None:
                    raise MemoryChangingError(f"{self.path} is not the version read") from None
                try:
                    os.unlink(self.path)
                except OSError as exc:  # a folder of that name: not Parley's to remove
                    raise self._unreadable(exc.strerror or str(exc)) from None
                return True
            if tag is not None and Memory(self.path, None, version, "").tag != tag:
                raise MemoryChangingError(
                    f"{self.path} was changed since it was read: it was not deleted"
                )
            if remove_version(self.path, version, follow=False):
                return True
        raise MemoryChangingError(f"{self.path} kept changing while Parley deleted it")

    def _check_folders(self) -> None:
        """The folders down from the data dir hold the file itself: a link there would
        take Parley's reads and writes to a file the user did not put in its data."""
        folder = self.path.parent
        while folder != self._data_dir and folder != folder.parent:
            if folder.is_symlink():
                raise self._unreadable(f"{folder} is a symbolic link")
            folder = folder.parent

    def _unreadable(self, why: str) -> MemoryFileError:
        return MemoryFileError(f"Parley will not read the memory file {self.path}: {why}")
