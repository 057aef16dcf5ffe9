"""The model's view of a chat (issue 42): the context meter and the summaries compaction wrote.

    GET    /api/conversations/{id}/context[?model=NAME]   → 200 the meter: tokens the next
           turn would use of the model's context, by what they are (system prompt, summary,
           history, tools' definitions with their servers' instructions, the passages "Use
           my documents" would add: estimated as those the chat's last question is given;
           `memory`: the saved memory's share of `system`, as the next turn gets it);
           `estimated` when no tokenizer counted them; `limit` null when the model's context
           is not known (an upstream without --upstream-context)
    POST   /api/conversations/{id}/compact[?model=NAME]   → a stream like a turn's: the
           earlier messages (all but the last exchange) summarised now ("Compact now");
           `parley.compaction` events, then the final chunk; no message is written; a hang-up
           (Stop) saves nothing; 409 while a reply of the chat streams
    PATCH  /api/conversations/{id}/summaries/{sid} {"content"}   → 200 the summary, in the
           user's words (`model` null)
    DELETE /api/conversations/{id}/summaries/{sid}   → 204: undone; the messages it covered are
           in the model's view again (nothing was ever deleted); 404 unknown or undone

A summary's messages stay in the chat: shown, searched, exported.
"""

from __future__ import annotations

import dataclasses
import json

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from server.agent import delegate
from server.agent.compaction import with_summary
from server.agent.history import with_tool_history
from server.agent.untrusted import untrusted
from server.errors import NotFoundError
from server.http.jsonbody import read_object, text_field
from server.library.chunking import MAX_CHARS, OVERLAP_CHARS
from server.library.tool import PROMPT_INTRO, PROMPT_PASSAGES, PromptDocuments, SourceNumbers
from server.memory.prompt import memory_block, with_memory
from server.models.base import ChatBackend
from server.models.context import (
    IMAGE_TOKENS,
    MESSAGE_OVERHEAD,
    counted_from,
    estimate_tokens,
    prompt_budget,
)
from server.routes.conversations import (
    chat_remember,
    project_folders,
    turn_tools,
    uses_documents,
)
from server.routes.services import Services, services
from server.turns.completions import ChunkWriter
from server.turns.responses import RunEventStream
from server.types import ChatMessage, ContextJSON

MAX_SUMMARY_CHARS = 100_000
PLACE_CHARS = 120  # a passage's "[n] path, lines a-b" line, on the long side


def documents_room() -> int:
    """Tokens the passages "Use my documents" puts in a prompt (server/library/tool.py) take
    at most, estimated (each passage as long as a passage can be)."""
    passage = "p" * PLACE_CHARS + "\n" + "x" * (MAX_CHARS + OVERLAP_CHARS)
    text = PROMPT_INTRO + untrusted("\n\n".join([passage] * PROMPT_PASSAGES), "documents")
    return estimate_tokens(text) + MESSAGE_OVERHEAD


async def documents_part(
    svc: Services, prompt: list[ChatMessage], backend: ChatBackend, folders: tuple[str, ...] = ()
) -> int:
    """What the passages "Use my documents" puts in the next prompt would take, estimated.

    The next message's passages are not known before it is written. The ceiling (every
    passage as long as one can be) read a one-line chat as more than half of a small
    context; the passages the chat's last question is given (its search run again, as its
    turn ran it, and counted as sent) are what a follow-up on the same matter gets. 0 when
    that search finds nothing (an empty library, a question no passage matches), never more
    than the ceiling. `folders`: the chat's project's, which its search keeps to."""
    question = next((m["content"] for m in reversed(prompt) if m["role"] == "user"), "")
    if not question.strip():
        return 0
    given = await PromptDocuments(svc.library, SourceNumbers(), folders).message(question)
    if given is None:
        return 0
    (tokens,), _ = await backend.count_tokens([given[0]])
    return min(tokens + MESSAGE_OVERHEAD, documents_room())


async def get_context(request: Request) -> JSONResponse:
    svc = services(request)
    cid: str = request.path_params["conversation_id"]
    found = await svc.store.view(cid)
    conversation = await svc.store.find_conversation(cid)
    if found is None or conversation is None:
        raise NotFoundError(f"no conversation with id {cid!r}")
    model = svc.models.resolve(request.query_params.get("model"), conversation["model"])
    backend = model.backend
    tools: list[dict[str, object]] = []
    instructions = ""  # what the tools' servers say about them, given with them
    if conversation["tools"] and backend.tools_unsupported is None:
        remember = await chat_remember(svc, conversation)
        offered = turn_tools(svc, SourceNumbers(), conversation, remember=remember)
        tools = list(offered.specs())
        instructions = offered.instructions() if tools else ""
        if tools and svc.settings.limits.agents.max_depth > 0:
            names = [str(t["function"]["name"]) for t in tools]  # type: ignore[index]
            tools.append(delegate.spec(names))
    # The saved memory, added to the system message as the next turn adds it (turns/sinks.py).
    memory = await memory_block(
        svc.settings.data_dir, conversation["project_id"], svc.settings.limits.memory
    )
    system, given, ids = with_memory(found.system, found.prompt, found.prompt_ids, memory)
    found = dataclasses.replace(found, system=system, prompt=given, prompt_ids=ids)
    summary = found.summary["content"] if found.summary else None
    prompt = with_summary(found.prompt, found.system, summary)
    history = with_tool_history(prompt, bool(tools), context=backend.context_length)
    first = 1 if history and history[0]["role"] == "system" else 0
    texts = [m["content"] + json.dumps(m.get("tool_calls", "")) for m in history]
    tools_text = json.dumps(tools) + instructions if tools else ""
    # The system prompt, the newest messages and the tools counted; messages older than
    # any prompt could hold, estimated.
    start = first + counted_from(texts[first:], backend.context_length)
    counted = [*texts[:first], *texts[start:], tools_text, *([memory] if memory else [])]
    exact, estimated = await backend.count_tokens(counted)
    memory_part = exact.pop() if memory else 0  # a share of the system prompt's
    older = [estimate_tokens(text) for text in texts[first:start]]
    counts = [*exact[:first], *older, *exact[first:]]
    estimated = estimated or bool(older)
    system_part = counts[0] + MESSAGE_OVERHEAD if first else 0
    history_part = sum(c + MESSAGE_OVERHEAD for c in counts[first:-1])
    images = (
        sum(len(m.get("images", [])) for m in history) if backend.images_unsupported is None else 0
    )
    history_part += images * IMAGE_TOKENS  # (a model that takes none is told their names)
    # The passages the next turn's prompt gets ("Use my documents", once the library has a
    # folder: server/routes/conversations.py), estimated.
    documents = 0
    if uses_documents(svc, conversation):
        project = await svc.store.projects.context_of(cid)
        documents = await documents_part(svc, found.prompt, backend, project_folders(project))
    limit = backend.context_length
    meter: ContextJSON = {
        "model": model.name,
        "limit": limit,
        "budget": prompt_budget(limit, None) if limit is not None else None,
        "estimated": estimated or images > 0 or documents > 0,
        "used": system_part + history_part + counts[-1] + documents,
        "system": system_part,
        "memory": memory_part,
        "history": history_part,
        "tools": counts[-1],
        "documents": documents,
        "messages": sum(1 for mid in found.prompt_ids if mid),
        "summarised": found.summarised,
        "summary_id": found.summary["id"] if found.summary else None,
    }
    return JSONResponse(meter)


async def compact_now(request: Request) -> Response:
    """Summarise the earlier messages now (all but the last exchange), streamed like a turn:
    `parley.compaction` events, then a final chunk; no message is written. Hanging up (Stop)
    ends it and saves nothing."""
    svc = services(request)
    cid: str = request.path_params["conversation_id"]
    conversation = await svc.store.find_conversation(cid)
    if conversation is None:
        raise NotFoundError(f"no conversation with id {cid!r}")
    model = svc.models.resolve(request.query_params.get("model"), conversation["model"])
    run = svc.runs.start_compaction(cid, model)
    return RunEventStream(run, ChunkWriter(f"chatcmpl-{run.id}", model.name))


async def edit_summary(request: Request) -> JSONResponse:
    svc = services(request)
    cid: str = request.path_params["conversation_id"]
    sid: str = request.path_params["summary_id"]
    body = await read_object(request, svc.settings.limits)
    content = text_field(
        body, "content", max_chars=MAX_SUMMARY_CHARS, required=True, allow_empty=False
    )
    assert content is not None  # required
    edited = await svc.store.edit_summary(cid, sid, content.strip())
    if edited is None:
        raise NotFoundError(f"no summary {sid!r} in conversation {cid!r}")
    return JSONResponse(edited)


async def undo_summary(request: Request) -> Response:
    svc = services(request)
    cid: str = request.path_params["conversation_id"]
    sid: str = request.path_params["summary_id"]
    if not await svc.store.undo_summary(cid, sid):
        raise NotFoundError(f"no summary {sid!r} in conversation {cid!r}")
    return Response(status_code=204)


routes = [
    Route("/api/conversations/{conversation_id}/context", get_context, methods=["GET"]),
    Route("/api/conversations/{conversation_id}/compact", compact_now, methods=["POST"]),
    Route(
        "/api/conversations/{conversation_id}/summaries/{summary_id}",
        edit_summary,
        methods=["PATCH"],
    ),
    Route(
        "/api/conversations/{conversation_id}/summaries/{summary_id}",
        undo_summary,
        methods=["DELETE"],
    ),
]
