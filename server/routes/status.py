"""Liveness and what the server is doing right now."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

from starlette.requests import Request
from starlette.responses import JSONResponse, StreamingResponse
from starlette.routing import Route

from server.models.base import ChatBackend
from server.models.facts import read_facts
from server.models.local import LocalBackend
from server.routes import hub
from server.routes.services import services
from server.types import StatusJSON


async def healthz(request: Request) -> JSONResponse:
    return JSONResponse({"ok": True})


async def status(request: Request) -> JSONResponse:
    return JSONResponse(await _status(request))


async def status_stream(request: Request) -> StreamingResponse:
    """The status as server-sent events: the whole of it at once, then again each time it
    changes (a model loading, loaded, in use, unloaded; a download's progress; a turn begun
    or ended), looked at every `Limits.status_poll`; a comment when nothing changed for
    `Limits.status_ping` keeps proxies from closing it. Ends when the client hangs up, and
    when the server stops: uvicorn waits for open responses without telling them to end, so
    a follower that never hangs up would hold the stop until its backstop."""
    svc = services(request)
    runs, poll, ping = svc.runs, svc.settings.limits.status_poll, svc.settings.limits.status_ping

    async def changes() -> AsyncIterator[str]:
        last, quiet = "", 0.0
        while not runs.closing:
            now = json.dumps(await _status(request), separators=(",", ":"))
            if now != last:
                last, quiet = now, 0.0
                yield f"data: {now}\n\n"
            elif quiet >= ping:
                quiet = 0.0
                yield ": still here\n\n"
            await asyncio.sleep(poll)
            quiet += poll

    return StreamingResponse(
        changes(), media_type="text/event-stream", headers={"Cache-Control": "no-store"}
    )


async def _status(request: Request) -> dict[str, object]:
    svc = services(request)
    models = []
    for entry in svc.models.entries():
        model = svc.models.status(entry)
        model["tools"] = await _takes_tools(entry.backend)
        # The same test a send's images meet (server/turns/assembly.py), so a window
        # can warn before Send; the send stays the authority.
        model["images"] = entry.backend.images_unsupported is None
        models.append(model)
    found: StatusJSON = {
        "models": models,
        "default_model": svc.models.default_name,
        "active_turns": svc.runs.active_count,
        "tools": svc.tools.summary(),
        "library": svc.library.progress,
        "imports": svc.imports.progress(),
        "search_backlog": svc.imports.search_backlog,
    }
    return {**found, "downloads": hub.progress(request)}


async def _takes_tools(backend: ChatBackend) -> bool | None:
    """Whether the model can call tools: the engine's word once it ran, else its GGUF's chat
    template (the picker says so when it cannot); None for an upstream (it says so itself
    when asked to)."""
    if not isinstance(backend, LocalBackend) or backend.path is None:
        return None
    if backend.template_tools is not None:
        return backend.template_tools
    info = await asyncio.to_thread(read_facts, backend.path)
    return info.template_tools if info is not None else None


routes = [
    Route("/healthz", healthz, methods=["GET"]),
    Route("/api/status", status, methods=["GET"]),
    Route("/api/status/stream", status_stream, methods=["GET"]),
]
