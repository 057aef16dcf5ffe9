"""Choosing a tool server's resources to attach (Attach → From a tool server…): the picker
(resource_picker.py) shown at once, the servers the user turned on listed in it, and each
running one's resources asked for side by side, each shown as it comes; what the user chose
goes up as `chosen` (desktop/composer/attachments.py attaches it like a file). A server that
is not running says why in its heading. A template chosen asks what goes in it (the prompts'
form, prompt_form.py) and the URI so made is attached."""

from __future__ import annotations

import asyncio

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QWidget

from desktop.composer.prompt_form import PromptForm
from desktop.composer.resource_picker import ResourcePicker
from desktop.composer.uri_templates import expand, last_part, variables
from desktop.controller import Context, Controller
from desktop.errors import ClientError
from server.types.tools import (
    PromptJSON,
    ResourceJSON,
    ResourceTemplateJSON,
    ToolServerJSON,
)

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
        self.form: PromptForm | None = None  # a template's values, asked

    def choose(self) -> None:
        if self.dialog is not None:
            self.dialog.raise_()
            return
        dialog = ResourcePicker(self._parent)
        dialog.resources_chosen.connect(self.chosen)
        dialog.template_chosen.connect(self._on_dialog_template_chosen)
        dialog.finished.connect(self._on_dialog_finished)
        self.dialog = dialog
        dialog.open()  # never exec() under qasync
        self._context.tasks.spawn(self._list(dialog))

    def _on_dialog_finished(self, _result: int) -> None:
        if self.dialog is not None:
            self.dialog.deleteLater()
            self.dialog = None

    def _on_dialog_template_chosen(self, server: str, template: ResourceTemplateJSON) -> None:
        as_form: PromptJSON = {
            "name": template["name"],
            "title": template["title"] or template["name"],
            "description": template["uri_template"],
            "arguments": [
                {"name": name, "title": None, "description": None, "required": True}
                for name in variables(template["uri_template"])
            ],
        }
        form = PromptForm(f"{server} · {template['uri_template']}", as_form, self._parent, "Attach")
        form.submitted.connect(lambda values: self._on_form_submitted(server, template, values))
        self.form = form
        form.open()  # never exec() under qasync

    def _on_form_submitted(
        self, server: str, template: ResourceTemplateJSON, values: dict[str, str]
    ) -> None:
        if self.form is not None:
            self.form.accept()
            self.form.deleteLater()
            self.form = None
        uri = expand(template["uri_template"], values)
        made: ResourceJSON = {
            "uri": uri, "name": last_part(uri), "title": None,
            "description": template["description"], "mime": template["mime"], "size": None,
        }  # fmt: skip
        self.chosen.emit(server, [made])

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
