"""The wire shapes of a memory file (`GET /api/memory/...`: server/routes/memory.py)."""

from __future__ import annotations

from typing import TypedDict


class MemoryLineJSON(TypedDict):
    """One line of a memory file that says something (blank lines are left out)."""

    id: str  # the same for the same text: what `DELETE .../lines/{id}` ("Forget") removes
    line: int  # where it is in the file (1: the first line)
    text: str  # what it says, without its list mark and its chat link
    chat_id: str | None  # the chat it was remembered in; None: written by hand


class MemoryJSON(TypedDict):
    """A memory file: chats outside any project (`project_id` None) or one project's."""

    project_id: str | None
    path: str  # where it is, to open it in an editor
    exists: bool
    version: str | None  # the file's bytes' SHA-256 (None: no file): what PUT says it edits
    text: str  # the whole file as it is ("" with no file, or one Parley will not read)
    lines: list[MemoryLineJSON]
    # Why Parley will not read the file (too large, not text, a link); None: it reads it.
    # The file is then left as it is, and the model is given none of it.
    error: str | None
    max_bytes: int  # the largest file Parley reads
