"""The passage viewer: the lines read now wrap at the dialog's width, each line's wrapped rest
under its own text (its number and mark stay a column of their own), so a long line of prose
or a minified file is read without scrolling sideways."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtGui import QTextBlock

from desktop.transcript.source_dialog import SourceDialog
from server.types import CitationPartJSON
from server.types.library import SourceJSON

PROSE = "Aardvarks dig burrows with their strong claws, " * 12
MINIFIED = "x=[1,2,3];" * 80  # no space to break at


def citation() -> CitationPartJSON:
    return {
        "type": "citation", "n": 1, "path": "/home/u/docs/notes.md", "page": None,
        "lines": [2, 3], "quote": "Aardvarks dig",
    }  # fmt: skip


def source() -> SourceJSON:
    lines = [(1, "# Notes"), (2, PROSE), (3, "    " + MINIFIED), (4, "")]
    return {
        "path": "/home/u/docs/notes.md", "in_library": True, "reason": None,
        "lines": [{"n": n, "text": text} for n, text in lines],
    }  # fmt: skip


def block_with(dialog: SourceDialog, words: str) -> QTextBlock:
    found = dialog.text.document().find(words)
    assert not found.isNull(), words
    return found.block()


def test_long_lines_wrap_at_the_width_under_their_own_text(qtbot: Any) -> None:
    dialog = SourceDialog(citation())
    qtbot.addWidget(dialog)
    dialog.resize(600, 400)
    dialog.show()
    qtbot.waitExposed(dialog)
    dialog.show_source(source())
    qtbot.waitUntil(lambda: dialog.text.document().blockCount() == 4, timeout=5_000)

    assert dialog.text.horizontalScrollBar().maximum() == 0  # nothing beyond the width
    shown = dialog.text.toPlainText()
    assert f"    2 ▌ {PROSE}" in shown and f"    3 ▌     {MINIFIED}" in shown  # whole
    assert "    1   # Notes" in shown  # the lines around, unmarked
    for words in ("Aardvarks", "x=[1,2,3]"):
        layout = block_with(dialog, words).layout()
        assert layout.lineCount() > 2, words  # wrapped, at the width
        # The rest begins under the line's text ("    2 ▌ " before it), not its number.
        text_starts, _ = layout.lineAt(0).cursorToX(len("    2 ▌ "))
        rests = [layout.lineAt(i).x() for i in range(1, layout.lineCount())]
        assert rests == [pytest.approx(text_starts, abs=1)] * len(rests), words
        assert text_starts > layout.lineAt(0).x()
        # Its first row holds text: a long first word is broken there, not moved below.
        assert layout.lineAt(0).textLength() > len("    3 ▌     x=[1,2,3];")
