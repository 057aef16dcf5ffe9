"""The MCP servers the model may call (Settings → Tools).

    GET    /api/tools                  the configuration file, each server's state and tools
    PUT    /api/tools/servers/{name}   add or change a server (the entry's JSON); 200
    DELETE /api/tools/servers/{name}   remove a server (204); unknown → 404
    PUT    /api/tools/servers/{name}/tools/{tool}   {"trust": "ask"|"chat"|"allow"|"never"|null}
                                       one tool's trust (null: its server's); 200 the server

Changes are written to the configuration file (server/tools/config.py) and take effect at
once: the server is (re)started or stopped in the background; a turn already running keeps
the tools it opened with, and a call to a server stopped meanwhile ends as an error step.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from server.errors import BadRequestError, ConfigEntryError, NotFoundError, StorageError
from server.http.jsonbody import read_object
from server.routes.services import services
from server.tools.config import TOOL_TRUSTS, check_entry, check_name


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


async def put_tool_trust(request: Request) -> JSONResponse:
    """Settings' per-tool trust: written to the server's entry (`toolTrust`) and used from
    the next call on, without restarting the server."""
    svc = services(request)
    name: str = request.path_params["name"]
    tool: str = request.path_params["tool"]
    body = await read_object(request, svc.settings.limits)
    if "trust" not in body:
        raise BadRequestError("'trust' is required", code="missing_field")
    trust = body["trust"]
    if trust is not None and trust not in TOOL_TRUSTS:
        allowed = ", ".join(f'"{t}"' for t in TOOL_TRUSTS)
        raise BadRequestError(f"'trust' must be one of {allowed}, or null", code="invalid_field")
    try:
        server = await svc.tools.set_tool_trust(name, tool, trust)
    except ConfigEntryError as exc:
        raise BadRequestError(str(exc), code="invalid_field") from exc
    except OSError as exc:
        where = svc.tools.config.path
        raise StorageError(f"could not write the MCP configuration {where}: {exc}") from exc
    if server is None:
        raise NotFoundError(f"no MCP server named {name!r}")
    return JSONResponse(server.json())


routes = [
    Route("/api/tools", list_tools, methods=["GET"]),
    Route("/api/tools/servers/{name}", put_server, methods=["PUT"]),
    Route("/api/tools/servers/{name}", delete_server, methods=["DELETE"]),
    Route("/api/tools/servers/{name}/tools/{tool}", put_tool_trust, methods=["PUT"]),
]
