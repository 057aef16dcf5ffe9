"""The MCP servers the model may call (Settings → Tools).

    GET    /api/tools                  the configuration file, each server's state and tools
    PUT    /api/tools/servers/{name}   add or change a server (the entry's JSON); 200
    DELETE /api/tools/servers/{name}   remove a server (204); unknown → 404
    PUT    /api/tools/servers/{name}/tools/{tool}   {"trust": "ask"|"chat"|"allow"|"never"|null,
                                       "effect": {"readOnly", "destructive", "openWorld"}|null}
                                       one tool's trust (null: its server's) and what it can do
                                       (null: what its annotations say); either or both; 200
    PUT    /api/tools/servers/{name}/guard   {"guard": true|false}: the injection guard on (the
                                       default) or off for the server's tools; 200
    GET    /api/tools/found            the servers other apps (Claude Desktop, Cursor, VS Code,
                                       Windsurf) are set up with, secrets masked
    POST   /api/tools/found            {"path", "name", "as"}: add that app's entry `name` as
                                       Parley's server `as`, read again from its file; 200

Changes are written to the configuration file (server/tools/config.py) and take effect at
once: the server is (re)started or stopped in the background; a turn already running keeps
the tools it opened with, and a call to a server stopped meanwhile ends as an error step.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import anyio
import anyio.to_thread
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from server.errors import (
    BadRequestError,
    ConfigChangingError,
    ConfigEntryError,
    ConflictError,
    NotFoundError,
    StorageError,
    UnavailableError,
)
from server.http.jsonbody import read_object
from server.routes.services import Services, services
from server.tools import importing
from server.tools.config import TOOL_TRUSTS, check_entry, check_name


async def list_tools(request: Request) -> JSONResponse:
    return JSONResponse(services(request).tools.describe())


async def put_server(request: Request) -> JSONResponse:
    svc = services(request)
    name: str = request.path_params["name"]
    body = await read_object(request, svc.settings.limits)
    with config_change(svc):
        check_name(name)
        config = check_entry(body)
        server = await svc.tools.put(name, config)
    return JSONResponse(server.json())


async def delete_server(request: Request) -> Response:
    svc = services(request)
    name: str = request.path_params["name"]
    with config_change(svc):
        removed = await svc.tools.remove(name)
    if not removed:
        raise NotFoundError(f"no MCP server named {name!r}")
    return Response(status_code=204)


async def put_tool_trust(request: Request) -> JSONResponse:
    """Settings' per-tool trust and the user's word on what the tool can do: written to the
    server's entry (`toolTrust`, `toolEffect`) and used from the next call on, without
    restarting the server."""
    svc = services(request)
    name: str = request.path_params["name"]
    tool: str = request.path_params["tool"]
    body = await read_object(request, svc.settings.limits)
    if "trust" not in body and "effect" not in body:
        raise BadRequestError("'trust' or 'effect' is required", code="missing_field")
    values: dict[str, object] = {}
    if "trust" in body:
        trust = body["trust"]
        if trust is not None and trust not in TOOL_TRUSTS:
            allowed = ", ".join(f'"{t}"' for t in TOOL_TRUSTS)
            raise BadRequestError(
                f"'trust' must be one of {allowed}, or null", code="invalid_field"
            )
        values["toolTrust"] = trust
    if "effect" in body:
        values["toolEffect"] = body["effect"]
    with config_change(svc):
        server = await svc.tools.set_per_tool(name, tool, values)
    if server is None:
        raise NotFoundError(f"no MCP server named {name!r}")
    return JSONResponse(server.json())


async def put_guard(request: Request) -> JSONResponse:
    """The server's switch of the injection guard (`"guard": false` in its entry when off),
    used from the next call on, without restarting the server."""
    svc = services(request)
    name: str = request.path_params["name"]
    on = (await read_object(request, svc.settings.limits)).get("guard")
    if not isinstance(on, bool):
        raise BadRequestError("'guard' must be true or false", code="invalid_field")
    with config_change(svc):
        server = await svc.tools.set_guard(name, on)
    if server is None:
        raise NotFoundError(f"no MCP server named {name!r}")
    return JSONResponse(server.json())


async def found_servers(request: Request) -> JSONResponse:
    limits = services(request).settings.limits.tools
    # Other programs' files: read on a worker thread, each read within its own bounds; an
    # open that hangs (a stale network mount) is left behind, not waited for.
    try:
        with anyio.fail_after(limits.import_read * 2):
            found = await anyio.to_thread.run_sync(
                importing.find_all, Path.home(), limits, abandon_on_cancel=True
            )
    except TimeoutError as exc:
        raise UnavailableError("other apps' configuration files took too long to read") from exc
    return JSONResponse(found)


async def add_found_server(request: Request) -> JSONResponse:
    """Add another app's entry: read again from its file here (the list's secrets were
    masked), checked as any entry, saved under the name the user chose."""
    svc = services(request)
    body = await read_object(request, svc.settings.limits)
    fields = [body.get(key) for key in ("path", "name", "as")]
    if not all(isinstance(value, str) and value for value in fields):
        raise BadRequestError("'path', 'name' and 'as' are required strings", code="missing_field")
    path, name, as_name = (str(value) for value in fields)
    limits = svc.settings.limits.tools
    try:
        with config_change(svc, entry=name):
            check_name(as_name)
            config = await anyio.to_thread.run_sync(
                importing.entry_to_add, Path.home(), path, name, limits
            )
            server = await svc.tools.put(as_name, config)
    except LookupError as exc:
        raise NotFoundError(str(exc)) from exc
    return JSONResponse(server.json())


@contextlib.contextmanager
def config_change(svc: Services, entry: str = "") -> Iterator[None]:
    """A change to the configuration file, its failures as the API says them: the file
    changing under it (409), an entry it refuses (400, named after `entry` when given), a
    write that fails (503)."""
    try:
        yield
    except ConfigChangingError as exc:
        raise ConflictError(str(exc), code="config_changing") from exc
    except ConfigEntryError as exc:
        said = f"{entry}: {exc}" if entry else str(exc)
        raise BadRequestError(said, code="invalid_field") from exc
    except OSError as exc:
        where = svc.tools.config.path
        raise StorageError(f"could not write the MCP configuration {where}: {exc}") from exc


routes = [
    Route("/api/tools", list_tools, methods=["GET"]),
    Route("/api/tools/servers/{name}", put_server, methods=["PUT"]),
    Route("/api/tools/servers/{name}", delete_server, methods=["DELETE"]),
    Route("/api/tools/servers/{name}/tools/{tool}", put_tool_trust, methods=["PUT"]),
    Route("/api/tools/servers/{name}/guard", put_guard, methods=["PUT"]),
    Route("/api/tools/found", found_servers, methods=["GET"]),
    Route("/api/tools/found", add_found_server, methods=["POST"]),
]
