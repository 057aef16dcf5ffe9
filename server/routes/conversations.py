"""Conversations and their messages (the desktop app's API)."""

from __future__ import annotations

import re

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from server.errors import BadRequestError, NotFoundError
from server.http.jsonbody import (
    JSONObject,
    check_text,
    number_field,
    read_object,
    string_list,
    text_field,
)
from server.projects import fields as project_fields
from server.routes.attachments import attachment_ids
from server.routes.services import services
from server.storage.params import updated_params
from server.storage.store import Switch, TurnStart
from server.turns.assembly import TurnRequest
from server.turns.completions import ChunkWriter, TurnIds
from server.turns.responses import RunEventStream
from server.types import ConversationListJSON

SWITCHES: tuple[Switch, ...] = ("tools", "documents")


def _id(request: Request, name: str = "conversation_id") -> str:
    value: str = request.path_params[name]
    return value


def _no_conversation(conversation_id: str) -> NotFoundError:
    return NotFoundError(f"no conversation with id {conversation_id!r}")


async def list_conversations(request: Request) -> JSONResponse:
    svc = services(request)
    query = request.query_params.get("q")
    raw_limit = request.query_params.get("limit")
    if raw_limit is not None and query is not None:
        raise BadRequestError("'limit' is for the list, not a search ('q')", code="invalid_field")
    limit = _limit(request)
    within = project_fields.listed(request.query_params.get("project"))
    if query is not None:
        check_text(query, "q")
        found = await svc.store.search(query, within)
    elif within is not None:
        found = await svc.store.projects.conversations(within.project_id, limit)
    else:
        found = await svc.store.list_conversations(limit)
    listed: ConversationListJSON = {"conversations": found}
    return JSONResponse(listed)


def _limit(request: Request) -> int | None:
    """`?limit=`: 1 to `Limits.max_list_chats`, or None when not given."""
    raw = request.query_params.get("limit")
    if raw is None:
        return None
    # ASCII digits, few of them, before int(): "²" is a digit to str.isdigit, and a long
    # string of them raises past Python's int-conversion limit.
    most = services(request).settings.limits.max_list_chats
    if not (re.fullmatch(r"[0-9]{1,5}", raw) and 1 <= int(raw) <= most):
        raise BadRequestError(f"'limit' must be 1-{most}", code="invalid_field")
    return int(raw)


async def create_conversation(request: Request) -> JSONResponse:
    svc = services(request)
    limits = svc.settings.limits
    body = await read_object(request, limits)
    title = text_field(body, "title", max_chars=limits.max_title_chars) or ""
    model = text_field(body, "model", max_chars=limits.max_title_chars)
    system = text_field(body, "system", max_chars=limits.max_content_chars)
    switches = _switches(body)
    # A project's id: the chat starts in it (404 if there is none).
    project_id = text_field(body, "project_id", max_chars=100, allow_empty=False)
    if model:
        svc.models.resolve(model)  # 404 model_not_found, rather than a chat that cannot reply
    conversation = await svc.store.create_conversation(
        title.strip(), model or None, system or None, project_id
    )
    for switch, enabled in switches.items():
        conversation = (
            await svc.store.set_switch(conversation["id"], switch, enabled) or conversation
        )
    return JSONResponse(conversation, status_code=201)


def _switches(body: dict[str, object]) -> dict[Switch, bool]:
    found: dict[Switch, bool] = {}
    for name in SWITCHES:
        value = _bool_field(body, name)
        if value is not None:
            found[name] = value
    return found


def _server_names(value: object, most: int) -> list[str] | None:
    """`tool_servers`: a list of MCP servers' names (null: every server)."""
    if value is None:
        return None
    expected = "null or a list of MCP servers' names"
    names = string_list(value, "tool_servers", most=most, max_chars=64, expected=expected)
    return list(dict.fromkeys(names))


def _bool_field(body: dict[str, object], name: str) -> bool | None:
    value = body.get(name)
    if value is not None and not isinstance(value, bool):
        raise BadRequestError(f"'{name}' must be true or false", code="invalid_field")
    return value


async def get_conversation(request: Request) -> Response:
    """The conversation and its selected branch: all of it, or with `?limit=N` its newest N
    messages, or with `&before=<message id>` the N before that one; `earlier` counts the
    branch's messages before those sent. Read and encoded off the event loop
    (server/storage/readers.py): a 100,000-message chat holds neither it nor a checkpoint."""
    before = request.query_params.get("before")
    if before is not None:
        check_text(before, "before")
    encoded = await services(request).store.conversation_bytes(
        _id(request), _limit(request), before
    )
    if encoded is None:
        raise _no_conversation(_id(request))
    return Response(encoded, media_type="application/json")


async def update_conversation(request: Request) -> JSONResponse:
    """Rename (`title`), choose the model of the next replies (`model`, a known one), their
    system prompt (`system`; null or "" for none) and sampling parameters (`params`, see
    server/storage/params.py), let the model call tools in them or not (`tools`), put passages
    of the user's documents in their prompt or not (`documents`). Every field is checked
    before anything is changed."""
    svc = services(request)
    limits = svc.settings.limits
    body = await read_object(request, limits)
    title = text_field(body, "title", max_chars=limits.max_title_chars)
    model = text_field(body, "model", max_chars=limits.max_title_chars)
    system = text_field(body, "system", max_chars=limits.max_content_chars)
    switches = _switches(body)
    for name, value in (("title", title), ("model", model)):
        if name in body and not (value or "").strip():
            raise BadRequestError(f"'{name}' must be a non-empty string", code="invalid_field")
    # null is a value for these two: no system prompt, no parameters of the chat's own.
    fields = ("title", "model", "system", "params", "tools", "documents", "tool_servers")
    if not any(name in body for name in fields):
        raise BadRequestError(
            "give a 'title', 'model', 'system', 'params', 'tools', 'documents' or 'tool_servers'",
            code="invalid_field",
        )
    servers = _server_names(body.get("tool_servers"), svc.settings.limits.max_tool_servers)
    if model:
        svc.models.resolve(model)  # 404 model_not_found, before anything is changed
    params = None
    if "params" in body:
        current = await svc.store.params(_id(request))
        if current is None:
            raise _no_conversation(_id(request))
        params = updated_params(current, body["params"], limits.max_reply_tokens)
    conversation = await svc.store.find_conversation(_id(request))
    if conversation is None:
        raise _no_conversation(_id(request))
    if "system" in body:
        conversation = await svc.store.set_system(_id(request), system or None)
    if params is not None:
        conversation = await svc.store.set_params(_id(request), params)
    for switch, enabled in switches.items():
        conversation = await svc.store.set_switch(_id(request), switch, enabled)
        if conversation is None:
            raise _no_conversation(_id(request))
    if model:
        conversation = await svc.store.set_model(_id(request), model)
        if conversation is None:
            raise _no_conversation(_id(request))
    if "tool_servers" in body:
        conversation = await svc.store.set_tool_servers(_id(request), servers)
    if title and conversation is not None:
        conversation = await svc.store.rename(_id(request), title.strip())
    if conversation is None:  # deleted meanwhile
        raise _no_conversation(_id(request))
    return JSONResponse(conversation)


async def select_branch(request: Request) -> Response:
    """Show the branch through `message_id` (one version of a message: down its newest
    later versions); the model is given that branch from now on. The answer is the
    conversation as GET gives it (`?limit=N`: its newest N messages)."""
    svc = services(request)
    body = await read_object(request, svc.settings.limits)
    message_id = text_field(body, "message_id", max_chars=100, required=True, allow_empty=False)
    conversation_id = _id(request)
    svc.runs.check_idle(conversation_id)
    limit = _limit(request)
    conversation = await svc.store.select(conversation_id, message_id or "", limit)
    if conversation is None:
        if await svc.store.find_conversation(conversation_id) is None:
            raise _no_conversation(conversation_id)
        raise NotFoundError(
            f"no message with id {message_id!r} in conversation {conversation_id!r}"
        )
    return Response(conversation, media_type="application/json")


async def delete_conversation(request: Request) -> Response:
    svc = services(request)
    conversation_id = _id(request)
    # Also a run still opening its turn: it ends what it writes before it is done.
    for run in svc.runs.runs_of(conversation_id):
        run.stop("client_hangup")
        await run.wait_done()
    if not await svc.store.delete(conversation_id):
        raise _no_conversation(conversation_id)
    svc.runs.grants.forget(conversation_id)
    return Response(status_code=204)


async def send_message(request: Request) -> RunEventStream:
    """Start a reply and stream it. The run outlives this request; see server/turns/run.py."""
    body = await read_object(request, services(request).settings.limits)
    files = attachment_ids(body, services(request))
    start = TurnStart("send", _content(request, body, bool(files)), attachments=files or ())
    return await _reply(request, body, start)


async def edit_message(request: Request) -> RunEventStream:
    """A new version of a user message (`content`), and a reply to it: a new branch."""
    body = await read_object(request, services(request).settings.limits)
    files = attachment_ids(body, services(request))  # None: the edited message's files
    start = TurnStart(
        "edit",
        _content(request, body, bool(files)),
        target=_id(request, "message_id"),
        attachments=files,
    )
    return await _reply(request, body, start)


def _content(request: Request, body: JSONObject, files: bool = False) -> str:
    """The message a user sends (or its new version): required, within size; not empty
    unless it carries files."""
    limits = services(request).settings.limits
    content = text_field(
        body, "content", max_chars=limits.max_content_chars, required=True, allow_empty=files
    )
    return content or ""


async def regenerate_message(request: Request) -> RunEventStream:
    """A new version of a reply, to the same question; the old one stays a sibling."""
    body = await read_object(request, services(request).settings.limits, optional=True)
    return await _reply(request, body, TurnStart("regenerate", target=_id(request, "message_id")))


async def continue_message(request: Request) -> RunEventStream:
    """A stopped or interrupted reply goes on, in place; the stream carries the new text."""
    body = await read_object(request, services(request).settings.limits, optional=True)
    return await _reply(request, body, TurnStart("continue", target=_id(request, "message_id")))


async def _reply(request: Request, body: JSONObject, start: TurnStart) -> RunEventStream:
    svc = services(request)
    limits = svc.settings.limits
    model_name = text_field(body, "model", max_chars=limits.max_title_chars)
    max_tokens = number_field(body, "max_tokens", low=1, high=limits.max_reply_tokens, integer=True)
    # The most often the stream may carry text (a window draws at ~60 Hz: more events are
    # work on its thread and the server's, no sooner seen).
    pace_ms = number_field(body, "pace_ms", low=0, high=limits.max_pace_ms, integer=True)
    asked = TurnRequest(_id(request), start, model_name, int(max_tokens) if max_tokens else None)
    run, turn = await svc.turns.start(asked)
    writer = ChunkWriter(f"chatcmpl-{run.id}", run.model.name)
    ids = TurnIds(turn.conversation_id, turn.user_message_id, turn.message_id, turn.title)
    return RunEventStream(run, writer, ids, pace=(pace_ms or 0) / 1000)


async def get_message(request: Request) -> JSONResponse:
    """One message; with `?wait=settled`, once it is no longer `streaming` (bounded).

    Only reads, so a client that goes away while it waits leaves nothing behind.
    """
    svc = services(request)
    conversation_id, message_id = _id(request), _id(request, "message_id")
    wait = request.query_params.get("wait")
    if wait not in (None, "settled"):
        raise BadRequestError("'wait' may only be 'settled'", code="invalid_field")
    if wait == "settled":
        # The run writing this message (its id is the message's) ends by settling it.
        with anyio.move_on_after(svc.settings.limits.settled_wait):
            for run in svc.runs.runs_of(conversation_id):
                if run.id == message_id:
                    await run.wait_saved()
    message = await svc.store.get_message(conversation_id, message_id)
    if message is None:
        raise NotFoundError(
            f"no message with id {message_id!r} in conversation {conversation_id!r}"
        )
    return JSONResponse(message)


routes = [
    Route("/api/conversations", list_conversations, methods=["GET"]),
    Route("/api/conversations", create_conversation, methods=["POST"]),
    Route("/api/conversations/{conversation_id}", get_conversation, methods=["GET"]),
    Route("/api/conversations/{conversation_id}", update_conversation, methods=["PATCH"]),
    Route("/api/conversations/{conversation_id}", delete_conversation, methods=["DELETE"]),
    Route("/api/conversations/{conversation_id}/messages", send_message, methods=["POST"]),
    Route("/api/conversations/{conversation_id}/select", select_branch, methods=["POST"]),
    Route(
        "/api/conversations/{conversation_id}/messages/{message_id}/edit",
        edit_message,
        methods=["POST"],
    ),
    Route(
        "/api/conversations/{conversation_id}/messages/{message_id}/regenerate",
        regenerate_message,
        methods=["POST"],
    ),
    Route(
        "/api/conversations/{conversation_id}/messages/{message_id}/continue",
        continue_message,
        methods=["POST"],
    ),
    Route(
        "/api/conversations/{conversation_id}/messages/{message_id}",
        get_message,
        methods=["GET"],
    ),
]
