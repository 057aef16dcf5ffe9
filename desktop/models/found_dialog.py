"""Models already on this disk (issue 39): the GGUF files LM Studio, Ollama and the Hugging
Face cache keep, and those in folders the user adds — each listed once, with where it was
found, and used in place (never copied) with "Use this model".

The dialog only shows and asks: desktop/models/found_controller.py hears its requests, calls the
server, and answers with `show_found`, `show_folders` or `show_error`.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialogButtonBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from desktop.widgets.server_dialog import MessageLine, ServerDialog, rows_table
from server.types.getting_models import FoundModelJSON, ModelFolderJSON

COLUMNS = ("Model", "Found in", "Size", "Quantization", "In Parley as")
SOURCES = {"lmstudio": "LM Studio", "ollama": "Ollama", "hf_cache": "Hugging Face cache",
           "folder": "your folder"}  # fmt: skip


def places_text(found: FoundModelJSON) -> str:
    return "; ".join(
        f"{SOURCES.get(p['source'], p['source'])} ({p['place']})" for p in found["found_in"]
    )


class FoundDialog(ServerDialog):
    use_requested = Signal(str, str)  # a found file's path, the name to give it
    folder_added = Signal(str)
    folder_removed = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Models on this computer")
        self.setObjectName("found-dialog")
        self.resize(900, 560)
        self._found: list[FoundModelJSON] = []
        self.table = rows_table(COLUMNS, "Models found", self)
        self.use_button = QPushButton("Use this model", self)
        self.use_button.setEnabled(False)
        self.use_button.setToolTip("Added as a model where it is: nothing is copied")
        self.folders = QListWidget(self)
        self.folders.setAccessibleName("Your model folders")
        self.folders.setMaximumHeight(90)
        self.add_folder_button = QPushButton("Add a folder…", self)
        self.remove_folder_button = QPushButton("Remove the folder", self)
        self.remove_folder_button.setEnabled(False)
        self.message = MessageLine("found-message", self)
        close = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        use_row = QHBoxLayout()
        use_row.addWidget(self.use_button)
        use_row.addStretch(1)
        folder_row = QHBoxLayout()
        folder_row.addWidget(self.add_folder_button)
        folder_row.addWidget(self.remove_folder_button)
        folder_row.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addWidget(
            QLabel("GGUF files LM Studio, Ollama and the Hugging Face cache already keep:", self)
        )
        layout.addWidget(self.table, 1)
        layout.addLayout(use_row)
        layout.addWidget(QLabel("Your own folders of GGUF files:", self))
        layout.addWidget(self.folders)
        layout.addLayout(folder_row)
        layout.addWidget(self.message)
        layout.addWidget(close)
        close.rejected.connect(self.reject)
        self.table.itemSelectionChanged.connect(self._on_selection)
        self.use_button.clicked.connect(self._on_use)
        self.folders.itemSelectionChanged.connect(
            lambda: self.remove_folder_button.setEnabled(bool(self.folders.selectedItems()))
        )
        self.add_folder_button.clicked.connect(self._on_add_folder)
        self.remove_folder_button.clicked.connect(self._on_remove_folder)

    def show_found(self, found: list[FoundModelJSON]) -> None:
        chosen = self._selected()
        self._found = found
        self.table.setRowCount(len(found))
        for row, model in enumerate(found):
            size = model["size_bytes"]
            cells = (model["name"], places_text(model),
                     f"{size / 1e9:.2f} GB" if size >= 1e9 else f"{size / 1e6:,.0f} MB",
                     model["quantization"] or "", model["model"] or "")  # fmt: skip
            for column, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(model["path"] if column == 0 else text)
                item.setData(Qt.ItemDataRole.UserRole, model["path"])
                self.table.setItem(row, column, item)
            if model["path"] == chosen:
                self.table.selectRow(row)
        self._on_selection()

    def show_folders(self, folders: list[ModelFolderJSON]) -> None:
        self.folders.clear()
        for folder in folders:
            item = QListWidgetItem(folder["path"] + ("" if folder["exists"] else " (not found)"))
            item.setData(Qt.ItemDataRole.UserRole, folder["path"])
            self.folders.addItem(item)

    def _selected(self) -> str | None:
        items = self.table.selectedItems()
        return str(items[0].data(Qt.ItemDataRole.UserRole)) if items else None

    def _chosen(self) -> FoundModelJSON | None:
        path = self._selected()
        return next((m for m in self._found if m["path"] == path), None)

    def _on_selection(self) -> None:
        model = self._chosen()
        self.use_button.setEnabled(model is not None and model["model"] is None)

    def _on_use(self) -> None:
        model = self._chosen()
        if model is not None:
            self.show_note(f"Adding {model['name']}…")
            self.use_requested.emit(model["path"], model["name"])

    def _on_add_folder(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "A folder of GGUF models")
        if path:
            self.folder_added.emit(path)

    def _on_remove_folder(self) -> None:
        items = self.folders.selectedItems()
        if items:
            self.folder_removed.emit(str(items[0].data(Qt.ItemDataRole.UserRole)))
