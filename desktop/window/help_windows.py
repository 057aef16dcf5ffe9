"""The Help menu's windows: Keyboard shortcuts, About Parley, and the log folder (opened in
the user's file manager). Dialogs open without a nested event loop (never exec() under
qasync), one of each at a time."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, QUrl, Signal
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QDialog, QWidget

from desktop.embedded import log_dir
from desktop.settings.config import config_dir
from desktop.window.about_dialog import AboutDialog, about_rows
from desktop.window.shortcuts_dialog import ShortcutsDialog


class HelpWindows(QObject):
    failed = Signal(str)  # a folder that could not be opened

    def __init__(
        self,
        shortcuts: list[tuple[str, str, str]],
        models: Callable[[], list[str]],
        parent: QWidget,
    ) -> None:
        super().__init__(parent)
        self._shortcuts = shortcuts  # (menu, command, keys), for the shortcuts window
        self._models = models
        self._parent = parent
        self.data_dir: Path | None = None  # the app sets the one it launched with
        self.dialog: QDialog | None = None

    def paths(self) -> list[tuple[str, str]]:
        return [
            ("Chats", str(self.data_dir) if self.data_dir else "—"),
            ("Settings", str(config_dir())),
            ("Log", str(log_dir())),
        ]

    def show_shortcuts(self) -> None:
        self._open(ShortcutsDialog(self._shortcuts, self._parent))

    def show_about(self) -> None:
        self._open(AboutDialog(about_rows(self._models(), self.paths()), self._parent))

    def open_log_folder(self) -> None:
        folder = log_dir()
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            self.failed.emit(f"The log folder {folder} could not be made: {exc}")
            return
        if not QDesktopServices.openUrl(QUrl.fromLocalFile(str(folder))):
            self.failed.emit(f"No file manager opened the log folder: {folder}")

    def _open(self, dialog: QDialog) -> None:
        if self.dialog is not None:
            self.dialog.close()
        self.dialog = dialog
        dialog.finished.connect(lambda _result: self._closed(dialog))
        dialog.open()

    def _closed(self, dialog: QDialog) -> None:
        if self.dialog is dialog:
            self.dialog = None
        dialog.deleteLater()
