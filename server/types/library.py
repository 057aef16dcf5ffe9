"""The wire of the user's documents: the Library panel's folders and progress, passages and
cited sources."""

from __future__ import annotations

from typing import Literal, TypedDict


class SkippedFileJSON(TypedDict):
    path: str
    reason: str


class FolderJSON(TypedDict):
    """A folder of the user's documents (`GET /api/library`)."""

    id: str
    path: str
    added_at: float
    files: int  # indexed
    chunks: int  # passages in the index
    skipped: int  # files not indexed (see `skipped_files`)
    skipped_files: list[SkippedFileJSON]  # the first ones, with why


LibraryState = Literal["idle", "indexing"]


class LibraryProgressJSON(TypedDict):
    state: LibraryState
    folder: str | None  # the folder being indexed
    done: int  # files looked at in it
    total: int  # files found in it
    current: str | None  # the file being read now


class LibraryJSON(TypedDict):
    folders: list[FolderJSON]
    progress: LibraryProgressJSON


class PassageJSON(TypedDict):
    """A passage found by `GET /api/library/search` (and the agent's search_documents)."""

    path: str
    page: int | None  # a PDF's page (1-based)
    lines: list[int] | None  # [first, last] lines of a text file
    text: str


class SourceLineJSON(TypedDict):
    n: int  # 1-based
    text: str


class SourceJSON(TypedDict):
    """A cited file shown at its place (`GET /api/library/source`): read again only when it
    lies in a folder of the library now; otherwise `reason` says why it is not."""

    path: str
    in_library: bool  # in a folder of the library now: it may be opened
    lines: list[SourceLineJSON] | None  # the asked lines with a little context, as read now
    reason: str | None  # why no lines (not in the library, gone, changed, not text)
