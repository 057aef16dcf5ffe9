"""The approval card's "Allow under a folder…": which string argument of the call (a path),
and the folder its value must lie under for the tool's later calls in this chat to run
unasked. Offered with the parent folder of the call's own value, for the user to widen or
narrow; the server checks that the call itself lies there and that the folder climbs nowhere
(server/agent/argument_scope.py)."""

from __future__ import annotations

import json
import posixpath

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QLineEdit, QPushButton, QWidget


def string_arguments(arguments: str) -> dict[str, str]:
    """The call's arguments whose values are strings (those a folder can bound)."""
    try:
        value = json.loads(arguments) if arguments.strip() else {}
    except ValueError:
        return {}
    if not isinstance(value, dict):
        return {}
    return {key: item for key, item in value.items() if isinstance(item, str) and item}


def folder_of(value: str) -> str:
    """The folder a path lies in (itself when it ends with a separator)."""
    if value.endswith(("/", "\\")):
        return value
    parent = posixpath.dirname(value.replace("\\", "/"))
    return parent or value


class FolderScope(QWidget):
    """A row under the card's buttons, shown when the user chooses "Allow under a folder…"."""

    chosen = Signal(str, str)  # the argument, the folder
    cancelled = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Allow this tool's calls under a folder")
        self.argument = QComboBox(self)
        self.argument.setAccessibleName("The argument that names a path")
        self.folder = QLineEdit(self)
        self.folder.setAccessibleName("The folder its value must lie under")
        self.allow = QPushButton("Allow under it", self)
        self.allow.setToolTip("Run this call, and this tool's later calls in this chat whose "
                              "argument lies in this folder")  # fmt: skip
        self.back = QPushButton("Back", self)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(QLabel("When", self))
        row.addWidget(self.argument)
        row.addWidget(QLabel("is under", self))
        row.addWidget(self.folder, 1)
        row.addWidget(self.allow)
        row.addWidget(self.back)
        self._values: dict[str, str] = {}
        self.argument.currentTextChanged.connect(self._on_argument_current_text_changed)
        self.folder.returnPressed.connect(self._on_allow_clicked)
        self.allow.clicked.connect(self._on_allow_clicked)
        self.back.clicked.connect(self.cancelled)
        self.hide()

    def offer(self, arguments: str) -> bool:
        """Fill the row from a call's arguments; False when it has no string argument."""
        self._values = string_arguments(arguments)
        self.argument.clear()
        self.argument.addItems(list(self._values))
        return bool(self._values)

    def open(self) -> None:
        self.show()
        self.folder.setFocus()
        self.folder.selectAll()

    def _on_argument_current_text_changed(self, argument: str) -> None:
        if argument in self._values:
            self.folder.setText(folder_of(self._values[argument]))

    def _on_allow_clicked(self) -> None:
        folder = self.folder.text().strip()
        if self.argument.currentText() and folder:
            self.chosen.emit(self.argument.currentText(), folder)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_Escape:
            self.cancelled.emit()
            return
        super().keyPressEvent(event)
