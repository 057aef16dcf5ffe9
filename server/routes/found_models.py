"""The GGUF files already on disk (LM Studio's, Ollama's, the HF cache's, the user's folders),
used in place, never copied (server/models/discovery/).

    GET    /api/models/found                 the files found, each once, with every place
    POST   /api/models/found/add {"path", "name"?}   add one as a model (201), loaded in place;
                                             not found on disk → 404; a model already → 409
    GET    /api/models/folders               the user's folders of GGUF files
    POST   /api/models/folders {"path"}      add one (201); not a folder, or /proc… → 400
    DELETE /api/models/folders?path=…        remove one (204); not listed → 404
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from server.errors import (
    BadRequestError,
    ConflictError,
    FolderListFullError,
    NotFoundError,
    StorageError,
)
from server.http.jsonbody import path_field, read_object, text_field
from server.library import sensitive
from server.limits import Limits
from server.models.discovery.found import FoundFile
from server.models.discovery.service import Discovery, models_by_file
from server.routes.services import services
from server.types.getting_models import FoundModelJSON, ModelFolderJSON


async def discovery(request: Request) -> Discovery:
    """The app's one Discovery, made at first use (its folders file read off the loop)."""
    state = request.app.state
    found: Discovery | None = getattr(state, "discovery", None)
    if found is None:
        made = await asyncio.to_thread(Discovery, services(request).settings.data_dir)
        found = getattr(state, "discovery", None) or made  # another request's, if first
        state.discovery = found
    return found


async def list_found(request: Request) -> JSONResponse:
    svc = services(request)
    finder = await discovery(request)
    result = await finder.scan()
    models = await asyncio.to_thread(models_by_file, svc.models)
    return JSONResponse(
        {
            "found": [_found_json(found, models) for found in result.found],
            "complete": result.complete,
            "stopped": result.stopped,
            "skipped": [{"path": s.path, "reason": s.reason} for s in result.skipped],
            "skipped_count": result.skipped_count,
            "looked_in": [
                {"source": root.source, "path": root.path, "exists": there}
                for root, there in result.roots
            ],
            "seconds": round(result.seconds, 3),
        }
    )


async def add_found(request: Request) -> JSONResponse:
    svc = services(request)
    body = await read_object(request, svc.settings.limits)
    path = str(path_field(body))
    name = text_field(body, "name", max_chars=svc.settings.limits.max_title_chars)
    found = await _found(await discovery(request), path)
    entry = await svc.model_adder.add(Path(path), name=name or _model_name(found.name))
    added = _found_json(found, {})
    added["model"] = entry.name
    return JSONResponse(added, status_code=201)


async def _found(finder: Discovery, path: str) -> FoundFile:
    """The file found at `path` in the last scan, or in a new one. Raises NotFoundError."""
    found = finder.last.find(path) if finder.last is not None else None
    if found is None:
        found = (await finder.scan()).find(path)
    if found is None:
        raise NotFoundError(
            f"{path} is not a GGUF file found on disk (GET /api/models/found lists them; "
            "POST /api/models/local adds any GGUF file)",
            code="not_found_on_disk",
        )
    return found


def _model_name(found_name: str) -> str:
    """A model's name must fit in a URL's one segment (/api/models/{name}): Ollama's
    "namespace/model:tag" becomes "model:tag"."""
    return found_name.rsplit("/", 1)[-1]


def _found_json(found: FoundFile, models: dict[tuple[int, int], str]) -> FoundModelJSON:
    return {
        "name": found.name,
        "path": found.path,
        "found_in": [{"source": p.source, "place": p.place, "path": p.path} for p in found.places],
        "size_bytes": found.size_bytes,
        "parts": found.parts,
        "quantization": found.quantization,
        "architecture": found.architecture,
        "context_length": found.context_length,
        "model": models.get((found.device, found.inode)),
    }


async def list_folders(request: Request) -> JSONResponse:
    finder = await discovery(request)
    folders = finder.folders.folders
    return JSONResponse({"folders": await asyncio.to_thread(_folders_json, folders)})


def _folders_json(folders: list[str]) -> list[ModelFolderJSON]:
    return [{"path": folder, "exists": os.path.isdir(folder)} for folder in folders]


async def add_folder(request: Request) -> JSONResponse:
    svc = services(request)
    body = await read_object(request, svc.settings.limits)
    path = path_field(body)
    resolved = await asyncio.to_thread(_folder, path)
    refused = sensitive.refusal(resolved)
    if refused is not None:
        raise BadRequestError(refused, code="invalid_field")
    finder = await discovery(request)
    folders = finder.folders
    try:
        added = await asyncio.to_thread(folders.add, str(resolved))
        finder.changes += 1
    except FolderListFullError as exc:
        raise BadRequestError(f"cannot add {resolved}: {exc}", code="too_many_folders") from exc
    except OSError as exc:
        raise StorageError(f"could not remember the folder in {folders.path}: {exc}") from exc
    if not added:
        raise ConflictError(f"{resolved} is listed already", code="folder_exists")
    return JSONResponse({"path": str(resolved), "exists": True}, status_code=201)


def _folder(path: Path) -> Path:
    resolved = path.resolve()
    if not resolved.is_dir():
        raise BadRequestError(f"{path} is not a folder", code="invalid_field")
    return resolved


async def remove_folder(request: Request) -> Response:
    path = request.query_params.get("path", "")
    if not path or len(path) > Limits.max_path_chars:
        raise BadRequestError("give the folder as ?path=", code="invalid_field")
    finder = await discovery(request)
    folders = finder.folders
    try:
        removed = await asyncio.to_thread(folders.remove, path)
        finder.changes += 1
    except OSError as exc:
        raise StorageError(f"could not forget the folder in {folders.path}: {exc}") from exc
    if not removed:
        raise NotFoundError(f"{path} is not one of the folders", code="folder_not_found")
    return Response(status_code=204)


routes = [
    Route("/api/models/found", list_found, methods=["GET"]),
    Route("/api/models/found/add", add_found, methods=["POST"]),
    Route("/api/models/folders", list_folders, methods=["GET"]),
    Route("/api/models/folders", add_folder, methods=["POST"]),
    Route("/api/models/folders", remove_folder, methods=["DELETE"]),
]
