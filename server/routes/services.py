"""What a route handler needs, gathered once per app and reached through the request."""

from __future__ import annotations

from dataclasses import dataclass

from starlette.requests import Request

from server.attachments.service import Attachments
from server.library.service import Library
from server.models.adding import ModelAdder
from server.models.registered import RegisteredModels
from server.models.registry import ModelRegistry
from server.settings import Settings
from server.storage.store import Store
from server.tools.manager import ToolManager
from server.transfer.jobs import Imports
from server.turns.assembly import TurnAssembly
from server.turns.manager import RunManager


@dataclass(frozen=True)
class Services:
    settings: Settings
    store: Store
    models: ModelRegistry
    runs: RunManager
    local_models: RegisteredModels  # the GGUF files a user added
    tools: ToolManager  # the MCP servers the user configured
    library: Library  # the user's documents
    imports: Imports  # imports of chats (server/transfer/)
    attachments: Attachments  # files attached to messages (server/attachments/)
    turns: TurnAssembly  # a conversation's turn made of the parts above, and started

    @property
    def model_adder(self) -> ModelAdder:
        """Adding a GGUF as a local model (a path, a download, a file found on disk)."""
        settings = self.settings
        return ModelAdder(self.models, self.local_models, settings.local, settings.limits)


def services(request: Request) -> Services:
    found: Services = request.app.state.services
    return found
