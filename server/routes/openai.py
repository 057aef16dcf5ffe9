"""The OpenAI-compatible API: `/v1/models` and `/v1/chat/completions`.

Stateless (the client sends the whole history), but every completion is a run on the same
path as a conversation turn: the model's lease, the real interrupt on hang-up, one settle.
`tools` pass through to the model and its calls come back to the client, which runs its
own tools (Parley's MCP servers are for its own conversations).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from server.errors import BadRequestError
from server.http.jsonbody import JSONObject, check_text, number_field, read_object, string_list
from server.models.base import ChatRequest
from server.routes.services import services
from server.settings import Limits
from server.turns.completions import ChunkWriter
from server.turns.responses import RunCompletion, RunEventStream, RunResponse
from server.types import ChatMessage, ImageJSON, Role, ToolCallJSON

FUNCTION_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
ROLES: dict[str, Role] = {
    "system": "system",
    "developer": "system",
    "user": "user",
    "assistant": "assistant",
    "tool": "tool",
}


@dataclass(frozen=True)
class CompletionCall:
    model: str | None
    stream: bool
    request: ChatRequest


async def list_models(request: Request) -> JSONResponse:
    entries = services(request).models.entries()
    data = [
        {"id": e.name, "object": "model", "created": 0, "owned_by": e.backend.kind} for e in entries
    ]
    return JSONResponse({"object": "list", "data": data})


async def chat_completions(request: Request) -> RunResponse:
    svc = services(request)
    body = await read_object(request, svc.settings.limits)
    call = parse_call(body, svc.settings.limits)
    model = svc.models.resolve(call.model)
    if model.backend.images_unsupported and any(m.get("images") for m in call.request.messages):
        raise BadRequestError(model.backend.images_unsupported, code="images_not_supported")
    await model.backend.admit(call.request)
    unsupported = model.backend.tools_unsupported
    if call.request.tools and unsupported and call.request.tool_choice != "none":
        raise BadRequestError(unsupported, code="tools_not_supported")
    run = svc.runs.start_stateless(model, call.request)
    writer = ChunkWriter(run.id, model.name)
    if call.stream:
        return RunEventStream(run, writer)
    return RunCompletion(run, writer)


def parse_call(body: JSONObject, limits: Limits) -> CompletionCall:
    """Validate an OpenAI chat-completions body; raises BadRequestError naming the field."""
    model = body.get("model")
    if model is not None and not isinstance(model, str):
        raise BadRequestError("'model' must be a string", code="invalid_field")
    stream = body.get("stream", False)
    if not isinstance(stream, bool):
        raise BadRequestError("'stream' must be true or false", code="invalid_field")
    n = body.get("n", 1)
    if n != 1 or isinstance(n, bool):
        raise BadRequestError("only n = 1 is supported", code="invalid_field")
    highest = limits.max_reply_tokens
    max_tokens = number_field(body, "max_completion_tokens", low=1, high=highest, integer=True)
    if max_tokens is None:
        max_tokens = number_field(body, "max_tokens", low=1, high=highest, integer=True)
    temperature = number_field(body, "temperature", low=0, high=2)
    tools = _tools(body.get("tools"), limits)
    request = ChatRequest(
        messages=_messages(body.get("messages"), limits),
        max_tokens=int(max_tokens) if max_tokens is not None else None,
        temperature=temperature,
        stop=_stop(body.get("stop"), limits),
        tools=tools,
        tool_choice=_tool_choice(body.get("tool_choice"), tools) if tools else None,
    )
    return CompletionCall(model=model or None, stream=stream, request=request)


def _messages(value: object, limits: Limits) -> list[ChatMessage]:
    if not isinstance(value, list) or not value:
        raise BadRequestError("'messages' must be a non-empty array", code="invalid_field")
    if len(value) > limits.max_messages:
        raise BadRequestError(f"at most {limits.max_messages} messages", code="invalid_field")
    messages: list[ChatMessage] = []
    for index, item in enumerate(value):
        where = f"messages[{index}]"
        if not isinstance(item, dict):
            raise BadRequestError(f"'{where}' must be an object", code="invalid_field")
        raw_role = item.get("role")
        role = ROLES.get(raw_role) if isinstance(raw_role, str) else None
        if role is None:
            raise BadRequestError(
                f"'{where}.role' must be one of {', '.join(ROLES)}", code="invalid_field"
            )
        calls = (
            _message_tool_calls(item.get("tool_calls"), where, limits)
            if role == "assistant"
            else []
        )
        raw_content = item.get("content")
        images: list[ImageJSON] = []
        if raw_content is None and calls:
            content = ""
        else:
            content, images = _content(raw_content, where, role == "user", limits)
        if len(content) > limits.max_content_chars:
            raise BadRequestError(f"'{where}.content' is too long", code="invalid_field")
        check_text(content, f"{where}.content")
        message: ChatMessage = {"role": role, "content": content}
        if images:
            message["images"] = images
        if calls:
            message["tool_calls"] = calls
        if role == "tool":
            call_id = item.get("tool_call_id")
            if not isinstance(call_id, str) or not call_id or len(call_id) > 256:
                raise BadRequestError(
                    f"'{where}.tool_call_id' must name the call it answers", code="invalid_field"
                )
            check_text(call_id, f"{where}.tool_call_id")
            message["tool_call_id"] = call_id
        messages.append(message)
    if messages[-1]["role"] == "assistant":
        raise BadRequestError("the last message must not be the assistant's", code="invalid_field")
    return messages


def _tools(value: object, limits: Limits) -> list[dict[str, Any]] | None:
    """OpenAI `tools`: function definitions, passed to the model as given once checked."""
    if value is None:
        return None
    if not isinstance(value, list) or len(value) > limits.max_tools:
        raise BadRequestError(
            f"'tools' must be an array of at most {limits.max_tools}", code="invalid_field"
        )
    for index, tool in enumerate(value):
        where = f"tools[{index}]"
        function = tool.get("function") if isinstance(tool, dict) else None
        if not (
            isinstance(tool, dict) and tool.get("type") == "function" and isinstance(function, dict)
        ):
            raise BadRequestError(
                f'\'{where}\' must be {{"type": "function", "function": {{...}}}}',
                code="invalid_field",
            )
        name = function.get("name")
        if not isinstance(name, str) or not FUNCTION_NAME.match(name):
            raise BadRequestError(
                f"'{where}.function.name' must be 1-64 letters, digits, '_' or '-'",
                code="invalid_field",
            )
        if "parameters" in function and not isinstance(function["parameters"], dict):
            raise BadRequestError(
                f"'{where}.function.parameters' must be a JSON Schema object", code="invalid_field"
            )
        _check_strings(tool, where)
    return value or None


def _check_strings(value: object, where: str) -> None:
    """Every string in a JSON value is text a model can take (no lone surrogates, no NUL)."""
    if isinstance(value, str):
        check_text(value, where)
    elif isinstance(value, dict):
        for key, item in value.items():
            check_text(key, where)
            _check_strings(item, f"{where}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _check_strings(item, f"{where}[{index}]")


def _tool_choice(value: object, tools: list[dict[str, Any]]) -> str | dict[str, Any] | None:
    if value is None or value in ("none", "auto", "required"):
        return value
    names = {tool["function"]["name"] for tool in tools}
    if isinstance(value, dict) and value.get("type") == "function":
        function = value.get("function")
        name = function.get("name") if isinstance(function, dict) else None
        if isinstance(name, str) and name in names:
            return value
    raise BadRequestError(
        '\'tool_choice\' must be "none", "auto", "required" or one of the tools '
        '({"type": "function", "function": {"name": ...}})',
        code="invalid_field",
    )


def _message_tool_calls(value: object, where: str, limits: Limits) -> list[ToolCallJSON]:
    if value is None:
        return []
    if not isinstance(value, list) or len(value) > limits.max_tools:
        raise BadRequestError(f"'{where}.tool_calls' must be an array", code="invalid_field")
    calls: list[ToolCallJSON] = []
    for index, call in enumerate(value):
        function = call.get("function") if isinstance(call, dict) else None
        call_id = call.get("id") if isinstance(call, dict) else None
        if not (
            isinstance(function, dict)
            and isinstance(call_id, str)
            and call_id
            and isinstance(function.get("name"), str)
            and isinstance(function.get("arguments", ""), str)
        ):
            raise BadRequestError(
                f"'{where}.tool_calls[{index}]' must have an 'id' and a 'function' with a "
                "'name' and 'arguments' (a JSON string)",
                code="invalid_field",
            )
        arguments = function.get("arguments", "")
        _check_strings([call_id, function["name"], arguments], f"{where}.tool_calls[{index}]")
        calls.append(
            {
                "id": call_id,
                "type": "function",
                "function": {"name": function["name"], "arguments": arguments},
            }
        )
    return calls


def _content(value: object, where: str, user: bool, limits: Limits) -> tuple[str, list[ImageJSON]]:
    """A message's text, and a user message's images (`image_url` parts: a data: URL of an
    image, or an https: URL the upstream fetches), passed to the upstream as they came."""
    if isinstance(value, str):
        return value, []
    if isinstance(value, list):
        texts: list[str] = []
        images: list[ImageJSON] = []
        for part in value:
            kind = part.get("type") if isinstance(part, dict) else None
            if user and kind == "image_url" and isinstance(part, dict):
                images.append(_image(part.get("image_url"), where, len(images), limits))
                continue
            if kind != "text" or not isinstance(part, dict):
                raise BadRequestError(
                    f"'{where}.content': only text parts (and a user's image_url parts) are "
                    "supported",
                    code="invalid_field",
                )
            text = part.get("text")
            if not isinstance(text, str):
                raise BadRequestError(
                    f"'{where}.content' text must be a string", code="invalid_field"
                )
            texts.append(text)
        return "".join(texts), images
    raise BadRequestError(f"'{where}.content' must be a string or text parts", code="invalid_field")


def _image(value: object, where: str, index: int, limits: Limits) -> ImageJSON:
    url = value.get("url") if isinstance(value, dict) else value
    most = (limits.attachments.max_image_bytes // 3 + 1) * 4 + 100
    if not isinstance(url, str) or not (
        (url.startswith("data:image/") and len(url) <= most)
        or (url.startswith("https://") and len(url) <= limits.max_image_url_chars)
    ):
        raise BadRequestError(
            f"'{where}.content' image_url must be a data:image/ URL (at most "
            f"{limits.attachments.max_image_bytes >> 20} MB) or an https: URL",
            code="invalid_field",
        )
    mime = url[5:].split(";", 1)[0] if url.startswith("data:") else ""
    return {"id": "", "name": f"image {index + 1}", "mime": mime, "url": url}


def _stop(value: object, limits: Limits) -> list[str]:
    if value is None:
        return []
    stops = [value] if isinstance(value, str) else value
    most = limits.max_stop_sequences
    expected = f"a string or up to {most} non-empty strings"
    return list(string_list(stops, "stop", most=most, max_chars=200, expected=expected))


routes = [
    Route("/v1/models", list_models, methods=["GET"]),
    Route("/v1/chat/completions", chat_completions, methods=["POST"]),
]
