"""A dialog that shows what the server has and asks it for changes: opened once, kept current
while open (states change: starting, loading, errors), every call's failure shown in the
dialog itself. Subclassed per dialog (Models, Tools, Library, Download, On this computer),
each saying how its dialog is made and what refreshes it."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QWidget

from desktop.client import ParleyClient
from desktop.controller import Context, Controller
from desktop.errors import ClientError
from desktop.widgets.server_dialog import ServerDialog

REFRESH_MS = 1000
T = TypeVar("T")
D = TypeVar("D", bound=ServerDialog)


class Failed:
    """What a call to the server gave when it failed (its reason is shown in the dialog)."""

    def __init__(self, code: str | None = None) -> None:
        self.code = code  # the server's error code, when it answered


class DialogController(Controller, Generic[D]):
    def __init__(self, context: Context, parent: QWidget) -> None:
        super().__init__(context, parent)
        self.dialog: D | None = None
        self._timer = QTimer(self)
        self._timer.setInterval(REFRESH_MS)
        self._timer.timeout.connect(self._on_timer_timeout)

    @abstractmethod
    def _make_dialog(self) -> D:
        """The dialog, its requests connected (it is opened by `open`)."""

    @abstractmethod
    async def _refresh(self) -> None:
        """Show the server's state now in the open dialog."""

    def open(self) -> None:
        if self.dialog is not None:
            self.dialog.raise_()
            return
        self.dialog = self._make_dialog()
        self.dialog.finished.connect(self._on_dialog_finished)
        self.dialog.open()
        self._timer.start()
        self._context.tasks.spawn(self._refresh())

    def _on_dialog_finished(self, _result: int) -> None:
        self._timer.stop()
        if self.dialog is not None:
            self.dialog.deleteLater()
            self.dialog = None

    def _on_timer_timeout(self) -> None:
        self._context.tasks.spawn(self._refresh())

    def _spawn_act(self, done: str, action: Callable[[ParleyClient], Awaitable[object]]) -> None:
        """Ask for a change as a task; `done` is shown once the server made it."""
        self._context.tasks.spawn(self._act(done, action))

    async def _act(self, done: str, action: Callable[[ParleyClient], Awaitable[object]]) -> None:
        dialog = self.dialog
        done_ok = not isinstance(await self._ask(action), Failed)
        if done_ok and dialog is not None and dialog is self.dialog:
            dialog.show_note(done)
            await self._refresh()

    async def _ask(self, call: Callable[[ParleyClient], Awaitable[T]]) -> T | Failed:
        """The server's answer, or Failed with the reason shown in the dialog (if still open)."""
        dialog, client = self.dialog, self._context.client
        if dialog is None:
            return Failed()
        try:
            if client is None:
                raise ClientError("Parley's server is not up.")
            return await call(client)
        except ClientError as exc:
            if dialog is self.dialog:
                dialog.show_error(exc.message)
            return Failed(exc.code)
