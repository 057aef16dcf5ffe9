"""The card of a tool's MCP server that asks the user something during its call (MCP
elicitation): the server (and the sub-agent whose call asks, if one does), its message, and
either a form drawn from its schema (question_fields.py) or a URL shown whole, which opens in
the browser only when the user presses Open link. Accept / Decline / Cancel answer it. Shown
above the message field while a question of the chat on screen waits; one at a time ("1 of
2" when more wait). An answer the server refuses (a field that does not fit) is said on the
card, which keeps what the user entered."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, QUrl, Signal
from PySide6.QtGui import QDesktopServices, QTextOption
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from desktop.replies.card_focus import AnswerButton, holds_focus, take_focus
from desktop.replies.question_fields import QuestionFields
from server.types.chunks import QuestionEventJSON

# The card's keys, for the shortcuts window (F1). Not Alt+A/T/D (the approval card's, which
# may show at the same time), nor a menu's letter (F, E, V, C, H): a key two widgets claim
# is ambiguous, and answers nothing.
CARD_KEYS = [
    ("A server asks you", "Accept", "Alt+P"),
    ("A server asks you", "Decline", "Alt+L"),
    ("A server asks you", "Cancel", "Alt+N"),
    ("A server asks you", "Open link", "Alt+O"),
]
TASK_CHARS = 80  # of a sub-agent's task, in the title


def question_title(question: QuestionEventJSON) -> str:
    """Who asks, as rich text: "<b>files</b> asks you (its tool read_file, for the sub-agent
    “…”)"."""
    server, tool = html.escape(question["server"]), html.escape(question["tool"])
    asker = f"<b>{server}</b> asks you (its tool <b>{tool}</b>"
    agent = question.get("sub_agent")
    if agent is not None:
        task = " ".join(agent["task"].split())
        task = task if len(task) <= TASK_CHARS else task[: TASK_CHARS - 1] + "…"
        asker += f", called by the sub-agent “{html.escape(task)}”"
    return asker + ")"


class QuestionCard(QFrame):
    # question id, "accept" | "decline" | "cancel", the form's content (empty otherwise)
    answered = Signal(str, str, object)
    # Done with the keyboard (answered, or hidden while it had the focus): card_focus.py.
    focus_released = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("question-card")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAccessibleName("A tool's server asks you something")
        self.title = QLabel(self)
        self.title.setWordWrap(True)
        self.message = QLabel(self)
        self.message.setWordWrap(True)
        self.message.setTextFormat(Qt.TextFormat.PlainText)  # the server's words, not markup
        self.url = QPlainTextEdit(self)  # whole, selectable, never opened by itself
        self.url.setReadOnly(True)
        self.url.setAccessibleName("The address the server asks you to open")
        self.url.setWordWrapMode(QTextOption.WrapMode.WrapAnywhere)
        self.url.setMaximumHeight(80)
        self.fields: QuestionFields | None = None
        self._fields_at = QVBoxLayout()
        self.error = QLabel(self)
        self.error.setObjectName("question-error")
        self.error.setWordWrap(True)
        self.error.setAccessibleName("Why the answer was refused")
        self.count = QLabel(self)
        self.open_link = AnswerButton("&Open link", self)  # Alt+O (F1: CARD_KEYS)
        self.open_link.setToolTip("Open this address in your browser")
        self.accept = AnswerButton("Acce&pt", self)  # Alt+P
        self.accept.setProperty("primary", True)  # the look draws it in the accent
        self.decline = AnswerButton("Dec&line", self)  # Alt+L
        self.cancel = AnswerButton("Ca&ncel", self)  # Alt+N
        self.accept.setToolTip("Send your answer to the server")
        self.decline.setToolTip("Say no: the server is told you declined")
        self.cancel.setToolTip("Answer nothing: the server is told you dismissed it")
        buttons = QHBoxLayout()
        buttons.addWidget(self.count, 1)
        for button in (self.open_link, self.accept, self.decline, self.cancel):
            buttons.addWidget(button)
        column = QVBoxLayout(self)
        for widget in (self.title, self.message, self.url):
            column.addWidget(widget)
        column.addLayout(self._fields_at)
        column.addWidget(self.error)
        column.addLayout(buttons)
        self._question: QuestionEventJSON | None = None
        self.open_link.clicked.connect(self._on_open_link_clicked)
        self.accept.clicked.connect(lambda: self._answer("accept"))
        self.decline.clicked.connect(lambda: self._answer("decline"))
        self.cancel.clicked.connect(lambda: self._answer("cancel"))
        self.hide()

    @property
    def question(self) -> QuestionEventJSON | None:
        return self._question

    def show_question(self, question: QuestionEventJSON | None, waiting: int = 1) -> None:
        """Ask `question` (None: nothing waits, the card hides); `waiting`: how many do."""
        self._question = question
        if question is None:
            held = holds_focus(self)
            self.hide()
            self._set_fields(None)
            if held:
                self.focus_released.emit()
            return
        self.title.setText(question_title(question))
        self.message.setText(question["message"])
        is_url = question["mode"] == "url"
        self.url.setPlainText(question.get("url", ""))
        self.url.setVisible(is_url)
        self.open_link.setVisible(is_url)
        self._set_fields(None if is_url else question.get("schema", {}))
        self.error.hide()
        self.set_waiting(waiting)
        self._enable(True)
        self.show()
        first = self.fields.first() if self.fields is not None else None
        # Unless the user is typing: their words stay theirs.
        take_focus(first or (self.open_link if is_url else self.accept))

    def set_waiting(self, waiting: int) -> None:
        """How many questions wait, the one shown among them."""
        self.count.setText(f"1 of {waiting} waiting" if waiting > 1 else "")

    def show_refused(self, message: str) -> None:
        """The server refused the answer (a field does not fit): why, with what was entered
        kept, to be answered again."""
        self.error.setText(message)
        self.error.show()
        self._enable(True)
        first = self.fields.first() if self.fields is not None else None
        take_focus(first or self.accept)

    def _set_fields(self, schema: dict[str, object] | None) -> None:
        if self.fields is not None:
            self._fields_at.removeWidget(self.fields)
            self.fields.hide()
            self.fields.deleteLater()
            self.fields = None
        if schema is not None:
            self.fields = QuestionFields(schema, self)
            self.fields.submitted.connect(lambda: self._answer("accept"))
            self._fields_at.addWidget(self.fields)

    def _enable(self, enabled: bool) -> None:
        for button in (self.accept, self.decline, self.cancel):
            button.setEnabled(enabled)

    def _on_open_link_clicked(self) -> None:
        if self._question is not None and "url" in self._question:
            QDesktopServices.openUrl(QUrl(self._question["url"]))

    def _answer(self, action: str) -> None:
        if self._question is None or not self.accept.isEnabled():
            return
        accepting = action == "accept" and self.fields is not None
        content = self.fields.content() if accepting and self.fields is not None else {}
        self._enable(False)  # one answer per question, while it is sent
        self.focus_released.emit()
        self.answered.emit(self._question["question_id"], action, content)
