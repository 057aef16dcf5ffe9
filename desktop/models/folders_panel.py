"""The models page's "Folders" part: where Parley looks for GGUF files besides LM Studio's,
Ollama's and the Hugging Face cache's — the user's own folders, added and removed here. What
is found in them shows on the page's list, with "Use" on each file's row."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from server.types.getting_models import ModelFolderJSON


class FoldersPanel(QWidget):
    folder_added = Signal(str)
    folder_removed = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("folders-panel")
        self.folders = QListWidget(self)
        self.folders.setAccessibleName("Your model folders")
        self.add_folder_button = QPushButton("Add a folder…", self)
        self.remove_folder_button = QPushButton("Remove the folder", self)
        self.remove_folder_button.setEnabled(False)
        for button in (self.add_folder_button, self.remove_folder_button):
            button.setAutoDefault(False)
        explained = QLabel(
            "Parley lists the GGUF files LM Studio, Ollama and the Hugging Face cache keep, "
            "and those in your own folders below. They are used where they are: nothing is "
            "copied.",
            self,
        )
        explained.setWordWrap(True)
        row = QHBoxLayout()
        row.addWidget(self.add_folder_button)
        row.addWidget(self.remove_folder_button)
        row.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 12, 16, 12)
        layout.setSpacing(8)
        layout.addWidget(explained)
        layout.addWidget(self.folders, 1)
        layout.addLayout(row)
        self.folders.itemSelectionChanged.connect(
            lambda: self.remove_folder_button.setEnabled(bool(self.folders.selectedItems()))
        )
        self.add_folder_button.clicked.connect(self._on_add_folder)
        self.remove_folder_button.clicked.connect(self._on_remove_folder)

    def show_folders(self, folders: list[ModelFolderJSON]) -> None:
        self.folders.clear()
        for folder in folders:
            item = QListWidgetItem(folder["path"] + ("" if folder["exists"] else " (not found)"))
            item.setData(Qt.ItemDataRole.UserRole, folder["path"])
            self.folders.addItem(item)

    def _on_add_folder(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "A folder of GGUF models")
        if path:
            self.folder_added.emit(path)

    def _on_remove_folder(self) -> None:
        items = self.folders.selectedItems()
        if items:
            self.folder_removed.emit(str(items[0].data(Qt.ItemDataRole.UserRole)))
