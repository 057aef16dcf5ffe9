"""The server's Hugging Face routes for the window: the catalog and downloads.
Composed into ParleyClient as `client.hub`; calls go through its one HTTP client."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from urllib.parse import quote

from desktop.client.answers import shaped
from server.types.getting_models import DownloadJSON, HubRepoFilesJSON, HubRepoJSON

Call = Callable[[str, str, object], Awaitable[object]]


class HubApi:
    def __init__(self, call: Call) -> None:
        self._call = call

    async def search(self, query: str) -> list[HubRepoJSON]:
        """GGUF repositories matching `query`, most downloaded first."""
        found = await self._call("GET", "/api/hub/search?q=" + quote(query, safe=""), None)
        return shaped(dict, ("repos",), found)["repos"]  # type: ignore[no-any-return]

    async def files(self, repo: str) -> HubRepoFilesJSON:
        """A repository's GGUF files (size, quantization, sha256, what fits)."""
        owner, _, name = repo.partition("/")
        path = f"/api/hub/repos/{quote(owner, safe='')}/{quote(name, safe='')}/files"
        return shaped(HubRepoFilesJSON, ("repo", "files"), await self._call("GET", path, None))

    async def downloads(self) -> list[DownloadJSON]:
        found = await self._call("GET", "/api/downloads", None)
        return shaped(dict, ("downloads",), found)["downloads"]  # type: ignore[no-any-return]

    async def download(self, repo: str, file: str, revision: str) -> DownloadJSON:
        body = {"repo": repo, "file": file, "revision": revision}
        return shaped(DownloadJSON, ("id",), await self._call("POST", "/api/downloads", body))

    async def pause(self, download_id: str) -> None:
        await self._call("POST", f"/api/downloads/{quote(download_id, safe='')}/pause", None)

    async def resume(self, download_id: str) -> None:
        await self._call("POST", f"/api/downloads/{quote(download_id, safe='')}/resume", None)

    async def cancel(self, download_id: str) -> None:
        """Stop it and delete its partial file; the server forgets it (how a failed one is
        cleared too; a completed one's model stays)."""
        await self._call("DELETE", f"/api/downloads/{quote(download_id, safe='')}", None)
