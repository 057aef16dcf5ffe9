"""Export and import of conversations (server/transfer/export.py, server/transfer/)."""

from __future__ import annotations

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from server.errors import AlreadyHereError, BadRequestError, NotFoundError
from server.routes.services import services
from server.transfer import export, sameness
from server.transfer.jobs import ImportJob, Outcome
from server.transfer.spool import spool


async def export_conversation(request: Request) -> StreamingResponse:
    """`?format=json` (the default: lossless, every branch) or `?format=md` (the selected
    branch, to read). Written a piece at a time (server/storage/readers.py)."""
    svc = services(request)
    conversation_id: str = request.path_params["conversation_id"]
    kind = request.query_params.get("format", "json")
    if kind not in ("json", "md"):
        raise BadRequestError("'format' must be 'json' or 'md'", code="invalid_field")
    if not await svc.store.exists(conversation_id):
        raise NotFoundError(f"no conversation with id {conversation_id!r}")
    if kind == "md":
        return StreamingResponse(
            svc.store.reads.stream(export.markdown_pieces, conversation_id),
            media_type="text/markdown; charset=utf-8",
        )
    return StreamingResponse(
        svc.store.reads.stream(export.json_pieces, [conversation_id]), media_type="application/json"
    )


async def export_all(request: Request) -> StreamingResponse:
    """Every conversation, as one JSON document written a few hundred messages at a time (a
    large history is never held whole in memory), from one snapshot of the database."""
    return StreamingResponse(
        services(request).store.reads.stream(export.json_pieces, None),
        media_type="application/json",
    )


async def import_conversations(request: Request) -> JSONResponse:
    """Parley's own export or ChatGPT's `conversations.json`: all of it, or nothing (a 400
    saying where the file is wrong). A ChatGPT conversation with no message Parley keeps is
    skipped, and listed in `skipped`; a file of nothing else is a 400.

    The body is spooled to a file and imported on a thread of its own, in short hidden
    batches (server/transfer/): progress is in `GET /api/status` (`imports`), and hanging up
    or `DELETE /api/imports/{id}` cancels it (then nothing was imported).

    `?duplicates=` says what to do with a chat already here (server/transfer/sameness.py):
    `skip` it (the default; listed in `skipped`), import it again as a `copy`, or `ask`:
    import nothing and answer 409 `already_here` with how many (`already_here`) of the
    file's chats (`conversations`) are here. `already_here` in the answer counts them."""
    duplicates = sameness.duplicates(
        request.query_params.get("duplicates", sameness.DEFAULT_DUPLICATES)
    )
    if duplicates is None:
        raise BadRequestError(
            f"'duplicates' must be one of {', '.join(sameness.DUPLICATES)}", code="invalid_field"
        )
    svc = services(request)
    limits = svc.settings.limits
    imports = svc.imports
    path = imports.spool_path()
    size = await spool(request, limits, path)
    max_chars = max(limits.max_content_chars, limits.max_reply_chars)
    try:
        job = imports.start(path, size, max_chars, limits.max_reply_tokens, duplicates)
    except BaseException:
        with anyio.CancelScope(shield=True):
            await anyio.Path(path).unlink(missing_ok=True)
        raise
    outcome: Outcome | BaseException
    async with anyio.create_task_group() as group:
        group.start_soon(_cancel_on_hang_up, request, job)
        try:
            outcome = await job.outcome()
        except Exception as exc:  # raised below, out of the group (not as a group of one)
            outcome = exc
        group.cancel_scope.cancel()
    if isinstance(outcome, AlreadyHereError):  # the error, and the counts to ask with
        body = {"error": outcome.body(), "already_here": outcome.already_here,
                "conversations": outcome.conversations}  # fmt: skip
        return JSONResponse(body, status_code=outcome.status)
    if isinstance(outcome, BaseException):
        raise outcome
    return JSONResponse(
        {
            "source": outcome.source,
            "conversations": outcome.conversations,
            "messages": outcome.messages,
            "skipped": [
                {"index": s.index, "title": s.title, "reason": s.reason} for s in outcome.skipped
            ],
            "already_here": outcome.already_here,
        },
        status_code=201,
    )


async def _cancel_on_hang_up(request: Request, job: ImportJob) -> None:
    """The body is read: the next message of the connection is its end (a hang-up)."""
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            job.cancel()
            return


async def cancel_import(request: Request) -> Response:
    """Stop an import; what it wrote is deleted, and its POST answers 409 import_cancelled."""
    services(request).imports.cancel(request.path_params["import_id"])
    return Response(status_code=202)


routes = [
    Route("/api/conversations/{conversation_id}/export", export_conversation, methods=["GET"]),
    Route("/api/export", export_all, methods=["GET"]),
    Route("/api/import", import_conversations, methods=["POST"]),
    Route("/api/imports/{import_id}", cancel_import, methods=["DELETE"]),
]
