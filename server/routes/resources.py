"""The resources of the MCP servers, to browse, show and attach like a file.

    GET  /api/tools/servers/{name}/resources   → 200 {"resources": [{uri, name, title,
         description, mime, size}], "templates": [{uri_template, name, title, description,
         mime}]} (listed once per session, again after the server says they changed)
    GET  /api/tools/servers/{name}/resources/read?uri=URI   → 200 {"contents": [{uri, kind
         ("text"|"image"), mime, bytes, text, chars, note, data (an image's base64)}]}
    POST /api/tools/servers/{name}/resources/attach {"uri", "name"?}   → 201 {"attachments":
         [AttachmentJSON]}: its text as one attachment, each image (or PDF) as its own, made
         as uploads are (POST /api/attachments) and sent with a message by id the same way
    GET  /api/conversations/{id}/messages/{mid}/links?step=CALL_ID&uri=URI   → 200 as
         `read`: a resource a tool's result linked to (its step's `links`), read through
         the server that returned it, and only a URI that step's result gave

Errors: 404 no such server, conversation, message, step or link (or the server knows no such
resource: `resource_not_found`); 503 the server is not running (`server_not_ready`) or did
not answer in time (`resource_timeout`); 413 over the bound (`resource_too_large`); 400 a
content Parley does not take (`resource_unsupported`: a blob that is not what it says, nor
text, an image or a PDF); 502 the server refused (`resource_unreadable`).
"""

from __future__ import annotations

import base64

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from server.attachments.service import bounded
from server.errors import BadRequestError, NotFoundError, PayloadTooLargeError
from server.http.jsonbody import check_text, read_object, text_field
from server.limits import ToolLimits
from server.routes.services import Services, services
from server.tools.mcp_server import McpServer
from server.tools.resources import ResourceFile
from server.types import AttachmentJSON, PartJSON, ResourceLinkJSON
from server.types.tools import AttachedResourcesJSON, ResourceContentJSON, ResourceReadJSON


def tool_server(svc: Services, request: Request) -> McpServer:
    name: str = request.path_params["name"]
    server = svc.tools.servers.get(name)
    if server is None:
        raise NotFoundError(f"no MCP server named {name!r}")
    return server


def query_uri(request: Request) -> str:
    uri = request.query_params.get("uri")
    if not uri:
        raise BadRequestError("give the resource's URI: ?uri=", code="missing_field")
    check_text(uri, "uri")
    return uri


async def list_resources(request: Request) -> JSONResponse:
    svc = services(request)
    server = tool_server(svc, request)
    listing = await server.resources.listing(server.ready_client(), svc.settings.limits.tools)
    return JSONResponse(listing)


async def read_resource(request: Request) -> JSONResponse:
    svc = services(request)
    server = tool_server(svc, request)
    return JSONResponse(await _shown(svc, server, query_uri(request)))


async def attach_resource(request: Request) -> JSONResponse:
    svc = services(request)
    server = tool_server(svc, request)
    body = await read_object(request, svc.settings.limits)
    uri = text_field(body, "uri", max_chars=ToolLimits.uri_chars, required=True, allow_empty=False)
    name = text_field(body, "name", max_chars=ToolLimits.name_chars)
    assert uri is not None  # required
    files = await server.resources.read(server.ready_client(), uri, svc.settings.limits.tools)
    attached: AttachedResourcesJSON = {
        "attachments": await attach_files(
            svc, name or uri_name(uri), files, {"server": server.name, "uri": uri}
        )
    }
    return JSONResponse(attached, status_code=201)


async def open_link(request: Request) -> JSONResponse:
    """A result's link, through the server whose result gave it: the client names the step
    and the URI, never the server, so a link cannot send Parley to another server (nor to
    a file or URL of its own: a server reads its resources, Parley reads nothing)."""
    svc = services(request)
    cid: str = request.path_params["conversation_id"]
    mid: str = request.path_params["message_id"]
    step_id = request.query_params.get("step")
    if not step_id:
        raise BadRequestError("give the tool call's id: ?step=", code="missing_field")
    check_text(step_id, "step")
    uri = query_uri(request)
    parts = await _parts(svc, cid, mid)
    found = step_links(parts, step_id)
    if found is None:
        raise NotFoundError(f"no tool call {step_id!r} in message {mid!r}")
    server_name, links = found
    if not any(link["uri"] == uri for link in links):
        raise NotFoundError(
            f"the result of tool call {step_id!r} gave no link to {uri!r}", code="link_not_found"
        )
    server = svc.tools.servers.get(server_name)
    if server is None:
        raise NotFoundError(f"no MCP server named {server_name!r} any more")
    return JSONResponse(await _shown(svc, server, uri))


async def _parts(svc: Services, cid: str, mid: str) -> list[PartJSON]:
    """The message's parts: as its run holds them while it streams (a step's links are
    there before its checkpoint), else as saved."""
    for run in svc.runs.runs_of(cid):
        if run.id == mid:
            return run.buffer.all_json()
    message = await svc.store.get_message(cid, mid)
    if message is None:
        raise NotFoundError(f"no message with id {mid!r} in conversation {cid!r}")
    return message["parts"]


def step_links(parts: list[PartJSON], step_id: str) -> tuple[str, list[ResourceLinkJSON]] | None:
    """The server and the links of the tool step `step_id`, a sub-agent's steps included."""
    for part in parts:
        if part["type"] != "tool":
            continue
        if part["id"] == step_id:
            return part["server"], part.get("links", [])
        agent = part.get("agent")
        if agent is not None:
            found = step_links(agent["parts"], step_id)
            if found is not None:
                return found
    return None


async def _shown(svc: Services, server: McpServer, uri: str) -> ResourceReadJSON:
    files = await server.resources.read(server.ready_client(), uri, svc.settings.limits.tools)
    limits = svc.attachments.limits
    contents: list[ResourceContentJSON] = []
    for file in files:
        if file.kind == "text" and file.text is not None:
            text, chars, note = bounded(file.text, limits.max_chars)
            shown: ResourceContentJSON = {
                "uri": file.uri, "kind": "text", "mime": file.mime, "bytes": len(file.data),
                "text": text, "chars": chars, "note": note, "data": None,
            }  # fmt: skip
        elif file.kind == "image":
            if len(file.data) > limits.max_image_bytes:
                raise PayloadTooLargeError(
                    f"{file.uri} is larger than the {limits.max_image_bytes >> 20} MB an "
                    "image may be",
                    code="resource_too_large",
                )
            shown = {
                "uri": file.uri, "kind": "image", "mime": file.mime, "bytes": len(file.data),
                "text": None, "chars": None, "note": None,
                "data": base64.b64encode(file.data).decode("ascii"),
            }  # fmt: skip
        else:
            raise BadRequestError(
                f"{file.uri} is a PDF: attach it to read its text", code="resource_unsupported"
            )
        contents.append(shown)
    return {"contents": contents}


async def attach_files(
    svc: Services, name: str, files: list[ResourceFile], resource: dict[str, str] | None = None
) -> list[AttachmentJSON]:
    """Files of a server as uploads, through the attachments' own checks and bounds: the
    texts as one, each other file as its own; `resource`: the resource they are."""
    most = svc.attachments.limits.max_per_message
    texts = [f.text for f in files if f.kind == "text" and f.text is not None]
    others = [f for f in files if f.kind != "text"]
    if len(others) + (1 if texts else 0) > most:
        raise BadRequestError(
            f"{name!r} holds more files than the {most} a message may carry",
            code="resource_unsupported",
        )
    attached: list[AttachmentJSON] = []
    if texts:
        text = "\n\n".join(texts).encode("utf-8")
        attached.append(await svc.attachments.upload(name, text, resource))
    for number, file in enumerate(others, start=len(attached) + 1):
        attached.append(await svc.attachments.upload(_numbered(name, number), file.data, resource))
    return attached


def _numbered(name: str, number: int) -> str:
    return name if number == 1 else f"{name} ({number})"


def uri_name(uri: str) -> str:
    """A name for a resource attached by its URI alone: its last part."""
    tail = uri.rstrip("/").rsplit("/", 1)[-1]
    return tail or uri


routes = [
    Route("/api/tools/servers/{name}/resources", list_resources, methods=["GET"]),
    Route("/api/tools/servers/{name}/resources/read", read_resource, methods=["GET"]),
    Route("/api/tools/servers/{name}/resources/attach", attach_resource, methods=["POST"]),
    Route(
        "/api/conversations/{conversation_id}/messages/{message_id}/links",
        open_link,
        methods=["GET"],
    ),
]
