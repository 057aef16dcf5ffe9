"""create_app(settings) -> the Starlette app: routes, the security front door, the lifespan."""

from __future__ import annotations

import contextlib
import dataclasses
import logging
from collections.abc import AsyncIterator

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response

from server.attachments.service import Attachments
from server.errors import ApiError, DiskFullError, StorageError, UnavailableError
from server.http.error_response import ErrorResponse
from server.http.framing import FramingMiddleware
from server.http.security import SecurityMiddleware
from server.library.service import Library
from server.models.base import ChatBackend
from server.models.local import LocalBackend
from server.models.openai_compat import OpenAICompatBackend
from server.models.registered import RegisteredModels
from server.models.registry import ModelRegistry
from server.routes import attachments as attachment_routes
from server.routes import backends as backend_routes
from server.routes import context as context_routes
from server.routes import (
    conversations,
    found_models,
    grants,
    openai,
    questions,
    sign_in,
    status,
    tool_calls,
    transfer,
)
from server.routes import hub as hub_routes
from server.routes import library as library_routes
from server.routes import memory as memory_routes
from server.routes import models as model_routes
from server.routes import projects as project_routes
from server.routes import prompts as prompt_routes
from server.routes import resources as resource_routes
from server.routes import tools as tool_routes
from server.routes.services import Services
from server.settings import Settings
from server.storage.store import Store
from server.tools.config import McpConfigFile
from server.tools.manager import ToolManager
from server.transfer.jobs import Imports
from server.turns.assembly import TurnAssembly
from server.turns.manager import RunManager

log = logging.getLogger(__name__)


def default_backends(
    settings: Settings, added: RegisteredModels | None = None
) -> list[ChatBackend]:
    """Upstreams named by flags first (the first is the default), then the local model, the
    GGUF files a user added, then the desktop's own backends."""
    backends: list[ChatBackend] = [
        OpenAICompatBackend(u, settings.limits) for u in settings.upstreams
    ]
    locals_: list[LocalBackend] = []
    if settings.local.enabled:
        locals_.append(LocalBackend(settings.local, settings.limits))
    for model in added.models if added is not None else []:
        local = dataclasses.replace(settings.local, gguf=model.path)
        locals_.append(LocalBackend(local, settings.limits, name=model.name))
    for backend in locals_:
        if added is not None and backend.name in added.settings:
            backend.configure(**added.settings[backend.name])  # the user's, per model
    backends += locals_
    backends += [OpenAICompatBackend(u, settings.limits) for u in settings.later_upstreams]
    return backends


def create_app(settings: Settings, backends: list[ChatBackend] | None = None) -> Starlette:
    store = Store(settings.db_path, busy_timeout=settings.limits.db_busy_timeout)
    added = RegisteredModels(settings.data_dir / "models.json")
    backends = default_backends(settings, added) if backends is None else backends
    models = ModelRegistry(backends, settings.limits.models)
    models.preferred = added.default  # "Set as default" (if it still names a model)
    runs = RunManager(store, settings.limits)
    # Which engines stay loaded depends on the runs using them (between model calls too).
    models.residency.users = runs.using
    runs.on_run_ended = models.residency.runs_changed
    tools = ToolManager(McpConfigFile(settings.mcp_config_path), runs.grants)
    library = Library(settings.data_dir / "library.sqlite3", settings.limits)
    attachments = Attachments(
        store.db,
        settings.data_dir / "attachments",
        settings.limits.attachments,
        library.parsers.pdf_text,  # attached PDFs wait their turn in the library's workers
    )
    svc = Services(
        settings=settings,
        store=store,
        models=models,
        runs=runs,
        local_models=added,
        tools=tools,
        library=library,
        imports=Imports(store.db, settings.db_path.parent / "imports"),
        attachments=attachments,
        turns=TurnAssembly(settings, store, models, runs, tools, library, attachments),
    )
    downloads = hub_routes.create_downloads(svc)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            try:
                recovered = await store.open()
            except StorageError as exc:
                app.state.startup_error = str(exc)  # what the desktop shows (serve.py)
                raise
            await svc.imports.open()  # rows of an import a crash cut: deleted, in the background
            await svc.attachments.open()  # uploads never sent, older than a day: deleted
            if recovered:
                log.warning("marked %d reply(ies) cut by a crash as interrupted", recovered)
            models.warm_up()
            if tools.config.error:
                log.error("MCP servers: %s", tools.config.error)
            # Runs stop (and settle) before the tool servers and the library they may be
            # calling stop.
            async with library.running(), tools.running(), runs.running(), downloads.running():
                yield
        finally:
            await models.aclose()
            await svc.imports.close()
            await store.close()

    app = Starlette(
        routes=[
            *status.routes,
            *conversations.routes,
            *context_routes.routes,
            *tool_calls.routes,
            *questions.routes,
            *transfer.routes,
            *attachment_routes.routes,
            *model_routes.routes,
            *found_models.routes,
            *backend_routes.routes,
            *tool_routes.routes,
            *grants.routes,
            *resource_routes.routes,
            *prompt_routes.routes,
            *sign_in.routes,
            *library_routes.routes,
            *memory_routes.routes,
            *project_routes.routes,
            *hub_routes.routes,
            *openai.routes,
        ],
        middleware=[
            Middleware(FramingMiddleware, max_header_bytes=settings.limits.max_header_bytes),
            Middleware(SecurityMiddleware, token=settings.token, bind_host=settings.host),
        ],
        exception_handlers={
            ApiError: _api_error,
            StorageError: _storage_error,
            HTTPException: _http_error,
            Exception: _unexpected_error,
        },
        lifespan=lifespan,
    )
    app.state.services = svc
    app.state.downloads = downloads
    return app


async def _api_error(request: Request, exc: Exception) -> Response:
    if not isinstance(exc, ApiError):
        return await _unexpected_error(request, exc)
    return ErrorResponse(exc)


async def _storage_error(request: Request, exc: Exception) -> Response:
    log.error("storage error on %s %s: %s", request.method, request.url.path, exc)
    code = "disk_full" if isinstance(exc, DiskFullError) else "storage_error"
    return ErrorResponse(UnavailableError(str(exc), code=code))


async def _http_error(request: Request, exc: Exception) -> Response:
    status_code = exc.status_code if isinstance(exc, HTTPException) else 500
    codes = {404: "not_found", 405: "method_not_allowed"}
    error = ApiError(
        str(getattr(exc, "detail", "error")), code=codes.get(status_code, "http_error")
    )
    error.status = status_code
    error.type = "invalid_request_error" if status_code < 500 else "server_error"
    return ErrorResponse(error)


async def _unexpected_error(request: Request, exc: Exception) -> Response:
    log.error("unexpected error on %s %s", request.method, request.url.path, exc_info=exc)
    return ErrorResponse(ApiError("internal error; see the server log"))
