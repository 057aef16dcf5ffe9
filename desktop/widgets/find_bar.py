"""Find in the open chat (Ctrl+F): every match highlighted, the current one stronger and
scrolled to; Enter / F3 for the next, Shift+Enter / Shift+F3 for the previous; Esc closes.

It searches the transcript's text as drawn (case-insensitive), so it finds what the user
sees, code blocks and tool steps included."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QColor, QKeyEvent, QTextCursor, QTextDocument
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QTextBrowser,
    QTextEdit,
    QWidget,
)

ALL = QColor(255, 230, 120)
CURRENT = QColor(255, 160, 60)
MAX_MATCHES = 10_000  # a one-letter search in a long chat stops counting there


class FindBar(QWidget):
    def __init__(
        self,
        view: QTextBrowser,
        parent: QWidget | None = None,
        draw_all: Callable[[], None] | None = None,
    ) -> None:
        """`draw_all`: draws what the view holds back (a long chat's earlier messages), so
        that Find sees all of it."""
        super().__init__(parent)
        self.view = view
        self._draw_all = draw_all
        self.field = QLineEdit(self)
        self.field.setPlaceholderText("Find in this chat")
        self.field.setAccessibleName("Find in this chat")
        self.field.setClearButtonEnabled(True)
        self.count = QLabel("", self)
        self.previous_button = QPushButton("‹", self)
        self.previous_button.setAccessibleName("Previous match")
        self.next_button = QPushButton("›", self)
        self.next_button.setAccessibleName("Next match")
        self.close_button = QPushButton("Close", self)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        for widget in (self.field, self.count, self.previous_button, self.next_button):
            layout.addWidget(widget)
        layout.addWidget(self.close_button)
        layout.setStretch(0, 1)
        self._matches: list[QTextCursor] = []
        self._current = -1
        self.field.textChanged.connect(self._search)
        self.field.installEventFilter(self)
        self.next_button.clicked.connect(self.next)
        self.previous_button.clicked.connect(self.previous)
        self.close_button.clicked.connect(self.close_bar)
        self.hide()

    def open(self) -> None:
        self.show()
        self.field.setFocus()
        self.field.selectAll()
        self._search()

    def close_bar(self) -> None:
        self.hide()
        self._matches, self._current = [], -1
        self.view.setExtraSelections([])
        self.view.setFocus()

    def next(self) -> None:
        self._step(1)

    def previous(self) -> None:
        self._step(-1)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """The field's keys, before the field itself takes Return (Shift+Return too)."""
        is_key = isinstance(event, QKeyEvent) and event.type() == QEvent.Type.KeyPress
        if watched is self.field and is_key and self._key(event):  # type: ignore[arg-type]
            return True
        return super().eventFilter(watched, event)

    def _key(self, event: QKeyEvent) -> bool:
        shift = bool(event.modifiers() & Qt.KeyboardModifier.ShiftModifier)
        if event.key() == Qt.Key.Key_Escape:
            self.close_bar()
        elif event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) or event.key() == Qt.Key.Key_F3:
            self._step(-1 if shift else 1)
        else:
            return False
        return True

    @property
    def matches(self) -> int:
        return len(self._matches)

    @property
    def current(self) -> int:
        """The current match, from 0 (-1: none)."""
        return self._current

    def _search(self) -> None:
        """Find every match again (the chat may have been redrawn since)."""
        if self._draw_all is not None:
            self._draw_all()  # all of it, also what was held back since the last search
        needle = self.field.text()
        self._matches = []
        document = self.view.document()
        if needle:
            cursor = document.find(needle, 0)
            while not cursor.isNull() and len(self._matches) < MAX_MATCHES:
                self._matches.append(cursor)
                cursor = document.find(needle, cursor, QTextDocument.FindFlag(0))
        self._current = 0 if self._matches else -1
        self._show()

    def _step(self, by: int) -> None:
        if not self._matches or self._matches[0].document() is not self.view.document():
            self._search()  # nothing yet, or the chat was redrawn
            if not self._matches:
                return
            by = 0
        stale = self._matches[self._current].selectedText().casefold()
        if stale != self.field.text().casefold():
            self._search()  # the text under the matches changed (a reply grew)
            by = 0
        self._current = (self._current + by) % len(self._matches)
        self._show()

    def _show(self) -> None:
        selections = []
        for index, cursor in enumerate(self._matches):
            selection = QTextEdit.ExtraSelection()
            selection.cursor = cursor
            selection.format.setBackground(CURRENT if index == self._current else ALL)
            selections.append(selection)
        self.view.setExtraSelections(selections)
        if self._current >= 0:
            shown = QTextCursor(self._matches[self._current])
            self.view.setTextCursor(shown)
            self.view.ensureCursorVisible()
            self.count.setText(f"{self._current + 1} of {len(self._matches)}")
        else:
            self.count.setText("No matches" if self.field.text() else "")
            # The last match shown was selected in the view: with none now, no word
            # stays marked there as if it were one (issue 43).
            cursor = self.view.textCursor()
            if cursor.hasSelection():
                cursor.clearSelection()
                self.view.setTextCursor(cursor)
