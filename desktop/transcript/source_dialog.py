"""A cited source at its place: a click on [n] under a reply shows the cited lines of the
file (or, for a PDF, its page and the passage), with buttons that open the file or its folder.

A citation's path is data (an imported chat can name any path), so the window never reads
it: the dialog shows the saved quote at once, and its controller asks the server, which reads
the file again only when a folder of the library holds it now (`show_source`). The file or
its folder is handed to the system (`QDesktopServices`) only after the server said so. No
desktop opens a file "at line 40" or "at page 3" in every user's own app, so Parley shows the
place itself."""

from __future__ import annotations

import html
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import Qt, QUrl, Signal
from PySide6.QtGui import (
    QFontDatabase,
    QFontMetricsF,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
)
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPushButton,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from server.types import CitationPartJSON
from server.types.library import SourceJSON

READING = "Reading the file…"
NBSP = "\u00a0"
NOT_IN_LIBRARY = "From an imported chat, or a folder since removed: not in your library."


class SourceDialog(QDialog):
    open_requested = Signal(QUrl)  # the file, or its folder, for the system to open

    def __init__(self, citation: CitationPartJSON, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.citation = citation
        path = Path(citation["path"])
        cited = citation.get("cited", True)  # else given to the model, not cited
        kind = "Source" if cited else "Passage given to the model"
        self.setWindowTitle(f"{kind} [{citation['n']}] — {path.name}")
        self.setObjectName("source")
        self.resize(720, 480)
        self.place = QLabel(f"{html.escape(str(path))}{_place(citation)}", self)
        self.place.setWordWrap(True)
        self.place.setAccessibleName(f"The {'cited' if cited else 'given'} file and place")
        self.text = QTextBrowser(self)
        self.text.setOpenLinks(False)
        self.text.setAccessibleName(f"The {'cited' if cited else 'given'} passage")
        self.text.setHtml(_quote(citation, READING if citation["lines"] is not None else ""))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        self.open_button = QPushButton("Open file", self)
        self.folder_button = QPushButton("Show folder", self)
        for button in (self.open_button, self.folder_button):
            buttons.addButton(button, QDialogButtonBox.ButtonRole.ActionRole)
            button.setEnabled(False)  # until the server says the file is in the library
        self.open_button.clicked.connect(lambda: self._open(path))
        self.folder_button.clicked.connect(lambda: self._open(path.parent))
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.place)
        layout.addWidget(self.text)
        layout.addWidget(buttons)
        self.text.setFocus()

    def show_source(self, source: SourceJSON) -> None:
        """What the server read of the file now (or why not)."""
        for button in (self.open_button, self.folder_button):
            button.setEnabled(source["in_library"])
        if not source["in_library"]:
            self.text.setHtml(_quote(self.citation, NOT_IN_LIBRARY))
        elif source["lines"]:
            self._show_lines(numbered(source, self.citation))
        elif self.citation["lines"] is not None:
            why = f"The file cannot be shown now ({source['reason'] or 'unknown'})."
            self.text.setHtml(_quote(self.citation, why))
        else:
            self.text.setHtml(_quote(self.citation, ""))

    def show_failure(self, why: str) -> None:
        self.text.setHtml(_quote(self.citation, f"The file cannot be shown now: {why}"))

    def _show_lines(self, lines: list[NumberedLine]) -> None:
        """Each line a paragraph that wraps at the view's width, its wrapped rest indented
        under its own text: the numbers stay a column of their own and code keeps its shape
        (a `<pre>` does not wrap: a long line, or a minified file's one, ran off to the side)."""
        document = self.text.document()
        document.clear()
        font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        metrics = QFontMetricsF(font)
        cursor = QTextCursor(document)
        for i, line in enumerate(lines):
            block = QTextBlockFormat()
            indent = metrics.horizontalAdvance(line.prefix)
            block.setLeftMargin(indent)
            block.setTextIndent(-indent)
            chars = QTextCharFormat()
            chars.setFont(font)
            if not line.cited:
                chars.setForeground(Qt.GlobalColor.gray)
            if i:
                cursor.insertBlock(block, chars)
            else:
                cursor.setBlockFormat(block)
            cursor.insertText(_unbroken_start(line), chars)

    def _open(self, path: Path) -> None:
        self.open_requested.emit(QUrl.fromLocalFile(str(path)))


def _place(citation: CitationPartJSON) -> str:
    if citation["page"] is not None:
        return f" — page {citation['page']}"
    if citation["lines"] is not None:
        return f" — lines {citation['lines'][0]}–{citation['lines'][1]}"
    return ""


def _quote(citation: CitationPartJSON, note: str) -> str:
    """The quote saved with the reply, under a note; shown as text, never as markup."""
    said = f"<p><i>{html.escape(note)}</i> The saved quote:</p>" if note else ""
    return f"{said}<pre style='white-space:pre-wrap;'>{html.escape(citation['quote'])}…</pre>"


def _unbroken_start(line: NumberedLine) -> str:
    """The line with the spaces before its first word made non-breaking: a long first word
    (a minified file's line) is broken where the width ends, not moved whole to the next row
    away from its number and indentation. (Qt's plain text gives them back as spaces.)"""
    words = line.text.lstrip(" ")
    return line.prefix.replace(" ", NBSP) + NBSP * (len(line.text) - len(words)) + words


@dataclass(frozen=True)
class NumberedLine:
    """A line read now: its number and mark (the cited ones), then its text as in the file."""

    prefix: str
    text: str
    cited: bool


def numbered(source: SourceJSON, citation: CitationPartJSON) -> list[NumberedLine]:
    """The lines read now with their numbers, the cited ones marked (the others are dimmed)."""
    first, last = citation["lines"] or (0, 0)
    lines = []
    for line in source["lines"] or []:
        cited = first <= line["n"] <= last
        lines.append(NumberedLine(f"{line['n']:>5} {'▌' if cited else ' '} ", line["text"], cited))
    return lines
