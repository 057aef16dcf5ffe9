"""The Models dialog's life: open it, keep it current while open, add and remove GGUF files
through the server (desktop/client.py), and say what went wrong in the dialog itself."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QWidget

from desktop.client import ParleyClient
from desktop.errors import ClientError
from desktop.tasks import Tasks
from desktop.widgets.models_dialog import ModelsDialog

REFRESH_MS = 1000  # states change while it is open: loading, replying, errors
T = TypeVar("T")


class Failed:
    """What a call to the server gave when it failed (its reason is shown in the dialog)."""


class ModelsController(QObject):
    def __init__(
        self, client: Callable[[], ParleyClient | None], tasks: Tasks, parent: QWidget
    ) -> None:
        super().__init__(parent)
        self._client = client
        self._tasks = tasks
        self._parent = parent
        self.dialog: ModelsDialog | None = None
        self._timer = QTimer(self)
        self._timer.setInterval(REFRESH_MS)
        self._timer.timeout.connect(self._on_timer_timeout)

    def open(self) -> None:
        if self.dialog is not None:
            self.dialog.raise_()
            return
        self.dialog = ModelsDialog(self._parent)
        self.dialog.add_requested.connect(self._on_dialog_add_requested)
        self.dialog.remove_requested.connect(self._on_dialog_remove_requested)
        self.dialog.settings_requested.connect(self._on_dialog_settings_requested)
        self.dialog.finished.connect(self._on_dialog_finished)
        self.dialog.open()
        self._timer.start()
        self._tasks.spawn(self._refresh())

    def _on_dialog_finished(self, _result: int) -> None:
        self._timer.stop()
        if self.dialog is not None:
            self.dialog.deleteLater()
            self.dialog = None

    def _on_timer_timeout(self) -> None:
        self._tasks.spawn(self._refresh())

    def _on_dialog_add_requested(self, path: str) -> None:
        self._tasks.spawn(self._add(path))

    def _on_dialog_remove_requested(self, name: str) -> None:
        self._tasks.spawn(self._remove(name))

    def _on_dialog_settings_requested(self, name: str, settings: dict[str, int]) -> None:
        done = f"{name} starts with these settings on its next use."
        self._tasks.spawn(self._act(done, lambda client: client.configure_model(name, settings)))

    async def _refresh(self) -> None:
        models = await self._ask(lambda client: client.models())
        if not isinstance(models, Failed) and self.dialog is not None:
            self.dialog.show_models(models)

    async def _add(self, path: str) -> None:
        await self._act(f"Added {path}.", lambda client: client.add_local_model(path))

    async def _remove(self, name: str) -> None:
        await self._act(f"Removed {name}.", lambda client: client.remove_local_model(name))

    async def _act(self, done: str, action: Callable[[ParleyClient], Awaitable[object]]) -> None:
        dialog = self.dialog
        done_ok = not isinstance(await self._ask(action), Failed)
        if done_ok and dialog is not None and dialog is self.dialog:
            dialog.show_note(done)
            await self._refresh()

    async def _ask(self, call: Callable[[ParleyClient], Awaitable[T]]) -> T | Failed:
        """The server's answer, or Failed with the reason shown in the dialog (if still open)."""
        dialog, client = self.dialog, self._client()
        if dialog is None:
            return Failed()
        try:
            if client is None:
                raise ClientError("Parley's server is not up.")
            return await call(client)
        except ClientError as exc:
            if dialog is self.dialog:
                dialog.show_error(exc.message)
            return Failed()
