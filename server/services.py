"""What a route handler needs, gathered once per app and reached through the request."""

from __future__ import annotations

from dataclasses import dataclass

from starlette.requests import Request

from server.library.service import Library
from server.models.registered import RegisteredModels
from server.models.registry import ModelRegistry
from server.run_manager import RunManager
from server.settings import Settings
from server.store import Store
from server.tools.manager import ToolManager


@dataclass(frozen=True)
class Services:
    settings: Settings
    store: Store
    models: ModelRegistry
    runs: RunManager
    local_models: RegisteredModels  # the GGUF files a user added
    tools: ToolManager  # the MCP servers the user configured
    library: Library  # the user's documents


def services(request: Request) -> Services:
    found: Services = request.app.state.services
    return found
