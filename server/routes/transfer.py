"""Export and import of conversations (server/chat_export.py, server/chat_import.py)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from server import chat_export, chat_import, chatgpt_import
from server.chat_import import BadImport
from server.errors import BadRequestError, NotFoundError
from server.jsonbody import read_bytes
from server.services import services


async def export_conversation(request: Request) -> Response:
    """`?format=json` (the default: lossless, every branch) or `?format=md` (the selected
    branch, to read)."""
    svc = services(request)
    conversation_id: str = request.path_params["conversation_id"]
    kind = request.query_params.get("format", "json")
    if kind not in ("json", "md"):
        raise BadRequestError("'format' must be 'json' or 'md'", code="invalid_field")
    if kind == "md":
        text = await svc.store.export_markdown(conversation_id)
        if text is None:
            raise NotFoundError(f"no conversation with id {conversation_id!r}")
        return Response(text, media_type="text/markdown; charset=utf-8")
    found = await svc.store.export(conversation_id)
    if found is None:
        raise NotFoundError(f"no conversation with id {conversation_id!r}")
    return JSONResponse({**chat_export.header(), "conversations": [found]})


async def export_all(request: Request) -> StreamingResponse:
    """Every conversation, as one JSON document written a conversation at a time (a large
    history is never held whole in memory)."""
    svc = services(request)
    ids = await svc.store.conversation_ids()

    async def body() -> AsyncIterator[bytes]:
        head = json.dumps(chat_export.header(), ensure_ascii=False)
        yield (head[:-1] + ', "conversations": [').encode()
        first = True
        for conversation_id in ids:
            found = await svc.store.export(conversation_id)
            if found is None:  # deleted meanwhile
                continue
            yield (("" if first else ",") + json.dumps(found, ensure_ascii=False)).encode()
            first = False
        yield b"]}"

    return StreamingResponse(body(), media_type="application/json")


async def import_conversations(request: Request) -> JSONResponse:
    """Parley's own export or ChatGPT's `conversations.json`: all of it, or nothing (a 400
    saying where the file is wrong). A ChatGPT conversation with no message Parley keeps is
    skipped, and listed in `skipped`; a file of nothing else is a 400."""
    svc = services(request)
    limits = svc.settings.limits
    raw = await read_bytes(request, limits, max_bytes=limits.max_import_bytes)
    data = chat_import.parse(raw)
    max_chars = max(limits.max_content_chars, limits.max_reply_chars)
    skipped: list[chatgpt_import.Skipped] = []
    if isinstance(data, list):
        source = "chatgpt"
        conversations, skipped = chatgpt_import.conversations(data, max_chars)
        if skipped and not conversations:
            raise BadImport(
                "",
                f"nothing to import: {_count(len(skipped), 'conversation')} of the file, "
                f"none with a message Parley keeps (text of the user's or the assistant's)",
            )
    elif isinstance(data, dict):
        source = "parley"
        conversations = chat_import.parley_conversations(data, max_chars, limits.max_reply_tokens)
    else:
        raise BadImport("", "give Parley's export (an object) or ChatGPT's (a list)")
    stored = await svc.store.import_conversations(conversations)
    messages = sum(len(c.messages) for c in conversations)
    return JSONResponse(
        {
            "source": source,
            "conversations": stored,
            "messages": messages,
            "skipped": [{"index": s.index, "title": s.title, "reason": s.reason} for s in skipped],
        },
        status_code=201,
    )


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"


routes = [
    Route("/api/conversations/{conversation_id}/export", export_conversation, methods=["GET"]),
    Route("/api/export", export_all, methods=["GET"]),
    Route("/api/import", import_conversations, methods=["POST"]),
]
