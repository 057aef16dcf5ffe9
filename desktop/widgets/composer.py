"""Where the user writes. Enter sends, Shift+Enter adds a line, Tab moves on; Send becomes
Stop while the chat's reply is in flight (Esc, handled by the window, stops it too). Each chat
keeps what was typed in it and not sent (a draft), shown again when the chat is."""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QKeyEvent, QTextCursor
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

MIN_LINES = 2
MAX_LINES = 10


class _Editor(QPlainTextEdit):
    submitted = Signal()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key = event.key()
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            if event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
                self.insertPlainText("\n")
            else:
                self.submitted.emit()
            return
        super().keyPressEvent(event)


class Composer(QWidget):
    message_submitted = Signal(str)
    stop_requested = Signal()
    editing_cancelled = Signal()  # Cancel on the "Editing a message" line

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.editor = _Editor(self)
        self.editor.setAccessibleName("Message")
        self.editor.setAccessibleDescription("Enter sends; Shift+Enter starts a new line")
        self.editor.setPlaceholderText("Message (Enter to send, Shift+Enter for a new line)")
        self.editor.textChanged.connect(self._fit_height)
        self.editor.setTabChangesFocus(True)  # a tab character is rarely wanted in a chat
        self.button = QPushButton("Send", self)
        self.button.setObjectName("send-stop")
        self.edit_note = QLabel("Editing a message: sending it makes a new version.", self)
        self.cancel_edit = QPushButton("Cancel edit", self)
        self.cancel_edit.clicked.connect(self.editing_cancelled)
        note = QHBoxLayout()
        note.addWidget(self.edit_note, 1)
        note.addWidget(self.cancel_edit)
        row = QHBoxLayout()
        row.addWidget(self.editor, 1)
        row.addWidget(self.button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(note)
        layout.addLayout(row)
        self._editing = False
        self._streaming = False
        self._drafts: dict[str, str] = {}  # by chat ("": a new chat), other than the one shown
        self._aside = ""  # what was typed when an edit began (show_to_edit)
        self.set_editing(False)
        self._fit_height()
        self.editor.submitted.connect(self._on_editor_submitted)
        self.button.clicked.connect(self._on_button_clicked)

    @property
    def text(self) -> str:
        return self.editor.toPlainText()

    def switch_chat(self, leaving: str | None, opening: str | None) -> None:
        """Keep what was typed for the chat left (None: a new chat), and show what was typed
        in the one opened, the cursor at its end."""
        # An edit sent whose reply has not begun: what it set aside is that chat's draft.
        kept = self._aside or self.text
        self._aside = ""
        if kept.strip():
            self._drafts[leaving or ""] = kept
        else:
            self._drafts.pop(leaving or "", None)
        self.set_text(self._drafts.pop(opening or "", ""))
        self.editor.moveCursor(QTextCursor.MoveOperation.End)

    def drop_draft(self, conversation_id: str, sent: str) -> None:
        """`sent` went as a message of that chat (sent there, then the chat was left before
        its reply began): it is no draft of that chat, nor of the new chat it was typed in."""
        for key in (conversation_id, ""):
            if self._drafts.get(key) == sent:
                del self._drafts[key]

    def set_text(self, text: str) -> None:
        self.editor.setPlainText(text)

    def clear(self) -> None:
        """Empty, once what it held was sent or its edit cancelled: what was typed before an
        edit began comes back."""
        self.set_text(self._aside)
        self._aside = ""
        self.editor.moveCursor(QTextCursor.MoveOperation.End)

    def show_to_edit(self, text: str) -> None:
        """Show `text`, a question to edit; what was typed is set aside until the edit is
        sent or cancelled (a second edit keeps what the first set aside)."""
        if not self._editing:
            self._aside = self.text
        self.set_text(text)
        self.editor.moveCursor(QTextCursor.MoveOperation.End)  # to go on typing, as after a draft

    def set_streaming(self, streaming: bool) -> None:
        self._streaming = streaming
        self._label_button()

    def set_editing(self, editing: bool) -> None:
        """Whether the text is a new version of a message (the window knows which)."""
        self._editing = editing
        self.edit_note.setVisible(editing)
        self.cancel_edit.setVisible(editing)
        self._label_button()

    def _label_button(self) -> None:
        if self._streaming:
            self.button.setText("Stop")
        else:
            self.button.setText("Send edit" if self._editing else "Send")

    def focus(self) -> None:
        self.editor.setFocus()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() in (QEvent.Type.StyleChange, QEvent.Type.FontChange):
            self._fit_height()  # the frame (a style sheet's border) or the lines changed

    def _fit_height(self) -> None:
        """As tall as its text, from MIN_LINES up to MAX_LINES (then it scrolls): a long
        message stays visible, and a small window keeps room for the conversation."""
        # QPlainTextEdit's layout measures its document in lines, wrapped ones included.
        lines = int(self.editor.document().documentLayout().documentSize().height())
        shown = max(MIN_LINES, min(MAX_LINES, lines))
        margins = self.editor.contentsMargins()
        frame = 2 * self.editor.frameWidth() + 2 * int(self.editor.document().documentMargin())
        height = shown * self.editor.fontMetrics().lineSpacing() + frame
        self.editor.setFixedHeight(height + margins.top() + margins.bottom())
        self.updateGeometry()

    def _on_editor_submitted(self) -> None:
        if not self._streaming and self.text.strip():
            self.message_submitted.emit(self.text)

    def _on_button_clicked(self) -> None:
        if self._streaming:
            self.stop_requested.emit()
        else:
            self._on_editor_submitted()
