"""Opening the chat settings of the chat on screen, and saving them through the server (a bad
value is refused by the server, which names it; the dialog shows that and stays open)."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QWidget

from desktop.chats.settings_dialog import ChatSettingsDialog
from desktop.controller import Context, Controller
from desktop.errors import ClientError


class ChatSettings(Controller):
    saved = Signal(str)  # conversation id: its settings changed (what the model is given too)

    def __init__(self, context: Context, parent: QWidget) -> None:
        super().__init__(context, parent)
        self.dialog: ChatSettingsDialog | None = None

    def open(self, max_tokens: int | None) -> None:
        """`max_tokens`: Settings' longest reply (None: no limit), what a chat without its
        own sends, shown as such."""
        self._context.tasks.spawn(self._open(max_tokens))

    async def _open(self, max_tokens: int | None) -> None:
        client, conversation_id = self._context.client, self._context.current_id
        if client is None or conversation_id is None:
            return
        conversation = await client.conversation(conversation_id, limit=1)  # its settings
        try:
            servers = (await client.tools())["servers"]  # which of them the chat offers
        except ClientError:
            servers = []  # (the rest of its settings can still be changed)
        if self.dialog is not None:
            self.dialog.close()
        dialog = ChatSettingsDialog(conversation, max_tokens, self._parent, servers)
        dialog.save_requested.connect(
            lambda body: self._context.tasks.spawn(self._save(dialog, conversation_id, body))
        )
        self.dialog = dialog
        dialog.open()

    async def _save(
        self, dialog: ChatSettingsDialog, conversation_id: str, body: dict[str, object]
    ) -> None:
        client = self._context.client
        if client is None:
            dialog.show_error("Parley's server is restarting; try again in a moment.")
            return
        try:
            await client.update(conversation_id, body)
        except ClientError as exc:
            dialog.show_error(str(exc))
            return
        dialog.accept()
        self.saved.emit(conversation_id)
