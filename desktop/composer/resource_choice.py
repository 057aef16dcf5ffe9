"""Choosing a tool server's resources to attach (Attach → From a tool server…): the picker
(resource_picker.py) shown at once, the servers the user turned on listed in it, and each
running one's resources asked for side by side, each shown as it comes; what the user chose
goes up as `chosen` (desktop/composer/attachments.py attaches it like a file). A server that
is not running says why in its heading."""

from __future__ import annotations

import asyncio

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QWidget

from desktop.composer.resource_picker import ResourcePicker
from desktop.controller import Context, Controller
from desktop.errors import ClientError
from server.types.tools import ToolServerJSON

STATE_WORDS = {
    "starting": "starting…",
    "error": "not running",
    "needs_sign_in": "needs a sign-in (MCP servers)",
}


def state_words(server: ToolServerJSON) -> str:
    """How a server is doing, in words; "" for one that runs (its resources load)."""
    if server["state"] == "ready":
        return ""
    said = STATE_WORDS.get(server["state"], server["state"])
    return f"{said}: {server['error']}" if server["state"] == "error" and server["error"] else said


class ResourceChoice(Controller):
    chosen = Signal(str, list)  # a server's name and the ResourceJSONs to attach

    def __init__(self, context: Context, parent: QWidget) -> None:
        super().__init__(context, parent)
        self.dialog: ResourcePicker | None = None  # the one open

    def choose(self) -> None:
        if self.dialog is not None:
            self.dialog.raise_()
            return
        dialog = ResourcePicker(self._parent)
        dialog.resources_chosen.connect(self.chosen)
        dialog.finished.connect(self._on_dialog_finished)
        self.dialog = dialog
        dialog.open()  # never exec() under qasync
        self._context.tasks.spawn(self._list(dialog))

    def _on_dialog_finished(self, _result: int) -> None:
        if self.dialog is not None:
            self.dialog.deleteLater()
            self.dialog = None

    async def _list(self, dialog: ResourcePicker) -> None:
        try:
            tools = await self._context.require_client().tools()
        except ClientError as exc:
            if dialog is self.dialog:
                dialog.show_error(exc.message)
            return
        if dialog is not self.dialog:
            return
        servers = [s for s in tools["servers"] if s["state"] != "disabled"]
        dialog.show_servers([(s["name"], state_words(s)) for s in servers])
        running = [s["name"] for s in servers if s["state"] == "ready"]
        await asyncio.gather(*(self._resources(dialog, name) for name in running))

    async def _resources(self, dialog: ResourcePicker, server: str) -> None:
        try:
            resources = await self._context.require_client().resources.listing(server)
        except ClientError as exc:
            if dialog is self.dialog:
                dialog.show_server_failure(server, exc.message)
            return
        if dialog is self.dialog:
            dialog.show_resources(server, resources)
