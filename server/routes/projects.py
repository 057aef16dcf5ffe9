"""Projects: chats grouped with their own instructions and library folders.

GET    /api/projects                      every project, by name, each with its count of chats
POST   /api/projects {"name", "instructions"?, "folders"?, "confirm"?}   a new project (201)
GET    /api/projects/{id}                 one project
PATCH  /api/projects/{id} {"name"?, "instructions"?, "folders"?, "confirm"?}   rename it, set
                                          its instructions, set its library folders
DELETE /api/projects/{id}?chats=refuse|move|delete   delete it (204). Its chats: `refuse`
                                          (the default) answers 409 `project_not_empty` while
                                          it has any; `move` takes them out of every project;
                                          `delete` deletes them with it (their replies stopped)
PUT    /api/conversations/{id}/project {"project_id": id | null}   move a chat into a project,
                                          or out of every project (null); the chat (200)

A chat is created in a project with `POST /api/conversations {"project_id"}`, and listed or
searched within one with `GET /api/conversations?project=<id>` (`project=none`: the chats
outside every project): server/routes/conversations.py. `folders` are library folders, or
folders added to the library as the Library panel adds them (server/projects/folders.py).
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from server.errors import BadRequestError, NotFoundError
from server.http.jsonbody import read_object, text_field
from server.limits import ProjectLimits
from server.projects import fields
from server.projects.folders import library_folders
from server.routes.services import Services, services
from server.types.projects import ProjectJSON, ProjectListJSON


def _id(request: Request) -> str:
    value: str = request.path_params["project_id"]
    return value


def no_project(project_id: str) -> NotFoundError:
    return NotFoundError(f"no project with id {project_id!r}")


async def list_projects(request: Request) -> JSONResponse:
    listed: ProjectListJSON = {"projects": await services(request).store.projects.list_all()}
    return JSONResponse(listed)


async def create_project(request: Request) -> JSONResponse:
    svc = services(request)
    limits = svc.settings.limits
    body = await read_object(request, limits)
    name = fields.name(body, limits.projects, required=True) or ""
    instructions = fields.instructions(body, limits.projects) or ""
    folders = await _folders(svc, body)
    project = await svc.store.projects.create(name, instructions, folders or [])
    return JSONResponse(project, status_code=201)


async def get_project(request: Request) -> JSONResponse:
    project = await services(request).store.projects.get(_id(request))
    if project is None:
        raise no_project(_id(request))
    return JSONResponse(project)


async def update_project(request: Request) -> JSONResponse:
    """Every field is checked (and the folders found in the library, or added to it)
    before anything of the project is changed."""
    svc = services(request)
    limits = svc.settings.limits
    body = await read_object(request, limits)
    if not any(key in body for key in ("name", "instructions", "folders")):
        raise BadRequestError("give a 'name', 'instructions' or 'folders'", code="invalid_field")
    name = fields.name(body, limits.projects, required=False)
    if "name" in body and name is None:
        raise BadRequestError("'name' must not be empty", code="invalid_field")
    instructions = fields.instructions(body, limits.projects)
    if await svc.store.projects.get(_id(request)) is None:
        raise no_project(_id(request))  # before a folder is added to the library for it
    folders = await _folders(svc, body)
    project: ProjectJSON | None = await svc.store.projects.update(
        _id(request), name=name, instructions=instructions, folders=folders
    )
    if project is None:  # deleted meanwhile
        raise no_project(_id(request))
    return JSONResponse(project)


async def _folders(svc: Services, body: dict[str, object]) -> list[str] | None:
    paths = fields.folders(body, svc.settings.limits.projects)
    if paths is None:
        return None
    return await library_folders(svc.library, paths, confirmed=fields.confirm(body))


async def delete_project(request: Request) -> Response:
    svc = services(request)
    project_id = _id(request)
    chats = fields.chats(request.query_params.get("chats"))
    if chats == "delete":
        # As deleting one chat does: its replies end (and are saved) before its rows go.
        for conversation_id in await svc.store.projects.chats_of(project_id):
            for run in svc.runs.runs_of(conversation_id):
                run.stop("client_hangup")
                await run.wait_done()
    deleted = await svc.store.projects.delete(project_id, chats)
    if deleted is None:
        raise no_project(project_id)
    for conversation_id in deleted:
        svc.runs.grants.forget(conversation_id)
    return Response(status_code=204)


async def move_conversation(request: Request) -> JSONResponse:
    """Its next turns are given the new project's instructions and documents; what it said
    before stays as it was."""
    svc = services(request)
    body = await read_object(request, svc.settings.limits)
    if "project_id" not in body:
        raise BadRequestError("'project_id' is required (null: no project)", code="missing_field")
    project_id = text_field(
        body, "project_id", max_chars=ProjectLimits.max_id_chars, allow_empty=False
    )
    conversation_id: str = request.path_params["conversation_id"]
    conversation = await svc.store.projects.move(conversation_id, project_id)
    if conversation is None:
        raise NotFoundError(f"no conversation with id {conversation_id!r}")
    return JSONResponse(conversation)


routes = [
    Route("/api/projects", list_projects, methods=["GET"]),
    Route("/api/projects", create_project, methods=["POST"]),
    Route("/api/projects/{project_id}", get_project, methods=["GET"]),
    Route("/api/projects/{project_id}", update_project, methods=["PATCH"]),
    Route("/api/projects/{project_id}", delete_project, methods=["DELETE"]),
    Route("/api/conversations/{conversation_id}/project", move_conversation, methods=["PUT"]),
]
