"""The model's view of a chat: the context meter and the summaries compaction wrote.

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

import functools

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from server.agent import branch, prompt
from server.agent.cost import count
from server.errors import NotFoundError
from server.http.jsonbody import read_object, text_field
from server.library.tool import PromptDocuments, SourceNumbers
from server.memory.prompt import memory_block
from server.models.context import prompt_budget
from server.routes.services import Services, services
from server.turns.assembly import project_folders
from server.turns.completions import ChunkWriter
from server.turns.responses import RunEventStream
from server.types import ChatMessage, ContextJSON


async def passages(
    svc: Services, given: list[ChatMessage], folders: tuple[str, ...] = ()
) -> str | None:
    """The passages "Use my documents" would put in the next prompt, estimated.

    The next message's passages are not known before it is written; those the chat's last
    question is given (its search run again, as its turn ran it) are what a follow-up on
    the same matter gets. None when that search finds nothing (an empty library, a question
    no passage matches). `folders`: the chat's project's, which its search keeps to."""
    question = next((m["content"] for m in reversed(given) if m["role"] == "user"), "")
    if not question.strip():
        return None
    found = await PromptDocuments(svc.library, SourceNumbers(), folders).message(question)
    return found[0] if found is not None else None


async def get_context(request: Request) -> JSONResponse:
    svc = services(request)
    cid: str = request.path_params["conversation_id"]
    found = await svc.store.view(cid)
    conversation = await svc.store.find_conversation(cid)
    if found is None or conversation is None:
        raise NotFoundError(f"no conversation with id {cid!r}")
    model = svc.models.resolve(request.query_params.get("model"), conversation["model"])
    backend = model.backend
    # The next turn's prompt, built as the turn builds it (server/agent/prompt.py) but for
    # its question, which is not written yet.
    tools: list[dict[str, object]] = []
    instructions = ""  # what the tools' servers say about them, given with them
    if conversation["tools"] and backend.tools_unsupported is None:
        remember = await svc.turns.remember(conversation)
        offered = svc.turns.toolbox(SourceNumbers(), conversation, remember=remember)
        delegation = svc.settings.limits.agents.max_depth > 0
        tools = prompt.offered(list(offered.specs()), delegation)
        instructions = offered.instructions() if tools else ""
    memory = await memory_block(
        svc.settings.data_dir, conversation["project_id"], svc.settings.limits.memory
    )
    summary = found.summary["content"] if found.summary else None
    stored = branch.of_branch(found, memory)
    given, ids = stored.messages, stored.ids
    if backend.images_unsupported is not None:
        # A model that takes no images is told their names instead, as a turn tells it (no
        # image is read for that).
        given = await svc.turns.image_reader(model)(given)
    documents = None
    if svc.turns.uses_documents(conversation):
        project = await svc.store.projects.context_of(cid)
        documents = await passages(svc, given, project_folders(project))
        given, ids = prompt.with_documents(given, ids, documents)
    sent = prompt.given(given, tools, instructions, context=backend.context_length)
    # Parts shown on their own, counted in the same call: the memory's share of the system
    # message, and the agent's note that comes with the tools.
    note = prompt.agent_note(instructions) if tools else None
    extra = [text for text in (memory, note) if text]
    cost, counts = await count(backend, sent, tools, extra=extra)
    memory_part = counts[0] if memory else 0
    note_part = counts[-1] if note else 0
    # The first message holds, before the note, the system prompt (its memory, the summary),
    # else the passages, else nothing: the note's share of it is the tools'.
    opening = prompt.system_text(found.system, memory, summary) is not None
    own = cost.messages[0] - note_part if note else (cost.messages[0] if sent else 0)
    own = max(0, own) if (opening or documents is not None) else 0
    system_part = own if opening else 0
    documents_part = 0 if documents is None else (cost.messages[1] if opening else own)
    tools_part = cost.tools + ((cost.messages[0] - own) if note else 0)
    limit = backend.context_length
    meter: ContextJSON = {
        "model": model.name,
        "limit": limit,
        "budget": prompt_budget(limit, None) if limit is not None else None,
        "estimated": cost.estimated or cost.images > 0 or documents is not None,
        "used": cost.used,
        "system": system_part,
        "memory": memory_part,
        "history": cost.used - system_part - tools_part - documents_part,
        "tools": tools_part,
        "documents": documents_part,
        "messages": sum(1 for mid in ids if mid),
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
    settings = svc.settings
    memory = functools.partial(
        memory_block, settings.data_dir, conversation["project_id"], settings.limits.memory
    )
    run = svc.runs.start_compaction(cid, model, memory)
    return RunEventStream(run, ChunkWriter(f"chatcmpl-{run.id}", model.name))


async def edit_summary(request: Request) -> JSONResponse:
    svc = services(request)
    cid: str = request.path_params["conversation_id"]
    sid: str = request.path_params["summary_id"]
    body = await read_object(request, svc.settings.limits)
    content = text_field(
        body,
        "content",
        max_chars=svc.settings.limits.max_summary_chars,
        required=True,
        allow_empty=False,
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
