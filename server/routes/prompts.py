"""The prompts of the MCP servers: the composer's slash commands.

    GET  /api/tools/servers/{name}/prompts   → 200 {"prompts": [{name, title, description,
         arguments: [{name, title, description, required}]}]} (listed once per session,
         again after the server says they changed)
    POST /api/tools/servers/{name}/prompts/{prompt} {"arguments": {NAME: "value"}}   → 200
         {description, messages: [{role ("user"|"assistant"), text}], attachments:
         [AttachmentJSON], note}: the prompt filled in by its server (`prompts/get`) for the
         composer; its images (and embedded files) are uploads made as POST /api/attachments
         makes them, sent with the message by id; `note` says what was left out (audio, a
         resource link, text past what an attached file gives the model)

Errors: 404 no such server or prompt; 400 an argument the prompt does not take, or a
required one missing (`missing_field`), or a value that is not a string; 503 the server is
not running (`server_not_ready`) or did not answer in time (`resource_timeout`); 502 the
server refused; 413 and 400 a file of the prompt as for a resource (server/routes/resources.py).
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from server.errors import BadRequestError
from server.http.jsonbody import JSONObject, check_text, read_object
from server.limits import ToolLimits
from server.routes.resources import attach_files, tool_server
from server.routes.services import services
from server.types.tools import PromptResultJSON


async def list_prompts(request: Request) -> JSONResponse:
    svc = services(request)
    server = tool_server(svc, request)
    listing = await server.prompts.listing(server.ready_client(), svc.settings.limits.tools)
    return JSONResponse(listing)


async def get_prompt(request: Request) -> JSONResponse:
    svc = services(request)
    server = tool_server(svc, request)
    name: str = request.path_params["prompt"]
    check_text(name, "prompt")
    limits = svc.settings.limits
    arguments = _arguments(await read_object(request, limits), limits.tools)
    filled = await server.prompts.get(
        server.ready_client(), name, arguments, limits.tools, limits.attachments.max_chars
    )
    result: PromptResultJSON = {
        "description": filled.description,
        "messages": filled.messages,
        "attachments": await attach_files(svc, name, filled.files),
        "note": ("left out: " + "; ".join(filled.left_out)) if filled.left_out else None,
    }
    return JSONResponse(result)


def _arguments(body: JSONObject, limits: ToolLimits) -> dict[str, str]:
    value = body.get("arguments")
    if value is None:
        return {}
    if not isinstance(value, dict) or len(value) > limits.prompt_arguments:
        raise BadRequestError(
            f"'arguments' must be an object of at most {limits.prompt_arguments} strings",
            code="invalid_field",
        )
    arguments: dict[str, str] = {}
    for key, given in value.items():
        if not isinstance(given, str) or len(given) > limits.prompt_argument_chars:
            raise BadRequestError(
                f"the argument {key!r} must be a string of at most "
                f"{limits.prompt_argument_chars:,} characters",
                code="invalid_field",
            )
        check_text(key, "an argument's name")
        check_text(given, f"the argument {key!r}")
        arguments[key] = given
    return arguments


routes = [
    Route("/api/tools/servers/{name}/prompts", list_prompts, methods=["GET"]),
    Route("/api/tools/servers/{name}/prompts/{prompt:path}", get_prompt, methods=["POST"]),
]
