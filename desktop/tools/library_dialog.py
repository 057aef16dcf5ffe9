"""Library: the folders of your documents that the model may search, how far their indexing
has got, and which files were skipped and why.

The dialog only shows and asks: its controller calls the server and answers with
`show_library`, `show_error` or `show_note`.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialogButtonBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from desktop.widgets.server_dialog import MessageLine, ServerDialog, rows_table
from server.types.library import FolderJSON, LibraryJSON, LibraryProgressJSON

COLUMNS = ("Folder", "Files", "Passages", "Skipped")
# A folder just added is queued for the indexer: a list that shows it idle this many times,
# with nothing in it, was indexed in between (an empty folder), or has not begun yet.
IDLE_LISTS_TO_SETTLE = 2
ABOUT = (
    "The model can search these folders (when it can call tools) or be given their best "
    "passages (\u201cUse my documents\u201d), and cites what it uses as [n]. Markdown, text, "
    "HTML, PDF and source code are read; files stay where they are."
)


def describe_skipped(folder: FolderJSON) -> str:
    if not folder["skipped_files"]:
        return "No file was skipped."
    lines = [f"{folder['skipped']} file(s) skipped:"]
    lines += [f"• {s['path']} — {s['reason']}" for s in folder["skipped_files"]]
    if folder["skipped"] > len(folder["skipped_files"]):
        lines.append(f"… and {folder['skipped'] - len(folder['skipped_files'])} more")
    return "\n".join(lines)


class LibraryDialog(ServerDialog):
    add_requested = Signal(str)  # a folder's path
    add_confirmed = Signal(str)  # a folder that holds secrets, added all the same
    remove_requested = Signal(str)  # a folder's id

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Library — your documents")
        self.setObjectName("library-dialog")
        self.resize(820, 560)
        self._folders: list[FolderJSON] = []
        self.start_folder = ""  # where Browse… opens (its controller sets it)
        # Folders added here and not seen indexed yet: path -> lists showing them idle.
        self._adding: dict[str, int] = {}
        about = QLabel(ABOUT, self)
        about.setWordWrap(True)
        self.table = rows_table(COLUMNS, "Library folders", self)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.progress = QProgressBar(self)
        self.progress.setAccessibleName("Indexing progress")
        self.progress_label = QLabel(self)
        self.progress_label.setWordWrap(True)
        self.skipped = QPlainTextEdit(self)
        self.skipped.setReadOnly(True)
        self.skipped.setAccessibleName("Skipped files")
        self.message = MessageLine("library-message", self)
        self.path_edit = QLineEdit(self)
        self.path_edit.setPlaceholderText("/path/to/a/folder")
        self.path_edit.setAccessibleName("Folder to add")
        self.browse_button = QPushButton("Browse…", self)
        self.add_button = QPushButton("Add folder", self)
        self.remove_button = QPushButton("Remove", self)
        self.remove_button.setEnabled(False)
        row = QHBoxLayout()
        row.addWidget(self.path_edit, 1)
        row.addWidget(self.browse_button)
        row.addWidget(self.add_button)
        row.addWidget(self.remove_button)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        layout = QVBoxLayout(self)
        layout.addWidget(about)
        layout.addWidget(self.table, 2)
        layout.addWidget(self.progress)
        layout.addWidget(self.progress_label)
        layout.addWidget(self.skipped, 1)
        layout.addWidget(self.message)
        layout.addLayout(row)
        layout.addWidget(buttons)
        buttons.rejected.connect(self.reject)
        self.table.itemSelectionChanged.connect(self._on_table_selection_changed)
        self.browse_button.clicked.connect(self._on_browse_button_clicked)
        self.add_button.clicked.connect(self._on_add_button_clicked)
        self.path_edit.returnPressed.connect(self._on_add_button_clicked)
        self.remove_button.clicked.connect(self._on_remove_button_clicked)

    def show_library(self, library: LibraryJSON) -> None:
        chosen = self.selected()
        self._folders = library["folders"]
        self.table.setRowCount(len(self._folders))
        for row, folder in enumerate(self._folders):
            counts = (folder["files"], folder["chunks"], folder["skipped"])
            cells = (folder["path"], *(f"{count:,}" for count in counts))
            for column, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setData(Qt.ItemDataRole.UserRole, folder["id"])
                item.setToolTip(text)
                self.table.setItem(row, column, item)
            if folder["id"] == chosen:
                self.table.selectRow(row)
        self._show_progress(library["progress"])
        self._on_table_selection_changed()

    def show_added(self, folder: FolderJSON) -> None:
        """A folder was added: said until the indexer has been through it."""
        self._adding[folder["path"]] = 0
        self.show_note(f"Added {folder['path']}; it is being indexed.")

    def _show_progress(self, progress: LibraryProgressJSON) -> None:
        """How far indexing has got: no bar without a folder, nor "Up to date." while a
        folder just added waits for its turn."""
        self.progress.setVisible(bool(self._folders))
        if progress["state"] == "indexing":
            if progress["folder"] in self._adding:
                self._adding[progress["folder"]] = -1  # under way: done at the next idle
            self.progress.setRange(0, max(1, progress["total"]))
            self.progress.setValue(progress["done"])
            current = Path(progress["current"]).name if progress["current"] else ""
            self.progress_label.setText(
                f"Indexing {progress['folder']}: {progress['done']:,} of "
                f"{progress['total']:,} files" + (f" — {current}" if current else "")
            )
            return
        waiting = self._still_waiting()
        if waiting:
            self.progress.setRange(0, 0)  # busy: its turn comes
            self.progress_label.setText(f"{waiting} will be indexed in a moment.")
            return
        self.progress.setRange(0, 1)
        self.progress.setValue(1)
        self.progress_label.setText("Up to date." if self._folders else "No folder yet.")

    def _still_waiting(self) -> str | None:
        """The first folder added here that the indexer has not been through; the others
        are told as indexed."""
        for path, idle in list(self._adding.items()):
            folder = next((f for f in self._folders if f["path"] == path), None)
            looked_at = folder is not None and (folder["files"] or folder["skipped"])
            if folder is None or idle < 0 or looked_at or idle + 1 >= IDLE_LISTS_TO_SETTLE:
                del self._adding[path]
                if folder is not None:
                    files, passages = folder["files"], folder["chunks"]
                    self.show_note(f"Indexed {path}: {files:,} files, {passages:,} passages.")
            else:
                self._adding[path] = idle + 1
                return path
        return None

    def selected(self) -> str | None:
        items = self.table.selectedItems()
        return str(items[0].data(Qt.ItemDataRole.UserRole)) if items else None

    def _on_table_selection_changed(self) -> None:
        folder = next((f for f in self._folders if f["id"] == self.selected()), None)
        self.remove_button.setEnabled(folder is not None)
        text = describe_skipped(folder) if folder is not None else ""
        if self.skipped.toPlainText() != text:
            self.skipped.setPlainText(text)

    def confirm_sensitive(self, path: str, why: str) -> None:
        """Ask before adding a folder that holds secrets (`why` is the server's reason)."""
        ask = QMessageBox(
            QMessageBox.Icon.Warning,
            "Add this folder?",
            f"Add {path} to the library?",
            QMessageBox.StandardButton.Cancel,
            self,
        )
        ask.setObjectName("confirm-sensitive-folder")
        ask.setInformativeText(why)
        add = ask.addButton("Add anyway", QMessageBox.ButtonRole.AcceptRole)
        ask.setDefaultButton(QMessageBox.StandardButton.Cancel)

        def finished(_result: int) -> None:
            ask.deleteLater()
            if ask.clickedButton() is add:
                self.add_confirmed.emit(path)
            else:
                self.show_note(f"{path} was not added.")

        ask.finished.connect(finished)
        ask.open()  # never exec() under qasync

    def _on_browse_button_clicked(self) -> None:
        path = QFileDialog.getExistingDirectory(
            self, "Add a folder of documents", self.start_folder
        )
        if path:
            self.path_edit.setText(path)
            self._on_add_button_clicked()

    def _on_add_button_clicked(self) -> None:
        path = self.path_edit.text().strip()
        if not path:
            self.show_error("Type a folder's path, or Browse… for one.")
            return
        self.add_requested.emit(path)

    def _on_remove_button_clicked(self) -> None:
        folder_id = self.selected()
        if folder_id is not None:
            self.remove_requested.emit(folder_id)
