"""What the tools' settings change beyond a server's entry: the allows given on approval cards
for the rest of a chat (listed and revoked: server/routes/grants.py), a tool's effect as the
user says it is, and a server's injection guard switch. Composed into ParleyClient as
`client.tool_settings`; calls go through its one HTTP client."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from desktop.client.answers import shaped
from desktop.client.paths import segment
from desktop.errors import ClientError
from server.types.keys import required_keys
from server.types.tools import GrantJSON, ToolEffectJSON, ToolServerJSON

Call = Callable[[str, str, object], Awaitable[object]]
GRANT_KEYS = required_keys(GrantJSON)


class ToolSettingsApi:
    def __init__(self, call: Call) -> None:
        self._call = call

    async def grants(self) -> list[GrantJSON]:
        """Every chat's grants (oldest first), each with its chat's title."""
        answer = await self._call("GET", "/api/tools/grants", None)
        found = answer.get("grants") if isinstance(answer, dict) else None
        if not isinstance(found, list):
            raise ClientError("the server's list of grants is malformed")
        return [shaped(GrantJSON, GRANT_KEYS, grant) for grant in found]

    async def revoke_grant(self, grant_id: str) -> None:
        """Revoke a grant: the next call it covered asks again (ClientError 404: gone)."""
        await self._call("DELETE", f"/api/tools/grants/{segment(grant_id)}", None)

    async def set_tool_effect(
        self, server: str, tool: str, effect: ToolEffectJSON | None
    ) -> ToolServerJSON:
        """What a tool can do, as the user says (None: as its server's annotations say);
        read by the injection guard from the next call on."""
        path = f"/api/tools/servers/{segment(server)}/tools/{segment(tool)}"
        answer = await self._call("PUT", path, {"effect": effect})
        return shaped(ToolServerJSON, ("name", "state", "tools"), answer)

    async def set_guard(self, server: str, on: bool) -> ToolServerJSON:
        """The injection guard on (the default) or off for a server's tools."""
        path = f"/api/tools/servers/{segment(server)}/guard"
        answer = await self._call("PUT", path, {"guard": on})
        return shaped(ToolServerJSON, ("name", "state", "guard"), answer)
