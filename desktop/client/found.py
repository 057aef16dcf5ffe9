"""The server's routes for models already on this disk: what was found, adding
one in place, and the user's own folders of GGUF files. Composed into ParleyClient as
`client.found`; calls go through its one HTTP client."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from urllib.parse import quote

from desktop.client.answers import shaped
from server.types.getting_models import FoundModelJSON, ModelFolderJSON

Call = Callable[[str, str, object], Awaitable[object]]


class FoundApi:
    def __init__(self, call: Call) -> None:
        self._call = call

    async def models(self) -> list[FoundModelJSON]:
        """The GGUF files found on disk, each once (a bounded scan on the server)."""
        found = await self._call("GET", "/api/models/found", None)
        return shaped(dict, ("found",), found)["found"]  # type: ignore[no-any-return]

    async def use(self, path: str, name: str) -> FoundModelJSON:
        """Add a found file as a model, in place (409: it is one already, named)."""
        body = {"path": path, "name": name}
        added = await self._call("POST", "/api/models/found/add", body)
        return shaped(FoundModelJSON, ("name", "model"), added)

    async def folders(self) -> list[ModelFolderJSON]:
        found = await self._call("GET", "/api/models/folders", None)
        return shaped(dict, ("folders",), found)["folders"]  # type: ignore[no-any-return]

    async def add_folder(self, path: str) -> None:
        await self._call("POST", "/api/models/folders", {"path": path})

    async def remove_folder(self, path: str) -> None:
        await self._call("DELETE", "/api/models/folders?path=" + quote(path, safe=""), None)
