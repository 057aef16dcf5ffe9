"""Conversations and their messages (the desktop app's API)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from server.errors import ConflictError, NotFoundError
from server.jsonbody import check_text, read_object, text_field
from server.run_responses import RunEventStream
from server.services import Services, services
from server.sse import ChunkWriter
from server.types import ConversationJSON


def _id(request: Request) -> str:
    value: str = request.path_params["conversation_id"]
    return value


async def _require(svc: Services, conversation_id: str) -> ConversationJSON:
    conversation = await svc.store.get_conversation(conversation_id)
    if conversation is None:
        raise NotFoundError(f"no conversation with id {conversation_id!r}")
    return conversation


async def list_conversations(request: Request) -> JSONResponse:
    svc = services(request)
    query = request.query_params.get("q")
    if query is not None:
        check_text(query, "q")
        found = await svc.store.search(query)
    else:
        found = await svc.store.list_conversations()
    return JSONResponse({"conversations": found})


async def create_conversation(request: Request) -> JSONResponse:
    svc = services(request)
    limits = svc.settings.limits
    body = await read_object(request, limits)
    title = text_field(body, "title", max_chars=limits.max_title_chars) or ""
    model = text_field(body, "model", max_chars=limits.max_title_chars)
    system = text_field(body, "system", max_chars=limits.max_content_chars)
    conversation = await svc.store.create_conversation(title.strip(), model or None, system or None)
    return JSONResponse(conversation, status_code=201)


async def get_conversation(request: Request) -> JSONResponse:
    return JSONResponse(await _require(services(request), _id(request)))


async def rename_conversation(request: Request) -> JSONResponse:
    svc = services(request)
    limits = svc.settings.limits
    body = await read_object(request, limits)
    title = text_field(body, "title", max_chars=limits.max_title_chars, required=True) or ""
    conversation = await svc.store.rename(_id(request), title.strip())
    if conversation is None:
        raise NotFoundError(f"no conversation with id {_id(request)!r}")
    return JSONResponse(conversation)


async def delete_conversation(request: Request) -> Response:
    svc = services(request)
    conversation_id = _id(request)
    if svc.runs.is_opening(conversation_id):
        raise ConflictError("a reply is just starting in this conversation; try again")
    for run in svc.runs.runs_of(conversation_id):
        run.stop("client_hangup")
        await run.wait_done()
    if not await svc.store.delete(conversation_id):
        raise NotFoundError(f"no conversation with id {conversation_id!r}")
    return Response(status_code=204)


async def send_message(request: Request) -> RunEventStream:
    """Start a reply and stream it. The run outlives this request; see server/turns.py."""
    svc = services(request)
    limits = svc.settings.limits
    body = await read_object(request, limits)
    content = text_field(
        body, "content", max_chars=limits.max_content_chars, required=True, allow_empty=False
    )
    model_name = text_field(body, "model", max_chars=limits.max_title_chars)
    conversation = await _require(svc, _id(request))
    model = svc.models.resolve(model_name, conversation["model"])
    run, opened = await svc.runs.start_turn(conversation["id"], content or "", model)
    writer = ChunkWriter(f"chatcmpl-{run.id}", model.name)
    first = {
        "conversation_id": conversation["id"],
        "user_message_id": opened.user_message["id"],
        "message_id": opened.assistant_message["id"],
    }
    return RunEventStream(run, writer, first)


routes = [
    Route("/api/conversations", list_conversations, methods=["GET"]),
    Route("/api/conversations", create_conversation, methods=["POST"]),
    Route("/api/conversations/{conversation_id}", get_conversation, methods=["GET"]),
    Route("/api/conversations/{conversation_id}", rename_conversation, methods=["PATCH"]),
    Route("/api/conversations/{conversation_id}", delete_conversation, methods=["DELETE"]),
    Route("/api/conversations/{conversation_id}/messages", send_message, methods=["POST"]),
]
