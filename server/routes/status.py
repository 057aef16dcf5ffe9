"""Liveness and what the server is doing right now."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from server.routes import hub
from server.services import services
from server.types import StatusJSON


async def healthz(request: Request) -> JSONResponse:
    return JSONResponse({"ok": True})


async def status(request: Request) -> JSONResponse:
    svc = services(request)
    found: StatusJSON = {
        "models": [entry.status() for entry in svc.models.entries()],
        "default_model": svc.models.default_name,
        "active_turns": svc.runs.active_count,
        "tools": svc.tools.summary(),
        "library": svc.library.progress,
        "imports": svc.store.imports.progress(),
    }
    return JSONResponse({**found, "downloads": hub.progress(request)})


routes = [
    Route("/healthz", healthz, methods=["GET"]),
    Route("/api/status", status, methods=["GET"]),
]
