"""What the transcript draws, read back for comparison: a reply drawn live and the same
reply drawn when its chat is opened again read the same (their blocks may be cut apart
differently: a live reply's text is frozen a piece at a time)."""

from __future__ import annotations

import re

from PySide6.QtGui import QTextDocumentFragment

from desktop.transcript.surface import TranscriptSurface


def block_tops(view: TranscriptSurface) -> list[tuple[str, str]]:
    """Each reply's text runs and steps, in order: what each says."""
    drawn: list[tuple[str, str]] = []
    for row_id in view.rows.ids():
        row = view.rows.row(row_id)
        if row is None or row.role != "assistant":
            continue
        for block in view.rows.blocks_of(row_id):
            if block.step is not None:
                drawn.append(("step", block.step.title))
                continue
            text = QTextDocumentFragment.fromHtml(block.html).toPlainText()
            text = re.sub(r"\s+", " ", text).strip()
            if drawn and drawn[-1][0] == "text":
                drawn[-1] = ("text", f"{drawn[-1][1]} {text}".strip())
            else:
                drawn.append(("text", text))
    return drawn
