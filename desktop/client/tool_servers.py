"""The MCP servers other apps are set up with, offered to import (Claude Desktop, Cursor,
VS Code, Windsurf; read by the server: server/tools/importing.py), and signing in to a remote
server (server/routes/sign_in.py). Composed into ParleyClient as `client.tool_servers`; calls
go through its one HTTP client."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from desktop.client.answers import shaped
from desktop.client.paths import segment
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

    async def sign_in(self, name: str) -> ToolServerJSON:
        """Start signing in to a remote server: the server as it is now, its `sign_in`
        holding the `authorization_url` to open in the browser (none when it connected
        without one). A failure is a ClientError in the server's words."""
        path = f"/api/tools/servers/{segment(name)}/sign-in"
        return shaped(
            ToolServerJSON, ("name", "state", "sign_in"), await self._call("POST", path, None)
        )

    async def cancel_sign_in(self, name: str) -> ToolServerJSON:
        """Give up a sign-in waiting for the browser (its way back is refused from then on)."""
        path = f"/api/tools/servers/{segment(name)}/sign-in"
        return shaped(ToolServerJSON, ("name", "state"), await self._call("DELETE", path, None))

    async def sign_out(self, name: str) -> ToolServerJSON:
        """Forget a remote server's tokens and end its session: it asks for a sign-in again."""
        path = f"/api/tools/servers/{segment(name)}/sign-out"
        return shaped(ToolServerJSON, ("name", "state"), await self._call("POST", path, None))
