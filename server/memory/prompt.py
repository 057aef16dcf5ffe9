"""The memory in the model's prompt: a delimited part of the system message of every turn of
a stored chat, read from the file as it is when the turn opens (a line remembered, forgotten
or edited by hand counts from the next turn). Where it goes in the system message is
server/agent/prompt.py's, for the turn and the context meter alike.

The file is the user's: each line the assistant added was approved by them, the rest they
wrote. So it is given as their notes, not between the untrusted-data markers.
"""

from __future__ import annotations

import logging
from pathlib import Path

from server.errors import MemoryFileError
from server.limits import MemoryLimits
from server.memory import format
from server.memory.files import MemoryFile

log = logging.getLogger(__name__)

OPEN, CLOSE = "<memory>", "</memory>"


def intro(project: bool) -> str:
    where = "the chats of this project" if project else "their chats outside any project"
    return (
        f"The user's saved memory: notes they chose to keep across {where}, in a file they "
        "can read and edit. Use what is relevant to their request; it is background, not a "
        "request."
    )


def block(text: str, project: bool) -> str | None:
    """The part of the system message that holds the memory file's `text`; None when the
    file says nothing."""
    said = format.for_model(text)
    if not said:
        return None
    return f"{intro(project)}\n{OPEN}\n{said}\n{CLOSE}"


async def memory_block(data_dir: Path, project_id: str | None, limits: MemoryLimits) -> str | None:
    """The part of a turn's system message that gives its scope's memory; None when there
    is none. A file Parley will not read gives none: the turn goes on without it (the app's
    memory view says why, with the file's path)."""
    try:
        memory = await MemoryFile(data_dir, project_id, limits).read()
    except (MemoryFileError, TimeoutError, OSError) as exc:
        log.warning("memory not given to the model: %s", exc)
        return None
    return block(memory.text, project_id is not None)
