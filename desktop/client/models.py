"""The server's models routes for the window: the list, adding and removing a GGUF file, a
local model's settings, loading and ejecting it, and the default for new chats. Composed
into ParleyClient as `client.models`; calls go through its one HTTP client."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from desktop.client.answers import MODEL_KEYS, shaped
from desktop.client.paths import segment
from desktop.errors import ClientError
from server.types import ModelJSON

Call = Callable[[str, str, object], Awaitable[object]]


class ModelsApi:
    def __init__(self, call: Call) -> None:
        self._call = call

    async def all(self) -> list[ModelJSON]:
        """Every model, its state and slots; a local one's GGUF facts."""
        found = await self._call("GET", "/api/models", None)
        models = found.get("models") if isinstance(found, dict) else None
        if not isinstance(models, list):
            raise ClientError("the server's list of models is malformed")
        return [shaped(ModelJSON, MODEL_KEYS, model) for model in models]

    async def add_local(self, path: str) -> ModelJSON:
        """Add a GGUF file (the server checks it is one: ClientError says why not)."""
        added = await self._call("POST", "/api/models/local", {"path": path})
        return shaped(ModelJSON, MODEL_KEYS, added)

    async def configure(self, name: str, settings: dict[str, int]) -> ModelJSON:
        """A local model's n_ctx / n_threads / n_gpu_layers (used from its next start)."""
        changed = await self._call("PATCH", f"/api/models/{segment(name)}", settings)
        return shaped(ModelJSON, MODEL_KEYS, changed)

    async def remove_local(self, name: str, stop_replies: bool = False) -> None:
        """Remove an added model. ClientError `model_in_use` while replies use it, unless
        `stop_replies`: then they are stopped first (as the user's Stop)."""
        query = "?stop_replies=true" if stop_replies else ""
        await self._call("DELETE", f"/api/models/local/{segment(name)}{query}", None)

    async def load(self, name: str) -> ModelJSON:
        """Load a local model's engine now (idle ones are unloaded first if there is no room);
        answers once it is loaded. ClientError `model_wont_fit` says why it cannot."""
        loaded = await self._call("POST", f"/api/models/local/{segment(name)}/load", None)
        return shaped(ModelJSON, MODEL_KEYS, loaded)

    async def eject(self, name: str, stop_replies: bool = False) -> ModelJSON:
        """Unload a local model's engine (it loads again on its next use). ClientError
        `model_in_use` while replies use it, unless `stop_replies`."""
        query = "?stop_replies=true" if stop_replies else ""
        path = f"/api/models/local/{segment(name)}/unload{query}"
        return shaped(ModelJSON, MODEL_KEYS, await self._call("POST", path, None))

    async def set_default(self, name: str) -> None:
        """The model new chats use, remembered by the server ("Set as default")."""
        await self._call("PUT", "/api/models/default", {"name": name})
