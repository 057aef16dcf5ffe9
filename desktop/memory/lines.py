"""The memory's lines as the dialog lists them: what each says, the chat it was remembered in
as a link that opens that chat (a line written by hand says so), and a Forget button."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from desktop.look.palette import palette
from desktop.look.scale import SPACING, TYPE
from desktop.look.theme import is_dark
from server.types.memory import MemoryLineJSON

CHAT_LINK = "chat:"  # a line's link: this, then the chat's id
Titles = dict[str, str]  # the chats' titles, by id: those that are still here


def muted_colour(widget: QWidget) -> str:
    return palette(is_dark(widget.palette())).muted


class LineRow(QFrame):
    forget_requested = Signal(str)  # the line's id
    chat_chosen = Signal(str)  # the chat it came from

    def __init__(self, line: MemoryLineJSON, titles: Titles, parent: QWidget) -> None:
        super().__init__(parent)
        self.setObjectName("memory-line")
        self.line_id = line["id"]
        self.chat_id = line["chat_id"]
        self.text = QLabel(line["text"], self)
        self.text.setObjectName("memory-line-text")
        self.text.setWordWrap(True)
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.source = QLabel(self)
        self.source.setObjectName("memory-line-chat")
        chat_id = line["chat_id"]
        if chat_id is None:
            self.source.setText("Written by hand")
        elif chat_id not in titles:
            self.source.setText("From a chat deleted since")
        else:
            said = f"From “{html.escape(titles[chat_id] or 'New chat')}”"
            self.source.setText(f'<a href="{CHAT_LINK}{html.escape(chat_id)}">{said}</a>')
            self.source.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
            self.source.setToolTip("Open the chat this was remembered in")
        self.source.setStyleSheet(
            f"color: {muted_colour(self)}; font-size: {TYPE['small']}px; background: none;"
        )
        self.forget = QPushButton("Forget", self)
        self.forget.setObjectName("forget-line")
        self.forget.setAccessibleName(f"Forget: {line['text']}")
        words = QVBoxLayout()
        words.setSpacing(SPACING["xs"])
        words.addWidget(self.text)
        words.addWidget(self.source)
        row = QHBoxLayout()
        row.setContentsMargins(SPACING["m"], SPACING["s"], SPACING["m"], SPACING["s"])
        row.addLayout(words, 1)
        row.addWidget(self.forget, 0, Qt.AlignmentFlag.AlignTop)
        # A hairline under each line: the rows read as a list, not as one paragraph.
        rule = QFrame(self)
        rule.setFixedHeight(1)
        rule.setStyleSheet(f"background: {palette(is_dark(self.palette())).border};")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addLayout(row)
        layout.addWidget(rule)
        self.forget.clicked.connect(lambda: self.forget_requested.emit(self.line_id))
        self.source.linkActivated.connect(self._on_source_link_activated)

    def _on_source_link_activated(self, link: str) -> None:
        if link.startswith(CHAT_LINK):
            self.chat_chosen.emit(link.removeprefix(CHAT_LINK))


class LineList(QWidget):
    """The lines, one row each, in the file's order."""

    forget_requested = Signal(str)
    chat_chosen = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("memory-lines")
        self.rows: list[LineRow] = []
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._layout.setSpacing(0)
        self._layout.addStretch(1)

    def show_lines(self, lines: list[MemoryLineJSON], titles: Titles) -> None:
        for row in self.rows:
            self._layout.removeWidget(row)
            row.deleteLater()
        self.rows = []
        for index, line in enumerate(lines):
            row = LineRow(line, titles, self)
            row.forget_requested.connect(self.forget_requested)
            row.chat_chosen.connect(self.chat_chosen)
            self._layout.insertWidget(index, row)
            self.rows.append(row)
