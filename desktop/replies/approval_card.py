"""The card that asks before a tool acts: which tool, of which server, asked by the model or
by which sub-agent, why when the injection guard asks (what the model read that the user did
not write, with the start of it), with its whole arguments, and how far an allow reaches:
Allow once / Allow for this chat (the tool) / Allow the whole server for this chat / Allow
under a folder… (a path argument's calls: folder_scope.py) / Deny.
Shown above the message field while a call of the chat on screen waits; one call at a time
("1 of 3" when more wait)."""

from __future__ import annotations

import html
import json

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from desktop.replies.call_questions import approval_question
from desktop.replies.card_focus import AnswerButton, holds_focus, take_focus
from desktop.replies.folder_scope import FolderScope
from server.types.chunks import ApprovalJSON

# The card's keys, for the shortcuts window (F1).
CARD_KEYS = [
    ("A tool call waits", "Allow once", "Alt+A"),
    ("A tool call waits", "Allow for this chat", "Alt+T"),
    ("A tool call waits", "Allow the whole server for this chat", "Alt+W"),
    ("A tool call waits", "Allow under a folder…", "Alt+U"),
    ("A tool call waits", "Deny", "Alt+D"),
]


ARGUMENTS_MAX_PX = 140


def readable(arguments: str) -> str:
    """The arguments as the model wrote them, indented when they are JSON (never cut)."""
    try:
        return json.dumps(json.loads(arguments), indent=2, ensure_ascii=False)
    except ValueError:
        return arguments


def guard_reason(call: ApprovalJSON) -> str:
    """The guard's reason, and the start of the latest text the model read (quoted)."""
    reason = call.get("reason")
    if not reason:
        return ""
    text = html.escape(reason)
    sources = call.get("sources") or []
    if sources:
        text += f"<br><i>“{html.escape(sources[0]['excerpt'])}”</i>"
    return text


class ApprovalCard(QFrame):
    # call id, "allow" | "deny", "once" | "chat" (the tool) | "server" (all its tools)
    decided = Signal(str, str, str)
    allowed_under = Signal(str, str, str)  # call id, the argument, the folder it lies under
    # Done with the keyboard (answered, or hidden while it had the focus): card_focus.py.
    focus_released = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("approval-card")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAccessibleName("A tool call waits for your approval")
        self.title = QLabel(self)
        self.title.setWordWrap(True)
        self.count = QLabel(self)
        self.reason = QLabel(self)  # the injection guard's why, and what the model read
        self.reason.setWordWrap(True)
        self.reason.setTextFormat(Qt.TextFormat.RichText)  # escaped: the excerpt stays text
        self.reason.setAccessibleName("Why Parley asks")
        self.arguments = QPlainTextEdit(self)
        self.arguments.setReadOnly(True)
        self.arguments.setAccessibleName("The call's arguments")
        self.arguments.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        # Alt+A, Alt+T, Alt+D from anywhere in the window (listed in F1: CARD_KEYS); not
        # Alt+C, the Chat menu's: a key two widgets claim is ambiguous, and answers nothing.
        self.allow_once = AnswerButton("&Allow once", self)
        self.allow_once.setProperty("primary", True)  # the look draws it in the accent
        self.allow_chat = AnswerButton("Allow for &this chat", self)
        # Short: the tooltip and F1 say "for this chat".
        self.allow_server = AnswerButton("Allow the &whole server", self)
        self.allow_under = AnswerButton("Allow &under a folder…", self)
        self.deny = AnswerButton("&Deny", self)
        self.allow_once.setToolTip("Run this call")
        self.allow_chat.setToolTip("Run this call, and this tool's later calls in this chat")
        self.allow_under.setToolTip(
            "Run this call, and this tool's later calls in this chat whose path lies in a "
            "folder you choose"
        )
        self.deny.setToolTip("Do not run it: the model is told you said no")
        self.folder_scope = FolderScope(self)
        # Two rows, so a narrow window keeps the card whole: this call (or this tool) and
        # Deny, then the wider scopes. Tab goes through them in _answers' order.
        buttons, wider = QHBoxLayout(), QHBoxLayout()
        buttons.addWidget(self.count, 1)
        for button in (self.allow_once, self.allow_chat, self.deny):
            buttons.addWidget(button)
        wider.addStretch(1)
        wider.addWidget(self.allow_server)
        wider.addWidget(self.allow_under)
        for first, second in zip(self._answers(), self._answers()[1:], strict=False):
            QWidget.setTabOrder(first, second)
        column = QVBoxLayout(self)
        column.addWidget(self.title)
        column.addWidget(self.reason)
        column.addWidget(self.arguments)
        column.addLayout(buttons)
        column.addLayout(wider)
        column.addWidget(self.folder_scope)
        self._call: ApprovalJSON | None = None
        self.allow_once.clicked.connect(lambda: self._decide("allow", "once"))
        self.allow_chat.clicked.connect(lambda: self._decide("allow", "chat"))
        self.allow_server.clicked.connect(lambda: self._decide("allow", "server"))
        self.allow_under.clicked.connect(self._on_allow_under_clicked)
        self.deny.clicked.connect(lambda: self._decide("deny", "once"))
        self.folder_scope.chosen.connect(self._on_folder_scope_chosen)
        self.folder_scope.cancelled.connect(self._on_folder_scope_cancelled)
        self.hide()

    def _answers(self) -> list[AnswerButton]:
        return [self.allow_once, self.allow_chat, self.allow_server, self.allow_under, self.deny]

    @property
    def call(self) -> ApprovalJSON | None:
        return self._call

    def show_call(self, call: ApprovalJSON | None, waiting: int = 1) -> None:
        """Ask about `call` (None: nothing waits, the card hides); `waiting`: how many do."""
        self._call = call
        if call is None:
            held = holds_focus(self)
            self.hide()
            if held:
                self.focus_released.emit()
            return
        self.title.setText(approval_question(call))
        self.reason.setText(guard_reason(call))
        self.reason.setVisible(bool(call.get("reason")))
        self.arguments.setPlainText(readable(call["arguments"]))
        self._fit_arguments()
        self.set_waiting(waiting)
        self.allow_server.setToolTip(
            f"Run this call, and every call of {call['server']}'s tools in this chat"
        )
        self.folder_scope.hide()
        self.enable()
        self.allow_under.setEnabled(self.folder_scope.offer(call["arguments"]))
        self.show()
        take_focus(self.allow_once)  # unless the user is typing: their words stay theirs

    def _fit_arguments(self) -> None:
        """As tall as the arguments, up to ARGUMENTS_MAX_PX (then they scroll): a call of
        two arguments is not a box of empty lines."""
        lines = self.arguments.document().blockCount()
        spacing = self.arguments.fontMetrics().lineSpacing()
        margins = self.arguments.contentsMargins()
        frame = 2 * int(self.arguments.document().documentMargin()) + 4
        height = lines * spacing + frame + margins.top() + margins.bottom()
        self.arguments.setFixedHeight(max(2 * spacing, min(ARGUMENTS_MAX_PX, height)))

    def set_waiting(self, waiting: int) -> None:
        """How many calls wait, the one shown among them."""
        self.count.setText(f"1 of {waiting} waiting" if waiting > 1 else "")

    def enable(self, on: bool = True) -> None:
        """The answers can be given (again, after an answer the server refused)."""
        for button in [*self._answers(), self.folder_scope.allow]:
            button.setEnabled(on)

    def _decide(self, decision: str, remember: str) -> None:
        if self._call is None:
            return
        self.enable(False)  # one answer per call, while it is sent
        self.focus_released.emit()
        self.decided.emit(self._call["call_id"], decision, remember)

    def _on_allow_under_clicked(self) -> None:
        self.folder_scope.open()

    def _on_folder_scope_cancelled(self) -> None:
        self.folder_scope.hide()
        self.allow_under.setFocus()

    def _on_folder_scope_chosen(self, argument: str, folder: str) -> None:
        if self._call is None:
            return
        self.enable(False)
        self.focus_released.emit()
        self.allowed_under.emit(self._call["call_id"], argument, folder)
