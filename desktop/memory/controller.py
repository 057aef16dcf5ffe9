"""The memory dialogs' life: one per scope (a project's chats, or those outside every project),
read when opened and when the user comes back to it (a save in another editor shows), each of
its changes asked of the server (client.memory), whose refusals are said in the dialog."""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any

from PySide6.QtCore import Qt, QUrl, Signal
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QMessageBox, QWidget

from desktop.controller import Context, Controller
from desktop.errors import ClientError
from desktop.memory.dialog import CHANGED as CONFLICT
from desktop.memory.dialog import MemoryDialog
from desktop.memory.lines import Titles
from server.types.memory import MemoryJSON

CHANGED = "memory_changed"


def open_file(path: str) -> bool:
    """The file in the user's own editor for its type."""
    return QDesktopServices.openUrl(QUrl.fromLocalFile(path))


class MemoryDialogs(Controller):
    chat_chosen = Signal(str)  # a line's chat link: open that chat

    def __init__(self, context: Context, parent: QWidget) -> None:
        super().__init__(context, parent)
        self.dialogs: dict[str | None, MemoryDialog] = {}  # by project (None: outside)
        self._asking: QMessageBox | None = None

    def open(self, project_id: str | None, scope: str) -> MemoryDialog:
        """The scope's dialog, opened (or brought to the front)."""
        dialog = self.dialogs.get(project_id)
        if dialog is not None:
            dialog.raise_()
            dialog.activateWindow()
            return dialog
        dialog = MemoryDialog(scope, self._parent)
        self.dialogs[project_id] = dialog
        dialog.forget_requested.connect(
            lambda line_id: self._spawn(project_id, self._forget(project_id, line_id))
        )
        dialog.chat_chosen.connect(self.chat_chosen)
        dialog.save_requested.connect(
            lambda text, version: self._spawn(project_id, self._save(project_id, text, version))
        )
        dialog.turn_on_requested.connect(
            lambda: self._spawn(project_id, self._save(project_id, "", None))
        )
        dialog.delete_requested.connect(lambda: self._ask_delete(project_id))
        dialog.editor_requested.connect(self._on_dialog_editor_requested)
        dialog.reload_wanted.connect(lambda: self._spawn(project_id, self.reload(project_id)))
        dialog.finished.connect(lambda _result: self._closed(project_id))
        # Not modal: a line's link opens its chat in the window, which stays usable beside it.
        dialog.setWindowModality(Qt.WindowModality.NonModal)
        dialog.show()
        self._spawn(project_id, self.reload(project_id))
        return dialog

    def _closed(self, project_id: str | None) -> None:
        dialog = self.dialogs.pop(project_id, None)
        if dialog is not None:
            dialog.deleteLater()

    def _spawn(self, project_id: str | None, work: Coroutine[Any, Any, None]) -> None:
        self._context.tasks.spawn(self._shown_errors(project_id, work))

    async def _shown_errors(self, project_id: str | None, work: Coroutine[Any, Any, None]) -> None:
        """Run `work`; a refusal is said in the scope's dialog (if still open), not the
        window's banner."""
        try:
            await work
        except ClientError as exc:
            dialog = self.dialogs.get(project_id)
            if dialog is None:
                raise
            dialog.show_error(exc.message)

    async def _show(self, project_id: str | None, memory: MemoryJSON) -> MemoryDialog | None:
        """The memory in its dialog (if still open), its lines' chats named."""
        titles: Titles = {}
        if any(line["chat_id"] for line in memory["lines"]):
            chats = await self._context.require_client().conversations()
            titles = {chat["id"]: chat["title"] for chat in chats}
        dialog = self.dialogs.get(project_id)
        if dialog is not None:
            dialog.show_memory(memory, titles)
        return dialog

    async def reload(self, project_id: str | None) -> None:
        await self._show(project_id, await self._context.require_client().memory.read(project_id))

    async def _forget(self, project_id: str | None, line_id: str) -> None:
        memory = await self._context.require_client().memory.forget(project_id, line_id)
        dialog = await self._show(project_id, memory)
        if dialog is not None:
            dialog.show_note("Forgotten.")

    async def _save(self, project_id: str | None, text: str, version: str | None) -> None:
        client = self._context.require_client()
        try:
            memory = await client.memory.save(project_id, text, version)
        except ClientError as exc:
            dialog = self.dialogs.get(project_id)
            if exc.code != CHANGED or dialog is None:
                raise
            await self._show(project_id, await client.memory.read(project_id))
            dialog.show_error(CONFLICT)  # (the editor keeps the user's text)
            return
        dialog = await self._show(project_id, memory)
        if dialog is not None:
            dialog.stop_edit()
            dialog.show_note("Saved." if text else "Memory is on for these chats.")

    def _ask_delete(self, project_id: str | None) -> None:
        dialog = self.dialogs.get(project_id)
        if dialog is None or dialog.memory is None:
            return
        version = dialog.memory["version"]
        asking = QMessageBox(
            QMessageBox.Icon.Question,
            "Delete memory",
            "Delete the whole memory file? The assistant forgets everything in it, and "
            "memory is off for these chats until it is turned on again.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            dialog,
        )
        asking.setObjectName("confirm-delete-memory")

        def finished(result: int) -> None:
            if result == QMessageBox.StandardButton.Yes:
                self._spawn(project_id, self._delete(project_id, version))
            asking.deleteLater()
            self._asking = None

        asking.finished.connect(finished)
        self._asking = asking
        asking.open()  # never a nested event loop under qasync

    async def _delete(self, project_id: str | None, version: str | None) -> None:
        client = self._context.require_client()
        try:
            await client.memory.delete(project_id, version)
        except ClientError as exc:
            dialog = self.dialogs.get(project_id)
            if exc.code != CHANGED or dialog is None:
                raise
            await self._show(project_id, await client.memory.read(project_id))
            dialog.show_error("The file changed on disk since it was read: nothing was deleted.")
            return
        await self.reload(project_id)
        dialog = self.dialogs.get(project_id)
        if dialog is not None:
            dialog.show_note("Deleted: memory is off for these chats.")

    def _on_dialog_editor_requested(self, path: str) -> None:
        if not open_file(path):
            dialog = next((d for d in self.dialogs.values() if d.memory and
                           d.memory["path"] == path), None)  # fmt: skip
            if dialog is not None:
                dialog.show_error(f"No application here opens {path}.")
