"""A cited source shown at its place: the cited lines of a file, read again now.

A citation's path is data, and it may come from an imported file: it names any path the
author liked (`/etc/passwd`, `~/.ssh/id_rsa`, `/dev/zero`, a FIFO). So a cited file is read
only when it lies in a folder of the library now, where the walk that indexes the folder
would reach it (never a hidden file or folder, a folder of tools' data or a place that holds
secrets: `sensitive.passed_over_path`, the walk's own rule), and is in the index (checked by
the service: a citation only ever points at a file the index read); then as any file of the
library is (`reading`: one descriptor, no link followed, bounded in bytes and time), off the
event loop.
The window never reads it: it asks the server, and opens a file only when the server said it
is in the library.
"""

from __future__ import annotations

import os
from pathlib import Path

from server.errors import ForbiddenError, SkipFile
from server.library.reading import read_inside, under
from server.library.sensitive import passed_over_path
from server.limits import LibraryLimits
from server.types.library import SourceJSON, SourceLineJSON

CONTEXT_LINES = 3  # shown above and below the cited lines
READ_TIME_S = LibraryLimits.source_read_time
NOT_IN_LIBRARY = "not in a folder of your library (from an imported chat, or a folder removed)"


def holder(path: str, folders: list[str]) -> str | None:
    """The folder of the library that holds `path` (absolute), if any: compared as written,
    normalised, never resolved (a link is not followed here, nor when the file is read)."""
    if not os.path.isabs(path) or os.path.normpath(path) != path:
        return None  # relative, or `..` and `.` segments, doubled separators: not Parley's
    inside = [folder for folder in folders if under(path, folder) and path != folder]
    return max(inside, key=len) if inside else None


def readable_holder(path: str, folders: list[str]) -> str | None:
    """The folder of the library that holds `path`, if any; raises ForbiddenError when the
    walk of that folder passes over the path (hidden, tools' data, a secret place)."""
    root = holder(path, folders)
    if root is None:
        return None
    reason = passed_over_path(root, path, Path.home())
    if reason is not None:
        raise ForbiddenError(f"{path} is never read by Parley: {reason}", code="not_a_document")
    return root


def source(path: str, folders: list[str], first: int | None, last: int | None) -> SourceJSON:
    """What of `path` can be shown (blocking: run it in a worker thread). Raises
    ForbiddenError for a path the library's walk passes over."""
    root = readable_holder(path, folders)
    if root is None:
        return {"path": path, "in_library": False, "lines": None, "reason": NOT_IN_LIBRARY}
    if first is None or last is None:
        return {"path": path, "in_library": True, "lines": None, "reason": None}
    try:
        data, _ = read_inside(root, path, time_limit=READ_TIME_S)
    except SkipFile as exc:
        return {"path": path, "in_library": True, "lines": None, "reason": str(exc)}
    lines = _lines(data, first, last)
    reason = None if lines else "the file is shorter now than when it was cited"
    return {"path": path, "in_library": True, "lines": lines, "reason": reason}


def _lines(data: bytes, first: int, last: int) -> list[SourceLineJSON] | None:
    start = max(1, first - CONTEXT_LINES)
    end = min(last + CONTEXT_LINES, start + LibraryLimits.source_lines - 1)
    text = data.decode("utf-8-sig", errors="replace").splitlines()
    if len(text) < first:
        return None
    return [
        {"n": number, "text": text[number - 1][: LibraryLimits.source_line_chars]}
        for number in range(start, min(end, len(text)) + 1)
    ]
