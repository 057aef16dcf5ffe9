"""A bounded walk of a folder for files named `*.gguf`, following no link to a folder.

A folder link is never entered (no loop through links, no escape), a folder reached twice
(a bind mount of itself) is entered once, hidden entries are passed over, and every entry
counts against the scan's Budget. What the walk yields are names only: each file is opened
and checked by `collecting.py`, which follows a file link only to a place allowed.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator

from server.models.discovery.budget import Budget

GGUF_SUFFIX = ".gguf"
# "Model-Q4_K_M-00001-of-00003.gguf": llama.cpp's split files; the first part loads them all.
SPLIT = re.compile(r"^(?P<stem>.+)-(?P<part>\d{5})-of-(?P<parts>\d{5})\.gguf$", re.IGNORECASE)


def is_gguf_name(name: str) -> bool:
    return name.lower().endswith(GGUF_SUFFIX) and not name.startswith(".")


def stem(name: str) -> str:
    """A file's model name: without `.gguf` and a split file's `-0000k-of-0000n`."""
    split = SPLIT.match(name)
    if split:
        return split["stem"]
    return name[: -len(GGUF_SUFFIX)] if name.lower().endswith(GGUF_SUFFIX) else name


def walk(root: str, budget: Budget, max_depth: int | None = None) -> Iterator[str]:
    """The paths of `*.gguf` entries below `root` (files or links; checked later), as far
    down as `max_depth` folders, while the budget lasts."""
    depth_limit = budget.limits.max_depth if max_depth is None else max_depth
    seen: set[tuple[int, int]] = set()
    try:
        top = os.stat(root)
    except OSError:
        return
    seen.add((top.st_dev, top.st_ino))
    stack = [(root, 0)]
    while stack and budget.ok():
        folder, depth = stack.pop()
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    if not budget.entry():
                        return
                    if entry.name.startswith("."):
                        continue
                    if entry.is_dir(follow_symlinks=False):
                        key = _identity(entry)
                        if depth < depth_limit and key is not None and key not in seen:
                            seen.add(key)
                            stack.append((entry.path, depth + 1))
                    elif is_gguf_name(entry.name):
                        yield entry.path
        except OSError:
            continue  # unreadable, or gone meanwhile: nothing to list there


def _identity(entry: os.DirEntry[str]) -> tuple[int, int] | None:
    try:
        found = entry.stat(follow_symlinks=False)
    except OSError:
        return None
    return found.st_dev, found.st_ino
