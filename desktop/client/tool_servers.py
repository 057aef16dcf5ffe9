"""The MCP servers other apps are set up with, offered to import (Claude Desktop, Cursor,
VS Code, Windsurf; read by the server: server/tools/importing.py). Composed into
ParleyClient as `client.tool_servers`; calls go through its one HTTP client."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from desktop.client.answers import shaped
from desktop.errors import ClientError
from server.types.tools import FoundToolsJSON, ToolServerJSON

Call = Callable[[str, str, object], Awaitable[object]]


class ToolServersApi:
    def __init__(self, call: Call) -> None:
        self._call = call

    async def found(self) -> FoundToolsJSON:
        """Each app's file found, with its servers in Parley's form (secrets masked) or why
        it cannot be read; and every place looked in."""
        answer = await self._call("GET", "/api/tools/found", None)
        found = shaped(FoundToolsJSON, ("apps", "looked_in"), answer)
        if not isinstance(found["apps"], list):
            raise ClientError("the server's list of other apps' servers is malformed")
        return found

    async def add_found(self, path: str, name: str, as_name: str) -> ToolServerJSON:
        """Add the entry `name` of another app's file `path` as Parley's server `as_name`
        (read again by the server, checked: ClientError says why not)."""
        body = {"path": path, "name": name, "as": as_name}
        added = await self._call("POST", "/api/tools/found", body)
        return shaped(ToolServerJSON, ("name", "state"), added)
