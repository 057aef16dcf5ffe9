"""The question of a live turn, drawn over several frames when it is long: its first piece at
once (all of a question up to `CHUNK_CHARS`), then one piece a frame, above the reply that
may already be streaming below it. A 600-word question laid out at once held the window's
thread ~13 ms at the moment it was sent, a 2,000-word one ~28 ms (issue 16).

The pieces are the ones a reopened chat draws (question_tint.question_chunks), with the same
margins, so they lie line for line where they lie when the chat is drawn whole.

A mixin of `Transcript` (desktop/widgets/transcript.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QTimer
from PySide6.QtGui import QTextBlockFormat, QTextCursor

from desktop.widgets.question_tint import (
    PADDING_PX,
    QUESTION_STATE,
    chunk_html,
    question_chunks,
)

if TYPE_CHECKING:
    from PySide6.QtGui import QTextDocument

LINE_SEPARATOR = "\u2028"  # a line break inside a paragraph (HTML's <br>)
PIECE_INTERVAL_MS = 16  # a piece a frame


class LiveQuestion:
    if TYPE_CHECKING:  # Transcript's and QTextBrowser's

        def document(self) -> QTextDocument: ...

        def _moved_down(self, by: int) -> None: ...

        def _keep_at_bottom(self) -> None: ...

    _question_rest: list[str]  # the pieces not drawn yet
    _question_end: int  # where the next one goes: the end of the last piece drawn
    _question_timer: QTimer

    def _init_live_question(self, timer: QTimer) -> None:
        self._question_rest = []
        self._question_end = 0
        self._question_timer = timer
        timer.setSingleShot(True)
        timer.setInterval(PIECE_INTERVAL_MS)
        timer.timeout.connect(self._draw_question_piece)

    def _question_start_html(self, text: str) -> str:
        """The question's first piece (the whole question, if short); the rest is drawn
        after it, a piece a frame, once `_question_started` was called."""
        chunks = question_chunks(text)
        self._question_rest = chunks[1:]
        return chunk_html(chunks[0], first=True, last=not self._question_rest)

    def _question_started(self) -> None:
        """The first piece is in the document (the last question in it)."""
        if not self._question_rest:
            return
        block = self.document().lastBlock()
        while block.isValid() and block.userState() != QUESTION_STATE:
            block = block.previous()
        self._question_end = block.position() + block.length() - 1
        self._question_timer.start()

    def _draw_question_piece(self) -> None:
        if not self._question_rest:
            return
        chunk = self._question_rest.pop(0)
        cursor = QTextCursor(self.document())
        cursor.setPosition(self._question_end)
        above = cursor.block()  # the piece before: drawn with no margin below, as not last
        piece = QTextBlockFormat(above.blockFormat())
        piece.setTopMargin(0)
        piece.setBottomMargin(0 if self._question_rest else PADDING_PX)
        cursor.beginEditBlock()
        cursor.insertBlock(piece, above.charFormat())
        cursor.block().setUserState(QUESTION_STATE)
        cursor.insertText(chunk.replace("\n", LINE_SEPARATOR))
        cursor.endEditBlock()
        self._moved_down(1 + len(chunk))  # the reply's positions, and the question's end
        if self._question_rest:
            self._question_timer.start()
        self._keep_at_bottom()

    def _finish_question(self) -> None:
        """Draw what is left of the question at once (another turn begins below it)."""
        self._question_timer.stop()
        while self._question_rest:
            self._draw_question_piece()

    def _drop_question(self) -> None:
        """The document is drawn anew (with the question whole, if it is still shown)."""
        self._question_timer.stop()
        self._question_rest = []
