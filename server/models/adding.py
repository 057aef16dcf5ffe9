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
from dataclasses import dataclass
from pathlib import Path

from server.errors import BadRequestError, ConflictError, GGUFError, StorageError
from server.models.gguf import read_gguf
from server.models.local import LocalBackend
from server.models.registered import RegisteredModel, RegisteredModels
from server.models.registry import ModelEntry, ModelRegistry
from server.settings import Limits, LocalSettings


def same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


@dataclass(frozen=True)
class ModelAdder:
    """What adding a model touches: the registry of backends, the file of added GGUFs, and the
    settings a new local model runs with."""

    models: ModelRegistry
    added: RegisteredModels
    local: LocalSettings
    limits: Limits

    def existing_model_of(self, path: Path) -> str | None:
        """The name of the local model that already is this file, if any (blocking: stats)."""
        for entry in self.models.entries():
            backend = entry.backend
            held = backend.path if isinstance(backend, LocalBackend) else None
            if held is not None and same_file(held, path):
                return entry.name
        return None

    async def add(self, path: Path, name: str | None = None) -> ModelEntry:
        """Add the GGUF at `path` as a local model. BadRequestError (not a usable GGUF),
        ConflictError (`model_exists`: the name, or the file, is a model already),
        StorageError (it could not be remembered; then nothing was added)."""
        try:
            await asyncio.to_thread(read_gguf, path)
        except GGUFError as exc:
            raise BadRequestError(f"cannot add {path.name}: {exc}", code="invalid_model") from exc
        already = await asyncio.to_thread(self.existing_model_of, path)
        if already is not None:
            raise ConflictError(
                f"{path.name} is already the model {already!r}", code="model_exists"
            )
        settings = dataclasses.replace(self.local, gguf=path)
        entry = self.models.add(LocalBackend(settings, self.limits, name=name))  # 409: name
        try:
            await asyncio.to_thread(self.added.add, RegisteredModel(entry.name, path))
        except OSError as exc:
            self.models.remove(entry.name)
            where = self.added.path
            raise StorageError(f"could not remember the model in {where}: {exc}") from exc
        return entry
