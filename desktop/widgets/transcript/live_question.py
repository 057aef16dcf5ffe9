"""The question of a live turn, drawn over several frames when it is long: its first piece at
once (all of a question up to `CHUNK_CHARS`), then one piece a frame, above the reply that
may already be streaming below it. A 600-word question laid out at once held the window's
thread ~13 ms at the moment it was sent, a 2,000-word one ~28 ms (issue 16).

The pieces are the ones a reopened chat draws (question_tint.question_chunks), with the same
margins, so they lie line for line where they lie when the chat is drawn whole.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtGui import QTextBlockFormat, QTextCursor, QTextDocument

from desktop.widgets.transcript.question_tint import (
    PADDING_PX,
    QUESTION_STATE,
    chunk_html,
    question_chunks,
)

LINE_SEPARATOR = "\u2028"  # a line break inside a paragraph (HTML's <br>)
PIECE_INTERVAL_MS = 16  # a piece a frame


class LiveQuestion(QObject):
    # A piece was drawn: this many characters inserted, where the question ends (what lies
    # below it moved down by as much).
    piece_drawn = Signal(int)

    def __init__(self, document: QTextDocument, parent: QObject) -> None:
        super().__init__(parent)
        self._document = document
        self._rest: list[str] = []  # the pieces not drawn yet
        self._end = 0  # where the next one goes: the end of the last piece drawn
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.setInterval(PIECE_INTERVAL_MS)
        self.timer.timeout.connect(self._draw_piece)

    def start_html(self, text: str) -> str:
        """The question's first piece (the whole question, if short); the rest is drawn
        after it, a piece a frame, once `started` was called."""
        chunks = question_chunks(text)
        self._rest = chunks[1:]
        return chunk_html(chunks[0], first=True, last=not self._rest)

    def started(self) -> None:
        """The first piece is in the document (the last question in it)."""
        if not self._rest:
            return
        block = self._document.lastBlock()
        while block.isValid() and block.userState() != QUESTION_STATE:
            block = block.previous()
        self._end = block.position() + block.length() - 1
        self.timer.start()

    def move(self, move: Callable[[int], int]) -> None:
        """What lies before the question's end was drawn or taken out."""
        self._end = move(self._end)

    def finish(self) -> None:
        """Draw what is left of the question at once (another turn begins below it)."""
        self.timer.stop()
        while self._rest:
            self._draw_piece()

    def drop(self) -> None:
        """The document is drawn anew (with the question whole, if it is still shown)."""
        self.timer.stop()
        self._rest = []

    def _draw_piece(self) -> None:
        if not self._rest:
            return
        chunk = self._rest.pop(0)
        cursor = QTextCursor(self._document)
        cursor.setPosition(self._end)
        above = cursor.block()  # the piece before: drawn with no margin below, as not last
        piece = QTextBlockFormat(above.blockFormat())
        piece.setTopMargin(0)
        piece.setBottomMargin(0 if self._rest else PADDING_PX)
        cursor.beginEditBlock()
        cursor.insertBlock(piece, above.charFormat())
        cursor.block().setUserState(QUESTION_STATE)
        cursor.insertText(chunk.replace("\n", LINE_SEPARATOR))
        cursor.endEditBlock()
        self._end += 1 + len(chunk)
        if self._rest:
            self.timer.start()
        self.piece_drawn.emit(1 + len(chunk))  # the reply's positions move down by as much
