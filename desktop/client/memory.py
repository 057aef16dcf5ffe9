"""What the assistant remembers: a Markdown file per scope, the chats outside any project
(project None) or one project's (server/routes/memory.py). Composed into ParleyClient as
`client.memory`; calls go through its one HTTP client."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from urllib.parse import urlencode

from desktop.client.answers import shaped
from desktop.client.paths import segment
from server.types.keys import required_keys
from server.types.memory import MemoryJSON

Call = Callable[[str, str, object], Awaitable[object]]
MEMORY_KEYS = required_keys(MemoryJSON)


def _scope(project_id: str | None) -> str:
    return "/api/memory" + (f"/projects/{segment(project_id)}" if project_id else "")


class MemoryApi:
    def __init__(self, call: Call) -> None:
        self._call = call

    async def read(self, project_id: str | None) -> MemoryJSON:
        """The scope's file as it is now: its text and lines, or why Parley will not read it
        (`error`: too large, not text, a link)."""
        return shaped(MemoryJSON, MEMORY_KEYS, await self._call("GET", _scope(project_id), None))

    async def save(self, project_id: str | None, text: str, version: str | None) -> MemoryJSON:
        """The whole text, written only over `version` (None: there was no file). ClientError
        code "memory_changed": the file changed on disk since (nothing written);
        "memory_unreadable": a file Parley will not read, or text past its bound."""
        body = {"text": text, "version": version}
        return shaped(MemoryJSON, MEMORY_KEYS, await self._call("PUT", _scope(project_id), body))

    async def forget(self, project_id: str | None, line_id: str) -> MemoryJSON:
        """Remove every line with that id; the rest of the file stays byte for byte."""
        path = f"{_scope(project_id)}/lines/{segment(line_id)}"
        return shaped(MemoryJSON, MEMORY_KEYS, await self._call("DELETE", path, None))

    async def delete(self, project_id: str | None, version: str | None = None) -> None:
        """Delete the file (memory off for the scope); with `version`, only while it is that."""
        path = _scope(project_id)
        if version:
            path += "?" + urlencode({"version": version})
        await self._call("DELETE", path, None)
