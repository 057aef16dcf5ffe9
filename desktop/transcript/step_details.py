"""One tool step in full: the tool, its arguments and its result (a reply's "details" link);
a sub-agent's, with its task, its steps and all it said."""

from __future__ import annotations

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QPlainTextEdit, QVBoxLayout, QWidget

from desktop.transcript.sub_agent_lines import is_sub_agent, task_of, tool_step_details
from server.types import ToolPartJSON


class StepDetailsDialog(QDialog):
    def __init__(self, step: ToolPartJSON, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        if is_sub_agent(step):
            self.setWindowTitle(f"Sub-agent — {task_of(step)[:60]}")
        else:
            self.setWindowTitle(f"Tool step — {step['name']}")
        self.setObjectName("step-details")
        self.resize(640, 480)
        self.text = QPlainTextEdit(self)
        self.text.setReadOnly(True)
        self.text.setAccessibleName("The tool step's arguments and result")
        self.text.setPlainText(tool_step_details(step))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.text)
        layout.addWidget(buttons)
