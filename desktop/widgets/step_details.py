"""One tool step in full: the tool, its arguments and its result (a reply's "details" link)."""

from __future__ import annotations

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QPlainTextEdit, QVBoxLayout, QWidget

from desktop.widgets.step_lines import step_details
from server.types import ToolPartJSON


class StepDetailsDialog(QDialog):
    def __init__(self, step: ToolPartJSON, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Tool step — {step['name']}")
        self.setObjectName("step-details")
        self.resize(640, 480)
        self.text = QPlainTextEdit(self)
        self.text.setReadOnly(True)
        self.text.setAccessibleName("The tool step's arguments and result")
        self.text.setPlainText(step_details(step))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.text)
        layout.addWidget(buttons)
