"""A slash command's arguments, asked before its server fills the prompt in: one field for
each argument the prompt takes (its title, else its name; its description beside it and as
the field's hint), required ones marked and needed before "Use prompt" goes. A field is a
few lines tall (a prompt's argument is often code or a passage; Tab moves on, Ctrl+Enter
uses the prompt). The dialog stays open until the server has taken the values: what it
refuses is said in the dialog, the values kept."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from desktop.look.colours import Colours
from server.types.tools import PromptJSON

FIELD_LINES = 3
REQUIRED_MARK = " *"


def _ctrl_enter(event: QKeyEvent) -> bool:
    control = event.modifiers() & Qt.KeyboardModifier.ControlModifier
    return bool(control) and event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)


class _Field(QPlainTextEdit):
    def keyPressEvent(self, event: QKeyEvent) -> None:
        if _ctrl_enter(event):
            event.ignore()  # the dialog's: use the prompt (the editor would add a line)
            return
        super().keyPressEvent(event)


class PromptForm(QDialog):
    submitted = Signal(dict)  # {argument: value}, the empty ones left out

    def __init__(
        self, command: str, prompt: PromptJSON, parent: QWidget | None = None,
        action: str = "Use prompt",
    ) -> None:  # fmt: skip
        """`command`: the title; `action`: its button (a template of URIs is filled in with
        the same form: "Attach")."""
        super().__init__(parent)
        self.setObjectName("prompt-form")
        self.setWindowTitle(command)
        self.setMinimumWidth(480)
        self._colours = Colours(self.palette())
        about = QLabel(self)
        about.setObjectName("prompt-about")
        about.setWordWrap(True)
        about.setTextFormat(Qt.TextFormat.PlainText)  # the server's words, not markup
        about.setText(" — ".join(t for t in (prompt["title"], prompt["description"]) if t))
        about.setVisible(bool(about.text()))
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.fields: dict[str, QPlainTextEdit] = {}
        self._required: list[str] = []
        for argument in prompt["arguments"]:
            name = argument["name"]
            field = _Field(self)
            field.setObjectName(f"argument-{name}")
            field.setTabChangesFocus(True)
            lines = field.fontMetrics().lineSpacing() * FIELD_LINES
            field.setFixedHeight(lines + 2 * field.frameWidth() + 8)
            shown = argument["title"] or name
            field.setAccessibleName(shown)
            if argument["description"]:
                field.setPlaceholderText(argument["description"])
                field.setAccessibleDescription(argument["description"])
                field.setToolTip(argument["description"])
            if argument["required"]:
                self._required.append(name)
                field.setAccessibleDescription(f"Required. {argument['description'] or ''}")
            field.textChanged.connect(self._check)
            label = QLabel(shown + (REQUIRED_MARK if argument["required"] else ""), self)
            label.setBuddy(field)
            form.addRow(label, field)
            self.fields[name] = field
        self.message = QLabel(self)
        self.message.setObjectName("prompt-message")
        self.message.setWordWrap(True)
        self.message.setVisible(False)
        buttons = QDialogButtonBox(self)
        self.use_button = buttons.addButton(action, QDialogButtonBox.ButtonRole.AcceptRole)
        self.use_button.setToolTip(f"{action} (Ctrl+Enter)")
        buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self._submit)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 16, 16, 16)
        layout.setSpacing(8)
        layout.addWidget(about)
        layout.addLayout(form)
        if self._required:
            hint = QLabel(f"{REQUIRED_MARK.strip()} required", self)
            hint.setStyleSheet(f"color: {self._colours.muted};")
            layout.addWidget(hint)
        layout.addWidget(self.message)
        layout.addWidget(buttons)
        self._check()
        first = next(iter(self.fields.values()), None)
        if first is not None:
            first.setFocus()

    def values(self) -> dict[str, str]:
        """What was entered, the empty fields left out (the server's defaults then hold)."""
        return {name: f.toPlainText() for name, f in self.fields.items() if f.toPlainText()}

    def show_error(self, text: str) -> None:
        """The server refused the values: why (they stay to be corrected)."""
        self.message.setText(text)
        self.message.setStyleSheet(f"color: {self._colours.error};")
        self.message.setVisible(True)
        self.use_button.setEnabled(True)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if _ctrl_enter(event):
            self._submit()
            return
        super().keyPressEvent(event)

    def _check(self) -> None:
        given = self.values()
        self.use_button.setEnabled(all(given.get(name, "").strip() for name in self._required))

    def _submit(self) -> None:
        if self.use_button.isEnabled():
            self.use_button.setEnabled(False)  # until the server answers
            self.submitted.emit(self.values())
