"""The chat bar's controls acting on the server (desktop/composer/chat_bar.py draws them): the
models' status, followed as the server sends its changes and read on demand; the model
picked for the chat on screen or set as the default for new chats; its "Use tools" and "Use
my documents" switches. A new chat takes the picker's model and the switches when it is
created. "Use tools" shows the chat's setting as far as its model can act on it
(desktop/composer/tools_switch.py)."""

from __future__ import annotations

import asyncio

from PySide6.QtCore import Signal

from desktop.composer.chat_bar import ChatBar
from desktop.composer.tools_switch import ToolsSwitch
from desktop.controller import Context, Controller
from desktop.errors import ClientError
from server.types import ConversationJSON, StatusJSON

RECONNECT_SECONDS = 1.0  # a status stream that ended (the server restarting) is opened again


class ChatBarController(Controller):
    status_shown = Signal()  # the models' state as the server reports it now
    switch_saved = Signal(str)  # conversation id: its tools or documents switch was saved

    def __init__(self, context: Context, bar: ChatBar) -> None:
        super().__init__(context, bar)
        self._bar = bar
        self._tools = ToolsSwitch()
        self._following: asyncio.Task[None] | None = None
        bar.model_picker.model_chosen.connect(self._on_model_picker_model_chosen)
        bar.model_picker.default_requested.connect(self._on_model_picker_default_requested)
        bar.model_picker.model_shown.connect(self._on_model_picker_model_shown)
        bar.tools_switch.toggled.connect(self._on_tools_switch_toggled)
        bar.documents_switch.toggled.connect(self._on_documents_switch_toggled)

    def start(self) -> None:
        """The server is up: its status now, and each change as it comes."""
        self.stop()
        self._following = self._context.tasks.follow(self._follow_status())

    def stop(self) -> None:
        if self._following is not None:
            self._following.cancel()  # hangs up the stream
            self._following = None

    def show_current(self) -> None:
        """The chat on screen changed: a new chat starts on the user's default model, with
        tools and without documents; there are settings only for a chat that exists."""
        self._bar.chat_settings_button.setEnabled(self._context.current_id is not None)
        if self._context.current_id is None:
            self._bar.model_picker.choose(None)
            self.show_switches(tools=True, documents=False)

    def show_chat(self, conversation: ConversationJSON) -> None:
        """A chat opened: its model and switches as stored."""
        self._bar.model_picker.choose(conversation["model"])
        self.show_switches(conversation.get("tools", True), conversation.get("documents", False))

    @property
    def tools_wanted(self) -> bool:
        """The chat's own "Use tools" setting, which a chat created now takes (the switch
        shows it off beside a model that cannot call tools)."""
        return self._tools.wanted

    def show_switches(self, tools: bool, documents: bool) -> None:
        self._tools.wanted = tools
        switch = self._bar.documents_switch
        switch.blockSignals(True)
        switch.setChecked(documents)
        switch.blockSignals(False)
        self._show_tools()

    def _show_tools(self) -> None:
        self._tools.show_model(self._bar.model_picker.current_status())
        look = self._tools.look()
        switch = self._bar.tools_switch
        switch.blockSignals(True)  # what is shown, not a change of the chat's setting
        switch.setChecked(look.checked)
        switch.blockSignals(False)
        switch.setEnabled(look.enabled)
        switch.setToolTip(look.tooltip)

    async def refresh_status(self) -> None:
        client = self._context.client
        if client is None:
            return
        try:
            status = await client.status()
        except ClientError as exc:
            self._bar.model_picker.show_unreachable(exc.message)
            return
        self._show_status(status)

    async def _follow_status(self) -> None:
        """One read that stays open, rather than a request a second; opened again after the
        server ends it or cannot be reached, until `stop`."""
        while (client := self._context.client) is not None:
            try:
                async for status in client.status_updates():
                    self._show_status(status)
            except ClientError as exc:
                self._bar.model_picker.show_unreachable(exc.message)
            await asyncio.sleep(RECONNECT_SECONDS)

    def _show_status(self, status: StatusJSON) -> None:
        self._bar.model_picker.show_status(status)
        self._show_tools()  # the model's ability to call tools may be known only now
        self.status_shown.emit()

    def _on_model_picker_model_shown(self) -> None:
        self._show_tools()

    def _on_model_picker_model_chosen(self, name: str) -> None:
        # On a new chat: for that chat (created with the picker's model), not a default.
        conversation_id = self._context.current_id
        if conversation_id is not None:
            self._context.tasks.spawn(self._set_model(conversation_id, name))

    async def _set_model(self, conversation_id: str, name: str) -> None:
        await self._context.require_client().set_model(conversation_id, name)

    def _on_model_picker_default_requested(self, name: str) -> None:
        self._context.tasks.spawn(self._set_default_model(name))

    async def _set_default_model(self, name: str) -> None:
        """ "Set as default": new chats use `name` (the server remembers it)."""
        await self._context.require_client().models.set_default(name)
        await self.refresh_status()

    def _on_tools_switch_toggled(self, enabled: bool) -> None:
        if not self._tools.usable:
            return  # (disabled: not the user's doing)
        self._tools.wanted = enabled
        self._set_switch("tools", enabled)

    def _on_documents_switch_toggled(self, enabled: bool) -> None:
        self._set_switch("documents", enabled)

    def _set_switch(self, switch: str, enabled: bool) -> None:
        conversation_id = self._context.current_id
        if conversation_id is not None:  # a new chat takes it when it is created
            self._context.tasks.spawn(self._put_switch(conversation_id, switch, enabled))

    async def _put_switch(self, conversation_id: str, switch: str, enabled: bool) -> None:
        await self._context.require_client().set_switch(conversation_id, switch, enabled)
        self.switch_saved.emit(conversation_id)  # the tools offered count in its context
