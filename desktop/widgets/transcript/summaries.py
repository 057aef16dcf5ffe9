"""Where a summary ends, in the transcript (issue 42): a marker after the last message it stands
for — "Earlier messages summarised — view summary · edit · undo". Every message stays drawn
above it (nothing is hidden); only the model's view changed.

The marker is drawn with the chat when it is drawn whole (history.py), and inserted live when
a turn's compaction is done; undone, its block is taken out. Its links are
`summary:ACTION/ID`; the transcript hands them up (`Transcript.summary_action`)."""

from __future__ import annotations

import html

from PySide6.QtGui import QTextBlockFormat, QTextCharFormat, QTextCursor, QTextDocument

from desktop.widgets.transcript.actions import anchor_position
from server.types import SummaryJSON

SCHEME = "summary"
ACTIONS = ("view", "edit", "undo")
MARKER_TEXT = "Earlier messages summarised"
MARKER_GAP = 10.0  # above and below the marker's line


def marker_html(summary: SummaryJSON, muted: str) -> str:
    """The marker's line: what it says, and its three links."""
    sid = html.escape(summary["id"])
    links = " · ".join(
        f'<a href="{SCHEME}:{action}/{sid}">{label}</a>'
        for action, label in zip(ACTIONS, ("view summary", "edit", "undo"), strict=True)
    )
    edited = " (edited)" if summary["model"] is None else ""
    title = "The model is given a summary in place of the messages above; they stay here."
    return (
        f'<p style="margin-top:{MARKER_GAP:g}px; margin-bottom:{MARKER_GAP:g}px;'
        f' color:{muted};" title="{html.escape(title)}">'
        f"── {MARKER_TEXT}{edited} — {links} ──</p>"
    )


def parse_link(path: str) -> tuple[str, str] | None:
    """(action, summary id) of a `summary:` link's path, or None."""
    action, _, summary_id = path.partition("/")
    return (action, summary_id) if action in ACTIONS and summary_id else None


def insert_marker(document: QTextDocument, summary: SummaryJSON, muted: str) -> tuple[int, int]:
    """Draw the marker after the message it ends at (its actions line), if that is drawn:
    (where it went, characters inserted); (0, 0) when the message is not drawn."""
    at = anchor_position(document, f"msg:copy/{summary['through_id']}")
    if at is None:
        return 0, 0
    block = document.findBlock(at)
    length = document.characterCount()
    cursor = QTextCursor(document)
    cursor.beginEditBlock()
    cursor.setPosition(block.position() + block.length() - 1)
    where = cursor.position()
    format_ = QTextBlockFormat()
    format_.setTopMargin(MARKER_GAP)
    format_.setBottomMargin(MARKER_GAP)
    cursor.insertBlock(format_, QTextCharFormat())
    cursor.insertHtml(marker_html(summary, muted))
    cursor.endEditBlock()
    return where, document.characterCount() - length


def remove_marker(document: QTextDocument, summary_id: str) -> tuple[int, int]:
    """Take out the marker of `summary_id`: (where it was, characters removed); (0, 0) when it
    is not drawn."""
    at = anchor_position(document, f"{SCHEME}:undo/{summary_id}")
    if at is None:
        return 0, 0
    block = document.findBlock(at)
    start = max(block.position() - 1, 0)  # with the break before it
    length = document.characterCount()
    cursor = QTextCursor(document)
    cursor.setPosition(start)
    cursor.setPosition(block.position() + block.length() - 1, QTextCursor.MoveMode.KeepAnchor)
    cursor.removeSelectedText()
    return start, length - document.characterCount()
