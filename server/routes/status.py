"""Liveness and what the server is doing right now."""

from __future__ import annotations

import asyncio

from starlette.requests import Request
from starlette.responses import JSONResponse
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
    svc = services(request)
    models = []
    for entry in svc.models.entries():
        model = svc.models.status(entry)
        model["tools"] = await _takes_tools(entry.backend)
        # The same test a send's images meet (server/routes/attachments.py), so a window
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
    return JSONResponse({**found, "downloads": hub.progress(request)})


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
]
