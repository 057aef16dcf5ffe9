"""Models from the Hugging Face Hub: search, a repository's GGUF files, downloads.

    GET    /api/hub/search?q=                       GGUF repositories, most downloaded first
    GET    /api/hub/repos/{owner}/{name}/files      its GGUF files: size, sha256, quantization
    POST   /api/downloads {"repo","file"[,"revision"]}  queue a download (202, its JSON)
    GET    /api/downloads                           every download and its progress
    POST   /api/downloads/{id}/pause                stop the transfer, keep its bytes
    POST   /api/downloads/{id}/resume               continue from the bytes on disk
    DELETE /api/downloads/{id}                      cancel: stop, delete the partial file (204)

The hub is HF_ENDPOINT (huggingface.co unless set). Downloads are server/models/hub/."""

from __future__ import annotations

import asyncio
import os

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from server.errors import BadRequestError
from server.http.jsonbody import read_object
from server.models import fit
from server.models.hub import names
from server.models.hub.downloads import Downloads
from server.routes.services import Services, services
from server.types.getting_models import DownloadJSON


def create_downloads(svc: Services) -> Downloads:
    """The app's downloads, on the hub HF_ENDPOINT names (read per app, not at import)."""
    settings = svc.settings
    return Downloads(
        svc.model_adder,
        settings.models_path,
        settings.data_dir / "downloads.json",
        os.environ.get("HF_ENDPOINT") or None,
        settings.limits.hub,
    )


def downloads_of(request: Request) -> Downloads:
    found: Downloads = request.app.state.downloads
    return found


def progress(request: Request) -> list[DownloadJSON]:
    """For GET /api/status."""
    return downloads_of(request).progress()


async def search(request: Request) -> JSONResponse:
    query = request.query_params.get("q", "")
    most = services(request).settings.limits.hub.max_query_chars
    if len(query) > most or any(ord(c) < 32 for c in query):
        raise BadRequestError(f"a search is at most {most} characters", code="invalid_query")
    repos = await downloads_of(request).catalog.search(query.strip())
    return JSONResponse({"repos": repos})


async def repo_files(request: Request) -> JSONResponse:
    """The files, each with whether it would fit this machine (from its size, at the
    context a local model gets by default: server/models/fit.py)."""
    svc = services(request)
    repo = names.repo_id(request.path_params["owner"], request.path_params["name"])
    listing = await downloads_of(request).catalog.files(repo)
    available = await asyncio.to_thread(fit.available_memory)
    for found in listing["files"]:
        if found["size_bytes"] is not None:
            context = svc.settings.local.n_ctx
            found["fit"] = fit.estimate_from_size(found["size_bytes"], context, available).json()
    return JSONResponse(listing)


async def start_download(request: Request) -> JSONResponse:
    body = await read_object(request, services(request).settings.limits)
    repo, file, revision = body.get("repo"), body.get("file"), body.get("revision")
    if not isinstance(repo, str) or not isinstance(file, str):
        raise BadRequestError("'repo' and 'file' are required strings", code="bad_request")
    if revision is not None and not isinstance(revision, str):
        raise BadRequestError("'revision' is a commit", code="invalid_revision")
    item = await downloads_of(request).start(repo, file, revision)
    return JSONResponse(item.progress(), status_code=202)


async def list_downloads(request: Request) -> JSONResponse:
    return JSONResponse({"downloads": progress(request)})


async def pause(request: Request) -> JSONResponse:
    item = await downloads_of(request).pause(request.path_params["id"])
    return JSONResponse(item.progress())


async def resume(request: Request) -> JSONResponse:
    item = await downloads_of(request).resume(request.path_params["id"])
    return JSONResponse(item.progress(), status_code=202)


async def cancel(request: Request) -> Response:
    await downloads_of(request).cancel(request.path_params["id"])
    return Response(status_code=204)


routes = [
    Route("/api/hub/search", search, methods=["GET"]),
    Route("/api/hub/repos/{owner}/{name}/files", repo_files, methods=["GET"]),
    Route("/api/downloads", start_download, methods=["POST"]),
    Route("/api/downloads", list_downloads, methods=["GET"]),
    Route("/api/downloads/{id}/pause", pause, methods=["POST"]),
    Route("/api/downloads/{id}/resume", resume, methods=["POST"]),
    Route("/api/downloads/{id}", cancel, methods=["DELETE"]),
]
