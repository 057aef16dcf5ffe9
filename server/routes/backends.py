"""Checking an OpenAI-compatible backend before it is saved (the Settings dialog's "Test
connection"): is it there, does it take the key, which models does it serve? And finding the
local servers people run beside Parley (Ollama, LM Studio), to offer them: never added here."""

from __future__ import annotations

import asyncio

import anyio
import httpx
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from server.errors import BackendError, BadRequestError
from server.http.jsonbody import read_object, text_field
from server.limits import ModelLimits
from server.models.openai_compat import upstream_timeout
from server.models.upstream_check import list_models, upstream_client
from server.routes.services import services
from server.types import BackendCheckJSON, FoundServerJSON


async def check_backend(request: Request) -> JSONResponse:
    """`{base_url, api_key?}` → `{reachable: true, models: [...]}` or `{reachable: false,
    error}`. Bounded (a few seconds); nothing is stored."""
    svc = services(request)
    limits = svc.settings.limits
    body = await read_object(request, limits)
    most = limits.models.base_url_chars
    base_url = text_field(body, "base_url", max_chars=most, required=True) or ""
    api_key = text_field(body, "api_key", max_chars=limits.models.api_key_chars)
    if not base_url.startswith(("http://", "https://")):
        raise BadRequestError(
            "'base_url' must start with http:// or https://", code="invalid_field"
        )
    timeout = upstream_timeout(svc.settings.limits)
    async with upstream_client(base_url, api_key or None, timeout) as client:
        try:
            found: BackendCheckJSON = {"reachable": True, "models": await list_models(client)}
        except BackendError as exc:
            found = {"reachable": False, "error": str(exc)}
    return JSONResponse(found)


# Where the usual local servers listen by default, and their OpenAI-compatible base URLs.
LOCAL_SERVERS = [
    ("Ollama", "http://127.0.0.1:11434/v1"),
    ("LM Studio", "http://127.0.0.1:1234/v1"),
]
DETECT_TIMEOUT_S = ModelLimits.upstream_detect_timeout


async def detect_local_servers(request: Request) -> JSONResponse:
    """`{found: [{name, base_url, models}]}`: the known local servers that answer now (asked
    at once, each bounded to 1.5 s). Nothing is stored or added."""
    timeout = httpx.Timeout(DETECT_TIMEOUT_S)

    async def probe(name: str, base_url: str) -> FoundServerJSON | None:
        async with upstream_client(base_url, None, timeout) as client:
            try:
                with anyio.fail_after(DETECT_TIMEOUT_S):
                    models = await list_models(client)
            except (BackendError, TimeoutError):
                return None
        return {"name": name, "base_url": base_url, "models": models}

    results = await asyncio.gather(*(probe(name, url) for name, url in LOCAL_SERVERS))
    return JSONResponse({"found": [found for found in results if found is not None]})


routes = [
    Route("/api/backends/check", check_backend, methods=["POST"]),
    Route("/api/backends/detect", detect_local_servers, methods=["GET"]),
]
