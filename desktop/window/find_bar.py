"""Find in the open chat (Ctrl+F): the messages that hold the words counted, the current
match's message brought into view and marked; Enter / F3 for the next, Shift+Enter /
Shift+F3 for the previous; Esc closes.

It searches every message's words (case-insensitive), those not drawn yet too."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QPushButton, QWidget

from desktop.transcript.surface import TranscriptSurface

MAX_MATCHES = 10_000  # a one-letter search in a long chat stops counting there


class FindBar(QWidget):
    def __init__(
        self,
        view: TranscriptSurface,
        parent: QWidget | None = None,
        draw_all: Callable[[], None] | None = None,
    ) -> None:
        """`draw_all`: asks for what the view has not loaded (a long chat's earlier pages),
        so that Find sees all of it."""
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
        self._matches: list[tuple[int, int]] = []  # (message's place, where in its words)
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
        self.view.clear_found()
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
        """Find every match again (the chat may have changed since)."""
        if self._draw_all is not None:
            self._draw_all()  # all of it, also what was held back since the last search
        needle = self.field.text()
        self._matches = self.view.rows.matches(needle, MAX_MATCHES) if needle else []
        self._current = 0 if self._matches else -1
        self._show()

    def _step(self, by: int) -> None:
        if not self._matches or self._stale():
            self._search()  # nothing yet, or the chat changed
            if not self._matches:
                return
            by = 0
        self._current = (self._current + by) % len(self._matches)
        self._show()

    def _stale(self) -> bool:
        at, offset = self._matches[self._current]
        needle = self.field.text().casefold()
        if at >= self.view.rows.rowCount():
            return True
        return self.view.rows.text_at(at).casefold()[offset : offset + len(needle)] != needle

    def _show(self) -> None:
        if self._current >= 0:
            self.view.show_words(self._matches[self._current][0], [self.field.text()])
            self.count.setText(f"{self._current + 1} of {len(self._matches)}")
        else:
            self.count.setText("No matches" if self.field.text() else "")
            self.view.clear_found()  # the last match shown is no longer marked

    @property
    def current_match(self) -> tuple[int, int] | None:
        """The current match: its message's place and where in its words (None: none)."""
        return self._matches[self._current] if self._current >= 0 else None
