"""Adding a GGUF file as a local model — from a path the user gives, a download
(server/models/hub/) or a file found on disk (server/models/discovery/): one way for all.

The file's header is read first (bounded: server/models/gguf.py); a file that is already a
model (the same file by device and inode, whatever its path or a link to it) is refused with
that model's name, so one file is one model and one engine; the name is the file's stem, or
the one given. The model is remembered in the data dir and loads on first use.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
from pathlib import Path

from server.errors import BadRequestError, ConflictError, StorageError
from server.models.gguf import GGUFError, read_gguf
from server.models.local import LocalBackend
from server.models.registered import RegisteredModel
from server.models.registry import ModelEntry
from server.services import Services


def same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def existing_model_of(svc: Services, path: Path) -> str | None:
    """The name of the local model that already is this file, if any (blocking: stats)."""
    for entry in svc.models.entries():
        backend = entry.backend
        held = backend.path if isinstance(backend, LocalBackend) else None
        if held is not None and same_file(held, path):
            return entry.name
    return None


async def add_gguf(svc: Services, path: Path, name: str | None = None) -> ModelEntry:
    """Add the GGUF at `path` as a local model. BadRequestError (not a usable GGUF),
    ConflictError (`model_exists`: the name, or the file, is a model already), StorageError
    (it could not be remembered; then nothing was added)."""
    try:
        await asyncio.to_thread(read_gguf, path)
    except GGUFError as exc:
        raise BadRequestError(f"cannot add {path.name}: {exc}", code="invalid_model") from exc
    already = await asyncio.to_thread(existing_model_of, svc, path)
    if already is not None:
        raise ConflictError(f"{path.name} is already the model {already!r}", code="model_exists")
    settings = dataclasses.replace(svc.settings.local, gguf=path)
    backend = LocalBackend(settings, svc.settings.limits, name=name)
    entry = svc.models.add(backend)  # 409 if the name exists
    try:
        await asyncio.to_thread(svc.local_models.add, RegisteredModel(entry.name, path))
    except OSError as exc:
        svc.models.remove(entry.name)
        where = svc.local_models.path
        raise StorageError(f"could not remember the model in {where}: {exc}") from exc
    return entry
