"""The models page: one window for every model Parley can use. Its "Models" tab is one list —
downloads in flight, the models (local and each upstream's) with their state and actions,
the files found on this computer not yet added — its "Download" tab searches Hugging Face,
its "Folders" tab says where Parley looks for GGUF files. One line of news from the server
under them.

The page only shows and asks: desktop/models/models_controller.py hears its parts'
requests, calls the server, and answers with `show_models`, `show_downloads`, `show_found`,
the hub panel's `show_repos`/`show_files`, `show_note` or `show_error`."""

from __future__ import annotations

from PySide6.QtCore import QEvent, Signal
from PySide6.QtWidgets import (
    QApplication,
    QDialogButtonBox,
    QFileDialog,
    QHBoxLayout,
    QMessageBox,
    QPushButton,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from desktop.look.palette import palette as look_palette
from desktop.look.theme import is_dark
from desktop.models.folders_panel import FoldersPanel
from desktop.models.hub_panel import HubPanel
from desktop.models.local_settings import LocalSettingsBox
from desktop.models.model_list import ModelList
from desktop.models.page_style import page_style
from desktop.widgets.server_dialog import MessageLine, ServerDialog
from server.types import ModelJSON
from server.types.getting_models import DownloadJSON, FoundModelJSON


class ModelsPage(ServerDialog):
    add_requested = Signal(str)  # the path of a GGUF file the user picked
    remove_requested = Signal(str, bool)  # a model's name; stop the replies that use it
    eject_requested = Signal(str, bool)  # a model's name; stop the replies that use it

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Models")
        self.setObjectName("models-page")
        self.resize(960, 680)
        self._models: list[ModelJSON] | None = None  # None: not heard from the server yet
        self._downloads: list[DownloadJSON] | None = None
        self._download_states: dict[str, str] = {}
        self.list = ModelList(self)
        self.local_settings = LocalSettingsBox(self)
        self.local_settings.setVisible(False)
        self.add_button = QPushButton("Add a GGUF file…", self)
        self.add_button.setAutoDefault(False)
        self.hub = HubPanel(self)
        self.folders = FoldersPanel(self)
        models_tab = QWidget(self)
        add_row = QHBoxLayout()
        add_row.setContentsMargins(16, 0, 16, 0)
        add_row.addWidget(self.add_button)
        add_row.addStretch(1)
        models_layout = QVBoxLayout(models_tab)
        models_layout.setContentsMargins(0, 0, 0, 8)
        models_layout.addWidget(self.list, 1)
        settings_row = QHBoxLayout()
        settings_row.setContentsMargins(16, 0, 16, 0)
        settings_row.addWidget(self.local_settings)
        models_layout.addLayout(settings_row)
        models_layout.addLayout(add_row)
        self.tabs = QTabWidget(self)
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(models_tab, "Models")
        self.tabs.addTab(self.hub, "Download")
        self.tabs.addTab(self.folders, "Folders")
        self.message = MessageLine("models-message", self)
        close = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 12)
        layout.addWidget(self.tabs, 1)
        bottom = QHBoxLayout()
        bottom.setContentsMargins(16, 0, 16, 0)
        bottom.addWidget(self.message, 1)
        bottom.addWidget(close)
        layout.addLayout(bottom)
        close.rejected.connect(self.reject)
        self.add_button.clicked.connect(self._on_add_button_clicked)
        self.list.remove_requested.connect(lambda name: self.remove_requested.emit(name, False))
        self.list.eject_requested.connect(lambda name: self.eject_requested.emit(name, False))
        self.list.settings_requested.connect(self._on_list_settings_requested)
        self.list.add_requested.connect(self._on_list_add_requested)
        self.hub.noted.connect(self.show_note)
        self._style()

    # -- what the server says ------------------------------------------------------------

    def show_models(self, models: list[ModelJSON]) -> None:
        self._models = models
        self._show_list()
        names = {m["name"] for m in models}
        if self.local_settings.name is not None and self.local_settings.name not in names:
            self.local_settings.name = None
            self.local_settings.setVisible(False)

    def show_downloads(self, downloads: list[DownloadJSON]) -> None:
        states: dict[str, str] = {d["id"]: d["state"] for d in downloads}
        if states != self._download_states and not self.message.styleSheet():
            self.show_note("")  # a note said what was asked; the rows now say what came of it
        self._download_states = states
        self._downloads = downloads
        self._show_list()

    def _show_list(self) -> None:
        """Once both are known: a finished download is its model's row, unless the model
        was removed since (then its row offers to add the file again)."""
        models, downloads = self._models, self._downloads
        if models is None or downloads is None:
            return
        self.list.show_downloads(downloads, {m["name"] for m in models})
        origins = {d["model"]: d["repo"] for d in downloads if d["model"]}
        self.list.show_models(models, origins)

    def show_download_started(self) -> None:
        """Its row is on the Models tab, at the top of the list: seen at once."""
        self.tabs.setCurrentIndex(0)
        self.list.verticalScrollBar().setValue(0)

    def show_found(self, found: list[FoundModelJSON]) -> None:
        self.list.show_found(found)

    # -- what the user does ----------------------------------------------------------------

    def _on_list_settings_requested(self, name: str) -> None:
        box = self.local_settings
        if box.isVisible() and box.name == name:
            box.setVisible(False)
            box.name = None
            return
        model = next((m for m in self._models or [] if m["name"] == name), None)
        settings = model.get("settings") if model is not None else None
        if settings is not None:
            box.show_settings(name, settings)
            box.setVisible(True)

    def _on_list_add_requested(self, path: str) -> None:
        self.show_note(f"Adding {path}…")
        self.add_requested.emit(path)

    def _on_add_button_clicked(self) -> None:
        path, _filter = QFileDialog.getOpenFileName(
            self, "Add a GGUF model", "", "GGUF models (*.gguf);;All files (*)"
        )
        if path:
            self.show_note(f"Adding {path}…")
            self.add_requested.emit(path)

    def ask_stop_replies(self, name: str, eject: bool) -> None:
        """The model is replying (maybe a sub-agent of a reply): stop those, then remove or
        eject it?"""
        verb = "eject" if eject else "remove"
        ask = QMessageBox(
            QMessageBox.Icon.Question,
            f"{verb.capitalize()} a model in use",
            f"{name} is replying now (or a reply's sub-agent uses it).",
            QMessageBox.StandardButton.Cancel,
            self,
        )
        ask.setObjectName(f"stop-and-{verb}")
        ask.setInformativeText(f"Stop those replies (what they said so far is kept) and {verb} it?")
        stop = ask.addButton(f"Stop and {verb}", QMessageBox.ButtonRole.DestructiveRole)
        signal = self.eject_requested if eject else self.remove_requested

        def finished(_result: int) -> None:
            ask.deleteLater()
            if ask.clickedButton() is stop:
                signal.emit(name, True)

        ask.finished.connect(finished)
        ask.open()  # never exec() under qasync

    # -- the look ----------------------------------------------------------------------------

    def event(self, event: QEvent) -> bool:
        handled = super().event(event)
        if event.type() == QEvent.Type.ApplicationPaletteChange:
            self._style()
        return handled

    def _style(self) -> None:
        sheet = page_style(look_palette(is_dark(QApplication.palette())))
        if self.styleSheet() != sheet:
            self.setStyleSheet(sheet)
