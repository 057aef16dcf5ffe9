"""A cited source at its place: a click on [n] under a reply shows the cited lines of the
file (or, for a PDF, its page and the passage), with buttons that open the file or its folder.

No desktop opens a file "at line 40" or "at page 3" in every user's own app, so Parley shows
the place itself and then hands the file to the system (`QDesktopServices`)."""

from __future__ import annotations

import html
import itertools
from pathlib import Path

from PySide6.QtCore import QUrl, Signal
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

CONTEXT_LINES = 3  # shown above and below the cited lines, dimmed
MAX_LINE_CHARS = 2_000  # a minified file's one line is not shown whole


class SourceDialog(QDialog):
    open_requested = Signal(QUrl)  # the file, or its folder, for the system to open

    def __init__(self, citation: CitationPartJSON, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.citation = citation
        path = Path(citation["path"])
        self.setWindowTitle(f"Source [{citation['n']}] — {path.name}")
        self.setObjectName("source")
        self.resize(720, 480)
        self.place = QLabel(f"{html.escape(str(path))}{_place(citation)}", self)
        self.place.setWordWrap(True)
        self.place.setAccessibleName("The cited file and place")
        self.text = QTextBrowser(self)
        self.text.setOpenLinks(False)
        self.text.setAccessibleName("The cited passage")
        self.text.setHtml(_passage(citation))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        self.open_button = QPushButton("Open file", self)
        self.folder_button = QPushButton("Show folder", self)
        for button in (self.open_button, self.folder_button):
            buttons.addButton(button, QDialogButtonBox.ButtonRole.ActionRole)
        self.open_button.clicked.connect(lambda: self._open(path))
        self.folder_button.clicked.connect(lambda: self._open(path.parent))
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.place)
        layout.addWidget(self.text)
        layout.addWidget(buttons)
        self.text.setFocus()

    def _open(self, path: Path) -> None:
        self.open_requested.emit(QUrl.fromLocalFile(str(path)))


def _place(citation: CitationPartJSON) -> str:
    if citation["page"] is not None:
        return f" — page {citation['page']}"
    if citation["lines"] is not None:
        return f" — lines {citation['lines'][0]}–{citation['lines'][1]}"
    return ""


def _passage(citation: CitationPartJSON) -> str:
    """The cited lines read from the file now, with a little context; else the saved quote
    (a PDF's page, or a file that has changed or gone since)."""
    lines = citation["lines"]
    if lines is not None:
        shown = _lines(Path(citation["path"]), lines[0], lines[1])
        if shown:
            return shown
    note = "" if lines is None else "<p><i>The file cannot be read now; the saved quote:</i></p>"
    return f"{note}<pre style='white-space:pre-wrap;'>{html.escape(citation['quote'])}…</pre>"


def _lines(path: Path, first: int, last: int) -> str:
    """Lines `first`..`last` of a text file (1-based) with their numbers, the cited ones
    marked; "" when the file cannot be read as text or is shorter now."""
    start = max(1, first - CONTEXT_LINES)
    try:
        with path.open(encoding="utf-8", errors="replace") as file:
            wanted = list(itertools.islice(file, start - 1, last + CONTEXT_LINES))
    except OSError:
        return ""
    if len(wanted) <= first - start:
        return ""
    rows = []
    for number, line in enumerate(wanted, start):
        text = html.escape(line.rstrip("\n")[:MAX_LINE_CHARS])
        cited = first <= number <= last
        style = "" if cited else " style='color:gray;'"
        rows.append(f"<span{style}>{number:>5} {'▌' if cited else ' '} {text}</span>")
    return f"<pre>{chr(10).join(rows)}</pre>"
