"""File names made from text the user or a server wrote (a chat's title, an attachment's
name): safe on every system Parley runs on."""

from __future__ import annotations

import re

MAX_NAME_CHARS = 80  # of a file name made from a chat's title
# Not in a file name on any system Parley runs on (Windows refuses these; "/" everywhere).
UNSAFE = re.compile(r'[\x00-\x1f\x7f/\\:*?"<>|]+')
RESERVED = {"con", "prn", "aux", "nul", *(f"com{i}" for i in range(10)),
            *(f"lpt{i}" for i in range(10))}  # fmt: skip


def file_name_for(title: str | None) -> str:
    """A chat's title as a file name (no extension): no separators, control characters or
    characters another system refuses, no leading dot (hidden) or trailing dot or space,
    at most MAX_NAME_CHARS; "chat" if nothing is left."""
    name = " ".join(UNSAFE.sub(" ", title or "").split())
    name = name[:MAX_NAME_CHARS].strip(" .")
    if not name or name.casefold() in RESERVED:
        return "chat"
    return name
