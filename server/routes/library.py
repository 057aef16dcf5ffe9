"""The user's documents (the Library panel; the agent's search).

GET    /api/library                   folders with counts and skipped files; progress
POST   /api/library/folders {"path", "confirm"?}  add a folder (201): indexed in the
                                      background; 409 `sensitive_folder` for a hidden folder
                                      or one that holds secrets, unless "confirm": true
DELETE /api/library/folders/{id}      remove it and its index entries (204); 404 unknown
GET    /api/library/search?q=&k=      the best passages for a question (k: 1-20, 5)
GET    /api/library/source?path=&first=&last=   a cited file's lines, read again only if a
                                      folder of the library holds it now (SourceJSON)
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from server.errors import BadRequestError, ConflictError, NotFoundError
from server.http.jsonbody import check_text, path_field, read_object
from server.library import sensitive
from server.limits import Limits
from server.routes.services import services


async def get_library(request: Request) -> JSONResponse:
    return JSONResponse(await services(request).library.describe())


async def add_folder(request: Request) -> JSONResponse:
    svc = services(request)
    body = await read_object(request, svc.settings.limits)
    path = path_field(body)
    confirmed = body.get("confirm", False)
    if not isinstance(confirmed, bool):
        raise BadRequestError("'confirm' must be true or false", code="invalid_field")
    resolved = await asyncio.to_thread(_folder, path)
    refused = sensitive.refusal(resolved)
    if refused is not None:
        raise BadRequestError(refused, code="invalid_field")
    warned = sensitive.warning(resolved, await asyncio.to_thread(Path.home))
    if warned is not None and not confirmed:
        raise ConflictError(warned, code="sensitive_folder")
    folder = await svc.library.add_folder(str(resolved))
    if folder is None:
        raise ConflictError(f"{resolved} is in the library already", code="folder_exists")
    return JSONResponse(folder, status_code=201)


def _folder(path: Path) -> Path:
    resolved = path.resolve()
    if not resolved.is_dir():
        raise BadRequestError(f"{path} is not a folder", code="invalid_field")
    return resolved


async def remove_folder(request: Request) -> Response:
    folder_id: str = request.path_params["folder_id"]
    if not await services(request).library.remove_folder(folder_id):
        raise NotFoundError(f"no folder with id {folder_id!r} in the library")
    return Response(status_code=204)


async def search(request: Request) -> JSONResponse:
    query = request.query_params.get("q", "")
    check_text(query, "q")
    if not query.strip() or len(query) > 2000:
        raise BadRequestError("'q' must be 1-2000 characters", code="invalid_field")
    raw_k = request.query_params.get("k", "5")
    svc = services(request)
    most = svc.settings.limits.library.max_k
    if not raw_k.isdigit() or not 1 <= int(raw_k) <= most:
        raise BadRequestError(f"'k' must be 1-{most}", code="invalid_field")
    passages = await svc.library.search(query, int(raw_k))
    return JSONResponse({"passages": passages})


async def source(request: Request) -> JSONResponse:
    path = request.query_params.get("path", "")
    check_text(path, "path")
    if not 0 < len(path) <= Limits.max_path_chars or "\x00" in path:
        raise BadRequestError(
            f"'path' must be 1-{Limits.max_path_chars} characters", code="invalid_field"
        )
    first, last = _line(request, "first"), _line(request, "last")
    if (first is None) != (last is None) or (first and last and first > last):
        raise BadRequestError("give 'first' and 'last' lines, first <= last", code="invalid_field")
    return JSONResponse(await services(request).library.source(path, first, last))


def _line(request: Request, name: str) -> int | None:
    raw = request.query_params.get(name)
    if raw is None:
        return None
    if not (raw.isdigit() and len(raw) <= 9 and int(raw) >= 1):
        raise BadRequestError(f"'{name}' must be a line number (1 or more)", code="invalid_field")
    return int(raw)


routes = [
    Route("/api/library", get_library, methods=["GET"]),
    Route("/api/library/folders", add_folder, methods=["POST"]),
    Route("/api/library/folders/{folder_id}", remove_folder, methods=["DELETE"]),
    Route("/api/library/search", search, methods=["GET"]),
    Route("/api/library/source", source, methods=["GET"]),
]
