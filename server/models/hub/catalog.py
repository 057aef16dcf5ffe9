"""The hub's catalog: GGUF repositories found by a search, and a repository's GGUF files
with their size, sha256 and quantization. huggingface_hub's HfApi, on a thread, through the
bounded session (session.py); every field of its answer checked (names.py)."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import httpx2
from huggingface_hub import HfApi
from huggingface_hub.errors import (
    GatedRepoError,
    HfHubHTTPError,
    RepositoryNotFoundError,
    RevisionNotFoundError,
)

from server.errors import ApiError, BadGatewayError, ForbiddenError, NotFoundError
from server.limits import HubLimits
from server.models.hub import names
from server.models.hub.session import AnswerTooBigError, use_bounded_session
from server.types.getting_models import HubFileJSON, HubRepoFilesJSON, HubRepoJSON


class Catalog:
    def __init__(self, endpoint: str | None, limits: HubLimits | None = None) -> None:
        self.limits = limits or HubLimits()
        self.endpoint = endpoint
        use_bounded_session(self.limits)
        self._api = HfApi(endpoint=endpoint, library_name="parley")

    async def search(self, query: str) -> list[HubRepoJSON]:
        """GGUF repositories matching `query`, most downloaded first."""
        return await asyncio.to_thread(self._call, "the search", self._search, query)

    async def files(self, repo: str, revision: str | None = None) -> HubRepoFilesJSON:
        """The GGUF files at the root of `repo` (owner/name, checked by the caller), at
        `revision` (a commit) or the newest."""
        return await asyncio.to_thread(self._call, repo, self._files, repo, revision)

    def _call(self, what: str, function: Any, *args: Any) -> Any:
        try:
            return function(*args)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise BadGatewayError(
                f"the hub answered {what} with something unexpected ({type(exc).__name__})",
                code="hub_bad_answer",
            ) from None
        except Exception as exc:
            raise hub_error(exc, what) from None

    def _search(self, query: str) -> list[HubRepoJSON]:
        limit = self.limits.search_results
        found = self._api.list_models(
            search=query or None, filter="gguf", sort="downloads", limit=limit
        )
        repos: list[HubRepoJSON] = []
        for info in itertools.islice(found, limit):
            repo = info.id
            if not isinstance(repo, str) or repo.count("/") != 1:
                continue
            owner, name = repo.split("/")
            if names.is_repo_part(owner) and names.is_repo_part(name):
                repos.append(
                    {
                        "id": repo,
                        "downloads": _count(info.downloads),
                        "likes": _count(info.likes),
                        "gated": bool(info.gated),
                    }
                )
        return repos

    def _files(self, repo: str, revision: str | None) -> HubRepoFilesJSON:
        info = self._api.model_info(
            repo, revision=revision, files_metadata=True, timeout=self.limits.read_timeout
        )
        revision = names.commit_of(info.sha)
        if revision is None:
            raise ValueError("no commit")
        files: list[HubFileJSON] = []
        for sibling in info.siblings or []:
            if not names.is_gguf_name(sibling.rfilename):
                continue  # in a folder, hidden, not a GGUF, or a hostile name
            lfs = sibling.lfs
            size = lfs.size if lfs is not None else sibling.size
            files.append(
                {
                    "file": sibling.rfilename,
                    "size_bytes": size if _count(size) == size and size else None,
                    "sha256": names.sha256_of(lfs.sha256) if lfs is not None else None,
                    "quantization": names.quantization(sibling.rfilename),
                    "split": names.is_split(sibling.rfilename),
                }
            )
        files.sort(key=lambda f: f["file"])
        return {"repo": repo, "revision": revision, "gated": bool(info.gated), "files": files}


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def hub_error(exc: BaseException, what: str) -> ApiError:
    """What a person is told when the hub refused or failed `what` (a repository, a file)."""
    if isinstance(exc, GatedRepoError):
        return ForbiddenError(
            f"{what} is gated: accept its terms on the hub and set a token (HF_TOKEN)",
            code="hub_gated",
        )
    if isinstance(exc, RepositoryNotFoundError):
        return NotFoundError(
            f"the hub has no repository {what} (or it is private)", code="hub_not_found"
        )
    if isinstance(exc, RevisionNotFoundError):
        return NotFoundError(
            f"{what} changed on the hub; list its files again", code="hub_not_found"
        )
    if isinstance(exc, HfHubHTTPError):
        status = exc.response.status_code
        if status == 404:
            return NotFoundError(f"the hub has no {what}", code="hub_not_found")
        if status in (401, 403):
            return ForbiddenError(f"the hub refused {what} ({status})", code="hub_gated")
        return BadGatewayError(f"the hub failed {what} ({status})", code="hub_error")
    if isinstance(exc, AnswerTooBigError):
        return BadGatewayError(
            f"the hub's answer for {what} was refused: {exc}", code="hub_bad_answer"
        )
    if isinstance(exc, httpx2.TimeoutException):
        return BadGatewayError(f"the hub did not answer {what} in time", code="hub_unreachable")
    if isinstance(exc, httpx2.TransportError):
        return BadGatewayError(f"cannot reach the hub for {what}: {exc}", code="hub_unreachable")
    return BadGatewayError(f"the hub failed {what}: {type(exc).__name__}", code="hub_error")
