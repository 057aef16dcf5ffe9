"""The user's messages on a tint, painted behind them, padding and all, by the transcript.

A question is a run of paragraphs marked with a block user state (`QUESTION_STATE`, set by
their HTML's `-qt-user-state`), with margins for its padding: the first's at the top, the
last's at the bottom, none between them, so that they lie line for line as one paragraph
would. Qt paints a paragraph's own background only behind its lines, not its margins; a
table of one cell (how a question was drawn before) paints its padding but costs about three
times as much to lay out: ~12 ms for a 600-word question, laid out on the window's thread at
the moment it is sent (issue 16). In pieces of up to `CHUNK_CHARS`, a long question is laid
out piece by piece, over several frames (live_question.py).
"""

from __future__ import annotations

import html

from PySide6.QtCore import QRect, QRectF, Qt
from PySide6.QtGui import QColor, QPainter, QTextBlock
from PySide6.QtWidgets import QTextEdit

QUESTION_STATE = 1
PADDING_PX = 8
# Above the padding: as much as the bottom margin of the header before it (Qt's paragraph
# margin), so the header's own margin, kept when a chat is drawn whole and lost when a live
# question is appended (Editor.append_html), never decides where it lies.
TOP_MARGIN_PX = 12
# A piece of a question: whole lines, at most this many characters (or one line that is
# longer). One piece is laid out in ~2 ms on the slow machine of issue 16.
CHUNK_CHARS = 1000


def question_chunks(text: str) -> list[str]:
    """The user's words in pieces of whole lines; a piece after the first may begin with an
    empty line (drawn as a line break: the same lines as the words in one paragraph)."""
    chunks: list[str] = []
    lines: list[str] = []
    size = 0
    for line in text.split("\n"):
        if lines and size + len(line) > CHUNK_CHARS:
            chunks.append("\n".join(lines))
            lines, size = [], 0
        lines.append(line)
        size += len(line) + 1
    chunks.append("\n".join(lines))
    return chunks


def chunk_html(chunk: str, first: bool, last: bool) -> str:
    """One piece of a question as a marked paragraph; its line breaks kept, no markup read."""
    escaped = html.escape(chunk).replace("\n", "<br>")
    pad = PADDING_PX
    return (
        f'<p style="-qt-user-state:{QUESTION_STATE}; '
        f"margin-top:{TOP_MARGIN_PX if first else 0}px; margin-bottom:{pad if last else 0}px; "
        f'margin-left:{pad}px; margin-right:{pad}px;">{escaped}</p>'
    )


def question_html(text: str) -> str:
    """The user's words, as typed (their line breaks kept), drawn whole."""
    chunks = question_chunks(text)
    last = len(chunks) - 1
    return "".join(chunk_html(chunk, n == 0, n == last) for n, chunk in enumerate(chunks))


def tint_rect(view: QTextEdit, block: QTextBlock, width: float) -> QRectF:
    """Where the tint of the question in `block` lies, in document coordinates: its lines
    and its padding, across the whole line width."""
    lines = view.document().documentLayout().blockBoundingRect(block)
    return QRectF(lines.x(), lines.y() - PADDING_PX, width, lines.height() + 2 * PADDING_PX)


def paint_tints(view: QTextEdit, colour: QColor, width: float, exposed: QRect) -> None:
    """Paint the tint of each question the `exposed` part of the viewport shows, before the
    text is drawn over it. `width`: the document's line width."""
    scrolled = view.verticalScrollBar().value()
    top, bottom = exposed.top() + scrolled - PADDING_PX, exposed.bottom() + scrolled + PADDING_PX
    layout = view.document().documentLayout()
    block = _block_at(view, top)
    painter: QPainter | None = None
    while block.isValid() and layout.blockBoundingRect(block).y() <= bottom:
        if block.userState() == QUESTION_STATE:
            if painter is None:
                painter = QPainter(view.viewport())
                painter.setClipRect(exposed)
                painter.setPen(Qt.PenStyle.NoPen)
                painter.setBrush(colour)
            # (Not fillRect: its first call builds the Python enums of all its overloads,
            # QGradient.Preset's ~180 members among them: 3-40 ms, in the first reply's frame.)
            painter.drawRect(tint_rect(view, block, width).translated(0, -scrolled))
        block = block.next()
    if painter is not None:
        painter.end()


def _block_at(view: QTextEdit, y: float) -> QTextBlock:
    """The last block that starts at or above `y` (document coordinates): a binary search by
    block number. (Hit testing, `cursorForPosition`, took 1.6 ms inside a long paragraph.)
    Blocks in a table's cells are not in order of height, but a question is never in one."""
    document = view.document()
    layout = document.documentLayout()
    low, high = 0, document.blockCount() - 1
    while low < high:
        middle = (low + high + 1) // 2
        if layout.blockBoundingRect(document.findBlockByNumber(middle)).y() <= y:
            low = middle
        else:
            high = middle - 1
    return document.findBlockByNumber(low)
