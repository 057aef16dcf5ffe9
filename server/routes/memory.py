"""What the assistant remembers (server/memory/): one Markdown file for the chats outside any
project, one per project. The app shows it, edits it, forgets a line, deletes it; the user may
do the same in any editor, and nothing they save is ever overwritten.

GET    /api/memory                              → 200 MemoryJSON: the file of the chats
       outside any project: its text, its lines with the chat each came from, its path (to
       open it in an editor), its `version`; `error` (and no text) when Parley will not read
       it (larger than `max_bytes`, not text, a link): the file is then left as it is
GET    /api/memory/projects/{project_id}        → the same for a project (404 no such project)
GET    /api/conversations/{id}/memory           → the memory of that chat's scope
PUT    /api/memory[/projects/{project_id}] {"text", "version"}  → 200 MemoryJSON: the whole
       text, saved only if the file is still `version` (null: there was none); else 409
       `memory_changed` and nothing is written (read it again); 409 `memory_unreadable`
DELETE /api/memory[/projects/{project_id}]/lines/{line_id}  → 200 MemoryJSON: "Forget": every
       line with that id (the same text) removed, the rest of the file byte for byte as it
       is, a hand edit made meanwhile kept; 404 no such line
DELETE /api/memory[/projects/{project_id}][?version=]       → 204: the file deleted (only
       while it is `version`, when given: else 409 `memory_changed`); 404 there is none
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from server.errors import BadRequestError, MemoryFileError, NotFoundError
from server.http.jsonbody import check_text, read_object, text_field
from server.memory import format
from server.memory.files import MemoryFile, unreadable_json
from server.routes.services import Services, services

VERSION_CHARS = 64  # a SHA-256 in hex


async def _scope(request: Request, svc: Services, *, known: bool = True) -> str | None:
    """The project named in the path (None: the chats outside any project). `known`: it
    must be a project (a deleted project's file can still be deleted)."""
    project_id: str | None = request.path_params.get("project_id")
    if project_id is not None and known and await svc.store.projects.get(project_id) is None:
        raise NotFoundError(f"no project with id {project_id!r}")
    return project_id


def _file(svc: Services, project_id: str | None) -> MemoryFile:
    return MemoryFile(svc.settings.data_dir, project_id, svc.settings.limits.memory)


async def _shown(svc: Services, project_id: str | None) -> JSONResponse:
    memory = _file(svc, project_id)
    limit = svc.settings.limits.memory.max_bytes
    try:
        found = await memory.read()
    except MemoryFileError as exc:
        return JSONResponse(unreadable_json(memory.path, project_id, exc.message, limit))
    return JSONResponse(found.json(limit))


async def get_memory(request: Request) -> JSONResponse:
    svc = services(request)
    return await _shown(svc, await _scope(request, svc))


async def get_chat_memory(request: Request) -> JSONResponse:
    svc = services(request)
    cid: str = request.path_params["conversation_id"]
    if await svc.store.find_conversation(cid) is None:
        raise NotFoundError(f"no conversation with id {cid!r}")
    return await _shown(svc, await svc.store.project_of(cid))


async def put_memory(request: Request) -> JSONResponse:
    svc = services(request)
    project_id = await _scope(request, svc)
    limits = svc.settings.limits
    body = await read_object(request, limits)
    text = text_field(body, "text", max_chars=limits.memory.max_bytes, required=True) or ""
    if "version" not in body:
        raise BadRequestError(
            "give the 'version' the text was read at (null: there was no file)",
            code="invalid_field",
        )
    version = text_field(body, "version", max_chars=VERSION_CHARS)
    try:
        format.decoded(text.encode("utf-8"))  # what could be saved but never read back
    except ValueError as exc:
        raise BadRequestError(f"'text' cannot be kept: {exc}", code="invalid_field") from None
    saved = await _file(svc, project_id).replace(text, version)
    return JSONResponse(saved.json(limits.memory.max_bytes))


async def forget_line(request: Request) -> JSONResponse:
    svc = services(request)
    project_id = await _scope(request, svc)
    line_id: str = request.path_params["line_id"]
    found: list[bool] = []

    def forget(text: str) -> str | None:
        changed = format.without(text, line_id)
        found[:] = [changed is not None]
        return changed

    saved = await _file(svc, project_id).change(forget)
    if not (found and found[0]):
        raise NotFoundError(f"no line {line_id!r} in {saved.path}")
    return JSONResponse(saved.json(svc.settings.limits.memory.max_bytes))


async def delete_memory(request: Request) -> Response:
    svc = services(request)
    project_id = await _scope(request, svc, known=False)
    version = request.query_params.get("version")
    if version is not None:
        check_text(version, "version")
    memory = _file(svc, project_id)
    if not await memory.delete(version):
        raise NotFoundError(f"there is no memory file {memory.path}")
    return Response(status_code=204)


def _both(
    path: str, endpoint: Callable[[Request], Awaitable[Response]], methods: list[str]
) -> list[Route]:
    """The route for the chats outside any project, and for a project."""
    project = path.replace("/api/memory", "/api/memory/projects/{project_id}", 1)
    return [Route(path, endpoint, methods=methods), Route(project, endpoint, methods=methods)]


routes = [
    *_both("/api/memory", get_memory, ["GET"]),
    *_both("/api/memory", put_memory, ["PUT"]),
    *_both("/api/memory", delete_memory, ["DELETE"]),
    *_both("/api/memory/lines/{line_id}", forget_line, ["DELETE"]),
    Route("/api/conversations/{conversation_id}/memory", get_chat_memory, methods=["GET"]),
]
