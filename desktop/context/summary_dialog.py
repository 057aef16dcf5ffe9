"""A summary of earlier messages: what the model is given in their place, read or
edited. Saving asks the server (`save_requested`); the dialog stays open until the window
says it was saved (`accept`) or why not (`show_error`)."""

from __future__ import annotations

import time

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from server.types import SummaryJSON

EXPLAINED = (
    "The model is given this summary in place of the messages above the marker. They stay in "
    "the chat, shown, searched and exported; undo the summary to give them to the model again."
)


class SummaryDialog(QDialog):
    save_requested = Signal(str)  # the summary's new text

    def __init__(self, summary: SummaryJSON, editing: bool, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("summary-dialog")
        self.setWindowTitle("Edit the summary" if editing else "Summary of earlier messages")
        self.resize(560, 440)
        self.summary = summary
        who = f"Written by {summary['model']}" if summary["model"] else "Edited by you"
        when = time.strftime("%d %B %Y, %H:%M", time.localtime(summary["updated_at"]))
        about = QLabel(f"{EXPLAINED}\n{who}, {when}.", self)
        about.setWordWrap(True)
        self.editor = QPlainTextEdit(self)
        self.editor.setAccessibleName("The summary")
        self.editor.setPlainText(summary["content"])
        self.message = QLabel("", self)
        self.message.setWordWrap(True)
        buttons = QDialogButtonBox(self)
        self.save_button = QPushButton("Save", self)
        self.edit_button = QPushButton("Edit", self)
        buttons.addButton(self.save_button, QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.addButton(self.edit_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.addButton(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        self.save_button.clicked.connect(self._on_save_button_clicked)
        self.edit_button.clicked.connect(lambda: self.set_editing(True))
        layout = QVBoxLayout(self)
        layout.addWidget(about)
        layout.addWidget(self.editor, 1)
        layout.addWidget(self.message)
        layout.addWidget(buttons)
        self.set_editing(editing)

    def set_editing(self, editing: bool) -> None:
        self.editor.setReadOnly(not editing)
        self.save_button.setVisible(editing)
        self.edit_button.setVisible(not editing)
        if editing:
            self.setWindowTitle("Edit the summary")
            self.editor.setFocus()

    def show_error(self, text: str) -> None:
        self.message.setText(text)

    def _on_save_button_clicked(self) -> None:
        text = self.editor.toPlainText().strip()
        if not text:
            self.show_error("A summary cannot be empty; undo it instead.")
            return
        self.message.setText("Saving…")
        self.save_requested.emit(text)
