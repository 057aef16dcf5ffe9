"""The MCP servers the model may call (Settings → Tools).

    GET    /api/tools                  the configuration file, each server's state and tools
    PUT    /api/tools/servers/{name}   add or change a server (the entry's JSON); 200
    DELETE /api/tools/servers/{name}   remove a server (204); unknown → 404

Changes are written to the configuration file (server/tools/config.py) and take effect at
once: the server is (re)started or stopped in the background; a turn already running keeps
the tools it opened with, and a call to a server stopped meanwhile ends as an error step.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from server.errors import BadRequestError, NotFoundError, StorageError
from server.jsonbody import read_object
from server.services import services
from server.tools.config import ConfigEntryError, check_entry, check_name


async def list_tools(request: Request) -> JSONResponse:
    return JSONResponse(services(request).tools.describe())


async def put_server(request: Request) -> JSONResponse:
    svc = services(request)
    name: str = request.path_params["name"]
    body = await read_object(request, svc.settings.limits)
    try:
        check_name(name)
        config = check_entry(body)
        server = await svc.tools.put(name, config)
    except ConfigEntryError as exc:
        raise BadRequestError(str(exc), code="invalid_field") from exc
    except OSError as exc:
        where = svc.tools.config.path
        raise StorageError(f"could not write the MCP configuration {where}: {exc}") from exc
    return JSONResponse(server.json())


async def delete_server(request: Request) -> Response:
    svc = services(request)
    name: str = request.path_params["name"]
    try:
        removed = await svc.tools.remove(name)
    except ConfigEntryError as exc:
        raise BadRequestError(str(exc), code="invalid_field") from exc
    except OSError as exc:
        where = svc.tools.config.path
        raise StorageError(f"could not write the MCP configuration {where}: {exc}") from exc
    if not removed:
        raise NotFoundError(f"no MCP server named {name!r}")
    return Response(status_code=204)


routes = [
    Route("/api/tools", list_tools, methods=["GET"]),
    Route("/api/tools/servers/{name}", put_server, methods=["PUT"]),
    Route("/api/tools/servers/{name}", delete_server, methods=["DELETE"]),
]
