"""The models: list them, add a GGUF file, remove one that was added.

    GET    /api/models                  every model, its state, slots and queue; a GGUF's facts
    PATCH  /api/models/{name}           a local model's n_ctx, n_threads, n_gpu_layers,
                                        keep_alive
    POST   /api/models/local {"path"}   add a GGUF (201); not a usable GGUF → 400, nothing added;
                                        a file that is a model already → 409 naming it
    PUT    /api/models/default {"name"} the model new chats use ("Set as default"), remembered
    DELETE /api/models/local/{name}     remove an added one (204); in use → 409
    POST   /api/models/local/{name}/load    load its engine now (200); no room → 503
    POST   /api/models/local/{name}/unload  eject: its engine stops (200); in use → 409

An added GGUF is remembered in the data dir (server/models/registered.py) and loads on first
use, like any local model. The bundled model, and models named by flags, are not removable.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from server.errors import (
    BackendError,
    BadGatewayError,
    BadRequestError,
    ConflictError,
    ModelWontFitError,
    NotFoundError,
    StorageError,
    UnavailableError,
)
from server.http.jsonbody import number_field, path_field, read_object, text_field
from server.limits import ModelLimits
from server.models import fit
from server.models.facts import read_facts
from server.models.local import LocalBackend
from server.models.registry import ModelEntry
from server.routes.services import Services, services
from server.settings import KEEP_LOADED
from server.types import GGUFJSON, ModelJSON


async def list_models(request: Request) -> JSONResponse:
    svc = services(request)
    models = [await _model_json(svc, entry) for entry in svc.models.entries()]
    return JSONResponse({"models": models, "default": svc.models.default_name})


async def add_local_model(request: Request) -> JSONResponse:
    svc = services(request)
    body = await read_object(request, svc.settings.limits)
    entry = await svc.model_adder.add(path_field(body))
    return JSONResponse(await _model_json(svc, entry), status_code=201)


async def set_default_model(request: Request) -> JSONResponse:
    """The model new chats (and requests that name none) use, from now on and after a
    restart; any model, local or upstream."""
    svc = services(request)
    body = await read_object(request, svc.settings.limits)
    name = text_field(body, "name", max_chars=svc.settings.limits.max_title_chars, required=True)
    entry = svc.models.resolve(name or "")  # 404 model_not_found
    try:
        await asyncio.to_thread(svc.local_models.set_default, entry.name)
    except OSError as exc:
        where = svc.local_models.path
        raise StorageError(f"could not remember the default in {where}: {exc}") from exc
    svc.models.preferred = entry.name
    return JSONResponse({"default": entry.name})


async def remove_local_model(request: Request) -> Response:
    svc = services(request)
    name: str = request.path_params["name"]
    if not any(m.name == name for m in svc.local_models.models):
        if name in {e.name for e in svc.models.entries()}:
            raise ConflictError(
                f"{name!r} was not added here (the bundled model, or one named by a flag) "
                "and cannot be removed",
                code="not_removable",
            )
        raise NotFoundError(f"no added model named {name!r}", code="model_not_found")
    entry = svc.models.resolve(name)
    added = next(m.path for m in svc.local_models.models if m.name == name)
    # Another model of that name (an upstream's, or a flag's) shadows the added one, which
    # never loaded: only the remembered entry goes.
    shadowed = not isinstance(entry.backend, LocalBackend) or entry.backend.path != added
    if not shadowed:
        await _stop_or_refuse(request, svc, entry)
    try:
        await asyncio.to_thread(svc.local_models.remove, name)
    except OSError as exc:
        where = svc.local_models.path
        raise StorageError(f"could not forget the model in {where}: {exc}") from exc
    if not shadowed:
        svc.models.remove(name)
        await entry.backend.aclose()  # its engine process, if it was loaded
    return Response(status_code=204)


async def _stop_or_refuse(request: Request, svc: Services, entry: ModelEntry) -> None:
    """A model that replies (also between its model calls: a reply's tools, sub-agents) is
    refused 409, unless `?stop_replies=true`: the user asked to stop them, and each ends as
    their Stop would, its whole tree with it."""
    if not _in_use(svc, entry):
        return
    if request.query_params.get("stop_replies") in ("1", "true"):
        await svc.runs.stop_using(entry, svc.settings.limits.stop_timeout)
    if _in_use(svc, entry):
        raise ConflictError(f"{entry.name!r} is replying; stop its replies first",
                            code="model_in_use")  # fmt: skip


def _local_entry(svc: Services, name: str) -> tuple[ModelEntry, LocalBackend]:
    entry = svc.models.resolve(name)  # 404 for an unknown name
    if not isinstance(entry.backend, LocalBackend):
        raise BadRequestError(f"{name!r} is not a local model", code="not_local")
    return entry, entry.backend


async def load_model(request: Request) -> JSONResponse:
    """Load a local model's engine now (idle engines unloaded first if there is no room);
    answers once it is loaded. 503 `model_wont_fit` with the figures; 502 if it fails."""
    svc = services(request)
    entry, backend = _local_entry(svc, request.path_params["name"])
    try:
        await backend.load()
    except ModelWontFitError as exc:
        raise UnavailableError(str(exc), code="model_wont_fit") from exc
    except BackendError as exc:
        raise BadGatewayError(str(exc), code="model_load_failed") from exc
    return JSONResponse(await _model_json(svc, entry))


async def unload_model(request: Request) -> JSONResponse:
    """Eject: the engine stops the clean way (its process gone); it loads again on next
    use. 409 while replies use it, unless `?stop_replies=true`."""
    svc = services(request)
    entry, _ = _local_entry(svc, request.path_params["name"])
    await _stop_or_refuse(request, svc, entry)
    await svc.models.residency.unload(entry)
    return JSONResponse(await _model_json(svc, entry))


SETTING_RANGES = {
    "n_ctx": (512, 131_072),
    "n_threads": (1, 64),
    "n_gpu_layers": (-1, 1000),
    "keep_alive": (-1, ModelLimits.max_keep_alive),  # seconds; -1: never unloaded
}


async def configure_model(request: Request) -> JSONResponse:
    """A local model's own settings; remembered, and used from its next start (the engine
    stops now if it runs). 409 while it replies."""
    svc = services(request)
    entry = svc.models.resolve(request.path_params["name"])  # 404 for an unknown name
    backend = entry.backend
    if not isinstance(backend, LocalBackend):
        raise BadRequestError("only local models have these settings", code="not_local")
    body = await read_object(request, svc.settings.limits)
    changes: dict[str, int] = {}
    for key, (low, high) in SETTING_RANGES.items():
        value = number_field(body, key, low=low, high=high, integer=True)
        if value is not None:
            changes[key] = int(value)
    if not changes:
        raise BadRequestError(f"give one of {', '.join(SETTING_RANGES)}", code="invalid_field")
    restarts = set(changes) - {"keep_alive"}  # a keep-alive alone is used as it is
    if restarts and _in_use(svc, entry):
        raise ConflictError(f"{entry.name!r} is replying; stop its replies first",
                            code="model_in_use")  # fmt: skip
    try:
        await asyncio.to_thread(svc.local_models.configure, entry.name, changes)
    except OSError as exc:
        where = svc.local_models.path
        raise StorageError(f"could not remember the settings in {where}: {exc}") from exc
    await backend.reconfigure(**changes)
    svc.models.residency.settings_changed(entry)
    return JSONResponse(await _model_json(svc, entry))


def _in_use(svc: Services, entry: ModelEntry) -> bool:
    return svc.models.residency.in_use(entry)


def _removable(svc: Services, entry: ModelEntry) -> bool:
    """An added GGUF, loaded as itself (not shadowed by another model of its name)."""
    backend = entry.backend
    if not isinstance(backend, LocalBackend):
        return False
    return any(m.name == entry.name and m.path == backend.path for m in svc.local_models.models)


async def _model_json(svc: Services, entry: ModelEntry) -> ModelJSON:
    status = svc.models.status(entry)
    found: ModelJSON = {
        "name": status["name"],
        "kind": status["kind"],
        "state": status["state"],
        "error": status["error"],
        "in_use": status["in_use"],
        "slots": status["slots"],
        "slots_busy": status["slots_busy"],
        "queue_length": status["queue_length"],
        "default": entry.name == svc.models.default_name,
        "removable": _removable(svc, entry),
    }
    if "lifecycle" in status:  # a local model's engine
        found["lifecycle"] = status["lifecycle"]
        found["memory_bytes"] = status.get("memory_bytes")
        found["keep_alive"] = status.get("keep_alive", KEEP_LOADED)
    backend = entry.backend
    if isinstance(backend, LocalBackend):
        local = backend.settings
        found["settings"] = {
            "n_ctx": local.n_ctx,
            "n_threads": local.n_threads,
            "n_gpu_layers": local.n_gpu_layers,
            "keep_alive": local.keep_alive,
        }
        if backend.path is not None:
            found["gguf"] = await _gguf_json(backend.path, local.n_ctx)
    return found


async def _gguf_json(path: Path, n_ctx: int) -> GGUFJSON:
    info = await asyncio.to_thread(read_facts, path)
    found: GGUFJSON = {
        "path": str(path),
        "size_bytes": info.size_bytes if info else 0,
        "quantization": info.quantization if info else None,
        "context_length": info.context_length if info else None,
        "architecture": info.architecture if info else None,
    }
    if info is not None:
        found["tools"] = info.template_tools
        found["fit"] = fit.estimate(
            info, n_ctx, await asyncio.to_thread(fit.available_memory)
        ).json()
    return found


routes = [
    Route("/api/models", list_models, methods=["GET"]),
    Route("/api/models/local", add_local_model, methods=["POST"]),
    Route("/api/models/default", set_default_model, methods=["PUT"]),
    Route("/api/models/{name}", configure_model, methods=["PATCH"]),
    Route("/api/models/local/{name}", remove_local_model, methods=["DELETE"]),
    Route("/api/models/local/{name}/load", load_model, methods=["POST"]),
    Route("/api/models/local/{name}/unload", unload_model, methods=["POST"]),
]
