"""The card that asks before a tool acts: which tool, of which server, with its whole
arguments, and Allow once / Allow for this chat / Deny. Shown above the message field while
a call of the chat on screen waits; one call at a time ("1 of 3" when more wait)."""

from __future__ import annotations

import html
import json

from PySide6.QtCore import Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QApplication,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from server.types.chunks import ApprovalJSON

# The card's keys, for the shortcuts window (F1).
CARD_KEYS = [
    ("A tool call waits", "Allow once", "Alt+A"),
    ("A tool call waits", "Allow for this chat", "Alt+C"),
    ("A tool call waits", "Deny", "Alt+D"),
]


def _has_text(field: QPlainTextEdit | QLineEdit) -> bool:
    return bool(field.toPlainText() if isinstance(field, QPlainTextEdit) else field.text())


def readable(arguments: str) -> str:
    """The arguments as the model wrote them, indented when they are JSON (never cut)."""
    try:
        return json.dumps(json.loads(arguments), indent=2, ensure_ascii=False)
    except ValueError:
        return arguments


class ApprovalCard(QFrame):
    decided = Signal(str, str, str)  # call id, "allow" | "deny", "once" | "chat"

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("approval-card")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAccessibleName("A tool call waits for your approval")
        self.title = QLabel(self)
        self.title.setWordWrap(True)
        self.count = QLabel(self)
        self.arguments = QPlainTextEdit(self)
        self.arguments.setReadOnly(True)
        self.arguments.setAccessibleName("The call's arguments")
        self.arguments.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.arguments.setMaximumHeight(140)
        # Alt+A, Alt+C, Alt+D from anywhere in the window (listed in F1: CARD_KEYS).
        self.allow_once = QPushButton("&Allow once", self)
        self.allow_chat = QPushButton("Allow for this &chat", self)
        self.deny = QPushButton("&Deny", self)
        self.allow_once.setToolTip("Run this call")
        self.allow_chat.setToolTip("Run this call, and this tool's later calls in this chat")
        self.deny.setToolTip("Do not run it: the model is told you said no")
        buttons = QHBoxLayout()
        buttons.addWidget(self.count, 1)
        for button in (self.allow_once, self.allow_chat, self.deny):  # Tab goes this way too
            buttons.addWidget(button)
        QWidget.setTabOrder(self.allow_once, self.allow_chat)
        QWidget.setTabOrder(self.allow_chat, self.deny)
        column = QVBoxLayout(self)
        column.addWidget(self.title)
        column.addWidget(self.arguments)
        column.addLayout(buttons)
        self._call: ApprovalJSON | None = None
        self.allow_once.clicked.connect(lambda: self._decide("allow", "once"))
        self.allow_chat.clicked.connect(lambda: self._decide("allow", "chat"))
        self.deny.clicked.connect(lambda: self._decide("deny", "once"))
        self.hide()

    @property
    def call(self) -> ApprovalJSON | None:
        return self._call

    def show_call(self, call: ApprovalJSON | None, waiting: int = 1) -> None:
        """Ask about `call` (None: nothing waits, the card hides); `waiting`: how many do."""
        self._call = call
        if call is None:
            self.hide()
            return
        self.title.setText(
            f"The model wants to run <b>{html.escape(call['tool'])}</b> from the MCP server "
            f"<b>{html.escape(call['server'])}</b>. Run it?"
        )
        self.arguments.setPlainText(readable(call["arguments"]))
        self.set_waiting(waiting)
        for button in (self.allow_once, self.allow_chat, self.deny):
            button.setEnabled(True)
        self.show()
        typing = QApplication.focusWidget()
        if not (isinstance(typing, QPlainTextEdit | QLineEdit) and _has_text(typing)):
            self.allow_once.setFocus()  # unless the user is typing: their words stay theirs

    def set_waiting(self, waiting: int) -> None:
        """How many calls wait, the one shown among them."""
        self.count.setText(f"1 of {waiting} waiting" if waiting > 1 else "")

    def _decide(self, decision: str, remember: str) -> None:
        if self._call is None:
            return
        for button in (self.allow_once, self.allow_chat, self.deny):
            button.setEnabled(False)  # one answer per call, while it is sent
        self.decided.emit(self._call["call_id"], decision, remember)
