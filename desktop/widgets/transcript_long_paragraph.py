"""A paragraph longer than a block may grow to (JOIN_MAX_CHARS), drawn while it streams: the
pieces sealed off so far stay blocks of their own for good, each cut at a line's start and with
no margin between them, so the paragraph reads as one, line for line where the paragraph drawn
whole puts them. Its end puts back together only the pieces sealed since (a layout in
proportion to their length, bounded by JOIN_MAX_CHARS), not the whole paragraph.

The kept pieces wrap as one paragraph only at the width they were cut at: when the width of the
lines changes they are put back together (the window lays out everything again then anyway).

A mixin of `Transcript` (desktop/widgets/transcript.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtGui import QTextCursor

if TYPE_CHECKING:
    from PySide6.QtGui import QTextDocument

CONTINUED_STATE = 2  # a block's user state: its paragraph goes on in the next block
NO_STATE = -1


class LongParagraphs:
    if TYPE_CHECKING:  # QTextBrowser's and TranscriptDocument's

        def document(self) -> QTextDocument: ...

        def _line_width(self) -> float: ...

    _seals: dict[int, float]  # TranscriptDocument's: where each sealed piece's block ends
    _sealed_width: float
    _kept_width: float | None = None  # the width of the lines pieces were kept at (None: none)

    def _keep_pieces(self) -> None:
        """The pieces sealed off so far stay blocks of their own: _unseal no longer puts them
        back together, and the paragraph may grow by JOIN_MAX_CHARS again."""
        if not self._seals:
            return
        document = self.document()
        for position in self._seals:
            document.findBlock(position).setUserState(CONTINUED_STATE)
        self._kept_width = self._sealed_width
        self._seals = {}

    def _pieces_outdated(self) -> bool:
        """Pieces kept at another width: they would no longer wrap as one paragraph."""
        return self._kept_width is not None and self._line_width() != self._kept_width

    def _join_kept_pieces(self) -> list[int]:
        """Put every paragraph kept in pieces back together, each one block again (as drawn
        whole). Returns where the block separators removed were, ascending."""
        if self._kept_width is None:
            return []
        self._kept_width = None
        removed: list[int] = []
        cursor = QTextCursor(self.document())
        cursor.beginEditBlock()
        block = self.document().lastBlock()
        while block.isValid():
            before = block.previous()
            if block.userState() == CONTINUED_STATE:
                # The piece below holds the paragraph's bottom margin (the last one's, once
                # the pieces after it are joined): the joined block takes it.
                margin = block.next().blockFormat().bottomMargin()
                separator = block.position() + block.length() - 1
                cursor.setPosition(separator)
                cursor.deleteChar()
                joined = cursor.blockFormat()
                joined.setBottomMargin(margin)
                cursor.setBlockFormat(joined)
                cursor.block().setUserState(NO_STATE)
                removed.append(separator)
            block = before
        cursor.endEditBlock()
        removed.reverse()
        return removed
