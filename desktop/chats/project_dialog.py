"""A project's own settings: its name, its instructions (added to each of its chats' system
prompt) in a plain text editor, and its library folders (its chats' "Use my documents"
searches those; none: the whole library), added through the system's folder dialog.

Saved in one request: the server checks every field, and adds a folder to the library, before
anything changes; what it refuses is said in the dialog, which stays open with the user's
text. A folder that may hold secrets is asked about once more (`confirm_wanted`)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from desktop.file_folders import home
from desktop.widgets.server_dialog import MessageLine, ServerDialog
from server.types.projects import ProjectJSON


def choose_folder(parent: QWidget) -> str:
    """A folder chosen in the system's own dialog, from the home folder ("": none)."""
    return QFileDialog.getExistingDirectory(parent, "Add a folder to the project", str(home()))


class ProjectDialog(ServerDialog):
    # name, instructions, folders, confirmed: the user saved these
    save_requested = Signal(str, str, list, bool)

    def __init__(
        self,
        project: ProjectJSON,
        parent: QWidget | None = None,
        folder_chooser: Callable[[QWidget], str] = choose_folder,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("project-dialog")
        self.setWindowTitle(f"{project['name']} — Instructions & folders")
        self.resize(560, 520)
        self.project_id = project["id"]
        self._choose = folder_chooser
        self.name = QLineEdit(project["name"], self)
        self.name.setObjectName("project-name")
        self.name.setAccessibleName("Project name")
        self.instructions = QPlainTextEdit(self)
        self.instructions.setObjectName("project-instructions")
        self.instructions.setAccessibleName("Instructions")
        self.instructions.setPlaceholderText(
            "What every chat of this project should know: who it is for, the tone, the "
            "facts to keep in mind."
        )
        self.instructions.setPlainText(project["instructions"])
        self.folders = QListWidget(self)
        self.folders.setObjectName("project-folders")
        self.folders.setAccessibleName("Library folders")
        self.folders.addItems(project["folders"])
        self.add_button = QPushButton("Add…", self)
        self.add_button.setObjectName("add-folder")
        self.remove_button = QPushButton("Remove", self)
        self.remove_button.setObjectName("remove-folder")
        hint = QLabel(
            "Its chats' “Use my documents” searches these folders only; with none, the "
            "whole library.",
            self,
        )
        hint.setWordWrap(True)
        self.message = MessageLine("project-message", self)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel, self
        )
        form = QFormLayout()
        form.addRow("Name", self.name)
        form.addRow("Instructions", self.instructions)
        folder_buttons = QVBoxLayout()
        folder_buttons.addWidget(self.add_button)
        folder_buttons.addWidget(self.remove_button)
        folder_buttons.addStretch(1)
        folders = QHBoxLayout()
        folders.addWidget(self.folders, 1)
        folders.addLayout(folder_buttons)
        form.addRow("Folders", folders)
        form.addRow("", hint)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.message)
        layout.addWidget(self.buttons)
        self.add_button.clicked.connect(self._on_add_clicked)
        self.remove_button.clicked.connect(self._on_remove_clicked)
        self.folders.currentRowChanged.connect(lambda _row: self._enable())
        self.buttons.accepted.connect(lambda: self._save(confirmed=False))
        self.buttons.rejected.connect(self.reject)
        self._enable()

    def folder_paths(self) -> list[str]:
        return [self.folders.item(i).text() for i in range(self.folders.count())]

    def confirm_wanted(self, reason: str) -> None:
        """The server asks before a folder that may hold secrets: said, and Save again adds
        it anyway."""
        self.show_error(f"{reason} Save again to add it anyway.")
        self.buttons.accepted.disconnect()
        self.buttons.accepted.connect(lambda: self._save(confirmed=True))

    def _save(self, *, confirmed: bool) -> None:
        self.show_note("Saving…")
        self.save_requested.emit(
            self.name.text(), self.instructions.toPlainText(), self.folder_paths(), confirmed
        )

    def _enable(self) -> None:
        self.remove_button.setEnabled(self.folders.currentRow() >= 0)

    def _on_add_clicked(self) -> None:
        folder = self._choose(self)
        if folder and folder not in self.folder_paths():
            self.folders.addItem(folder)
            self.folders.setCurrentRow(self.folders.count() - 1)

    def _on_remove_clicked(self) -> None:
        row = self.folders.currentRow()
        if row >= 0:
            self.folders.takeItem(row)
        self._enable()
